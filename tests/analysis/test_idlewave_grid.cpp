// Idle waves tracked in the communication topology: hand-built max-plus stencils on 2D and 3D
// grids read as a replayed trace (no ground truth, no workload: the grid comes from the
// messages), small simulated halo2d/halo3d runs with one delay, two waves meeting on a chain
// (the survivor named and followed), and a rendezvous one-way code whose upstream ranks all
// block in one iteration (at_once). Every expected arrival is the grid (Manhattan) distance.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "analysis/idlewave/idlewave.hpp"
#include "app/summary.hpp"
#include "scenarios/scenario.hpp"
#include "max_plus_traces.hpp"
#include "trace_builder.hpp"

namespace waitlab::analysis {
namespace {

using test::TraceBuilder;
using trace::MpiOp;

using namespace test::max_plus;

IdleWaveResult analyse(const trace::Trace& t) {
  const auto m = trace::Matching::build(t);
  const auto w = wait_states(t, m);
  return idle_waves(t, m, w);
}

// Every rank idles once, δ, in iteration i0 + (grid distance) − 1; the wave reaches every
// rank at its grid distance, 1 hop per iteration, as fast as the model says; each axis front
// holds exactly the ranks on that axis through the source.
void expect_grid_wave(const Grid& g, int r0) {
  constexpr int kI0 = 2;
  const int P = g.ranks();
  int far = 0;
  for (int r = 0; r < P; ++r) far = std::max(far, g.manhattan(r, r0));
  const int iters = kI0 + far + 3;
  const IdleWaveResult res = analyse(max_plus_grid(g, r0, kI0, iters));
  EXPECT_EQ(res.metric, DistanceMetric::Hops);
  EXPECT_EQ(res.grid, g.extents);
  EXPECT_EQ(res.periodic, g.periodic);
  EXPECT_EQ(res.distance, 1);
  EXPECT_EQ(res.sigma, 1);
  ASSERT_EQ(res.periods.size(), static_cast<std::size_t>(P - 1));
  for (const auto& p : res.periods) {
    EXPECT_NEAR(p.seconds, kDelta * 1e-6, 1e-12);
    EXPECT_EQ(p.iteration, kI0 + g.manhattan(p.rank, r0) - 1) << "rank " << p.rank;
  }
  EXPECT_NEAR(res.iteration_s, kExec * 1e-6, 1e-15);
  EXPECT_NEAR(res.predicted_per_s, 1e6 / kExec, 1e-6);
  ASSERT_EQ(res.waves.size(), 1u);
  const Wave& w = res.waves[0];
  EXPECT_EQ(w.source_rank, r0);
  EXPECT_EQ(w.reached, static_cast<std::size_t>(P - 1));
  std::vector<const Front*> fronts = {&w.down, &w.up};
  for (const auto& f : w.axes) fronts.push_back(&f);
  ASSERT_EQ(w.axes.size(), 2 * g.extents.size());
  std::size_t halves = 0;
  for (const Front* f : fronts) {
    if (f->axis < 0) halves += f->points.size();
    for (const auto& p : f->points) {
      EXPECT_EQ(p.distance, g.manhattan(p.rank, r0)) << "rank " << p.rank;
      EXPECT_EQ(p.iteration - w.source_iteration + 1, p.distance) << "rank " << p.rank;
      EXPECT_NEAR(p.amplitude, kDelta * 1e-6, 1e-12);
    }
    EXPECT_EQ(f->stop, FrontStop::Boundary);
    EXPECT_FALSE(f->at_once);
    if (f->points.size() >= 2) {
      EXPECT_NEAR(f->by_iteration.slope, 1.0, 1e-12) << "axis " << f->axis << " direction " << f->direction;
      EXPECT_NEAR(f->by_time.slope, 1e6 / kExec, 1e-6);
      EXPECT_NEAR(f->measured_over_predicted, 1.0, 1e-9);
      EXPECT_EQ(f->decay_s_per_rank, 0.0);
    }
  }
  EXPECT_EQ(halves, static_cast<std::size_t>(P - 1));
  // The axis fronts: the ranks on each axis through the source, on its side.
  const auto c0 = g.coords(r0);
  for (const auto& f : w.axes) {
    const auto a = static_cast<std::size_t>(f.axis);
    int expected = 0;
    for (int r = 0; r < P; ++r) {
      const auto c = g.coords(r);
      bool on = r != r0;
      for (std::size_t d = 0; d < c.size(); ++d) on = on && (d == a || c[d] == c0[d]);
      if (!on) continue;
      int o = c[a] - c0[a];
      if (g.periodic && 2 * std::abs(o) > g.extents[a]) o -= o > 0 ? g.extents[a] : -g.extents[a];
      if ((o < 0 ? -1 : 1) == f.direction) ++expected;
    }
    EXPECT_EQ(f.reach(), expected) << "axis " << f.axis << " direction " << f.direction;
  }
}

TEST(IdleWaveGrid, MaxPlus2DGridFromTheMessages) {
  expect_grid_wave({{7, 5}, false}, 2 * 5 + 3);
}

TEST(IdleWaveGrid, MaxPlus3DPeriodicGridFromTheMessages) {
  expect_grid_wave({{6, 4, 3}, true}, 1 * 12 + 2 * 3 + 1);
}

const char* const kHalo3d = R"(
platform: {type: cluster, nodes: 128, cores: 1, speed: 1Gf, bandwidth: 10GBps, latency: 1us}
workload: {type: halo3d, px: 8, py: 4, pz: 4, iterations: 25, compute: 1ms, bytes: 8B}
perturbations:
  - {type: delay, rank: 45, iteration: 5, duration: 20ms}
run: {seed: 1}
)";

const char* const kHalo2d = R"(
platform: {type: cluster, nodes: 96, cores: 1, speed: 1Gf, bandwidth: 10GBps, latency: 1us}
workload: {type: halo2d, px: 12, py: 8, iterations: 30, compute: 1ms, bytes: 8B}
perturbations:
  - {type: delay, rank: 30, iteration: 4, duration: 20ms}
run: {seed: 1}
)";

// A simulated halo run with one delay: every other rank idles in iteration i0 + (Manhattan
// distance) − 1, the front moves 1.000 hop per iteration, at the model's speed.
void expect_simulated_halo(const char* yaml, const std::vector<int>& extents, Rank r0, int i0) {
  const auto s = scenarios::parse_scenario(yaml, "halo.yaml");
  const app::Outcome o = app::simulate_scenario(s, false);
  const Grid g{extents, false};
  for (bool truth : {true, false}) {
    trace::Trace t = o.result.trace;
    if (!truth) {  // as a replayed trace: no ground truth
      t.has_truth = false;
      for (auto& l : t.locations) l.truth.clear();
    }
    const IdleWaveResult r = analyse(t);
    EXPECT_EQ(r.metric, DistanceMetric::Hops);
    EXPECT_EQ(r.grid, extents);
    ASSERT_EQ(r.waves.size(), 1u) << "truth " << truth;
    const Wave& w = r.waves[0];
    EXPECT_EQ(w.source_rank, r0);
    EXPECT_EQ(w.reached, static_cast<std::size_t>(g.ranks() - 1)) << "truth " << truth;
    for (const Front* f : {&w.down, &w.up}) {
      ASSERT_GE(f->reach(), 10);
      for (const auto& p : f->points) {
        EXPECT_EQ(p.distance, g.manhattan(p.rank, r0));
        EXPECT_EQ(p.iteration, i0 + p.distance - 1) << "rank " << p.rank;
        EXPECT_NEAR(p.amplitude, 0.02, 1e-6);
      }
      EXPECT_NEAR(f->by_iteration.slope, 1.0, 1e-9);
      EXPECT_NEAR(f->measured_over_predicted, 1.0, 1e-3) << f->by_time.slope << " vs " << f->predicted_ranks_per_s;
      EXPECT_NEAR(f->predicted_ranks_per_s, 1.0 / r.iteration_s, 1e-9 / r.iteration_s);
      EXPECT_EQ(f->stop, FrontStop::Boundary);
    }
  }
}

TEST(IdleWaveGrid, SimulatedHalo3dArrivalIsTheGridDistance) {
  expect_simulated_halo(kHalo3d, {8, 4, 4}, 45, 5);
}

TEST(IdleWaveGrid, SimulatedHalo2dArrivalIsTheGridDistance) {
  expect_simulated_halo(kHalo2d, {12, 8}, 30, 4);
}

// A wavefront pipeline: sweep2d on 8×8, rank 27 = (3, 3) delayed 5 ms in iteration 3. Every
// rank waits ~1 ms at fixed points of every iteration (the sweeps fill and drain); the delay
// adds ~5 ms to one of those waits on every other rank, and all of them go on late in the
// delay's own iteration: the four sweeps carry it across the whole grid at the pipeline's
// pace (one block step, ~compute per block, per hop), not one hop per iteration. Expected
// arrivals from the raw data: the same run without the delay, call by call.
const char* const kSweep = R"(
platform: {type: cluster, nodes: 8, cores: 8, bandwidth: 10GBps, latency: 1us}
workload: {type: sweep2d, px: 8, py: 8, iterations: 8, blocks: 4, compute: 100us, bytes: 4KiB}
perturbations:
  - {type: delay, rank: 27, iteration: 3, duration: 5ms}
run: {seed: 1}
)";

TEST(IdleWavePipeline, Sweep2dDelayReachesEveryRankInItsIteration) {
  constexpr Rank kSource = 27;
  constexpr int kIteration = 3;
  auto s = scenarios::parse_scenario(kSweep, "sweep.yaml");
  auto s0 = scenarios::parse_scenario(
      "platform: {type: cluster, nodes: 8, cores: 8, bandwidth: 10GBps, latency: 1us}\n"
      "workload: {type: sweep2d, px: 8, py: 8, iterations: 8, blocks: 4, compute: 100us, bytes: 4KiB}\n"
      "run: {seed: 1}\n",
      "sweep0.yaml");
  const trace::Trace t = app::simulate_scenario(s, false).result.trace;
  const trace::Trace t0 = app::simulate_scenario(s0, false).result.trace;
  const auto m = trace::Matching::build(t), m0 = trace::Matching::build(t0);
  const auto ws = wait_states(t, m), ws0 = wait_states(t0, m0);
  const Grid g{{8, 8}, false};
  // Per rank, the call whose Late Sender waiting grew most over the undelayed run (the call
  // sequence is the same in both), by how much, when its waiting ended, and the iteration of
  // the first compute after it (the iteration in which the rank goes on).
  struct Extra {
    double seconds = 0;
    double end = 0;
    int iteration = -1;
  };
  std::vector<Extra> extra(64);
  for (Rank r = 0; r < 64; ++r) {
    std::vector<double> a(m.calls[static_cast<std::size_t>(r)].size(), 0.0), b(a.size(), 0.0);
    for (const auto& w : ws.instances)
      if (w.rank == r && w.pattern == Pattern::LateSender) a[w.call] += w.seconds;
    for (const auto& w : ws0.instances)
      if (w.rank == r && w.pattern == Pattern::LateSender) b[w.call] += w.seconds;
    std::size_t best = 0;
    for (std::size_t c = 0; c < a.size(); ++c)
      if (a[c] - b[c] > a[best] - b[best]) best = c;
    Extra& e = extra[static_cast<std::size_t>(r)];
    e.seconds = a[best] - b[best];
    // The end of its idle period: the call's Enter plus its whole waiting.
    e.end = t.locations[static_cast<std::size_t>(r)].events[m.calls[static_cast<std::size_t>(r)][best].enter].time + a[best];
    for (const auto& c : t.locations[static_cast<std::size_t>(r)].truth)
      if (c.start >= e.end - 1e-9) {
        e.iteration = c.iteration;
        break;
      }
    if (r == kSource) continue;
    EXPECT_NEAR(e.seconds, 0.005, 10e-6) << "rank " << r;  // the delay, on every other rank
    EXPECT_EQ(e.iteration, kIteration) << "rank " << r;     // all in the delay's iteration
  }
  const IdleWaveResult res = analyse(t);
  EXPECT_TRUE(res.pipeline);
  EXPECT_EQ(res.grid, (std::vector<int>{8, 8}));
  EXPECT_EQ(res.predicted_per_s, 0.0);  // σ·d/T_iter does not apply to a pipeline
  ASSERT_EQ(res.waves.size(), 1u);
  const Wave& w = res.waves[0];
  EXPECT_EQ(w.source_rank, kSource);
  EXPECT_EQ(w.source_iteration, kIteration);
  EXPECT_EQ(w.reached, 63u);
  std::vector<int> seen(64, 0);
  for (const Front* f : {&w.down, &w.up})
    for (const auto& p : f->points) {
      const Extra& e = extra[static_cast<std::size_t>(p.rank)];
      ++seen[static_cast<std::size_t>(p.rank)];
      EXPECT_EQ(p.distance, g.manhattan(p.rank, kSource));
      EXPECT_EQ(p.iteration, kIteration) << "rank " << p.rank;
      EXPECT_NEAR(p.time, e.end, 1e-12) << "rank " << p.rank;  // when it goes on, late
      EXPECT_NEAR(p.amplitude, e.seconds, 10e-6) << "rank " << p.rank;
    }
  for (Rank r = 0; r < 64; ++r) EXPECT_EQ(seen[static_cast<std::size_t>(r)], r == kSource ? 0 : 1) << "rank " << r;
  // Along each axis through the source the ranks go on one block step apart: distance over
  // the ends of their extra waits, fitted from the raw data; 1/(block step) is between
  // 1/(compute + 20 µs) and 1/compute, the model (one hop per iteration of ~6 ms) 40 times less.
  ASSERT_EQ(w.axes.size(), 4u);
  const std::array<int, 4> reach = {3, 4, 3, 4};  // -x, +x, -y, +y from (3, 3)
  for (std::size_t a = 0; a < 4; ++a) {
    const Front& f = w.axes[a];
    ASSERT_EQ(f.reach(), reach[a]) << "axis front " << a;
    std::vector<double> x, y;
    for (int k = 1; k <= reach[a]; ++k) {
      const int dx = a < 2 ? (a == 0 ? -k : k) : 0, dy = a >= 2 ? (a == 2 ? -k : k) : 0;
      const Rank r = g.rank({3 + dx, 3 + dy});
      EXPECT_EQ(f.points[static_cast<std::size_t>(k - 1)].rank, r);
      x.push_back(extra[static_cast<std::size_t>(r)].end);
      y.push_back(k);
    }
    const LineFit raw = fit_line(x, y);
    EXPECT_NEAR(f.by_time.slope, raw.slope, 1e-6 * raw.slope) << "axis front " << a;
    EXPECT_GT(f.by_time.slope, 1.0 / 120e-6);
    EXPECT_LT(f.by_time.slope, 1.0 / 100e-6);
    EXPECT_GT(f.by_time.r2, 0.999);
    EXPECT_EQ(f.by_iteration.slope, 0.0);  // every rank in one iteration
    EXPECT_FALSE(f.at_once);               // yet it travels, at the pipeline's pace
    EXPECT_EQ(f.measured_over_predicted, 0.0);
    EXPECT_EQ(f.stop, FrontStop::Boundary);
  }
}

// Two waves on a chain: rank 30 delayed 20 ms in iteration 20, rank 90 10 ms in iteration 40.
// They meet at rank 70 in iteration 59; the larger survives: its up front goes on to the end
// of the chain with the difference, 10 ms, and names the wave it absorbed; the smaller one's
// down front stops there, met, naming the survivor.
TEST(IdleWaveMeet, TheSurvivorIsNamedAndFollowed) {
  const auto s = scenarios::load_scenario(
      std::string(WAITLAB_SOURCE_DIR) + "/scenarios/teaching/two_delays.yaml",
      {"workload.ranks=128", "platform.nodes=128", "workload.iterations=150", "perturbations[0].rank=30",
       "perturbations[0].iteration=20", "perturbations[1].rank=90", "perturbations[1].iteration=40"});
  const IdleWaveResult r = analyse(app::simulate_scenario(s, false).result.trace);
  ASSERT_EQ(r.waves.size(), 2u);
  const Wave& a = r.waves[0];
  const Wave& b = r.waves[1];
  EXPECT_EQ(a.source_rank, 30);
  EXPECT_EQ(b.source_rank, 90);
  EXPECT_EQ(b.down.stop, FrontStop::Met);
  EXPECT_EQ(b.down.met_wave, 0);
  EXPECT_EQ(b.down.stop_rank, 71);  // 90 − 19: the last rank it reached before rank 70
  EXPECT_EQ(a.up.stop, FrontStop::Boundary);
  EXPECT_EQ(a.up.met_wave, 1);
  ASSERT_EQ(a.up.reach(), 127 - 30);
  for (const auto& p : a.up.points) {
    EXPECT_EQ(p.iteration, 20 + p.distance - 1) << "rank " << p.rank;
    EXPECT_NEAR(p.amplitude, p.rank <= 70 ? 0.02 : 0.01, 1e-5) << "rank " << p.rank;
  }
  EXPECT_NEAR(a.up.by_iteration.slope, 1.0, 1e-9);
  // Crossing the other wave's band is a step, not a slowdown or a decay: the ranks beyond rank
  // 70 start idling 10 ms later and idle 10 ms less; the survivor keeps the model's speed (as the
  // fronts that cross nothing do) and does not decay on either side of the step.
  EXPECT_NEAR(a.up.measured_over_predicted, 1.0, 1e-3);
  EXPECT_NEAR(a.up.by_time.slope, a.down.by_time.slope, 1e-3 * a.down.by_time.slope);
  EXPECT_NEAR(a.up.decay_s_per_rank, 0.0, 1e-8);
  // The run grows by the larger delay only: the periods outside the waves are undisturbed.
  EXPECT_NEAR(r.iteration_s, r.t_exec_s + r.t_comm_s, 1e-5 * r.iteration_s);
}

// A one-way code under rendezvous: the delayed rank's upstream ranks block on their sends in
// the same iteration, microseconds apart: at once, no speed; downstream the wave travels.
TEST(IdleWaveAtOnce, RendezvousOneWayBlocksUpstreamInOneIteration) {
  const auto s = scenarios::load_scenario(
      std::string(WAITLAB_SOURCE_DIR) + "/scenarios/teaching/eager_unidirectional.yaml",
      {"workload.ranks=64", "platform.nodes=64", "workload.iterations=60", "perturbations[0].rank=32",
       "run.eager_threshold=0B"});
  const IdleWaveResult r = analyse(app::simulate_scenario(s, false).result.trace);
  ASSERT_EQ(r.waves.size(), 1u);
  const Wave& w = r.waves[0];
  EXPECT_TRUE(w.down.at_once);
  EXPECT_EQ(w.down.reach(), 32);
  for (const auto& p : w.down.points) EXPECT_EQ(p.iteration, w.source_iteration);
  EXPECT_EQ(w.down.by_time.slope, 0.0);
  EXPECT_EQ(w.down.measured_over_predicted, 0.0);
  EXPECT_FALSE(w.up.at_once);
  EXPECT_EQ(w.up.reach(), 31);
  EXPECT_NEAR(w.up.by_iteration.slope, 1.0, 1e-9);
}

}  // namespace
}  // namespace waitlab::analysis
