// RunOptions::network: an ideal network (zero latency, no bandwidth limit, no SMPI per-message
// overheads) and scaled bandwidth/latency, on built and XML platforms, against SMPI's network
// model computed by hand (sim_util.hpp: smpi_transfer_time).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "analysis/timeresolved/timeresolved.hpp"
#include "util/error.hpp"
#include "sim_util.hpp"

namespace waitlab::sim::test {
namespace {

constexpr double kLat = 2e-6;  // two 1 us links per route (cluster(): 1 GB/s, 1 us per node link)
constexpr double kBw = 1e9;
constexpr std::uint64_t kMiB = 1 << 20;

RunOptions with(NetworkChange n) {
  RunOptions o = options();
  o.network = n;
  return o;
}
const NetworkChange kIdeal{true, 1, 1};

// Rank 0 sends `bytes` to rank 1 and receives them back (tags 1, 2).
ListWorkload ping_pong(std::uint64_t bytes) {
  return ListWorkload({{p2p(ActionKind::Send, 1, bytes, 1), p2p(ActionKind::Recv, 1, bytes, 2)},
                       {p2p(ActionKind::Recv, 0, bytes, 1), p2p(ActionKind::Send, 0, bytes, 2)}});
}

TEST(IdealNetwork, PingPongCostsNothing) {
  for (std::uint64_t bytes : {std::uint64_t{8}, std::uint64_t{4096}, kMiB, 64 * kMiB}) {
    SCOPED_TRACE(bytes);
    const auto w = ping_pong(bytes);
    const auto real = simulate(cluster(2), w, {}, options());
    EXPECT_NEAR(call(real.trace, 0, MpiOp::Recv).second, 2 * smpi_transfer_time(static_cast<double>(bytes), kLat, kBw),
                1e-12);
    const auto ideal = simulate(cluster(2), w, {}, with(kIdeal));
    EXPECT_LE(ideal.stats.simulated_time, 1e-9);
    for (const auto& l : ideal.trace.locations)
      for (const auto& e : l.events) EXPECT_LE(e.time, 1e-9);
    EXPECT_EQ(ideal.trace.attribute("network"), "ideal (latency 0, bandwidth 1e20 B/s, no per-message overheads)");
    EXPECT_EQ(real.trace.attribute("network"), "");
  }
}

// Rank 1 posts its receive 1 ms late: an eager send returns at once, a rendezvous send waits
// for the receive even on an ideal network, and the receive completes as it is posted.
TEST(IdealNetwork, RendezvousStillSynchronises) {
  for (std::uint64_t bytes : {std::uint64_t{8}, kMiB}) {
    SCOPED_TRACE(bytes);
    ListWorkload w({{p2p(ActionKind::Send, 1, bytes, 7)}, {compute(1e-3), p2p(ActionKind::Recv, 0, bytes, 7)}});
    const auto t = simulate(cluster(2), w, {}, with(kIdeal)).trace;
    const double send_leave = call(t, 0, MpiOp::Send).second;
    if (bytes < 64 * 1024)
      EXPECT_NEAR(send_leave, 0.0, 1e-9);
    else
      EXPECT_NEAR(send_leave, 1e-3, 1e-9);
    EXPECT_NEAR(call(t, 1, MpiOp::Recv).second, 1e-3, 1e-9);
  }
}

// Fixture D simulated (ALGORITHMS.md §6): rank 0 computes 0.5 s, sends 1 MiB, computes
// 0.09 s; rank 1 computes 0.2 s, receives, computes 0.1 s. On the ideal network the run takes
// the longest chain of compute, 0.6 s; the time-resolved analysis with that reference gives
// T_ideal = 0.6 s, the same as the Lamport replay of the real run.
TEST(IdealNetwork, FixtureDGivesLongestComputeChain) {
  ListWorkload w({{compute(0.5), p2p(ActionKind::Send, 1, kMiB, 7), compute(0.09)},
                  {compute(0.2), p2p(ActionKind::Recv, 0, kMiB, 7), compute(0.1)}});
  // A slow network (1 MB/s, 10 ms) makes the transfer matter: about 1.05 s.
  const auto real = simulate(cluster(2, 1e6, 5e-3), w, {}, options());
  const double transfer = smpi_transfer_time(static_cast<double>(kMiB), 1e-2, 1e6);
  EXPECT_NEAR(call(real.trace, 1, MpiOp::Recv).second, 0.5 + transfer, 1e-9);
  const auto ideal = simulate(cluster(2, 1e6, 5e-3), w, {}, with(kIdeal));
  EXPECT_NEAR(ideal.stats.simulated_time, 0.6, 1e-9);
  EXPECT_NEAR(call(ideal.trace, 1, MpiOp::Recv).second, 0.5, 1e-9);

  analysis::IdealReference ref;
  std::string why;
  ASSERT_TRUE(analysis::network_reference(real.trace, ideal.trace, ref, why)) << why;
  const auto r = analysis::time_resolved(real.trace, ref);
  const double T = 0.5 + transfer + 0.1;
  EXPECT_NEAR(r.elapsed, T, 1e-9);
  EXPECT_NEAR(r.ideal, 0.6, 1e-9);
  EXPECT_NEAR(r.eff.ser_e, 0.59 / 0.6, 1e-9);
  EXPECT_NEAR(r.eff.trf_e, 0.6 / T, 1e-9);
  const auto lamport = analysis::time_resolved(real.trace,
                                               analysis::lamport_reference(real.trace, trace::Matching::build(real.trace)));
  EXPECT_NEAR(lamport.ideal, 0.6, 1e-9);
}

// Rank 1 receives from t = 0; rank 0 computes 1 ms and sends.
double late_sender_arrival(std::uint64_t bytes, const models::PlatformDesc& p, NetworkChange n) {
  ListWorkload w({{compute(1e-3), p2p(ActionKind::Send, 1, bytes, 7)}, {p2p(ActionKind::Recv, 0, bytes, 7)}});
  return call(simulate(p, w, {}, with(n)).trace, 1, MpiOp::Recv).second;
}

TEST(ScaledNetwork, DoubleBandwidthHalvesTransfer) {
  const double bytes = 64.0 * kMiB;
  const double one = late_sender_arrival(64 * kMiB, cluster(2), {});
  const double two = late_sender_arrival(64 * kMiB, cluster(2), {false, 2, 1});
  EXPECT_NEAR(one, 1e-3 + smpi_transfer_time(bytes, kLat, kBw), 1e-12);
  EXPECT_NEAR(two, 1e-3 + smpi_transfer_time(bytes, kLat, 2 * kBw), 1e-12);
  // The bandwidth term (0.0713 s) halves; the latency term (23 us) stays.
  const double latency_term = kLat * 11.6436;
  EXPECT_NEAR((two - 1e-3 - latency_term) / (one - 1e-3 - latency_term), 0.5, 1e-9);
}

TEST(ScaledNetwork, LatencyScaleScalesSmallMessages) {
  const double one = late_sender_arrival(8, cluster(2), {});
  const double ten = late_sender_arrival(8, cluster(2), {false, 1, 10});
  EXPECT_NEAR(one, 1e-3 + smpi_transfer_time(8, kLat, kBw), 1e-12);
  EXPECT_NEAR(ten, 1e-3 + smpi_transfer_time(8, 10 * kLat, kBw), 1e-12);
  // 8 B: latency 2 us × 2.01467 dominates the 30 ns of bandwidth time: ×10 → about ×9.9.
  EXPECT_NEAR((ten - 1e-3) / (one - 1e-3), 9.93, 0.01);
}

TEST(ScaledNetwork, AppliesToXmlPlatforms) {
  char name[] = "/tmp/waitlab-test-XXXXXX.xml";
  const int fd = mkstemps(name, 4);
  ASSERT_GE(fd, 0);
  close(fd);
  std::ofstream(name) << R"(<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="c" prefix="n" suffix="" radical="0-1" speed="1Gf" bw="1GBps" lat="1us"/>
</platform>)";
  models::PlatformDesc p;
  p.kind = models::PlatformKind::Xml;
  p.xml_file = name;
  const double one = late_sender_arrival(8, p, {});
  const double ten = late_sender_arrival(8, p, {false, 1, 10});
  const double ideal = late_sender_arrival(kMiB, p, kIdeal);
  std::remove(name);
  EXPECT_NEAR(one, 1e-3 + smpi_transfer_time(8, kLat, kBw), 1e-12);
  EXPECT_NEAR(ten, 1e-3 + smpi_transfer_time(8, 10 * kLat, kBw), 1e-12);
  EXPECT_NEAR(ideal, 1e-3, 1e-9);
}

TEST(ScaledNetwork, BadScalesAreInputErrors) {
  const auto w = ping_pong(8);
  EXPECT_THROW(simulate(cluster(2), w, {}, with({false, 0, 1})), InputError);
  EXPECT_THROW(simulate(cluster(2), w, {}, with({false, 1, -1})), InputError);
}

}  // namespace
}  // namespace waitlab::sim::test
