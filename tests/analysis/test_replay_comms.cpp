// Replaying collectives on sub-communicators (models/replay.hpp, docs/engine.md §5): a 2×2
// grid whose rows and columns are communicators, from OTF2 and from an Extrae-style Paraver
// trace. The replay runs each collective on its own group (a row that computed less does not
// wait for the other row, as it would on MPI_COMM_WORLD), ends at the hand-computed times,
// records each collective on its communicator, and the analyses of the replay see the same
// groups as those of the original: Wait at NxN per communicator, and its cause.
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "util/error.hpp"
#include "analysis/trace/otf2.hpp"
#include "analysis/trace/paraver.hpp"
#include "analysis/trace/ti.hpp"
#include "analysis/trace/wlt.hpp"
#include "analysis/waitstate/waitstate.hpp"
#include "grid_trace.hpp"
#include "models/replay.hpp"
#include "sim/engine.hpp"
#include "tests/temp_dir.hpp"

namespace waitlab::analysis {
namespace {

using models::Action;
using models::ActionKind;
using trace::EventKind;
using trace::MpiOp;
using trace::Rank;

using ReplayComms = ::waitlab::test::TempDirTest;

// Wait at NxN per communicator, keyed by its members (names differ between formats), and the
// rank each waiting rank waited for.
struct Nxn {
  std::map<std::vector<Rank>, double> by_group;
  std::map<Rank, Rank> cause;
};
Nxn nxn(const trace::Trace& t) {
  const auto m = trace::Matching::build(t);
  EXPECT_EQ(m.unmatched.total(), 0u);
  const auto w = wait_states(t, m);
  Nxn out;
  for (const auto& c : t.defs.comms) out.by_group[c.members] = 0;
  for (const auto& i : w.instances) {
    if (i.pattern != Pattern::WaitAtNxN) continue;
    const auto& call = m.calls[static_cast<std::size_t>(i.rank)][i.call];
    for (std::uint32_t k = call.enter; k <= call.leave; ++k) {
      const auto& e = t.locations[static_cast<std::size_t>(i.rank)].events[k];
      if (e.kind == EventKind::CollEnd) {
        out.by_group[t.defs.comms[e.ref].members] += i.seconds;
        break;
      }
    }
    out.cause[i.rank] = i.cause_rank;
  }
  return out;
}

void expect_grid_waits(const Nxn& n) {
  using V = std::vector<Rank>;
  ASSERT_EQ(n.by_group.size(), 5u);
  EXPECT_EQ(n.by_group.at(V{0, 1, 2, 3}), 0.0);
  EXPECT_EQ(n.by_group.at(V{0, 1}), 0.0);                               // row 0
  EXPECT_EQ(n.by_group.at(V{2, 3}), 0.0);                               // row 1: does not wait for row 0
  EXPECT_NEAR(n.by_group.at(V{0, 2}), test::grid::kColumnWait, 1e-12);  // rank 2 waits for rank 0
  EXPECT_NEAR(n.by_group.at(V{1, 3}), test::grid::kColumnWait, 1e-12);  // rank 3 for rank 1
  EXPECT_EQ(n.cause, (std::map<Rank, Rank>{{2, 0}, {3, 1}}));
}

// Simulates the replay of `t` on a flat cluster of 4 nodes, 1 GB/s and 1 µs links.
trace::Trace simulate_replay(const trace::Trace& t, models::ReplayReport* report = nullptr) {
  const auto w = models::replay_trace(t, "grid", {}, report);
  return sim::simulate(sim::test::cluster(4), *w, {}, sim::RunOptions{}).trace;
}

// The replay ends where the hand computation says (grid_trace.hpp), to the picosecond, and
// records every collective on its communicator, the bcast's root as a world rank.
void expect_grid_replay(const trace::Trace& r) {
  using sim::test::call;
  using sim::test::nth;
  const auto e = test::grid::expected();
  for (Rank k = 0; k < 4; ++k) {
    SCOPED_TRACE("rank " + std::to_string(k));
    EXPECT_NEAR(call(r, k, MpiOp::Allreduce, 0).second, e.row_allreduce_end[k < 2 ? 0 : 1], 1e-12);
    EXPECT_NEAR(call(r, k, MpiOp::Allreduce, 1).second, e.column_allreduce_end, 1e-12);
    EXPECT_NEAR(call(r, k, MpiOp::Bcast).second, e.bcast_end, 1e-12);
    EXPECT_NEAR(call(r, k, MpiOp::Finalize).first, e.finalize_enter, 1e-12);
    EXPECT_EQ(nth(r, k, EventKind::CollBegin, MpiOp::Allreduce, 0).ref, test::grid::row_of(k));
    EXPECT_EQ(nth(r, k, EventKind::CollEnd, MpiOp::Allreduce, 0).ref, test::grid::row_of(k));
    EXPECT_EQ(nth(r, k, EventKind::CollEnd, MpiOp::Allreduce, 1).ref, test::grid::column_of(k));
    const auto& b = nth(r, k, EventKind::CollEnd, MpiOp::Bcast);
    EXPECT_EQ(b.ref, test::grid::column_of(k));
    EXPECT_EQ(b.peer, k % 2 == 0 ? 2 : 3);
    EXPECT_EQ(b.bytes, k >= 2 ? 8u : 0u);
  }
  // Row 1 left its allreduce 900 µs − 2T before row 0 entered theirs (on MPI_COMM_WORLD it
  // could not leave before).
  EXPECT_NEAR(call(r, 0, MpiOp::Allreduce, 0).first - call(r, 2, MpiOp::Allreduce, 0).second,
              900e-6 - 2 * test::grid::hop(), 1e-12);
  EXPECT_NEAR(r.end_time(), e.finalize_enter, 1e-12);
}

TEST_F(ReplayComms, Otf2RowAndColumnCollectivesReplayOnTheirGroups) {
  const trace::Trace original = test::grid::row_column_trace();
  trace::write_otf2(original, (dir_ / "otf2").string());
  const trace::Trace read = trace::read_otf2((dir_ / "otf2" / "traces.otf2").string());
  ASSERT_EQ(read.defs.comms, original.defs.comms);  // OTF2 names the root in the column, the reader globally
  EXPECT_EQ(sim::test::nth(read, 0, EventKind::CollEnd, MpiOp::Bcast).peer, 2);

  models::ReplayReport report;
  const auto w = models::replay_trace(read, "grid", {}, &report);
  for (const auto& n : report.notes) EXPECT_EQ(n.find("communicator"), std::string::npos) << n;
  // The workload keeps the communicators, in the trace's order; rank 3 calls its row's and
  // its column's collectives, the bcast with root 1: world rank 3 is rank 1 of column 1.
  EXPECT_EQ(w->definitions().comms, original.defs.comms);
  std::vector<Action> colls;
  Action a;
  for (auto s = w->stream(3); s->next(a);)
    if (a.kind == ActionKind::Allreduce || a.kind == ActionKind::Bcast) colls.push_back(a);
  ASSERT_EQ(colls.size(), 3u);
  EXPECT_EQ(colls[0].bytes, 8u);  // Score-P's totals (2 × 8 sent and received) as the payload
  EXPECT_EQ(colls[1].bytes, 8u);
  EXPECT_EQ(colls[0].comm, test::grid::kRow1);
  EXPECT_EQ(colls[1].comm, test::grid::kCol1);
  EXPECT_EQ(colls[2].kind, ActionKind::Bcast);
  EXPECT_EQ(colls[2].comm, test::grid::kCol1);
  EXPECT_EQ(colls[2].root, 1);
  EXPECT_EQ(colls[2].bytes, 8u);

  const trace::Trace replayed = sim::simulate(sim::test::cluster(4), *w, {}, sim::RunOptions{}).trace;
  EXPECT_EQ(replayed.defs.comms, original.defs.comms);
  expect_grid_replay(replayed);
  // The original and its replay: the same waits on the same groups.
  expect_grid_waits(nxn(original));
  expect_grid_waits(nxn(replayed));
}

TEST_F(ReplayComms, ExtraeParaverTraceReplaysOnTheSameGroups) {
  // The same run as Extrae writes it: communicators as 'c:' lines after the header, each
  // collective's communicator id (50100004) and is-root flag (50100003) with its entry event.
  trace::ParaverReadStats st;
  const trace::Trace read =
      trace::read_paraver(std::string(WAITLAB_SOURCE_DIR) + "/tests/data/grid2x2_comms.prv", &st);
  EXPECT_EQ(st.unknown_communicators, 0u);
  EXPECT_EQ(read.origin, trace::Origin::Extrae);
  ASSERT_EQ(read.defs.comms.size(), 5u);
  const auto original = test::grid::row_column_trace();
  for (std::size_t c = 0; c < 5; ++c) EXPECT_EQ(read.defs.comms[c].members, original.defs.comms[c].members);
  EXPECT_EQ(read.defs.comms[3].name, "communicator 4");  // Paraver has no names: its id in the 'c:' lines
  EXPECT_EQ(sim::test::nth(read, 1, EventKind::CollEnd, MpiOp::Bcast).peer, 3);  // the flagged task, globally

  models::ReplayReport report;
  const trace::Trace replayed = simulate_replay(read, &report);
  for (const auto& n : report.notes) EXPECT_EQ(n.find("communicator"), std::string::npos) << n;
  EXPECT_EQ(replayed.defs.comms, read.defs.comms);
  expect_grid_replay(replayed);
  expect_grid_waits(nxn(read));
  expect_grid_waits(nxn(replayed));
}

// The replay's trace keeps its communicators through every writer: the analyses of the file
// see the same groups.
TEST_F(ReplayComms, ReplayedTraceKeepsItsCommunicatorsInEveryFormat) {
  const trace::Trace replayed = simulate_replay(test::grid::row_column_trace());
  trace::write_otf2(replayed, (dir_ / "otf2").string());
  trace::write_paraver(replayed, (dir_ / "r.prv").string());
  trace::write_wlt(replayed, (dir_ / "r.wlt").string());
  const trace::Trace otf2 = trace::read_otf2((dir_ / "otf2" / "traces.otf2").string());
  const trace::Trace prv = trace::read_paraver((dir_ / "r.prv").string());
  const trace::Trace wlt = trace::read_wlt((dir_ / "r.wlt").string());
  EXPECT_EQ(otf2.defs.comms, replayed.defs.comms);
  EXPECT_EQ(wlt.defs.comms, replayed.defs.comms);
  ASSERT_EQ(prv.defs.comms.size(), replayed.defs.comms.size());
  for (std::size_t c = 0; c < prv.defs.comms.size(); ++c)
    EXPECT_EQ(prv.defs.comms[c].members, replayed.defs.comms[c].members);
  for (const auto* t : {&otf2, &prv, &wlt}) {
    EXPECT_EQ(sim::test::nth(*t, 0, EventKind::CollEnd, MpiOp::Bcast).peer, 2);
    expect_grid_waits(nxn(*t));
  }
}

// The conversions that leave the event model keep the groups where they can.
TEST_F(ReplayComms, LogicalTraceKeepsThemAndTiSaysItCannot) {
  const auto w = models::replay_trace(test::grid::row_column_trace(), "grid", {});
  const trace::Trace logical = models::logical_trace(*w, 1e9);
  EXPECT_EQ(logical.defs.comms, w->definitions().comms);
  EXPECT_EQ(sim::test::nth(logical, 1, EventKind::CollEnd, MpiOp::Bcast).ref, test::grid::kCol1);
  EXPECT_EQ(sim::test::nth(logical, 1, EventKind::CollEnd, MpiOp::Bcast).peer, 3);
  EXPECT_EQ(trace::Matching::build(logical).unmatched.total(), 0u);

  std::vector<std::string> lost;
  const trace::TiTrace ti = models::ti_from_workload(*w, 1e9, &lost);
  std::string all;
  for (const auto& l : lost) all += l + "\n";
  EXPECT_NE(all.find("12 collective calls on sub-communicators written as calls on MPI_COMM_WORLD (TI has no "
                     "communicators; roots as world ranks)"),
            std::string::npos)
      << all;
  for (const auto& rec : ti.ranks[0])
    if (rec.op == trace::TiOp::Bcast) {
      EXPECT_EQ(rec.root, 2);
    }
}

// A TI trace records no communicator: its notes say what the replay assumes.
TEST_F(ReplayComms, TiNotesSayCollectivesAreAssumedOnTheWorld) {
  const std::string path = (dir_ / "split.ti").string();
  std::ofstream(path)
      << "0 init\n1 init\n0 comm_split\n1 comm_split\n0 comm_dup\n1 comm_dup\n"
         "0 allreduce 8 0\n1 allreduce 8 0\n0 bcast 8 1\n1 bcast 8 1\n0 finalize\n1 finalize\n";
  models::ReplayReport rep;
  (void)models::replay_ti(trace::read_ti(path), "split", {}, &rep);
  std::string notes;
  for (const auto& n : rep.notes) notes += n + "\n";
  EXPECT_NE(notes.find("4 × collectives assumed on MPI_COMM_WORLD (TI records no communicator)"),
            std::string::npos)
      << notes;
  EXPECT_NE(
      notes.find("4 × comm_size/comm_split/comm_dup records replayed as no-ops (TI records no communicator)"),
      std::string::npos)
      << notes;
}

// The v-collectives on sub-communicators: 6 ranks in two interleaved rows whose members are
// listed out of order (row A is ranks 4, 0, 2: world rank 0 is its rank 1), each calling
// MPI_Gatherv (root 1), MPI_Allgatherv, MPI_Alltoallv, MPI_Scatterv (root 2) and
// MPI_Reduce_scatter with uneven counts in its row's numbering. Simulated, written to OTF2 and
// read back, the trace replays with the counts its members' totals give (exact: the alltoallv's
// pairs are a product, so the proportional split is exact too): every call ends when it ended,
// on the same communicator, with the same root and the same totals.
TEST_F(ReplayComms, VCollectivesOnRowsReplayWithTheirCounts) {
  using sim::test::coll;
  using sim::test::compute;
  const std::vector<trace::Communicator> rows{{"row A", {4, 0, 2}}, {"row B", {1, 3, 5}}};
  std::vector<std::vector<Action>> acts(6);
  models::CountsPool pool;
  const auto kb = [](std::uint64_t k) { return k * 1024; };
  for (std::uint16_t c = 1; c <= 2; ++c) {
    const auto& m = rows[c - 1u].members;
    for (std::size_t i = 0; i < m.size(); ++i) {  // i: the rank in the row
      auto& out = acts[static_cast<std::size_t>(m[i])];
      const auto on = [&](Action a, std::vector<std::uint64_t> send, std::vector<std::uint64_t> recv) {
        a.comm = c;
        a.counts = pool.intern({std::move(send), std::move(recv)});
        out.push_back(compute(10e-6 * static_cast<double>(m[i] + 1)));
        out.push_back(a);
      };
      const std::vector<std::uint64_t> blocks{kb(1), kb(3), kb(2)};  // rank j of the row's block
      on(coll(ActionKind::Gatherv, blocks[i], 1), {}, i == 1 ? blocks : std::vector<std::uint64_t>{});
      on(coll(ActionKind::Allgatherv, blocks[i]), {}, blocks);
      std::vector<std::uint64_t> to, from;
      for (std::size_t j = 0; j < m.size(); ++j) {
        to.push_back(kb((i + 1) * (j + 1)));
        from.push_back(kb((j + 1) * (i + 1)));
      }
      on(coll(ActionKind::Alltoallv), to, from);
      on(coll(ActionKind::Scatterv, blocks[i], 2), i == 2 ? blocks : std::vector<std::uint64_t>{}, {});
      on(coll(ActionKind::ReduceScatter), {}, blocks);
      out.push_back(compute(5e-6));
    }
  }
  sim::test::ListWorkload original_w(acts, rows);
  original_w.pool = std::move(pool);
  const trace::Trace original = sim::simulate(sim::test::cluster(6), original_w, {}, sim::RunOptions{}).trace;
  trace::write_otf2(original, (dir_ / "otf2").string());
  const trace::Trace read = trace::read_otf2((dir_ / "otf2" / "traces.otf2").string());

  models::ReplayReport report;
  const auto replay = models::replay_trace(read, "rows", {}, &report);
  for (const auto& n : report.notes)
    EXPECT_TRUE(n.find("MPI_Alltoallv calls replayed with per-pair sizes in proportion") != std::string::npos ||
                n.rfind("iterations:", 0) == 0)
        << n;
  const trace::Trace replayed = sim::simulate(sim::test::cluster(6), *replay, {}, sim::RunOptions{}).trace;
  const MpiOp ops[] = {MpiOp::Gatherv, MpiOp::Allgatherv, MpiOp::Alltoallv, MpiOp::Scatterv, MpiOp::ReduceScatter};
  for (Rank r = 0; r < 6; ++r)
    for (const MpiOp op : ops) {
      SCOPED_TRACE("rank " + std::to_string(r) + ", " + std::string(trace::mpi_name(op)));
      const auto& a = sim::test::nth(original, r, EventKind::CollEnd, op);
      const auto& b = sim::test::nth(replayed, r, EventKind::CollEnd, op);
      EXPECT_EQ(original.defs.comms[a.ref].members, replayed.defs.comms[b.ref].members);
      EXPECT_EQ(b.peer, a.peer);
      EXPECT_EQ(b.bytes, a.bytes);
      EXPECT_EQ(b.aux, a.aux);
      EXPECT_NEAR(sim::test::call(replayed, r, op).second, sim::test::call(original, r, op).second, 1e-12);
    }
  // World rank 0 (row A's rank 1) is the gatherv's root and receives 1 + 3 + 2 KiB; world rank
  // 2 (row A's rank 2) is the scatterv's and sends as much.
  EXPECT_EQ(sim::test::nth(original, 0, EventKind::CollEnd, MpiOp::Gatherv).aux, 6u * 1024);
  EXPECT_EQ(sim::test::nth(original, 0, EventKind::CollEnd, MpiOp::Gatherv).peer, 0);
  EXPECT_EQ(sim::test::nth(original, 2, EventKind::CollEnd, MpiOp::Scatterv).bytes, 6u * 1024);
  EXPECT_EQ(sim::test::nth(original, 2, EventKind::CollEnd, MpiOp::Scatterv).peer, 2);
  EXPECT_NEAR(replayed.end_time(), original.end_time(), 1e-12);
  // As TI (no communicators), each member's count goes to its world rank: row A's blocks
  // 1, 3, 2 KiB at world ranks 4, 0, 2.
  const trace::TiTrace ti = models::ti_from_workload(*replay, 1e9);
  const auto gv = std::find_if(ti.ranks[0].begin(), ti.ranks[0].end(),
                               [](const trace::TiRecord& x) { return x.op == trace::TiOp::Gatherv; });
  ASSERT_NE(gv, ti.ranks[0].end());
  EXPECT_EQ(gv->counts, (std::vector<std::uint64_t>{3072, 0, 2048, 0, 1024, 0}));
  EXPECT_EQ(gv->root, 0);
}

// What cannot be replayed on the trace's groups is an error naming rank and event.
TEST(ReplayCommsErrors, ACollectiveOnACommunicatorThatCannotHoldItNamesRankAndEvent) {
  const auto error = [](const std::vector<Rank>& members, const std::vector<Rank>& callers,
                        MpiOp op = MpiOp::Allreduce, Rank root = trace::kNoRank) {
    trace::Trace t = test::grid::row_column_trace();
    for (auto& l : t.locations) l.events.clear();
    t.defs.comms.push_back({"split", members});
    const auto c = static_cast<std::uint32_t>(t.defs.comms.size() - 1);
    for (Rank r : callers) {
      auto& ev = t.locations[static_cast<std::size_t>(r)].events;
      const auto reg = t.defs.mpi_region(op);
      ev.push_back(trace::make_event(1e-6, EventKind::Enter, MpiOp::None, reg));
      ev.push_back(trace::make_event(1e-6, EventKind::CollBegin, op, c));
      ev.push_back(trace::make_event(2e-6, EventKind::CollEnd, op, c, root, 0, 8, 8));
      ev.push_back(trace::make_event(2e-6, EventKind::Leave, MpiOp::None, reg));
    }
    try {
      (void)models::replay_trace(t, "t", {});
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no InputError");
  };
  EXPECT_EQ(error({1, 3}, {1, 3}), "no InputError");
  EXPECT_EQ(error({1, 3}, {1, 2}),
            "rank 2, event 0: MPI_Allreduce on communicator 'split' (5), of which rank 2 is not a member");
  EXPECT_EQ(error({1, 7}, {1}),
            "rank 1, event 0: MPI_Allreduce on communicator 'split' (5): its member 1 is 7, not a rank of "
            "the trace "
            "(4 ranks)");
  EXPECT_EQ(error({1, 3, 1}, {1}),
            "rank 1, event 0: MPI_Allreduce on communicator 'split' (5): rank 1 is a member twice");
  EXPECT_EQ(error({}, {1}),
            "rank 1, event 0: MPI_Allreduce on communicator 'split' (5), which has no members "
            "(MPI_COMM_SELF: every "
            "rank alone)");
  EXPECT_EQ(
      error({1, 3}, {1, 3}, MpiOp::Bcast, 0),
      "rank 1, event 0: MPI_Bcast with root 0 on communicator 'split', of which rank 0 is not a member");
}

}  // namespace
}  // namespace waitlab::analysis
