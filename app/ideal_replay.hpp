// waitlab::app — a measured trace replayed on an ideal network by the SMPI engine: Dimemas' way
// of measuring what the run would take without transfer costs (BSC's serialisation and transfer
// efficiencies), next to the Lamport-clock estimate of the timeresolved analysis.
//
// Promise: smpi_ideal_run() turns the trace into per-rank action streams (models::replay_trace:
// the measured compute bursts, every MPI call with its peers and sizes) and simulates them with
// SimGrid's SMPI on a flat cluster whose network is ideal (zero latency, infinite bandwidth;
// sim::NetworkChange::ideal); MPI calls without an event-model operation (MPI_Comm_rank, ...)
// take no time (ReplayOptions::free_mpi_without_op), as in the Lamport replay and Dimemas. The
// replay covers each rank from the end of its MPI_Init to the start of its MPI_Finalize:
//   T_ideal = (max_p Finalize_start − min_p Init_end of the ideal run) + outside
// where outside is, under the bsc convention, Dimemas' time of the rest: max_p (time outside
// MPI calls from T0 to p's MPI_Init) + max_p (time outside MPI calls from p's MPI_Finalize
// start to where p's records end, analysis::records_end); under the others T − W, the measured
// span T of the convention minus the measured [min_p Init end, max_p Finalize start]. The useful time of the ideal run is the measured result's useful_ideal_max
// (each burst is replayed with its measured length: the measured max U, or BSC's under the bsc
// convention), so SerE = useful_ideal_max / T_ideal and TrfE = CommE / SerE
// (analysis::make_estimate). A trace the replay cannot run (a collective on a communicator
// that does not hold its caller, no MPI calls) gives ok = false and the reason; it never fails
// the analysis.
#pragma once

#include <string>
#include <vector>

#include "analysis/timeresolved/timeresolved.hpp"
#include "analysis/trace/trace.hpp"

namespace waitlab::app {

struct SmpiIdealRun {
  bool ok = false;
  std::string why;                  // when !ok
  analysis::IdealEstimate estimate;  // source "smpi_replay"
  double replay_elapsed = 0;        // s: the ideal run from min Init end to max Finalize start
  double outside = 0;               // s: the time outside the replayed range (bsc: Dimemas'; else T − W)
  std::vector<std::string> notes;   // what the replay approximated (models::ReplayReport)
  double host_seconds = 0;          // not deterministic: host.json only
};

// `measured`: the timeresolved result of `trace` (its span, CommE and the ideal run's max useful time).
SmpiIdealRun smpi_ideal_run(const trace::Trace& trace, const std::string& trace_path,
                            const analysis::TimeResolvedResult& measured);

}  // namespace waitlab::app
