// Engine runs of the synthetic workloads: eager semantics equal SMPI's defaults on
// point-to-point workloads, a one-off delay propagates exactly, ground truth is consistent,
// runs are deterministic.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>

#include "analysis/trace/totals.hpp"
#include "analysis/trace/wlt.hpp"
#include "sim/simulation.hpp"
#include "sim_util.hpp"

namespace waitlab::sim::test {
namespace {

struct Case {
  std::string type;
  Given options;
  bool eager_matters = false;  // blocking sends below the eager threshold
};

// (b): at 64 ranks, point-to-point workloads give the same timestamps (|Δ| <= 1 ns) under
// Waitlab semantics (threshold 0 + engine-side eager completion) and SMPI's defaults. Noise
// and imbalance desynchronise the ranks so that eager sends really do meet late receivers.
TEST(EagerEquivalence, PointToPointWorkloadsAt64RanksMatchSmpiDefaults) {
  const std::vector<Case> cases = {
      {"heat1d", {{"ranks", "64"}, {"iterations", "20"}, {"compute", "50us"}, {"mode", "blocking"}}, true},
      {"heat1d", {{"ranks", "64"}, {"iterations", "20"}, {"compute", "50us"}, {"mode", "nonblocking"}}},
      {"heat1d",
       {{"ranks", "64"}, {"iterations", "10"}, {"compute", "50us"}, {"distance", "3"}, {"bytes", "2KiB"}},
       true},
      {"halo2d", {{"ranks", "64"}, {"iterations", "20"}, {"compute", "50us"}}},
      {"halo3d", {{"ranks", "64"}, {"iterations", "10"}, {"compute", "50us"}, {"bytes", "100KiB"}}},
      {"sweep2d", {{"ranks", "64"}, {"iterations", "5"}, {"compute", "20us"}}, true},
  };
  const auto platform = cluster(64, 10e9, 1e-6);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.type + " " + c.options.back().second);
    const auto w = workload(c.type, c.options);
    models::Perturbations ps;
    const auto ctx = context(*w, platform, 42);
    add(ps, "imbalance_uniform", {{"amplitude", "20%"}}, ctx);
    add(ps, "random_noise", {{"rate", "5kHz"}, {"duration", "20us"}, {"distribution", "exponential"}}, ctx);
    const auto a = simulate(platform, *w, ps, options(Semantics::Waitlab));
    const auto b = simulate(platform, *w, ps, options(Semantics::SmpiDefault));
    EXPECT_LE(max_time_difference(a.trace, b.trace), 1e-9);
    EXPECT_NEAR(a.stats.simulated_time, b.stats.simulated_time, 1e-9);
    EXPECT_EQ(a.stats.mpi_operations, b.stats.mpi_operations);
    for (std::size_t r = 0; r < a.trace.locations.size(); ++r)
      ASSERT_EQ(a.trace.locations[r].truth.size(), b.trace.locations[r].truth.size());
    // The comparison can fail: without eager sends (threshold 0: rendezvous) the blocking
    // workloads get other timestamps. (Non-blocking ones post every receive first, so
    // there the send protocol does not show.)
    if (c.eager_matters) {
      auto rendezvous = options(Semantics::Waitlab);
      rendezvous.eager_threshold = 0;
      const auto rv = simulate(platform, *w, ps, rendezvous);
      EXPECT_GT(max_time_difference(a.trace, rv.trace), 1e-7);
    }
  }
}

// The n-th MPI_Recv call on rank r that receives from `peer`: (enter, leave).
std::pair<double, double> recv_from(const trace::Trace& t, trace::Rank r, trace::Rank peer, int n) {
  const auto& ev = t.locations.at(static_cast<std::size_t>(r)).events;
  double enter = -1;
  for (const auto& e : ev) {
    if (e.kind == EventKind::Enter && e.op == MpiOp::Recv) enter = e.time;
    if (e.kind == EventKind::Recv && e.op == MpiOp::Recv && e.peer == peer && n-- == 0) {
      for (const auto& l : ev)
        if (l.kind == EventKind::Leave && l.op == MpiOp::Recv && l.time >= e.time) return {enter, l.time};
    }
  }
  throw std::runtime_error("no such receive");
}

TEST(Delay, Heat1dNeighboursWaitExactlyTheInjectedDelay) {
  const auto platform = cluster(16);
  const auto w =
      workload("heat1d", {{"ranks", "16"}, {"iterations", "6"}, {"compute", "100us"}, {"mode", "blocking"}});
  const auto base = simulate(platform, *w, {}, options()).trace;
  const double delta = 37e-6;
  const int k = 8;
  const int it = 3;
  models::Perturbations ps;
  add(ps, "delay", {{"rank", "8"}, {"iteration", "3"}, {"duration", "37us"}}, context(*w, platform, 1));
  const auto run = simulate(platform, *w, ps, options());
  const auto& pert = run.trace;
  for (int nb : {k - 1, k + 1}) {
    SCOPED_TRACE(nb);
    const auto [e0, l0] = recv_from(base, nb, k, it);
    const auto [e1, l1] = recv_from(pert, nb, k, it);
    EXPECT_NEAR((l1 - e1) - (l0 - e0), delta, 1e-9);
  }
  // Ground truth: exactly one compute interval carries the delay, on rank k in iteration `it`.
  double total = 0;
  for (const auto& loc : pert.locations)
    for (const auto& c : loc.truth) {
      const double d = c.injected[static_cast<std::size_t>(trace::Cause::Delay)];
      total += d;
      if (d > 0) {
        EXPECT_EQ(loc.rank, k);
        EXPECT_EQ(c.iteration, it);
        EXPECT_DOUBLE_EQ(d, delta);
        EXPECT_NEAR(c.end - c.start, 100e-6 + delta, 1e-12);
      }
    }
  EXPECT_DOUBLE_EQ(total, delta);
  // The delay shifts the end of the run by at most delta.
  EXPECT_GT(run.stats.simulated_time, base.end_time());
  EXPECT_LE(run.stats.simulated_time, base.end_time() + delta + 1e-12);
}

TEST(GroundTruth, ComputeIntervalsLastNominalPlusInjected) {
  const auto platform = cluster(16);
  const auto w = workload("halo2d", {{"ranks", "16"}, {"iterations", "10"}, {"compute", "80us"}});
  models::Perturbations ps;
  const auto ctx = context(*w, platform, 7);
  add(ps, "imbalance_uniform", {{"amplitude", "30%"}}, ctx);
  add(ps, "delay", {{"rank", "5"}, {"iteration", "4"}, {"duration", "1ms"}}, ctx);
  add(ps, "periodic_noise", {{"frequency", "2kHz"}, {"duration", "25us"}}, ctx);
  const auto t = simulate(platform, *w, ps, options()).trace;
  ASSERT_TRUE(t.has_truth);
  std::array<double, trace::kCauseCount> by_cause{};
  for (const auto& loc : t.locations) {
    ASSERT_EQ(loc.truth.size(), 10u);  // one compute interval per iteration
    for (std::size_t i = 0; i < loc.truth.size(); ++i) {
      const auto& c = loc.truth[i];
      EXPECT_EQ(c.iteration, static_cast<int>(i));
      EXPECT_DOUBLE_EQ(c.nominal, 80e-6);
      EXPECT_NEAR(c.end - c.start, c.nominal + c.injected_total(), 1e-12);
      for (std::size_t k = 0; k < trace::kCauseCount; ++k) {
        EXPECT_GE(c.injected[k], 0);
        by_cause[k] += c.injected[k];
      }
      // The interval is the time between the Leave/Enter of the surrounding region.
      EXPECT_EQ(t.defs.regions[c.region].name, "compute");
    }
  }
  EXPECT_GT(by_cause[static_cast<std::size_t>(trace::Cause::Imbalance)], 0);
  EXPECT_GT(by_cause[static_cast<std::size_t>(trace::Cause::Noise)], 0);
  EXPECT_DOUBLE_EQ(by_cause[static_cast<std::size_t>(trace::Cause::Delay)], 1e-3);
}

TEST(Determinism, TwoRunsGiveIdenticalTraces) {
  const auto platform = cluster(32);
  const auto w = workload("allreduce_loop", {{"ranks", "32"}, {"iterations", "8"}, {"halo", "1KiB"}});
  models::Perturbations ps;
  add(ps, "random_noise", {{"rate", "1kHz"}, {"duration", "30us"}, {"distribution", "pareto"}},
      context(*w, platform, 3));
  auto o = options();
  o.seed = 3;
  o.name = "det";
  const auto a = simulate(platform, *w, ps, o);
  const auto b = simulate(platform, *w, ps, o);
  EXPECT_TRUE(a.trace == b.trace);
  EXPECT_EQ(a.stats.simulated_time, b.stats.simulated_time);
  EXPECT_EQ(a.stats.mpi_operations, b.stats.mpi_operations);
  EXPECT_EQ(a.trace.attribute("name"), "det");
  EXPECT_EQ(a.trace.attribute("seed"), "3");
  EXPECT_EQ(a.trace.attribute("ranks"), "32");
  EXPECT_EQ(a.trace.attribute("semantics"), "waitlab");
  EXPECT_EQ(a.trace.attribute("collectives"), "fast");
  EXPECT_EQ(a.trace.attribute("eager_threshold"), "65536");
  EXPECT_EQ(a.trace.attribute("workload"), "allreduce_loop");
  EXPECT_NE(a.trace.attribute("platform").find("32 nodes"), std::string::npos);
}

// A run whose events nobody reads (RunOptions::record_events false) records only MPI_Init's
// and MPI_Finalize's Enter and Leave, counts the others, and is the same run: the same clock,
// operations, event count, ground truth and Init/Finalize events, with noise and a collective.
TEST(Recording, WithoutEventsTheRunIsTheSameAndCountsThem) {
  const auto platform = cluster(16);
  const auto w = workload("allreduce_loop", {{"ranks", "16"}, {"iterations", "6"}, {"halo", "1KiB"}});
  models::Perturbations ps;
  add(ps, "random_noise", {{"rate", "1kHz"}, {"duration", "30us"}}, context(*w, platform, 5));
  auto o = options();
  o.seed = 5;
  const auto all = simulate(platform, *w, ps, o);
  o.record_events = false;
  const auto lean = simulate(platform, *w, ps, o);
  EXPECT_EQ(all.stats.events, all.trace.event_count());
  EXPECT_EQ(lean.stats.events, all.stats.events);
  EXPECT_EQ(lean.stats.simulated_time, all.stats.simulated_time);
  EXPECT_EQ(lean.stats.mpi_operations, all.stats.mpi_operations);
  EXPECT_EQ(lean.trace.event_count(), 16u * 4);
  for (std::size_t r = 0; r < 16; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    EXPECT_TRUE(lean.trace.locations[r].truth == all.trace.locations[r].truth);
    std::vector<trace::Event> init_finalize;
    for (const auto& e : all.trace.locations[r].events)
      if (e.op == trace::MpiOp::Init || e.op == trace::MpiOp::Finalize) init_finalize.push_back(e);
    EXPECT_TRUE(lean.trace.locations[r].events == init_finalize);
  }
}

// The records go to disk every two records (RunOptions::record_buffer_bytes): the trace —
// every timestamp, the estimator's flags set after the fact, MPI_Finalize's synchronised
// Leaves — and the totals are those of the default buffers (which hold this whole run).
TEST(Recording, ThroughTheDiskEveryFewRecordsTheTraceIsTheSame) {
  const auto platform = cluster(16);
  const auto w = workload("halo2d", {{"ranks", "16"}, {"iterations", "8"}, {"bytes", "1KiB"}});
  models::Perturbations ps;
  add(ps, "random_noise", {{"rate", "1kHz"}, {"duration", "30us"}}, context(*w, platform, 5));
  auto o = options();
  o.seed = 5;
  const auto memory = simulate(platform, *w, ps, o);
  o.record_buffer_bytes = 1;
  const auto disk = simulate(platform, *w, ps, o);
  ASSERT_GT(memory.trace.event_count(), 16u * 8 * 8);
  EXPECT_TRUE(disk.trace == memory.trace);
  EXPECT_TRUE(disk.stats.totals == trace::totals(memory.trace));
  EXPECT_TRUE(memory.stats.totals == trace::totals(memory.trace));

  // The estimator flags an MPI_Wait's Enter once its test found the receive complete (a
  // receive posted 1 ms before its wait; after an odd pair the sender computes 3 ms first, so
  // pairs 0, 1, 3, 5, ..., 19 are flagged: 11).
  using A = ActionKind;
  std::vector<std::vector<Action>> actions(2);
  for (int k = 0; k < 20; ++k) {
    actions[0].insert(actions[0].end(), {p2p(A::Irecv, 1, 8, k, 0), compute(1e-3), wait(0)});
    actions[1].insert(actions[1].end(), {p2p(A::Isend, 0, 8, k, 0), wait(0), compute(k % 2 ? 3e-3 : 0)});
  }
  const ListWorkload pairs(actions);
  auto p = options();
  p.minprofile = true;
  const auto flags_memory = simulate(cluster(2), pairs, {}, p);
  p.record_buffer_bytes = 1;
  const auto flags_disk = simulate(cluster(2), pairs, {}, p);
  EXPECT_TRUE(flags_disk.trace == flags_memory.trace);
  std::size_t flagged = 0;
  for (const auto& e : flags_disk.trace.locations[0].events)
    flagged += (e.flags & trace::kTestedComplete) != 0;
  EXPECT_EQ(flagged, 11u);
  ASSERT_TRUE(flags_disk.estimate && flags_memory.estimate);
  ASSERT_EQ(flags_disk.estimate->rows.size(), flags_memory.estimate->rows.size());
  for (std::size_t i = 0; i < flags_disk.estimate->rows.size(); ++i) {
    const auto& d = flags_disk.estimate->rows[i];
    const auto& m = flags_memory.estimate->rows[i];
    EXPECT_EQ(d.calls, m.calls);
    EXPECT_EQ(d.time, m.time);
    EXPECT_TRUE(d.waiting == m.waiting);
  }
}

// A trace written to a file of the caller's (RunOptions::trace_file) and not read back: the
// file holds the trace the caller would have got, the result its attributes and totals.
TEST(Recording, ATraceWrittenToItsFileIsNotReadBack) {
  const auto platform = cluster(8);
  const auto w = workload("heat1d", {{"ranks", "8"}, {"iterations", "5"}});
  auto o = options();
  o.attributes = {{"scenario.name", "file"}, {"seed", "replaced"}};
  const auto memory = simulate(platform, *w, {}, o);
  EXPECT_EQ(memory.trace.attribute("scenario.name"), "file");
  EXPECT_EQ(memory.trace.attribute("seed"), "replaced");
  const std::string path = ::testing::TempDir() + "waitlab-trace-file.wlt";
  o.trace_file = path;
  o.return_trace = false;
  const auto file = simulate(platform, *w, {}, o);
  EXPECT_TRUE(file.trace.locations.empty());
  EXPECT_TRUE(file.trace.attributes == memory.trace.attributes);
  EXPECT_TRUE(file.trace.has_truth);
  EXPECT_TRUE(file.stats.totals == memory.stats.totals);
  EXPECT_EQ(file.stats.events, memory.stats.events);
  EXPECT_TRUE(trace::read_wlt(path) == memory.trace);
  std::remove(path.c_str());
}

// Past about half the kernel's vm.max_map_count in ranks the actors' stacks go in the heap
// without guard pages (32,768 ranks aborted in SimGrid before): a pretend limit takes that
// path at 32 ranks, and every event, every timestamp, is the same.
TEST(Stacks, HeapStacksWithoutGuardPagesGiveIdenticalTraces) {
  EXPECT_FALSE(detail::unguarded_stacks(4096, 65530));
  EXPECT_FALSE(detail::unguarded_stacks(31741, 65530));  // 2·31741 + 2048 = 65530
  EXPECT_TRUE(detail::unguarded_stacks(31742, 65530));
  EXPECT_TRUE(detail::unguarded_stacks(65536, 65530));
  EXPECT_TRUE(detail::unguarded_stacks(32, 100));
  const auto platform = cluster(32);
  const auto w = workload("allreduce_loop", {{"ranks", "32"}, {"iterations", "8"}, {"halo", "1KiB"}});
  models::Perturbations ps;
  add(ps, "random_noise", {{"rate", "1kHz"}, {"duration", "30us"}}, context(*w, platform, 3));
  auto o = options();
  const auto guarded = simulate(platform, *w, ps, o);
  o.max_map_count = 100;
  const auto heap = simulate(platform, *w, ps, o);
  EXPECT_TRUE(guarded.trace == heap.trace);
  EXPECT_EQ(guarded.stats.simulated_time, heap.stats.simulated_time);
  EXPECT_GT(heap.trace.locations[5].events.size(), 100u);
}

TEST(Trace, EventModelOfEveryRank) {
  // heat1d nonblocking, 4 ranks, 2 iterations: Init first, Finalize last, regions nest,
  // request ids pair IsendStart/IsendComplete, and mpi_operations counts the MPI calls.
  const auto w = workload("heat1d", {{"ranks", "4"}, {"iterations", "2"}, {"mode", "nonblocking"}});
  const auto r = simulate(cluster(4), *w, {}, options());
  const auto& t = r.trace;
  ASSERT_EQ(t.ranks(), 4u);
  ASSERT_EQ(t.defs.comms.size(), 1u);
  EXPECT_EQ(t.defs.comms[0].members, (std::vector<trace::Rank>{0, 1, 2, 3}));
  std::uint64_t calls = 0;
  for (const auto& loc : t.locations) {
    const auto& ev = loc.events;
    ASSERT_GE(ev.size(), 4u);
    EXPECT_EQ(ev.front().kind, EventKind::Enter);
    EXPECT_EQ(t.defs.regions[ev.front().ref].name, "MPI_Init");
    EXPECT_EQ(ev.back().kind, EventKind::Leave);
    EXPECT_EQ(t.defs.regions[ev.back().ref].name, "MPI_Finalize");
    std::vector<trace::RegionId> stack;
    std::map<std::uint64_t, int> requests;
    for (std::size_t i = 0; i < ev.size(); ++i) {
      if (i > 0) {
        EXPECT_GE(ev[i].time, ev[i - 1].time);
      }
      if (ev[i].kind == EventKind::Enter) {
        stack.push_back(ev[i].ref);
        if (t.defs.regions[ev[i].ref].op != MpiOp::None && t.defs.regions[ev[i].ref].op != MpiOp::Init &&
            t.defs.regions[ev[i].ref].op != MpiOp::Finalize)
          ++calls;
      }
      if (ev[i].kind == EventKind::Leave) {
        ASSERT_FALSE(stack.empty());
        EXPECT_EQ(stack.back(), ev[i].ref);
        stack.pop_back();
      }
      if (ev[i].kind == EventKind::IsendStart || ev[i].kind == EventKind::IrecvPost) ++requests[ev[i].aux];
      if (ev[i].kind == EventKind::IsendComplete || ev[i].kind == EventKind::IrecvComplete)
        --requests[ev[i].aux];
    }
    EXPECT_TRUE(stack.empty());
    for (const auto& [id, n] : requests) EXPECT_EQ(n, 0) << "request " << id;
  }
  // Ranks 0 and 3 have one neighbour, 1 and 2 two: per iteration 2 requests per neighbour + Waitall.
  EXPECT_EQ(calls, 2u * (1 + 2 + 2 + 1) * 2 + 4u * 2);
  EXPECT_EQ(r.stats.mpi_operations, calls);
  EXPECT_GT(r.stats.host_seconds, 0);
  EXPECT_DOUBLE_EQ(r.stats.simulated_time, t.end_time());
}

}  // namespace
}  // namespace waitlab::sim::test
