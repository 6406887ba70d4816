// OS noise: the stretch rule with hand-computed values, detours in progress, absorbed
// detours, long gaps, an independent reference for random noise, reproducibility, per-node
// timelines, rates and mean durations within statistical bounds, and the error messages.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "models/rng.hpp"
#include "perturb_util.hpp"

namespace waitlab::models {
namespace {

using testing::Context;
using testing::error_of;
using testing::Given;
using testing::interval;
using testing::make;

// Extra time noise adds to an interval [start, start + d) of rank r.
double stretch(RankEffect& e, double start, double d, Rank r = 0) {
  return e.apply(interval(r, 0, 0, start, d), d) - d;
}

TEST(PeriodicNoise, StretchRuleByHand) {
  Context c(1);
  const auto p =
      make("periodic_noise", {{"frequency", "1kHz"}, {"duration", "10us"}, {"phase", "zero"}}, c.ctx);
  EXPECT_EQ(p->cause(), trace::Cause::Noise);
  EXPECT_EQ(p->describe(), "periodic_noise: 10us every 1ms (1% of the CPU) per rank, phase 0");
  auto e = p->for_rank(0);
  // [0.5ms, 3.0ms): detours at 1ms and 2ms fall in it (end 3.02ms), the one at 3.0ms starts before the
  // stretched end and counts too (end 3.03ms); the one at 4ms does not.
  EXPECT_NEAR(stretch(*e, 0.5e-3, 2.5e-3), 30e-6, 1e-15);
  // Detours while the rank waits in MPI (3.03ms .. 5.5ms: those at 4ms and 5ms) are absorbed.
  EXPECT_NEAR(stretch(*e, 5.5e-3, 0.4e-3), 0.0, 0.0);
  // A detour in progress at t counts with its remaining part: t = 6.005ms is 5us into the detour at 6ms.
  EXPECT_NEAR(stretch(*e, 6.005e-3, 100e-6), 5e-6, 1e-15);
  // A long gap (a rank blocked for 1000 s) is skipped in O(1); the detour at 1000.001 s is met.
  EXPECT_NEAR(stretch(*e, 1000.0002, 1e-3), 10e-6, 1e-12);
  // Ten thousand back-to-back intervals of 0.1 ms: each millisecond's detour is met exactly once.
  double t = 2000.0, total = 0;
  for (int i = 0; i < 10000; ++i) {
    const double extra = stretch(*e, t, 1e-4);
    total += extra;
    t += 1e-4 + extra;
  }
  // 1 s + the stolen time of work from t = 2000 s: ~1010 detours (work 1 s, 1% stolen).
  EXPECT_NEAR(total, 1010 * 10e-6, 2 * 10e-6);
}

TEST(PeriodicNoise, IntervalsAreHalfOpenAndEmptyIntervalsUntouched) {
  Context c(1);
  const auto p =
      make("periodic_noise", {{"frequency", "1Hz"}, {"duration", "10ms"}, {"phase", "zero"}}, c.ctx);
  // [0.25, 1.0) ends exactly where the detour at 1 s starts: not stretched.
  EXPECT_EQ(stretch(*p->for_rank(0), 0.25, 0.75), 0.0);
  // [0.005, ...) starts inside the detour [0, 0.01): 5 ms of it remain.
  EXPECT_NEAR(stretch(*p->for_rank(0), 0.005, 0.5), 0.005, 1e-15);
  // No work, nothing to stretch, even inside a detour.
  EXPECT_EQ(stretch(*p->for_rank(0), 0.005, 0.0), 0.0);
}

TEST(PeriodicNoise, RandomPhaseIsTheDocumentedDrawPerRankOrNode) {
  Context c(4, {}, 99);
  const auto p =
      make("periodic_noise", {{"frequency", "1kHz"}, {"duration", "10us"}}, c.ctx);  // phase random
  for (Rank r = 0; r < 4; ++r) {
    const double phase = Rng(99, static_cast<std::uint64_t>(r), Purpose::PeriodicNoise).uniform() / 1000.0;
    ASSERT_GE(phase, 0.0);
    ASSERT_LT(phase, 1e-3);
    auto e = p->for_rank(r);
    EXPECT_NEAR(stretch(*e, phase, 0.5e-3), 10e-6, 1e-15) << r;           // starts with a detour
    EXPECT_NEAR(stretch(*e, phase + 0.9e-3, 0.2e-3), 10e-6, 1e-15) << r;  // meets the next one
    EXPECT_NEAR(stretch(*e, phase + 1.2e-3, 0.2e-3), 0.0, 0.0) << r;      // between two detours
  }
  // Node scope: ranks 0,1 on node 0 and 2,3 on node 1 share their node's phase (key = node).
  PlatformDesc pd;
  pd.nodes = 2;
  pd.cores = 2;
  c.ctx.placement = place(pd, 4);
  const auto q =
      make("periodic_noise", {{"frequency", "1kHz"}, {"duration", "10us"}, {"scope", "node"}}, c.ctx);
  for (Rank r = 0; r < 4; ++r) {
    const double phase =
        Rng(99, static_cast<std::uint64_t>(r / 2), Purpose::PeriodicNoise).uniform() / 1000.0;
    EXPECT_NEAR(stretch(*q->for_rank(r), phase, 0.5e-3), 10e-6, 1e-15) << r;
  }
}

// Random phase above 1/f - duration: the detour that started before 0 (k = -1, at
// phase - 1/f) still runs at t = 0 and stretches an interval starting at 0 by its rest.
TEST(PeriodicNoise, DetourRunningAtTimeZeroCounts) {
  Context c(8, {}, 99);
  // 1 kHz, 0.6 ms: detours [phase - 1ms, phase - 0.4ms), [phase, phase + 0.6ms), ...
  const auto p = make("periodic_noise", {{"frequency", "1kHz"}, {"duration", "600us"}}, c.ctx);
  // Rank 0 by hand: u = 0.6581736876..., phase 0.65817 ms, so detour -1 runs until 0.25817 ms;
  // [0, 0.1ms) takes 0.1 ms + 0.25817 ms, ending at 0.35817 ms, before detour 0 at 0.65817 ms.
  const double phase0 = Rng(99, 0, Purpose::PeriodicNoise).uniform() / 1000.0;
  ASSERT_NEAR(phase0, 0.6581736876e-3, 1e-13);
  EXPECT_NEAR(stretch(*p->for_rank(0), 0.0, 0.1e-3), 0.2581736876e-3, 1e-13);
  int running_at_zero = 0;
  for (Rank r = 0; r < 8; ++r) {
    const double phase = Rng(99, static_cast<std::uint64_t>(r), Purpose::PeriodicNoise).uniform() / 1000.0;
    // [0, 0.1ms): the rest of detour -1 if phase > 0.4ms (the stretched end phase - 0.3ms is
    // still before detour 0); the whole detour 0 if it starts inside; nothing otherwise.
    const double want = phase > 0.4e-3 ? phase - 0.4e-3 : phase < 0.1e-3 ? 0.6e-3 : 0.0;
    EXPECT_NEAR(stretch(*p->for_rank(r), 0.0, 0.1e-3, r), want, 1e-15) << r << " phase " << phase;
    running_at_zero += phase > 0.4e-3;
  }
  // Seed 99: ranks 0, 1, 4, 5, 7 start inside detour -1, ranks 2, 3, 6 between detours.
  EXPECT_EQ(running_at_zero, 5);
}

// Independent reference for random noise: the documented generator (exponential arrivals,
// then the length; a detour arriving during another starts when it ends) and the stretch
// rule as a fixpoint: end = t + d + sum over detours starting before end of their part after t.
struct Detour {
  double start, end;
};
std::vector<Detour> reference_timeline(std::uint64_t seed, std::uint64_t key, double mean_interval,
                                       const std::string& law, double dur, double shape, double horizon) {
  Rng rng(seed, key, Purpose::RandomNoise);
  std::vector<Detour> out;
  double arrival = 0, busy = 0;
  while (busy < horizon) {
    arrival += rng.exponential(mean_interval);
    double len = dur;
    if (law == "exponential") len = rng.exponential(dur);
    if (law == "pareto") len = rng.pareto(dur, shape);
    const double s = std::max(arrival, busy);
    busy = s + len;
    out.push_back({s, busy});
  }
  return out;
}
double reference_stretch(const std::vector<Detour>& ds, double t, double d) {
  double end = t + d;
  for (;;) {
    double stolen = 0;
    for (const auto& x : ds)
      if (x.start < end && x.end > t) stolen += x.end - std::max(x.start, t);
    const double next = t + d + stolen;
    if (next == end) return stolen;
    end = next;
  }
}

TEST(RandomNoise, InjectedTimeEqualsTheDetoursThatFallInTheInterval) {
  for (const std::string law : {"fixed", "exponential", "pareto"}) {
    Context c(8, {}, 5);
    const auto p =
        make("random_noise", {{"rate", "2kHz"}, {"duration", "20us"}, {"distribution", law}}, c.ctx);
    const Rank r = 3;
    const auto ref = reference_timeline(5, r, 0.5e-3, law, 20e-6, 2.5, 1.0);
    auto e = p->for_rank(r);
    double t = 0;
    int hit = 0;
    for (int i = 0; i < 2000; ++i) {
      const double d = 50e-6 * (1 + i % 7);  // 50..350 us of work, separated by 30 us "MPI waits"
      const double got = stretch(*e, t, d, r);
      const double want = reference_stretch(ref, t, d);
      ASSERT_NEAR(got, want, 1e-12) << law << " interval " << i << " at " << t;
      hit += got > 0;
      t += d + got + 30e-6;
    }
    EXPECT_GT(hit, 500) << law;  // the comparison saw plenty of detours
  }
}

std::vector<double> pattern(const Perturbation& p, Rank r) {
  auto e = p.for_rank(r);
  std::vector<double> v;
  for (int i = 0; i < 200; ++i) v.push_back(stretch(*e, i * 1e-3 + 0.1e-3, 0.5e-3, r));
  return v;
}

TEST(RandomNoise, ReproducibleAndIndependentPerRankSeedStreamOrNode) {
  Context c(4, {}, 11);
  const Given g{{"rate", "1kHz"}, {"duration", "20us"}};
  const auto a = make("random_noise", g, c.ctx);
  const auto b = make("random_noise", g, c.ctx);
  EXPECT_EQ(pattern(*a, 0), pattern(*b, 0));  // same seed: the same detours
  EXPECT_NE(pattern(*a, 0), pattern(*a, 1));  // other rank: others
  Given g2 = g;
  g2.push_back({"stream", "1"});
  EXPECT_NE(pattern(*make("random_noise", g2, c.ctx), 0), pattern(*a, 0));
  Context other(4, {}, 12);
  EXPECT_NE(pattern(*make("random_noise", g, other.ctx), 0), pattern(*a, 0));
  // Node scope: the ranks of a node share one timeline.
  PlatformDesc pd;
  pd.nodes = 2;
  pd.cores = 2;
  c.ctx.placement = place(pd, 4);
  Given gn = g;
  gn.push_back({"scope", "node"});
  const auto n = make("random_noise", gn, c.ctx);
  EXPECT_EQ(pattern(*n, 0), pattern(*n, 1));
  EXPECT_EQ(pattern(*n, 2), pattern(*n, 3));
  EXPECT_NE(pattern(*n, 0), pattern(*n, 2));
  EXPECT_EQ(pattern(*n, 1), pattern(*a, 0));  // node 0's timeline is keyed like rank 0's
}

TEST(RandomNoise, RateAndMeanDurationWithinStatisticalBounds) {
  Context c(1, {}, 2024);
  // Fixed 1 us detours at 1 kHz over ~100 s of work: the count is Poisson(1000 * 100.1), sd 316.
  {
    const auto p = make("random_noise", {{"rate", "1kHz"}, {"duration", "1us"}}, c.ctx);
    const double extra = stretch(*p->for_rank(0), 0.0, 100.0);
    const double count = extra / 1e-6;
    EXPECT_NEAR(count, 1000 * (100 + extra), 5 * 316.0);
  }
  // Pareto(1 us, 2.5): mean 5/3 us, E[X^2] = 5 us^2; total over Poisson arrivals in D s has mean
  // 1000 D E[X] and sd sqrt(1000 D E[X^2]) = 7.1e-4 s.
  {
    const auto p =
        make("random_noise", {{"interval", "1ms"}, {"duration", "1us"}, {"distribution", "pareto"}}, c.ctx);
    const double extra = stretch(*p->for_rank(0), 0.0, 100.0);
    EXPECT_NEAR(extra, 1000 * (100 + extra) * (5.0 / 3.0) * 1e-6, 5 * 7.1e-4);
  }
  // Exponential, mean 2 us: E[X^2] = 8 us^2, sd sqrt(1e5 * 8e-12) = 8.9e-4 s.
  {
    const auto p =
        make("random_noise", {{"rate", "1kHz"}, {"duration", "2us"}, {"distribution", "exponential"}}, c.ctx);
    const double extra = stretch(*p->for_rank(0), 0.0, 100.0);
    EXPECT_NEAR(extra, 1000 * (100 + extra) * 2e-6, 5 * 8.9e-4);
  }
}

TEST(Noise, Errors) {
  Context c(4);
  EXPECT_EQ(
      error_of("periodic_noise", {{"frequency", "1kHz"}, {"duration", "1ms"}}, c.ctx),
      "t.yaml:5:3: option 'duration' of perturbation periodic_noise: 1ms is not shorter than the period 1ms "
      "(1/frequency): the CPU would never run");
  EXPECT_EQ(error_of("periodic_noise", {{"frequency", "0Hz"}, {"duration", "1us"}}, c.ctx),
            "t.yaml:5:3: option 'frequency' of perturbation periodic_noise: must be greater than 0, got 0Hz");
  // At most one detour per microsecond: every detour in a compute interval is visited (issue 19).
  EXPECT_EQ(error_of("periodic_noise", {{"frequency", "1GHz"}, {"duration", "0s"}}, c.ctx),
            "t.yaml:5:3: option 'frequency' of perturbation periodic_noise: must be at most 1MHz (one detour per "
            "microsecond), got 1GHz");
  EXPECT_EQ(error_of("random_noise", {{"rate", "2MHz"}, {"duration", "0s"}}, c.ctx),
            "t.yaml:5:3: option 'rate' of perturbation random_noise: must be at most 1MHz (one detour per "
            "microsecond), got 2MHz");
  EXPECT_EQ(error_of("random_noise", {{"interval", "100ns"}, {"duration", "0s"}}, c.ctx),
            "t.yaml:5:3: option 'interval' of perturbation random_noise: must be at least 1us (at most one detour "
            "per microsecond), got 100ns");
  EXPECT_EQ(error_of("periodic_noise", {{"frequency", "1MHz"}, {"duration", "0s"}}, c.ctx), "no error");
  EXPECT_EQ(error_of("periodic_noise", {{"frequency", "1kHz"}}, c.ctx),
            "t.yaml:5:3: perturbation 'periodic_noise' needs option 'duration' (length of each detour (e.g. "
            "10us))");
  EXPECT_EQ(
      error_of("periodic_noise", {{"frequency", "1kHz"}, {"duration", "1us"}, {"scope", "node"}}, c.ctx),
      "t.yaml:5:3: option 'scope' of perturbation periodic_noise: 'node' needs the platform's rank "
      "placement, "
      "which is not known here");
  EXPECT_EQ(
      error_of("random_noise", {{"duration", "1us"}}, c.ctx),
      "t.yaml:5:3: option 'rate' of perturbation random_noise: is required (or 'interval', the mean time "
      "between detours)");
  EXPECT_EQ(
      error_of("random_noise", {{"rate", "1kHz"}, {"interval", "1ms"}, {"duration", "1us"}}, c.ctx),
      "t.yaml:5:3: option 'rate' of perturbation random_noise: conflicts with 'interval' (both give the "
      "arrival rate): give only one");
  EXPECT_EQ(
      error_of("random_noise",
               {{"rate", "1kHz"}, {"duration", "1us"}, {"distribution", "pareto"}, {"shape", "1"}}, c.ctx),
      "t.yaml:5:3: option 'shape' of perturbation random_noise: must be greater than 1 (the mean detour is "
      "infinite otherwise)");
  EXPECT_EQ(error_of("random_noise", {{"rate", "1kHz"}, {"duration", "2ms"}}, c.ctx),
            "t.yaml:5:3: option 'duration' of perturbation random_noise: the mean detour 2ms is not shorter "
            "than the "
            "mean time 1ms between detours: the CPU would never run");
  // `shape` belongs to the pareto law: with another it would do nothing, and is an error.
  EXPECT_EQ(error_of("random_noise", {{"rate", "1kHz"}, {"duration", "1us"}, {"shape", "3"}}, c.ctx),
            "t.yaml:5:3: option 'shape' of perturbation random_noise: belongs to the pareto distribution only "
            "(this one is fixed): remove it, or set distribution: pareto");
  EXPECT_EQ(error_of("random_noise",
                     {{"rate", "1kHz"}, {"duration", "1us"}, {"distribution", "exponential"}, {"shape", "3"}},
                     c.ctx),
            "t.yaml:5:3: option 'shape' of perturbation random_noise: belongs to the pareto distribution only "
            "(this one is exponential): remove it, or set distribution: pareto");
  EXPECT_EQ(error_of("random_noise", {{"rate", "1kHz"}, {"duration", "1us"}, {"distribution", "pareto"}}, c.ctx),
            "no error");  // shape 2.5
  EXPECT_EQ(
      error_of("random_noise",
               {{"rate", "1kHz"}, {"duration", "1us"}, {"distribution", "pareto"}, {"shape", "0"}}, c.ctx),
      "t.yaml:5:3: option 'shape' of perturbation random_noise: must be greater than 0, got 0");
  EXPECT_EQ(
      error_of("random_noise", {{"rate", "1kHz"}, {"duration", "1us"}, {"distribution", "gauss"}}, c.ctx),
      "t.yaml:9:9: option 'distribution' of perturbation 'random_noise': 'gauss' is not one of fixed, "
      "exponential, pareto");
}

}  // namespace
}  // namespace waitlab::models
