// Wait states on the replay engine (analysis/waitstate, issue 32 step 3): on every number of
// processes and delivery order, each shard's instances are the serial ones of the ranks it owns
// (pattern, value, cause — to the bit), its table rows are the serial rows of those ranks, and
// the totals, counts, maxima, wall time and ratio are the serial ones to the bit, on random traces
// (every pattern, ties included), ALGORITHMS.md's Fixture A and the Score-P test traces.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "../analysis/trace_builder.hpp"
#include "analysis/engine/shard.hpp"
#include "analysis/engine/shard_matching.hpp"
#include "analysis/trace/trace_io.hpp"
#include "analysis/waitstate/waitstate.hpp"
#include "processes.hpp"
#include "random_trace.hpp"

namespace waitlab::engine {
namespace {

using analysis::WaitStateResult;

auto fields(const analysis::WaitState& w) {
  return std::tuple(w.rank, w.call, w.pattern, bits(w.seconds), w.cause_rank, w.cause_call);
}
auto fields(const analysis::WaitEntry& e) {
  return std::tuple(e.pattern, e.path, e.rank, bits(e.seconds), e.count);
}

void expect_as_serial(const Shard& shard, const WaitStateResult& mine, const WaitStateResult& all,
                      const std::string& where) {
  std::vector<analysis::WaitState> owned;
  for (const auto& w : all.instances)
    if (shard.owned.holds(w.rank)) owned.push_back(w);
  ASSERT_EQ(mine.instances.size(), owned.size()) << where;
  for (std::size_t i = 0; i < owned.size(); ++i)
    EXPECT_EQ(fields(mine.instances[i]), fields(owned[i])) << where << ", instance " << i;
  ASSERT_EQ(mine.rank_first.size(), all.rank_first.size()) << where;
  for (Location l = shard.owned.first; l < shard.owned.last; ++l) {
    const auto r = static_cast<std::size_t>(l);
    EXPECT_EQ(mine.rank_first[r + 1] - mine.rank_first[r], all.rank_first[r + 1] - all.rank_first[r]) << where;
  }
  std::vector<analysis::WaitEntry> rows;
  for (const auto& e : all.table)
    if (shard.owned.holds(e.rank)) rows.push_back(e);
  ASSERT_EQ(mine.table.size(), rows.size()) << where;
  for (std::size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(fields(mine.table[i]), fields(rows[i])) << where;
  for (std::size_t p = 0; p < analysis::kPatternCount; ++p) {
    EXPECT_EQ(bits(mine.total[p]), bits(all.total[p])) << where << ", pattern " << p;
    EXPECT_EQ(mine.count[p], all.count[p]) << where << ", pattern " << p;
    EXPECT_EQ(bits(mine.max[p]), bits(all.max[p])) << where << ", pattern " << p;
  }
  EXPECT_EQ(bits(mine.total_waiting), bits(all.total_waiting)) << where;
  EXPECT_EQ(bits(mine.wall_time), bits(all.wall_time)) << where;
  EXPECT_EQ(bits(mine.wait_ratio), bits(all.wait_ratio)) << where;
  EXPECT_EQ(mine.ranks, all.ranks) << where;
}

// The serial result of the trace; every sharded run checked against it.
WaitStateResult expect_sharded_as_serial(const trace::Trace& tr, const std::string& name) {
  const trace::Matching matching = trace::Matching::build(tr);
  const WaitStateResult serial = analysis::wait_states(tr, matching);
  const auto counts = event_counts(tr);
  const auto check = [&](Transport& t, const std::string& where) {
    Shard shard = Shard::of(tr, Partition::balanced(counts, t.size()), t.self());
    match_shard(shard, t);
    expect_as_serial(shard, analysis::wait_states(shard, shard.matching, t), serial, name + ", " + where);
  };
  on_every_world(check);
  on_virtual(static_cast<int>(tr.ranks()) + 1, 5, [&](Transport& t) {
    check(t, "L + 1 processes");
    return Bytes{};
  });
  return serial;
}

TEST(ShardWaitStates, RandomTracesHaveTheSerialWaitStatesToTheBit) {
  std::array<std::uint64_t, analysis::kPatternCount> seen{};
  for (std::uint64_t seed : {1u, 2u, 3u, 99u, 123u})
    for (trace::Rank locations : {2, 5, 9}) {
      const WaitStateResult serial = expect_sharded_as_serial(
          random_trace(locations, seed), std::to_string(locations) + " locations, trace seed " + std::to_string(seed));
      for (std::size_t p = 0; p < seen.size(); ++p) seen[p] += serial.count[p];
    }
  // The traces hold instances of the patterns the random calls can make.
  for (analysis::Pattern p : {analysis::Pattern::LateSender, analysis::Pattern::LateReceiver,
                              analysis::Pattern::WaitAtNxN, analysis::Pattern::NxNCompletion,
                              analysis::Pattern::LateBroadcast, analysis::Pattern::EarlyReduce,
                              analysis::Pattern::EarlyScan, analysis::Pattern::WaitAtBarrier,
                              analysis::Pattern::WaitAtInit, analysis::Pattern::WaitAtFinalize})
    EXPECT_GT(seen[static_cast<std::size_t>(p)], 0u) << analysis::pattern_name(p);
}

TEST(ShardWaitStates, FixtureAHasItsWorkedValuesOnEveryProcessCount) {
  const trace::Trace tr = analysis::test::fixture_a().trace();
  const WaitStateResult serial = expect_sharded_as_serial(tr, "Fixture A");
  EXPECT_EQ(serial.instances.size(), 8u);  // ALGORITHMS.md §2
  EXPECT_NEAR(serial.total[static_cast<std::size_t>(analysis::Pattern::LateSender)], 1400e-6, 1e-12);
}

TEST(ShardWaitStates, ScorePTracesHaveTheSerialWaitStatesToTheBit) {
  const std::filesystem::path data = std::filesystem::path(WAITLAB_SOURCE_DIR) / "tests/data/scorep";
  for (const char* name : {"ping-pong-otf2", "npb-is.W.16", "npb-mg.W.16"}) {
    const trace::Trace tr = trace::read_trace((data / name / "traces.otf2").string());
    EXPECT_GT(expect_sharded_as_serial(tr, name).instances.size(), 0u) << name;
  }
}

}  // namespace
}  // namespace waitlab::engine
