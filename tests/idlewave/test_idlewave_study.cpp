// Idle waves in simulated heat codes, against the theory of ALGORITHMS.md §7 (paper 003 and
// the analytic model v = σ·d/(T_exec + T_comm)): the max-plus oracle exactly, the model's
// speed within 3 %, direction, decay under noise, self-synchronisation behind a slow socket.
// Each test simulates 256–1024 ranks (a few seconds each; label `idlewave`, not run under
// the sanitizers).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "analysis/idlewave/idlewave.hpp"
#include "app/summary.hpp"
#include "scenarios/scenario.hpp"

namespace waitlab::analysis {
namespace {

const std::string kTeaching = std::string(WAITLAB_SOURCE_DIR) + "/scenarios/teaching/";

struct Sim {
  app::Outcome outcome;
  IdleWaveResult idle;
};

IdleWaveResult analyse(const trace::Trace& t) {
  const auto m = trace::Matching::build(t);
  const auto w = wait_states(t, m);
  return idle_waves(t, m, w);
}

Sim simulate(const std::string& scenario, const std::vector<std::string>& overrides) {
  const auto s = scenarios::load_scenario(kTeaching + scenario, overrides);
  Sim r{app::simulate_scenario(s, false), {}};
  r.idle = analyse(r.outcome.result.trace);
  return r;
}

// Start of every iteration on every rank: the start of its first compute interval.
std::vector<std::vector<double>> iteration_starts(const trace::Trace& t) {
  std::vector<std::vector<double>> s(t.ranks());
  for (std::size_t r = 0; r < t.ranks(); ++r)
    for (const auto& c : t.locations[r].truth)
      if (c.iteration == static_cast<std::int32_t>(s[r].size())) s[r].push_back(c.start);
  return s;
}

// The max-plus oracle: non-blocking (bidirectional) eager exchange with every rank up to
// distance d, no noise, one rank per node (every message takes the same time).
void expect_max_plus_oracle(int d) {
  constexpr double kDelta = 0.02;
  constexpr int kRanks = 512, kR0 = 256, kI0 = 20, kIters = 150;
  const auto s = scenarios::load_scenario(
      kTeaching + "single_delay.yaml",
      {"workload.ranks=512", "platform.nodes=512", "workload.mode=nonblocking", "workload.distance=" + std::to_string(d),
       "workload.iterations=150", "perturbations[0].rank=256", "run.baseline=true",
       // 8-byte messages at 1 TB/s: no bandwidth sharing changes a message's time by a ns
       "platform.bandwidth=1TBps",
       // SimGrid rounds completions to 1 ns by default; over 128 iterations that adds up to 8 ns
       "run.timing_precision=0.0001ns"});
  const app::Outcome o = app::simulate_scenario(s, false);
  ASSERT_TRUE(o.baseline.has_value());
  const auto late = iteration_starts(o.result.trace);
  const auto base = iteration_starts(o.baseline->trace);
  ASSERT_EQ(late.size(), static_cast<std::size_t>(kRanks));
  int checked = 0;
  for (int r = 0; r < kRanks; ++r) {
    ASSERT_EQ(late[r].size(), static_cast<std::size_t>(kIters));
    for (int i = 0; i < kIters; ++i) {
      const bool reached = i > kI0 && std::abs(r - kR0) <= d * (i - kI0);
      const double lateness = late[r][i] - base[r][i];
      ASSERT_NEAR(lateness, reached ? kDelta : 0.0, 1e-9) << "rank " << r << " iteration " << i;
      ++checked;
    }
  }
  EXPECT_EQ(checked, kRanks * kIters);
  // The run grows by δ once.
  EXPECT_NEAR(o.fig.wall_time - o.base_fig->wall_time, kDelta, 1e-9);

  // The analysis sees one wave, d ranks per iteration exactly, no decay, both ways to the ends.
  const IdleWaveResult w = analyse(o.result.trace);
  EXPECT_EQ(w.distance, d);
  EXPECT_EQ(w.sigma, 1);
  ASSERT_EQ(w.waves.size(), 1u);
  const Wave& wave = w.waves[0];
  EXPECT_TRUE(wave.injected);
  EXPECT_EQ(wave.source_rank, kR0);
  EXPECT_EQ(wave.source_iteration, kI0);
  EXPECT_NEAR(wave.delay, kDelta, 1e-12);
  // The rank at distance k idles in iteration i0 + ceil(k/d) − 1: in the 130 iterations from
  // i0 on, the fronts get 130·d ranks far, or to the end of the chain.
  for (const Front* f : {&wave.down, &wave.up}) {
    EXPECT_NEAR(f->by_iteration.slope, d, 1e-9) << "direction " << f->direction;
    const int chain = f->direction < 0 ? kR0 : kRanks - 1 - kR0;
    const int reach = std::min(chain, (kIters - kI0) * d);
    EXPECT_EQ(f->reach(), reach);
    EXPECT_EQ(f->stop, reach == chain ? FrontStop::Boundary : FrontStop::EndOfTrace);
    EXPECT_NEAR(f->decay_s_per_rank, 0.0, 1e-12);
    for (const auto& p : f->points) ASSERT_NEAR(p.amplitude, kDelta, 1e-9) << "rank " << p.rank;
  }
}

TEST(IdleWaveStudy, MaxPlusOracleDistance1) {
  expect_max_plus_oracle(1);
}

TEST(IdleWaveStudy, MaxPlusOracleDistance2) {
  expect_max_plus_oracle(2);
}

// The measured speed of both fronts within 3 % of σ·d/(T_exec + T_comm), with σ and d
// inferred from the trace: eager or rendezvous × d = 1, 2 × one phase (non-blocking, all
// neighbours at once) or two phases (right, then left).
struct SpeedCase {
  const char* mode;
  bool rendezvous;
  int distance;
  int sigma;  // what the model says
};

class IdleWaveSpeed : public ::testing::TestWithParam<SpeedCase> {};

TEST_P(IdleWaveSpeed, WithinThreePercentOfTheModel) {
  const SpeedCase c = GetParam();
  std::vector<std::string> o = {"workload.ranks=256",          "platform.nodes=256",
                                "workload.iterations=120",     "perturbations[0].rank=128",
                                "perturbations[0].iteration=10", std::string("workload.mode=") + c.mode,
                                "workload.distance=" + std::to_string(c.distance)};
  if (c.rendezvous) o.emplace_back("run.eager_threshold=0B");
  const Sim r = simulate("single_delay.yaml", o);
  // Only a phased exchange shows whether sends wait for their receivers.
  if (std::string(c.mode) == "two_phase") {
    EXPECT_EQ(r.idle.eager, !c.rendezvous);
  }
  EXPECT_EQ(r.idle.distance, c.distance);
  EXPECT_EQ(r.idle.sigma, c.sigma);
  ASSERT_EQ(r.idle.waves.size(), 1u);
  // Without noise the measured period is the undisturbed T_exec + T_comm (to 5 digits).
  EXPECT_NEAR(r.idle.iteration_s, r.idle.t_exec_s + r.idle.t_comm_s, 1e-5 * r.idle.iteration_s);
  const double model = c.sigma * c.distance / r.idle.iteration_s;
  for (const Front* f : {&r.idle.waves[0].down, &r.idle.waves[0].up}) {
    ASSERT_GE(f->reach(), 20) << "direction " << f->direction;
    EXPECT_NEAR(f->predicted_ranks_per_s, model, 1e-9 * model);
    EXPECT_NEAR(f->measured_over_predicted, 1.0, 0.03)
        << "direction " << f->direction << ": " << f->by_time.slope << " ranks/s, model " << model;
    EXPECT_NEAR(f->by_iteration.slope, c.sigma * c.distance, 0.03 * c.sigma * c.distance);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, IdleWaveSpeed,
    ::testing::Values(SpeedCase{"nonblocking", false, 1, 1}, SpeedCase{"nonblocking", false, 2, 1},
                      SpeedCase{"nonblocking", true, 1, 1}, SpeedCase{"nonblocking", true, 2, 1},
                      SpeedCase{"two_phase", false, 1, 1}, SpeedCase{"two_phase", false, 2, 1},
                      SpeedCase{"two_phase", true, 1, 2}, SpeedCase{"two_phase", true, 2, 2}),
    [](const auto& p) {
      return std::string(p.param.mode) + (p.param.rendezvous ? "_rendezvous" : "_eager") + "_d" +
             std::to_string(p.param.distance);
    });

// Eager one-way exchange: the wave goes downstream (to higher ranks) only.
class IdleWaveUnidirectional : public ::testing::TestWithParam<const char*> {};

TEST_P(IdleWaveUnidirectional, NoUpstreamFront) {
  const Sim r = simulate("eager_unidirectional.yaml",
                         {"workload.ranks=256", "platform.nodes=256", "workload.iterations=100",
                          "perturbations[0].rank=128", "perturbations[0].iteration=10",
                          std::string("workload.mode=") + GetParam()});
  EXPECT_FALSE(r.idle.bidirectional);
  EXPECT_TRUE(r.idle.eager);
  ASSERT_EQ(r.idle.waves.size(), 1u);
  const Wave& w = r.idle.waves[0];
  EXPECT_EQ(w.down.reach(), 0);
  EXPECT_EQ(w.down.stop, FrontStop::Decayed);
  // One rank per iteration from iteration 10 to the last, 99: 90 ranks.
  EXPECT_EQ(w.up.reach(), 90);
  EXPECT_EQ(w.up.stop, FrontStop::EndOfTrace);
  EXPECT_NEAR(w.up.by_iteration.slope, 1.0, 1e-9);
  // Nobody below the delayed rank ever idles for it.
  double below = 0;
  for (const auto& p : r.idle.periods)
    if (p.rank < 128) below = std::max(below, p.seconds);
  EXPECT_LT(below, 1e-6);
}

INSTANTIATE_TEST_SUITE_P(Modes, IdleWaveUnidirectional, ::testing::Values("blocking", "nonblocking"));

// The same delay under random noise of growing mean detour: the decay grows with it, and it
// is zero without noise.
TEST(IdleWaveStudy, DecayGrowsWithTheNoiseAmplitude) {
  const std::vector<std::string> base = {"workload.ranks=512", "platform.nodes=512", "workload.iterations=250",
                                         "perturbations[0].rank=256"};
  std::vector<double> decay;
  for (const char* noise : {"0us", "10us", "30us", "100us"}) {
    std::vector<std::string> o = base;
    o.push_back(std::string("perturbations[1].duration=") + noise);
    const bool quiet = std::string(noise) == "0us";
    const Sim r = simulate(quiet ? "single_delay.yaml" : "noise_decay_mid.yaml", quiet ? base : o);
    ASSERT_EQ(r.idle.waves.size(), 1u) << noise;
    const Wave& w = r.idle.waves[0];
    const double d = (w.down.decay_s_per_rank + w.up.decay_s_per_rank) / 2;
    decay.push_back(d);
    if (quiet) {
      EXPECT_NEAR(w.down.decay_s_per_rank, 0.0, 1e-12);
      EXPECT_NEAR(w.up.decay_s_per_rank, 0.0, 1e-12);
    }
  }
  for (std::size_t i = 1; i < decay.size(); ++i)
    EXPECT_GT(decay[i], decay[i - 1]) << "noise level " << i << ": " << decay[i] << " vs " << decay[i - 1];
  EXPECT_GT(decay[1], 1e-7);
}

// Under random noise (the noise_decay lesson at 256 ranks) the front follows the wave's own
// idle period, one rank per iteration, exactly as far as it really reaches: the rank at
// distance k idles in iteration i0 + k − 1 (its exchange after the iteration the front
// arrives in); the reach, computed here from the idle periods alone, is the last k before
// the first rank whose idle period in that iteration is below the threshold. The speed is
// within 3 % of the model computed from the measured period.
class IdleWaveNoise : public ::testing::TestWithParam<const char*> {};

TEST_P(IdleWaveNoise, FrontFollowsTheWaveToItsRealReach) {
  constexpr int kRanks = 256, kR0 = 128, kI0 = 20, kIters = 200;
  const Sim r = simulate(std::string("noise_decay_") + GetParam() + ".yaml",
                         {"workload.ranks=256", "platform.nodes=256", "workload.iterations=200",
                          "perturbations[0].rank=128", "perturbations[0].iteration=20"});
  const IdleWaveResult& w = r.idle;
  ASSERT_EQ(w.waves.size(), 1u);
  EXPECT_EQ(w.metric, DistanceMetric::Ranks);
  EXPECT_EQ(w.waves[0].source_iteration, kI0);
  // Largest idle period per (rank, iteration).
  std::vector<std::vector<double>> idle(kRanks, std::vector<double>(kIters + 1, 0.0));
  for (const auto& p : w.periods)
    if (p.iteration >= 0 && p.iteration <= kIters)
      idle[static_cast<std::size_t>(p.rank)][static_cast<std::size_t>(p.iteration)] =
          std::max(idle[static_cast<std::size_t>(p.rank)][static_cast<std::size_t>(p.iteration)], p.seconds);
  for (const Front* f : {&w.waves[0].down, &w.waves[0].up}) {
    int reach = 0;
    for (int k = 1;; ++k) {
      const int q = kR0 + f->direction * k, it = kI0 + k - 1;
      if (q < 0 || q >= kRanks || it >= kIters) break;
      if (idle[static_cast<std::size_t>(q)][static_cast<std::size_t>(it)] < w.threshold_s) break;
      reach = k;
    }
    EXPECT_GE(reach, 40) << GetParam();
    ASSERT_EQ(f->reach(), reach) << GetParam() << " direction " << f->direction;
    for (int k = 1; k <= reach; ++k) {
      const FrontPoint& p = f->points[static_cast<std::size_t>(k - 1)];
      EXPECT_EQ(p.rank, kR0 + f->direction * k);
      EXPECT_EQ(p.iteration, kI0 + k - 1) << "rank " << p.rank;
      EXPECT_DOUBLE_EQ(p.amplitude, idle[static_cast<std::size_t>(p.rank)][static_cast<std::size_t>(p.iteration)]);
    }
    EXPECT_NEAR(f->by_iteration.slope, 1.0, 1e-9);
    EXPECT_NEAR(f->predicted_ranks_per_s, 1.0 / w.iteration_s, 1e-9 / w.iteration_s);
    EXPECT_NEAR(f->measured_over_predicted, 1.0, 0.03)
        << GetParam() << " direction " << f->direction << ": " << f->by_time.slope << " ranks/s, period "
        << w.iteration_s;
    EXPECT_GT(f->decay_s_per_rank, 0);
  }
  // The measured period: the mean iteration (from the ground truth) over the iterations no
  // wave passed: without the source's delayed iteration and those holding an idle period of
  // at least the threshold (every front point among them).
  const auto starts = iteration_starts(r.outcome.result.trace);
  double sum = 0;
  std::size_t n = 0;
  for (int q = 0; q < kRanks; ++q) {
    const auto& s = starts[static_cast<std::size_t>(q)];
    for (std::size_t k = 1; k + 1 < s.size(); ++k) {
      // Struck: the source's delayed iteration, and any with an idle period of the wave's size.
      bool struck = (q == kR0 && static_cast<int>(k) == kI0) || idle[static_cast<std::size_t>(q)][k] >= w.threshold_s;
      if (struck) continue;
      sum += s[k + 1] - s[k];
      ++n;
    }
  }
  EXPECT_NEAR(w.iteration_s, sum / static_cast<double>(n), 1e-12);
  // Noise makes the iterations longer than the undisturbed T_exec + T_comm.
  EXPECT_GT(w.iteration_s, w.t_exec_s + w.t_comm_s);
}

INSTANTIATE_TEST_SUITE_P(Levels, IdleWaveNoise, ::testing::Values("low", "mid", "high"));

// A socket 10 % slower: the fast ranks self-synchronise to it; without it, nothing.
TEST(IdleWaveStudy, SelfSynchronisationBehindASlowSocket) {
  const std::vector<std::string> base = {"workload.ranks=512", "platform.nodes=16", "workload.iterations=120"};
  const Sim slow = simulate("slow_socket.yaml", base);
  const SelfSync& s = slow.idle.self_sync;
  EXPECT_TRUE(s.slow_group);
  EXPECT_TRUE(s.detected);
  ASSERT_EQ(s.slow_ranks.size(), 256u);
  for (auto r : s.slow_ranks) EXPECT_EQ((r / 16) % 2, 1) << r;  // socket 1 of every node
  EXPECT_NEAR(s.t_fast, 0.001, 1e-9);
  EXPECT_NEAR(s.t_slow, 0.0011, 1e-9);
  EXPECT_NEAR(s.fast_idle_per_iteration, s.expected_idle, 0.25 * s.expected_idle);
  // Neighbouring fast ranks idle one after the other, about an exchange's time apart.
  EXPECT_GT(s.neighbour_phase_shift, 0);
  EXPECT_LT(s.neighbour_phase_shift, s.expected_idle * 2);
  EXPECT_GE(s.phase_spread, s.neighbour_phase_shift);
  EXPECT_TRUE(slow.idle.waves.empty());

  std::vector<std::string> o = base;
  o.emplace_back("perturbations[0].factor=1");
  const Sim even = simulate("slow_socket.yaml", o);
  EXPECT_FALSE(even.idle.self_sync.slow_group);
  EXPECT_FALSE(even.idle.self_sync.detected);

  // The idle time the slow group adds: the fast ranks' idle per iteration over the second
  // half of the run, less what the same ranks idle in the run without the slow group (the
  // baseline, which the analysis estimates from the slow ranks' own idle time).
  const auto fast_idle = [&](const IdleWaveResult& r) {
    const std::int32_t n = r.iterations, half = n / 2, last = n - 1;
    double sum = 0;
    for (const auto& p : r.periods)
      if (p.iteration >= half && p.iteration < last &&
          !std::binary_search(s.slow_ranks.begin(), s.slow_ranks.end(), p.rank))
        sum += p.seconds;
    return sum / static_cast<double>((512 - s.slow_ranks.size()) * static_cast<std::size_t>(last - half));
  };
  const double raw = fast_idle(slow.idle), baseline = fast_idle(even.idle);
  EXPECT_NEAR(s.fast_idle_raw_per_iteration, raw, 1e-12);
  EXPECT_GT(baseline, 1e-6);  // the run without a slow group waits too: a blocking exchange
  EXPECT_NEAR(s.baseline_idle_per_iteration, baseline, 0.01 * s.expected_idle);
  EXPECT_NEAR(s.fast_idle_per_iteration, raw - baseline, 0.01 * s.expected_idle)
      << "added " << raw - baseline << " s, reported " << s.fast_idle_per_iteration << " s";
  EXPECT_NEAR(s.fast_idle_per_iteration, s.expected_idle, 0.01 * s.expected_idle);
}

// The lecture's scenarios (docs/teaching.md): each loads, runs the idle-wave analysis and
// has 256 to 4096 ranks (small enough to run live: each in seconds, docs/teaching.md).
TEST(TeachingScenarios, LoadWithTheIdleWaveAnalysis) {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(kTeaching))
    if (e.path().extension() == ".yaml") files.push_back(e.path().string());
  EXPECT_EQ(files.size(), 11u);
  for (const auto& f : files) {
    const auto s = scenarios::load_scenario(f);
    const auto& a = s.outputs.analyses;
    EXPECT_NE(std::find(a.begin(), a.end(), "idlewave"), a.end()) << f;
    const auto& o = s.workload.options;  // a chain's ranks, or a process grid's px × py × pz
    const double ranks = o.has("ranks") ? o.number("ranks") : o.number("px") * o.number("py") * o.number("pz");
    EXPECT_GE(ranks, 256) << f;
    EXPECT_LE(ranks, 4096) << f;
  }
}

}  // namespace
}  // namespace waitlab::analysis
