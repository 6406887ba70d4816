// The minimum-duration estimator (ALGORITHMS.md §5): exact numbers on hand-made call records,
// every variant, and the estimator run on a trace built by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "analysis/minprofile/minprofile.hpp"
#include "analysis/trace/match.hpp"
#include "trace_builder.hpp"

namespace waitlab::minprofile {
namespace {

using trace::MpiOp;

constexpr auto kRecv = static_cast<std::uint8_t>(MpiOp::Recv);
constexpr auto kAllreduce = static_cast<std::uint8_t>(MpiOp::Allreduce);
constexpr auto kBcast = static_cast<std::uint8_t>(MpiOp::Bcast);

CallRecord rec(std::uint32_t path, std::uint8_t fn, Pattern p, std::uint64_t bytes, double d,
               std::uint64_t peers = 0, bool tested = false) {
  CallRecord c;
  c.path = path;
  c.function = fn;
  c.pattern = p;
  c.bytes = bytes;
  c.duration = d;
  c.peers = peers;
  c.tested_complete = tested;
  return c;
}

double waiting(const Result& r, const std::string& path, Pattern p, int rank, Variant v) {
  for (const auto& row : r.rows)
    if (r.paths[row.path] == path && row.pattern == p && row.rank == rank)
      return row.waiting[static_cast<std::size_t>(v)];
  ADD_FAILURE() << "no row " << path << " " << pattern_name(p) << " rank " << rank;
  return NAN;
}

TEST(MinProfile, SizeClassesAreLog2Buckets) {
  EXPECT_EQ(size_class(0), 0);
  EXPECT_EQ(size_class(1), 1);
  EXPECT_EQ(size_class(2), 2);
  EXPECT_EQ(size_class(3), 2);
  EXPECT_EQ(size_class(8), 4);
  EXPECT_EQ(size_class(1023), 10);
  EXPECT_EQ(size_class(1024), 11);
  EXPECT_EQ(size_class(~0ull), 64);
}

// Local minima for point-to-point, per size class, shared by every call path of a function.
TEST(MinProfile, LateSenderUsesTheRankLocalMinimumPerSizeClass) {
  std::vector<RankProfile> ranks(2);
  // Rank 0: MPI_Recv of 8 B on path A (5, 2, 3 s) and path B (10, 2 s); 1 KiB on A (7, 9 s).
  for (double d : {5.0, 2.0, 3.0}) ranks[0].add(rec(0, kRecv, Pattern::LateSender, 8, d));
  for (double d : {10.0, 2.0}) ranks[0].add(rec(1, kRecv, Pattern::LateSender, 8, d));
  for (double d : {7.0, 9.0}) ranks[0].add(rec(0, kRecv, Pattern::LateSender, 1024, d));
  // Rank 1: the same function, a smaller minimum that must not leak to rank 0.
  for (double d : {1.0, 4.0}) ranks[1].add(rec(0, kRecv, Pattern::LateSender, 8, d));
  ranks[0].set_span(0, 100);
  ranks[1].set_span(0, 100);
  const Result r = estimate(ranks, {"main/A/MPI_Recv", "main/B/MPI_Recv"});
  // A: (5 + 2 + 3) − 3·2 + (7 + 9) − 2·7 = 4 + 2; B: 12 − 2·2 = 8; rank 1: 5 − 2·1 = 3.
  EXPECT_EQ(waiting(r, "main/A/MPI_Recv", Pattern::LateSender, 0, Variant::Paper), 6);
  EXPECT_EQ(waiting(r, "main/B/MPI_Recv", Pattern::LateSender, 0, Variant::Paper), 8);
  EXPECT_EQ(waiting(r, "main/A/MPI_Recv", Pattern::LateSender, 1, Variant::Paper), 3);
  const auto totals = r.totals();
  ASSERT_EQ(totals.size(), 2u);
  EXPECT_EQ(totals[0].calls, 7u);
  EXPECT_EQ(totals[0].time, 31);
  EXPECT_EQ(totals[0].waiting[0], 9);
  // Wait ratio: Σ waiting / (ranks × wall time) = 9 / 200.
  EXPECT_DOUBLE_EQ(r.ratio(totals[0], Variant::Paper), 9.0 / 200.0);
}

// Collectives use the minimum over all ranks; broadcast roots and reduce non-roots are not estimated.
TEST(MinProfile, CollectivesUseTheGlobalMinimumAndTheRootDistinction) {
  std::vector<RankProfile> ranks(2);
  for (double d : {3.0, 9.0}) ranks[0].add(rec(2, kAllreduce, Pattern::WaitAtNxN, 16, d));
  for (double d : {4.0, 6.0}) ranks[1].add(rec(2, kAllreduce, Pattern::WaitAtNxN, 16, d));
  ranks[0].add(rec(3, kBcast, Pattern::None, 8, 1.0));  // root: cannot wait, not counted
  for (double d : {5.0, 8.0}) ranks[1].add(rec(3, kBcast, Pattern::LateBroadcast, 8, d));
  const Result r = estimate(ranks, {"", "", "main/MPI_Allreduce", "main/MPI_Bcast"});
  EXPECT_EQ(waiting(r, "main/MPI_Allreduce", Pattern::WaitAtNxN, 0, Variant::Paper), 12 - 2 * 3);
  EXPECT_EQ(waiting(r, "main/MPI_Allreduce", Pattern::WaitAtNxN, 1, Variant::Paper), 10 - 2 * 3);
  // The root's 1 s call is below the non-root minimum but does not count: 13 − 2·5.
  EXPECT_EQ(waiting(r, "main/MPI_Bcast", Pattern::LateBroadcast, 1, Variant::Paper), 3);
  EXPECT_EQ(r.rows.size(), 3u);
}

TEST(MinProfile, PerPeerVariantKeepsOneMinimumPerPeerSet) {
  std::vector<RankProfile> ranks(1);
  ranks[0].add(rec(0, kRecv, Pattern::LateSender, 8, 5, /*peers=*/11));
  ranks[0].add(rec(0, kRecv, Pattern::LateSender, 8, 2, 11));
  ranks[0].add(rec(0, kRecv, Pattern::LateSender, 8, 3, 22));
  const Result r = estimate(ranks, {"p"});
  EXPECT_EQ(waiting(r, "p", Pattern::LateSender, 0, Variant::Paper), 10 - 3 * 2);
  EXPECT_EQ(waiting(r, "p", Pattern::LateSender, 0, Variant::PerPeer), (5 - 2) + (2 - 2) + (3 - 3));
}

TEST(MinProfile, PercentileVariantSubtractsTheQuantileAndClampsAtZero) {
  std::vector<RankProfile> ranks(1, RankProfile(50));
  for (double d : {1.0, 2.0, 3.0, 4.0}) ranks[0].add(rec(0, kRecv, Pattern::LateSender, 8, d));
  const Result r = estimate(ranks, {"p"});
  // The median (2nd of 4) is 2 s: 10 − 4·2.
  EXPECT_EQ(waiting(r, "p", Pattern::LateSender, 0, Variant::Percentile), 2);
  EXPECT_EQ(variant_name(Variant::Percentile, 50), "p50");
  std::vector<RankProfile> one(1, RankProfile(90));
  for (double d : {1.0, 1.0, 1.0, 9.0}) one[0].add(rec(0, kRecv, Pattern::LateSender, 8, d));
  // The 90th percentile is 9 s: 12 − 4·9 < 0, clamped.
  EXPECT_EQ(waiting(estimate(one, {"p"}), "p", Pattern::LateSender, 0, Variant::Percentile), 0);
}

TEST(MinProfile, HistogramQuantilesAreExactAtBucketMinima) {
  Histogram h;
  for (double d : {8e-6, 1e-6, 4e-6, 2e-6, 1.05e-6}) h.add(d);
  EXPECT_EQ(h.count(), 5u);
  EXPECT_EQ(h.buckets(), 5u);
  EXPECT_EQ(h.quantile(0), 1e-6);    // the minimum, exactly
  EXPECT_EQ(h.quantile(20), 1e-6);   // 1st of 5
  EXPECT_EQ(h.quantile(40), 1.05e-6);
  EXPECT_EQ(h.quantile(60), 2e-6);
  EXPECT_EQ(h.quantile(100), 8e-6);
  Histogram g;
  g.add(5e-7);
  g.merge(h);
  EXPECT_EQ(g.count(), 6u);
  EXPECT_EQ(g.quantile(1), 5e-7);
  // Values within 1/32 octave (2.2 %) share a bucket: its quantiles are its smallest value.
  Histogram close;
  for (double d : {1.0, 1.01, 1.02}) close.add(d);
  EXPECT_EQ(close.buckets(), 1u);
  EXPECT_EQ(close.quantile(100), 1.0);
}

TEST(MinProfile, ExcludeTestedLeavesTestedCallsOutOfMinimumAndWaiting) {
  std::vector<RankProfile> ranks(1);
  ranks[0].add(rec(0, kRecv, Pattern::LateSender, 8, 1, 0, /*tested=*/true));
  ranks[0].add(rec(0, kRecv, Pattern::LateSender, 8, 4));
  ranks[0].add(rec(0, kRecv, Pattern::LateSender, 8, 6));
  const Result r = estimate(ranks, {"p"});
  EXPECT_EQ(waiting(r, "p", Pattern::LateSender, 0, Variant::Paper), 11 - 3 * 1);
  EXPECT_EQ(waiting(r, "p", Pattern::LateSender, 0, Variant::ExcludeTested), 10 - 2 * 4);
}

TEST(MinProfile, MemoryIsPerCategoryNotPerCall) {
  RankProfile p;
  for (int i = 0; i < 100000; ++i)
    p.add(rec(static_cast<std::uint32_t>(i % 3), kRecv, Pattern::LateSender, 8, 1.0 + (i % 7)));
  // 3 accumulators, 1 minimum, 1 per-peer minimum.
  EXPECT_EQ(p.categories(), 5u);
}

TEST(MinProfile, CsvAndJsonCarryEveryVariant) {
  std::vector<RankProfile> ranks(1);
  ranks[0].set_span(0, 10);
  for (double d : {1.0, 3.0}) ranks[0].add(rec(0, kRecv, Pattern::LateSender, 8, d));
  const Result r = estimate(ranks, {"main/MPI_Recv"});
  EXPECT_EQ(to_csv(r),
            "call_path,pattern,rank,calls,time_s,wait_paper_s,wait_per_peer_s,wait_p5_s,wait_exclude_tested_s\n"
            "main/MPI_Recv,late_sender,0,2,4,2,2,2,2\n");
  const std::string j = to_json(r, "test");
  EXPECT_NE(j.find("\"wait_ratio\": {\n        \"paper\": 0.2"), std::string::npos) << j;
}

}  // namespace
}  // namespace waitlab::minprofile

namespace waitlab::analysis {
namespace {

using minprofile::classify;
using minprofile::Pattern;
using minprofile::Variant;
using test::TraceBuilder;

TEST(MinProfileTrace, ClassifiesCallsAsAProfilerWould) {
  using trace::MpiOp;
  EXPECT_EQ(classify(MpiOp::Recv, false, true, false), Pattern::LateSender);
  EXPECT_EQ(classify(MpiOp::Send, false, false, true), Pattern::LateReceiver);
  EXPECT_EQ(classify(MpiOp::Waitall, false, true, true), Pattern::LateSender);
  EXPECT_EQ(classify(MpiOp::Wait, false, false, true), Pattern::LateReceiver);
  EXPECT_EQ(classify(MpiOp::Isend, false, false, true), Pattern::None);
  EXPECT_EQ(classify(MpiOp::Allreduce, false, false, false), Pattern::WaitAtNxN);
  EXPECT_EQ(classify(MpiOp::Barrier, false, false, false), Pattern::WaitAtBarrier);
  EXPECT_EQ(classify(MpiOp::Bcast, true, false, false), Pattern::None);
  EXPECT_EQ(classify(MpiOp::Bcast, false, false, false), Pattern::LateBroadcast);
  EXPECT_EQ(classify(MpiOp::Reduce, true, false, false), Pattern::EarlyReduce);
  EXPECT_EQ(classify(MpiOp::Reduce, false, false, false), Pattern::None);
  EXPECT_EQ(classify(MpiOp::Finalize, false, false, false), Pattern::None);
}

// Two ranks, two iterations of send/recv, in seconds: rank 1's receives last 3.5 s (the
// sender is 3 s late) and 0.5 s; rank 0's sends last 0 s.
TEST(MinProfileTrace, EstimatesFromTheTraceOfAPingLoop) {
  TraceBuilder b(2, 1.0);
  for (trace::Rank r : {0, 1}) b.call(r, trace::MpiOp::Init, 0, 0);
  b.send(0, 3, 3, 1);
  b.recv(1, 0, 3.5, 3.5, 0);
  b.send(0, 4, 4, 1);
  b.recv(1, 3.8, 4.3, 4.3, 0);
  for (trace::Rank r : {0, 1}) b.call(r, trace::MpiOp::Finalize, 5, 5);
  const auto& t = b.trace();
  const auto m = trace::Matching::build(t);
  const auto r = minprofile_estimate(t, m);
  ASSERT_EQ(r.ranks, 2u);
  EXPECT_EQ(r.wall_time, 5);
  double recv = NAN, send = NAN;
  for (const auto& tot : r.totals()) {
    const double w = tot.waiting[static_cast<std::size_t>(Variant::Paper)];
    if (tot.pattern == Pattern::LateSender) recv = w;
    if (tot.pattern == Pattern::LateReceiver) send = w;
  }
  EXPECT_DOUBLE_EQ(recv, 3.5 + 0.5 - 2 * 0.5);
  EXPECT_EQ(send, 0);
  EXPECT_FALSE(r.computed[static_cast<std::size_t>(Variant::ExcludeTested)]);  // no test flags
}

}  // namespace
}  // namespace waitlab::analysis
