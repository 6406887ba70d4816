// Point-to-point timing: hand-computed late-sender times and eager semantics.
#include <gtest/gtest.h>

#include <algorithm>

#include "sim_util.hpp"

namespace waitlab::sim::test {
namespace {

// Two nodes on 1 GB/s, 1 us links: a message crosses node 0's link up and node 1's link
// down, so the route has latency 2 us and bandwidth 1 GB/s.
constexpr double kLat = 2e-6;
constexpr double kBw = 1e9;

// Rank 1 posts MPI_Recv at t=0; rank 0 computes 1 ms, then sends `bytes`.
trace::Trace late_sender(std::uint64_t bytes, Semantics s) {
  ListWorkload w({{compute(1e-3), p2p(ActionKind::Send, 1, bytes, 7)}, {p2p(ActionKind::Recv, 0, bytes, 7)}});
  return simulate(cluster(2), w, {}, options(s)).trace;
}

TEST(LateSender, SmallMessageMatchesHandComputation) {
  const auto t = late_sender(8, Semantics::Waitlab);
  // 8 B + 16 B envelope = 24 B: lat-factor 2.01467, bw-factor 0.812084.
  const double expected = 1e-3 + 2e-6 * 2.01467 + 24 / (1e9 * 0.812084);
  EXPECT_DOUBLE_EQ(expected, 1e-3 + smpi_transfer_time(8, kLat, kBw));
  const auto [enter, leave] = call(t, 1, MpiOp::Recv);
  EXPECT_DOUBLE_EQ(enter, 0.0);
  EXPECT_NEAR(leave, expected, 1e-12);
  EXPECT_NEAR(nth(t, 1, EventKind::Recv, MpiOp::Recv).time, expected, 1e-12);
  EXPECT_EQ(nth(t, 1, EventKind::Recv, MpiOp::Recv).bytes, 8u);
  EXPECT_EQ(nth(t, 1, EventKind::Recv, MpiOp::Recv).peer, 0);
  EXPECT_EQ(nth(t, 1, EventKind::Recv, MpiOp::Recv).tag, 7);
  // The eager send returns at once.
  const auto [s_enter, s_leave] = call(t, 0, MpiOp::Send);
  EXPECT_NEAR(s_enter, 1e-3, 1e-12);
  EXPECT_EQ(s_leave, s_enter);
}

TEST(LateSender, LargeMessageMatchesHandComputation) {
  const std::uint64_t mib = 1 << 20;
  const auto t = late_sender(mib, Semantics::Waitlab);
  // 1 MiB + 16 B is above the last threshold (65472): lat-factor 11.6436, bw-factor 0.940694.
  const double expected = 1e-3 + 2e-6 * 11.6436 + (1048576.0 + 16) / (1e9 * 0.940694);
  EXPECT_DOUBLE_EQ(expected, 1e-3 + smpi_transfer_time(mib, kLat, kBw));
  EXPECT_NEAR(call(t, 1, MpiOp::Recv).second, expected, 1e-12);
  // Rendezvous: the sender leaves MPI_Send when the transfer is complete.
  EXPECT_NEAR(call(t, 0, MpiOp::Send).second, expected, 1e-12);
}

TEST(LateSender, BothSemanticsAgreeOnPointToPoint) {
  for (std::uint64_t bytes : {std::uint64_t{8}, std::uint64_t{1000}, std::uint64_t{1} << 20}) {
    SCOPED_TRACE(bytes);
    const auto a = late_sender(bytes, Semantics::Waitlab);
    const auto b = late_sender(bytes, Semantics::SmpiDefault);
    ASSERT_EQ(a.locations.size(), b.locations.size());
    for (std::size_t r = 0; r < a.locations.size(); ++r)
      EXPECT_EQ(a.locations[r].events, b.locations[r].events);
  }
}

// Eager (a): the receiver posts 1 ms late.
trace::Trace late_receiver(std::uint64_t bytes, Semantics s) {
  ListWorkload w({{p2p(ActionKind::Send, 1, bytes)}, {compute(1e-3), p2p(ActionKind::Recv, 0, bytes)}});
  return simulate(cluster(2), w, {}, options(s)).trace;
}

TEST(Eager, SmallSendLeavesAtOnceLargeSendWaitsForTheReceiver) {
  const auto small = late_receiver(8, Semantics::Waitlab);
  const auto [e8, l8] = call(small, 0, MpiOp::Send);
  EXPECT_EQ(e8, 0.0);
  EXPECT_EQ(l8, 0.0);  // eager: no waiting for the receiver
  // SMPI (with smpi/async-small-thresh 0, its default) starts moving a message when the
  // receive is posted, eager or not: the receive ends one transfer time after 1 ms.
  EXPECT_NEAR(call(small, 1, MpiOp::Recv).second, 1e-3 + smpi_transfer_time(8, kLat, kBw), 1e-12);

  const auto large = late_receiver(1 << 20, Semantics::Waitlab);
  const auto [e1, l1] = call(large, 0, MpiOp::Send);
  EXPECT_EQ(e1, 0.0);
  // Rendezvous: the transfer starts when the receive is posted at 1 ms.
  EXPECT_GT(l1, 1e-3);
  EXPECT_NEAR(l1, 1e-3 + smpi_transfer_time(1 << 20, kLat, kBw), 1e-12);
  EXPECT_NEAR(call(large, 1, MpiOp::Recv).second, l1, 1e-12);
}

TEST(Eager, TimestampsEqualSmpiDefaultSemantics) {
  for (std::uint64_t bytes :
       {std::uint64_t{8}, std::uint64_t{65535}, std::uint64_t{65536}, std::uint64_t{1} << 20}) {
    SCOPED_TRACE(bytes);
    const auto a = late_receiver(bytes, Semantics::Waitlab);
    const auto b = late_receiver(bytes, Semantics::SmpiDefault);
    for (std::size_t r = 0; r < 2; ++r) EXPECT_EQ(a.locations[r].events, b.locations[r].events);
  }
}

TEST(Eager, ThresholdIsConfigurable) {
  // With a threshold of 8 bytes, an 8-byte send is no longer eager.
  ListWorkload w({{p2p(ActionKind::Send, 1, 8)}, {compute(1e-3), p2p(ActionKind::Recv, 0, 8)}});
  auto o = options();
  o.eager_threshold = 8;
  const auto t = simulate(cluster(2), w, {}, o).trace;
  EXPECT_NEAR(call(t, 0, MpiOp::Send).second, 1e-3 + smpi_transfer_time(8, kLat, kBw), 1e-12);
  o.semantics = Semantics::SmpiDefault;
  EXPECT_EQ(simulate(cluster(2), w, {}, o).trace.locations[0].events, t.locations[0].events);
}

TEST(Eager, IsendWaitReturnsAtOnceForSmallMessages) {
  // Rank 0: Isend 8 B, Isend 1 MiB, Waitall; rank 1 receives both 1 ms late.
  ListWorkload w(
      {{p2p(ActionKind::Isend, 1, 8, 0, 0), p2p(ActionKind::Isend, 1, 1 << 20, 1, 1), wait(0), waitall()},
       {compute(1e-3), p2p(ActionKind::Recv, 0, 8, 0), p2p(ActionKind::Recv, 0, 1 << 20, 1)}});
  const auto t = simulate(cluster(2), w, {}, options()).trace;
  EXPECT_EQ(call(t, 0, MpiOp::Wait).second, 0.0);
  EXPECT_EQ(nth(t, 0, EventKind::IsendComplete, MpiOp::Wait).time, 0.0);
  EXPECT_EQ(nth(t, 0, EventKind::IsendComplete, MpiOp::Wait).aux,
            nth(t, 0, EventKind::IsendStart, MpiOp::Isend).aux);
  const double large_done = call(t, 1, MpiOp::Recv, 1).second;
  EXPECT_GT(large_done, 1e-3);
  EXPECT_NEAR(call(t, 0, MpiOp::Waitall).second, large_done, 1e-12);
  EXPECT_EQ(nth(t, 0, EventKind::IsendComplete, MpiOp::Waitall).time, call(t, 0, MpiOp::Waitall).second);
  const auto d = simulate(cluster(2), w, {}, options(Semantics::SmpiDefault)).trace;
  for (std::size_t r = 0; r < 2; ++r) EXPECT_EQ(t.locations[r].events, d.locations[r].events);
}

// MPI_Waitall over some of the requests (LULESH's over its sends while its receives are
// pending): the Wait actions marked in_waitall name them; the receive stays outstanding and
// completes at its own MPI_Wait, after the rank computed. Same timestamps under both semantics.
TEST(Waitall, OverSomeRequestsLeavesTheOthersOutstanding) {
  ListWorkload w({{p2p(ActionKind::Irecv, 1, 8, 1, 0), p2p(ActionKind::Isend, 1, 1 << 20, 2, 1), in_waitall(1),
                   waitall(), compute(1e-3), wait(0)},
                  {p2p(ActionKind::Recv, 0, 1 << 20, 2), compute(3e-3), p2p(ActionKind::Send, 0, 8, 1)}});
  for (Semantics s : {Semantics::Waitlab, Semantics::SmpiDefault}) {
    const auto t = simulate(cluster(2), w, {}, options(s)).trace;
    const double large_done = call(t, 1, MpiOp::Recv).second;
    EXPECT_GT(large_done, 1e-3);
    EXPECT_LT(large_done, 2e-3);
    // The Waitall ends when its send is done, not when the receive is.
    EXPECT_NEAR(call(t, 0, MpiOp::Waitall).second, large_done, 1e-12);
    const auto& events = t.locations[0].events;
    EXPECT_EQ(std::count_if(events.begin(), events.end(),
                            [](const auto& e) { return e.kind == EventKind::IsendComplete; }),
              1);
    EXPECT_EQ(nth(t, 0, EventKind::IsendComplete, MpiOp::Waitall).time, call(t, 0, MpiOp::Waitall).second);
    // The receive completes in the MPI_Wait that follows the compute.
    const auto [wait_in, wait_out] = call(t, 0, MpiOp::Wait);
    EXPECT_NEAR(wait_in, large_done + 1e-3, 1e-12);
    EXPECT_NEAR(wait_out, large_done + 3e-3 + smpi_transfer_time(8, kLat, kBw), 1e-12);
    EXPECT_EQ(nth(t, 0, EventKind::IrecvComplete, MpiOp::Wait).time, wait_out);
    EXPECT_THROW((void)nth(t, 0, EventKind::Enter, MpiOp::Wait, 1), std::runtime_error);  // one MPI_Wait
    EXPECT_THROW((void)nth(t, 0, EventKind::Enter, MpiOp::Waitall, 1), std::runtime_error);
  }
}

TEST(Eager, SendrecvWithSmallSendPart) {
  // A ring of 3 with Sendrecv; rank 2 is 1 ms late.
  std::vector<std::vector<Action>> acts(3);
  for (int r = 0; r < 3; ++r) {
    Action a;
    a.kind = ActionKind::Sendrecv;
    a.peer = (r + 1) % 3;
    a.peer2 = (r + 2) % 3;
    a.bytes = a.bytes2 = 8;
    if (r == 2) acts[static_cast<std::size_t>(r)].push_back(compute(1e-3));
    acts[static_cast<std::size_t>(r)].push_back(a);
  }
  ListWorkload w(acts);
  const auto t = simulate(cluster(3), w, {}, options()).trace;
  const auto d = simulate(cluster(3), w, {}, options(Semantics::SmpiDefault)).trace;
  for (std::size_t r = 0; r < 3; ++r) EXPECT_EQ(t.locations[r].events, d.locations[r].events);
  // Rank 0 receives from rank 2, which sends at 1 ms while it receives from rank 1. The two
  // flows start together and each loads the other's links with 5 % cross-traffic
  // (network/crosstraffic): max-min sharing gives each 1e9 / 1.05 B/s before the bw-factor.
  const double shared = 1e-3 + 2e-6 * 2.01467 + 24 / (1e9 / 1.05 * 0.812084);
  EXPECT_NEAR(call(t, 0, MpiOp::Sendrecv).second, shared, 1e-12);
  EXPECT_NEAR(call(t, 2, MpiOp::Sendrecv).second, shared, 1e-12);
  // Rank 1 receives from rank 0 (sent at once) and leaves long before.
  EXPECT_NEAR(call(t, 1, MpiOp::Sendrecv).second, smpi_transfer_time(8, kLat, kBw), 1e-12);
}

}  // namespace
}  // namespace waitlab::sim::test

namespace waitlab::sim::test {
namespace {

void expect_same_as_smpi_default(const models::Workload& w, int nodes) {
  const auto a = simulate(cluster(nodes), w, {}, options()).trace;
  const auto b = simulate(cluster(nodes), w, {}, options(Semantics::SmpiDefault)).trace;
  ASSERT_EQ(a.locations.size(), b.locations.size());
  for (std::size_t r = 0; r < a.locations.size(); ++r)
    EXPECT_EQ(a.locations[r].events, b.locations[r].events);
}

TEST(EagerBookkeeping, ManyTagsAndOutOfOrderWaits) {
  // Rank 0 sends 40 small messages, each with its own tag (more channels than the engine
  // keeps bookkeeping for), then two on one tag that rank 1 waits for in reverse order.
  std::vector<Action> r0;
  std::vector<Action> r1;
  for (int i = 0; i < 40; ++i) {
    r0.push_back(p2p(ActionKind::Send, 1, 8, i));
    r0.push_back(compute(10e-6));
    r1.push_back(compute(i % 3 == 0 ? 50e-6 : 1e-6));
    r1.push_back(p2p(ActionKind::Recv, 0, 8, i));
  }
  r0.push_back(p2p(ActionKind::Send, 1, 8, 99));
  r0.push_back(p2p(ActionKind::Send, 1, 16, 99));
  r0.push_back(compute(1e-3));
  r0.push_back(p2p(ActionKind::Send, 1, 8, 7));
  r1.push_back(p2p(ActionKind::Irecv, 0, 8, 99, 0));
  r1.push_back(p2p(ActionKind::Irecv, 0, 16, 99, 1));
  r1.push_back(compute(200e-6));
  r1.push_back(wait(1));
  r1.push_back(wait(0));
  r1.push_back(p2p(ActionKind::Recv, 0, 8, 7));
  ListWorkload w({r0, r1});
  expect_same_as_smpi_default(w, 2);
  const auto t = simulate(cluster(2), w, {}, options()).trace;
  for (int i = 0; i < 43; ++i) {
    const auto [enter, leave] = call(t, 0, MpiOp::Send, i);
    EXPECT_EQ(enter, leave) << i;  // every send is eager
  }
  EXPECT_EQ(nth(t, 1, EventKind::IrecvComplete, MpiOp::Wait, 0).bytes, 16u);
  EXPECT_EQ(nth(t, 1, EventKind::IrecvComplete, MpiOp::Wait, 1).bytes, 8u);
}

TEST(EagerBookkeeping, SendsToSelf) {
  // MPI_Sendrecv with itself is a local copy (no time); a small send to itself is eager.
  Action self;
  self.kind = ActionKind::Sendrecv;
  self.peer = self.peer2 = 0;
  self.bytes = self.bytes2 = 8;
  ListWorkload w({{self, p2p(ActionKind::Send, 0, 8, 5), p2p(ActionKind::Recv, 0, 8, 5)}});
  expect_same_as_smpi_default(w, 1);
  const auto t = simulate(cluster(1), w, {}, options()).trace;
  EXPECT_EQ(call(t, 0, MpiOp::Sendrecv).second, 0.0);
  EXPECT_EQ(call(t, 0, MpiOp::Send).second, 0.0);
  // Without a loopback the message goes up and down the node's own link (see
  // test_platform_build.cpp): 2 us of latency, each direction's 5 % cross-traffic on the other.
  EXPECT_NEAR(call(t, 0, MpiOp::Recv).second, 2e-6 * 2.01467 + 24 / (1e9 / 1.05 * 0.812084), 1e-12);
}

TEST(EagerBookkeeping, ManyRanksSendToOne) {
  // 12 ranks send 3 small messages each to rank 0, which receives them late, by source.
  std::vector<std::vector<Action>> acts(13);
  acts[0].push_back(compute(1e-3));
  for (int src = 1; src <= 12; ++src) {
    for (int k = 0; k < 3; ++k) {
      acts[static_cast<std::size_t>(src)].push_back(
          p2p(ActionKind::Send, 0, 100 * static_cast<std::uint64_t>(src), k));
      acts[0].push_back(p2p(ActionKind::Recv, src, 100 * static_cast<std::uint64_t>(src), k));
    }
  }
  ListWorkload w(acts);
  expect_same_as_smpi_default(w, 13);
}

}  // namespace
}  // namespace waitlab::sim::test
