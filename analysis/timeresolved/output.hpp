// waitlab::analysis — the time-resolved efficiency analysis as data and a picture.
//
// Promise: timeresolved_json() is the `analyses.timeresolved` object of summary.json (also
// written alone as timeresolved.json, deterministic); write_timeresolved_files() writes it and
// timeresolved.csv (one row per window, per-window and cumulative metrics, SI units) into a
// directory, or removes them with a null result; the picture is drawn from those files (the
// entry's picture, analysis/timeresolved/entry.cpp).
// docs/analyses.md describes every column and field.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "analysis/output/entry.hpp"
#include "analysis/timeresolved/hybrid.hpp"
#include "analysis/timeresolved/timeresolved.hpp"

namespace waitlab::analysis {

// The options of the timeresolved analysis: its windows, and the ideal reference — a
// re-simulation of the same run on an ideal network (`waitlab run`), or none for the Lamport
// replay of the trace itself (`waitlab analyze`, and the fallback when the two traces' events
// do not correspond).
struct TimeResolvedInput {
  WindowOptions windows;
  const trace::Trace* ideal = nullptr;
  // Whose definitions of the run's span and of useful time (ALGORITHMS.md §6); analyze takes the
  // trace origin's (default_convention) unless --convention says otherwise.
  Convention convention = Convention::Waitlab;
  // Names the window rule in errors ("--windows"; a run's comes from its scenario).
  std::string windows_where = "outputs.windows";
  // The part of the run to compute on (cut.hpp; none: the whole run): analyze's --time-range,
  // --region, --iterations.
  CutSpec cut = {};
};

// Its result: the metrics, why the ideal reference is not the one asked for ("" if it is), and
// what a reader of the numbers must know (said on the terminal and in summary.json: a trace
// without MPI calls, an ideal estimate that could not be made, ...).
struct TimeResolvedRun {
  TimeResolvedResult result;
  HybridEfficiency hybrid;  // over the same time; hybrid.hybrid false for a run without threads
  std::string note;
  std::vector<std::string> warnings;
};

// The most windows the timeresolved analysis makes (as for N equal windows, windows.hpp).
inline constexpr double kMaxWindows = 1e6;

// The windows are bounded before any analysis runs: InputError naming input.windows_where when
// windows of a fixed length would be more than kMaxWindows over the trace's span (first to last
// event), or more than window_limit() windows for the trace's events.
void check_window_count(const trace::Trace& trace, const TimeResolvedInput& input);
// The same from the span (first to last event, or the declared span if wider; first > last if
// there is none) and the events of a trace: what the processes of waitlab-mpi reduce.
void check_window_count(double first, double last, std::size_t events, const TimeResolvedInput& input);

// `note`: why the reference is not the one asked for ("" if it is); `warnings`: what a reader of
// the numbers must know (no MPI calls, an ideal estimate that could not be made).
// `hybrid`: the hybrid MPI+OpenMP factors (the `hybrid` object; null when absent or not hybrid).
nlohmann::ordered_json timeresolved_json(const analysis::TimeResolvedResult& r, const std::string& note,
                                         const std::vector<std::string>& warnings = {},
                                         const HybridEfficiency* hybrid = nullptr);
std::vector<std::string> write_timeresolved_files(const std::string& dir, const analysis::TimeResolvedResult* r,
                                                  const std::string& note, const std::vector<std::string>& warnings = {},
                                                  const HybridEfficiency* hybrid = nullptr);
void print_timeresolved_summary(const analysis::TimeResolvedResult& r, const std::string& note,
                                const std::vector<std::string>& warnings, std::ostream& out,
                                const HybridEfficiency* hybrid = nullptr);
// The `hybrid` object: null unless h says the run is hybrid; `parallel_efficiency` (MPI PE ×
// OpenMP PE), `mpi` {load_balance, communication_efficiency, serialisation_efficiency,
// transfer_efficiency, parallel_efficiency}, `openmp` {load_balance, communication_efficiency,
// parallel_efficiency}, `openmp_split` {serialisation_efficiency, load_balance,
// scheduling_efficiency} (null without parallel regions). NaN is null.
nlohmann::ordered_json hybrid_json(const HybridEfficiency* h);
// The `cut` object (null without a cut): kind, option, spec, text (cut_text), instances,
// locations, length_s, run_start_s, run_end_s, fraction_of_run, pieces [[start_s, end_s], ...].
nlohmann::ordered_json cut_json(const analysis::TimeResolvedResult& r);
// The `convention` object: name, span, useful time, units.
nlohmann::ordered_json convention_json(const analysis::TimeResolvedResult& r);
// "the ideal-network run", "Lamport replay", "SMPI replay on an ideal network".
std::string estimate_title(const std::string& source);

// The report's section on the time-resolved efficiency (null `tr`: summary.json has none,
// timeresolved.csv was left).
std::string timeresolved_report_html(const output::Json* tr, const output::ReportContext& rc);

}  // namespace waitlab::analysis
