// Collectives on the workload's communicators (docs/engine.md §5): created before the ranks'
// streams start at no simulated time, run on their own groups with roots in their numbering,
// recorded on their communicator with world-rank roots; mistakes are InputErrors naming rank
// and action.
#include <gtest/gtest.h>

#include "util/error.hpp"
#include "sim_util.hpp"

namespace waitlab::sim::test {
namespace {

using CommWorkload = ListWorkload;  // with communicators besides MPI_COMM_WORLD

Action on(Action a, std::uint32_t comm) {
  a.comm = static_cast<std::uint16_t>(comm);
  return a;
}

std::string error_of(const models::Workload& w, const RunOptions& o = options()) {
  try {
    simulate(cluster(4), w, {}, o);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no InputError";
}

// A fat tree of 4 nodes of 2 sockets × 2 cores (16 ranks, routes of up to 10 links).
models::PlatformDesc fat_tree() {
  models::PlatformDesc p;
  p.kind = models::PlatformKind::Hierarchical;
  p.nodes = 4;
  p.sockets = 2;
  p.cores = 2;
  p.core_link = {1e9, 1e-6};
  p.socket_link = {1e9, 10e-6};
  p.nic_link = {1e9, 100e-6};
  p.network_link = {1e9, 1e-3};
  p.topology = models::Topology::FatTree;
  p.topo_parameters = "2;2,2;1,2;1,1";
  return p;
}

// The same program on MPI_COMM_WORLD and on a created communicator holding every rank in
// order (SMPI runs the same algorithms on the same group): if creating the communicator
// cost simulated time — SMPI's MPI_Comm_create broadcasts an id over the new communicator,
// 8.108 µs for 4 ranks on the cluster — every later timestamp would move. They are all equal,
// bit for bit, under both semantics, on a flat cluster and on a fat tree.
TEST(Communicators, CreatingThemCostsNoSimulatedTime) {
  const auto program = [](std::uint32_t c, int n) {
    std::vector<std::vector<Action>> a(static_cast<std::size_t>(n));
    for (trace::Rank r = 0; r < n; ++r) {
      a[static_cast<std::size_t>(r)] = {
          on(coll(ActionKind::Barrier), c),        compute(1e-4 * (r + 1)),
          on(coll(ActionKind::Allreduce, 64), c),  on(coll(ActionKind::Bcast, 1000, 2), c),
          p2p(ActionKind::Send, (r + 1) % n, 8),   p2p(ActionKind::Recv, (r + n - 1) % n, 8),
          on(coll(ActionKind::Gather, 100, 1), c), compute(2e-4)};
    }
    return a;
  };
  for (const auto& [platform, n] : {std::pair{cluster(4), 4}, std::pair{fat_tree(), 16}}) {
    trace::Communicator dup{"world again", {}};
    for (trace::Rank r = 0; r < n; ++r) dup.members.push_back(r);
    for (const auto sem : {Semantics::Waitlab, Semantics::SmpiDefault}) {
      SCOPED_TRACE(std::to_string(n) + " ranks, " + (sem == Semantics::Waitlab ? "waitlab" : "smpi-default"));
      const auto world = simulate(platform, CommWorkload(program(0, n), {dup}), {}, options(sem)).trace;
      const auto created = simulate(platform, CommWorkload(program(1, n), {dup}), {}, options(sem)).trace;
      ASSERT_EQ(created.defs.comms.size(), 2u);
      EXPECT_EQ(created.defs.comms[1].name, "world again");
      for (std::size_t r = 0; r < static_cast<std::size_t>(n); ++r) {
        const auto& a = world.locations[r].events;
        const auto& b = created.locations[r].events;
        ASSERT_EQ(a.size(), b.size());
        for (std::size_t i = 0; i < a.size(); ++i) {
          EXPECT_EQ(a[i].time, b[i].time) << "rank " << r << ", event " << i;  // exactly
          EXPECT_EQ(a[i].kind, b[i].kind);
          EXPECT_EQ(a[i].peer, b[i].peer);
          const bool coll = a[i].kind == EventKind::CollBegin || a[i].kind == EventKind::CollEnd;
          EXPECT_EQ(b[i].ref, coll ? 1u : a[i].ref);
        }
        EXPECT_EQ(world.locations[r].truth, created.locations[r].truth);
        // MPI_Init's Enter and Leave, and the first barrier's Enter: at 0, not at the few
        // 1e-299 s the creation took.
        EXPECT_EQ(b[0].time, 0.0);
        EXPECT_EQ(b[1].time, 0.0);
        EXPECT_EQ(b[2].op, MpiOp::Barrier);
        EXPECT_EQ(b[2].time, 0.0);
      }
    }
  }
}

// Two rows of a 2×2 grid: row 0 (ranks 0, 1) computes 1 ms first. Each row's allreduce
// waits only for its own members (on MPI_COMM_WORLD row 1 would wait for row 0).
TEST(Communicators, RowAllreducesRunOnTheirOwnGroups) {
  const std::vector<trace::Communicator> rows = {{"row 0", {0, 1}}, {"row 1", {2, 3}}};
  std::vector<std::vector<Action>> a(4);
  for (trace::Rank r = 0; r < 4; ++r) {
    const std::uint32_t row = r < 2 ? 1 : 2;
    if (r < 2) a[r].push_back(compute(1e-3));
    a[r].push_back(on(coll(ActionKind::Allreduce, 8), row));
    // A gather to the row's rank 1 (world rank 1 resp. 3) of 100 B per rank.
    a[r].push_back(on(coll(ActionKind::Gather, 100, 1), row));
  }
  const auto t = simulate(cluster(4), CommWorkload(a, rows), {}, options()).trace;
  const double T = smpi_transfer_time(8, 2e-6, 1e9);  // one 8-byte message, both sides ready
  // redbcast on two ranks: the reduce's message, then the bcast's.
  EXPECT_NEAR(call(t, 0, MpiOp::Allreduce).second, 1e-3 + 2 * T, 1e-12);
  EXPECT_NEAR(call(t, 1, MpiOp::Allreduce).second, 1e-3 + 2 * T, 1e-12);
  EXPECT_NEAR(call(t, 2, MpiOp::Allreduce).second, 2 * T, 1e-12);
  EXPECT_NEAR(call(t, 3, MpiOp::Allreduce).second, 2 * T, 1e-12);
  // Recorded on their communicators, the root as a world rank, sizes by the row's 2 ranks.
  for (trace::Rank r = 0; r < 4; ++r) {
    const std::uint32_t row = r < 2 ? 1 : 2;
    EXPECT_EQ(nth(t, r, EventKind::CollBegin, MpiOp::Allreduce).ref, row);
    EXPECT_EQ(nth(t, r, EventKind::CollEnd, MpiOp::Allreduce).ref, row);
    const auto& g = nth(t, r, EventKind::CollEnd, MpiOp::Gather);
    EXPECT_EQ(g.ref, row);
    EXPECT_EQ(g.peer, r < 2 ? 1 : 3);
    EXPECT_EQ(g.bytes, 100u);
    EXPECT_EQ(g.aux, r % 2 == 1 ? 200u : 0u);
  }
  EXPECT_EQ(t.defs.comms.size(), 3u);
  EXPECT_EQ(t.defs.comms[2].members, (std::vector<trace::Rank>{2, 3}));
  // Under SMPI's default semantics too (rows apart; eager messages change the exact times).
  const auto d = simulate(cluster(4), CommWorkload(a, rows), {}, options(Semantics::SmpiDefault)).trace;
  EXPECT_LT(call(d, 2, MpiOp::Allreduce).second, 1e-4);
  EXPECT_GT(call(d, 0, MpiOp::Allreduce).second, 1e-3);
}

TEST(Communicators, MistakesAreInputErrorsNamingRankAndAction) {
  const std::vector<trace::Communicator> rows = {{"row 0", {0, 1}}, {"row 1", {2, 3}}};
  const auto all = [](Action a) { return std::vector<std::vector<Action>>(4, {a}); };
  EXPECT_EQ(error_of(CommWorkload(all(on(coll(ActionKind::Allreduce, 8), 1)), rows)),
            "rank 2, action 0 (allreduce): rank 2 is not a member of communicator 'row 0' (1)");
  EXPECT_EQ(error_of(CommWorkload(all(on(coll(ActionKind::Barrier), 3)), rows)),
            "rank 0, action 0 (barrier): communicator 3 is not defined (the workload has 3)");
  std::vector<std::vector<Action>> a(4);
  for (trace::Rank r = 0; r < 4; ++r) a[r] = {on(coll(ActionKind::Bcast, 8, 2), r < 2 ? 1 : 2)};
  EXPECT_EQ(error_of(CommWorkload(a, rows)),
            "rank 0, action 0 (bcast): root 2 is not a rank of communicator 'row 0' (it has 2)");
  EXPECT_EQ(error_of(CommWorkload(all(compute(1)), {{"odd", {0, 4}}})),
            "communicator 1 'odd' of the workload: member 1 is 4, not a rank (the run has 4 ranks)");
  EXPECT_EQ(error_of(CommWorkload(all(compute(1)), {{"twice", {1, 1}}})),
            "communicator 1 'twice' of the workload: rank 1 is a member twice");
  // A member that finished: the call on its communicator can never complete (the other row's
  // calls are not concerned).
  std::vector<std::vector<Action>> f = {
      {on(coll(ActionKind::Barrier), 1), compute(1e-3), on(coll(ActionKind::Barrier), 1)},
      {on(coll(ActionKind::Barrier), 1)},
      {on(coll(ActionKind::Barrier), 2), on(coll(ActionKind::Barrier), 2)},
      {on(coll(ActionKind::Barrier), 2), on(coll(ActionKind::Barrier), 2)}};
  const std::string e = error_of(CommWorkload(f, rows));
  EXPECT_EQ(e.substr(0, e.find("(at t=")), "rank 0, action 2 (barrier): rank 1 has already finished ");
  EXPECT_EQ(e.substr(e.find(" s) after")),
            " s) after 1 collective call(s) on communicator 'row 0': this one, rank 0's collective call 2 "
            "there, can never complete");
}

}  // namespace
}  // namespace waitlab::sim::test
