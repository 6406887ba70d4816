// waitlab::app — `waitlab validate --counterfactual`: what removing a cause really saves,
// against what the trace analyses say it costs.
//
// Promise: for each scenario, counterfactual() simulates the baseline and, each in its own
// process (app/jobs.hpp), one variant per injected cause — every delay and imbalance
// perturbation removed (variant `remove: i`) and every region an imbalance acts on rebalanced
// to the mean (variant `rebalance: R`, models/whatif.hpp) — and reports per cause:
//  - the measured saving: runtime and waiting time, baseline minus variant — the waiting the
//    delay analysis charges to causes (every wait state but Wait at Init/Finalize, as in
//    Scalasca) and, apart, the Wait at Init/Finalize saved;
//  - what the delay analysis (paper 002) attributed to the cause: the short- plus long-term
//    delay costs on the call paths and ranks where the cause acted — the delayed rank's call
//    paths in the delay's region; the ranks the imbalance lengthened; the call paths ending
//    in the rebalanced region — baseline minus variant (what is left there without the cause
//    is not its cost);
//  - for a rebalanced region, what the critical-path imbalance indicator (papers 001/002)
//    predicted rebalancing would save: Σ imbalance of the call paths ending in the region.
// It writes DIR/counterfactual.csv and counterfactual.json, and one run directory per job
// (DIR/<scenario>/<job>). Deterministic. docs/validation.md, "Counterfactual".
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace waitlab::app {

struct CounterfactualArgs {
  std::vector<std::string> scenarios;
  std::string out_dir = "out/counterfactual";
  std::vector<std::string> sets;
  int jobs = 1;
};

struct CounterfactualRow {
  std::string scenario;
  std::string change;        // "remove" or "rebalance"
  std::string target;        // "perturbations[1] (delay)", "compute"
  double baseline_runtime_s = 0;
  double runtime_saving_s = 0;
  double waiting_saving_s = 0;           // waiting the delay analysis charges (all but at MPI_Init/MPI_Finalize)
  double finalize_waiting_saving_s = 0;  // Wait at Init + Wait at Finalize, which no delay cost covers
  double attributed_cost_s = 0;       // delay costs where the cause acted, baseline − variant
  double critpath_imbalance_s = -1;   // rebalance rows: the indicator's prediction; else −1 (none)
};

// Returns the rows; throws InputError for a bad scenario or a job that failed on bad input.
std::vector<CounterfactualRow> counterfactual(const CounterfactualArgs& args, std::ostream& out);

}  // namespace waitlab::app
