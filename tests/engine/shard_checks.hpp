// Sharded matching's promise as a check on any transport (the virtual one in
// test_shard_matching.cpp, MPI's in mpi/test_mpi_transport.cpp): a shard matched by
// match_shard carries, for its owned locations, what Matching::build gives on the whole trace
// (analysis/engine/shard_matching.hpp), collectives included; the random traces are
// random_trace.hpp's.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "analysis/engine/shard.hpp"
#include "analysis/engine/shard_matching.hpp"
#include "processes.hpp"
#include "random_trace.hpp"

namespace waitlab::engine::shard_checks {

using engine::random_trace;

// Each owned location of the matched shard against the serial matching of the whole trace.
inline void expect_as_serial(const Shard& shard, const trace::Matching& serial, const std::string& where) {
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

// This process's shard of `tr` under a balanced partition, matched, against `serial`
// (Matching::build of tr); returns the number of locations it owns.
inline Location expect_shard_as_serial(Transport& t, const trace::Trace& tr, const trace::Matching& serial,
                                       const std::string& where) {
  Shard shard = Shard::of(tr, Partition::balanced(event_counts(tr), t.size()), t.self());
  match_shard(shard, t);
  expect_as_serial(shard, serial, where);
  return shard.owned.size();
}

}  // namespace waitlab::engine::shard_checks
