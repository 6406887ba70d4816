#include "app/analyze.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "analysis/output/json_text.hpp"
#include "analysis/timeresolved/windows.hpp"
#include "analysis/trace/atomic_file.hpp"
#include "analysis/trace/clock.hpp"
#include "analysis/trace/trace_io.hpp"
#include "app/inputs.hpp"
#include "app/output_dir.hpp"
#include "app/plot.hpp"
#include "app/report.hpp"
#include "app/version.hpp"
#include "util/error.hpp"

namespace waitlab::app {

namespace fs = std::filesystem;

bool AnalysisSelection::has(std::string_view name) const {
  return std::find(names.begin(), names.end(), name) != names.end();
}

AnalysisSelection parse_analyses(const std::vector<std::string>& names, const std::string& where) {
  AnalysisSelection sel;
  try {
    sel.names = analysis::select_analyses(names);
  } catch (const std::invalid_argument& e) {
    throw InputError(where + ": " + e.what());
  }
  return sel;
}

output::Values analysis_options(const AnalysisSelection& sel, std::optional<minprofile::Result> online,
                                const analysis::TimeResolvedInput& tri) {
  output::Values options;
  options.set("waitstate", sel.waitstate_options);
  options.set("critpath", sel.critpath_options);
  if (online) options.set("minprofile", minprofile::Shared(std::make_shared<minprofile::Result>(std::move(*online))));
  options.set("timeresolved", tri);
  if (sel.footprint.twin != nullptr) options.set("footprint", sel.footprint);
  return options;
}

AnalysisReport run_analyses(const trace::Trace& t, const AnalysisSelection& sel,
                            std::optional<minprofile::Result> online, const analysis::TimeResolvedInput& tri) {
  AnalysisReport r;
  static_cast<analysis::AnalysisRun&>(r) =
      analysis::run_analyses(t, sel.names, analysis_options(sel, std::move(online), tri));
  r.trace = &t;
  return r;
}

nlohmann::ordered_json analyses_json(const AnalysisReport& r) {
  nlohmann::ordered_json j;
  if (!r.any()) return nullptr;
  const auto& m = r.matching;
  j["ran"] = r.names();
  j["matching"] = {{"messages", r.messages},
                   {"collective_instances", m.collectives.size()},
                   {"unmatched",
                    {{"sends", m.unmatched.sends},
                     {"receives", m.unmatched.receives},
                     {"requests", m.unmatched.requests},
                     {"collective_calls", m.unmatched.collective_calls},
                     {"unbalanced_regions", m.unmatched.unbalanced_regions},
                     {"stray_events", m.unmatched.stray_events}}}};
  const output::Context context = r.context();
  for (const auto* e : analysis::analyses()) {
    const std::any* result = r.results.find(e->name);
    j[e->name] = result != nullptr ? e->summary(context, *result) : nlohmann::ordered_json(nullptr);
  }
  return j;
}

nlohmann::ordered_json analyses_host_json(std::uint64_t event_count, const AnalysisReport& r) {
  const double events = static_cast<double>(event_count);
  nlohmann::ordered_json j;
  j["events"] = event_count;
  j["matching_s"] = r.match_seconds;
  double all = r.match_seconds;
  for (const auto* e : analysis::analyses()) {
    const auto it = r.seconds.find(e->name);
    const double s = it != r.seconds.end() ? it->second : 0.0;
    j[e->name + "_s"] = s;
    all += s;
  }
  j["events_per_second"] = all > 0 ? events / all : 0.0;
  j["matching_bytes"] = r.matching.memory_bytes();
  return j;
}

std::vector<std::string> write_analysis_tables(const std::string& dir, const AnalysisReport& r) {
  std::vector<std::string> written;
  const output::Context context = r.context();
  for (const auto* e : analysis::analyses()) {
    const std::any* result = r.results.find(e->name);
    for (auto& f : e->write(dir, context, result)) written.push_back(std::move(f));
    if (result != nullptr && e->plot_script != nullptr)
      if (const std::string why = draw_pictures(*e, dir); !why.empty())
        std::cerr << "waitlab: " << e->not_drawn << ": " << why << "\n";
  }
  return written;
}

void print_analysis_summary(const AnalysisReport& r, std::ostream& out) {
  if (!r.any()) return;
  const auto& un = r.matching.unmatched;
  if (un.total() > 0)
    out << fmt::format("unmatched       {} sends, {} receives, {} requests, {} collective calls, {} regions, "
                       "{} events outside MPI calls (left out of the analyses)\n",
                       un.sends, un.receives, un.requests, un.collective_calls, un.unbalanced_regions,
                       un.stray_events);
  const output::Context context = r.context();
  for (const auto* e : r.ran) e->print(context, *r.results.find(e->name), out);
}

AnalyzeOptions analyze_options(const AnalyzeArgs& args) {
  AnalyzeOptions o;
  auto& sel = o.sel;
  auto& clock = o.clock;
  auto& tri = o.tri;
  std::vector<std::string> names = args.analyses.empty() ? std::vector<std::string>{"all"} : args.analyses;
  if (!args.twin.empty()) names.push_back("footprint");
  sel = parse_analyses(names, "--analyses");
  if (sel.has("footprint") && args.twin.empty())
    throw InputError("--analyses: footprint compares the trace with its twin, the same simulated run without one "
                     "perturbation: give it with --twin TRACE");
  sel.waitstate_options.alltoallv_nxn = args.alltoallv_nxn;
  if (!trace::parse_clock_mode(args.clock_correction, clock.mode))
    throw InputError("--clock-correction: unknown mode '" + args.clock_correction +
                     "' (allowed: auto, none, linear, clc, clamp, linear+clamp)");
  try {
    tri.windows = analysis::parse_windows(args.windows.empty() ? analysis::kDefaultWindows : args.windows);
  } catch (const std::invalid_argument& e) {
    throw InputError(std::string("--windows: ") + e.what());
  }
  tri.windows_where = "--windows";
  if (args.ideal != "auto" && args.ideal != "lamport" && args.ideal != "smpi" && args.ideal != "both")
    throw InputError("--ideal: unknown estimate '" + args.ideal + "' (allowed: auto, lamport, smpi, both)");
  if (args.convention != "auto" && !analysis::parse_convention(args.convention, tri.convention))
    throw InputError("--convention: unknown convention '" + args.convention +
                     "' (allowed: auto, bsc, scalasca, waitlab)");
  tri.cut = analysis::parse_cut(args.cut.time_range, args.cut.region, args.cut.iterations);
  if (tri.cut.any() && (args.ideal == "smpi" || args.ideal == "both"))
    throw InputError("--ideal " + args.ideal + ": the SMPI replay estimates the whole run, not a cut (" +
                     tri.cut.option + "); the cut's ideal time comes from the Lamport replay");
  // The windows and the ideal-network estimate are the timeresolved analysis's, the conventions
  // its and the critical path's: without them they would change nothing.
  if (!sel.has("timeresolved")) {
    const char* given = !args.windows.empty()                                ? "--windows"
                        : args.convention != "auto" && !sel.has("critpath") ? "--convention"
                        : args.ideal != "auto"                               ? "--ideal"
                        : tri.cut.any()                                      ? tri.cut.option.c_str()
                                                                             : nullptr;
    if (given)
      throw InputError(std::string(given) + ": only for the timeresolved analysis" +
                       (given == std::string_view("--convention") ? " and the critical path" : "") +
                       ", which --analyses does not select (" + fmt::format("{}", fmt::join(sel.names, ",")) + ")");
  }
  return o;
}

double add_smpi_estimate(AnalysisReport& r, const ReadTrace& rt, const AnalyzeArgs& args,
                         const SmpiIdealHook& smpi_ideal) {
  const bool measured = rt.trace.origin != trace::Origin::Simulated;
  const bool smpi = args.ideal == "smpi" || args.ideal == "both" || (args.ideal == "auto" && measured);
  double smpi_host_seconds = 0;
  // A cut: the Lamport replay only (analyze_options refuses --ideal smpi and both with a cut).
  auto* run = r.results.get<analysis::TimeResolvedRun>("timeresolved");
  if (run != nullptr && smpi && !args.cut.any()) {
    auto& tr = run->result;
    SmpiIdealRun ideal;
    if (smpi_ideal)
      ideal = smpi_ideal(rt, args, tr);
    else
      ideal.why = "this program has no SMPI engine";
    smpi_host_seconds = ideal.host_seconds;
    if (ideal.ok) {
      tr.estimates.push_back(ideal.estimate);
      for (const auto& n : ideal.notes) run->warnings.push_back("SMPI replay: " + n);
      if (args.ideal == "smpi") {  // the whole-run factors from the SMPI replay, as BSC's from Dimemas'
        tr.eff.ser_e = ideal.estimate.ser_e;
        tr.eff.trf_e = ideal.estimate.trf_e;
        tr.ideal = ideal.estimate.t_ideal;
        tr.source = ideal.estimate.source;
      }
    } else {
      run->warnings.push_back("no SMPI ideal-network estimate: " + ideal.why);
    }
  }
  return smpi_host_seconds;
}

namespace {

// summary.json of an analysis (docs/summary-json.md).
nlohmann::ordered_json analysis_summary(const AnalyzeArgs& args, const ReadTrace& rt, const AnalysisReport& r) {
  const auto& t = rt.trace;
  const auto& skipped = rt.skipped;
  const auto& warnings = rt.warnings;
  const auto& clock_report = rt.clock_report;
  nlohmann::ordered_json j;
  j["schema"] = "waitlab.analysis";
  j["schema_version"] = 1;
  j["generator"] = std::string("waitlab ") + kVersion;
  j["trace"] = {{"file", fs::path(args.trace).filename().string()},
                {"name", t.attribute("name")},
                {"origin", trace::origin_name(t.origin)},
                {"ranks", rt.ranks},
                {"threads", rt.ranks + rt.threads},
                {"events", rt.events},
                {"skipped", nlohmann::ordered_json::array()}};
  for (const auto& [kind, n] : skipped) j["trace"]["skipped"].push_back({{"kind", kind}, {"count", n}});
  if (!warnings.empty()) {
    // Named by the file's name, as trace.file: summary.json does not depend on where it was run.
    const std::string name = fs::path(args.trace).filename().string();
    j["trace"]["warnings"] = nlohmann::ordered_json::array();
    for (const auto& w : warnings)
      j["trace"]["warnings"].push_back(w.rfind(args.trace, 0) == 0 ? name + w.substr(args.trace.size()) : w);
  }
  j["clock_correction"] = {{"mode", args.clock_correction},
                           {"method", clock_report.method},
                           {"reason", clock_report.reason},
                           {"violations_before", clock_report.violations_before},
                           {"violations_after_linear", clock_report.violations_after_linear},
                           {"violations_after", clock_report.violations_after},
                           {"ranks_linear", clock_report.ranks_linear},
                           {"events_moved", clock_report.events_moved},
                           {"max_offset_s", clock_report.max_offset},
                           {"max_drift", clock_report.max_drift},
                           {"max_shift_s", clock_report.max_shift},
                           {"constraints_dropped", clock_report.constraints_dropped}};
  j["analyses"] = analyses_json(r);
  return j;
}

// The trace's lines of the terminal summary.
void print_trace_lines(const AnalyzeArgs& args, const ReadTrace& rt, std::ostream& out) {
  const auto& t = rt.trace;
  const auto& skipped = rt.skipped;
  const auto& clock_report = rt.clock_report;
  out << fmt::format("trace           {} — {} ranks{}, {} events ({})\n", args.trace, rt.ranks,
                     rt.threads == 0 ? "" : fmt::format(" ({} threads)", rt.ranks + rt.threads), rt.events,
                     trace::origin_name(t.origin));
  if (!skipped.empty()) {
    std::uint64_t total = 0;
    std::string kinds;
    for (std::size_t i = 0; i < skipped.size(); ++i) {
      total += skipped[i].second;
      if (i < 4) kinds += fmt::format("{}{} × {}", i ? "; " : "", skipped[i].second, skipped[i].first);
    }
    out << fmt::format("not used        {} items the analyses do not need: {}{} (summary.json trace.skipped)\n", total,
                       kinds, skipped.size() > 4 ? fmt::format("; {} more kinds", skipped.size() - 4) : "");
  }
  if (clock_report.violations_before > 0)
    out << fmt::format(
        "clock skew      {} receives or collective ends before their partners' start; corrected by {} ({}; {} ranks "
        "linear, largest offset {:.3g} s, drift {:.3g}; {} events moved, largest shift {:.3g} s); {} left\n",
        clock_report.violations_before, clock_report.method, clock_report.reason, clock_report.ranks_linear,
        clock_report.max_offset, clock_report.max_drift, clock_report.events_moved, clock_report.max_shift,
        clock_report.violations_after);
}

}  // namespace

void write_analysis_outputs(const AnalyzeArgs& args, const ReadTrace& rt, const AnalysisReport& r,
                            const Inputs& inputs, const std::string& dir, double smpi_host_seconds, std::ostream& out) {
  // Written aside and put in place when complete (app/output_dir.hpp): an analysis that fails
  // leaves the directory as it was.
  OutputDir staged(dir, inputs);
  const fs::path d(staged.path());
  const std::string summary = (d / "summary.json").string();
  std::vector<std::string> files;
  std::string report_path;
  try {
    std::error_code rm;
    fs::remove(summary, rm);
    files = write_analysis_tables(staged.path(), r);
    nlohmann::ordered_json host;
    host["note"] = "host-dependent figures of the last analysis; never compared, never in summary.json";
    host["generator"] = std::string("waitlab ") + kVersion;
    host["analyses"] = analyses_host_json(rt.events, r);
    if (smpi_host_seconds > 0) host["smpi_ideal_replay_s"] = smpi_host_seconds;
    trace::write_file_atomic((d / "host.json").string(), output::json_text(host) + "\n");
    files.push_back((d / "host.json").string());

    const nlohmann::ordered_json j = analysis_summary(args, rt, r);
    trace::write_file_atomic(summary, output::json_text(j) + "\n");
    files.insert(files.begin(), summary);
    // The report goes in place with the tables it shows (a view: a failure is said, not fatal,
    // but for a full disk or a file size limit, which fail the command and change nothing).
    fs::remove(d / "report.html", rm);
    try {
      report_path = write_report(staged.path());
    } catch (const WriteError&) {
      throw;
    } catch (const std::exception& e) {
      std::cerr << "waitlab: report.html was not written: " << staged.final_text(e.what()) << "\n";
      fs::remove(d / "report.html", rm);
    }
    staged.commit();
    if (!report_path.empty()) report_path = staged.final_text(report_path);
  } catch (...) {
    staged.rethrow_final();
  }
  for (auto& f : files) f = staged.final_text(f);

  print_trace_lines(args, rt, out);
  print_analysis_summary(r, out);
  out << "results         ";
  for (std::size_t i = 0; i < files.size(); ++i) out << (i ? ", " : "") << files[i];
  out << "\n";
  if (!report_path.empty()) out << "report          " << report_path << "\n";
}

void analyze_command(const AnalyzeArgs& args, std::ostream& out, const SmpiIdealHook& smpi_ideal) {
  AnalyzeOptions o = analyze_options(args);
  Inputs inputs;  // every file of the trace, checked to be a file before any is opened
  inputs.add_trace(args.trace);
  ReadTrace rt;
  rt.trace = trace::read_trace(args.trace, &rt.skipped, &rt.warnings);
  trace::Trace& t = rt.trace;
  rt.ranks = t.ranks();
  rt.threads = t.threads.size();
  rt.events = t.event_count();
  for (const auto& w : rt.warnings) std::cerr << "waitlab: warning: " << w << "\n";
  apply_convention(o, args, t.origin);
  rt.clock_report = trace::correct_clocks(t, o.clock);
  if (o.sel.has("timeresolved")) analysis::check_window_count(t, o.tri);  // before the output directory is made
  const std::string dir = analyze_output_dir(args);
  check_output_dir(dir);  // a file in the way is said before the analyses, not after them
  inputs.check_output_dir(dir);

  trace::Trace twin;
  if (!args.twin.empty()) {
    inputs.add_trace(args.twin);
    twin = trace::read_trace(args.twin);
    o.sel.footprint.twin = &twin;
  }
  AnalysisReport r = run_analyses(t, o.sel, std::nullopt, o.tri);
  const double smpi_host_seconds = add_smpi_estimate(r, rt, args, smpi_ideal);
  write_analysis_outputs(args, rt, r, inputs, dir, smpi_host_seconds, out);
}

void apply_convention(AnalyzeOptions& o, const AnalyzeArgs& args, trace::Origin origin) {
  if (args.convention == "auto") o.tri.convention = analysis::default_convention(origin);
  o.sel.critpath_options.bounds = o.tri.convention == analysis::Convention::Scalasca ? analysis::PathBounds::Scalasca
                                                                                     : analysis::PathBounds::Waitlab;
}

std::string analyze_output_dir(const AnalyzeArgs& args) {
  return args.out_dir.empty() ? (fs::path(args.trace).parent_path() / "analysis").string() : args.out_dir;
}

}  // namespace waitlab::app
