// The demo's one injected delay, checked analytically rather than against recorded figures:
// the ground truth holds exactly δ = 20 ms on the delayed rank in the delayed iteration and
// nothing else, and what the delay costs the whole run (perturbed minus unperturbed
// simulated time) is at most δ — a blocking 1D stencil only passes waiting on, it cannot
// amplify it — and most of δ, because the delayed rank's neighbours must wait for it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "app/summary.hpp"
#include "scenarios/scenario.hpp"

namespace waitlab::app {
namespace {

const std::string kDemo = std::string(WAITLAB_SOURCE_DIR) + "/scenarios/demo.yaml";
constexpr double kDelta = 0.02;  // demo.yaml: perturbations[0].duration

TEST(DemoDelay, ScenarioIsWhatThisTestAssumes) {
  const auto s = scenarios::load_scenario(kDemo);
  ASSERT_EQ(s.perturbations.size(), 1u);
  EXPECT_EQ(s.perturbations[0].type, "delay");
  EXPECT_EQ(s.perturbations[0].options.number("duration"), kDelta);
  EXPECT_EQ(s.perturbations[0].options.integer("rank"), 512);
  EXPECT_EQ(s.perturbations[0].options.integer("iteration"), 10);
  EXPECT_EQ(s.workload.type, "heat1d");
  EXPECT_EQ(s.workload.options.string("mode"), "blocking");
}

// The demo on 64 ranks × 30 iterations with the delay on rank 32 (same platform, same δ).
TEST(DemoDelay, InjectedExactlyDeltaAndCostAtMostDelta) {
  const auto s = scenarios::load_scenario(kDemo, {"workload.ranks=64", "workload.iterations=30",
                                                  "perturbations[0].rank=32", "run.baseline=true"});
  const Outcome o = simulate_scenario(s, false);
  ASSERT_TRUE(o.base_fig.has_value());

  // Ground truth: one interval of rank 32 in iteration 10 carries δ, no other interval anything.
  const auto& delay = o.fig.injected[static_cast<std::size_t>(trace::Cause::Delay)];
  EXPECT_EQ(delay.total, kDelta);
  EXPECT_EQ(delay.intervals, 1u);
  EXPECT_EQ(delay.ranks, 1u);
  EXPECT_EQ(delay.max_rank_id, 32);
  EXPECT_EQ(o.fig.injected_total(), kDelta);
  int carrying = 0;
  for (const auto& l : o.result.trace.locations)
    for (const auto& c : l.truth)
      if (c.injected_total() != 0) {
        ++carrying;
        EXPECT_EQ(l.rank, 32);
        EXPECT_EQ(c.iteration, 10);
        EXPECT_EQ(c.nominal, 0.001);
        EXPECT_EQ(c.injected[static_cast<std::size_t>(trace::Cause::Delay)], kDelta);
        // The interval lasts nominal + δ; only the clock's rounding at t ≈ 10 ms separates them.
        EXPECT_NEAR(c.end - c.start, c.nominal + kDelta, 1e-15);
      }
  EXPECT_EQ(carrying, 1);
  EXPECT_EQ(o.base_fig->injected_total(), 0.0);
  EXPECT_EQ(o.base_fig->mpi_operations, o.fig.mpi_operations);

  // What it cost the run.
  const double cost = o.fig.simulated_time - o.base_fig->simulated_time;
  EXPECT_LE(cost, kDelta);
  EXPECT_GT(cost, 0.9 * kDelta);
  EXPECT_EQ(o.fig.wall_time - o.base_fig->wall_time, cost);  // Init at 0 in both runs
}

}  // namespace
}  // namespace waitlab::app
