// The counterfactual footprint of one 20 ms delay under the teaching scenarios' three noise
// levels (scenarios/teaching/noise_decay_{low,mid,high}.yaml: 512 ranks, 220 iterations; issue 34,
// point 4; docs/teaching.md). What the idle-wave tracker calls a decayed wave has not been
// absorbed: it spread out. The figures of the high level are those the issue measured by hand
// (shifts at 78 and 100 ranks, the farthest rank shifted by 1 ms, 17.3 ms at the end).
// Each test simulates the run and its twin (label idlewave: not under the sanitizers).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "analysis/footprint/footprint.hpp"
#include "analysis/waitstate/waitstate.hpp"
#include "app/summary.hpp"
#include "scenarios/scenario.hpp"

namespace waitlab::analysis {
namespace {

const std::string kTeaching = std::string(WAITLAB_SOURCE_DIR) + "/scenarios/teaching/";

IdleWaveResult idle_of(const trace::Trace& t) {
  const auto m = trace::Matching::build(t);
  return idle_waves(t, m, wait_states(t, m));
}

FootprintResult footprint_of(const std::string& level) {
  const auto s = scenarios::load_scenario(kTeaching + "noise_decay_" + level + ".yaml", {"run.footprint=delay"});
  const app::Outcome o = app::simulate_scenario(s, false);
  return footprint(o.result.trace, o.twin->trace, idle_of(o.result.trace), idle_of(o.twin->trace));
}

const FootprintRank& at_offset(const FootprintResult& f, int offset) {
  return f.ranks.at(static_cast<std::size_t>(f.source + offset));
}

// What holds at every level: the delay of rank 256 is what was removed; the ranks are shifted at
// least as far as the tracker followed the wave; injected = reached + absorbed.
void expect_common(const FootprintResult& f) {
  EXPECT_EQ(f.removed, std::vector<std::string>{"delay"});
  EXPECT_EQ(f.source, 256);
  EXPECT_DOUBLE_EQ(f.injected, 0.02);
  EXPECT_DOUBLE_EQ(f.reached_end + f.absorbed, f.injected);
  ASSERT_EQ(f.reach.size(), 4u);
  const FootprintReach& five = f.reach[2];  // 5 %: 1 ms
  EXPECT_DOUBLE_EQ(five.level, 0.05);
  EXPECT_GE(five.down, f.wave_down);
  EXPECT_GE(five.up, f.wave_up);
  // The run is 220 iterations of about 1 ms after the delay in iteration 20: the shift cannot
  // have gone farther than one rank per iteration since.
  EXPECT_LE(f.reach[3].down, 201);
  EXPECT_LE(f.reach[3].up, 201);
}

TEST(FootprintNoise, LowNoiseCarriesTheWholeDelayToTheEnd) {
  const FootprintResult f = footprint_of("low");
  expect_common(f);
  // The tracker follows the wave to the end of the trace (200 ranks each way) and every rank it
  // reached is shifted by more than half the delay; almost all of it reaches the end.
  EXPECT_EQ(f.wave_down, 200);
  EXPECT_EQ(f.wave_up, 200);
  EXPECT_EQ(f.reach[0].down, 200);
  EXPECT_EQ(f.reach[0].up, 200);
  EXPECT_GT(f.reached_fraction(), 0.99);
  EXPECT_LE(f.reached_fraction(), 1.0);
}

TEST(FootprintNoise, MidNoiseStillCarriesTheDelayToTheEnd) {
  const FootprintResult f = footprint_of("mid");
  expect_common(f);
  EXPECT_EQ(f.wave_down, 200);
  EXPECT_EQ(f.wave_up, 200);
  // Not absorbed: about the whole delay reaches the end (a little more, even: the shifted ranks
  // meet the noise process at other points of their computation than in the twin).
  EXPECT_NEAR(f.reached_end, 0.02, 0.001);
  EXPECT_GE(f.reach[1].down, 195);
  EXPECT_GE(f.reach[1].up, 195);
}

TEST(FootprintNoise, HighNoiseDecayedWaveSpreadOutInsteadOfBeingAbsorbed) {
  const FootprintResult f = footprint_of("high");
  expect_common(f);
  // The tracker: the wave decays into the noise after 78 ranks down and 97 up.
  EXPECT_EQ(f.wave_down, 78);
  EXPECT_EQ(f.wave_up, 97);
  // The shift: about 15 ms at 78 ranks, more than 1 ms out to about 163 ranks each way — twice
  // as far down as the tracker's front.
  EXPECT_NEAR(std::abs(at_offset(f, -78).peak_shift), 0.015, 0.001);
  EXPECT_NEAR(std::abs(at_offset(f, 78).peak_shift), 0.016, 0.001);
  EXPECT_NEAR(f.reach[2].down, 163, 3);
  EXPECT_NEAR(f.reach[2].up, 163, 3);
  EXPECT_GE(f.reach[2].down, 2 * f.wave_down);
  // 100 ranks down, the largest idle period is back at the noise level: 2.6 ms against the twin's 1.5 ms.
  EXPECT_NEAR(at_offset(f, -100).largest_idle, 0.0026, 0.0001);
  EXPECT_NEAR(at_offset(f, -100).twin_largest_idle, 0.0015, 0.0001);
  // 17.3 ms of the 20 ms reach the end of the run: 87 %.
  EXPECT_NEAR(f.reached_end, 0.0173, 0.0001);
  EXPECT_NEAR(f.reached_fraction(), 0.866, 0.001);
}

}  // namespace
}  // namespace waitlab::analysis
