// waitlab::app — running the trace analyses and reporting them (`waitlab analyze`, and the
// analyses a scenario names in outputs.analyses for `waitlab run`).
//
// Promise: run_analyses() runs the selected analyses of the registry (analysis/registry) on
// one trace, with the options of the command line or the scenario. Everything else asks each
// analysis's entry (analysis/output/entry.hpp): the "analyses" object of summary.json
// (docs/summary-json.md; deterministic, no host figures; one section per analysis of the
// registry, null for those that did not run), its files (CSV tables with a header row and SI
// units, docs/analyses.md), its pictures and its lines of the terminal summary. Host times of
// each analysis go to host.json only.
#pragma once

#include <nlohmann/json.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/critpath/critpath.hpp"
#include "analysis/minprofile/estimator.hpp"
#include "analysis/registry/registry.hpp"
#include "analysis/timeresolved/output.hpp"
#include "analysis/trace/clock.hpp"
#include "analysis/trace/formats.hpp"
#include "analysis/waitstate/waitstate.hpp"
#include "analysis/footprint/output.hpp"
#include "app/ideal_replay.hpp"
#include "app/inputs.hpp"

namespace waitlab::app {

// The analyses to run (analysis/registry: names in registry order, needs included) and the
// options the command line or the scenario gives them.
struct AnalysisSelection {
  std::vector<std::string> names;
  analysis::WaitStateOptions waitstate_options;  // Scalasca's collective classes unless told
  analysis::CriticalPathOptions critpath_options;  // waitlab's bounds unless the convention is Scalasca's
  analysis::FootprintInput footprint;            // the twin (run.footprint, analyze --twin)
  bool any() const { return !names.empty(); }
  bool has(std::string_view name) const;
};

// Parses names (analysis::select_analyses: comma-separated lists, `all`, an analysis brings
// those it needs); unknown names throw InputError "<where>: unknown analysis 'x'; did you mean 'y'? ...".
AnalysisSelection parse_analyses(const std::vector<std::string>& names, const std::string& where);

// The analyses that ran on one trace: each result by name (analysis/registry), with the trace.
struct AnalysisReport : analysis::AnalysisRun {
  const trace::Trace* trace = nullptr;
  template <class T>
  const T* result(std::string_view name) const {
    return results.get<T>(name);
  }
  output::Context context() const { return AnalysisRun::context(*trace); }
};

// The options run_analyses gives the registry (analysis::run_analyses, run_analyses_sharded).
output::Values analysis_options(const AnalysisSelection& selection, std::optional<minprofile::Result> online,
                                const analysis::TimeResolvedInput& timeresolved);
// `online`: the simulator's own estimate of this run (RunOptions::minprofile), used instead of
// computing it from the trace (they are equal: tests/sim/test_minprofile_online.cpp).
// Throws InputError naming timeresolved.windows_where when windows of a fixed length would be
// more than analysis::kMaxWindows over the trace's span (first to last event).
AnalysisReport run_analyses(const trace::Trace& trace, const AnalysisSelection& selection,
                            std::optional<minprofile::Result> online = std::nullopt,
                            const analysis::TimeResolvedInput& timeresolved = {});

nlohmann::ordered_json analyses_json(const AnalysisReport& report);
nlohmann::ordered_json analyses_host_json(std::uint64_t event_count, const AnalysisReport& report);
// Writes the files of the analyses that ran into `dir` (atomically) and removes those of the
// analyses that did not; draws the pictures of those that ran and have some (a picture that
// cannot be drawn is reported on standard error, never an error); returns the paths written.
std::vector<std::string> write_analysis_tables(const std::string& dir, const AnalysisReport& report);
void print_analysis_summary(const AnalysisReport& report, std::ostream& out);

// The cut of the POP metrics as given (analysis::parse_cut reads it): at most one of the three.
struct CutArgs {
  std::string time_range;  // --time-range FROM:TO
  std::string region;      // --region NAME
  std::string iterations;  // --iterations [REGION:]FIRST-LAST
  bool any() const { return !time_range.empty() || !region.empty() || !iterations.empty(); }
};

// `waitlab analyze TRACE [--out DIR] [--analyses ...]`
struct AnalyzeArgs {
  std::string trace;                   // .wlt, OTF2 or Paraver (analysis/trace/trace_io.hpp)
  std::string out_dir;                 // default: <trace's directory>/analysis
  std::vector<std::string> analyses;   // default: all
  std::string clock_correction = "auto";  // docs/clock-correction.md
  bool alltoallv_nxn = false;          // count MPI_Alltoallv as N×N (Scalasca does not)
  std::string windows;                 // time-resolved windows (analysis/timeresolved/windows.hpp); "" = the default
  std::string convention = "auto";     // auto (the trace origin's), bsc, scalasca, waitlab
  std::string ideal = "auto";          // lamport, smpi, both; auto: both for measured traces, lamport otherwise
  CutArgs cut;                         // the timeresolved analysis's cut
  std::string twin;                    // --twin TRACE: the footprint analysis's twin (selects it)
};

// The steps of `waitlab analyze`, which `waitlab-mpi analyze` (app/mpi_analyze.cpp) takes too:
// what the command makes of its options before it reads the trace (InputError naming the option)…
struct AnalyzeOptions {
  AnalysisSelection sel;
  trace::ClockOptions clock;
  analysis::TimeResolvedInput tri;
};
AnalyzeOptions analyze_options(const AnalyzeArgs& args);
// … the conventions once the trace's origin is known: --convention auto takes the origin's
// (analysis::default_convention), and the critical path takes Scalasca's bounds under Scalasca's
// convention, waitlab's otherwise …
void apply_convention(AnalyzeOptions& options, const AnalyzeArgs& args, trace::Origin origin);
// … where it writes (--out, or <trace's directory>/analysis) …
std::string analyze_output_dir(const AnalyzeArgs& args);

// … the trace as read: the whole trace (`waitlab analyze`) or, under MPI, its head (definitions,
// attributes, origin; no events), with its size, what the reader left out of it by kind (said
// on the terminal and in summary.json), what it found suspect but read (a trace cut short) and
// its clock correction …
struct ReadTrace {
  trace::Trace trace;
  std::size_t ranks = 0;
  std::size_t threads = 0;  // threads beyond each rank's first
  std::uint64_t events = 0;
  trace::SkippedKinds skipped;
  std::vector<std::string> warnings;
  trace::ClockReport clock_report;
};

// … the SMPI engine's ideal-network replay (Dimemas' estimate; app/ideal_replay.hpp), which needs
// SimGrid: `waitlab` gives smpi_ideal_run, waitlab-mpi a child `waitlab` (no hook: none is made,
// and the analysis says why). add_smpi_estimate adds it next to the Lamport replay's when
// --ideal asks for it (auto: for measured traces) and returns its host seconds (0 if it did not run) …
using SmpiIdealHook =
    std::function<SmpiIdealRun(const ReadTrace&, const AnalyzeArgs&, const analysis::TimeResolvedResult&)>;
double add_smpi_estimate(AnalysisReport& report, const ReadTrace& rt, const AnalyzeArgs& args,
                         const SmpiIdealHook& smpi_ideal);

// … and the outputs, written aside and put in place when complete (app/output_dir.hpp: a failure
// leaves `dir` as it was): summary.json, the analyses' files and pictures, host.json and
// report.html; then the terminal summary on `out`.
void write_analysis_outputs(const AnalyzeArgs& args, const ReadTrace& rt, const AnalysisReport& report,
                            const Inputs& inputs, const std::string& dir, double smpi_host_seconds, std::ostream& out);

void analyze_command(const AnalyzeArgs& args, std::ostream& out, const SmpiIdealHook& smpi_ideal);

}  // namespace waitlab::app
