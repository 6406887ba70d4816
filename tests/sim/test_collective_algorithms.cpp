// Per-collective algorithm choices (RunOptions::collective_algorithms): every name of the
// table (sim::collective_algorithms(), SimGrid 3.32's own list) runs through a small
// simulation, or is refused with its reason; the payload-free ones give the same times with
// and without payload copies; the choices go on top of the preset; unknown names are refused
// before SimGrid (which aborts on them) sees them.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "util/error.hpp"
#include "sim_util.hpp"

namespace waitlab::sim::test {
namespace {

constexpr int kRanks = 8;  // 2x4 and 2x2x2: the mesh algorithms' shapes exist

const std::map<std::string, ActionKind>& kinds() {
  static const std::map<std::string, ActionKind> k = {
      {"gather", ActionKind::Gather},         {"allgather", ActionKind::Allgather},
      {"allgatherv", ActionKind::Allgatherv}, {"allreduce", ActionKind::Allreduce},
      {"alltoall", ActionKind::Alltoall},     {"alltoallv", ActionKind::Alltoallv},
      {"bcast", ActionKind::Bcast},           {"reduce", ActionKind::Reduce},
      {"reduce_scatter", ActionKind::ReduceScatter}, {"scatter", ActionKind::Scatter},
      {"barrier", ActionKind::Barrier}};
  return k;
}

// A workload of kRanks ranks calling `collectives` in order, each after a little uneven
// compute. Root 1, 4 KiB; in the gatherv, scatterv and allgatherv rank j's block is
// (j % 3 + 1) KiB; in the alltoallv rank r sends (r + j) % 3 + 1 KiB to rank j (as much comes
// back: the relation is symmetric); every reduce-scatter block is 2 KiB.
std::unique_ptr<ListWorkload> calls(const std::vector<std::string>& collectives) {
  models::CountsPool pool;
  models::Counts b;
  for (int j = 0; j < kRanks; ++j) b.send.push_back(static_cast<std::uint64_t>(j % 3 + 1) * 1024);
  b.recv = b.send;
  const std::uint32_t blocks = pool.intern(b);
  const std::uint32_t equal = pool.intern({{}, std::vector<std::uint64_t>(kRanks, 2048)});
  std::vector<std::uint32_t> pairs(kRanks);
  for (int r = 0; r < kRanks; ++r) {
    models::Counts c;
    for (int j = 0; j < kRanks; ++j) c.send.push_back(static_cast<std::uint64_t>((r + j) % 3 + 1) * 1024);
    c.recv = c.send;
    pairs[static_cast<std::size_t>(r)] = pool.intern(std::move(c));
  }
  EXPECT_EQ(pool.size(), 4u);  // blocks (rank 0's row of pairs is the same), equal, 2 more rows of pairs
  std::vector<std::vector<Action>> acts(kRanks);
  for (int r = 0; r < kRanks; ++r) {
    for (const auto& collective : collectives) {
      const ActionKind k = kinds().at(collective);
      Action a = coll(k, collective == "barrier" ? 0 : 4096, 1);
      if (k == ActionKind::Gatherv || k == ActionKind::Scatterv || k == ActionKind::Allgatherv) {
        a.bytes = static_cast<std::uint64_t>(r % 3 + 1) * 1024;
        a.counts = blocks;
      }
      if (k == ActionKind::ReduceScatter) a.counts = equal;
      if (k == ActionKind::Alltoallv) a.counts = pairs[static_cast<std::size_t>(r)];
      acts[static_cast<std::size_t>(r)].push_back(compute((r % 3) * 10e-6));
      acts[static_cast<std::size_t>(r)].push_back(a);
    }
  }
  auto w = std::make_unique<ListWorkload>(acts);
  w->pool = std::move(pool);
  return w;
}

std::vector<double> times(const trace::Trace& t) {
  std::vector<double> out;
  for (const auto& l : t.locations)
    for (const auto& e : l.events) out.push_back(e.time);
  return out;
}

TEST(CollectiveAlgorithms, EveryNameOfTheTableRunsInASimulationOrIsRefused) {
  const auto& table = collective_algorithms();
  ASSERT_EQ(table.size(), 11u);
  std::size_t longest = 0;
  std::size_t names = 0;
  for (const auto& c : table) {
    longest = std::max(longest, c.algorithms.size());
    names += c.algorithms.size();
  }
  EXPECT_EQ(names, 186u);
  // Run k: every collective with its k-th algorithm if that needs no payloads, in one
  // simulation, run twice: without and with copies, same times. The others one by one (the
  // SMP-aware ones share state in SimGrid: some combinations deadlock in one run).
  std::size_t ran = 0;
  std::size_t refused = 0;
  std::size_t free = 0;
  std::vector<std::pair<const CollectiveAlgorithms*, std::size_t>> runs;  // (collective, k); null: all free ones at k
  for (std::size_t k = 0; k < longest; ++k) {
    runs.emplace_back(nullptr, k);
    for (const auto& c : table)
      if (k < c.algorithms.size() && !payload_free(c.collective, c.algorithms[k])) runs.emplace_back(&c, k);
  }
  for (const auto& [one, k] : runs) {
    {
      const bool payload = one != nullptr;
      RunOptions o = options();
      std::vector<std::string> collectives;
      std::string what;
      for (const auto& c : table) {
        if (k >= c.algorithms.size() || (one != nullptr && &c != one)) continue;
        const std::string& algo = c.algorithms[k];
        if (payload_free(c.collective, algo) == payload) continue;
        if (const std::string e = collective_algorithm_error(c.collective, algo); !e.empty()) {
          EXPECT_NE(e.find("waitlab cannot run SimGrid's algorithm '" + algo + "'"), std::string::npos) << e;
          ++refused;
          continue;
        }
        if (c.collective == "barrier" && algo == "ompi_two_procs") continue;  // 2 ranks only: below
        o.collective_algorithms.emplace_back(c.collective, algo);
        collectives.push_back(c.collective);
        what += " " + c.collective + ":" + algo;
        ++ran;
        free += payload ? 0 : 1;
      }
      if (collectives.empty()) continue;
      SCOPED_TRACE("algorithms" + what);
      EXPECT_EQ(copies_payloads(o), payload);
      const auto w = calls(collectives);
      RunResult res;
      try {
        res = simulate(cluster(kRanks), *w, {}, o);
      } catch (const std::exception& e) {
        ADD_FAILURE() << e.what();
        continue;
      }
      EXPECT_GT(res.stats.simulated_time, 0);
      EXPECT_EQ(res.stats.mpi_operations, static_cast<std::uint64_t>(kRanks) * collectives.size());
      // The trace says what ran.
      const std::string attr = res.trace.attribute("collective_algorithms");
      for (const auto& [coll, algo] : o.collective_algorithms)
        EXPECT_NE(attr.find(coll + "=" + algo), std::string::npos) << attr;
      if (payload) continue;
      o.copy_payloads = true;
      EXPECT_EQ(times(simulate(cluster(kRanks), *w, {}, o).trace), times(res.trace)) << "with payload copies";
    }
  }
  // ompi_two_procs, on two ranks.
  std::vector<std::vector<Action>> two(2, std::vector<Action>{coll(ActionKind::Barrier)});
  ListWorkload w2(two);
  RunOptions o = options();
  o.collective_algorithms = {{"barrier", "ompi_two_procs"}};
  EXPECT_GT(simulate(cluster(2), w2, {}, o).stats.simulated_time, 0);
  ++ran;
  EXPECT_EQ(ran + refused, names);
  EXPECT_EQ(refused, 7u);
  EXPECT_EQ(free, 98u);  // payload_free()'s table
}

TEST(CollectiveAlgorithms, ChoicesGoOnTopOfThePreset) {
  RunOptions o = options();
  o.collectives = "fast";
  o.collective_algorithms = {{"alltoall", "pair"}, {"alltoallv", "ring"}, {"alltoall", "ring"}};
  std::map<std::string, std::string> eff;
  for (const auto& [k, a] : effective_collective_algorithms(o)) eff[k] = a;
  EXPECT_EQ(eff.size(), 11u);
  EXPECT_EQ(eff["alltoall"], "ring");  // the later choice wins
  EXPECT_EQ(eff["alltoallv"], "ring");
  EXPECT_EQ(eff["bcast"], "binomial_tree");     // fast's
  EXPECT_EQ(eff["reduce_scatter"], "default");  // neither: SimGrid's default selector
  EXPECT_FALSE(copies_payloads(o));
  o.collective_algorithms.emplace_back("bcast", "mvapich2");  // a selector: may exchange host lists
  EXPECT_TRUE(copies_payloads(o));
  // SmpiDefault semantics: SimGrid's default selector, the choices on top; payloads copied.
  o.semantics = Semantics::SmpiDefault;
  eff.clear();
  for (const auto& [k, a] : effective_collective_algorithms(o)) eff[k] = a;
  EXPECT_EQ(eff["bcast"], "mvapich2");
  EXPECT_EQ(eff["barrier"], "default");
  EXPECT_EQ(eff["alltoall"], "ring");
  EXPECT_TRUE(copies_payloads(o));
}

TEST(CollectiveAlgorithms, ThePairAlltoallIsNotTheDefaultOne) {
  // 8 ranks, 64 KiB per pair, rank r late by r * 50 us: SimGrid's default alltoall and the
  // pairwise exchange end at different times (the choice reaches SimGrid).
  std::vector<std::vector<Action>> acts(kRanks);
  for (int r = 0; r < kRanks; ++r)
    acts[static_cast<std::size_t>(r)] = {compute(r * 50e-6), coll(ActionKind::Alltoall, 65536)};
  ListWorkload w(acts);
  RunOptions o = options(Semantics::SmpiDefault);
  const double by_default = simulate(cluster(kRanks), w, {}, o).stats.simulated_time;
  o.collective_algorithms = {{"alltoall", "pair"}};
  const RunResult pair = simulate(cluster(kRanks), w, {}, o);
  EXPECT_NE(pair.stats.simulated_time, by_default);
  EXPECT_EQ(pair.trace.attribute("collectives"), "default");
  EXPECT_NE(pair.trace.attribute("collective_algorithms").find("alltoall=pair"), std::string::npos);
}

// The error of simulate() for `o` on `ranks` ranks running `w`.
std::string error_of(const models::Workload& w, const RunOptions& o) {
  try {
    (void)simulate(cluster(w.ranks()), w, {}, o);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(CollectiveAlgorithms, UnknownAndUnsupportedNamesAreRefusedBeforeSimGridSeesThem) {
  EXPECT_EQ(collective_algorithm_error("alltoall", "pair"), "");
  const std::string bad_algo = collective_algorithm_error("alltoall", "pairs");
  EXPECT_NE(bad_algo.find("collective 'alltoall' has no algorithm 'pairs'; did you mean 'pair'?"), std::string::npos)
      << bad_algo;
  EXPECT_NE(bad_algo.find("SimGrid 3.32's algorithms for alltoall: default, 2dmesh, 3dmesh, basic_linear"),
            std::string::npos)
      << bad_algo;
  const std::string bad_coll = collective_algorithm_error("alltoal", "pair");
  EXPECT_NE(bad_coll.find("unknown collective 'alltoal'; did you mean 'alltoall'?"), std::string::npos) << bad_coll;
  EXPECT_NE(bad_coll.find("gather, allgather, allgatherv, allreduce, alltoall, alltoallv, bcast, reduce, "
                          "reduce_scatter, scatter, barrier"),
            std::string::npos)
      << bad_coll;
  const std::string unsupported = collective_algorithm_error("bcast", "arrival_pattern_aware");
  EXPECT_NE(unsupported.find("waitlab cannot run SimGrid's algorithm 'arrival_pattern_aware': it receives from "
                             "MPI_ANY_SOURCE"),
            std::string::npos)
      << unsupported;
  // simulate() refuses them (exit 2 from the command line); SimGrid would abort or crash.
  std::vector<std::vector<Action>> acts(3, std::vector<Action>{coll(ActionKind::Barrier)});
  ListWorkload w(acts);
  RunOptions o = options();
  o.collective_algorithms = {{"barrier", "fastest"}};
  EXPECT_NE(error_of(w, o).find("run.collective_algorithms: collective 'barrier' has no algorithm 'fastest'"),
            std::string::npos);
  o.collective_algorithms = {{"barrier", "ompi_two_procs"}};
  EXPECT_NE(error_of(w, o).find("'ompi_two_procs' is for 2 ranks only (it deadlocks on more); this run has 3"),
            std::string::npos);
  // mpich_noncomm takes equal reduce-scatter blocks only: the call says so.
  ListWorkload uneven({{}, {}, {}});
  std::vector<std::vector<Action>> rs(3);
  const std::uint32_t id = uneven.pool.intern({{}, {1024, 2048, 1024}});
  for (auto& r : rs) {
    Action a = coll(ActionKind::ReduceScatter);
    a.counts = id;
    r.push_back(a);
  }
  ListWorkload rsw(rs);
  rsw.pool = std::move(uneven.pool);
  o.collective_algorithms = {{"reduce_scatter", "mpich_noncomm"}};
  EXPECT_NE(error_of(rsw, o).find("MPI_Reduce_scatter with unequal receive counts, which SimGrid's reduce_scatter "
                                  "algorithm 'mpich_noncomm' cannot take"),
            std::string::npos)
      << error_of(rsw, o);
  o.collective_algorithms = {{"reduce_scatter", "mpich_pair"}};
  EXPECT_EQ(error_of(rsw, o), "no error");
}

}  // namespace
}  // namespace waitlab::sim::test
