// Imbalance models, one-off delays and the composite RankPerturber: exact factors, exact
// membership, "exactly once", the order imbalance -> delay -> noise and the injected split.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "models/perturbation.hpp"
#include "models/rng.hpp"
#include "perturb_util.hpp"

namespace waitlab::models {
namespace {

using testing::Context;
using testing::error_of;
using testing::interval;
using testing::make;

// The factor a static imbalance model gives rank r (on a 1 s compute interval in region 0).
double factor(const Perturbation& p, Rank r, trace::RegionId region = 0) {
  return p.for_rank(r)->apply(interval(r, 0, region, 0, 1.0), 1.0);
}

TEST(Imbalance, GradientIsLinearFromOneToOnePlusAmplitude) {
  Context c(5);
  const auto p = make("imbalance_gradient", {{"amplitude", "10%"}}, c.ctx);
  EXPECT_EQ(p->cause(), trace::Cause::Imbalance);
  EXPECT_EQ(factor(*p, 0), 1.0);
  EXPECT_DOUBLE_EQ(factor(*p, 1), 1.025);
  EXPECT_DOUBLE_EQ(factor(*p, 2), 1.05);
  EXPECT_DOUBLE_EQ(factor(*p, 4), 1.1);
  // It scales the duration it is given (the nominal one when it comes first).
  EXPECT_DOUBLE_EQ(p->for_rank(4)->apply(interval(4, 0, 0, 3.0, 2e-3), 2e-3), 2.2e-3);
  EXPECT_EQ(p->describe(),
            "imbalance_gradient: compute slower by a factor rising linearly from 1 on rank 0 to 1.1 on the "
            "last rank");
}

TEST(Imbalance, RegionRestriction) {
  Context c(3);
  const auto p = make("imbalance_gradient", {{"amplitude", "100%"}, {"region", "fixup"}}, c.ctx);
  EXPECT_EQ(factor(*p, 2, 0), 1.0);  // region compute: untouched
  EXPECT_EQ(factor(*p, 2, 1), 2.0);  // region fixup
  EXPECT_EQ(error_of("imbalance_gradient", {{"region", "fixupp"}}, c.ctx),
            "t.yaml:5:3: option 'region' of perturbation imbalance_gradient: 'fixupp' is not a region of the "
            "workload; did you mean 'fixup'? (regions: compute, fixup)");
}

TEST(Imbalance, UniformIsDeterministicInRangeAndHasTheRightMean) {
  Context c(4096, {}, 7);
  const auto p = make("imbalance_uniform", {{"amplitude", "10%"}}, c.ctx);
  double sum = 0;
  std::set<double> distinct;
  for (Rank r = 0; r < 4096; ++r) {
    const double f = factor(*p, r);
    ASSERT_GE(f, 1.0);
    ASSERT_LT(f, 1.1);
    // Exactly the documented draw: 1 + amplitude * uniform of Rng(seed, rank, Imbalance).
    ASSERT_EQ(f, 1 + 0.1 * Rng(7, static_cast<std::uint64_t>(r), Purpose::Imbalance).uniform());
    sum += f;
    distinct.insert(f);
  }
  EXPECT_EQ(distinct.size(), 4096u);
  // Mean of U[1, 1.1) is 1.05; the standard error of 4096 draws is 0.1/sqrt(12)/64 = 4.5e-4 (5 sigma bound).
  EXPECT_NEAR(sum / 4096, 1.05, 5 * 4.5e-4);
  // Same seed: same factors; other seed or stream: others.
  const auto same = make("imbalance_uniform", {{"amplitude", "10%"}}, c.ctx);
  EXPECT_EQ(factor(*same, 17), factor(*p, 17));
  const auto other_stream = make("imbalance_uniform", {{"amplitude", "10%"}, {"stream", "1"}}, c.ctx);
  EXPECT_NE(factor(*other_stream, 17), factor(*p, 17));
  Context c2(4096, {}, 8);
  EXPECT_NE(factor(*make("imbalance_uniform", {{"amplitude", "10%"}}, c2.ctx), 17), factor(*p, 17));
}

TEST(Imbalance, HotspotSphereMembership) {
  Context c(25, {5, 5});
  const auto p = make("imbalance_hotspot", {{"center", "2,2"}, {"radius", "1"}, {"factor", "1.5"}}, c.ctx);
  std::set<Rank> hot;
  for (Rank r = 0; r < 25; ++r) {
    const double f = factor(*p, r);
    if (f != 1.0) {
      EXPECT_EQ(f, 1.5);
      hot.insert(r);
    }
  }
  // (2,2) and its four face neighbours (1,2) (3,2) (2,1) (2,3), row-major: 12, 7, 17, 11, 13.
  EXPECT_EQ(hot, (std::set<Rank>{7, 11, 12, 13, 17}));
  // Radius 1.5 adds the four diagonal neighbours (distance sqrt 2).
  const auto q = make("imbalance_hotspot", {{"center", "2,2"}, {"radius", "1.5"}}, c.ctx);
  int n = 0;
  for (Rank r = 0; r < 25; ++r) n += factor(*q, r) != 1.0;
  EXPECT_EQ(n, 9);
  // A 3-D grid: the centre of a 4x4x4 grid corner (0,0,0) with radius 0 is rank 0 only.
  Context c3(64, {4, 4, 4});
  const auto z = make("imbalance_hotspot", {{"center", "0,0,0"}, {"radius", "0"}}, c3.ctx);
  for (Rank r = 0; r < 64; ++r) EXPECT_EQ(factor(*z, r), r == 0 ? 1.5 : 1.0) << r;
}

TEST(Imbalance, HotspotErrors) {
  Context c(25, {5, 5});
  EXPECT_EQ(error_of("imbalance_hotspot", {{"center", "2,2,2"}, {"radius", "1"}}, c.ctx),
            "t.yaml:5:3: option 'center' of perturbation imbalance_hotspot: needs 2 coordinate(s), one per "
            "dimension "
            "of the process grid 5 x 5, got 3");
  EXPECT_EQ(
      error_of("imbalance_hotspot", {{"center", "2,5"}, {"radius", "1"}}, c.ctx),
      "t.yaml:5:3: option 'center' of perturbation imbalance_hotspot: coordinate 5 of dimension 1 is outside "
      "the process grid 5 x 5");
  EXPECT_EQ(error_of("imbalance_hotspot", {{"center", "2,2"}, {"radius", "1"}, {"factor", "0.5"}}, c.ctx),
            "t.yaml:5:3: option 'factor' of perturbation imbalance_hotspot: must be a slowdown factor >= 1 "
            "(1.1 = 10% "
            "slower), got 0.5");
  EXPECT_EQ(error_of("imbalance_hotspot", {{"center", "2,2"}}, c.ctx),
            "t.yaml:5:3: perturbation 'imbalance_hotspot' needs option 'radius' (radius of the sphere in "
            "grid cells "
            "(0 = the centre only))");
}

TEST(Imbalance, SlowGroupByRanksNodesAndSockets) {
  // 2 nodes x 2 sockets x 2 cores, block placement: rank r on node r/4, socket (r%4)/2.
  PlatformDesc pd;
  pd.kind = PlatformKind::Hierarchical;
  pd.nodes = 2;
  pd.sockets = 2;
  pd.cores = 2;
  Context c(8);
  c.ctx.placement = place(pd, 8);
  const auto slow = [&](const testing::Given& g) {
    const auto p = make("imbalance_slow_group", g, c.ctx);
    std::set<Rank> s;
    for (Rank r = 0; r < 8; ++r)
      if (factor(*p, r) != 1.0) {
        EXPECT_DOUBLE_EQ(factor(*p, r), 1.1);
        s.insert(r);
      }
    return s;
  };
  EXPECT_EQ(slow({{"nodes", "1"}, {"sockets", "0"}}), (std::set<Rank>{4, 5}));  // one socket 10% slower
  EXPECT_EQ(slow({{"sockets", "1"}}), (std::set<Rank>{2, 3, 6, 7}));            // socket 1 of every node
  EXPECT_EQ(slow({{"nodes", "0"}}), (std::set<Rank>{0, 1, 2, 3}));
  EXPECT_EQ(slow({{"ranks", "0,5-6"}}), (std::set<Rank>{0, 5, 6}));
  EXPECT_EQ(slow({{"ranks", "0"}, {"nodes", "1"}, {"sockets", "1"}}), (std::set<Rank>{0, 6, 7}));
  EXPECT_EQ(error_of("imbalance_slow_group", {}, c.ctx),
            "t.yaml:5:3: option 'ranks' of perturbation imbalance_slow_group: the group is empty: give "
            "ranks, nodes "
            "or sockets");
  EXPECT_EQ(
      error_of("imbalance_slow_group", {{"ranks", "3,8"}}, c.ctx),
      "t.yaml:5:3: option 'ranks' of perturbation imbalance_slow_group: rank 8 does not exist (the run has "
      "ranks 0..7)");
  EXPECT_EQ(
      error_of("imbalance_slow_group", {{"nodes", "2"}}, c.ctx),
      "t.yaml:5:3: option 'nodes' of perturbation imbalance_slow_group: node 2 runs no rank (ranks occupy "
      "nodes 0..1)");
}

TEST(Imbalance, PeriodicRegionOnABlockEveryKIterations) {
  Context c(4, {2, 2});
  const auto p = make("imbalance_periodic_region",
                      {{"region", "fixup"},
                       {"factor", "3"},
                       {"every", "3"},
                       {"offset", "1"},
                       {"block_from", "0,0"},
                       {"block_to", "0,1"}},
                      c.ctx);
  const auto f = [&](Rank r, std::int32_t it, trace::RegionId reg) {
    return p->for_rank(r)->apply(interval(r, it, reg, 0, 1.0), 1.0);
  };
  // Block = grid row 0 = ranks 0 and 1; heavier in iterations 1, 4, 7, ... and only in fixup.
  for (std::int32_t it = 0; it < 9; ++it) {
    const double expect = (it % 3 == 1) ? 3.0 : 1.0;
    EXPECT_EQ(f(0, it, 1), expect) << it;
    EXPECT_EQ(f(1, it, 1), expect) << it;
    EXPECT_EQ(f(2, it, 1), 1.0) << it;
    EXPECT_EQ(f(0, it, 0), 1.0) << it;
  }
  EXPECT_EQ(f(0, -1, 1), 1.0);  // outside the iteration loop
  EXPECT_EQ(
      error_of("imbalance_periodic_region", {{"block_from", "0,0"}}, c.ctx),
      "t.yaml:5:3: perturbation 'imbalance_periodic_region' needs option 'region' (the user region that "
      "becomes heavier (e.g. fixup))");
  EXPECT_EQ(
      error_of("imbalance_periodic_region", {{"region", "fixup"}, {"block_from", "0,0"}}, c.ctx),
      "t.yaml:5:3: option 'block_to' of perturbation imbalance_periodic_region: is required with the other "
      "corner of the block (block_from and block_to go together)");
  EXPECT_EQ(error_of("imbalance_periodic_region",
                     {{"region", "fixup"}, {"block_from", "1,0"}, {"block_to", "0,1"}}, c.ctx),
            "t.yaml:5:3: option 'block_to' of perturbation imbalance_periodic_region: coordinate 0 of "
            "dimension 0 is "
            "below block_from's 1");
  EXPECT_EQ(error_of("imbalance_periodic_region", {{"region", "fixup"}, {"every", "0"}}, c.ctx),
            "t.yaml:5:3: option 'every' of perturbation imbalance_periodic_region: must be between 1 and "
            "2147483647, "
            "got 0");
}

TEST(Delay, AppliedExactlyOnceToTheFirstMatchingInterval) {
  Context c(4);
  const auto p = make("delay", {{"rank", "1"}, {"iteration", "3"}, {"duration", "5ms"}}, c.ctx);
  EXPECT_EQ(p->cause(), trace::Cause::Delay);
  EXPECT_EQ(p->describe(), "delay: 5ms added to the first compute interval of rank 1 in iteration 3");
  auto e = p->for_rank(1);
  EXPECT_EQ(e->apply(interval(1, 2, 0, 0.0, 1e-3), 1e-3), 1e-3);
  EXPECT_EQ(e->apply(interval(1, 3, 0, 0.1, 1e-3), 1e-3), 1e-3 + 5e-3);  // first of iteration 3
  EXPECT_EQ(e->apply(interval(1, 3, 1, 0.2, 1e-3), 1e-3), 1e-3);         // second of iteration 3: no
  EXPECT_EQ(e->apply(interval(1, 4, 0, 0.3, 1e-3), 1e-3), 1e-3);
  auto other = p->for_rank(2);
  EXPECT_EQ(other->apply(interval(2, 3, 0, 0.1, 1e-3), 1e-3), 1e-3);
  // With a region: the first interval of that region in the iteration.
  const auto q =
      make("delay", {{"rank", "1"}, {"iteration", "3"}, {"duration", "5ms"}, {"region", "fixup"}}, c.ctx);
  auto f = q->for_rank(1);
  EXPECT_EQ(f->apply(interval(1, 3, 0, 0.1, 1e-3), 1e-3), 1e-3);
  EXPECT_EQ(f->apply(interval(1, 3, 1, 0.2, 1e-3), 1e-3), 6e-3);
  EXPECT_EQ(f->apply(interval(1, 3, 1, 0.3, 1e-3), 1e-3), 1e-3);
}

TEST(Delay, Errors) {
  Context c(64);
  EXPECT_EQ(error_of("delay", {{"rank", "70"}, {"iteration", "3"}, {"duration", "5ms"}}, c.ctx),
            "t.yaml:5:3: option 'rank' of perturbation delay: must be between 0 and 63, got 70");
  EXPECT_EQ(error_of("delay", {{"rank", "1"}, {"iteration", "-1"}, {"duration", "5ms"}}, c.ctx),
            "t.yaml:5:3: option 'iteration' of perturbation delay: must be between 0 and 2147483647, got -1");
  EXPECT_EQ(
      error_of("delay", {{"rank", "1"}, {"iteration", "1"}, {"duration", "-5ms"}}, c.ctx),
      "t.yaml:9:9: option 'duration' of perturbation 'delay': '-5ms' is impossible: a duration cannot be "
      "negative");
}

// An iteration the workload does not have would inject nothing, silently (issue 19); with no
// iteration count known (0) nothing is checked.
TEST(Delay, IterationMustExistInTheWorkload) {
  Context c(64);
  EXPECT_EQ(error_of("delay", {{"rank", "1"}, {"iteration", "99999"}, {"duration", "5ms"}}, c.ctx), "no error");
  c.ctx.iterations = 100;
  EXPECT_EQ(error_of("delay", {{"rank", "1"}, {"iteration", "99999"}, {"duration", "5ms"}}, c.ctx),
            "t.yaml:5:3: option 'iteration' of perturbation delay: iteration 99999 does not exist (the workload has "
            "iterations 0..99)");
  EXPECT_EQ(error_of("delay", {{"rank", "1"}, {"iteration", "100"}, {"duration", "5ms"}}, c.ctx),
            "t.yaml:5:3: option 'iteration' of perturbation delay: iteration 100 does not exist (the workload has "
            "iterations 0..99)");
  EXPECT_EQ(error_of("delay", {{"rank", "1"}, {"iteration", "99"}, {"duration", "5ms"}}, c.ctx), "no error");
  EXPECT_EQ(error_of("imbalance_periodic_region", {{"region", "fixup"}, {"offset", "100"}}, c.ctx),
            "t.yaml:5:3: option 'offset' of perturbation imbalance_periodic_region: iteration 100 does not exist (the "
            "workload has iterations 0..99): no iteration would be heavier");
  EXPECT_EQ(error_of("imbalance_periodic_region", {{"region", "fixup"}, {"offset", "99"}}, c.ctx), "no error");
}

TEST(Perturbations, UnknownModelSuggestsTheClosest) {
  Context c(2);
  Options o("t.yaml:5:3");
  try {
    make_perturbation("dealy", o, c.ctx);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(
        e.what(),
        "t.yaml:5:3: unknown perturbation 'dealy'; did you mean 'delay'? (perturbations: imbalance_uniform "
        "imbalance_gradient imbalance_hotspot imbalance_slow_group imbalance_periodic_region delay "
        "periodic_noise random_noise)");
  }
}

TEST(Perturbations, EmptyLeavesIntervalsNominal) {
  Perturbations none;
  EXPECT_TRUE(none.empty());
  auto rp = none.for_rank(0);
  const auto out = rp->apply(interval(0, 0, 0, 1.0, 2e-3));
  EXPECT_EQ(out.duration, 2e-3);
  EXPECT_EQ(out.injected, (std::array<double, trace::kCauseCount>{}));
}

TEST(Perturbations, OrderImbalanceDelayNoiseAndInjectedSplit) {
  Context c(2);
  Perturbations ps;
  // Added in the reverse order on purpose: the composite applies imbalance, delay, noise.
  ps.add(make("periodic_noise", {{"frequency", "1kHz"}, {"duration", "10us"}, {"phase", "zero"}}, c.ctx));
  ps.add(make("delay", {{"rank", "1"}, {"iteration", "0"}, {"duration", "0.5ms"}}, c.ctx));
  ps.add(make("imbalance_gradient", {{"amplitude", "100%"}}, c.ctx));
  ASSERT_EQ(ps.models().size(), 3u);
  EXPECT_EQ(ps.models()[0]->cause(), trace::Cause::Imbalance);
  EXPECT_EQ(ps.models()[1]->cause(), trace::Cause::Delay);
  EXPECT_EQ(ps.models()[2]->cause(), trace::Cause::Noise);
  auto rp = ps.for_rank(1);
  // Rank 1 (the last): 1ms x 2 = 2ms (+1ms imbalance), + 0.5ms delay = 2.5ms of work starting at 0.5ms, so
  // nominally ending at 3.0ms; detours at 1ms and 2ms fall in it (end 3.02ms), and so does the one at 3.0ms
  // (it starts before the stretched end): +30us of noise, end 3.03ms.
  const auto out = rp->apply(interval(1, 0, 0, 0.5e-3, 1e-3));
  EXPECT_NEAR(out.duration, 2.53e-3, 1e-15);
  EXPECT_DOUBLE_EQ(out.injected[static_cast<std::size_t>(trace::Cause::Imbalance)], 1e-3);
  EXPECT_DOUBLE_EQ(out.injected[static_cast<std::size_t>(trace::Cause::Delay)], 0.5e-3);
  EXPECT_NEAR(out.injected[static_cast<std::size_t>(trace::Cause::Noise)], 30e-6, 1e-15);
  const double sum = out.injected[0] + out.injected[1] + out.injected[2];
  EXPECT_NEAR(sum, out.duration - 1e-3, 1e-18);
  // Rank 0: factor 1, no delay; 1ms from 0.5ms meets the detour at 1ms only.
  auto r0 = ps.for_rank(0);
  const auto o0 = r0->apply(interval(0, 0, 0, 0.5e-3, 1e-3));
  EXPECT_NEAR(o0.duration, 1.01e-3, 1e-15);
  EXPECT_EQ(o0.injected[static_cast<std::size_t>(trace::Cause::Imbalance)], 0.0);
  EXPECT_EQ(o0.injected[static_cast<std::size_t>(trace::Cause::Delay)], 0.0);
}

}  // namespace
}  // namespace waitlab::models
