// Collectives under every algorithm set and both semantics: causality invariants that no
// algorithm may break, and the byte counts recorded in CollEnd.
#include <gtest/gtest.h>

#include <algorithm>

#include "sim_util.hpp"

namespace waitlab::sim::test {
namespace {

constexpr int kRanks = 6;  // not a power of two: the algorithms' odd cases run too

// Rank r computes r * 100 us, then calls the collective (root 2).
trace::Trace run(ActionKind kind, std::uint64_t bytes, const RunOptions& o) {
  std::vector<std::vector<Action>> acts(kRanks);
  for (int r = 0; r < kRanks; ++r) {
    acts[static_cast<std::size_t>(r)] = {compute(r * 100e-6), coll(kind, bytes, 2)};
  }
  ListWorkload w(acts);
  return simulate(cluster(kRanks), w, {}, o).trace;
}

struct Kind {
  ActionKind kind;
  MpiOp op;
  bool all_to_all;  // every rank depends on every other rank
};

TEST(Collectives, RespectCausalityUnderEverySetAndSemantics) {
  const std::vector<Kind> kinds = {
      {ActionKind::Barrier, MpiOp::Barrier, true},     {ActionKind::Bcast, MpiOp::Bcast, false},
      {ActionKind::Reduce, MpiOp::Reduce, false},      {ActionKind::Allreduce, MpiOp::Allreduce, true},
      {ActionKind::Gather, MpiOp::Gather, false},      {ActionKind::Scatter, MpiOp::Scatter, false},
      {ActionKind::Allgather, MpiOp::Allgather, true}, {ActionKind::Alltoall, MpiOp::Alltoall, true},
  };
  std::vector<RunOptions> configs;
  for (const auto& set : collective_sets()) {
    auto o = options();
    o.collectives = set.name;
    configs.push_back(o);
  }
  configs.push_back(options(Semantics::SmpiDefault));
  for (const auto& o : configs) {
    for (const auto& k : kinds) {
      for (std::uint64_t bytes : {std::uint64_t{8}, std::uint64_t{100000}}) {
        SCOPED_TRACE(o.collectives + (o.semantics == Semantics::SmpiDefault ? " smpi-default " : " ") +
                     std::string(trace::mpi_name(k.op)) + " " + std::to_string(bytes));
        const auto t = run(k.kind, bytes, o);
        const double last_enter = (kRanks - 1) * 100e-6;
        const double root_enter = 2 * 100e-6;
        for (int r = 0; r < kRanks; ++r) {
          const auto [enter, leave] = call(t, r, k.op);
          EXPECT_NEAR(enter, r * 100e-6, 1e-12);
          const auto& begin = nth(t, r, EventKind::CollBegin, k.op);
          const auto& end = nth(t, r, EventKind::CollEnd, k.op);
          EXPECT_EQ(begin.time, enter);
          EXPECT_EQ(end.time, leave);
          // Nobody leaves before the ranks it depends on have arrived.
          const bool needs_all = k.all_to_all || ((k.op == MpiOp::Reduce || k.op == MpiOp::Gather) && r == 2);
          const bool needs_root = (k.op == MpiOp::Bcast || k.op == MpiOp::Scatter) && r != 2;
          EXPECT_GT(leave, needs_all ? last_enter : needs_root ? root_enter : enter - 1);
          // Bytes by buffer arguments: sent in `bytes`, received in `aux`.
          const std::uint64_t n = kRanks;
          const bool root = r == 2;
          std::pair<std::uint64_t, std::uint64_t> want{0, 0};
          switch (k.op) {
            case MpiOp::Bcast:
              want = {root ? bytes : 0, root ? 0 : bytes};
              break;
            case MpiOp::Reduce:
              want = {bytes, root ? bytes : 0};
              break;
            case MpiOp::Allreduce:
              want = {bytes, bytes};
              break;
            case MpiOp::Gather:
              want = {bytes, root ? bytes * n : 0};
              break;
            case MpiOp::Scatter:
              want = {root ? bytes * n : 0, bytes};
              break;
            case MpiOp::Allgather:
              want = {bytes, bytes * n};
              break;
            case MpiOp::Alltoall:
              want = {bytes * n, bytes * n};
              break;
            default:
              break;
          }
          EXPECT_EQ(end.bytes, want.first);
          EXPECT_EQ(end.aux, want.second);
          const bool rooted = k.op == MpiOp::Bcast || k.op == MpiOp::Reduce || k.op == MpiOp::Gather ||
                              k.op == MpiOp::Scatter;
          EXPECT_EQ(end.peer, rooted ? 2 : trace::kNoRank);
        }
      }
    }
  }
}

TEST(Collectives, SetsNameSimGridAlgorithms) {
  const auto& sets = collective_sets();
  ASSERT_EQ(sets.size(), 3u);
  EXPECT_EQ(sets[0].name, "fast");
  EXPECT_EQ(sets[1].name, "mpi");
  EXPECT_EQ(sets[2].name, "default");
  EXPECT_TRUE(sets[2].algorithms.empty());  // SimGrid's default selector
  for (std::size_t i = 0; i < 2; ++i) {
    std::vector<std::string> keys;
    for (const auto& [k, a] : sets[i].algorithms) keys.push_back(k);
    std::sort(keys.begin(), keys.end());
    EXPECT_EQ(keys, (std::vector<std::string>{"allgather", "allreduce", "alltoall", "barrier", "bcast",
                                              "gather", "reduce", "scatter"}));
  }
  // SmpiDefault semantics use SimGrid's defaults whatever the set asked for.
  auto o = options(Semantics::SmpiDefault);
  o.collectives = "mpi";
  const auto t = run(ActionKind::Barrier, 0, o);
  EXPECT_EQ(t.attribute("collectives"), "default");
  EXPECT_EQ(t.attribute("semantics"), "smpi-default");
}

TEST(Collectives, BarrierTimingIsExactForTwoRanks) {
  // SimGrid's ompi_tree barrier on 2 ranks: rank 1 (the child) sends a zero-byte message
  // (16 B of envelope) to rank 0 when it arrives at 1 ms; rank 0 receives it one hop later
  // and answers. One hop on the 2 us, 1 GB/s route:
  const double hop = 2e-6 * 2.01467 + 16 / (1e9 * 0.812084);
  std::vector<std::vector<Action>> acts = {{coll(ActionKind::Barrier)},
                                           {compute(1e-3), coll(ActionKind::Barrier)}};
  ListWorkload w(acts);
  auto o = options();
  o.collectives = "fast";
  const auto t = simulate(cluster(2), w, {}, o).trace;
  // Waitlab semantics: messages inside collectives are not eager (docs/engine.md), so rank
  // 0's answer completes only when rank 1 has received it.
  EXPECT_NEAR(call(t, 0, MpiOp::Barrier).second, 1e-3 + 2 * hop, 1e-12);
  EXPECT_NEAR(call(t, 1, MpiOp::Barrier).second, 1e-3 + 2 * hop, 1e-12);
  // SMPI's defaults detach the answer: rank 0 leaves one hop earlier. (The default selector's
  // barrier is ompi_basic_linear, which on 2 ranks exchanges the same two messages.)
  const auto d = simulate(cluster(2), w, {}, options(Semantics::SmpiDefault)).trace;
  EXPECT_NEAR(call(d, 0, MpiOp::Barrier).second, 1e-3 + hop, 1e-12);
  EXPECT_NEAR(call(d, 1, MpiOp::Barrier).second, 1e-3 + 2 * hop, 1e-12);
}

}  // namespace
}  // namespace waitlab::sim::test
