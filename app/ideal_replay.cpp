#include "app/ideal_replay.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "util/error.hpp"
#include "models/replay.hpp"
#include "scenarios/scenario.hpp"
#include "sim/engine.hpp"

namespace waitlab::app {

namespace {

// [min_p end of MPI_Init, max_p start of MPI_Finalize] of a trace (its first and last events
// where a rank has no MPI_Init or MPI_Finalize); NaN for a trace without events.
std::pair<double, double> init_to_finalize(const trace::Trace& t) {
  double a = std::numeric_limits<double>::infinity(), b = -std::numeric_limits<double>::infinity();
  for (const auto& loc : t.locations) {
    if (loc.events.empty()) continue;
    double start = loc.events.front().time, end = loc.events.back().time;
    bool init = false, fin = false;
    for (const auto& e : loc.events) {
      if (e.kind != trace::EventKind::Enter && e.kind != trace::EventKind::Leave) continue;
      const trace::MpiOp op = e.ref < t.defs.regions.size() ? t.defs.regions[e.ref].op : trace::MpiOp::None;
      if (!init && op == trace::MpiOp::Init && e.kind == trace::EventKind::Leave) {
        start = e.time;
        init = true;
      }
      if (!fin && op == trace::MpiOp::Finalize && e.kind == trace::EventKind::Enter) {
        end = e.time;
        fin = true;
      }
    }
    a = std::min(a, start);
    b = std::max(b, std::max(start, end));
  }
  if (!std::isfinite(a)) return {NAN, NAN};
  return {a, b};
}

// BSC's (Dimemas') time of the ideal run outside the replayed range: before it, the longest
// computation of a rank before its MPI_Init (MPI_Init ends at its latest entry; MPI calls take
// no time); after it, the longest of a rank from its MPI_Finalize's start to where its records
// end (analysis::records_end), MPI time left out — "not created" and the final flush included,
// an idle tail without records not.
double bsc_outside(const trace::Trace& t) {
  double t0 = INFINITY, t1 = -INFINITY;
  for (const auto& loc : t.locations)
    if (!loc.events.empty()) {
      t0 = std::min(t0, loc.events.front().time);
      t1 = std::max(t1, loc.events.back().time);
    }
  if (t.has_declared_span()) {
    t0 = t.span_begin;
    t1 = t.span_end;
  }
  double head = 0, tail = 0;
  for (const auto& loc : t.locations) {
    if (loc.events.empty()) continue;
    double init = loc.events.front().time, fin = loc.events.back().time;
    bool seen_init = false, seen_fin = false;
    for (const auto& e : loc.events) {
      if (e.kind != trace::EventKind::Enter || e.ref >= t.defs.regions.size()) continue;
      const trace::MpiOp op = t.defs.regions[e.ref].op;
      if (!seen_init && op == trace::MpiOp::Init) init = e.time, seen_init = true;
      if (!seen_fin && op == trace::MpiOp::Finalize) fin = e.time, seen_fin = true;
    }
    head = std::max(head, analysis::time_outside_mpi(t.defs, loc, t0, init));
    tail = std::max(tail, analysis::time_outside_mpi(t.defs, loc, fin, std::min(t1, analysis::records_end(loc))));
  }
  return head + tail;
}

}  // namespace

SmpiIdealRun smpi_ideal_run(const trace::Trace& t, const std::string& trace_path,
                            const analysis::TimeResolvedResult& measured) {
  SmpiIdealRun out;
  const auto t0 = std::chrono::steady_clock::now();
  if (!measured.mpi) {
    out.why = "the trace has no MPI calls: there is no communication to make ideal";
    return out;
  }
  try {
    models::ReplayReport rep;
    models::ReplayOptions options;
    options.free_mpi_without_op = true;  // MPI_Comm_rank and the like: no time on an ideal run
    auto workload = models::replay_trace(t, "ideal", options, &rep);
    out.notes = rep.notes;
    scenarios::ReplayRequest req;
    req.trace = trace_path;
    req.ranks = workload->ranks();
    const scenarios::Scenario s = scenarios::replay_scenario(req);
    scenarios::Run run = scenarios::prepare(s, std::move(workload));
    run.options.network = sim::NetworkChange{true, 1, 1};
    run.options.progress = false;
    run.options.minprofile = false;
    const sim::RunResult ideal = sim::simulate(run.platform, *run.workload, run.perturbations, run.options);
    const auto [ia, ib] = init_to_finalize(ideal.trace);
    const auto [ma, mb] = init_to_finalize(t);
    if (!std::isfinite(ia) || !std::isfinite(ma)) {
      out.why = "the replay recorded no events";
      return out;
    }
    out.replay_elapsed = ib - ia;
    out.outside = measured.convention == analysis::Convention::Bsc ? bsc_outside(t)
                                                                   : std::max(0.0, measured.elapsed - (mb - ma));
    out.estimate = analysis::make_estimate("smpi_replay", out.replay_elapsed + out.outside, measured.useful_ideal_max,
                                           measured.eff.comm_e);
    out.ok = true;
  } catch (const InputError& e) {
    out.why = std::string("the SMPI replay cannot run this trace: ") + e.what();
  }
  out.host_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace waitlab::app
