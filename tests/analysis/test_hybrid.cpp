// The hybrid MPI+OpenMP factors (analysis/timeresolved/hybrid.hpp) with figures worked by hand: the
// OpenMP run omp2 (1 task × 2 threads, no MPI; the integers are the trace's, research note of
// issue 33 §B, reproduced by pypop's published table), the 2 ranks × 2 threads fixture
// tests/data/hybrid_2x2.prv (every figure worked in tests/data/hybrid_2x2.md), cut to two
// intervals, and the all-thread factors against time_resolved's on the same trace.
#include <gtest/gtest.h>

#include <stdexcept>

#include "analysis/timeresolved/hybrid.hpp"
#include "analysis/trace/match.hpp"
#include "analysis/trace/paraver.hpp"
#include "analysis/trace/trace_io.hpp"

namespace waitlab::analysis {
namespace {

const std::string kData = WAITLAB_SOURCE_DIR "/tests/data/";

void expect_rel(double got, double want, const char* what) {
  EXPECT_NEAR(got, want, 1e-9 * std::abs(want)) << what;
}

TimeResolvedResult whole_run(const trace::Trace& t) {
  const trace::Matching m = trace::Matching::build(t);
  return time_resolved(t, lamport_reference(t, m), {WindowRule::Count, 0, 1}, Convention::Bsc);
}

// omp2, T = 10380609993 ns; Running: master 10321496492, worker 4691185591 ns.
TEST(Hybrid, OpenMpTwoThreadsAsBscAndTalp) {
  const trace::Trace t = trace::read_trace(kData + "extrae/omp2.prv.gz");
  const TimeResolvedResult r = whole_run(t);
  const HybridEfficiency h = hybrid_of(t, r);
  ASSERT_TRUE(h.hybrid);
  ASSERT_TRUE(h.talp);
  EXPECT_EQ(h.ranks, 1u);
  EXPECT_EQ(h.units, 2u);
  expect_rel(h.length, 10.380609993, "T");
  // All threads: LB = mean/max U, CommE = max U / T, PE = ΣU / (2T).
  expect_rel(h.all.lb, 0.7272531698594312, "LB");
  expect_rel(h.all.comm_e, 0.9943053923574952, "CommE");
  expect_rel(h.all.pe, 0.7231117484003139, "PE");
  // time_resolved's own figures on the same span.
  EXPECT_NEAR(h.all.lb, r.eff.lb, 1e-12);
  EXPECT_NEAR(h.all.comm_e, r.eff.comm_e, 1e-12);
  EXPECT_NEAR(h.all.pe, r.eff.pe, 1e-12);
  // No MPI: the master is outside MPI all of T.
  expect_rel(h.mpi.lb, 1, "MPI LB");
  expect_rel(h.mpi.comm_e, 1, "MPI CommE");
  expect_rel(h.mpi.pe, 1, "MPI PE");
  expect_rel(h.omp.lb, 0.7272531698594312, "OpenMP LB");
  expect_rel(h.omp.comm_e, 0.9943053923574952, "OpenMP CommE");
  expect_rel(h.omp.pe, 0.7231117484003139, "OpenMP PE");
  expect_rel(h.hybrid_pe, 0.7231117484003139, "hybrid PE");
  // TALP (thread-ns): B = 2T; I_serial = 5716322086, I_lb = 6386823 (region 1: 10777045 −
  // 5962703; region 2: 8524275 − 6951794), I_sched = 25828994 (2 × (5962703 + 6951794)).
  expect_rel(h.idle_serial, 5.716322086, "I_serial");
  expect_rel(h.idle_imbalance, 0.006386823, "I_lb");
  expect_rel(h.idle_scheduling, 0.025828994, "I_sched");
  expect_rel(h.omp_serialisation, 0.7246634788391669, "OpenMP serialisation");
  expect_rel(h.omp_load_balance, 0.9995754824630615, "OpenMP load balance");
  expect_rel(h.omp_scheduling, 0.9982824766449451, "OpenMP scheduling");
  expect_rel(h.omp_serialisation * h.omp_load_balance * h.omp_scheduling, h.omp.pe, "product");
}

// omp2 cut to its two parallel regions [4943782149, 8515422599) ∪ [8515449655, 9652723635) ns:
// T = 4708914430; U = 4694427452 (master), 4691185591 (worker); no idle outside the regions.
TEST(Hybrid, TwoIntervalsOfOmp2) {
  const trace::Trace t = trace::read_trace(kData + "extrae/omp2.prv.gz");
  const HybridEfficiency h =
      hybrid_efficiency(t, Convention::Bsc, {{4.943782149, 8.515422599}, {8.515449655, 9.652723635}}, 0, 0);
  expect_rel(h.length, 4.708914430, "T");
  expect_rel(h.all.lb, 0.999654711780, "LB");
  expect_rel(h.all.comm_e, 0.996923499415, "CommE");
  expect_rel(h.all.pe, 0.996579273474, "PE");
  expect_rel(h.mpi.pe, 1, "MPI PE");
  EXPECT_EQ(h.mpi.ser_e, 0);  // no ideal run given
  EXPECT_EQ(h.idle_serial, 0);
  expect_rel(h.omp_serialisation, 1, "OpenMP serialisation");
  // B = 9417828860; I_lb = 6386823, I_sched = 25828994 as for the whole run (all inside).
  expect_rel(h.omp_load_balance, 9411442037.0 / 9417828860.0, "OpenMP load balance");
  expect_rel(h.omp_scheduling, 9385613043.0 / 9411442037.0, "OpenMP scheduling");
  expect_rel(h.omp.pe, 9385613043.0 / 9417828860.0, "OpenMP PE");
}

// tests/data/hybrid_2x2.md works every figure; T = 1000 ns.
TEST(Hybrid, TwoRanksTwoThreadsFixture) {
  const trace::Trace t = trace::read_paraver(kData + "hybrid_2x2.prv");
  ASSERT_EQ(t.locations.size(), 2u);
  ASSERT_EQ(t.threads.size(), 2u);
  const TimeResolvedResult r = whole_run(t);
  const HybridEfficiency h = hybrid_of(t, r);
  ASSERT_TRUE(h.hybrid && h.talp);
  EXPECT_EQ(h.units, 4u);
  expect_rel(h.useful_sum, 2140e-9, "ΣU");
  expect_rel(h.useful_max, 900e-9, "max U");
  expect_rel(h.all.lb, 535.0 / 900, "LB");
  expect_rel(h.all.comm_e, 0.9, "CommE");
  expect_rel(h.all.pe, 0.535, "PE");
  EXPECT_NEAR(h.all.lb, r.eff.lb, 1e-12);
  EXPECT_NEAR(h.all.comm_e, r.eff.comm_e, 1e-12);
  EXPECT_NEAR(h.all.pe, r.eff.pe, 1e-12);
  // O = 700, 900 ns.
  expect_rel(h.mpi.lb, 800.0 / 900, "MPI LB");
  expect_rel(h.mpi.comm_e, 0.9, "MPI CommE");
  expect_rel(h.mpi.pe, 0.8, "MPI PE");
  expect_rel(h.mpi.ser_e, r.useful_ideal_max / r.ideal, "MPI SerE");
  expect_rel(h.mpi.trf_e, 0.9 / h.mpi.ser_e, "MPI TrfE");
  expect_rel(h.omp.lb, 535.0 / 800, "OpenMP LB");
  expect_rel(h.omp.comm_e, 1, "OpenMP CommE");
  expect_rel(h.omp.pe, 0.66875, "OpenMP PE");
  expect_rel(h.hybrid_pe, 0.535, "hybrid PE");
  // B = 3200; I_serial = 300 + 600, I_lb = 90 + 50, I_sched = 2 × 10.
  expect_rel(h.idle_serial, 900e-9, "I_serial");
  expect_rel(h.idle_imbalance, 140e-9, "I_lb");
  expect_rel(h.idle_scheduling, 20e-9, "I_sched");
  expect_rel(h.omp_serialisation, 2300.0 / 3200, "OpenMP serialisation");
  expect_rel(h.omp_load_balance, 2160.0 / 2300, "OpenMP load balance");
  expect_rel(h.omp_scheduling, 2140.0 / 2160, "OpenMP scheduling");
}

// The fixture cut to [0, 300) ∪ [700, 1000) ns: T = 600.
TEST(Hybrid, TwoRanksTwoThreadsCutToTwoIntervals) {
  const trace::Trace t = trace::read_paraver(kData + "hybrid_2x2.prv");
  const HybridEfficiency h = hybrid_efficiency(t, Convention::Bsc, {{0, 300e-9}, {700e-9, 1000e-9}}, 500e-9, 450e-9);
  expect_rel(h.length, 600e-9, "T");
  expect_rel(h.useful_sum, 1190e-9, "ΣU");
  expect_rel(h.all.lb, 297.5 / 500, "LB");
  expect_rel(h.all.comm_e, 500.0 / 600, "CommE");
  expect_rel(h.mpi.lb, 0.9, "MPI LB");
  expect_rel(h.mpi.comm_e, 500.0 / 600, "MPI CommE");
  expect_rel(h.mpi.pe, 0.75, "MPI PE");
  expect_rel(h.mpi.ser_e, 0.9, "MPI SerE");  // as given: 450 / 500
  expect_rel(h.omp_serialisation, 1200.0 / 1800, "OpenMP serialisation");
  expect_rel(h.omp_load_balance, 1190.0 / 1200, "OpenMP load balance");
  expect_rel(h.omp_scheduling, 1, "OpenMP scheduling");
  expect_rel(h.omp.pe, 1190.0 / 1800, "OpenMP PE");
}

// A pure-MPI trace is not hybrid; the Waitlab convention (ranks only) computes nothing; the
// intervals must be sorted and disjoint.
TEST(Hybrid, PureMpiWaitlabAndBadIntervals) {
  const trace::Trace e = trace::read_trace(kData + "extrae/epoch_2proc.prv.gz");
  EXPECT_FALSE(hybrid_efficiency(e, Convention::Bsc, {{e.span_begin, e.span_end}}, 1, 1).hybrid);
  const trace::Trace t = trace::read_paraver(kData + "hybrid_2x2.prv");
  EXPECT_FALSE(hybrid_efficiency(t, Convention::Waitlab, {{0, 1e-6}}, 1e-6, 1e-6).hybrid);
  EXPECT_THROW(hybrid_efficiency(t, Convention::Bsc, {{0, 5e-7}, {4e-7, 1e-6}}, 1, 1), std::invalid_argument);
  EXPECT_THROW(hybrid_efficiency(t, Convention::Bsc, {{5e-7, 4e-7}}, 1, 1), std::invalid_argument);
}

}  // namespace
}  // namespace waitlab::analysis
