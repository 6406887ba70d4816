// Wait states: Fixture A of ALGORITHMS.md §2 exactly, and one hand-built trace per pattern
// whose expected value the test computes from its own timestamps.
#include <gtest/gtest.h>

#include "analysis/waitstate/waitstate.hpp"
#include "trace_builder.hpp"

namespace waitlab::analysis::test {
namespace {

constexpr double kUs = 1e-6;

struct Analysed {
  trace::Trace trace;
  trace::Matching match;
  WaitStateResult waits;
};

Analysed analyse(const TraceBuilder& b) {
  Analysed a{b.trace(), {}, {}};
  a.match = trace::Matching::build(a.trace);
  a.waits = wait_states(a.trace, a.match);
  return a;
}

// Seconds of `p` on (call path, rank), -1 if there is no such row.
double value(const Analysed& a, Pattern p, const std::string& path, Rank r) {
  for (const auto& e : a.waits.table)
    if (e.pattern == p && e.rank == r && a.match.paths.name(e.path, a.trace.defs) == path) return e.seconds;
  return -1;
}

TEST(FixtureA, EveryPatternAsChecked) {
  const auto a = analyse(fixture_a());
  EXPECT_EQ(a.match.messages.size(), 3u);
  EXPECT_EQ(a.match.collectives.size(), 6u);  // Init, 4 collectives, Finalize
  EXPECT_EQ(a.match.unmatched.total(), 0u);
  const double eps = 1e-12;
  EXPECT_NEAR(value(a, Pattern::LateSender, "main/MPI_Recv", 1), 1000 * kUs, eps);
  EXPECT_NEAR(value(a, Pattern::WaitAtBarrier, "main/MPI_Barrier", 0), 500 * kUs, eps);
  EXPECT_NEAR(value(a, Pattern::WaitAtNxN, "main/MPI_Allreduce", 1), 300 * kUs, eps);
  EXPECT_NEAR(value(a, Pattern::LateBroadcast, "main/MPI_Bcast", 1), 200 * kUs, eps);
  EXPECT_NEAR(value(a, Pattern::EarlyReduce, "main/MPI_Reduce", 0), 250 * kUs, eps);
  EXPECT_NEAR(value(a, Pattern::LateReceiver, "main/MPI_Ssend", 0), 400 * kUs, eps);
  EXPECT_NEAR(value(a, Pattern::LateSender, "main/MPI_Wait", 1), 400 * kUs, eps);
  EXPECT_NEAR(value(a, Pattern::WaitAtFinalize, "main/MPI_Finalize", 0), 100 * kUs, eps);
  // Totals: Late Sender 1400 in 2 instances, the largest 1000.
  const auto ls = static_cast<std::size_t>(Pattern::LateSender);
  EXPECT_NEAR(a.waits.total[ls], 1400 * kUs, eps);
  EXPECT_EQ(a.waits.count[ls], 2u);
  EXPECT_NEAR(a.waits.max[ls], 1000 * kUs, eps);
  // Nothing else waits: no completion times, no wait at init, no other Late Receiver.
  EXPECT_EQ(a.waits.instances.size(), 8u);
  EXPECT_NEAR(a.waits.total_waiting, (1400 + 500 + 300 + 200 + 250 + 400 + 100) * kUs, eps);
  EXPECT_NEAR(a.waits.wall_time, 6950 * kUs, eps);
  EXPECT_NEAR(a.waits.wait_ratio, a.waits.total_waiting / (2 * 6950 * kUs), 1e-12);
}

TEST(FixtureA, CausesNameTheDelayingRankAndCall) {
  const auto a = analyse(fixture_a());
  for (const auto& w : a.waits.instances) {
    EXPECT_EQ(w.cause_rank, 1 - w.rank) << pattern_name(w.pattern);
    const auto op = a.match.calls[w.cause_rank][w.cause_call].op;
    switch (w.pattern) {
      case Pattern::LateSender: EXPECT_TRUE(op == MpiOp::Send || op == MpiOp::Isend); break;
      case Pattern::LateReceiver: EXPECT_EQ(op, MpiOp::Recv); break;
      case Pattern::WaitAtBarrier: EXPECT_EQ(op, MpiOp::Barrier); break;
      default: break;
    }
  }
}

// Barrier and NxN completion: F_me − max(min F, max B).
TEST(Patterns, CompletionTimes) {
  for (const MpiOp op : {MpiOp::Barrier, MpiOp::Allgather}) {
    TraceBuilder b(3, 1.0);
    b.coll(0, op, 0, 10).coll(1, op, 2, 14).coll(2, op, 6, 13);
    const auto a = analyse(b);
    const bool barrier = op == MpiOp::Barrier;
    const Pattern wait = barrier ? Pattern::WaitAtBarrier : Pattern::WaitAtNxN;
    const Pattern done = barrier ? Pattern::BarrierCompletion : Pattern::NxNCompletion;
    const std::string path = std::string(trace::mpi_name(op));
    // Wait: min(max B = 6, F_me) − B_me.
    EXPECT_DOUBLE_EQ(value(a, wait, path, 0), 6.0);
    EXPECT_DOUBLE_EQ(value(a, wait, path, 1), 4.0);
    EXPECT_EQ(value(a, wait, path, 2), -1);
    // Completion: F_me − max(min F = 10, max B = 6).
    EXPECT_EQ(value(a, done, path, 0), -1);
    EXPECT_DOUBLE_EQ(value(a, done, path, 1), 4.0);
    EXPECT_DOUBLE_EQ(value(a, done, path, 2), 3.0);
  }
}

TEST(Patterns, LateBroadcastAndScatterOnNonRootsOnly) {
  for (const MpiOp op : {MpiOp::Bcast, MpiOp::Scatter}) {
    TraceBuilder b(3, 1.0);
    b.coll(0, op, 1, 9, 1).coll(1, op, 5, 9, 1).coll(2, op, 7, 9, 1);
    const auto a = analyse(b);
    const std::string path(trace::mpi_name(op));
    EXPECT_DOUBLE_EQ(value(a, Pattern::LateBroadcast, path, 0), 5.0 - 1.0);  // min(B_root, F) − B
    EXPECT_EQ(value(a, Pattern::LateBroadcast, path, 1), -1);                // the root
    EXPECT_EQ(value(a, Pattern::LateBroadcast, path, 2), -1);                // entered after the root
  }
}

TEST(Patterns, EarlyReduceAndGatherOnTheRootOnly) {
  for (const MpiOp op : {MpiOp::Reduce, MpiOp::Gather}) {
    TraceBuilder b(3, 1.0);
    b.coll(0, op, 3, 10, 2).coll(1, op, 8, 10, 2).coll(2, op, 1, 12, 2);
    const auto a = analyse(b);
    const std::string path(trace::mpi_name(op));
    EXPECT_DOUBLE_EQ(value(a, Pattern::EarlyReduce, path, 2), 8.0 - 1.0);  // min(max_{q≠root} B_q, F) − B
    EXPECT_EQ(a.waits.instances.size(), 1u);
    EXPECT_EQ(a.waits.instances[0].cause_rank, 1);
  }
}

TEST(Patterns, EarlyScanWaitsForLowerRanks) {
  TraceBuilder b(3, 1.0);
  b.coll(0, MpiOp::Scan, 4, 20).coll(1, MpiOp::Scan, 2, 20).coll(2, MpiOp::Scan, 3, 20);
  const auto a = analyse(b);
  EXPECT_EQ(value(a, Pattern::EarlyScan, "MPI_Scan", 0), -1);   // nobody below rank 0
  EXPECT_DOUBLE_EQ(value(a, Pattern::EarlyScan, "MPI_Scan", 1), 4.0 - 2.0);  // max(B0, B1) − B1
  EXPECT_DOUBLE_EQ(value(a, Pattern::EarlyScan, "MPI_Scan", 2), 4.0 - 3.0);
}

TEST(Patterns, WaitAtInitAndFinalizeAreBarriers) {
  TraceBuilder b(2, 1.0);
  b.call(0, MpiOp::Init, 0, 5).call(1, MpiOp::Init, 3, 5).call(0, MpiOp::Finalize, 9, 12).call(1, MpiOp::Finalize, 7, 12);
  const auto a = analyse(b);
  EXPECT_DOUBLE_EQ(value(a, Pattern::WaitAtInit, "MPI_Init", 0), 3.0);
  EXPECT_DOUBLE_EQ(value(a, Pattern::WaitAtFinalize, "MPI_Finalize", 1), 2.0);
  EXPECT_EQ(a.waits.instances.size(), 2u);
}

// Scalasca 2.6's MPI Initialization Completion (MPI.pattern, MPI_INIT_COMPLETION): Barrier
// Completion's rule on MPI_Init's Enter and Leave, X_me − max(min_q X_q, min(max_q E_q, X_me)):
// the time in MPI_Init after the first rank left it, bounded below by the last Enter. Wait at Init
// (waitlab's own, Wait at Finalize's rule: min(max_q E_q, X_me) − E_me) stays beside it.
TEST(Patterns, InitCompletionIsScalascas) {
  TraceBuilder b(3, 1.0);
  // Enters 0, 3, 1; Leaves 5, 8, 9: min X = 5, max E = 3.
  b.call(0, MpiOp::Init, 0, 5).call(1, MpiOp::Init, 3, 8).call(2, MpiOp::Init, 1, 9);
  const auto a = analyse(b);
  EXPECT_EQ(value(a, Pattern::InitCompletion, "MPI_Init", 0), -1);               // 5 − max(5, 3) = 0
  EXPECT_DOUBLE_EQ(value(a, Pattern::InitCompletion, "MPI_Init", 1), 8.0 - 5.0);  // 8 − max(5, 3)
  EXPECT_DOUBLE_EQ(value(a, Pattern::InitCompletion, "MPI_Init", 2), 9.0 - 5.0);
  EXPECT_DOUBLE_EQ(value(a, Pattern::WaitAtInit, "MPI_Init", 0), 3.0);  // min(3, 5) − 0
  EXPECT_DOUBLE_EQ(value(a, Pattern::WaitAtInit, "MPI_Init", 2), 2.0);  // min(3, 9) − 1
  EXPECT_EQ(value(a, Pattern::WaitAtInit, "MPI_Init", 1), -1);           // the last to enter
  EXPECT_DOUBLE_EQ(a.waits.total_waiting, 3.0 + 4.0 + 3.0 + 2.0);
  // A completion has no delaying rank: no delay cost, no critical-path jump.
  EXPECT_FALSE(has_cause(Pattern::InitCompletion));
  EXPECT_EQ(pattern_name(Pattern::InitCompletion), "init_completion");
  EXPECT_EQ(pattern_title(Pattern::InitCompletion), "MPI Initialization Completion");
}

TEST(Patterns, LateSenderIsClampedByTheReceiveLeave) {
  // The send starts after the receive left (clock skew in a measured trace): min(E_send, X_recv).
  TraceBuilder b(2, 1.0);
  b.recv(1, 2, 5, 6, 0).send(0, 9, 10, 1);
  const auto a = analyse(b);
  EXPECT_DOUBLE_EQ(value(a, Pattern::LateSender, "MPI_Recv", 1), 6.0 - 2.0);
}

TEST(Patterns, LateReceiverOnlyWhenTheSendWaited) {
  TraceBuilder b(2, 1.0);
  // Eager: the send left (at 2) before the receive was posted (at 5): no wait state.
  b.send(0, 1, 2, 1, 1).recv(1, 5, 5, 6, 0, 1);
  // Rendezvous: the send waits for the receive posted at 9.
  b.send(0, 7, 10, 1, 2).recv(1, 9, 10, 10, 0, 2);
  const auto a = analyse(b);
  EXPECT_DOUBLE_EQ(value(a, Pattern::LateReceiver, "MPI_Send", 0), 9.0 - 7.0);
  EXPECT_EQ(a.waits.count[static_cast<std::size_t>(Pattern::LateReceiver)], 1u);
}

TEST(Patterns, MultiWaitCountsOnlyTheLargestLateSender) {
  TraceBuilder b(3, 1.0);
  b.irecv(0, 0, 0, 1, 0, 1).irecv(0, 0, 0, 2, 0, 2).wait(0, 1, 9, 9, {{false, 1, 1, 0}, {false, 2, 2, 0}});
  b.send(1, 4, 4, 0).send(2, 8, 8, 0);
  const auto a = analyse(b);
  EXPECT_DOUBLE_EQ(value(a, Pattern::LateSender, "MPI_Waitall", 0), 8.0 - 1.0);
  EXPECT_EQ(a.waits.count[static_cast<std::size_t>(Pattern::LateSender)], 1u);
  EXPECT_EQ(a.waits.instances.at(0).cause_rank, 2);
}

// Two messages tie for the largest wait in an MPI_Waitall: the one completed first (the first
// completion event of the call) is blamed, as Scalasca does — whichever way the call lists them.
TEST(Patterns, WaitallTieBlamesTheMessageCompletedFirst) {
  for (const bool two_first : {false, true}) {
    TraceBuilder b(3, 1.0);
    b.irecv(0, 0, 0, 1, 0, 1).irecv(0, 0, 0, 2, 0, 2);
    const TraceBuilder::Completion from1{false, 1, 1, 0}, from2{false, 2, 2, 0};
    b.wait(0, 1, 9, 9, two_first ? std::vector<TraceBuilder::Completion>{from2, from1}
                                 : std::vector<TraceBuilder::Completion>{from1, from2});
    b.send(1, 8, 8, 0).send(2, 8, 8, 0);  // both entered at 8: a wait of 7 for either
    const auto a = analyse(b);
    ASSERT_EQ(a.waits.count[static_cast<std::size_t>(Pattern::LateSender)], 1u);
    EXPECT_DOUBLE_EQ(a.waits.instances.at(0).seconds, 7.0);
    EXPECT_EQ(a.waits.instances.at(0).cause_rank, two_first ? 2 : 1) << "rank 2's message first: " << two_first;
  }
}

TEST(Patterns, LateSenderWrongOrderSameAndDifferentSource) {
  {  // Rank 1 waits for tag 2 (sent at 30) while tag 1 (sent at 10) is already there.
    TraceBuilder b(2, 1.0);
    b.send(0, 10, 10, 1, 1).send(0, 30, 30, 1, 2);
    b.recv(1, 5, 31, 31, 0, 2).recv(1, 32, 32, 33, 0, 1);
    const auto a = analyse(b);
    EXPECT_DOUBLE_EQ(value(a, Pattern::LateSender, "MPI_Recv", 1), 25.0);
    EXPECT_DOUBLE_EQ(value(a, Pattern::LateSenderWrongOrderSameSource, "MPI_Recv", 1), 25.0);
    EXPECT_EQ(value(a, Pattern::LateSenderWrongOrderDifferentSource, "MPI_Recv", 1), -1);
    EXPECT_DOUBLE_EQ(a.waits.total_waiting, 25.0);  // the subset is not counted twice
  }
  {  // Rank 1 waits for rank 2 (sent at 30) while rank 0's message (sent at 10) is there.
    TraceBuilder b(3, 1.0);
    b.send(0, 10, 10, 1).send(2, 30, 30, 1);
    b.recv(1, 5, 31, 31, 2).recv(1, 32, 32, 33, 0);
    const auto a = analyse(b);
    EXPECT_DOUBLE_EQ(value(a, Pattern::LateSenderWrongOrderDifferentSource, "MPI_Recv", 1), 25.0);
    EXPECT_EQ(value(a, Pattern::LateSenderWrongOrderSameSource, "MPI_Recv", 1), -1);
  }
}

TEST(Matching, UnmatchedIsCountedAndTheRestAnalysed) {
  TraceBuilder b(2, 1.0);
  b.send(0, 1, 1, 1, 5);              // never received
  b.recv(1, 0, 1, 1, 0, 6);           // never sent
  b.send(0, 3, 3, 1, 7).recv(1, 2, 3, 4, 0, 7);
  b.wait(1, 5, 5, 5, {{false, 42, 0, 0}});  // completes an unknown request
  b.coll(0, MpiOp::Barrier, 6, 7);    // rank 1 never joins
  auto stray = b.trace();
  stray.locations[1].events.push_back(trace::make_event(9, EventKind::Send, MpiOp::None, 0, 0, 1, 8));
  EXPECT_EQ(trace::Matching::build(stray).unmatched.stray_events, 1u);
  const auto a = analyse(b);
  EXPECT_EQ(a.match.unmatched.sends, 1u);
  EXPECT_EQ(a.match.unmatched.receives, 1u);
  EXPECT_EQ(a.match.unmatched.requests, 1u);
  EXPECT_EQ(a.match.unmatched.collective_calls, 1u);
  ASSERT_EQ(a.match.messages.size(), 1u);
  EXPECT_DOUBLE_EQ(value(a, Pattern::LateSender, "MPI_Recv", 1), 1.0);
}

// A trace cut inside MPI calls (a rank killed, a buffer not flushed): those calls are not
// calls, and nothing that matched refers to them.
TEST(Matching, CallsNeverLeftTakeTheirCommunicationWithThem) {
  TraceBuilder b(2, 1.0);
  b.isend(0, 1, 1, 1, 3, 9).send(0, 2, 2, 1, 4);
  b.recv(1, 1, 3, 3, 0, 3).recv(1, 4, 4, 4, 0, 4);
  b.coll(0, MpiOp::Barrier, 5, 6).coll(1, MpiOp::Barrier, 5, 6);
  auto t = b.trace();
  // Rank 0 dies inside the MPI_Wait that completes its Isend; rank 1 inside an MPI_Allreduce.
  auto& e0 = t.locations[0].events;
  e0.push_back(trace::make_event(7, EventKind::Enter, MpiOp::None, t.defs.mpi_region(MpiOp::Wait)));
  e0.push_back(trace::make_event(8, EventKind::IsendComplete, MpiOp::None, 0, 1, 3, 8, 9));
  auto& e1 = t.locations[1].events;
  e1.push_back(trace::make_event(7, EventKind::Enter, MpiOp::None, t.defs.mpi_region(MpiOp::Allreduce)));
  e1.push_back(trace::make_event(7, EventKind::CollBegin, MpiOp::Allreduce, 0));
  e1.push_back(trace::make_event(8, EventKind::CollEnd, MpiOp::Allreduce, 0, trace::kNoRank, 0, 8, 8));
  const auto m = trace::Matching::build(t);
  ASSERT_EQ(m.calls[0].size(), 3u);  // Isend, Send, Barrier
  ASSERT_EQ(m.calls[1].size(), 3u);  // Recv, Recv, Barrier
  ASSERT_EQ(m.messages.size(), 1u);  // the blocking send; the Isend never completed
  EXPECT_EQ(m.unmatched.sends, 1u);
  EXPECT_EQ(m.unmatched.receives, 1u);
  EXPECT_EQ(m.unmatched.collective_calls, 1u);
  EXPECT_EQ(m.unmatched.unbalanced_regions, 2u);
  for (const auto& msg : m.messages) {
    EXPECT_LT(msg.send_done_call, m.calls[msg.sender].size());
    EXPECT_LT(msg.recv_done_call, m.calls[msg.receiver].size());
  }
  for (const auto& mem : m.members) EXPECT_LT(mem.call, m.calls[mem.rank].size());
  EXPECT_EQ(m.collectives.size(), 1u);  // the barrier
}

TEST(Matching, FifoPerChannelAndCallPaths) {
  TraceBuilder b(2, 1.0);
  b.enter(0, 0, "main").enter(0, 0, "solve");
  b.isend(0, 1, 1, 1, 4, 1).isend(0, 2, 2, 1, 4, 2).wait(0, 3, 3, 3, {{true, 2, 1, 4}});
  b.wait(0, 4, 4, 4, {{true, 1, 1, 4}}).leave(0, 5, "solve").leave(0, 5, "main");
  b.enter(1, 0, "main").recv(1, 0, 6, 6, 0, 4).recv(1, 7, 7, 7, 0, 4).leave(1, 8, "main");
  const auto a = analyse(b);
  ASSERT_EQ(a.match.messages.size(), 2u);
  // The first Isend (call 0) matches the first receive (call 0), the second the second.
  for (const auto& msg : a.match.messages) EXPECT_EQ(msg.send_call, msg.recv_post_call);
  EXPECT_EQ(a.match.messages[0].send_done_call, 3u);  // request 1 completed by the second wait
  EXPECT_EQ(a.match.paths.name(a.match.calls[0][0].path, a.trace.defs), "main/solve/MPI_Isend");
  EXPECT_EQ(a.match.paths.name(a.match.calls[1][1].path, a.trace.defs), "main/MPI_Recv");
}

}  // namespace
}  // namespace waitlab::analysis::test
