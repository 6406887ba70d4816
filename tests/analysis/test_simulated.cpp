// The analyses on simulated traces, held against what only a simulator knows: the injected
// delay, the unperturbed baseline run, the hot spot's position.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>

#include "analysis/critpath/critpath.hpp"
#include "analysis/delay/delay.hpp"
#include "app/summary.hpp"
#include "scenarios/scenario.hpp"

namespace waitlab::analysis {
namespace {

const std::string kScenarios = std::string(WAITLAB_SOURCE_DIR) + "/scenarios/";

struct Analysed {
  trace::Matching match;
  WaitStateResult waits;
  DelayResult delay;
  CriticalPathResult cp;
};

Analysed analyse(const trace::Trace& t) {
  Analysed a;
  a.match = trace::Matching::build(t);
  a.waits = wait_states(t, a.match);
  a.delay = delay_costs(t, a.match, a.waits);
  a.cp = critical_path(t, a.match, a.waits);
  return a;
}

void expect_invariants(const trace::Trace& t, const Analysed& a) {
  EXPECT_EQ(a.match.unmatched.total(), 0u);
  EXPECT_NEAR(a.delay.short_term + a.delay.long_term + a.delay.unattributed, a.delay.sync_waiting,
              1e-9 * a.delay.sync_waiting);
  for (const auto& w : a.waits.instances) EXPECT_GT(w.seconds, 0);
  for (const auto& e : a.delay.table) {
    EXPECT_GE(e.short_term, 0);
    EXPECT_GE(e.long_term, 0);
  }
  double sum = 0;
  for (const auto& c : a.cp.profile) sum += c.on_path;
  EXPECT_TRUE(a.cp.complete);
  EXPECT_NEAR(sum, a.cp.length, 1e-9);
  // Every rank enters MPI_Init at 0: the path spans the whole run.
  EXPECT_NEAR(a.cp.length, t.end_time() - t.begin_time(), 1e-12);
}

// heat1d (blocking) on 256 ranks, δ on rank 128 in iteration 10, no noise; one rank per
// node, so that every message takes the same time (on nodes of 16 cores the messages that
// cross a node boundary are slower, and the small wait states they cause every 16 ranks
// have costs of their own, on the boundary ranks' MPI_Recv).
TEST(Simulated, Heat1dDelayIsChargedToTheDelayedRanksCompute) {
  constexpr double kDelta = 0.005;
  const auto s = scenarios::load_scenario(
      kScenarios + "demo.yaml", {"workload.ranks=256", "workload.iterations=40", "perturbations[0].rank=128",
                                 "perturbations[0].duration=5ms", "platform.nodes=256", "platform.cores=1",
                                 "run.baseline=true"});
  const app::Outcome o = app::simulate_scenario(s, false);
  ASSERT_TRUE(o.baseline.has_value());
  const trace::Trace& t = o.result.trace;
  const Analysed a = analyse(t);
  const Analysed base = analyse(o.baseline->trace);
  expect_invariants(t, a);
  expect_invariants(o.baseline->trace, base);

  // The waiting the delay caused, measured against the baseline run: at the synchronisation
  // points the delay analysis charges, and in MPI_Finalize (which no delay cost covers, as in
  // Scalasca). The wave moves one rank per iteration: in the 30 iterations after the delay it
  // reaches ranks 98..158, each of which waits δ once; the 195 ranks it never reaches wait δ
  // in MPI_Finalize for rank 128, which enters it last.
  const auto at_finalize = [](const Analysed& x) {
    return x.waits.total[static_cast<std::size_t>(Pattern::WaitAtFinalize)] +
           x.waits.total[static_cast<std::size_t>(Pattern::WaitAtInit)] +
           x.waits.total[static_cast<std::size_t>(Pattern::InitCompletion)];
  };
  const double finalize_increase = at_finalize(a) - at_finalize(base);
  const double increase = a.waits.total_waiting - base.waits.total_waiting - finalize_increase;
  const double costs = a.delay.short_term + a.delay.long_term;
  EXPECT_NEAR(increase, 60 * kDelta, 1e-6);
  EXPECT_NEAR(finalize_increase, 195 * kDelta, 1e-6);
  EXPECT_NEAR(costs - base.delay.short_term - base.delay.long_term, increase, 0.02 * increase);

  // Where the costs sit.
  double on_128_compute = 0, short_128 = 0;
  for (const auto& e : a.delay.table) {
    const std::string path = a.match.paths.name(e.path, t.defs);
    if (e.rank == 128 && path.size() >= 7 && path.substr(path.size() - 7) == "compute") {
      on_128_compute += e.short_term + e.long_term;
      short_128 += e.short_term;
    }
  }
  EXPECT_GE(on_128_compute, 0.95 * costs) << "of " << costs << " s of delay costs";
  EXPECT_NEAR(short_128, 2 * kDelta, 0.1 * 2 * kDelta);
  EXPECT_GT(on_128_compute - short_128, 0.5 * costs);  // most of it is long-term: the wave
}

// halo2d with a hot spot (paper 002's Zeus-MP): the largest delay costs sit on the border
// of the hot spot, not in its centre.
TEST(Simulated, Halo2dHotSpotCostsSitOnItsBorder) {
  const auto s = scenarios::load_scenario(kScenarios + "halo2d.yaml", {"workload.iterations=10"});
  // Without the noise: only the hot spot.
  auto noiseless = s;
  noiseless.perturbations.resize(1);
  ASSERT_EQ(noiseless.perturbations[0].type, "imbalance_hotspot");
  const app::Outcome o = app::simulate_scenario(noiseless, false);
  const trace::Trace& t = o.result.trace;
  const Analysed a = analyse(t);
  expect_invariants(t, a);

  std::map<Rank, double> by_rank;
  for (const auto& e : a.delay.table) by_rank[e.rank] += e.short_term + e.long_term;
  ASSERT_FALSE(by_rank.empty());
  // Grid 16 × 16, rank = x·16 + y (slowest dimension first); the hot spot: distance ≤ 3 from (8, 8).
  const auto inside = [](int x, int y) { return (x - 8) * (x - 8) + (y - 8) * (y - 8) <= 9; };
  const auto border = [&](Rank r) {
    const int x = r / 16, y = r % 16;
    if (!inside(x, y)) return false;
    return !inside(x - 1, y) || !inside(x + 1, y) || !inside(x, y - 1) || !inside(x, y + 1);
  };
  std::vector<std::pair<double, Rank>> ranked;
  for (const auto& [r, c] : by_rank) ranked.emplace_back(c, r);
  std::sort(ranked.rbegin(), ranked.rend());
  const std::size_t top = std::min<std::size_t>(8, ranked.size());
  for (std::size_t i = 0; i < top; ++i) EXPECT_TRUE(border(ranked[i].second)) << "rank " << ranked[i].second;
  EXPECT_FALSE(border(8 * 16 + 8));
  EXPECT_LT(by_rank[8 * 16 + 8], 0.1 * ranked[0].first);  // the centre is not a cause
}

}  // namespace
}  // namespace waitlab::analysis
