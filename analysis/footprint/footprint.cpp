// waitlab::analysis — the counterfactual footprint of a perturbation (footprint.hpp).
#include "analysis/footprint/footprint.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "analysis/trace/totals.hpp"
#include "util/error.hpp"

namespace waitlab::analysis {

namespace {

// The rank's largest idle period in `r` (periods sorted by rank, then start).
std::vector<double> largest_idle(const IdleWaveResult& r, std::size_t ranks) {
  std::vector<double> out(ranks, 0.0);
  for (const IdlePeriod& p : r.periods)
    if (p.rank >= 0 && static_cast<std::size_t>(p.rank) < ranks)
      out[static_cast<std::size_t>(p.rank)] = std::max(out[static_cast<std::size_t>(p.rank)], p.seconds);
  return out;
}

bool is_finalize_enter(const trace::Definitions& defs, const trace::Event& e) {
  return e.kind == trace::EventKind::Enter && e.ref < defs.regions.size() &&
         defs.regions[e.ref].op == trace::MpiOp::Finalize;
}

// The same event of the program in both runs: what it is, not when.
bool same_event(const trace::Event& a, const trace::Event& b) {
  return a.kind == b.kind && a.op == b.op && a.ref == b.ref && a.peer == b.peer && a.tag == b.tag &&
         a.bytes == b.bytes;
}

double wall(const trace::RecordTotals& t) {
  if (std::isfinite(t.first_init) && std::isfinite(t.last_finalize)) return t.last_finalize - t.first_init;
  return std::isfinite(t.last_event) ? t.last_event - t.first_event : 0.0;
}

double sum(const std::vector<double>& v) {
  double s = 0;
  for (const double x : v) s += x;
  return s;
}

// What the twin lacks (FootprintResult: removed, source, injected), from the ground truth.
void removed_causes(const trace::RecordTotals& run, const trace::RecordTotals& twin, FootprintResult& f) {
  const auto delay = static_cast<std::size_t>(trace::Cause::Delay);
  std::vector<double> source_delay(run.injected_by_rank[delay].size(), 0.0);
  for (std::size_t k = 0; k < trace::kCauseCount; ++k) {
    const double in_run = sum(run.injected_by_rank[k]);
    const double in_twin = sum(twin.injected_by_rank[k]);
    if (in_run > 0 && in_twin == 0) {
      f.removed.emplace_back(trace::cause_name(static_cast<trace::Cause>(k)));
      f.injected += in_run;
      if (k == delay) source_delay = run.injected_by_rank[k];
    } else if (k == delay && in_run > in_twin) {  // some delays kept: those the twin lacks, rank by rank
      f.removed.emplace_back("delay");
      for (std::size_t r = 0; r < source_delay.size(); ++r) {
        const double d = run.injected_by_rank[k][r] - (r < twin.injected_by_rank[k].size() ? twin.injected_by_rank[k][r] : 0.0);
        if (d > 0) {
          source_delay[r] = d;
          f.injected += d;
        }
      }
    }
  }
  int sources = 0;
  for (std::size_t r = 0; r < source_delay.size(); ++r)
    if (source_delay[r] > 0) {
      ++sources;
      f.source = static_cast<Rank>(r);
    }
  if (sources != 1) f.source = trace::kNoRank;
}

}  // namespace

FootprintResult footprint(const trace::Trace& run, const trace::Trace& twin, const IdleWaveResult& run_idle,
                          const IdleWaveResult& twin_idle) {
  const std::size_t P = run.ranks();
  if (twin.ranks() != P)
    throw InputError(fmt::format("footprint: the run has {} ranks and its twin {}: not the same program", P,
                                 twin.ranks()));
  if (!run.has_truth || !twin.has_truth)
    throw InputError("footprint: it needs the ground truth of two simulated runs (what each injected); the " +
                     std::string(run.has_truth ? "twin" : "run") + " has none");
  FootprintResult f;
  const trace::RecordTotals run_totals = trace::totals(run);
  const trace::RecordTotals twin_totals = trace::totals(twin);
  removed_causes(run_totals, twin_totals, f);
  if (f.removed.empty())
    throw InputError("footprint: the twin lacks nothing the run injected (the same imbalance, noise and delays): "
                     "there is no perturbation whose footprint to measure");
  f.run_wall = wall(run_totals);
  f.twin_wall = wall(twin_totals);
  f.reached_end = f.run_wall - f.twin_wall;
  f.absorbed = f.injected - f.reached_end;

  const IdleMatrix& im = run_idle.matrix;
  f.shift.t0 = im.t0;
  f.shift.bin = im.bin;
  f.shift.bins = im.bins;
  f.shift.ranks = P;
  f.shift.shift.assign(P * im.bins, 0.0F);

  const std::vector<double> idle = largest_idle(run_idle, P);
  const std::vector<double> twin_idle_max = largest_idle(twin_idle, P);
  const bool sourced = f.source != trace::kNoRank;
  f.ranks.reserve(P);
  for (std::size_t r = 0; r < P; ++r) {
    const auto& a = run.locations[r].events;
    const auto& b = twin.locations[r].events;
    if (a.size() != b.size())
      throw InputError(fmt::format(
          "footprint: rank {} has {} events in the run and {} in its twin: the perturbation changed what the program "
          "does, so its events have no counterparts to measure a shift against",
          r, a.size(), b.size()));
    FootprintRank fr;
    fr.rank = static_cast<Rank>(r);
    fr.offset = sourced ? static_cast<int>(r) - static_cast<int>(f.source) : 0;
    bool ended = false;
    std::size_t bin = 0;
    float* row = f.shift.shift.data() + r * im.bins;
    double last = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!same_event(a[i], b[i]))
        throw InputError(fmt::format(
            "footprint: rank {}, event {}: {} in the run but {} in its twin: the perturbation changed what the "
            "program does (e.g. the order in which wildcard receives match), so its events have no counterparts",
            r, i, trace::event_kind_name(a[i].kind), trace::event_kind_name(b[i].kind)));
      // From its MPI_Finalize on, a rank waits for the last one: its timeline ends at the Enter
      // (the Leave carries the run's end, the same for every rank).
      if (ended) continue;
      const double s = a[i].time - b[i].time;
      // The cells before this event's bin hold the shift of the event before it.
      while (bin < im.bins && a[i].time >= im.t0 + static_cast<double>(bin + 1) * im.bin)
        row[bin++] = static_cast<float>(last);
      last = s;
      if (std::abs(s) > std::abs(fr.peak_shift)) {
        fr.peak_shift = s;
        fr.peak_time = a[i].time;
      }
      if (!ended && is_finalize_enter(run.defs, a[i])) {
        fr.end_shift = s;
        ended = true;
      }
    }
    for (; bin < im.bins; ++bin) row[bin] = static_cast<float>(last);
    if (!ended) fr.end_shift = last;
    fr.largest_idle = idle[r];
    fr.twin_largest_idle = twin_idle_max[r];
    f.events += a.size();
    f.ranks.push_back(fr);
  }

  if (sourced) {
    for (const double level : kFootprintLevels) {
      FootprintReach reach{level, 0, 0};
      for (const FootprintRank& fr : f.ranks) {
        if (std::abs(fr.peak_shift) < level * f.injected) continue;
        if (fr.offset < 0) reach.down = std::max(reach.down, -fr.offset);
        if (fr.offset > 0) reach.up = std::max(reach.up, fr.offset);
      }
      f.reach.push_back(reach);
    }
    for (const Wave& w : run_idle.waves)
      if (w.injected && w.source_rank == f.source) {
        f.wave_down = w.down.points.empty() ? 0 : w.down.points.back().distance;
        f.wave_up = w.up.points.empty() ? 0 : w.up.points.back().distance;
        break;
      }
  }
  return f;
}

}  // namespace waitlab::analysis
