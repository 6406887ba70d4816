// Clock-skew correction (analysis/trace/clock.hpp): the linear map recovers offset and
// drift exactly, the controlled logical clock (clc: forward and backward pass, as Scalasca
// 2.6 runs it) and the clamping fix what the linear map cannot, in happened-before order,
// Auto applies the linear map only where it helps, and a consistent trace is left
// bit-identical.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "analysis/trace/clock.hpp"
#include "analysis/trace/match.hpp"
#include "analysis/trace/trace.hpp"

namespace waitlab::trace {
namespace {

constexpr double kUs = 1e-6;
constexpr double kTol = 1e-12;
constexpr double kGamma = 0.99999;  // the clc's least share of a local interval
constexpr double kLat = 1e-6;       // the clc's l_min (Scalasca's)

// Hand-built traces, times in µs (stored in s). Each rank's events are appended in order.
class Builder {
 public:
  explicit Builder(int ranks) {
    Communicator world{"MPI_COMM_WORLD", {}};
    for (Rank r = 0; r < ranks; ++r) world.members.push_back(r);
    t_.defs.comms.push_back(world);
    t_.locations.resize(static_cast<std::size_t>(ranks));
    for (Rank r = 0; r < ranks; ++r) t_.locations[static_cast<std::size_t>(r)].rank = r;
  }
  Builder& enter(Rank r, double t, const std::string& region) {
    return ev(r, make_event(t * kUs, EventKind::Enter, MpiOp::None, t_.defs.region(region)));
  }
  Builder& leave(Rank r, double t, const std::string& region) {
    return ev(r, make_event(t * kUs, EventKind::Leave, MpiOp::None, t_.defs.region(region)));
  }
  Builder& call(Rank r, MpiOp op, double enter, double leave) {
    return mpi(r, op, enter).mpi_leave(r, op, leave);
  }
  Builder& send(Rank r, double enter, double leave, Rank dst, int tag = 0) {
    return send_at(r, enter, enter, leave, dst, tag);
  }
  // A send whose Send event is at `at` (later than the call's Enter: no two events of the
  // rank share a time, so the clc's 1 ns tick moves none of them).
  Builder& send_at(Rank r, double enter, double at, double leave, Rank dst, int tag = 0) {
    mpi(r, MpiOp::Send, enter)
        .ev(r, make_event(at * kUs, EventKind::Send, MpiOp::None, kCommWorld, dst, tag, 8));
    return mpi_leave(r, MpiOp::Send, leave);
  }
  Builder& recv(Rank r, double enter, double at, double leave, Rank src, int tag = 0) {
    mpi(r, MpiOp::Recv, enter)
        .ev(r, make_event(at * kUs, EventKind::Recv, MpiOp::None, kCommWorld, src, tag, 8));
    return mpi_leave(r, MpiOp::Recv, leave);
  }
  Builder& isend(Rank r, double enter, double leave, Rank dst, int tag, std::uint64_t req) {
    mpi(r, MpiOp::Isend, enter)
        .ev(r, make_event(enter * kUs, EventKind::IsendStart, MpiOp::None, kCommWorld, dst, tag, 8, req));
    return mpi_leave(r, MpiOp::Isend, leave);
  }
  Builder& irecv(Rank r, double enter, double leave, Rank src, int tag, std::uint64_t req) {
    mpi(r, MpiOp::Irecv, enter)
        .ev(r, make_event(enter * kUs, EventKind::IrecvPost, MpiOp::None, kCommWorld, src, tag, 8, req));
    return mpi_leave(r, MpiOp::Irecv, leave);
  }
  struct Done {
    bool send;
    std::uint64_t req;
    Rank peer;
    int tag;
  };
  Builder& waitall(Rank r, double enter, double at, double leave, const std::vector<Done>& done) {
    mpi(r, MpiOp::Waitall, enter);
    for (const Done& d : done)
      ev(r, d.send ? make_event(at * kUs, EventKind::IsendComplete, MpiOp::None, 0, kNoRank, 0, 0, d.req)
                   : make_event(at * kUs, EventKind::IrecvComplete, MpiOp::None, kCommWorld, d.peer, d.tag, 8,
                                d.req));
    return mpi_leave(r, MpiOp::Waitall, leave);
  }
  Builder& coll(Rank r, MpiOp op, double begin, double end, Rank root = kNoRank) {
    return coll_at(r, op, begin, begin, end, end, root);
  }
  // A collective with four times of its own, the bytes its CollEnd says it sent and received,
  // on communicator `comm`.
  Builder& coll_at(Rank r, MpiOp op, double enter, double begin, double end, double leave,
                   Rank root = kNoRank, std::uint64_t sent = 8, std::uint64_t received = 8,
                   CommId comm = kCommWorld) {
    mpi(r, op, enter).ev(r, make_event(begin * kUs, EventKind::CollBegin, op, comm));
    ev(r, make_event(end * kUs, EventKind::CollEnd, op, comm, root, 0, sent, received));
    return mpi_leave(r, op, leave);
  }
  CommId comm(const std::vector<Rank>& members) {
    t_.defs.comms.push_back(Communicator{"comm" + std::to_string(t_.defs.comms.size()), members});
    return static_cast<CommId>(t_.defs.comms.size() - 1);
  }
  Builder& truth(Rank r, double start, double end) {
    ComputeTruth ct;
    ct.start = start * kUs;
    ct.end = end * kUs;
    ct.nominal = ct.end - ct.start;
    t_.locations[static_cast<std::size_t>(r)].truth.push_back(ct);
    t_.has_truth = true;
    return *this;
  }
  const Trace& trace() const { return t_; }

 private:
  Builder& ev(Rank r, const Event& e) {
    t_.locations.at(static_cast<std::size_t>(r)).events.push_back(e);
    return *this;
  }
  Builder& mpi(Rank r, MpiOp op, double t) {
    return ev(r, make_event(t * kUs, EventKind::Enter, MpiOp::None, t_.defs.mpi_region(op)));
  }
  Builder& mpi_leave(Rank r, MpiOp op, double t) {
    return ev(r, make_event(t * kUs, EventKind::Leave, MpiOp::None, t_.defs.mpi_region(op)));
  }
  Trace t_;
};

// A consistent 2-rank trace in true time: messages both ways, blocking and not, every kind
// of collective, ground truth, MPI_Init and MPI_Finalize ending together.
Trace consistent_pair() {
  Builder b(2);
  for (Rank r : {0, 1}) b.enter(r, 0, "main").call(r, MpiOp::Init, 10, 100);
  b.truth(0, 100, 2000).truth(1, 100, 1000);
  b.send(0, 2000, 2010, 1).recv(1, 1000, 2020, 2020, 0);        // late sender, 20 µs latency
  b.send(1, 2100, 2105, 0, 4).recv(0, 2050, 2101, 2101, 1, 4);  // 1 µs after the send
  b.coll(0, MpiOp::Barrier, 3000, 3600).coll(1, MpiOp::Barrier, 3500, 3600);
  b.coll(1, MpiOp::Allreduce, 4000, 4400).coll(0, MpiOp::Allreduce, 4300, 4400);
  b.coll(1, MpiOp::Bcast, 4500, 4750, 0).coll(0, MpiOp::Bcast, 4700, 4750, 0);
  b.coll(0, MpiOp::Reduce, 4800, 5100, 0).coll(1, MpiOp::Reduce, 5050, 5100, 0);
  b.irecv(1, 6000, 6005, 0, 3, 1).waitall(1, 6100, 6600, 6600, {{false, 1, 0, 3}});
  b.isend(0, 6500, 6505, 1, 3, 9).waitall(0, 6510, 6520, 6520, {{true, 9, 1, 3}});
  b.truth(0, 6520, 6800).truth(1, 6600, 6900);
  b.call(0, MpiOp::Finalize, 6800, 6950).call(1, MpiOp::Finalize, 6900, 6950);
  for (Rank r : {0, 1}) b.leave(r, 6950, "main");
  return b.trace();
}

// Rank r's clock reads a + b·t at true time t.
Trace skewed(Trace t, Rank r, double a, double b) {
  for (Event& e : t.locations[static_cast<std::size_t>(r)].events) e.time = a + b * e.time;
  for (ComputeTruth& ct : t.locations[static_cast<std::size_t>(r)].truth) {
    ct.start = a + b * ct.start;
    ct.end = a + b * ct.end;
  }
  return t;
}

void expect_times_near(const Trace& got, const Trace& want) {
  ASSERT_EQ(got.ranks(), want.ranks());
  for (std::size_t r = 0; r < got.ranks(); ++r) {
    const auto& g = got.locations[r];
    const auto& w = want.locations[r];
    ASSERT_EQ(g.events.size(), w.events.size());
    for (std::size_t i = 0; i < g.events.size(); ++i)
      EXPECT_NEAR(g.events[i].time, w.events[i].time, kTol) << "rank " << r << " event " << i;
    ASSERT_EQ(g.truth.size(), w.truth.size());
    for (std::size_t i = 0; i < g.truth.size(); ++i) {
      EXPECT_NEAR(g.truth[i].start, w.truth[i].start, kTol) << "rank " << r << " truth " << i;
      EXPECT_NEAR(g.truth[i].end, w.truth[i].end, kTol) << "rank " << r << " truth " << i;
    }
  }
}

std::size_t index_of(const Trace& t, Rank r, EventKind kind, std::size_t nth = 0) {
  const auto& ev = t.locations[static_cast<std::size_t>(r)].events;
  for (std::size_t i = 0; i < ev.size(); ++i)
    if (ev[i].kind == kind && nth-- == 0) return i;
  ADD_FAILURE() << "no such event";
  return 0;
}

// Every event of rank r before `from` keeps its time; from `from` on, all move by `shift`.
void expect_shifted_from(const Trace& got, const Trace& orig, Rank r, std::size_t from, double shift) {
  const auto& g = got.locations[static_cast<std::size_t>(r)].events;
  const auto& o = orig.locations[static_cast<std::size_t>(r)].events;
  ASSERT_EQ(g.size(), o.size());
  for (std::size_t i = 0; i < g.size(); ++i) {
    if (i < from) {
      EXPECT_EQ(g[i].time, o[i].time) << "rank " << r << " event " << i;
    } else {
      EXPECT_NEAR(g[i].time - o[i].time, shift, kTol) << "rank " << r << " event " << i;
    }
  }
}

TEST(ClockLinear, OffsetIsRecoveredExactly) {
  const Trace truth = consistent_pair();
  Trace t = skewed(truth, 1, 1e-3, 1.0);  // rank 1's clock runs 1 ms ahead
  const ClockReport rep = correct_clocks(t);
  EXPECT_GT(rep.violations_before, 0u);
  EXPECT_EQ(rep.violations_after_linear, 0u);
  EXPECT_EQ(rep.violations_after, 0u);
  EXPECT_EQ(rep.ranks_linear, 1u);
  EXPECT_EQ(rep.events_moved, 0u);
  EXPECT_NEAR(rep.max_offset, 1e-3, kTol);
  EXPECT_NEAR(rep.max_drift, 0.0, 1e-9);
  EXPECT_EQ(rep.max_shift, 0.0);
  EXPECT_EQ(rep.method, "linear");
  expect_times_near(t, truth);
  EXPECT_EQ(t.locations[0], truth.locations[0]);  // the reference is never touched
}

TEST(ClockLinear, DriftIsRecoveredExactly) {
  const Trace truth = consistent_pair();
  Trace t = skewed(truth, 1, 1e-3, 1.0 + 1e-4);
  const ClockReport rep = correct_clocks(t);
  EXPECT_GT(rep.violations_before, 0u);
  EXPECT_EQ(rep.violations_after, 0u);
  EXPECT_EQ(rep.ranks_linear, 1u);
  EXPECT_NEAR(rep.max_offset, 1e-3 + 100 * kUs * 1e-4, kTol);  // at MPI_Init's Leave
  EXPECT_NEAR(rep.max_drift, 1e-4, 1e-9);
  EXPECT_EQ(rep.method, "linear");
  expect_times_near(t, truth);
}

TEST(ClockLinear, ExplicitLinearModeNeverClamps) {
  const Trace truth = consistent_pair();
  Trace t = skewed(truth, 1, -2e-3, 1.0 - 5e-5);
  ClockOptions opt;
  opt.mode = ClockOptions::Mode::Linear;
  const ClockReport rep = correct_clocks(t, opt);
  EXPECT_GT(rep.violations_before, 0u);
  EXPECT_EQ(rep.violations_after_linear, 0u);
  EXPECT_EQ(rep.violations_after, 0u);
  EXPECT_NEAR(rep.max_offset, 2e-3 + 100 * kUs * 5e-5, kTol);
  EXPECT_NEAR(rep.max_drift, 5e-5, 1e-9);
  EXPECT_EQ(rep.method, "linear");
  expect_times_near(t, truth);
}

TEST(ClockLinear, OnlyInitGivesAnOffset) {
  Builder b(2);
  for (Rank r : {0, 1}) b.call(r, MpiOp::Init, 10, 100);
  b.send(0, 200, 205, 1).recv(1, 150, 201, 201, 0);
  b.send(1, 300, 305, 0).recv(0, 250, 301, 301, 1);
  const Trace truth = b.trace();
  Trace t = skewed(truth, 1, 5e-4, 1.0);
  const ClockReport rep = correct_clocks(t);
  EXPECT_GT(rep.violations_before, 0u);
  EXPECT_EQ(rep.violations_after, 0u);
  EXPECT_EQ(rep.ranks_linear, 1u);
  EXPECT_NEAR(rep.max_offset, 5e-4, kTol);
  EXPECT_EQ(rep.max_drift, 0.0);
  expect_times_near(t, truth);
}

TEST(ClockClamp, ReceiveBeforeItsSendMovesForwardByTheNeededAmount) {
  Builder b(2);
  for (Rank r : {0, 1}) b.enter(r, 0, "main").call(r, MpiOp::Init, 10, 100);
  b.send(0, 2000, 2010, 1).recv(1, 1000, 1998, 1999, 0);  // received 2 µs before it was sent
  b.truth(1, 1999, 2500);
  b.enter(1, 1999, "work").leave(1, 2500, "work");
  b.call(0, MpiOp::Finalize, 6800, 6950).call(1, MpiOp::Finalize, 6900, 6950);
  for (Rank r : {0, 1}) b.leave(r, 6950, "main");
  const Trace orig = b.trace();

  // Auto ran linear+clamp here until issue 30; it runs the clc now (the linear map is the
  // identity, so it is no evidence of separate clocks): ClockClc covers that, and
  // LinearAndClamp keeps the old path.
  for (const auto mode : {ClockOptions::Mode::Clamp, ClockOptions::Mode::LinearAndClamp}) {
    Trace t = orig;
    ClockOptions opt;
    opt.mode = mode;
    opt.min_latency = 0.5 * kUs;
    const ClockReport rep = correct_clocks(t, opt);
    EXPECT_EQ(rep.violations_before, 1u);
    EXPECT_EQ(rep.violations_after_linear, 1u);  // consistent Init/Finalize: linear is the identity
    EXPECT_EQ(rep.violations_after, 0u);
    EXPECT_EQ(rep.ranks_linear, 0u);
    const std::size_t recv = index_of(orig, 1, EventKind::Recv);
    const double shift = 2000 * kUs + 0.5 * kUs - 1998 * kUs;
    EXPECT_EQ(t.locations[1].events[recv].time, 2000 * kUs + 0.5 * kUs);  // exactly send + l_min
    expect_shifted_from(t, orig, 1, recv, shift);
    EXPECT_EQ(t.locations[0], orig.locations[0]);
    EXPECT_EQ(rep.events_moved, orig.locations[1].events.size() - recv);
    EXPECT_NEAR(rep.max_shift, 2.5 * kUs, kTol);
    EXPECT_EQ(rep.constraints_dropped, 0u);
    EXPECT_EQ(rep.method, mode == ClockOptions::Mode::Clamp ? "clamp" : "linear+clamp");
    // The compute interval after the receive moves with it, its duration kept.
    EXPECT_NEAR(t.locations[1].truth[0].start - 1999 * kUs, shift, kTol);
    EXPECT_NEAR(t.locations[1].truth[0].end - 2500 * kUs, shift, kTol);
  }
}

TEST(ClockClamp, AChainIsFixedTransitivelyInHappenedBeforeOrder) {
  // 2 → 1 → 0: rank 1 receives 2 µs early; its later send then makes rank 0's receive,
  // consistent as measured, precede it. Rank 0 is visited first and must wait.
  Builder b(3);
  for (Rank r : {0, 1, 2}) b.call(r, MpiOp::Init, 10, 100);
  b.send(2, 2000, 2001, 1).recv(1, 1500, 1998, 1998, 2);
  b.send(1, 2010, 2011, 0).recv(0, 1500, 2011, 2011, 1);    // 1 µs after the send as measured
  b.send(0, 2100, 2101, 2).recv(2, 2050, 2100.5, 2102, 0);  // 0.5 µs after the send as measured
  const Trace orig = b.trace();
  Trace t = orig;
  ClockOptions opt;
  opt.mode = ClockOptions::Mode::Clamp;
  const ClockReport rep = correct_clocks(t, opt);
  EXPECT_EQ(rep.violations_before, 1u);
  EXPECT_EQ(rep.violations_after, 0u);
  const std::size_t r1 = index_of(orig, 1, EventKind::Recv);
  const std::size_t r0 = index_of(orig, 0, EventKind::Recv);
  expect_shifted_from(t, orig, 1, r1, 2 * kUs);  // to its send at 2000
  expect_shifted_from(t, orig, 0, r0, 1 * kUs);  // to rank 1's send, now at 2012
  EXPECT_EQ(t.locations[0].events[r0].time, t.locations[1].events[index_of(orig, 1, EventKind::Send)].time);
  // Rank 0's send moved to 2100 + 1 = 2101 > 2100.5: rank 2's receive follows it too.
  const std::size_t r2 = index_of(orig, 2, EventKind::Recv);
  EXPECT_EQ(t.locations[2].events[r2].time, t.locations[0].events[index_of(orig, 0, EventKind::Send)].time);
  expect_shifted_from(t, orig, 2, r2, 0.5 * kUs);
  EXPECT_EQ(rep.events_moved,
            5u + 5u + 2u);  // rank 1 from its Recv, rank 0 from its Recv, rank 2's Recv and Leave
  EXPECT_NEAR(rep.max_shift, 2 * kUs, kTol);
}

TEST(ClockClamp, AllreduceEndBeforeAnotherMembersBeginIsFixed) {
  Builder b(3);
  for (Rank r : {0, 1, 2}) b.call(r, MpiOp::Init, 10, 100);
  b.coll(0, MpiOp::Allreduce, 3000, 3100)
      .coll(1, MpiOp::Allreduce, 3105, 3200)
      .coll(2, MpiOp::Allreduce, 2000, 3150);
  for (Rank r : {0, 1, 2}) b.enter(r, 3300, "after").leave(r, 3400, "after");
  const Trace orig = b.trace();
  Trace t = orig;
  ClockOptions opt;
  opt.mode = ClockOptions::Mode::Clamp;
  opt.min_latency = 1 * kUs;
  const ClockReport rep = correct_clocks(t, opt);
  EXPECT_EQ(rep.violations_before, 1u);  // rank 0 ends at 3100 before rank 1 begins at 3105 (+1)
  EXPECT_EQ(rep.violations_after, 0u);
  const std::size_t end0 = index_of(orig, 0, EventKind::CollEnd);
  EXPECT_EQ(t.locations[0].events[end0].time, 3105 * kUs + 1 * kUs);
  expect_shifted_from(t, orig, 0, end0, 6 * kUs);
  EXPECT_EQ(t.locations[1], orig.locations[1]);  // bound max(3000, 3105, 2000) + 1 ≤ 3200

  EXPECT_EQ(t.locations[2], orig.locations[2]);
  EXPECT_EQ(rep.events_moved, 4u);  // CollEnd, Leave, Enter(after), Leave(after)
}

TEST(ClockClamp, RootedCollectivesFollowTheirRoot) {
  Builder b(3);
  for (Rank r : {0, 1, 2}) b.call(r, MpiOp::Init, 10, 100);
  // Bcast from 1: rank 2 ends before the root began; rank 0 is fine; the root has no bound.
  b.coll(0, MpiOp::Bcast, 1000, 1300, 1)
      .coll(1, MpiOp::Bcast, 1200, 1210, 1)
      .coll(2, MpiOp::Bcast, 1000, 1150, 1);
  // Reduce to 0: the root ends before rank 2 began; non-roots have no bound.
  b.coll(0, MpiOp::Reduce, 2000, 2050, 0)
      .coll(1, MpiOp::Reduce, 2000, 2010, 0)
      .coll(2, MpiOp::Reduce, 2060, 2070, 0);
  const Trace orig = b.trace();
  Trace t = orig;
  ClockOptions opt;
  opt.mode = ClockOptions::Mode::Clamp;
  const ClockReport rep = correct_clocks(t, opt);
  EXPECT_EQ(rep.violations_before, 2u);
  EXPECT_EQ(rep.violations_after, 0u);
  const std::size_t bcast_end2 = index_of(orig, 2, EventKind::CollEnd, 0);
  expect_shifted_from(t, orig, 2, bcast_end2, 50 * kUs);  // to the root's begin, 1200
  // Rank 2's Reduce now begins at 2110: the root's end (2050) moves to it.
  const std::size_t reduce_end0 = index_of(orig, 0, EventKind::CollEnd, 1);
  expect_shifted_from(t, orig, 0, reduce_end0, 60 * kUs);
  EXPECT_EQ(t.locations[1], orig.locations[1]);
}

TEST(ClockClamp, ScanFollowsTheLowerRanksOnly) {
  Builder b(3);
  for (Rank r : {0, 1, 2}) b.call(r, MpiOp::Init, 10, 100);
  // Rank 0 ends before rank 2 began (allowed for a scan); rank 1 ends before rank 0 began.
  b.coll(0, MpiOp::Scan, 1000, 1010).coll(1, MpiOp::Scan, 900, 950).coll(2, MpiOp::Scan, 2000, 2100);
  const Trace orig = b.trace();
  Trace t = orig;
  ClockOptions opt;
  opt.mode = ClockOptions::Mode::Clamp;
  const ClockReport rep = correct_clocks(t, opt);
  EXPECT_EQ(rep.violations_before, 1u);
  EXPECT_EQ(rep.violations_after, 0u);
  expect_shifted_from(t, orig, 1, index_of(orig, 1, EventKind::CollEnd), 50 * kUs);
  EXPECT_EQ(t.locations[0], orig.locations[0]);
  EXPECT_EQ(t.locations[2], orig.locations[2]);
}

TEST(ClockClamp, WaitallCompletionsPairWithTheirOwnMessages) {
  Builder b(2);
  for (Rank r : {0, 1}) b.call(r, MpiOp::Init, 10, 100);
  b.irecv(1, 200, 201, 0, 5, 1).irecv(1, 202, 203, 0, 3, 2);
  b.isend(0, 1000, 1001, 1, 5, 7).isend(0, 2000, 2001, 1, 3, 8);
  b.waitall(0, 2002, 2003, 2003, {{true, 7, 1, 5}, {true, 8, 1, 3}});
  // Both completions at 1500: tag 5 (sent at 1000) is fine, tag 3 (sent at 2000) is early.
  b.waitall(1, 1400, 1500, 1500, {{false, 1, 0, 5}, {false, 2, 0, 3}});
  const Trace orig = b.trace();
  Trace t = orig;
  ClockOptions opt;
  opt.mode = ClockOptions::Mode::Clamp;
  const ClockReport rep = correct_clocks(t, opt);
  EXPECT_EQ(rep.violations_before, 1u);
  EXPECT_EQ(rep.violations_after, 0u);
  const std::size_t tag3 = index_of(orig, 1, EventKind::IrecvComplete, 1);
  expect_shifted_from(t, orig, 1, tag3, 500 * kUs);
  EXPECT_EQ(rep.events_moved, 2u);  // the tag-3 completion and the Leave of MPI_Waitall
}

TEST(ClockAuto, AConsistentTraceIsLeftBitIdentical) {
  const Trace orig = consistent_pair();
  Trace t = orig;
  const ClockReport rep = correct_clocks(t);
  EXPECT_EQ(t, orig);
  EXPECT_EQ(rep.violations_before, 0u);
  EXPECT_EQ(rep.violations_after_linear, 0u);
  EXPECT_EQ(rep.violations_after, 0u);
  EXPECT_EQ(rep.ranks_linear, 0u);
  EXPECT_EQ(rep.events_moved, 0u);
  EXPECT_EQ(rep.max_offset, 0.0);
  EXPECT_EQ(rep.max_drift, 0.0);
  EXPECT_EQ(rep.max_shift, 0.0);
  EXPECT_EQ(rep.method, "none");
  // Clamping alone, or both, leave it bit-identical too (Init and Finalize end together).
  for (const auto mode :
       {ClockOptions::Mode::Clamp, ClockOptions::Mode::LinearAndClamp, ClockOptions::Mode::None}) {
    Trace u = orig;
    ClockOptions opt;
    opt.mode = mode;
    const ClockReport r2 = correct_clocks(u, opt);
    EXPECT_EQ(u, orig) << clock_mode_name(mode);
    EXPECT_EQ(r2.events_moved, 0u);
    EXPECT_EQ(r2.violations_after, 0u);
  }
}

TEST(ClockAuto, MPIFinalizeIsNoConstraint) {
  // SMPI records MPI_Finalize returning at once: rank 0 may leave it before rank 1 enters.
  // MPI does not require it to synchronise: no violation, so Auto changes nothing (a linear
  // correction from these Leave times would invent a drift).
  Builder b(2);
  for (Rank r : {0, 1}) b.call(r, MpiOp::Init, 0, 5);
  b.call(0, MpiOp::Finalize, 100, 101).call(1, MpiOp::Finalize, 300, 301);
  const Trace orig = b.trace();
  Trace t = orig;
  const ClockReport rep = correct_clocks(t);
  EXPECT_EQ(rep.violations_before, 0u);
  EXPECT_EQ(t, orig);
}

TEST(ClockAuto, NoneCountsOnly) {
  Trace t = skewed(consistent_pair(), 1, 1e-3, 1.0);
  const Trace orig = t;
  ClockOptions opt;
  opt.mode = ClockOptions::Mode::None;
  const ClockReport rep = correct_clocks(t, opt);
  EXPECT_GT(rep.violations_before, 0u);
  EXPECT_EQ(rep.violations_after, rep.violations_before);
  EXPECT_EQ(rep.method, "none");
  EXPECT_EQ(t, orig);
}

TEST(ClockAuto, WithoutInitAndFinalizeOnlyTheLogicalClockWorks) {
  // Until issue 30 Auto ran linear+clamp here (the linear map found nothing to map); now the
  // map that changes nothing is no evidence of separate clocks, and the clc repairs both.
  Builder b(2);
  b.enter(0, 0, "main").enter(1, 0, "main");
  b.send(0, 2000, 2010, 1).recv(1, 1000, 1990, 1995, 0);
  b.coll(0, MpiOp::Barrier, 3000, 3010).coll(1, MpiOp::Barrier, 3020, 3030);  // 0 ends before 1 begins
  b.leave(0, 4000, "main").leave(1, 4000, "main");
  const Trace orig = b.trace();
  Trace t = orig;
  const ClockReport rep = correct_clocks(t);
  EXPECT_EQ(rep.violations_before, 2u);
  EXPECT_EQ(rep.violations_after_linear, 2u);
  EXPECT_EQ(rep.violations_after, 0u);
  EXPECT_EQ(rep.ranks_linear, 0u);
  EXPECT_EQ(rep.max_offset, 0.0);
  EXPECT_EQ(rep.method, "clc");
  EXPECT_EQ(rep.reason, "the linear map would leave violations 2 → 2: not applied; clc for the 2 left");
  const auto at = [&](Rank r, EventKind k) { return t.locations[r].events[index_of(orig, r, k)].time; };
  // Auto's clc keeps min_latency (0): the receive lands on its send (which the 1 ns tick
  // moved off its Enter)...
  EXPECT_EQ(at(1, EventKind::Recv), at(0, EventKind::Send));
  EXPECT_NEAR(at(0, EventKind::Send), 2000 * kUs + 1e-9, kTol);
  // ... rank 1 then begins its barrier ~10 µs later than measured, and rank 0's end follows.
  EXPECT_EQ(at(0, EventKind::CollEnd), at(1, EventKind::CollBegin));
  // Rank 0's send has no slack left (its receive is exactly on it): the backward pass ramps
  // rank 0's jump from the send on (the send kept its time above), and what precedes the
  // send stays.
  EXPECT_EQ(t.locations[0].events[0].time, orig.locations[0].events[0].time);
  EXPECT_EQ(t.locations[0].events[1].time, orig.locations[0].events[1].time);
  EXPECT_GT(t.locations[0].events[3].time, orig.locations[0].events[3].time);  // Leave of MPI_Send, ramped
}

TEST(ClockClamp, ADependencyCycleIsBrokenNotHung) {
  // Corrupt matching: each rank receives before it sends, and each receive matches the
  // other's later send (a cycle in happened-before).
  Builder b(2);
  b.recv(0, 100, 110, 110, 1).send(0, 200, 210, 1);
  b.recv(1, 100, 110, 110, 0).send(1, 200, 210, 0);
  Trace t = b.trace();
  ClockOptions opt;
  opt.mode = ClockOptions::Mode::Clamp;
  const ClockReport rep = correct_clocks(t, opt);
  EXPECT_EQ(rep.violations_before, 2u);
  EXPECT_EQ(rep.constraints_dropped, 1u);  // rank 0's receive goes first, unbounded
  EXPECT_EQ(rep.violations_after, 1u);
  for (const auto& loc : t.locations)
    for (std::size_t i = 1; i < loc.events.size(); ++i) EXPECT_LE(loc.events[i - 1].time, loc.events[i].time);
}

// ---- the controlled logical clock (Scalasca 2.6's, docs/clock-correction.md) ----

// Rank 1 receives 10 µs before rank 0 sent; no two events of a rank share a time.
Trace late_receive() {
  Builder b(2);
  for (Rank r : {0, 1}) b.call(r, MpiOp::Init, 10, 100);
  b.send_at(0, 1999, 2000, 2010, 1);
  // Region a: from before 1990 − 100·Δ (Δ = 11 µs, the jump below) to 50·Δ before the receive.
  b.enter(1, 880, "a").leave(1, 1440, "a");
  b.recv(1, 1500, 1990, 1995, 0);
  b.enter(1, 2000, "work").leave(1, 2500, "work").truth(1, 2000, 2500);
  b.call(0, MpiOp::Finalize, 6800, 6950).call(1, MpiOp::Finalize, 6900, 6950);
  return b.trace();
}

ClockOptions clc_mode() {
  ClockOptions opt;
  opt.mode = ClockOptions::Mode::Clc;
  return opt;
}

TEST(ClockClc, ForwardRuleMovesTheReceiveToItsSendPlusLminAndKeepsIntervalsToGamma) {
  const Trace orig = late_receive();
  Trace t = orig;
  const ClockReport rep = correct_clocks(t, clc_mode());
  EXPECT_EQ(rep.violations_before, 1u);
  EXPECT_EQ(rep.violations_after, 0u);
  EXPECT_EQ(rep.method, "clc");
  EXPECT_EQ(rep.reason, "mode clc");
  EXPECT_EQ(t.locations[0], orig.locations[0]);  // nothing constrains rank 0 but MPI_Init
  const auto& e = t.locations[1].events;
  const std::size_t recv = index_of(orig, 1, EventKind::Recv);
  // C(recv) = max(internal rule (1990: the gap before it is long), send + l_min) = 2001 µs.
  EXPECT_EQ(e[recv].time, 2000 * kUs + kLat);
  // The events after it: C = C(prev) + γ·(t − t_prev), t the times as measured, until the
  // measured time catches up (after 1.1 s here: not in this trace).
  EXPECT_NEAR(e[recv + 1].time - e[recv].time, kGamma * 5 * kUs, kTol);        // Leave of MPI_Recv
  EXPECT_NEAR(e[recv + 2].time - e[recv + 1].time, kGamma * 5 * kUs, kTol);    // Enter of work
  EXPECT_NEAR(e[recv + 3].time - e[recv + 2].time, kGamma * 500 * kUs, kTol);  // Leave of work
  EXPECT_NEAR(e.back().time - e[recv].time, kGamma * (6950 - 1990) * kUs, kTol);
  // The compute interval moves with the events around it.
  EXPECT_NEAR(t.locations[1].truth[0].start, e[recv + 2].time, kTol);
  EXPECT_NEAR(t.locations[1].truth[0].end, e[recv + 3].time, kTol);
  EXPECT_NEAR(rep.max_shift, 11 * kUs, kTol);
  EXPECT_EQ(rep.events_moved, 8u);  // from Leave(a) on (Enter(a) is before the ramp, below)
}

TEST(ClockClc, BackwardPassSpreadsTheJumpOverAHundredTimesItsSize) {
  const Trace orig = late_receive();
  Trace t = orig;
  correct_clocks(t, clc_mode());
  const auto& e = t.locations[1].events;
  const auto& o = orig.locations[1].events;
  // Δ = 11 µs at the receive (1990 µs as the internal rule had it): the ramp starts at
  // 1990 − 100·Δ = 890 µs and rises with slope 0.01 (the two points after it show both).
  const std::size_t a = index_of(orig, 1, EventKind::Enter, 1);  // of region a, at 880 µs
  EXPECT_NEAR(e[a + 1].time - o[a + 1].time, 5.5 * kUs, kTol);   // 50·Δ before: Δ/2
  EXPECT_NEAR(e[a + 2].time - o[a + 2].time, 6.1 * kUs, kTol);   // Enter of MPI_Recv, 60 µs later
  for (std::size_t i = 0; i <= a; ++i) EXPECT_EQ(e[i].time, o[i].time) << i;  // before the ramp
}

TEST(ClockClc, TheSlackOfAnEarlierSendLimitsTheRamp) {
  // As late_receive, with a send from rank 1 to rank 2 at 1800 µs, received at 1803: with
  // l_min = 1 µs it may move 2 µs, the ramp would move it by 0.01·(1800 − 890) = 9.1.
  Builder b(3);
  for (Rank r : {0, 1, 2}) b.call(r, MpiOp::Init, 10, 100);
  b.send_at(0, 1999, 2000, 2010, 1);
  b.enter(1, 1345, "b").leave(1, 1350, "b");
  b.send_at(1, 1799, 1800, 1801, 2).recv(1, 1900, 1990, 1995, 0);
  b.recv(2, 1700, 1803, 1804, 1);
  for (Rank r : {0, 1, 2}) b.call(r, MpiOp::Finalize, 6900, 6950);
  const Trace orig = b.trace();
  Trace t = orig;
  const ClockReport rep = correct_clocks(t, clc_mode());
  EXPECT_EQ(rep.violations_before, 1u);
  EXPECT_EQ(rep.violations_after, 0u);
  const auto& e = t.locations[1].events;
  const std::size_t send = index_of(orig, 1, EventKind::Send);
  const std::size_t recv = index_of(orig, 1, EventKind::Recv);
  EXPECT_EQ(e[recv].time, 2000 * kUs + kLat);
  // From the send to the receive: from the send's slack (2 µs) up to Δ = 11 µs, slope 9/190.
  const double slope = 9.0 / 190;
  EXPECT_NEAR(e[send].time, 1802 * kUs, kTol);
  EXPECT_LE(e[send].time + kLat, t.locations[2].events[index_of(orig, 2, EventKind::Recv)].time);
  EXPECT_NEAR(e[send + 1].time, (1801 + 2 + slope * 1) * kUs, kTol);    // Leave of MPI_Send
  EXPECT_NEAR(e[send + 2].time, (1900 + 2 + slope * 100) * kUs, kTol);  // Enter of MPI_Recv
  // Before the send: from 0 at 890 µs up to the send's 2 µs, slope 2/910.
  EXPECT_NEAR(e[send - 1].time, (1799 + 2.0 * 909 / 910) * kUs, kTol);  // Enter of MPI_Send
  EXPECT_NEAR(e[send - 2].time, (1350 + 2.0 * 460 / 910) * kUs, kTol);  // Leave of b
  EXPECT_NEAR(e[send - 3].time, 1346 * kUs, kTol);                      // halfway: 1 µs
  EXPECT_EQ(t.locations[2], orig.locations[2]);
}

TEST(ClockClc, CollectiveEndsFollowTheBeginsOfTheirClass) {
  // Three ranks; per rank (begin, end) of one collective, times in µs. Each Enter is 1 µs
  // before the begin and each Leave 1 µs after the end, so the 1 ns tick moves nothing.
  struct Case {
    const char* what;
    MpiOp op;
    Rank root;
    std::array<double, 3> begin, end;
    std::array<double, 3> want;   // the end after the clc; 0: unchanged
    std::uint64_t violations;     // counted (l_min = 0)
    std::uint64_t received2 = 8;  // bytes rank 2's CollEnd says it received
  };
  // One case a row.
  // clang-format off
  const std::vector<Case> cases = {
      {"barrier: the latest begin", MpiOp::Barrier, kNoRank,
       {3000, 3105, 2000}, {3100, 3200, 3150}, {3106, 0, 0}, 1},
      {"N×N: the own begin counts too", MpiOp::Allreduce, kNoRank,
       {3000, 3105, 2000}, {3100, 3105.5, 3150}, {3106, 3106, 0}, 1},
      {"1-to-N: non-roots follow the root", MpiOp::Bcast, 1,
       {1000, 1200, 1000}, {1300, 1210, 1150}, {0, 0, 1201}, 1},
      {"1-to-N: nothing received, no constraint", MpiOp::Bcast, 1,
       {1000, 1200, 1000}, {1300, 1210, 1150}, {0, 0, 0}, 0, 0},
      {"N-to-1: the root follows all", MpiOp::Reduce, 0,
       {2000, 2000, 2060}, {2050, 2010, 2070}, {2061, 0, 0}, 1},
      {"N-to-1, v-collective", MpiOp::Gatherv, 0,
       {2000, 2000, 2060}, {2050, 2010, 2070}, {2061, 0, 0}, 1},
      {"scan: the lower ranks and the own", MpiOp::Scan, kNoRank,
       {1000, 900, 2000}, {1010, 950, 2100}, {0, 1001, 0}, 1},
      {"alltoallv: no constraint", MpiOp::Alltoallv, kNoRank,
       {3000, 3105, 2000}, {3100, 3200, 3150}, {0, 0, 0}, 0},
  };
  // clang-format on
  for (const Case& c : cases) {
    Builder b(3);
    for (Rank r : {0, 1, 2})
      b.coll_at(r, c.op, c.begin[r] - 1, c.begin[r], c.end[r], c.end[r] + 1, c.root, 8,
                r == 2 ? c.received2 : 8);
    const Trace orig = b.trace();
    Trace t = orig;
    const ClockReport rep = correct_clocks(t, clc_mode());
    EXPECT_EQ(rep.violations_before, c.violations) << c.what;
    EXPECT_EQ(rep.violations_after, 0u) << c.what;
    for (Rank r : {0, 1, 2}) {
      const std::size_t end = index_of(orig, r, EventKind::CollEnd);
      const double got = t.locations[r].events[end].time;
      if (c.want[r] == 0) {
        EXPECT_EQ(t.locations[r], orig.locations[r]) << c.what << ", rank " << r;
      } else {
        EXPECT_NEAR(got, c.want[r] * kUs, kTol) << c.what << ", rank " << r;
      }
    }
  }
}

TEST(ClockClc, ACommunicatorOfOneConstrainsNothing) {
  // Rank 0's allreduce lasts 0.5 µs < l_min. Alone on its communicator it constrains nothing;
  // in MPI_COMM_WORLD with rank 1 its end follows its own begin by l_min.
  for (const bool alone : {true, false}) {
    Builder b(2);
    const CommId comm = alone ? b.comm({0}) : kCommWorld;
    b.coll_at(0, MpiOp::Allreduce, 99, 100, 100.5, 101, kNoRank, 8, 8, comm);
    if (alone) {
      b.enter(1, 0, "x").leave(1, 1, "x");
    } else {
      b.coll_at(1, MpiOp::Allreduce, 49, 50, 150, 151);
    }
    const Trace orig = b.trace();
    Trace t = orig;
    correct_clocks(t, clc_mode());
    const double end = t.locations[0].events[index_of(orig, 0, EventKind::CollEnd)].time;
    if (alone) {
      EXPECT_EQ(t, orig);
    } else {
      EXPECT_NEAR(end, 101 * kUs, kTol);
    }
  }
}

TEST(ClockClc, AConsistentTraceOnlyGetsNanosecondTicks) {
  // consistent_pair has events that share a time (a Send at its call's Enter) and a receive
  // exactly 1 µs after its send: the forward rule parts the first by 1 ns, which puts the
  // second 1 ns short of l_min. Nothing else moves, and no violation appears.
  const Trace orig = consistent_pair();
  Trace t = orig;
  const ClockReport rep = correct_clocks(t, clc_mode());
  EXPECT_EQ(rep.violations_before, 0u);
  EXPECT_EQ(rep.violations_after, 0u);
  EXPECT_GT(rep.events_moved, 0u);
  EXPECT_LT(rep.max_shift, 1e-8);
}

// A consistent ring trace in true time, drawn from `seed`: `iters` iterations on every rank
// of compute (20–60 µs), a send to the right neighbour and a receive from the left one
// (latency lat_lo–lat_hi µs), and every 4th iteration an MPI_Allreduce. MPI_Init ends at
// 100 µs + init_jitter[r]; MPI_Finalize at a common time + fin_jitter[r], or (fin_sync
// false) 1 µs after each rank enters it, as an MPI whose MPI_Finalize does not synchronise.
struct RingSpec {
  int ranks = 4;
  int iters = 40;
  std::uint32_t seed = 1;
  double lat_lo = 1.5, lat_hi = 5;
  std::vector<double> init_jitter, fin_jitter;
  bool fin_sync = true;
};

Trace ring(const RingSpec& s) {
  std::mt19937 gen(s.seed);
  const auto draw = [&](double lo, double hi) {
    return lo + (hi - lo) * static_cast<double>(gen() % 1001) / 1000;
  };
  const auto n = static_cast<std::size_t>(s.ranks);
  Builder b(s.ranks);
  std::vector<double> now(n);
  for (std::size_t r = 0; r < n; ++r) {
    now[r] = 100 + (s.init_jitter.empty() ? 0 : s.init_jitter[r]);
    b.call(static_cast<Rank>(r), MpiOp::Init, 10, now[r]);
  }
  std::vector<double> sent(n);
  for (int k = 0; k < s.iters; ++k) {
    for (std::size_t r = 0; r < n; ++r) {
      const auto rank = static_cast<Rank>(r);
      const double c = now[r] + draw(20, 60);
      b.enter(rank, now[r] + 0.1, "compute").leave(rank, c, "compute");
      sent[r] = c + 0.2;
      b.send_at(rank, c + 0.1, sent[r], c + 0.5, static_cast<Rank>((r + 1) % n), k);
      now[r] = c + 0.5;
    }
    for (std::size_t r = 0; r < n; ++r) {
      const std::size_t left = (r + n - 1) % n;
      const double at = std::max(now[r] + 0.4, sent[left] + draw(s.lat_lo, s.lat_hi));
      b.recv(static_cast<Rank>(r), now[r] + 0.1, at, at + 0.2, static_cast<Rank>(left), k);
      now[r] = at + 0.2;
    }
    if (k % 4 == 3) {
      std::vector<double> begin(n);
      for (std::size_t r = 0; r < n; ++r) begin[r] = now[r] + draw(5, 30);
      const double last = *std::max_element(begin.begin(), begin.end());
      for (std::size_t r = 0; r < n; ++r) {
        const double end = last + draw(s.lat_lo, s.lat_hi) + 0.3;
        b.coll_at(static_cast<Rank>(r), MpiOp::Allreduce, begin[r] - 0.1, begin[r], end, end + 0.1);
        now[r] = end + 0.1;
      }
    }
  }
  const double fin = *std::max_element(now.begin(), now.end()) + 20;
  for (std::size_t r = 0; r < n; ++r) {
    const double enter = now[r] + 5;
    const double leave = s.fin_sync ? fin + (s.fin_jitter.empty() ? 0 : s.fin_jitter[r]) : enter + 1;
    b.call(static_cast<Rank>(r), MpiOp::Finalize, enter, leave);
  }
  return b.trace();
}

double max_abs_shift(const Trace& got, const Trace& want) {
  double worst = 0;
  for (std::size_t r = 0; r < got.ranks(); ++r)
    for (std::size_t i = 0; i < got.locations[r].events.size(); ++i)
      worst = std::max(worst, std::abs(got.locations[r].events[i].time - want.locations[r].events[i].time));
  return worst;
}

// What the clc promises: no event earlier than given, no local interval below γ of its length.
void expect_clc_bounds(const Trace& got, const Trace& given) {
  for (std::size_t r = 0; r < got.ranks(); ++r) {
    const auto& e = got.locations[r].events;
    const auto& o = given.locations[r].events;
    for (std::size_t i = 0; i < e.size(); ++i) {
      ASSERT_GE(e[i].time, o[i].time) << "rank " << r << " event " << i;
      if (i > 0) {
        ASSERT_GE(e[i].time - e[i - 1].time, kGamma * (o[i].time - o[i - 1].time) - kTol)
            << "rank " << r << " event " << i;
      }
    }
  }
}

TEST(ClockAuto, OneClockWithANonSynchronisingFinalizeKeepsTheLinearMapOut) {
  // One clock; MPI_Init ends a few µs apart and MPI_Finalize returns at once (ranks leave it
  // up to ~100 µs apart): the linear map would take that for drift. Two receives are
  // recorded 0.3 and 0.7 µs before their sends (as a timer's granularity can).
  RingSpec spec;
  spec.init_jitter = {0, 3, -2, 1};
  spec.fin_sync = false;
  Trace orig = ring(spec);
  const Matching m = Matching::build(orig);
  const std::vector<double> early = {0.3 * kUs, 0.7 * kUs};
  std::size_t injected = 0;
  for (const Message& msg : m.messages) {
    if (injected == early.size()) break;
    auto& ev = orig.locations[msg.receiver].events;
    const double send = orig.locations[msg.sender].events[msg.send_event].time;
    if (msg.receiver == (injected == 0 ? 1 : 3) && send - early[injected] > ev[msg.recv_event - 1].time)
      ev[msg.recv_event].time = send - early[injected++];
  }
  ASSERT_EQ(injected, early.size());
  Trace t = orig;
  const ClockReport rep = correct_clocks(t);
  EXPECT_EQ(rep.violations_before, 2u);
  EXPECT_GT(rep.violations_after_linear, 2u);  // measured, not applied
  EXPECT_EQ(rep.violations_after, 0u);
  EXPECT_EQ(rep.ranks_linear, 0u);
  EXPECT_EQ(rep.method, "clc");
  EXPECT_EQ(rep.reason, "the linear map would raise violations 2 → " +
                            std::to_string(rep.violations_after_linear) +
                            ": not applied; clc for the 2 left");
  // No event moved more than the larger jump (0.7 µs: Auto's l_min is 0) plus 1 ns ticks;
  // the amortisation moves events before a jump by less than the jump.
  EXPECT_LE(max_abs_shift(t, orig), 0.7 * kUs + 1e-8);
  EXPECT_NEAR(rep.max_shift, max_abs_shift(t, orig), kTol);
  expect_clc_bounds(t, orig);
  // The linear map forced on it does the harm Auto avoided.
  Trace forced = orig;
  ClockOptions lin;
  lin.mode = ClockOptions::Mode::Linear;
  EXPECT_EQ(correct_clocks(forced, lin).violations_after, rep.violations_after_linear);
}

TEST(ClockAuto, RecoversKnownOffsetsAndDriftsToWithinTheResidualViolations) {
  // Separate clocks: rank r reads a_r + b_r·t. MPI_Init and MPI_Finalize end up to J = 2 µs
  // apart in true time (rank 0's exactly), so the linear map, which puts rank r's ends on
  // rank 0's, is off by up to J on the ends and a little more (0.1 µs) on the 90 µs before
  // MPI_Init's end: e_lin = J + 0.1 µs. Two ranks off in opposite directions leave a message
  // of the least latency (1.5 µs) early by up to 2·e_lin − 1.5 µs (Auto's l_min is 0): the
  // largest jump the clc can need. Tolerance: every event within e_lin + that jump of its
  // true time.
  RingSpec spec;
  spec.ranks = 6;
  spec.iters = 60;
  spec.seed = 7;
  spec.init_jitter = {0, 2, -2, 1, -1, 2};
  spec.fin_jitter = {0, -2, 2, 2, -1, -2};
  const Trace truth = ring(spec);
  const std::vector<double> a = {0, 3e-3, -2e-3, 5e-4, 1.2e-3, -7e-4};
  const std::vector<double> d = {0, 4e-5, -3e-5, 1e-4, -6e-5, 2e-5};
  Trace skew = truth;
  for (std::size_t r = 0; r < a.size(); ++r) skew = skewed(skew, static_cast<Rank>(r), a[r], 1 + d[r]);
  Trace t = skew;
  const ClockReport rep = correct_clocks(t);
  EXPECT_GT(rep.violations_before, 100u);
  EXPECT_LT(rep.violations_after_linear, rep.violations_before);
  EXPECT_GT(rep.violations_after_linear, 0u);
  EXPECT_EQ(rep.violations_after, 0u);
  EXPECT_EQ(rep.method, "linear+clc");
  EXPECT_EQ(rep.ranks_linear, 5u);
  EXPECT_NEAR(rep.max_offset, 3e-3, 1e-5);
  const double e_lin = 2 * kUs + 0.1 * kUs;
  const double jump = 2 * e_lin - 1.5 * kUs;
  Trace lin = skew;
  ClockOptions linear;
  linear.mode = ClockOptions::Mode::Linear;
  correct_clocks(lin, linear);
  EXPECT_LE(max_abs_shift(lin, truth), e_lin);       // measured 2.10 µs
  EXPECT_LE(max_abs_shift(t, truth), e_lin + jump);  // 4.8 µs; measured 2.55 µs
  EXPECT_LE(rep.max_shift, jump);                    // 2.7 µs; measured 0.79 µs
  // The clc alone repairs the order but cannot undo milliseconds of offset.
  Trace clc = skew;
  EXPECT_EQ(correct_clocks(clc, clc_mode()).violations_after, 0u);
  EXPECT_GT(max_abs_shift(clc, truth), 1e-3);
}

TEST(ClockAuto, RepairsWithMinLatencyNotScalascasMicrosecond) {
  // Messages faster than 1 µs (0.2–0.5 µs, as in shared memory) and one receive recorded
  // 0.3 µs before its send. Auto's clc moves that receive onto its send and little else;
  // mode clc, with Scalasca's 1 µs, pushes every message to 1 µs and the pushes add up.
  RingSpec spec;
  spec.lat_lo = 0.2;
  spec.lat_hi = 0.5;
  Trace orig = ring(spec);
  const Matching m = Matching::build(orig);
  const Message& msg = m.messages[10];
  orig.locations[msg.receiver].events[msg.recv_event].time =
      orig.locations[msg.sender].events[msg.send_event].time - 0.3 * kUs;
  Trace t = orig;
  const ClockReport rep = correct_clocks(t);
  EXPECT_EQ(rep.violations_before, 1u);
  EXPECT_EQ(rep.violations_after, 0u);
  EXPECT_EQ(rep.method, "clc");
  EXPECT_LE(rep.max_shift, 0.3 * kUs + 1e-8);
  Trace scalasca = orig;
  const ClockReport with_1us = correct_clocks(scalasca, clc_mode());
  EXPECT_EQ(with_1us.violations_after, 0u);
  EXPECT_GT(with_1us.max_shift, 5 * kUs);  // measured 18.4 µs
}

TEST(ClockClc, NeverLeavesAViolationOnSkewedRings) {
  // Random rings with random offsets and no linear map: whatever the clc moves forward and
  // amortises backward, the clock condition holds at the end, nothing moves earlier and
  // every local interval keeps γ of its length.
  for (std::uint32_t seed = 1; seed <= 20; ++seed) {
    RingSpec spec;
    spec.seed = seed;
    spec.ranks = 5;
    spec.iters = 30;
    spec.lat_lo = 0.2;  // also latencies below l_min: the clc raises them to it
    const Trace truth = ring(spec);
    std::mt19937 gen(seed);
    Trace t = truth;
    for (Rank r = 1; r < 5; ++r) t = skewed(t, r, (static_cast<double>(gen() % 2001) - 1000) * 1e-8, 1);
    const Trace orig = t;
    const ClockReport rep = correct_clocks(t, clc_mode());
    EXPECT_EQ(rep.violations_after, 0u) << seed;
    EXPECT_EQ(rep.constraints_dropped, 0u) << seed;
    ClockOptions at_lmin;  // the condition with the clc's own l_min holds too
    at_lmin.mode = ClockOptions::Mode::None;
    at_lmin.min_latency = kLat;
    Trace copy = t;
    EXPECT_EQ(correct_clocks(copy, at_lmin).violations_before, 0u) << seed;
    expect_clc_bounds(t, orig);
  }
}

TEST(ClockOptionsText, ModesRoundTrip) {
  using M = ClockOptions::Mode;
  for (M m : {M::Auto, M::None, M::Linear, M::Clamp, M::LinearAndClamp, M::Clc}) {
    M back = M::None;
    ASSERT_TRUE(parse_clock_mode(clock_mode_name(m), back)) << clock_mode_name(m);
    EXPECT_EQ(back, m);
  }
  M m = M::Auto;
  EXPECT_FALSE(parse_clock_mode("Linear", m));
  EXPECT_FALSE(parse_clock_mode("", m));
  EXPECT_EQ(m, M::Auto);
  EXPECT_STREQ(clock_mode_name(M::LinearAndClamp), "linear+clamp");
  EXPECT_STREQ(clock_mode_name(M::Clc), "clc");
}

}  // namespace
}  // namespace waitlab::trace
