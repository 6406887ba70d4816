#include "app/run_command.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "analysis/registry/registry.hpp"
#include "analysis/trace/atomic_file.hpp"
#include "analysis/trace/trace.hpp"
#include "app/analyze.hpp"
#include "app/inputs.hpp"
#include "analysis/output/json_text.hpp"
#include "app/output_dir.hpp"
#include "app/report.hpp"
#include "app/summary.hpp"
#include "analysis/timeresolved/output.hpp"
#include "app/version.hpp"
#include "models/workload.hpp"
#include "scenarios/scenario.hpp"
#include "analysis/timeresolved/windows.hpp"
#include "util/error.hpp"

namespace waitlab::app {

namespace fs = std::filesystem;

namespace {

std::string seconds(double s) {
  return fmt::format("{:.6g} s", s);
}

// 1234567 -> "1,234,567": operation counts are read by people.
std::string grouped(std::uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// The first sentence of a description, cut at a word boundary to fit `max` characters.

void print_run_summary(const scenarios::Scenario& s, const Outcome& o, const std::vector<std::string>& files,
                       const AnalysisReport& report, std::ostream& out) {
  std::string perts;
  for (const auto& p : s.perturbations) perts += (perts.empty() ? "" : ", ") + p.type;
  out << fmt::format("scenario        {} — {}, {} ranks × {} iterations on a {} platform{}\n", s.name,
                     s.workload.type, o.ranks, o.iterations, s.platform.type,
                     perts.empty() ? "" : "; perturbations: " + perts);
  out << fmt::format("simulated time  {} (MPI_Init to MPI_Finalize: {})\n", seconds(o.fig.simulated_time),
                     seconds(o.fig.wall_time));
  if (o.base_fig)
    out << fmt::format("baseline        {} unperturbed ({:+.6g} s from the perturbations)\n",
                       seconds(o.base_fig->simulated_time),
                       o.fig.simulated_time - o.base_fig->simulated_time);
  std::string inj;
  for (std::size_t c = 0; c < trace::kCauseCount; ++c) {
    const auto& cf = o.fig.injected[c];
    inj += fmt::format("{}{} {} ({} rank{})", inj.empty() ? "" : ", ",
                       trace::cause_name(static_cast<trace::Cause>(c)), seconds(cf.total), cf.ranks,
                       cf.ranks == 1 ? "" : "s");
  }
  out << "injected        " << inj << "\n";
  for (const auto& n : o.replay_notes) out << "replay note     " << n << "\n";
  std::uint64_t ops = o.fig.mpi_operations + (o.base_fig ? o.base_fig->mpi_operations : 0);
  out << fmt::format(
      "MPI operations  {}{} in {:.3g} s of host time ({} simulated operations per second)\n",
      grouped(o.fig.mpi_operations),
      o.base_fig ? " (+" + grouped(o.base_fig->mpi_operations) + " in the baseline)" : "", o.host_seconds,
      grouped(
          static_cast<std::uint64_t>(o.host_seconds > 0 ? static_cast<double>(ops) / o.host_seconds : 0)));
  print_analysis_summary(report, out);
  out << "results         ";
  for (std::size_t i = 0; i < files.size(); ++i) out << (i ? ", " : "") << files[i];
  out << "\n";
}

// Removes an output of an earlier run that this run does not replace; it would not match.
// (In the staging directory: the commit removes it from the output directory.)
void remove_stale(const std::string& path) {
  std::error_code ec;
  fs::remove(path, ec);
  if (ec) throw InputError("cannot remove " + path + " (left from an earlier run): " + ec.message());
}

}  // namespace

namespace {

// Simulates `s` (with `workload` if given) and writes the outputs of a run into `dir`: prepared
// in a staging directory and put in place only when all of them are written (app/output_dir.hpp),
// so a run that fails at any point leaves the directory as it was.
void simulate_and_write(const scenarios::Scenario& s, const std::string& out_dir, bool want_progress,
                        std::unique_ptr<models::Workload> workload, std::vector<std::string> replay_notes,
                        std::ostream& out) {
  const std::string dir = out_dir.empty() ? s.outputs.dir : out_dir;
  check_output_dir(dir);  // a file in the way is said before the simulation, not after it
  // Nothing the run writes may be something it read (`waitlab replay r/trace.wlt --out r`).
  Inputs inputs;
  inputs.add_scenario(s);
  inputs.check_output_dir(dir);
  if (s.outputs.trace) {
    inputs.check_output((fs::path(dir) / "trace.wlt").string());
    if (s.run.baseline) inputs.check_output((fs::path(dir) / "baseline.wlt").string());
    if (!s.run.footprint.empty()) inputs.check_output((fs::path(dir) / "twin.wlt").string());
  }

  const bool progress = want_progress && s.outputs.progress && ::isatty(STDERR_FILENO) == 1;
  const bool prebuilt = workload != nullptr;
  // Nothing reads the events of a run that writes no trace and analyses none: they are
  // counted, not recorded (the run's memory and time are then mostly SimGrid's).
  // run.footprint brings its analysis; the analysis without the twin is said before the run.
  std::vector<std::string> analysis_names = s.outputs.analyses;
  if (!s.run.footprint.empty()) analysis_names.push_back("footprint");
  AnalysisSelection selection = parse_analyses(analysis_names, "outputs.analyses");
  if (selection.has("footprint") && s.run.footprint.empty())
    throw InputError(s.file + ": outputs.analyses: footprint compares the run with its twin without a "
                     "perturbation: name it in run.footprint (e.g. --set run.footprint=delay) or --footprint");
  const bool analysed = selection.any();
  const bool events = s.outputs.trace || analysed;

  OutputDir staged(dir, inputs);
  std::vector<std::string> files;
  try {
    const fs::path d(staged.path());
    const std::string summary = (d / "summary.json").string();
    const std::string trace_path = (d / "trace.wlt").string();
    const std::string baseline_path = (d / "baseline.wlt").string();
    const std::string twin_path = (d / "twin.wlt").string();
    const std::string host_path = (d / "host.json").string();
    // summary.json is written last: its presence says that the files beside it belong to it.
    // (The commit, too, removes an old one first and puts the new one in place last.)
    remove_stale(summary);
    remove_stale((d / "report.html").string());
    files.push_back(summary);
    // The simulation process writes the traces into place as it runs; the trace comes back
    // into memory only for the analyses.
    TraceFiles traces;
    traces.keep = analysed;
    if (s.outputs.trace) {
      traces.run = trace_path;
      files.push_back(trace_path);
    } else {
      remove_stale(trace_path);
    }
    if (s.outputs.trace && s.run.baseline) {
      traces.baseline = baseline_path;
      files.push_back(baseline_path);
    } else {
      remove_stale(baseline_path);
    }
    if (s.outputs.trace && !s.run.footprint.empty()) {
      traces.twin = twin_path;
      files.push_back(twin_path);
    } else {
      remove_stale(twin_path);
    }
    Outcome o = simulate_scenario(s, progress, std::move(workload), events, traces);
    if (prebuilt) {  // the conversion's notes, then those of the run (prepare())
      replay_notes.insert(replay_notes.end(), o.replay_notes.begin(), o.replay_notes.end());
      o.replay_notes = std::move(replay_notes);
    }
    analysis::TimeResolvedInput tri;  // outputs.windows was checked by the loader
    tri.windows =
        analysis::parse_windows(s.outputs.windows.empty() ? analysis::kDefaultWindows : s.outputs.windows);
    if (o.ideal) tri.ideal = &o.ideal->trace;
    if (o.twin) selection.footprint.twin = &o.twin->trace;
    const AnalysisReport report = run_analyses(o.result.trace, selection, o.result.estimate, tri);

    nlohmann::ordered_json host;
    host["note"] = "host-dependent figures of the last run; never compared, never in summary.json";
    host["generator"] = std::string("waitlab ") + kVersion;
    // Where the scenario is on this host, for `waitlab whatif RUN_DIR` (host-dependent: never in summary.json).
    if (!prebuilt && !s.file.empty()) {  // a replay's scenario is made from its command line
      std::error_code abs_ec;
      host["scenario_path"] = fs::absolute(s.file, abs_ec).string();
    }
    host["host_seconds"] = o.host_seconds;
    host["simulation_host_seconds"] = o.result.stats.host_seconds;
    if (o.baseline) host["baseline_simulation_host_seconds"] = o.baseline->stats.host_seconds;
    if (o.ideal) host["ideal_network_simulation_host_seconds"] = o.ideal->stats.host_seconds;
    if (o.twin) host["footprint_twin_simulation_host_seconds"] = o.twin->stats.host_seconds;
    host["mpi_operations_per_host_second"] =
        o.host_seconds > 0
            ? static_cast<double>(o.fig.mpi_operations + (o.base_fig ? o.base_fig->mpi_operations : 0) +
                                  (o.twin ? o.twin->stats.mpi_operations : 0)) /
                  o.host_seconds
            : 0.0;
    // The simulation process's memory: measured peak and the estimate made before it started.
    host["simulation_peak_rss_bytes"] = o.result.stats.peak_rss_bytes;
    host["simulation_estimated_rss_bytes"] = o.result.stats.estimated_rss_bytes;
    host["simulation_shared_rss_bytes"] = o.result.stats.base_rss_bytes;
    if (report.any()) host["analyses"] = analyses_host_json(o.result.trace.event_count(), report);
    for (auto& f : write_analysis_tables(staged.path(), report)) files.push_back(std::move(f));
    trace::write_file_atomic(host_path, output::json_text(host) + "\n");
    files.push_back(host_path);
    auto sj = summary_json(s, o);
    sj["analyses"] = analyses_json(report);
    trace::write_file_atomic(summary, output::json_text(sj) + "\n");
    if (std::string report_path = try_write_report(staged.path(), &staged); !report_path.empty())
      files.push_back(std::move(report_path));
    staged.commit();
    for (auto& f : files) f = staged.final_text(f);
    print_run_summary(s, o, files, report, out);
  } catch (...) {
    staged.rethrow_final();
  }
}

}  // namespace

void run_command(const RunArgs& args, std::ostream& out) {
  Inputs().add(args.scenario, "the scenario");  // a FIFO is refused before it is opened
  const scenarios::Scenario s = scenarios::load_scenario(args.scenario, args.sets);
  simulate_and_write(s, args.out_dir, args.progress, nullptr, {}, out);
}

void run_scenario(const scenarios::Scenario& s, const std::string& out_dir, bool progress, std::ostream& out) {
  simulate_and_write(s, out_dir, progress, nullptr, {}, out);
}

void replay_command(const ReplayArgs& args, std::ostream& out) {
  scenarios::ReplayRequest req;
  req.trace = args.trace;
  req.platform = args.platform;
  req.scenario = args.scenario;
  req.compute_scales = args.compute_scales;
  req.iterations_from = args.iterations_from;
  req.speed = args.speed;
  req.overrides = args.sets;
  // Every file of the trace is checked to be a file before any is opened.
  Inputs().add_trace(args.trace);
  if (!args.scenario.empty()) Inputs().add(args.scenario, "the scenario");
  // The trace is read once: the scenario's checks need its rank count, the run its actions.
  const scenarios::Scenario first = scenarios::replay_scenario(req);
  std::vector<std::string> notes;
  auto workload = scenarios::load_trace_workload(first.workload, first.file, &notes);
  req.ranks = workload->ranks();
  const scenarios::Scenario s = scenarios::replay_scenario(req);
  simulate_and_write(s, args.out_dir, args.progress, std::move(workload), std::move(notes), out);
}
}  // namespace waitlab::app
