// Sharded matching (analysis/engine/shard_matching.hpp): on every number of processes and
// delivery order, each shard's owned locations carry the same calls and call paths after every
// event — with the same global call-path ids and names — as Matching::build on the whole trace,
// each shard has the messages its locations send or receive in the serial order, and the
// unmatched totals (but the collective instances') are the serial ones,
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

namespace waitlab::engine {
namespace {

using trace::EventKind;
using trace::make_event;
using trace::MpiOp;

// One MPI call of `op` at time t: its Enter, the events inside, its Leave.
void mpi_call(trace::Trace& tr, trace::Location& loc, double& t, MpiOp op, const std::vector<trace::Event>& inside) {
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
trace::Trace random_trace(trace::Rank locations, std::uint64_t seed) {
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

TEST(ShardMatching, RandomTracesHaveTheSerialCallPathsCallsAndMessages) {
  std::size_t messages = 0;
  for (std::uint64_t seed : {1u, 2u, 3u, 99u})
    for (trace::Rank locations : {1, 5, 9})
      messages += expect_sharded_as_serial(random_trace(locations, seed),
                                           std::to_string(locations) + " locations, trace seed " + std::to_string(seed));
  EXPECT_GT(messages, 40u);  // the traces do match messages (49)
}

TEST(ShardMatching, ScorePTracesHaveTheSerialCallPathsCallsAndMessages) {
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
