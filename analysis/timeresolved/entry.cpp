// The timeresolved analysis as waitlab presents it: its registry entry
// (analysis/output/entry.hpp) — its check of the windows before any work, its run (the ideal
// reference, then the windows; on the replay engine, the serial run being its one-process run), summary.json's analyses.timeresolved, timeresolved.csv and
// .json, the terminal's lines, the report's section and its picture.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "analysis/engine/serial_transport.hpp"
#include "analysis/engine/shard.hpp"
#include "analysis/output/entry.hpp"
#include "analysis/timeresolved/output.hpp"
#include "analysis/timeresolved/windows.hpp"
#include "util/error.hpp"

namespace waitlab::analysis {

// The windows are bounded before any analysis runs (issue 29, item 5): at most one per event of
// the trace, never fewer than 1000 (analysis::window_limit; `--windows 1000000` on a 20,000-event
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
  check_window_count(first, last, events, tri);
}

void check_window_count(double first, double last, std::size_t events, const TimeResolvedInput& tri) {
  double windows = 0;  // a fixed length's windows over the span
  if (tri.windows.rule == WindowRule::Fixed) {
    if (!(last > first)) return;
    windows = (last - first) / tri.windows.length;
    if (windows > kMaxWindows)
      throw InputError(fmt::format("{}: windows of {} would be {:.4g} windows over the trace's {:.6g} s; at most "
                                   "{:.0f} (give a longer window, or a number of windows such as 50)",
                                   tri.windows_where, windows_text(tri.windows), std::ceil(windows),
                                   last - first, kMaxWindows));
  }
  if (const std::string error = window_count_error(tri.windows, windows, events, tri.windows_where);
      !error.empty())
    throw InputError(error);
}


namespace {

// The run on the replay engine (every process; the serial run is it with one process): the
// ideal-network run's times if they correspond to the run, else the Lamport replay's, then the
// windows. Process 0 gets the whole result, the others an empty one.
TimeResolvedRun run_on(const engine::Shard& shard, const trace::Matching& matching, engine::Transport& transport,
                       const output::Given& given) {
  const TimeResolvedInput input = given.option<TimeResolvedInput>("timeresolved", {});
  TimeResolvedRun r;
  IdealReference ref;
  std::string why;
  if (input.ideal != nullptr && !network_reference(shard, *input.ideal, ref, why, transport))
    r.note = "the ideal-network run does not correspond to the run (" + why +
             "): the ideal times come from the Lamport replay instead";
  if (input.ideal == nullptr || !r.note.empty()) ref = lamport_reference(shard, matching, transport);
  const Cut cut = resolve_cut(shard, input.cut, transport);
  r.result = time_resolved(shard, ref, input.windows, input.convention, transport, cut);
  r.hybrid = hybrid_of(shard, r.result, transport);
  if (transport.self() == 0 && !r.result.mpi)
    r.warnings.push_back(
        "the trace has no MPI calls: every unit's time outside not-useful states is useful, so communication "
        "efficiency and its factors describe no communication");
  return r;
}

std::any run(const output::Context& c) {
  const engine::Shard shard = engine::Shard::whole(c.trace);
  engine::SerialTransport transport;
  return run_on(shard, c.matching, transport, c);
}

}  // namespace

const output::Entry& timeresolved_entry() {
  static const output::Entry entry = [] {
    output::Entry e;
    e.name = "timeresolved";
    e.description =
        "Time-resolved efficiency (paper 004, ALGORITHMS.md §6): the POP metrics — load balance, communication "
        "efficiency = serialisation × transfer efficiency, parallel efficiency — per time window and cumulative, and "
        "for the whole run, against an ideal network (in `run` a re-simulation on an ideal network, in `analyze` a "
        "Lamport-clock replay of the trace). Windows: N equal, a fixed length or adaptive (√P events per rank and "
        "window; outputs.windows, analyze --windows). (timeresolved.csv, timeresolved.json; picture "
        "timeresolved.png/.svg.)";
    e.check = [](const trace::Trace& t, const output::Values& options) {
      const auto* input = options.get<TimeResolvedInput>("timeresolved");
      check_window_count(t, input != nullptr ? *input : TimeResolvedInput{});
    };
    e.run = run;
    e.run_sharded = [](const output::ShardContext& c) -> std::any {
      return run_on(c.shard, c.matching, c.transport, c);
    };  // process 0's result is the whole one: no gather
    e.summary = [](const output::Context&, const std::any& result) {
      const auto& r = std::any_cast<const TimeResolvedRun&>(result);
      return timeresolved_json(r.result, r.note, r.warnings, &r.hybrid);
    };
    e.write = [](const std::string& dir, const output::Context&, const std::any* result) {
      const auto* r = result ? &std::any_cast<const TimeResolvedRun&>(*result) : nullptr;
      return r ? write_timeresolved_files(dir, &r->result, r->note, r->warnings, &r->hybrid)
               : write_timeresolved_files(dir, nullptr, "", {});
    };
    e.print = [](const output::Context&, const std::any& result, std::ostream& out) {
      const auto& r = std::any_cast<const TimeResolvedRun&>(result);
      print_timeresolved_summary(r.result, r.note, r.warnings, out, &r.hybrid);
    };
    e.section_id = "sec-timeresolved";
    e.section_title = "Efficiency over time";
    e.section_html = timeresolved_report_html;
    e.shown_without_summary = [](const output::ReportContext& rc) {
      return std::filesystem::exists(rc.dir / "timeresolved.csv");
    };
    e.plot_script = "timeresolved";
    e.plot_input = "timeresolved.json";
    e.not_drawn = "the time-resolved efficiency picture was not drawn";
    e.pictures = {{"timeresolved", "", "Efficiency over time",
                   "Parallel efficiency (filled), load balance, serialisation and transfer efficiency of every window, "
                   "and the cumulative parallel efficiency (dashed), which ends at the whole run's value (dotted)."}};
    return e;
  }();
  return entry;
}

}  // namespace waitlab::analysis
