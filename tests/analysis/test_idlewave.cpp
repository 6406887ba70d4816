// The idle-wave analysis on hand-built traces whose answer is known exactly: a 1D chain
// that runs the max-plus recurrence of ALGORITHMS.md §7 (bidirectional eager exchange,
// d = 1, messages without transfer time), with one delay.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "analysis/idlewave/idlewave.hpp"
#include "max_plus_traces.hpp"
#include "trace_builder.hpp"

namespace waitlab::analysis {
namespace {

using test::TraceBuilder;
using trace::MpiOp;

using namespace test::max_plus;

IdleWaveResult analyse(const trace::Trace& t, IdleWaveOptions o = {}) {
  const auto m = trace::Matching::build(t);
  const auto w = wait_states(t, m);
  return idle_waves(t, m, w, o);
}

TEST(FitLine, ExactLineAndConstant) {
  const LineFit f = fit_line({0, 1, 2, 3}, {1, 3, 5, 7});
  EXPECT_DOUBLE_EQ(f.slope, 2);
  EXPECT_DOUBLE_EQ(f.intercept, 1);
  EXPECT_DOUBLE_EQ(f.r2, 1);
  const LineFit c = fit_line({0, 1, 2}, {4, 4, 4});
  EXPECT_DOUBLE_EQ(c.slope, 0);
  EXPECT_DOUBLE_EQ(c.intercept, 4);
  const LineFit n = fit_line({0, 1, 2, 3}, {0, 1, 0, 1});
  EXPECT_NEAR(n.slope, 0.2, 1e-15);
  EXPECT_NEAR(n.r2, 0.2, 1e-15);  // sxy² / (sxx·syy) = 1 / (5 · 1)
}

TEST(IdleWave, MaxPlusChainWithoutGroundTruth) {
  const trace::Trace t = max_plus_chain();
  const IdleWaveResult r = analyse(t);
  // Idle periods: exactly the wave, δ once at every other rank, in iteration i0 + |r − r0| − 1.
  ASSERT_EQ(r.periods.size(), static_cast<std::size_t>(kP - 1));
  for (const auto& p : r.periods) {
    EXPECT_NEAR(p.seconds, kDelta * 1e-6, 1e-12) << "rank " << p.rank;
    EXPECT_EQ(p.iteration, kI0 + std::abs(p.rank - kR0) - 1) << "rank " << p.rank;
    EXPECT_EQ(p.pattern, Pattern::LateSender);
  }
  EXPECT_NEAR(r.total_idle, (kP - 1) * kDelta * 1e-6, 1e-12);
  EXPECT_FALSE(r.iterations_from_truth);  // from the Enters of `compute`
  EXPECT_EQ(r.iterations, kIters);
  EXPECT_NEAR(r.t_exec_s, kExec * 1e-6, 1e-15);
  EXPECT_NEAR(r.t_comm_s, 0.0, 1e-15);
  EXPECT_EQ(r.distance, 1);
  EXPECT_TRUE(r.eager);  // sends complete before the late receives are posted
  EXPECT_TRUE(r.bidirectional);
  EXPECT_TRUE(r.phased);  // one receive from each side per call
  EXPECT_EQ(r.sigma, 1);

  // One wave from the earliest of the idle periods that stand out: source rank 4, fronts 4
  // ranks each way.
  ASSERT_EQ(r.waves.size(), 1u);
  const Wave& w = r.waves[0];
  EXPECT_FALSE(w.injected);
  EXPECT_EQ(w.source_rank, kR0);
  EXPECT_NEAR(w.delay, kDelta * 1e-6, 1e-12);
  for (const Front* f : {&w.down, &w.up}) {
    ASSERT_EQ(f->reach(), 4);
    EXPECT_EQ(f->stop, FrontStop::Boundary);
    EXPECT_EQ(f->stop_rank, f->direction < 0 ? 0 : kP - 1);
    EXPECT_NEAR(f->by_iteration.slope, 1.0, 1e-12);
    EXPECT_NEAR(f->by_iteration.r2, 1.0, 1e-12);
    // One rank per iteration of kExec µs: 10,000 ranks/s, as the model says.
    EXPECT_NEAR(f->by_time.slope, 1e6 / kExec, 1e-6);
    EXPECT_NEAR(f->predicted_ranks_per_s, 1e6 / kExec, 1e-6);
    EXPECT_NEAR(f->measured_over_predicted, 1.0, 1e-9);
    EXPECT_NEAR(f->decay_s_per_rank, 0.0, 1e-15);
    for (int k = 0; k < f->reach(); ++k) EXPECT_EQ(f->points[k].distance, k + 1);
  }

  // The matrix holds every idle second, in the right cells (bin = one iteration).
  EXPECT_NEAR(r.matrix.bin, kExec * 1e-6, 1e-15);
  EXPECT_EQ(r.matrix.ranks, static_cast<std::size_t>(kP));
  double sum = 0;
  for (float v : r.matrix.idle) sum += v;
  EXPECT_NEAR(sum, r.total_idle, 1e-9);
  // Rank 5 waits from its exchange of iteration 2 (t = 300 µs) for 500 µs: bins 3..7.
  for (std::size_t b = 0; b < r.matrix.bins; ++b)
    EXPECT_NEAR(r.matrix.at(5, b), b >= 3 && b < 8 ? 100e-6 : 0.0, 1e-9) << "bin " << b;

  EXPECT_FALSE(r.self_sync.slow_group);
}

// With ground truth the wave starts at the injected delay itself: the same fronts, the
// source known exactly; beyond max_waves the smallest delays are left out.
TEST(IdleWave, MaxPlusChainWithGroundTruth) {
  const trace::Trace t = max_plus_chain(kDelta, true);
  const IdleWaveResult r = analyse(t);
  EXPECT_TRUE(r.iterations_from_truth);
  EXPECT_EQ(r.iterations, kIters);
  ASSERT_EQ(r.waves.size(), 1u);
  const Wave& w = r.waves[0];
  EXPECT_TRUE(w.injected);
  EXPECT_EQ(w.source_rank, kR0);
  EXPECT_EQ(w.source_iteration, kI0);
  EXPECT_NEAR(w.onset, kI0 * kExec * 1e-6, 1e-15);
  EXPECT_NEAR(w.source_time, (kI0 * kExec + kExec + kDelta) * 1e-6, 1e-15);
  EXPECT_NEAR(w.delay, kDelta * 1e-6, 1e-15);
  EXPECT_EQ(r.waves_left_out, 0u);
  for (const Front* f : {&w.down, &w.up}) {
    EXPECT_EQ(f->reach(), 4);
    EXPECT_NEAR(f->by_iteration.slope, 1.0, 1e-12);
  }
  IdleWaveOptions none;
  none.max_waves = 0;
  const IdleWaveResult z = analyse(t, none);
  EXPECT_TRUE(z.waves.empty());
  EXPECT_EQ(z.waves_left_out, 1u);
}

// A rank at the end of the chain that idles a little longer tilts the amplitude of a wave that
// does not decay: under 0.1 % of the amplitude over the front it is no decay; above, the
// least-squares slope. The down front reaches distances 1..4 with amplitudes δ, δ, δ, δ + e:
// slope 0.3·e per rank.
TEST(IdleWave, NegligibleTiltIsNoDecay) {
  for (const double e : {0.1, 5.0}) {
    const IdleWaveResult r = analyse(max_plus_chain(kDelta, true, e));
    ASSERT_EQ(r.waves.size(), 1u);
    const Front& down = r.waves[0].down;
    ASSERT_EQ(down.reach(), 4);
    EXPECT_NEAR(down.points.back().amplitude, (kDelta + e) * 1e-6, 1e-12);
    EXPECT_NEAR(down.amplitude.slope, 0.3 * e * 1e-6, 1e-12) << "e " << e;
    // 3 ranks × 0.03 µs = 0.09 µs < 0.5 µs (0.1 % of 500 µs); 3 × 1.5 µs = 4.5 µs is not.
    EXPECT_EQ(down.decay_s_per_rank, e < 1 ? 0.0 : -1.5e-6) << "e " << e;
    EXPECT_EQ(r.waves[0].up.decay_s_per_rank, 0.0);
  }
}

TEST(IdleWave, BinWidthAndThresholdOptions) {
  const trace::Trace t = max_plus_chain();
  IdleWaveOptions o;
  o.bin_seconds = 250e-6;
  o.threshold = 2.0;  // nothing is twice the delay: no front point
  o.sigma = 2;
  o.distance = 3;
  const IdleWaveResult r = analyse(t, o);
  EXPECT_NEAR(r.matrix.bin, 250e-6, 1e-15);
  EXPECT_EQ(r.matrix.bins, static_cast<std::size_t>(std::ceil((t.end_time() - t.begin_time()) / 250e-6 - 1e-9)));
  EXPECT_EQ(r.sigma, 2);
  EXPECT_EQ(r.distance, 3);
  EXPECT_FALSE(r.sigma_inferred);
  ASSERT_FALSE(r.waves.empty());
  for (const auto& w : r.waves) {
    EXPECT_EQ(w.down.reach(), 0);
    EXPECT_EQ(w.up.reach(), 0);
  }
  EXPECT_EQ(r.waves[0].up.stop, FrontStop::Decayed);
  EXPECT_NEAR(r.waves[0].up.predicted_ranks_per_s, 2 * 3 * 1e6 / kExec, 1e-6);
}

TEST(IdleWave, NoDelayNoWave) {
  const IdleWaveResult r = analyse(max_plus_chain(0));
  EXPECT_TRUE(r.periods.empty());
  EXPECT_TRUE(r.waves.empty());
  EXPECT_NEAR(r.t_exec_s, kExec * 1e-6, 1e-15);
}

}  // namespace
}  // namespace waitlab::analysis
