// Sharded matching (analysis/engine/shard_matching.hpp): on every number of processes and
// delivery order, each shard's owned locations carry the same calls and call paths after every
// event — with the same global call-path ids and names — as Matching::build on the whole trace,
// each shard has the messages its locations send or receive in the serial order, the
// unmatched totals are the serial ones, each shard has every collective instance with the members
// it owns,
// for random traces (nested user regions, point-to-point and collective calls, regions and MPI
// calls left open) and for the Score-P test traces. And Shard::of: the owned locations, their
// threads and the global parts.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/engine/shard.hpp"
#include "analysis/engine/shard_matching.hpp"
#include "analysis/trace/trace_io.hpp"
#include "processes.hpp"
#include "shard_checks.hpp"

namespace waitlab::engine {
namespace {

using namespace shard_checks;

// The trace matched on every number of processes and seed, each shard against the serial build;
// returns the serial matching's message count.
std::size_t expect_sharded_as_serial(const trace::Trace& tr, const std::string& name) {
  const trace::Matching serial = trace::Matching::build(tr);
  const auto check = [&](Transport& t, const std::string& where) {
    expect_shard_as_serial(t, tr, serial, name + ", " + where);
  };
  on_serial([&](Transport& t) {
    check(t, "serial");
    return Bytes{};
  });
  on_every_world(check);
  // More processes than locations: empty shards take part.
  on_virtual(static_cast<int>(tr.ranks()) + 1, 5, [&](Transport& t) {
    check(t, "L + 1 processes");
    return Bytes{};
  });
  return serial.messages.size();
}

TEST(ShardMatching, RandomTracesHaveTheSerialCallPathsCallsMessagesAndCollectives) {
  std::size_t messages = 0, instances = 0, left_over = 0, on_evens = 0;
  for (std::uint64_t seed : {1u, 2u, 3u, 99u})
    for (trace::Rank locations : {1, 5, 9}) {
      const trace::Trace tr = random_trace(locations, seed);
      messages += expect_sharded_as_serial(tr, std::to_string(locations) + " locations, trace seed " + std::to_string(seed));
      const trace::Matching serial = trace::Matching::build(tr);
      instances += serial.collectives.size();
      left_over += serial.unmatched.collective_calls;
      for (const trace::CollInstance& inst : serial.collectives) on_evens += inst.comm == 1 ? 1 : 0;
    }
  // The traces do match messages and collectives, on both communicators, and leave calls over.
  EXPECT_GT(messages, 40u);
  EXPECT_GT(instances, 20u);
  EXPECT_GT(on_evens, 0u);
  EXPECT_GT(left_over, 0u);
}

TEST(ShardMatching, ScorePTracesHaveTheSerialCallPathsCallsMessagesAndCollectives) {
  const std::filesystem::path data = std::filesystem::path(WAITLAB_SOURCE_DIR) / "tests/data/scorep";
  for (const char* name : {"ping-pong-otf2", "npb-is.W.16"}) {
    const trace::Trace tr = trace::read_trace((data / name / "traces.otf2").string());
    ASSERT_GT(tr.ranks(), 1u) << name;
    EXPECT_GT(expect_sharded_as_serial(tr, name), 0u) << name;
  }
}

// The clock correction matches a shard before the analyses match it again (waitlab-mpi analyze):
// a second matching replaces the first, and equals the serial one.
TEST(ShardMatching, MatchingAShardAgainGivesTheSameMatching) {
  const trace::Trace tr = random_trace(7, 5);
  const trace::Matching serial = trace::Matching::build(tr);
  on_every_world([&](Transport& t, const std::string& where) {
    Shard shard = Shard::of(tr, Partition::balanced(event_counts(tr), t.size()), t.self());
    match_shard(shard, t);
    match_shard(shard, t);
    expect_as_serial(shard, serial, "matched twice, " + where);
  });
}

TEST(Shard, OwnsItsRangeWithItsThreadsAndTheGlobalParts) {
  trace::Trace tr = random_trace(5, 7);
  tr.origin = trace::Origin::ScoreP;
  tr.set_attribute("scenario", "test");
  for (trace::Rank r : {1, 3, 3}) {
    trace::Location thread;
    thread.rank = r;
    thread.thread = static_cast<std::int32_t>(tr.threads.size()) + 1;
    tr.threads.push_back(thread);
  }
  const Partition partition = Partition::balanced(std::vector<std::uint64_t>{1, 1, 1, 1, 1}, 2);
  const Shard shard = Shard::of(tr, partition, 1);
  EXPECT_EQ(shard.owned, partition.range(1));
  EXPECT_EQ(shard.ranks, 5);
  EXPECT_EQ(&shard.defs, &tr.defs);
  ASSERT_EQ(shard.locations.size(), static_cast<std::size_t>(shard.owned.size()));
  for (Location l = shard.owned.first; l < shard.owned.last; ++l) EXPECT_EQ(shard.location(l), tr.locations[l]);
  EXPECT_THROW((void)shard.location(0), std::out_of_range);
  for (const trace::Location& t : shard.threads) EXPECT_TRUE(shard.owned.holds(t.rank));
  std::size_t owned_threads = 0;
  for (const trace::Location& t : tr.threads) owned_threads += shard.owned.holds(t.rank) ? 1 : 0;
  EXPECT_EQ(shard.threads.size(), owned_threads);
  EXPECT_EQ(shard.attributes, tr.attributes);
  EXPECT_EQ(shard.origin, trace::Origin::ScoreP);
  EXPECT_THROW((void)Shard::of(tr, Partition::balanced(std::vector<std::uint64_t>{1, 1}, 2), 0),
               std::invalid_argument);
}

}  // namespace
}  // namespace waitlab::engine
