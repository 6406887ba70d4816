#include "app/analyze.hpp"
#include "app/json_text.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <filesystem>
#include <functional>
#include <iostream>

#include "analysis/minprofile/minprofile.hpp"
#include "app/ideal_replay.hpp"
#include "app/idlewave_output.hpp"
#include "app/output_dir.hpp"
#include "app/report.hpp"
#include "app/timeresolved_output.hpp"
#include "analysis/trace/atomic_file.hpp"
#include "analysis/trace/csv.hpp"
#include "util/error.hpp"
#include "analysis/trace/clock.hpp"
#include "analysis/trace/trace_io.hpp"
#include "app/version.hpp"
#include "models/spec.hpp"
#include "scenarios/windows.hpp"

namespace waitlab::app {

namespace fs = std::filesystem;
using analysis::DelayKind;
using analysis::Pattern;

namespace {

constexpr std::size_t kTop = 10;  // rows of the "top" lists in summary.json and on the terminal

const char* const kWaitstateCsv = "waitstates.csv";
const char* const kDelayCsv = "delay.csv";
const char* const kPathCsv = "critical_path.csv";
const char* const kProfileCsv = "critical_path_profile.csv";
const char* const kMinprofileCsv = "minprofile.csv";
const char* const kMinprofileJson = "minprofile.json";

template <typename F>
auto timed(double& seconds, F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  auto r = f();
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}


// Shortest representation that reads back to the same double (fmt's default).
std::string num(double v) {
  return fmt::format("{}", v);
}

std::string percent(double fraction) {
  return fmt::format("{:.2f} %", 100 * fraction);
}

// Delay-cost rows, largest total first (ties: kind, rank, path), at most `n`.
std::vector<const analysis::DelayEntry*> top_delay(const analysis::DelayResult& d, std::size_t n) {
  std::vector<const analysis::DelayEntry*> rows;
  for (const auto& e : d.table) rows.push_back(&e);
  std::stable_sort(rows.begin(), rows.end(), [](const auto* a, const auto* b) {
    return a->short_term + a->long_term > b->short_term + b->long_term;
  });
  if (rows.size() > n) rows.resize(n);
  return rows;
}

// Call paths by critical-path imbalance, largest first, at most `n` (only those with some).
std::vector<const analysis::CallPathImpact*> top_imbalance(const analysis::CriticalPathResult& c, std::size_t n) {
  std::vector<const analysis::CallPathImpact*> rows;
  for (const auto& p : c.profile)
    if (p.imbalance > 0) rows.push_back(&p);
  std::stable_sort(rows.begin(), rows.end(), [](const auto* a, const auto* b) { return a->imbalance > b->imbalance; });
  if (rows.size() > n) rows.resize(n);
  return rows;
}

// The windows are bounded before any analysis runs (issue 29, item 5): at most one per event of
// the trace, never fewer than 1000 (scenarios::window_limit; `--windows 1000000` on a 20,000-event
// trace took 3.2 GB). Windows of a fixed length are only counted once the trace's span is
// known: first refuse more than kMaxWindows (`--windows 1ns` on a 0.1 s run would be 10^8
// windows). The span from the first to the last event (or the trace's declared span) holds
// every convention's span.
void check_window_count(const trace::Trace& t, const TimeResolvedInput& tri) {
  double first = std::numeric_limits<double>::infinity(), last = -first;
  std::size_t events = 0;
  for (const auto* locations : {&t.locations, &t.threads})
    for (const auto& l : *locations)
      if (!l.events.empty()) {
        first = std::min(first, l.events.front().time);
        last = std::max(last, l.events.back().time);
        events += l.events.size();
      }
  if (t.has_declared_span()) {
    first = std::min(first, t.span_begin);
    last = std::max(last, t.span_end);
  }
  double windows = 0;  // a fixed length's windows over the span
  if (tri.windows.rule == analysis::WindowRule::Fixed) {
    if (!(last > first)) return;
    windows = (last - first) / tri.windows.length;
    if (windows > kMaxWindows)
      throw InputError(fmt::format("{}: windows of {} would be {:.4g} windows over the trace's {:.6g} s; at most "
                                   "{:.0f} (give a longer window, or a number of windows such as 50)",
                                   tri.windows_where, scenarios::windows_text(tri.windows), std::ceil(windows),
                                   last - first, kMaxWindows));
  }
  if (const std::string error = scenarios::window_count_error(tri.windows, windows, events, tri.windows_where);
      !error.empty())
    throw InputError(error);
}

}  // namespace

std::vector<std::string> AnalysisSelection::names() const {
  std::vector<std::string> n;
  if (waitstate) n.emplace_back("waitstate");
  if (delay) n.emplace_back("delay");
  if (critpath) n.emplace_back("critpath");
  if (minprofile) n.emplace_back("minprofile");
  if (idlewave) n.emplace_back("idlewave");
  if (timeresolved) n.emplace_back("timeresolved");
  return n;
}

AnalysisSelection parse_analyses(const std::vector<std::string>& names, const std::string& where) {
  std::vector<std::string> chosen;
  try {
    chosen = models::select_analyses(names);
  } catch (const std::invalid_argument& e) {
    throw InputError(where + ": " + e.what());
  }
  AnalysisSelection sel;
  for (const auto& n : chosen) {
    sel.waitstate = sel.waitstate || n == "waitstate";
    sel.delay = sel.delay || n == "delay";
    sel.critpath = sel.critpath || n == "critpath";
    sel.minprofile = sel.minprofile || n == "minprofile";
    sel.idlewave = sel.idlewave || n == "idlewave";
    sel.timeresolved = sel.timeresolved || n == "timeresolved";
  }
  return sel;
}

AnalysisReport run_analyses(const trace::Trace& t, const AnalysisSelection& sel,
                            std::optional<minprofile::Result> online, const TimeResolvedInput& tri) {
  AnalysisReport r;
  r.selection = sel;
  if (!sel.any()) return r;
  if (sel.timeresolved) check_window_count(t, tri);
  r.matching = timed(r.match_seconds, [&] { return trace::Matching::build(t); });
  r.path_names.resize(r.matching.paths.size());
  for (std::size_t i = 0; i < r.path_names.size(); ++i)
    r.path_names[i] = r.matching.paths.name(static_cast<trace::CallPathId>(i), t.defs);
  if (sel.waitstate || sel.delay || sel.critpath || sel.idlewave)
    r.waits = timed(r.waitstate_seconds,
                    [&] { return analysis::wait_states(t, r.matching, sel.waitstate_options); });
  if (sel.delay) r.delay = timed(r.delay_seconds, [&] { return analysis::delay_costs(t, r.matching, *r.waits); });
  if (sel.critpath)
    r.critpath = timed(r.critpath_seconds, [&] { return analysis::critical_path(t, r.matching, *r.waits); });
  if (sel.minprofile)
    r.minprofile = online ? std::move(online)
                          : timed(r.minprofile_seconds, [&] { return analysis::minprofile_estimate(t, r.matching); });
  if (sel.idlewave)
    r.idlewave = timed(r.idlewave_seconds, [&] { return analysis::idle_waves(t, r.matching, *r.waits); });
  if (sel.timeresolved)
    r.timeresolved = timed(r.timeresolved_seconds, [&] {
      analysis::IdealReference ref;
      std::string why;
      if (tri.ideal != nullptr && !analysis::network_reference(t, *tri.ideal, ref, why)) {
        r.timeresolved_note = "the ideal-network run does not correspond to the run (" + why +
                              "): the ideal times come from the Lamport replay instead";
      }
      if (tri.ideal == nullptr || !r.timeresolved_note.empty()) ref = analysis::lamport_reference(t, r.matching);
      return analysis::time_resolved(t, ref, tri.windows, tri.convention);
    });
  if (r.timeresolved && !r.timeresolved->mpi)
    r.timeresolved_warnings.push_back(
        "the trace has no MPI calls: every unit's time outside not-useful states is useful, so communication "
        "efficiency and its factors describe no communication");
  return r;
}

nlohmann::ordered_json analyses_json(const AnalysisReport& r) {
  nlohmann::ordered_json j;
  if (!r.selection.any()) return nullptr;
  const auto& names = r.path_names;
  const auto& m = r.matching;
  j["ran"] = r.selection.names();
  j["matching"] = {{"messages", m.messages.size()},
                   {"collective_instances", m.collectives.size()},
                   {"unmatched",
                    {{"sends", m.unmatched.sends},
                     {"receives", m.unmatched.receives},
                     {"requests", m.unmatched.requests},
                     {"collective_calls", m.unmatched.collective_calls},
                     {"unbalanced_regions", m.unmatched.unbalanced_regions},
                     {"stray_events", m.unmatched.stray_events}}}};
  if (!r.waits) {
    j["waitstate"] = nullptr;
  } else {
    const auto& w = *r.waits;
    nlohmann::ordered_json patterns;
    for (std::size_t p = 0; p < analysis::kPatternCount; ++p) {
      const auto pat = static_cast<Pattern>(p);
      patterns[std::string(analysis::pattern_name(pat))] = {{"total_s", w.total[p]},
                                                            {"instances", w.count[p]},
                                                            {"max_s", w.max[p]},
                                                            {"ratio", w.ratio(pat)}};
    }
    j["waitstate"] = {{"wall_time_s", w.wall_time},
                      {"ranks", w.ranks},
                      {"total_waiting_s", w.total_waiting},
                      {"wait_ratio", w.wait_ratio},
                      {"alltoallv_nxn", r.selection.waitstate_options.alltoallv_nxn},
                      {"patterns", patterns}};
  }
  if (r.delay) {
    const auto& d = *r.delay;
    nlohmann::ordered_json kinds;
    for (std::size_t k = 0; k < analysis::kDelayKindCount; ++k)
      kinds[std::string(analysis::delay_kind_name(static_cast<DelayKind>(k)))] = {
          {"short_term_s", d.short_total[k]}, {"long_term_s", d.long_total[k]}};
    nlohmann::ordered_json top = nlohmann::ordered_json::array();
    for (const auto* e : top_delay(d, kTop))
      top.push_back({{"rank", e->rank},
                     {"call_path", names[e->path]},
                     {"kind", analysis::delay_kind_name(e->kind)},
                     {"short_term_s", e->short_term},
                     {"long_term_s", e->long_term}});
    j["delay"] = {{"synchronisation_points", d.sync_points},
                  {"waiting_s", d.sync_waiting},
                  {"short_term_s", d.short_term},
                  {"long_term_s", d.long_term},
                  {"unattributed_s", d.unattributed},
                  {"by_kind", kinds},
                  {"wait_states",
                   {{"direct_s", d.direct},
                    {"indirect_s", d.indirect},
                    {"propagating_s", d.propagating},
                    {"terminal_s", d.terminal}}},
                  {"top", top}};
  } else {
    j["delay"] = nullptr;
  }
  if (r.critpath) {
    const auto& c = *r.critpath;
    nlohmann::ordered_json top = nlohmann::ordered_json::array();
    for (const auto* p : top_imbalance(c, kTop))
      top.push_back({{"call_path", names[p->path]},
                     {"on_path_s", p->on_path},
                     {"average_s", p->average},
                     {"imbalance_s", p->imbalance}});
    j["critpath"] = {{"start_s", c.start},
                     {"end_s", c.end},
                     {"length_s", c.length},
                     {"segments", c.segments.size()},
                     {"rank_changes", c.jumps},
                     {"complete", c.complete},
                     {"impact",
                      {{"critical_path_activities_s", c.critical_activities},
                       {"critical_imbalance_s", c.critical_imbalance},
                       {"non_critical_path_activities_s", c.noncritical_activities}}},
                     {"top_imbalance", top}};
  } else {
    j["critpath"] = nullptr;
  }
  if (r.minprofile) {
    // The call paths of minprofile.json, without its header.
    const auto full = nlohmann::ordered_json::parse(minprofile::to_json(*r.minprofile, ""));
    j["minprofile"] = {{"variants", full["variants"]}, {"call_paths", full["call_paths"]}};
  } else {
    j["minprofile"] = nullptr;
  }
  j["idlewave"] = r.idlewave ? idlewave_json(*r.idlewave) : nullptr;
  j["timeresolved"] =
      r.timeresolved ? timeresolved_json(*r.timeresolved, r.timeresolved_note, r.timeresolved_warnings) : nullptr;
  return j;
}

nlohmann::ordered_json analyses_host_json(const trace::Trace& t, const AnalysisReport& r) {
  const double events = static_cast<double>(t.event_count());
  const auto rate = [&](double s) { return s > 0 ? events / s : 0.0; };
  nlohmann::ordered_json j;
  j["events"] = t.event_count();
  j["matching_s"] = r.match_seconds;
  j["waitstate_s"] = r.waitstate_seconds;
  j["delay_s"] = r.delay_seconds;
  j["critpath_s"] = r.critpath_seconds;
  j["minprofile_s"] = r.minprofile_seconds;
  j["idlewave_s"] = r.idlewave_seconds;
  j["timeresolved_s"] = r.timeresolved_seconds;
  const double all = r.match_seconds + r.waitstate_seconds + r.delay_seconds + r.critpath_seconds +
                     r.minprofile_seconds + r.idlewave_seconds + r.timeresolved_seconds;
  j["events_per_second"] = rate(all);
  j["matching_bytes"] = r.matching.memory_bytes();
  return j;
}

std::vector<std::string> write_analysis_tables(const std::string& dir, const AnalysisReport& r) {
  std::vector<std::string> written;
  const fs::path d(dir);
  const auto table = [&](const char* file, bool present, const std::function<void(std::ostream&)>& rows) {
    const std::string path = (d / file).string();
    if (trace::write_or_remove(path, present, rows)) written.push_back(path);
  };
  const auto& names = r.path_names;
  table(kWaitstateCsv, r.selection.waitstate, [&](std::ostream& os) {
    os << "pattern,call_path,rank,seconds,instances\n";
    for (const auto& e : r.waits->table)
      os << analysis::pattern_name(e.pattern) << ',' << trace::csv_field(names[e.path]) << ',' << e.rank << ','
         << num(e.seconds) << ',' << e.count << '\n';
  });
  table(kDelayCsv, r.delay.has_value(), [&](std::ostream& os) {
    os << "kind,call_path,rank,short_term_s,long_term_s\n";
    for (const auto& e : r.delay->table)
      os << analysis::delay_kind_name(e.kind) << ',' << trace::csv_field(names[e.path]) << ',' << e.rank << ','
         << num(e.short_term) << ',' << num(e.long_term) << '\n';
  });
  table(kPathCsv, r.critpath.has_value(), [&](std::ostream& os) {
    os << "rank,call_path,start_s,end_s\n";
    for (const auto& s : r.critpath->segments)
      os << s.rank << ',' << trace::csv_field(names[s.path]) << ',' << num(s.start) << ',' << num(s.end) << '\n';
  });
  const auto source = [&](const std::string& text) {
    return [&text](std::ostream& os) { os << text; };
  };
  const std::string mp_csv = r.minprofile ? minprofile::to_csv(*r.minprofile) : "";
  const std::string mp_json = r.minprofile ? minprofile::to_json(*r.minprofile, "waitlab") : "";
  table(kMinprofileCsv, r.minprofile.has_value(), source(mp_csv));
  table(kMinprofileJson, r.minprofile.has_value(), source(mp_json));
  table(kProfileCsv, r.critpath.has_value(), [&](std::ostream& os) {
    os << "call_path,on_path_s,time_s,waiting_s,average_s,imbalance_s\n";
    for (const auto& p : r.critpath->profile)
      if (p.time > 0 || p.on_path > 0)
        os << trace::csv_field(names[p.path]) << ',' << num(p.on_path) << ',' << num(p.time) << ',' << num(p.waiting) << ','
           << num(p.average) << ',' << num(p.imbalance) << '\n';
  });
  for (auto& f : write_idlewave_files(dir, r.idlewave ? &*r.idlewave : nullptr)) written.push_back(std::move(f));
  if (r.idlewave) {
    if (const std::string why = draw_idlewave(dir); !why.empty())
      std::cerr << "waitlab: the idle-wave pictures were not drawn: " << why << "\n";
  }
  for (auto& f : write_timeresolved_files(dir, r.timeresolved ? &*r.timeresolved : nullptr, r.timeresolved_note,
                                          r.timeresolved_warnings))
    written.push_back(std::move(f));
  if (r.timeresolved) {
    if (const std::string why = draw_timeresolved(dir); !why.empty())
      std::cerr << "waitlab: the time-resolved efficiency picture was not drawn: " << why << "\n";
  }
  return written;
}

void print_analysis_summary(const AnalysisReport& r, std::ostream& out) {
  if (!r.selection.any()) return;
  const auto& names = r.path_names;
  const auto& un = r.matching.unmatched;
  if (un.total() > 0)
    out << fmt::format("unmatched       {} sends, {} receives, {} requests, {} collective calls, {} regions, "
                       "{} events outside MPI calls (left out of the analyses)\n",
                       un.sends, un.receives, un.requests, un.collective_calls, un.unbalanced_regions,
                       un.stray_events);
  if (r.waits) {
    const auto& w = *r.waits;
    out << fmt::format("wait states     {} of {} ranks × {:.6g} s waiting ({:.6g} s)\n", percent(w.wait_ratio), w.ranks,
                       w.wall_time, w.total_waiting);
    std::vector<std::size_t> order;
    for (std::size_t p = 0; p < analysis::kPatternCount; ++p)
      if (w.total[p] > 0) order.push_back(p);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return w.total[a] > w.total[b]; });
    for (std::size_t i = 0; i < order.size() && i < 5; ++i) {
      const auto p = static_cast<Pattern>(order[i]);
      out << fmt::format("  {:<44} {:>12.6g} s {:>8}  {} instances\n", analysis::pattern_title(p), w.total[order[i]],
                         percent(w.ratio(p)), w.count[order[i]]);
    }
  }
  if (r.delay) {
    const auto& d = *r.delay;
    out << fmt::format("delay costs     {:.6g} s short-term, {:.6g} s long-term, {:.6g} s without a cause in the trace\n",
                       d.short_term, d.long_term, d.unattributed);
    for (const auto* e : top_delay(d, 5))
      out << fmt::format("  rank {:<6} {:<36} {:>12.6g} s short {:>12.6g} s long  ({})\n", e->rank, names[e->path],
                         e->short_term, e->long_term, analysis::delay_kind_name(e->kind));
  }
  if (r.minprofile) {
    const auto& m = *r.minprofile;
    auto totals = m.totals();
    std::stable_sort(totals.begin(), totals.end(),
                     [](const auto& a, const auto& b) { return a.waiting[0] > b.waiting[0]; });
    double all = 0;
    for (const auto& t : totals) all += t.waiting[0];
    out << fmt::format("wait estimate   {} of {} ranks × {:.6g} s (minimum-duration estimator, paper variant)\n",
                       percent(m.ranks > 0 && m.wall_time > 0 ? all / (static_cast<double>(m.ranks) * m.wall_time) : 0),
                       m.ranks, m.wall_time);
    for (std::size_t i = 0; i < totals.size() && i < 5 && totals[i].waiting[0] > 0; ++i)
      out << fmt::format("  {:<44} {:>12.6g} s {:>8}  {}\n", m.paths[totals[i].path], totals[i].waiting[0],
                         percent(m.ratio(totals[i], minprofile::Variant::Paper)),
                         minprofile::pattern_name(totals[i].pattern));
  }
  if (r.critpath) {
    const auto& c = *r.critpath;
    out << fmt::format("critical path   {:.6g} s, {} segments, {} rank changes; imbalance impact {:.6g} rank-s\n",
                       c.length, c.segments.size(), c.jumps, c.critical_imbalance);
    for (const auto* p : top_imbalance(c, 5))
      out << fmt::format("  {:<44} imbalance {:>10.6g} s (on path {:.6g} s, average {:.6g} s)\n", names[p->path],
                         p->imbalance, p->on_path, p->average);
  }
  if (r.idlewave) print_idlewave_summary(*r.idlewave, out);
  if (r.timeresolved) print_timeresolved_summary(*r.timeresolved, r.timeresolved_note, r.timeresolved_warnings, out);
}

void analyze_command(const AnalyzeArgs& args, std::ostream& out) {
  AnalysisSelection sel =
      parse_analyses(args.analyses.empty() ? std::vector<std::string>{"all"} : args.analyses, "--analyses");
  sel.waitstate_options.alltoallv_nxn = args.alltoallv_nxn;
  trace::ClockOptions clock;
  if (!trace::parse_clock_mode(args.clock_correction, clock.mode))
    throw InputError("--clock-correction: unknown mode '" + args.clock_correction +
                     "' (allowed: auto, none, linear, clc, clamp, linear+clamp)");
  TimeResolvedInput tri;
  try {
    tri.windows = scenarios::parse_windows(args.windows.empty() ? scenarios::kDefaultWindows : args.windows);
  } catch (const std::invalid_argument& e) {
    throw InputError(std::string("--windows: ") + e.what());
  }
  tri.windows_where = "--windows";
  if (args.ideal != "auto" && args.ideal != "lamport" && args.ideal != "smpi" && args.ideal != "both")
    throw InputError("--ideal: unknown estimate '" + args.ideal + "' (allowed: auto, lamport, smpi, both)");
  if (args.convention != "auto" && !analysis::parse_convention(args.convention, tri.convention))
    throw InputError("--convention: unknown convention '" + args.convention +
                     "' (allowed: auto, bsc, scalasca, waitlab)");
  // The windows, the conventions and the ideal-network estimate are the timeresolved
  // analysis's: without it they would change nothing.
  if (!sel.timeresolved) {
    const char* given = !args.windows.empty()       ? "--windows"
                        : args.convention != "auto" ? "--convention"
                        : args.ideal != "auto"      ? "--ideal"
                                                    : nullptr;
    if (given)
      throw InputError(std::string(given) + ": only for the timeresolved analysis, which --analyses does not select (" +
                       fmt::format("{}", fmt::join(sel.names(), ",")) + ")");
  }
  // What the reader left out of the trace, by kind: said on the terminal and in summary.json.
  trace::SkippedKinds skipped;
  Inputs inputs;  // every file of the trace, checked to be a file before any is opened
  inputs.add_trace(args.trace);
  std::vector<std::string> warnings;  // what the reader found suspect but read (a trace cut short)
  trace::Trace t = trace::read_trace(args.trace, &skipped, &warnings);
  for (const auto& w : warnings) std::cerr << "waitlab: warning: " << w << "\n";
  if (args.convention == "auto") tri.convention = analysis::default_convention(t.origin);
  const trace::ClockReport clock_report = trace::correct_clocks(t, clock);
  if (sel.timeresolved) check_window_count(t, tri);  // before the output directory is made
  const std::string dir =
      args.out_dir.empty() ? (fs::path(args.trace).parent_path() / "analysis").string() : args.out_dir;
  check_output_dir(dir);  // a file in the way is said before the analyses, not after them
  inputs.check_output_dir(dir);

  AnalysisReport r = run_analyses(t, sel, std::nullopt, tri);
  // The SMPI engine's ideal-network replay (Dimemas' estimate), next to the Lamport replay's.
  const bool measured = t.origin != trace::Origin::Simulated;
  const bool smpi = args.ideal == "smpi" || args.ideal == "both" || (args.ideal == "auto" && measured);
  double smpi_host_seconds = 0;
  if (r.timeresolved && smpi) {
    auto& tr = *r.timeresolved;
    const SmpiIdealRun ideal = smpi_ideal_run(t, args.trace, tr);
    smpi_host_seconds = ideal.host_seconds;
    if (ideal.ok) {
      tr.estimates.push_back(ideal.estimate);
      for (const auto& n : ideal.notes) r.timeresolved_warnings.push_back("SMPI replay: " + n);
      if (args.ideal == "smpi") {  // the whole-run factors from the SMPI replay, as BSC's from Dimemas'
        tr.eff.ser_e = ideal.estimate.ser_e;
        tr.eff.trf_e = ideal.estimate.trf_e;
        tr.ideal = ideal.estimate.t_ideal;
        tr.source = ideal.estimate.source;
      }
    } else {
      r.timeresolved_warnings.push_back("no SMPI ideal-network estimate: " + ideal.why);
    }
  }
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
    host["analyses"] = analyses_host_json(t, r);
    if (smpi_host_seconds > 0) host["smpi_ideal_replay_s"] = smpi_host_seconds;
    trace::write_file_atomic((d / "host.json").string(), json_text(host) + "\n");
    files.push_back((d / "host.json").string());

    nlohmann::ordered_json j;
    j["schema"] = "waitlab.analysis";
    j["schema_version"] = 1;
    j["generator"] = std::string("waitlab ") + kVersion;
    j["trace"] = {{"file", fs::path(args.trace).filename().string()},
                  {"name", t.attribute("name")},
                  {"origin", trace::origin_name(t.origin)},
                  {"ranks", t.ranks()},
                  {"threads", t.ranks() + t.threads.size()},
                  {"events", t.event_count()},
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
    trace::write_file_atomic(summary, json_text(j) + "\n");
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

  out << fmt::format("trace           {} — {} ranks{}, {} events ({})\n", args.trace, t.ranks(),
                     t.threads.empty() ? "" : fmt::format(" ({} threads)", t.ranks() + t.threads.size()),
                     t.event_count(), trace::origin_name(t.origin));
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
  print_analysis_summary(r, out);
  out << "results         ";
  for (std::size_t i = 0; i < files.size(); ++i) out << (i ? ", " : "") << files[i];
  out << "\n";
  if (!report_path.empty()) out << "report          " << report_path << "\n";
}

}  // namespace waitlab::app
