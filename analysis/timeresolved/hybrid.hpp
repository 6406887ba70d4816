// waitlab::analysis — the POP factors of a hybrid MPI+OpenMP run (docs/analyses.md, "Hybrid
// MPI+OpenMP factors"; BSC basicanalysis' hybrid table and DLB TALP's OpenMP split).
//
// Promise: pure functions of a Trace (no printing, no files). Every time is clipped to
// `intervals` (sorted, disjoint, inside the run's span; the whole run: one interval [T0, T1]);
// T = Σ their lengths. Units: every rank's master (Trace::locations) and worker thread
// (Trace::threads) with an event or a state interval, as time_resolved counts them under
// Convention::Bsc and Scalasca; under Waitlab (ranks only) nothing is computed.
//   - U_ij: useful time of thread j of rank i (outside MPI calls and outside its state
//     intervals, as time_resolved reads it). LB = mean U / max U, CommE = max U / T, PE =
//     Σ U / (units·T): the all-thread factors (time_resolved's, over the same time).
//   - O_i: time of rank i's master outside MPI calls; M_i: rank i's units. MPI LB =
//     (Σ M_i·O_i / Σ M_i) / max O_i, MPI CommE = max O_i / T, MPI PE = Σ M_i·O_i / (Σ M_i·T)
//     = MPI LB × MPI CommE (BSC's mean O / max O, max O / T, Σ O / (N·T) when every rank has
//     as many threads); MPI SerE = useful_ideal_max / t_ideal (the caller's: the ideal run's
//     largest time outside MPI of a rank, BSC's U_ideal under Bsc), MPI TrfE = MPI CommE / SerE.
//   - OpenMP LB, CommE, PE = LB / MPI LB, CommE / MPI CommE, PE / MPI PE (BSC's ratios);
//     hybrid PE = MPI PE × OpenMP PE.
//   - TALP's split of OpenMP PE, over X_i = the time rank i's master is outside MPI calls,
//     with rank i's parallel regions (OmpKind::ParallelRegion of its master) clipped to X_i:
//     per thread, idle I = |X_i| − U'_ij (U' = U_ij ∩ X_i), split into I_serial (outside the
//     regions) and per region p: I_ijp; I_lb = Σ_p Σ_j (I_ijp − min_j I_ijp), I_sched =
//     Σ_p M_i·min_j I_ijp. B = Σ_i M_i·|X_i|. OpenMP serialisation efficiency = (B −
//     I_serial)/B, load balance = (B − I_serial − I_lb)/(B − I_serial), scheduling efficiency =
//     (B − I_serial − I_lb − I_sched)/(B − I_serial − I_lb): their product is Σ U' / B, which is
//     OpenMP PE whenever no thread is useful while its master is in MPI (Σ U' = Σ U).
//   - A ratio with a zero denominator is 0 (a load balance 1).
// The replay engine's run: every process computes its ranks' facts (a rank's threads are owned
// with it), process 0 gathers them in rank order and sums them as the serial run does.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "analysis/timeresolved/timeresolved.hpp"  // Efficiency, Convention; declares engine::Shard, Transport
#include "analysis/trace/trace.hpp"

namespace waitlab::analysis {

struct HybridEfficiency {
  bool hybrid = false;  // the trace has worker threads or OpenMP intervals: the factors are set
  bool talp = false;    // some master has a parallel region: the TALP split is set
  std::size_t ranks = 0, units = 0;
  double length = 0;                      // T, s
  double useful_sum = 0, useful_max = 0;  // over every thread, s
  double outside_mpi_max = 0;             // max_i O_i, s
  double outside_mpi_weighted = 0;        // Σ_i M_i·O_i = B, thread-s
  Efficiency all;                         // lb, comm_e, pe of every thread (ser_e, trf_e 0)
  Efficiency mpi;                         // MPI LB, CommE, SerE, TrfE, PE
  Efficiency omp;                         // OpenMP lb, comm_e, pe (ser_e, trf_e 0)
  double hybrid_pe = 0;                   // MPI PE × OpenMP PE
  double omp_serialisation = 0, omp_load_balance = 0, omp_scheduling = 0;  // TALP's split
  double useful_outside_mpi = 0;          // Σ U' (thread-s)
  double idle_serial = 0, idle_imbalance = 0, idle_scheduling = 0;  // I_serial, I_lb, I_sched (thread-s)
};

// `intervals`: the time the factors cover, e.g. {{r.t0, r.t1}} of a TimeResolvedResult r;
// t_ideal and useful_ideal_max its `ideal` and `useful_ideal_max` (SerE's).
// Throws std::invalid_argument when the intervals are not sorted and disjoint.
HybridEfficiency hybrid_efficiency(const trace::Trace& trace, Convention convention,
                                   const std::vector<std::pair<trace::Time, trace::Time>>& intervals, double t_ideal,
                                   double useful_ideal_max);
// The replay engine's run: process 0 gets the result, every other process an empty one.
HybridEfficiency hybrid_efficiency(const engine::Shard& shard, Convention convention,
                                   const std::vector<std::pair<trace::Time, trace::Time>>& intervals, double t_ideal,
                                   double useful_ideal_max, engine::Transport& transport);

// The hybrid factors over the time of a time-resolved result `r` (process 0's; the others' is
// ignored): its cut's pieces, or [T0, T1]; its T_ideal and ideal useful maximum; MPI SerE and
// TrfE NaN when the trace has no MPI call (BSC prints Non-Avail: no ideal MPI run to compare).
HybridEfficiency hybrid_of(const engine::Shard& shard, const TimeResolvedResult& r, engine::Transport& transport);
HybridEfficiency hybrid_of(const trace::Trace& trace, const TimeResolvedResult& r);

}  // namespace waitlab::analysis
