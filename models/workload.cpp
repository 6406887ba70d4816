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
    std::string msg = opts.context().empty() ? std::string() : opts.context() + ": ";
    msg += "unknown workload '" + type + "'";
    const auto hint = did_you_mean(type, names);
    if (!hint.empty()) msg += "; did you mean '" + hint + "'?";
    msg += " (workloads:";
    for (const auto& n : names) msg += " " + n;
    msg += ")";
    throw InputError(msg);
  }
  return e->make(opts);
}

}  // namespace waitlab::models
