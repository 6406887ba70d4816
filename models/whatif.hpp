// waitlab::models — what-if changes to a workload's compute: scale it, or rebalance a region.
//
// Promise: change_workload() wraps a workload so that every compute action is multiplied by
// a factor that depends only on (region, rank): the product of the matching ComputeScales
// and, for each rebalanced region, the rank's rebalancing factor. Nothing else changes (the
// same MPI calls, regions and iterations), so a variant's trace corresponds event for event
// to the baseline's.
//
// Rebalancing a region R sets every rank's *work* in R — its nominal compute as the
// imbalance models scale it, i.e. what the trace's ground truth records as nominal +
// injected imbalance — to the mean over the ranks that compute in R (or to their minimum),
// by one factor per rank: f_r = target / W_r. One-off delays and noise are left as they
// are (they are not the region's work). With the mean, Σ_r f_r·W_r = Σ_r W_r: the region's
// total work is kept (to rounding). The work is measured by streaming the workload through
// the imbalance models before anything runs (imbalance models do not depend on time), so
// variants need no baseline run and can run in parallel.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "models/perturbation.hpp"
#include "models/replay.hpp"
#include "models/workload.hpp"

namespace waitlab::models {

struct RegionRebalance {
  enum class Target { Mean, Min };
  std::string region;
  Target target = Target::Mean;
};

struct WorkloadChange {
  std::vector<ComputeScale> scales;         // compute-scale syntax of `waitlab replay` (parse_compute_scale)
  std::vector<RegionRebalance> rebalance;   // regions to rebalance, in order
  bool empty() const { return scales.empty() && rebalance.empty(); }
};

// Per rank and region ([rank][region id]), the work (s) of the workload's compute: nominal
// seconds (flops at `speed` flop/s) scaled by the imbalance models among `perturbations`.
// Streams every rank once, whatever the number of regions.
std::vector<std::vector<double>> region_work(const Workload& w, const Perturbations& perturbations, double speed);

// `base` with `change` applied. Throws InputError naming `where` for a region the workload
// does not have, or a rebalanced region no rank computes in.
std::unique_ptr<Workload> change_workload(std::unique_ptr<Workload> base, const WorkloadChange& change,
                                          const Perturbations& perturbations, double speed,
                                          const std::string& where);

}  // namespace waitlab::models
