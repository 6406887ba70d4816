// waitlab::models — workloads: per-rank action streams, generated lazily.
//
// Promise: a Workload says how many ranks and iterations it has, which user regions it
// uses (its Definitions; action region ids refer to them and become the trace's region
// ids), its logical process grid (for grid-based perturbations such as a hot-spot
// sphere), and hands out one independent lazy ActionStream per rank, so 4096 ranks ×
// 1000 iterations need no giant buffers. Synthetic generators register a Spec and a
// factory; replayed traces implement the same interface.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "analysis/trace/trace.hpp"
#include "models/action.hpp"
#include "models/spec.hpp"

namespace waitlab::models {

class Workload {
 public:
  virtual ~Workload() = default;
  virtual std::string name() const = 0;
  virtual int ranks() const = 0;
  virtual int iterations() const = 0;
  // User regions (MpiOp::None); Action::region ids index defs.regions. Communicators:
  // Action::comm ids index defs.comms, members in communicator-rank order as world ranks;
  // comms[0] is MPI_COMM_WORLD (the engine makes it so); empty when every collective is on it.
  virtual const trace::Definitions& definitions() const = 0;
  // Logical process grid, slowest dimension first; product == ranks(). 1-D by default.
  virtual std::vector<int> grid() const { return {ranks()}; }
  // A fresh stream for rank r; streams of different ranks are independent.
  virtual std::unique_ptr<ActionStream> stream(Rank r) const = 0;
  // The sizes of a v-collective action (Action::counts); null for an id the workload does not
  // hold (the engine refuses the action). Valid as long as the workload.
  virtual const Counts* counts(std::uint32_t /*id*/) const { return nullptr; }
};

using WorkloadFactory = std::function<std::unique_ptr<Workload>(const Options&)>;

struct WorkloadEntry {
  Spec spec;
  WorkloadFactory make;
};

// Every synthetic workload (heat1d, halo2d, halo3d, sweep2d, allreduce_loop, bcast_reduce,
// alltoall_loop), in registration order.
const std::vector<WorkloadEntry>& workloads();
const WorkloadEntry* find_workload(std::string_view name);

// The `trace` workload replays a trace file: its spec is registered with the others (scenarios
// are checked against it, `waitlab describe trace` shows it), but only the scenario loader,
// which reads trace files, builds it (scenarios::load_trace_workload, models/replay.hpp).
inline constexpr const char* kTraceWorkload = "trace";
const Spec& trace_workload_spec();

// Builds a workload from validated options. Throws InputError for impossible values.
std::unique_ptr<Workload> make_workload(const std::string& type, const Options& opts);

// Row-major Cartesian numbering of a process grid, as MPI_Cart_create numbers it and as
// Workload::grid() is meant (the last dimension varies fastest): the coordinates of `rank`,
// and back. Grid-based perturbations (hot spot, sub-block) use the same numbering.
std::vector<int> grid_coords(const std::vector<int>& grid, int rank);
int grid_rank(const std::vector<int>& grid, const std::vector<int>& coords);

}  // namespace waitlab::models
