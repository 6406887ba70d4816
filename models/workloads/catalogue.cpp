// The catalogue of synthetic workloads (models/workload.hpp: workloads(), find_workload(),
// make_workload()): one line per workload file of this folder.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "models/workload.hpp"
#include "models/workloads/common.hpp"
#include "util/error.hpp"

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

}  // namespace waitlab::models
