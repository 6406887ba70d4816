// Delay costs on the replay engine (analysis/delay, issue 32 step 4): on every number of processes
// and delivery order, each shard's classes are the serial ones of the wait states it owns, its
// table rows are the serial rows of the delaying ranks it owns, and the totals — short- and
// long-term per kind, unattributed, synchronisation waiting, direct/indirect/propagating/terminal
// — and the number of points are the serial ones to the bit, on random traces, ALGORITHMS.md's
// Fixture A, a row/column grid and the Score-P test traces. The backward replay of γ_long runs
// with parcels delivered in shuffled orders.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "../analysis/grid_trace.hpp"
#include "../analysis/trace_builder.hpp"
#include "analysis/delay/delay.hpp"
#include "analysis/engine/shard.hpp"
#include "analysis/engine/shard_matching.hpp"
#include "analysis/trace/trace_io.hpp"
#include "processes.hpp"
#include "random_trace.hpp"

namespace waitlab::engine {
namespace {

using analysis::DelayResult;

auto fields(const analysis::DelayEntry& e) {
  return std::tuple(e.kind, e.path, e.rank, bits(e.short_term), bits(e.long_term));
}
auto fields(const analysis::WaitClass& c) {
  return std::tuple(bits(c.direct), bits(c.indirect), bits(c.propagating), bits(c.terminal), bits(c.gamma_long));
}

void expect_as_serial(const Shard& shard, const analysis::WaitStateResult& waits, const DelayResult& mine,
                      const analysis::WaitStateResult& all_waits, const DelayResult& all, const std::string& where) {
  // The classes of the owned instances: the serial classes of those instances, in order.
  std::vector<analysis::WaitClass> owned;
  for (std::size_t i = 0; i < all_waits.instances.size(); ++i)
    if (shard.owned.holds(all_waits.instances[i].rank)) owned.push_back(all.classes[i]);
  ASSERT_EQ(mine.classes.size(), waits.instances.size()) << where;
  ASSERT_EQ(mine.classes.size(), owned.size()) << where;
  for (std::size_t i = 0; i < owned.size(); ++i) EXPECT_EQ(fields(mine.classes[i]), fields(owned[i])) << where << ", " << i;
  std::vector<analysis::DelayEntry> rows;
  for (const auto& e : all.table)
    if (shard.owned.holds(e.rank)) rows.push_back(e);
  ASSERT_EQ(mine.table.size(), rows.size()) << where;
  for (std::size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(fields(mine.table[i]), fields(rows[i])) << where << ", row " << i;
  for (std::size_t k = 0; k < analysis::kDelayKindCount; ++k) {
    EXPECT_EQ(bits(mine.short_total[k]), bits(all.short_total[k])) << where << ", kind " << k;
    EXPECT_EQ(bits(mine.long_total[k]), bits(all.long_total[k])) << where << ", kind " << k;
  }
  EXPECT_EQ(bits(mine.short_term), bits(all.short_term)) << where;
  EXPECT_EQ(bits(mine.long_term), bits(all.long_term)) << where;
  EXPECT_EQ(bits(mine.unattributed), bits(all.unattributed)) << where;
  EXPECT_EQ(bits(mine.sync_waiting), bits(all.sync_waiting)) << where;
  EXPECT_EQ(bits(mine.direct), bits(all.direct)) << where;
  EXPECT_EQ(bits(mine.indirect), bits(all.indirect)) << where;
  EXPECT_EQ(bits(mine.propagating), bits(all.propagating)) << where;
  EXPECT_EQ(bits(mine.terminal), bits(all.terminal)) << where;
  EXPECT_EQ(mine.sync_points, all.sync_points) << where;
  EXPECT_EQ(bits(mine.scalasca_collective_long_term_lost), bits(all.scalasca_collective_long_term_lost)) << where;
  EXPECT_EQ(bits(mine.scalasca_late_receiver_at_stake), bits(all.scalasca_late_receiver_at_stake)) << where;
}

DelayResult expect_sharded_as_serial(const trace::Trace& tr, const std::string& name) {
  const trace::Matching matching = trace::Matching::build(tr);
  const analysis::WaitStateResult waits = analysis::wait_states(tr, matching);
  const DelayResult serial = analysis::delay_costs(tr, matching, waits);
  const auto counts = event_counts(tr);
  const auto check = [&](Transport& t, const std::string& where) {
    Shard shard = Shard::of(tr, Partition::balanced(counts, t.size()), t.self());
    match_shard(shard, t);
    const analysis::WaitStateResult mine = analysis::wait_states(shard, shard.matching, t);
    expect_as_serial(shard, mine, analysis::delay_costs(shard, shard.matching, mine, t), waits, serial,
                     name + ", " + where);
  };
  on_every_world(check);
  on_virtual(static_cast<int>(tr.ranks()) + 1, 5, [&](Transport& t) {
    check(t, "L + 1 processes");
    return Bytes{};
  });
  return serial;
}

TEST(ShardDelay, RandomTracesHaveTheSerialDelayCostsToTheBit) {
  double long_term = 0, unattributed = 0, lost = 0;
  std::uint64_t points = 0;
  for (std::uint64_t seed : {1u, 2u, 3u, 99u, 123u})
    for (trace::Rank locations : {2, 5, 9}) {
      const DelayResult serial = expect_sharded_as_serial(
          random_trace(locations, seed), std::to_string(locations) + " locations, trace seed " + std::to_string(seed));
      long_term += serial.long_term;
      unattributed += serial.unattributed;
      points += serial.sync_points;
      lost += serial.scalasca_collective_long_term_lost;
    }
  // The traces exercise every pass: points, propagation to long-term costs, unattributed waiting.
  EXPECT_GT(points, 50u);
  EXPECT_GT(long_term, 0.0);
  EXPECT_GT(unattributed, 0.0);
  EXPECT_GT(lost, 0.0);  // and Scalasca's collective defect (its Late Receiver one: below)
}

TEST(ShardDelay, FixtureAAndAGridHaveTheSerialDelayCosts) {
  expect_sharded_as_serial(analysis::test::fixture_a().trace(), "Fixture A");
  const DelayResult grid = expect_sharded_as_serial(test::grid::row_column_trace(), "row/column grid");
  EXPECT_GT(grid.sync_points, 0u);
}

TEST(ShardDelay, ScorePTracesHaveTheSerialDelayCostsToTheBit) {
  const std::filesystem::path data = std::filesystem::path(WAITLAB_SOURCE_DIR) / "tests/data/scorep";
  double at_stake = 0;
  for (const char* name : {"ping-pong-otf2", "npb-is.W.16", "npb-mg.W.16"}) {
    const trace::Trace tr = trace::read_trace((data / name / "traces.otf2").string());
    const DelayResult serial = expect_sharded_as_serial(tr, name);
    EXPECT_GT(serial.sync_points, 0u) << name;
    at_stake += serial.scalasca_late_receiver_at_stake;
  }
  EXPECT_GT(at_stake, 0.0);  // MG's Late Receivers
}

}  // namespace
}  // namespace waitlab::engine
