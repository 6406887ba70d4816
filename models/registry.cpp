// Registry::instance() (models/spec.hpp): every built-in spec, gathered from the modules that
// define them — a unit of its own, so that spec.cpp, which the models' headers use, includes
// none of them.
#include "models/perturbation.hpp"
#include "models/platform.hpp"
#include "models/spec.hpp"
#include "models/workload.hpp"

namespace waitlab::models {

const Registry& Registry::instance() {
  // Built once on first use and immutable afterwards: no shared mutable state.
  static const Registry registry = [] {
    Registry r;
    register_platforms(r);
    for (const auto& w : workloads()) r.add(w.spec);
    r.add(trace_workload_spec());
    for (const auto& p : perturbation_models()) r.add(p.spec);
    return r;
  }();
  return registry;
}

}  // namespace waitlab::models
