// Clock correction on the replay engine (analysis/clock, issue 32 step 7): on every number of
// processes and delivery order, in every mode, each shard's owned events (and ground-truth
// intervals) get the times the one-process run (trace::correct_clocks) gives them, to the bit, and
// every process returns its ClockReport, field by field — on random traces with skewed clocks
// (offsets, drifts and a non-linear term per rank: violations of every kind, the linear map both
// helping and harming), on them with a corrupt matching's dependency cycle, and on the Score-P and
// Extrae test traces.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "analysis/trace/trace_io.hpp"
#include "clock_checks.hpp"
#include "random_trace.hpp"

namespace waitlab::engine {
namespace {

using clock_checks::skewed;
using trace::ClockOptions;
using trace::ClockReport;
using Mode = ClockOptions::Mode;

const std::vector<Mode> kModes = {Mode::Auto,  Mode::None,           Mode::Linear,
                                  Mode::Clamp, Mode::LinearAndClamp, Mode::Clc};

// The one-process result of each mode; every sharded run checked against it.
void expect_sharded_as_serial(const trace::Trace& tr, const std::string& name,
                              const std::vector<int>& processes, const std::vector<std::uint64_t>& seeds,
                              const ClockOptions& base = {}) {
  for (Mode mode : kModes) {
    ClockOptions options = base;
    options.mode = mode;
    trace::Trace serial = tr;
    const ClockReport expected = trace::correct_clocks(serial, options);
    const std::string what = name + ", mode " + trace::clock_mode_name(mode);
    const auto check = [&](Transport& t, const std::string& where) {
      clock_checks::expect_shard_as_serial(t, tr, serial, expected, options, what, where);
    };
    for (int p : processes)
      for (std::uint64_t seed : seeds)
        on_virtual(p, seed, [&](Transport& t) {
          check(t, std::to_string(p) + " processes, seed " + std::to_string(seed));
          return Bytes{};
        });
  }
}

std::vector<int> with_one_more(const trace::Trace& tr) {
  std::vector<int> p = kProcessCounts;
  p.push_back(static_cast<int>(tr.ranks()) + 1);
  return p;
}

TEST(ShardClock, SkewedRandomTracesAreCorrectedAsByOneProcessInEveryMode) {
  ClockReport seen;  // what the traces exercised, summed over them (mode Auto)
  std::uint64_t linear_applied = 0, linear_rejected = 0;
  for (std::uint64_t seed : {1u, 2u, 3u, 99u})
    for (trace::Rank locations : {2, 5, 9}) {
      const trace::Trace tr = skewed(random_trace(locations, seed), seed + 5, 1.0);
      expect_sharded_as_serial(tr,
                               std::to_string(locations) + " locations, trace seed " + std::to_string(seed),
                               with_one_more(tr), {1, 4242});
      trace::Trace copy = tr;
      const ClockReport rep = trace::correct_clocks(copy);
      seen.violations_before += rep.violations_before;
      seen.events_moved += rep.events_moved;
      (rep.ranks_linear > 0 ? linear_applied : linear_rejected) += rep.violations_before > 0 ? 1 : 0;
    }
  // The skew made violations, the clc moved events, and Auto both applied and rejected the map.
  EXPECT_GT(seen.violations_before, 0u);
  EXPECT_GT(seen.events_moved, 0u);
  EXPECT_GT(linear_applied, 0u);
  EXPECT_GT(linear_rejected, 0u);
}

TEST(ShardClock, ALatencyAndTheClcsOwnAreKeptAsByOneProcess) {
  ClockOptions options;
  options.min_latency = 0.25;
  options.clc_latency = 0.5;
  for (std::uint64_t seed : {7u, 8u}) {
    const trace::Trace tr = skewed(random_trace(6, seed), seed, 0.5);
    expect_sharded_as_serial(tr, "l_min 0.25, trace seed " + std::to_string(seed), {1, 2, 4, 7}, {3},
                             options);
  }
}

// Two ranks that each receive before they send, each receive matched with the other's later send:
// every rank waits for the other, and the cycle is broken at rank 0 on every process count.
TEST(ShardClock, ADependencyCycleIsBrokenAtTheSameRankOnEveryProcessCount) {
  trace::Trace tr;
  tr.defs.comms = {{"MPI_COMM_WORLD", {0, 1, 2}}};
  for (trace::Rank r = 0; r < 3; ++r) {
    trace::Location loc;
    loc.rank = r;
    double t = 10.0 * r;
    if (r < 2) {
      const trace::Rank peer = 1 - r;
      mpi_call(tr, loc, t, MpiOp::Recv, {make_event(0, EventKind::Recv, MpiOp::None, 0, peer, 0, 8)});
      mpi_call(tr, loc, t, MpiOp::Send, {make_event(0, EventKind::Send, MpiOp::None, 0, peer, 0, 8)});
    }
    mpi_call(tr, loc, t, MpiOp::Barrier,
             {make_event(0, EventKind::CollBegin, MpiOp::Barrier, 0),
              make_event(0, EventKind::CollEnd, MpiOp::Barrier, 0)});
    tr.locations.push_back(std::move(loc));
  }
  trace::Trace copy = tr;
  ClockOptions clamp;
  clamp.mode = Mode::Clamp;
  EXPECT_EQ(trace::correct_clocks(copy, clamp).constraints_dropped, 1u);
  expect_sharded_as_serial(tr, "cycle", with_one_more(tr), kSeeds);
}

TEST(ShardClock, ScorePAndExtraeTracesAreCorrectedAsByOneProcessInEveryMode) {
  const std::filesystem::path data = std::filesystem::path(WAITLAB_SOURCE_DIR) / "tests/data";
  for (const char* name : {"scorep/ping-pong-otf2/traces.otf2", "scorep/npb-is.W.16/traces.otf2",
                           "scorep/npb-mg.W.16/traces.otf2", "extrae/epoch_2proc.prv.gz"}) {
    const trace::Trace tr = trace::read_trace((data / name).string());
    expect_sharded_as_serial(tr, name, {1, 2, 3, 7, static_cast<int>(tr.ranks()) + 1}, {5});
  }
}

}  // namespace
}  // namespace waitlab::engine
