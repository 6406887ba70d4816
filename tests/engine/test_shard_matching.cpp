// Sharded matching (analysis/engine/shard_matching.hpp): on every number of processes and
// delivery order, each shard's owned locations carry the same calls and call paths after every
// event — with the same global call-path ids and names — as Matching::build on the whole trace,
// each shard has the messages its locations send or receive in the serial order, and the
// unmatched totals are the serial ones, each shard has every collective instance with the members
// it owns,
// for random traces (nested user regions, point-to-point and collective calls, regions and MPI
// calls left open) and for the Score-P test traces. And Shard::of: the owned locations, their
// threads and the global parts.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/engine/shard.hpp"
#include "analysis/engine/shard_matching.hpp"
#include "analysis/trace/trace_io.hpp"
#include "processes.hpp"
#include "random_trace.hpp"

namespace waitlab::engine {
namespace {

// Each owned location of the matched shard against the serial matching of the whole trace.
void expect_as_serial(const Shard& shard, const trace::Matching& serial, const std::string& where) {
  const trace::Matching& m = shard.matching;
  ASSERT_EQ(m.paths.size(), serial.paths.size()) << where;
  for (trace::CallPathId id = 0; id < serial.paths.size(); ++id) {
    EXPECT_EQ(m.paths.node(id).parent, serial.paths.node(id).parent) << where << ", path " << id;
    EXPECT_EQ(m.paths.node(id).region, serial.paths.node(id).region) << where << ", path " << id;
    EXPECT_EQ(m.paths.name(id, shard.defs), serial.paths.name(id, shard.defs)) << where;
  }
  ASSERT_EQ(m.calls.size(), serial.calls.size()) << where;
  for (Location l = 0; l < shard.ranks; ++l) {
    const auto i = static_cast<std::size_t>(l);
    if (!shard.owned.holds(l)) {
      EXPECT_TRUE(m.calls[i].empty() && m.path_after[i].empty()) << where << ", location " << l;
      continue;
    }
    EXPECT_EQ(m.path_after[i], serial.path_after[i]) << where << ", location " << l;
    ASSERT_EQ(m.calls[i].size(), serial.calls[i].size()) << where << ", location " << l;
    for (std::size_t c = 0; c < serial.calls[i].size(); ++c) {
      EXPECT_EQ(m.calls[i][c].enter, serial.calls[i][c].enter) << where << ", location " << l;
      EXPECT_EQ(m.calls[i][c].leave, serial.calls[i][c].leave) << where << ", location " << l;
      EXPECT_EQ(m.calls[i][c].path, serial.calls[i][c].path) << where << ", location " << l;
      EXPECT_EQ(m.calls[i][c].op, serial.calls[i][c].op) << where << ", location " << l;
    }
  }
  std::vector<trace::Message> expected;
  for (const trace::Message& msg : serial.messages)
    if (shard.owned.holds(msg.sender) || shard.owned.holds(msg.receiver)) expected.push_back(msg);
  ASSERT_EQ(m.messages.size(), expected.size()) << where;
  const auto fields = [](const trace::Message& x) {
    return std::tuple(x.sender, x.receiver, x.send_call, x.send_done_call, x.recv_post_call, x.recv_done_call,
                      x.send_event, x.recv_event);
  };
  for (std::size_t k = 0; k < expected.size(); ++k)
    EXPECT_EQ(fields(m.messages[k]), fields(expected[k])) << where << ", message " << k;
  EXPECT_EQ(m.unmatched.sends, serial.unmatched.sends) << where;
  EXPECT_EQ(m.unmatched.receives, serial.unmatched.receives) << where;
  EXPECT_EQ(m.unmatched.requests, serial.unmatched.requests) << where;
  EXPECT_EQ(m.unmatched.unbalanced_regions, serial.unmatched.unbalanced_regions) << where;
  EXPECT_EQ(m.unmatched.stray_events, serial.unmatched.stray_events) << where;
  EXPECT_EQ(m.unmatched.collective_calls, serial.unmatched.collective_calls) << where;
  // Every instance, with the members this shard owns, in communicator order.
  ASSERT_EQ(m.collectives.size(), serial.collectives.size()) << where;
  for (std::size_t k = 0; k < serial.collectives.size(); ++k) {
    const trace::CollInstance& mine = m.collectives[k];
    const trace::CollInstance& all = serial.collectives[k];
    EXPECT_EQ(std::tuple(mine.comm, mine.op, mine.root), std::tuple(all.comm, all.op, all.root)) << where;
    std::vector<trace::CollMember> owned;
    for (std::uint32_t i = all.first; i < all.first + all.count; ++i)
      if (shard.owned.holds(serial.members[i].rank)) owned.push_back(serial.members[i]);
    ASSERT_EQ(mine.count, owned.size()) << where << ", instance " << k;
    for (std::uint32_t i = 0; i < mine.count; ++i) {
      const trace::CollMember& a = m.members[mine.first + i];
      const trace::CollMember& b = owned[i];
      EXPECT_EQ(std::tuple(a.rank, a.call, a.begin, a.end, a.begin_event, a.end_event),
                std::tuple(b.rank, b.call, b.begin, b.end, b.begin_event, b.end_event))
          << where << ", instance " << k;
    }
  }
}

// The trace matched on every number of processes and seed, each shard against the serial build;
// returns the serial matching's message count.
std::size_t expect_sharded_as_serial(const trace::Trace& tr, const std::string& name) {
  const trace::Matching serial = trace::Matching::build(tr);
  const auto counts = event_counts(tr);
  const auto check = [&](Transport& t, const std::string& where) {
    Shard shard = Shard::of(tr, Partition::balanced(counts, t.size()), t.self());
    match_shard(shard, t);
    expect_as_serial(shard, serial, name + ", " + where);
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
