#include "models/workload.hpp"

#include "analysis/trace/error.hpp"
#include "models/workloads/common.hpp"

namespace waitlab::models {

const std::vector<WorkloadEntry>& workloads() {
  // Built once on first use and never modified: immutable, so no shared mutable state.
  static const std::vector<WorkloadEntry> entries = [] {
    std::vector<WorkloadEntry> e;
    e.push_back(synth::heat1d_entry());
    e.push_back(synth::halo2d_entry());
    e.push_back(synth::halo3d_entry());
    e.push_back(synth::sweep2d_entry());
    e.push_back(synth::allreduce_loop_entry());
    e.push_back(synth::bcast_reduce_entry());
    e.push_back(synth::alltoall_loop_entry());
    return e;
  }();
  return entries;
}

const WorkloadEntry* find_workload(std::string_view name) {
  for (const auto& e : workloads())
    if (e.spec.name == name) return &e;
  return nullptr;
}

std::unique_ptr<Workload> make_workload(const std::string& type, const Options& opts) {
  const auto* e = find_workload(type);
  if (!e) {
    std::vector<std::string> names;
    for (const auto& w : workloads()) names.push_back(w.spec.name);
    throw InputError(unknown_model_message(SpecKind::Workload, type, names, opts.context()));
  }
  return e->make(opts);
}

std::vector<int> grid_coords(const std::vector<int>& grid, int rank) {
  std::vector<int> c(grid.size());
  for (std::size_t i = grid.size(); i-- > 0;) {
    c[i] = rank % grid[i];
    rank /= grid[i];
  }
  return c;
}

int grid_rank(const std::vector<int>& grid, const std::vector<int>& coords) {
  int r = 0;
  for (std::size_t i = 0; i < grid.size(); ++i) r = r * grid[i] + coords[i];
  return r;
}

}  // namespace waitlab::models
