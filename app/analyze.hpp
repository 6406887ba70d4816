// waitlab::app — running the trace analyses and reporting them (`waitlab analyze`, and the
// analyses a scenario names in outputs.analyses for `waitlab run`).
//
// Promise: run_analyses() builds the one Matching of a trace and runs the selected
// analyses on it (delay costs and the critical path need the wait states, which are then
// computed too). The report goes out as data: the "analyses" object of summary.json
// (docs/summary-json.md; deterministic, no host figures), one CSV per table with a header
// row and SI units (docs/analyses.md), and a short summary for the terminal. Host times of
// each analysis go to host.json only.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "analysis/critpath/critpath.hpp"
#include "analysis/delay/delay.hpp"
#include "analysis/idlewave/idlewave.hpp"
#include "analysis/minprofile/estimator.hpp"
#include "analysis/timeresolved/timeresolved.hpp"
#include "analysis/trace/match.hpp"
#include "analysis/waitstate/waitstate.hpp"

namespace waitlab::app {

struct AnalysisSelection {
  bool waitstate = false;
  bool delay = false;
  bool critpath = false;
  bool minprofile = false;
  bool idlewave = false;
  bool timeresolved = false;
  analysis::WaitStateOptions waitstate_options;  // Scalasca's collective classes unless told
  bool any() const { return waitstate || delay || critpath || minprofile || idlewave || timeresolved; }
  std::vector<std::string> names() const;  // in the order waitstate, delay, critpath, minprofile, idlewave, timeresolved
};

// Parses names (models::select_analyses: comma-separated lists, `all`, delay and critpath
// imply waitstate); unknown names throw InputError "<where>: unknown analysis 'x'; did you mean 'y'? ...".
AnalysisSelection parse_analyses(const std::vector<std::string>& names, const std::string& where);

struct AnalysisReport {
  AnalysisSelection selection;
  trace::Matching matching;
  std::vector<std::string> path_names;  // "main/compute/MPI_Recv" per call path id, for every output
  std::optional<analysis::WaitStateResult> waits;
  std::optional<analysis::DelayResult> delay;
  std::optional<analysis::CriticalPathResult> critpath;
  std::optional<minprofile::Result> minprofile;
  std::optional<analysis::IdleWaveResult> idlewave;
  std::optional<analysis::TimeResolvedResult> timeresolved;
  std::string timeresolved_note;  // why the ideal reference is not the one asked for ("" if it is)
  // Said on the terminal and in summary.json: a trace without MPI calls, an ideal estimate that
  // could not be made, ...
  std::vector<std::string> timeresolved_warnings;
  // Host seconds per step (not deterministic: host.json only).
  double match_seconds = 0, waitstate_seconds = 0, delay_seconds = 0, critpath_seconds = 0, minprofile_seconds = 0,
         idlewave_seconds = 0, timeresolved_seconds = 0;
};

// What the time-resolved analysis needs beyond the trace: its windows, and the ideal reference:
// a re-simulation of the same run on an ideal network (`waitlab run`), or none for the Lamport
// replay of the trace itself (`waitlab analyze`, and the fallback when the two traces' events
// do not correspond).
struct TimeResolvedInput {
  analysis::WindowOptions windows;
  const trace::Trace* ideal = nullptr;
  // Whose definitions of the run's span and of useful time (ALGORITHMS.md §6); analyze takes the
  // trace origin's (analysis::default_convention) unless --convention says otherwise.
  analysis::Convention convention = analysis::Convention::Waitlab;
  // Names the window rule in errors ("--windows"; a run's comes from its scenario).
  std::string windows_where = "outputs.windows";
};

// The most windows the timeresolved analysis makes (as for N equal windows, scenarios/windows.hpp).
inline constexpr double kMaxWindows = 1e6;

// `online`: the simulator's own estimate of this run (RunOptions::minprofile), used instead of
// computing it from the trace (they are equal: tests/sim/test_minprofile_online.cpp).
// Throws InputError naming timeresolved.windows_where when windows of a fixed length would be
// more than kMaxWindows over the trace's span (first to last event).
AnalysisReport run_analyses(const trace::Trace& trace, const AnalysisSelection& selection,
                            std::optional<minprofile::Result> online = std::nullopt,
                            const TimeResolvedInput& timeresolved = {});

nlohmann::ordered_json analyses_json(const AnalysisReport& report);
nlohmann::ordered_json analyses_host_json(const trace::Trace& trace, const AnalysisReport& report);
// Writes the CSV tables of the analyses that ran into `dir` (atomically) and removes the
// tables of those that did not; draws the idle-wave pictures when that analysis ran (a
// picture that cannot be drawn is reported on standard error, never an error); returns the
// paths written.
std::vector<std::string> write_analysis_tables(const std::string& dir, const AnalysisReport& report);
void print_analysis_summary(const AnalysisReport& report, std::ostream& out);

// `waitlab analyze TRACE [--out DIR] [--analyses ...]`
struct AnalyzeArgs {
  std::string trace;                   // .wlt, OTF2 or Paraver (analysis/trace/trace_io.hpp)
  std::string out_dir;                 // default: <trace's directory>/analysis
  std::vector<std::string> analyses;   // default: all
  std::string clock_correction = "auto";  // docs/clock-correction.md
  bool alltoallv_nxn = false;          // count MPI_Alltoallv as N×N (Scalasca does not)
  std::string windows;                 // time-resolved windows (scenarios/windows.hpp); "" = the default
  std::string convention = "auto";     // auto (the trace origin's), bsc, scalasca, waitlab
  std::string ideal = "auto";          // lamport, smpi, both; auto: both for measured traces, lamport otherwise
};
void analyze_command(const AnalyzeArgs& args, std::ostream& out);

}  // namespace waitlab::app
