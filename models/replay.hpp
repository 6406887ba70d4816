// waitlab::models — replaying measured traces: a Trace or a TI trace as a Workload.
//
// Promise: replay_trace() turns a timed trace into per-rank action streams the engine runs
// like a synthetic workload: the time between MPI calls becomes compute (seconds, or flops
// at `speed` flop/s) in the innermost user region around it ("main" outside every region),
// user regions become Enter/Leave actions (so compute keeps its call path), and every MPI
// call becomes the same call with the peers, tags, sizes, roots and requests the trace
// recorded (an MPI_Irecv's source, tag and size come from its completion when its posting
// does not hold them; an MPI_Waitall that completed some of the outstanding requests is an
// MPI_Waitall over those). MPI_Init and MPI_Finalize are the engine's; time before MPI_Init's
// end and after MPI_Finalize's start is not replayed. replay_ti() does the same for a TI
// trace (compute in flops, sleep in seconds; requests found by (source, destination, tag)
// as SMPI's replayer finds them; a `waitall` completes the outstanding requests that no later
// `wait` record of the rank names, all when none is named; MPI_ANY_SOURCE receives resolved
// from the sends left over for them; the v-collectives and reduce-scatter with the counts of
// their records, stored in the workload's CountsPool; scans as an allreduce). A timed trace's
// v-collectives get their counts from all members' totals (exact but for MPI_Alltoallv, whose
// per-pair sizes are then in proportion to the totals). What cannot be replayed
// exactly is listed in ReplayReport::notes (one line each, with counts); what cannot be
// replayed at all (ANY_SOURCE receives no send is left for, a collective on a communicator
// that does not hold its caller) throws InputError naming the rank and the event or file:line.
// Communicators: a collective on a sub-communicator of a timed trace runs on the same group —
// the workload's definitions keep every communicator its collectives use (comms[0] is
// MPI_COMM_WORLD, the others in the order of their trace ids, with names and members; the
// engine creates them) and the action names it, with the root converted from the world rank
// the trace records to its rank in the communicator. Point-to-point calls on any communicator
// run on MPI_COMM_WORLD with the trace's peers, which are world ranks (a note counts them). A TI
// trace records no communicator: its collectives are assumed on MPI_COMM_WORLD and comm_split/
// comm_dup records are no-ops, as the notes say.
// Compute scales (`--compute-scale`) multiply the compute of a region and/or a rank range.
// Iterations: the n-th instance of `iteration_region` on a rank is iteration n; without it,
// iterations follow the loop structure of the calls (models/loops.hpp: the period after which
// a rank's steps repeat), and where none is found the n-th compute interval of a rank is
// iteration n (so a delay perturbation can target it); the notes say which.
// ti_from_workload() writes any workload's actions as TI records (regions dropped, compute
// as flops at `speed`, collectives on sub-communicators as calls on MPI_COMM_WORLD with world-
// rank roots: `lost` says so); logical_trace() gives a workload logical times (compute takes
// its seconds, or flops at `speed`; MPI calls take no time; communicators kept), for
// converting TI to timed formats.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "analysis/trace/ti.hpp"
#include "analysis/trace/trace.hpp"
#include "models/workload.hpp"

namespace waitlab::models {

struct ComputeScale {
  std::string region;  // "" = every region
  Rank first = 0;      // rank range [first, last]; last < 0 = every rank
  Rank last = -1;
  double factor = 1;
  bool applies(const std::string& region_name, Rank r) const {
    return (region.empty() || region == region_name) && (last < 0 || (r >= first && r <= last));
  }
};

// "0.5" (everything), "solve=0.5" (region), "@0-15=2" (ranks 0..15), "solve@3=1.5" (both).
// Throws InputError naming `where` for anything else or a negative or non-finite factor.
ComputeScale parse_compute_scale(const std::string& text, const std::string& where);

struct ReplayOptions {
  std::vector<ComputeScale> scales;
  std::string iteration_region;  // "" = every compute interval is an iteration
  double speed = 0;              // > 0: compute becomes flops at this speed; 0: seconds
  // Measured traces: the MPI calls without an event-model operation (MPI_Comm_rank, MPI_Comm_dup,
  // ...: file "MPI", op None) take no time — an ideal run's, as the Lamport replay and Dimemas
  // time them — instead of their measured duration as compute inside a region of their name.
  bool free_mpi_without_op = false;
};

struct ReplayReport {
  std::vector<std::string> notes;  // approximations, one line each
  std::uint64_t actions = 0;       // actions of every rank
};

std::unique_ptr<Workload> replay_trace(const trace::Trace& trace, const std::string& name,
                                       const ReplayOptions& options, ReplayReport* report = nullptr);
std::unique_ptr<Workload> replay_ti(const trace::TiTrace& ti, const std::string& name,
                                    const ReplayOptions& options, ReplayReport* report = nullptr);
// The same, freeing each rank's records once it is converted (the replay's peak memory is then
// about the records, not the records and the actions).
std::unique_ptr<Workload> replay_ti(trace::TiTrace&& ti, const std::string& name,
                                    const ReplayOptions& options, ReplayReport* report = nullptr);
// The same from a TI trace's file, read one rank at a time (trace::TiReader): a pass over every
// rank's records for what needs them all (every rank's collectives, and where some receive is
// from MPI_ANY_SOURCE a second, for the sends left over for it), then each rank's records again
// as it is converted. Peak memory: one rank's records and the tapes.
std::unique_ptr<Workload> replay_ti_file(const std::string& path, const std::string& name,
                                         const ReplayOptions& options, ReplayReport* report = nullptr);

trace::TiTrace ti_from_workload(const Workload& workload, double speed, std::vector<std::string>* lost = nullptr);
trace::Trace logical_trace(const Workload& workload, double speed);

}  // namespace waitlab::models
