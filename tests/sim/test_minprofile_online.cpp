// The online minimum-duration estimator: fed during the simulation with what a PMPI wrapper
// sees (durations, call paths, bytes, roots), it equals the offline estimator on the recorded
// trace (also after a .wlt round trip), and its test at MPI_Wait/MPI_Waitall entry changes
// no timestamp.
#include <gtest/gtest.h>

#include <sstream>

#include "analysis/minprofile/minprofile.hpp"
#include "analysis/trace/match.hpp"
#include "analysis/trace/wlt.hpp"
#include "sim_util.hpp"

namespace waitlab::sim::test {
namespace {

struct Case {
  std::string type;
  Given options;
  Semantics semantics = Semantics::Waitlab;
};

class OnlineEstimator : public ::testing::TestWithParam<Case> {};

TEST_P(OnlineEstimator, EqualsTheOfflineEstimateOfTheRecordedTrace) {
  const auto& c = GetParam();
  const auto platform = cluster(64);
  const auto w = workload(c.type, c.options);
  models::Perturbations ps;
  const auto ctx = context(*w, platform, 7);
  add(ps, "imbalance_gradient", {{"amplitude", "30%"}}, ctx);
  add(ps, "random_noise", {{"rate", "2kHz"}, {"duration", "20us"}, {"distribution", "exponential"}}, ctx);
  auto o = options(c.semantics);
  o.seed = 7;
  o.minprofile = true;
  const auto run = simulate(platform, *w, ps, o);
  ASSERT_TRUE(run.estimate.has_value());
  const auto& online = *run.estimate;

  // Through the .wlt format, as `waitlab analyze` reads it.
  std::stringstream buf;
  trace::write_wlt(run.trace, buf);
  const auto back = trace::read_wlt(buf, "memory");
  const auto offline = analysis::minprofile_estimate(back, trace::Matching::build(back));

  EXPECT_EQ(minprofile::to_csv(online), minprofile::to_csv(offline));
  EXPECT_EQ(minprofile::to_json(online, "x"), minprofile::to_json(offline, "x"));
  EXPECT_EQ(online.ranks, static_cast<std::size_t>(w->ranks()));
  EXPECT_EQ(online.wall_time, run.trace.end_time() - run.trace.begin_time());
  // The estimate is not empty: the imbalance makes ranks wait.
  double waiting = 0;
  for (const auto& t : online.totals()) waiting += t.waiting[0];
  EXPECT_GT(waiting, 0);
  EXPECT_TRUE(online.computed[static_cast<std::size_t>(minprofile::Variant::ExcludeTested)]);
}

INSTANTIATE_TEST_SUITE_P(
    Workloads, OnlineEstimator,
    ::testing::Values(Case{"halo2d", {{"ranks", "64"}, {"iterations", "6"}, {"bytes", "128KiB"}}},
                      Case{"halo2d", {{"ranks", "64"}, {"iterations", "6"}, {"bytes", "1KiB"}}, Semantics::SmpiDefault},
                      Case{"sweep2d", {{"px", "8"}, {"py", "8"}, {"iterations", "2"}}},
                      Case{"heat1d", {{"ranks", "64"}, {"iterations", "10"}, {"mode", "nonblocking"}}},
                      Case{"allreduce_loop", {{"ranks", "64"}, {"iterations", "10"}, {"halo", "1KiB"}}},
                      Case{"bcast_reduce", {{"ranks", "64"}, {"iterations", "10"}}}),
    [](const ::testing::TestParamInfo<Case>& p) {
      return p.param.type + (p.param.semantics == Semantics::SmpiDefault ? "_smpi_default" : "") + "_" +
             std::to_string(p.index);
    });

// The test at entry costs no simulated time: the trace is the one of a run without the
// estimator, except for the flags it sets on MPI_Waitall's Enter events.
TEST(OnlineEstimator, TestAtEntryChangesNoTimestamp) {
  const auto platform = cluster(64);
  const auto w = workload("halo2d", {{"ranks", "64"}, {"iterations", "8"}, {"bytes", "2KiB"}});
  models::Perturbations ps;
  add(ps, "random_noise", {{"rate", "5kHz"}, {"duration", "50us"}, {"distribution", "exponential"}},
      context(*w, platform, 3));
  auto o = options();
  o.seed = 3;
  const auto plain = simulate(platform, *w, ps, o);
  o.minprofile = true;
  auto profiled = simulate(platform, *w, ps, o);
  EXPECT_FALSE(plain.estimate.has_value());
  std::size_t tested = 0, waitalls = 0;
  for (auto& loc : profiled.trace.locations)
    for (auto& e : loc.events) {
      if (e.kind == EventKind::Enter && e.flags != 0) {
        EXPECT_EQ(e.flags, trace::kTestedComplete);
        ++tested;
      }
      if (e.kind == EventKind::Enter && profiled.trace.defs.regions[e.ref].op == MpiOp::Waitall) ++waitalls;
      e.flags = 0;
    }
  EXPECT_EQ(max_time_difference(plain.trace, profiled.trace), 0.0);
  // Receives posted right before MPI_Waitall: the transfer starts at the post (SimGrid
  // matches first), so no Waitall finds its receives complete.
  EXPECT_EQ(tested, 0u);
  EXPECT_EQ(waitalls, 64u * 8u);
  EXPECT_EQ(profiled.trace.attribute(analysis::kTestedAttribute).empty(), false);
}

// A receive posted before 1 ms of compute finds its message delivered at MPI_Wait's entry
// (flagged, short call); posted before the sender's 3 ms of compute it does not (the call
// waits). The estimator's variants see exactly that.
TEST(OnlineEstimator, FlagsCallsWhoseRequestsAreCompleteAtEntry) {
  using A = ActionKind;
  const auto w = std::make_shared<ListWorkload>(std::vector<std::vector<Action>>{
      {p2p(A::Irecv, 1, 8, 0, 0), compute(1e-3), wait(0), p2p(A::Irecv, 1, 8, 1, 0), compute(1e-3), wait(0)},
      {p2p(A::Isend, 0, 8, 0, 0), wait(0), compute(3e-3), p2p(A::Isend, 0, 8, 1, 0), wait(0)}});
  auto o = options();
  o.minprofile = true;
  const auto run = simulate(cluster(2), *w, models::Perturbations{}, o);
  const auto& ev = run.trace.locations[0].events;
  std::vector<std::uint16_t> flags;
  std::vector<double> enter;
  for (std::size_t i = 0; i < ev.size(); ++i)
    if (ev[i].kind == EventKind::Enter && run.trace.defs.regions[ev[i].ref].op == MpiOp::Wait) {
      flags.push_back(ev[i].flags);
      enter.push_back(ev[i].time);
    }
  ASSERT_EQ(flags.size(), 2u);
  EXPECT_EQ(flags[0], trace::kTestedComplete);
  EXPECT_EQ(flags[1], 0);
  const auto [e0, l0] = call(run.trace, 0, MpiOp::Wait, 0);
  const auto [e1, l1] = call(run.trace, 0, MpiOp::Wait, 1);
  EXPECT_EQ(l0, e0);  // complete at entry: no time
  EXPECT_GT(l1 - e1, 0.9e-3);
  // Rank 0's Late Sender estimate: paper = both calls minus twice the minimum (0 s);
  // exclude_tested leaves the first call out and has only one call left: no waiting.
  ASSERT_TRUE(run.estimate.has_value());
  const auto& r = *run.estimate;
  double paper = -1, excl = -1;
  for (const auto& row : r.rows)
    if (row.rank == 0 && row.pattern == minprofile::Pattern::LateSender) {
      paper = row.waiting[static_cast<std::size_t>(minprofile::Variant::Paper)];
      excl = row.waiting[static_cast<std::size_t>(minprofile::Variant::ExcludeTested)];
    }
  EXPECT_EQ(paper, l1 - e1);
  EXPECT_EQ(excl, 0);
}

}  // namespace
}  // namespace waitlab::sim::test
