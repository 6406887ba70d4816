// Cuts of the POP metrics (analysis/timeresolved/cut.hpp; issue 33, point 9): what users write
// for --time-range, --region and --iterations, and the metrics of a cut on Fixture D with a user
// region "phase" added, worked by hand below; then the Extrae trace omp2 cut to its serial
// prologue and to its parallel part, whose figures were computed from the trace text apart
// from waitlab (/work/issue33-bsc-research.md §C: states clipped to the window).
#include <gtest/gtest.h>

#include <cmath>

#include "analysis/timeresolved/cut.hpp"
#include "analysis/timeresolved/hybrid.hpp"
#include "analysis/timeresolved/timeresolved.hpp"
#include "analysis/trace/trace_io.hpp"
#include "trace_builder.hpp"
#include "util/error.hpp"

namespace waitlab::analysis {
namespace {

using test::TraceBuilder;

TEST(Cut, WhatUsersWrite) {
  const CutSpec r = parse_time_range("1.5s:2000ms");
  EXPECT_EQ(r.kind, CutKind::TimeRange);
  EXPECT_DOUBLE_EQ(r.from, 1.5);
  EXPECT_DOUBLE_EQ(r.to, 2.0);
  const CutSpec open = parse_time_range("4943782149ns:");
  EXPECT_DOUBLE_EQ(open.from, 4.943782149);
  EXPECT_TRUE(std::isinf(open.to) && open.to > 0);
  EXPECT_TRUE(std::isinf(parse_time_range(":1s").from));
  const CutSpec it = parse_iterations("solve:3-7");
  EXPECT_EQ(it.region, "solve");
  EXPECT_EQ(it.first, 3u);
  EXPECT_EQ(it.last, 7u);
  const CutSpec truth = parse_iterations("4");
  EXPECT_EQ(truth.region, "");
  EXPECT_EQ(truth.first, 4u);
  EXPECT_EQ(truth.last, 4u);
  EXPECT_EQ(parse_iterations("0-2").first, 0u);  // a workload's iterations count from 0
  EXPECT_EQ(parse_region("MPI_Allreduce").region, "MPI_Allreduce");
  EXPECT_EQ(parse_cut("", "", "").kind, CutKind::None);
  EXPECT_EQ(parse_cut("", "solve", "").kind, CutKind::Region);

  const auto error = [](auto f) {
    try {
      f();
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error([] { parse_time_range("2s"); }),
            "--time-range 2s: expected FROM:TO, two times with their unit (1.5s:2s; a side left empty is open: 2s: "
            "is from 2 s to the end)");
  EXPECT_EQ(error([] { parse_time_range("3s:1s"); }), "--time-range 3s:1s: the range ends before it starts");
  EXPECT_NE(error([] { parse_time_range("abc:1s"); }).find("--time-range abc:1s: 'abc' is not a time"),
            std::string::npos);
  EXPECT_EQ(error([] { parse_iterations("solve:0-2"); }), "--iterations solve:0-2: a region's instances count from 1");
  EXPECT_EQ(error([] { parse_iterations("7-3"); }), "--iterations 7-3: the first iteration comes after the last");
  EXPECT_NE(error([] { parse_iterations("solve:"); }).find("expected REGION:FIRST-LAST"), std::string::npos);
  EXPECT_NE(error([] { parse_iterations(":2-3"); }).find("expected REGION:FIRST-LAST"), std::string::npos);
  EXPECT_EQ(error([] { parse_cut("1s:2s", "solve", ""); }),
            "--time-range, --region and --iterations each cut the run: give one of them");
}

// Fixture D (test_timeresolved.cpp) with a region "phase" on each rank, and ground truth:
//   rank 0: main [0, 0.6]; phase [0.1, 0.3] and [0.5, 0.58]; MPI_Send [0.5, 0.51] (1 MiB);
//   rank 1: main [0, 0.62]; phase [0.12, 0.18] and [0.55, 0.6]; MPI_Recv [0.2, 0.52].
// Lamport ideal times (large send: it completes at its receive's posting, 0.2 ≤ 0.5):
//   rank 0: 0, 0.1, 0.3, 0.5, 0.5, 0.5 (send leave), 0.57, 0.59;
//   rank 1: 0, 0.12, 0.18, 0.2, 0.5 (receive leave: the send's posting), 0.53, 0.58, 0.6.
trace::Trace fixture() {
  TraceBuilder b(2, 1.0);
  b.enter(0, 0, "main").enter(0, 0.1, "phase").leave(0, 0.3, "phase").enter(0, 0.5, "phase");
  b.send(0, 0.5, 0.51, 1, 7).leave(0, 0.58, "phase").leave(0, 0.6, "main");
  b.enter(1, 0, "main").enter(1, 0.12, "phase").leave(1, 0.18, "phase").recv(1, 0.2, 0.52, 0.52, 0, 7);
  b.enter(1, 0.55, "phase").leave(1, 0.6, "phase").leave(1, 0.62, "main");
  trace::Trace t = b.trace();
  for (auto& l : t.locations)
    for (auto& e : l.events)
      if (e.kind == trace::EventKind::Send || e.kind == trace::EventKind::Recv) e.bytes = 1 << 20;
  // The workload's iterations: rank 0 computes iteration 0 in [0, 0.1] and 1 in [0.3, 0.5];
  // rank 1 iteration 0 in [0, 0.12] and 1 in [0.18, 0.2].
  t.has_truth = true;
  t.locations[0].truth = {{0, 0.1, 0.1, {}, 0, 0}, {0.3, 0.5, 0.2, {}, 0, 1}};
  t.locations[1].truth = {{0, 0.12, 0.12, {}, 0, 0}, {0.18, 0.2, 0.02, {}, 0, 1}};
  return t;
}

TimeResolvedResult cut_run(const trace::Trace& t, const CutSpec& spec, std::size_t windows = 1) {
  const auto m = trace::Matching::build(t);
  return time_resolved(t, lamport_reference(t, m), {WindowRule::Count, 0, windows}, Convention::Waitlab,
                       resolve_cut(t, spec));
}

TEST(Cut, RegionIsTheUnionOfItsInstances) {
  const trace::Trace t = fixture();
  const Cut c = resolve_cut(t, parse_region("phase"));
  // rank 0's [0.1, 0.3] holds rank 1's [0.12, 0.18]; [0.5, 0.58] and [0.55, 0.6] overlap.
  ASSERT_EQ(c.pieces.size(), 2u);
  EXPECT_DOUBLE_EQ(c.pieces[0].first, 0.1);
  EXPECT_DOUBLE_EQ(c.pieces[0].second, 0.3);
  EXPECT_DOUBLE_EQ(c.pieces[1].first, 0.5);
  EXPECT_DOUBLE_EQ(c.pieces[1].second, 0.6);
  EXPECT_EQ(c.instances, 4u);
  EXPECT_EQ(c.locations, 2u);
  EXPECT_EQ(cut_text(c), "region phase: 4 instances on 2 ranks and threads, 2 pieces from 0.1 s to 0.6 s, 0.3 s in all");
}

// T = 0.2 + 0.1 = 0.3. Useful (outside MPI): rank 0 [0.1, 0.3] and [0.51, 0.6] = 0.29, rank 1
// [0.1, 0.2) and [0.52, 0.6] = 0.18. T_ideal = I(0.3) − I(0.1) + I(0.6) − I(0.5) = (0.3 − 0.1) +
// (0.59 − 0.5) = 0.29 (I(0.3): rank 0's 0.3, rank 1 at 0.2 + 0.3·0.1/0.32; I(0.6): rank 0's 0.59).
TEST(Cut, MetricsOfARegionAreThoseOfItsPieces) {
  const TimeResolvedResult r = cut_run(fixture(), parse_region("phase"));
  EXPECT_DOUBLE_EQ(r.t0, 0.1);
  EXPECT_DOUBLE_EQ(r.t1, 0.6);
  EXPECT_DOUBLE_EQ(r.run_t0, 0.0);
  EXPECT_DOUBLE_EQ(r.run_t1, 0.62);
  EXPECT_NEAR(r.elapsed, 0.3, 1e-15);
  ASSERT_EQ(r.useful.size(), 2u);
  EXPECT_NEAR(r.useful[0], 0.29, 1e-15);
  EXPECT_NEAR(r.useful[1], 0.18, 1e-15);
  EXPECT_NEAR(r.ideal_unclamped, 0.29, 1e-15);
  EXPECT_NEAR(r.ideal, 0.29, 1e-15);
  EXPECT_NEAR(r.eff.lb, 0.235 / 0.29, 1e-14);
  EXPECT_NEAR(r.eff.comm_e, 0.29 / 0.3, 1e-14);
  EXPECT_NEAR(r.eff.pe, 0.235 / 0.3, 1e-14);
  EXPECT_NEAR(r.eff.ser_e, 1.0, 1e-14);
  EXPECT_NEAR(r.eff.trf_e, 0.29 / 0.3, 1e-14);
  EXPECT_EQ(r.cut.spec.kind, CutKind::Region);
  ASSERT_EQ(r.cut.pieces.size(), 2u);
}

// Two windows on the cut's axis (0.3 s): the boundary at 0.15 of it is 0.25 s.
//   [0.1, 0.25): L 0.15, U 0.15 and 0.1, ideal I(0.25) − I(0.1) = 0.15; events: rank 0's phase
//     Enter at 0.1, rank 1's phase Enter and Leave and its MPI_Recv Enter = 4;
//   [0.25, 0.6]: L 0.05 + 0.1, U 0.05 + 0.09 and 0 + 0.08, ideal 0.05 + 0.09 = 0.14; events:
//     inside the pieces only (rank 0's phase Leave at 0.3 ends a piece: not in it): rank 0's 0.5
//     (phase Enter, MPI_Send's Enter and its send), 0.51, 0.58, 0.6 and rank 1's 0.52 (the
//     receive and MPI_Recv's Leave), 0.55, 0.6 = 10.
TEST(Cut, WindowsLieOnTheCutsAxis) {
  const TimeResolvedResult r = cut_run(fixture(), parse_region("phase"), 2);
  ASSERT_EQ(r.windows.size(), 2u);
  const Window& a = r.windows[0];
  const Window& b = r.windows[1];
  EXPECT_DOUBLE_EQ(a.start, 0.1);
  EXPECT_NEAR(a.end, 0.25, 1e-15);
  EXPECT_EQ(b.start, a.end);
  EXPECT_DOUBLE_EQ(b.end, 0.6);
  EXPECT_EQ(a.events, 4u);
  EXPECT_EQ(b.events, 10u);
  EXPECT_NEAR(a.useful_max, 0.15, 1e-15);
  EXPECT_NEAR(a.useful_mean, 0.125, 1e-15);
  EXPECT_NEAR(a.ideal, 0.15, 1e-15);
  EXPECT_NEAR(a.eff.comm_e, 1.0, 1e-14);
  EXPECT_NEAR(b.useful_max, 0.14, 1e-15);
  EXPECT_NEAR(b.useful_mean, 0.11, 1e-15);
  EXPECT_NEAR(b.ideal, 0.14, 1e-15);
  EXPECT_NEAR(b.eff.comm_e, 0.14 / 0.15, 1e-14);
  EXPECT_NEAR(b.eff.pe, 0.11 / 0.15, 1e-14);
  EXPECT_NEAR(a.ideal_end, 0.15, 1e-15);
  EXPECT_NEAR(b.ideal_end, 0.29, 1e-15);
  // The cumulative values end at the whole cut's; PE adds up over the windows' lengths.
  EXPECT_EQ(b.cum.pe, r.eff.pe);
  EXPECT_EQ(b.cum.lb, r.eff.lb);
  EXPECT_EQ(b.cum.trf_e, r.eff.trf_e);
  EXPECT_NEAR(a.eff.pe * 0.15 + b.eff.pe * 0.15, r.eff.pe * r.elapsed, 1e-15);
}

// phase:2-2: [rank 0's second Enter 0.5, rank 1's second Leave 0.6]: T 0.1, useful 0.09 and
// 0.08, ideal 0.59 − 0.5 = 0.09.
TEST(Cut, IterationsOfARegion) {
  const TimeResolvedResult r = cut_run(fixture(), parse_iterations("phase:2-2"));
  ASSERT_EQ(r.cut.pieces.size(), 1u);
  EXPECT_DOUBLE_EQ(r.t0, 0.5);
  EXPECT_DOUBLE_EQ(r.t1, 0.6);
  EXPECT_NEAR(r.useful[0], 0.09, 1e-15);
  EXPECT_NEAR(r.useful[1], 0.08, 1e-15);
  EXPECT_NEAR(r.ideal, 0.09, 1e-15);
  EXPECT_EQ(r.cut.instances, 2u);
  EXPECT_EQ(r.cut.locations, 2u);
}

// Iteration 1 of the workload: from rank 1's start of it, 0.18, to rank 0's end, 0.5. Useful:
// rank 0 all of it but 0.5 (0.32), rank 1 [0.18, 0.2) (0.02); ideal I(0.5) − I(0.18) = 0.5 − 0.18.
TEST(Cut, IterationsOfASimulatedWorkload) {
  const TimeResolvedResult r = cut_run(fixture(), parse_iterations("1-1"));
  EXPECT_DOUBLE_EQ(r.t0, 0.18);
  EXPECT_DOUBLE_EQ(r.t1, 0.5);
  EXPECT_NEAR(r.useful[0], 0.32, 1e-15);
  EXPECT_NEAR(r.useful[1], 0.02, 1e-15);
  EXPECT_NEAR(r.ideal, 0.32, 1e-15);
  EXPECT_EQ(cut_text(r.cut), "iterations 1-1: 2 ranks, 1 piece from 0.18 s to 0.5 s, 0.32 s in all");
}

TEST(Cut, AWholeRunCutIsTheRunToTheBit) {
  const trace::Trace t = fixture();
  const auto m = trace::Matching::build(t);
  const IdealReference ref = lamport_reference(t, m);
  for (const WindowOptions& w : {WindowOptions{WindowRule::Count, 0, 7}, WindowOptions{WindowRule::Fixed, 0.05, 0}}) {
    const TimeResolvedResult whole = time_resolved(t, ref, w);
    const TimeResolvedResult cut = time_resolved(t, ref, w, Convention::Waitlab, resolve_cut(t, parse_time_range(":")));
    EXPECT_EQ(cut.elapsed, whole.elapsed);
    EXPECT_EQ(cut.ideal, whole.ideal);
    EXPECT_EQ(cut.eff.pe, whole.eff.pe);
    EXPECT_EQ(cut.eff.trf_e, whole.eff.trf_e);
    ASSERT_EQ(cut.windows.size(), whole.windows.size());
    for (std::size_t i = 0; i < whole.windows.size(); ++i) {
      EXPECT_EQ(cut.windows[i].start, whole.windows[i].start) << i;
      EXPECT_EQ(cut.windows[i].events, whole.windows[i].events) << i;
      EXPECT_NEAR(cut.windows[i].eff.pe, whole.windows[i].eff.pe, 1e-15) << i;
      EXPECT_NEAR(cut.windows[i].ideal, whole.windows[i].ideal, 1e-15) << i;
    }
  }
}

TEST(Cut, NothingFoundIsAnInputError) {
  const trace::Trace t = fixture();
  trace::Trace measured = fixture();
  measured.has_truth = false;
  const auto message = [&](const CutSpec& s, const trace::Trace* on = nullptr) {
    try {
      cut_run(on != nullptr ? *on : t, s);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message(parse_region("solve")),
            "--region solve: the trace has no region named solve; its user regions: main, phase; or an "
            "OpenMP construct: parallel region, parallel function, task");
  EXPECT_EQ(message(parse_iterations("phase:2-3")),
            "--iterations phase:2-3: no rank or thread has 3 instances of phase (at most 2)");
  EXPECT_EQ(message(parse_iterations("5-6")), "--iterations 5-6: the workload has iterations 0..1");
  EXPECT_EQ(message(parse_time_range("1s:2s")),
            "--time-range 1s:2s: the cut leaves nothing of the run, which spans 0 s to 0.62 s");
  EXPECT_NE(message(parse_iterations("1-1"), &measured).find("no ground truth"), std::string::npos);
}

// omp2 (1 rank × 2 threads, BSC's conventions: useful = Running), figures from the trace text
// (/work/issue33-bsc-research.md §B.1, §C). The serial prologue [0,
// 4943782149 ns): the master runs 4902194267 ns of it, the worker is not created: LB 0.5, CommE
// 4902194267 / 4943782149. The parallel part [4943782149, 9652723635) ns: Running 4694445447 and
// 4691185591 ns of 4708941486.
TEST(Cut, ExtraeTraceCutToItsPhasesAsComputedFromTheText) {
  const trace::Trace t = trace::read_trace(WAITLAB_SOURCE_DIR "/tests/data/extrae/omp2.prv.gz");
  const auto m = trace::Matching::build(t);
  const IdealReference ref = lamport_reference(t, m);
  const auto run = [&](const std::string& range) {
    return time_resolved(t, ref, {WindowRule::Count, 0, 1}, Convention::Bsc, resolve_cut(t, parse_time_range(range)));
  };
  const TimeResolvedResult pro = run("0s:4943782149ns");
  EXPECT_EQ(pro.units, 2u);
  EXPECT_NEAR(pro.eff.lb, 0.5, 1e-12);
  EXPECT_NEAR(pro.eff.comm_e, 0.991587840899, 1e-11);
  EXPECT_NEAR(pro.eff.pe, 0.495793920449, 1e-11);
  // The two parallel regions (the master's 60000001 spans, from the trace text): [4943782149,
  // 8515422599) and [8515449655, 9652723635) ns, 4708914430 ns; Running 4694427452 and
  // 4691185591 ns in them. The first alone: 3571640450 ns, Running 3565677747 and 3560863405.
  const auto region = [&](const CutSpec& spec) {
    return time_resolved(t, ref, {WindowRule::Count, 0, 1}, Convention::Bsc, resolve_cut(t, spec));
  };
  const TimeResolvedResult regions = region(parse_region("parallel region"));
  ASSERT_EQ(regions.cut.pieces.size(), 2u);
  EXPECT_EQ(regions.cut.instances, 2u);
  EXPECT_NEAR(regions.elapsed, 4.708914430, 1e-12);
  EXPECT_NEAR(regions.eff.lb, 0.999654711780, 1e-11);
  EXPECT_NEAR(regions.eff.comm_e, 0.996923499415, 1e-11);
  EXPECT_NEAR(regions.eff.pe, 0.996579273474, 1e-11);
  // The hybrid factors over the same pieces: no serial time in them, TALP's load balance and
  // scheduling from the idle time of each region (test_hybrid.cpp).
  const HybridEfficiency h = hybrid_of(t, regions);
  ASSERT_TRUE(h.hybrid && h.talp);
  EXPECT_NEAR(h.length, 4.708914430, 1e-12);
  EXPECT_NEAR(h.omp_serialisation, 1.0, 1e-12);
  EXPECT_NEAR(h.omp_load_balance, 9411442037.0 / 9417828860.0, 1e-11);
  EXPECT_NEAR(h.omp_scheduling, 9385613043.0 / 9411442037.0, 1e-11);
  const TimeResolvedResult first = region(parse_iterations("parallel region:1-1"));
  EXPECT_NEAR(first.elapsed, 3.571640450, 1e-12);
  EXPECT_NEAR(first.eff.lb, 0.999324905061, 1e-11);
  EXPECT_NEAR(first.eff.comm_e, 0.998330542202, 1e-11);
  EXPECT_NEAR(first.eff.pe, 0.997656574306, 1e-11);
  const TimeResolvedResult par = run("4943782149ns:9652723635ns");
  EXPECT_NEAR(par.elapsed, 4.708941486, 1e-12);
  EXPECT_NEAR(par.eff.lb, 0.999652796477, 1e-11);
  EXPECT_NEAR(par.eff.comm_e, 0.996921592880, 1e-11);
  EXPECT_NEAR(par.eff.pe, 0.996575458190, 1e-11);
}

}  // namespace
}  // namespace waitlab::analysis
