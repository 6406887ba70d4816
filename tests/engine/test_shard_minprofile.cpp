// The minimum-duration estimator on the replay engine (analysis/minprofile, issue 32 step 6): on
// every number of processes and delivery order, process 0's result is the serial one to the bit
// — every row (call path, pattern, rank, calls, time, the four variants' waiting), the call-path
// names, the wall and rank times, the variants computed, minprofile.csv and minprofile.json — and
// every other process's is empty, on random traces (with calls a test at entry found complete,
// and without), ALGORITHMS.md's Fixture A, a row/column grid and the Score-P test traces.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "../analysis/grid_trace.hpp"
#include "../analysis/trace_builder.hpp"
#include "analysis/engine/shard.hpp"
#include "analysis/engine/shard_matching.hpp"
#include "analysis/minprofile/minprofile.hpp"
#include "analysis/trace/trace_io.hpp"
#include "processes.hpp"
#include "random_trace.hpp"

namespace waitlab::engine {
namespace {

using minprofile::Result;

auto fields(const minprofile::Row& r) {
  std::vector<std::uint64_t> waiting;
  for (const double w : r.waiting) waiting.push_back(bits(w));
  return std::tuple(r.path, r.pattern, r.rank, r.calls, bits(r.time), waiting);
}

void expect_as_serial(const Result& mine, const Result& all, const std::string& where) {
  EXPECT_EQ(bits(mine.percentile), bits(all.percentile)) << where;
  EXPECT_EQ(mine.computed, all.computed) << where;
  EXPECT_EQ(mine.ranks, all.ranks) << where;
  EXPECT_EQ(bits(mine.wall_time), bits(all.wall_time)) << where;
  ASSERT_EQ(mine.rank_time.size(), all.rank_time.size()) << where;
  for (std::size_t r = 0; r < all.rank_time.size(); ++r)
    EXPECT_EQ(bits(mine.rank_time[r]), bits(all.rank_time[r])) << where << ", rank " << r;
  EXPECT_EQ(mine.paths, all.paths) << where;
  ASSERT_EQ(mine.rows.size(), all.rows.size()) << where;
  for (std::size_t i = 0; i < all.rows.size(); ++i) EXPECT_EQ(fields(mine.rows[i]), fields(all.rows[i])) << where << ", row " << i;
  EXPECT_EQ(minprofile::to_csv(mine), minprofile::to_csv(all)) << where;
  EXPECT_EQ(minprofile::to_json(mine, "waitlab"), minprofile::to_json(all, "waitlab")) << where;
}

// The serial result of the trace; every sharded run checked against it.
Result expect_sharded_as_serial(const trace::Trace& tr, const std::string& name, double percentile = 5.0) {
  const Result serial = analysis::minprofile_estimate(tr, trace::Matching::build(tr), percentile);
  const auto counts = event_counts(tr);
  const auto check = [&](Transport& t, const std::string& where) {
    Shard shard = Shard::of(tr, Partition::balanced(counts, t.size()), t.self());
    match_shard(shard, t);
    const Result mine = analysis::minprofile_estimate(shard, shard.matching, t, percentile);
    if (t.self() == 0) {
      expect_as_serial(mine, serial, name + ", " + where);
    } else {
      EXPECT_TRUE(mine.rows.empty() && mine.paths.empty() && mine.ranks == 0) << name << ", " << where;
    }
  };
  on_every_world(check);
  on_virtual(static_cast<int>(tr.ranks()) + 1, 5, [&](Transport& t) {
    check(t, "L + 1 processes");
    return Bytes{};
  });
  return serial;
}

// Every Enter of a wait call on odd ranks found complete by a test at entry (what a simulated run
// with run.minprofile marks), and the attribute that says so.
trace::Trace with_tested_waits(trace::Trace tr) {
  tr.set_attribute(analysis::kTestedAttribute, "1");
  for (trace::Location& loc : tr.locations)
    for (trace::Event& e : loc.events)
      if (loc.rank % 2 == 1 && e.kind == EventKind::Enter && e.ref == tr.defs.mpi_region(MpiOp::Wait))
        e.flags |= trace::kTestedComplete;
  return tr;
}

TEST(ShardMinProfile, RandomTracesHaveTheSerialEstimateToTheBit) {
  std::size_t rows = 0, tested = 0;
  for (std::uint64_t seed : {1u, 2u, 3u, 99u, 123u})
    for (trace::Rank locations : {2, 5, 9}) {
      const std::string name = std::to_string(locations) + " locations, trace seed " + std::to_string(seed);
      rows += expect_sharded_as_serial(random_trace(locations, seed), name).rows.size();
      const Result r = expect_sharded_as_serial(with_tested_waits(random_trace(locations, seed)), name + ", tested",
                                                seed == 2 ? 50.0 : 5.0);
      tested += r.computed[static_cast<std::size_t>(minprofile::Variant::ExcludeTested)] ? 1 : 0;
    }
  EXPECT_GT(rows, 100u);  // the traces hold calls of every pattern the estimator knows
  EXPECT_EQ(tested, 15u);
}

TEST(ShardMinProfile, FixtureAAndAGridHaveTheSerialEstimate) {
  EXPECT_GT(expect_sharded_as_serial(analysis::test::fixture_a().trace(), "Fixture A").rows.size(), 0u);
  EXPECT_GT(expect_sharded_as_serial(test::grid::row_column_trace(), "row/column grid").rows.size(), 0u);
}

TEST(ShardMinProfile, ScorePTracesHaveTheSerialEstimateToTheBit) {
  const std::filesystem::path data = std::filesystem::path(WAITLAB_SOURCE_DIR) / "tests/data/scorep";
  for (const char* name : {"ping-pong-otf2", "npb-is.W.16", "npb-mg.W.16"}) {
    const trace::Trace tr = trace::read_trace((data / name / "traces.otf2").string());
    EXPECT_GT(expect_sharded_as_serial(tr, name).rows.size(), 0u) << name;
  }
}

}  // namespace
}  // namespace waitlab::engine
