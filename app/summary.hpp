// waitlab::app — what a scenario run produced, as numbers: key figures, summary.json and
// the checked-in expected figures of the example scenarios.
//
// Promise: everything here is a pure function of the recorded trace, the run statistics and
// the scenario, except the host wall-clock time, which never enters summary.json or the
// expected figures (it goes to the terminal and host.json). So two runs of one scenario
// give byte-identical summary.json files. The schema is docs/summary-json.md.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "analysis/trace/trace.hpp"
#include "scenarios/scenario.hpp"
#include "sim/engine.hpp"

namespace waitlab::app {

inline constexpr int kSummarySchemaVersion = 1;
inline constexpr int kExpectedSchemaVersion = 1;

// Injected time of one cause over all compute intervals.
struct CauseFigures {
  double total = 0;                          // s, summed over all ranks
  std::uint64_t intervals = 0;               // compute intervals it lengthened (> 0 s)
  std::uint64_t ranks = 0;                   // ranks it lengthened at least once
  double max_rank = 0;                       // s, the largest per-rank sum
  trace::Rank max_rank_id = trace::kNoRank;  // the rank with that sum (lowest on ties)
  double mean_rank = 0;                      // s, total / ranks of the run
};

// The deterministic key figures of one simulated run.
struct Figures {
  double simulated_time = 0;  // SimGrid clock at the end, s
  double wall_time = 0;       // simulated s: max MPI_Finalize leave − min MPI_Init enter (not host time)
  std::uint64_t mpi_operations = 0;
  std::uint64_t events = 0;
  std::uint64_t compute_intervals = 0;
  double nominal_compute = 0;  // s, sum of the nominal compute the workload asked for
  std::array<CauseFigures, trace::kCauseCount> injected{};
  double injected_total() const;
};

Figures figures(const trace::RecordTotals& totals, const sim::RunStats& stats);
Figures figures(const trace::Trace& t, const sim::RunStats& stats);  // the totals of t's records

// One simulated scenario (and its unperturbed counterfactual if run.baseline).
struct Outcome {
  int ranks = 0;
  int iterations = 0;
  sim::RunResult result;
  Figures fig;
  std::optional<sim::RunResult> baseline;
  std::optional<Figures> base_fig;
  // The same run on an ideal network (RunOptions::network.ideal), when outputs.analyses has
  // timeresolved: its trace is that analysis' ideal reference.
  std::optional<sim::RunResult> ideal;
  // The twin of run.footprint (scenarios::footprint_twin): the same run without the perturbations
  // it names; its trace is the footprint analysis's reference.
  std::optional<sim::RunResult> twin;
  double host_seconds = 0;  // host wall-clock of all simulations (not deterministic)
  std::vector<std::string> replay_notes;  // what a replayed trace's conversion approximated
};

// Where simulate_scenario writes the traces of the run and of its baseline (sim::RunOptions::
// trace_file): "" = a temporary file. With `keep` false the Outcome's traces hold only their
// attributes (the figures come from the engine's totals): a trace written straight to its
// output file is never held in memory.
struct TraceFiles {
  std::string run;
  std::string baseline;
  std::string twin;  // run.footprint's twin (its trace is always held: the footprint reads it)
  bool keep = true;
};

// Prepares and simulates `s` (with `workload` instead of the scenario's, when given: the
// replay command reads its trace first); adds scenario attributes to the recorded traces.
// With `events` false, the traces keep only MPI_Init's and MPI_Finalize's events (the
// figures count the others: sim::RunOptions::record_events): for callers that read nothing else.
Outcome simulate_scenario(const scenarios::Scenario& s, bool progress,
                          std::unique_ptr<models::Workload> workload = nullptr, bool events = true,
                          const TraceFiles& files = {});

nlohmann::ordered_json summary_json(const scenarios::Scenario& s, const Outcome& o);
// The figures checked in as scenarios/expected/<name>.json.
nlohmann::ordered_json expected_json(const scenarios::Scenario& s, const Outcome& o);
// Differences between checked-in and actual expected figures, one line each ("" = none).
// Counts must match exactly, times to 1e-9 relative (1e-15 s absolute near zero).
std::vector<std::string> compare_expected(const nlohmann::json& expected, const nlohmann::json& actual);

}  // namespace waitlab::app
