// Sharded matching's promise as a check on any transport (the virtual one in
// test_shard_matching.cpp, MPI's in mpi/test_mpi_transport.cpp): a shard matched by
// match_shard carries, for its owned locations, what Matching::build gives on the whole trace
// (analysis/engine/shard_matching.hpp); and the random traces the tests match.
#pragma once

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/engine/shard.hpp"
#include "analysis/engine/shard_matching.hpp"
#include "processes.hpp"

namespace waitlab::engine::shard_checks {

using trace::EventKind;
using trace::make_event;
using trace::MpiOp;

// One MPI call of `op` at time t: its Enter, the events inside, its Leave.
inline void mpi_call(trace::Trace& tr, trace::Location& loc, double& t, MpiOp op, const std::vector<trace::Event>& inside) {
  const trace::RegionId region = tr.defs.mpi_region(op);
  loc.events.push_back(make_event(t += 1, EventKind::Enter, MpiOp::None, region));
  for (trace::Event e : inside) {
    e.time = t += 1;
    loc.events.push_back(e);
  }
  loc.events.push_back(make_event(t += 1, EventKind::Leave, MpiOp::None, region));
}

// A trace of `locations` ranks whose regions, calls and messages come from `seed`: each
// location meets the regions in its own order, so the call-path ids depend on location order.
inline trace::Trace random_trace(trace::Rank locations, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<std::uint64_t>(n)); };
  trace::Trace tr;
  std::vector<trace::Rank> world;
  for (trace::Rank r = 0; r < locations; ++r) world.push_back(r);
  tr.defs.comms = {{"MPI_COMM_WORLD", world}};
  const std::vector<trace::RegionId> user = {tr.defs.region("main"), tr.defs.region("solve"),
                                             tr.defs.region("halo"), tr.defs.region("pack")};
  for (trace::Rank r = 0; r < locations; ++r) {
    trace::Location loc;
    loc.rank = r;
    double t = 0;
    std::vector<trace::RegionId> open;
    if (pick(4) != 0) mpi_call(tr, loc, t, MpiOp::Init, {});
    for (int step = 0, steps = 10 + pick(30); step < steps; ++step) {
      const trace::Rank peer = static_cast<trace::Rank>(pick(static_cast<int>(locations) + 1));  // L: no location
      const int tag = pick(2);
      switch (pick(8)) {
        case 0:
        case 1:
          if (open.size() < 4) {
            open.push_back(user[static_cast<std::size_t>(pick(4))]);
            loc.events.push_back(make_event(t += 1, EventKind::Enter, MpiOp::None, open.back()));
          }
          break;
        case 2:
          if (!open.empty()) {
            loc.events.push_back(make_event(t += 1, EventKind::Leave, MpiOp::None, open.back()));
            open.pop_back();
          }
          break;
        case 3:
          mpi_call(tr, loc, t, MpiOp::Send, {make_event(0, EventKind::Send, MpiOp::None, 0, peer, tag, 8)});
          break;
        case 4:
          mpi_call(tr, loc, t, MpiOp::Recv, {make_event(0, EventKind::Recv, MpiOp::None, 0, peer, tag, 8)});
          break;
        case 5: {
          const std::uint64_t request = static_cast<std::uint64_t>(step) + 1;
          mpi_call(tr, loc, t, MpiOp::Isend,
                   {make_event(0, EventKind::IsendStart, MpiOp::None, 0, peer, tag, 8, request)});
          if (pick(3) != 0)
            mpi_call(tr, loc, t, MpiOp::Wait,
                     {make_event(0, EventKind::IsendComplete, MpiOp::None, 0, trace::kNoRank, 0, 0, request)});
          break;
        }
        case 6: {
          const std::uint64_t request = static_cast<std::uint64_t>(step) + 1000;
          mpi_call(tr, loc, t, MpiOp::Irecv, {make_event(0, EventKind::IrecvPost, MpiOp::None, 0, peer, tag, 0, request)});
          mpi_call(tr, loc, t, MpiOp::Wait,
                   {make_event(0, EventKind::IrecvComplete, MpiOp::None, 0, peer, tag, 8, request)});
          break;
        }
        default:
          mpi_call(tr, loc, t, MpiOp::Allreduce,
                   {make_event(0, EventKind::CollBegin, MpiOp::Allreduce, 0),
                    make_event(0, EventKind::CollEnd, MpiOp::Allreduce, 0, trace::kNoRank, 0, 8, 8)});
      }
    }
    if (pick(3) == 0) {  // an MPI call the trace ends inside
      loc.events.push_back(make_event(t += 1, EventKind::Enter, MpiOp::None, tr.defs.mpi_region(MpiOp::Barrier)));
    } else if (pick(2) == 0) {
      mpi_call(tr, loc, t, MpiOp::Finalize, {});
    }
    while (!open.empty() && pick(2) == 0) {
      loc.events.push_back(make_event(t += 1, EventKind::Leave, MpiOp::None, open.back()));
      open.pop_back();
    }
    tr.locations.push_back(std::move(loc));
  }
  return tr;
}

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
