#include "analysis/idlewave/output.hpp"
#include "analysis/output/json_text.hpp"
#include "analysis/output/npy.hpp"

#include <fmt/format.h>

#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "analysis/trace/atomic_file.hpp"
#include "util/error.hpp"

namespace waitlab::analysis {

namespace fs = std::filesystem;

namespace {

const char* const kJson = "idlewave.json";
const char* const kFronts = "idlewave_fronts.csv";
const char* const kMatrix = "idle_matrix.npy";
const char* const kSelfSync = "idlewave_selfsync.csv";

std::string num(double v) {
  return fmt::format("{}", v);
}

char axis_name(int axis) {
  return "xyz"[std::clamp(axis, 0, 2)];
}

// "down"/"up" for the fronts in rank order, "-x", "+x", "-y", ... for the fronts along a grid axis.
std::string direction_name(const Front& f) {
  if (f.axis < 0) return f.direction < 0 ? "down" : "up";
  return fmt::format("{}{}", f.direction < 0 ? '-' : '+', axis_name(f.axis));
}

nlohmann::ordered_json front_json(const Front& f, analysis::DistanceMetric metric) {
  nlohmann::ordered_json j;
  j["direction"] = direction_name(f);
  j["reach_ranks"] = f.reach();
  j["at_once"] = f.at_once;
  j["stop"] = analysis::front_stop_name(f.stop);
  j["stop_rank"] = f.stop_rank;
  j["speed_ranks_per_s"] = f.by_time.slope;
  j["fit_r2"] = f.by_time.r2;
  j["speed_ranks_per_iteration"] = f.by_iteration.slope;
  j["iteration_fit_r2"] = f.by_iteration.r2;
  j["predicted_ranks_per_s"] = f.predicted_ranks_per_s;
  j["measured_over_predicted"] = f.measured_over_predicted;
  j["decay_s_per_rank"] = f.decay_s_per_rank;
  j["amplitude_first_s"] = f.points.empty() ? 0.0 : f.points.front().amplitude;
  j["amplitude_last_s"] = f.points.empty() ? 0.0 : f.points.back().amplitude;
  // Added with the topology-aware tracker: what the distances count, the axis, the wave met.
  j["axis"] = f.axis < 0 ? std::string("rank") : std::string(1, axis_name(f.axis));
  j["distance_metric"] = analysis::distance_metric_name(metric);
  j["reach"] = f.points.empty() ? 0 : f.points.back().distance;
  j["met_wave"] = f.met_wave;
  return j;
}

// The ranks next to the first slow rank that has a fast neighbour: up to 7 fast ranks on that
// side and the slow rank itself, over 6 iterations of the second half of the run.
std::vector<analysis::Rank> selfsync_ranks(const IdleWaveResult& r, std::int32_t& k0) {
  const auto& ss = r.self_sync;
  std::vector<analysis::Rank> out;
  k0 = std::max(1, r.iterations / 2);
  if (ss.slow_ranks.empty()) return out;
  const auto P = static_cast<analysis::Rank>(r.matrix.ranks);
  std::vector<char> slow(static_cast<std::size_t>(P), 0);
  for (auto s : ss.slow_ranks) slow[static_cast<std::size_t>(s)] = 1;
  for (auto s : ss.slow_ranks) {
    const int side = s > 0 && !slow[static_cast<std::size_t>(s - 1)] ? -1
                     : s + 1 < P && !slow[static_cast<std::size_t>(s + 1)] ? 1
                                                                           : 0;
    if (side == 0) continue;
    out.push_back(s);
    for (int k = 1; k <= 7; ++k) {
      const analysis::Rank q = s + side * k;
      if (q < 0 || q >= P || slow[static_cast<std::size_t>(q)]) break;
      out.push_back(q);
    }
    break;
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Sorted ranks as [first, last] ranges of consecutive ranks.
nlohmann::ordered_json rank_ranges(const std::vector<analysis::Rank>& ranks) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    out.push_back({ranks[i], ranks[j]});
    i = j + 1;
  }
  return out;
}

}  // namespace

nlohmann::ordered_json idlewave_json(const IdleWaveResult& r) {
  nlohmann::ordered_json j;
  j["idle_total_s"] = r.total_idle;
  j["idle_periods"] = r.periods.size();
  j["iterations"] = r.iterations;
  j["iterations_from"] = r.iterations_from_truth ? "truth" : "region";
  j["iteration_s"] = r.iteration_s;
  j["t_exec_s"] = r.t_exec_s;
  j["t_comm_s"] = r.t_comm_s;
  j["distance"] = r.distance;
  j["distance_inferred"] = r.distance_inferred;
  j["sigma"] = r.sigma;
  j["sigma_inferred"] = r.sigma_inferred;
  j["eager"] = r.eager;
  j["phased"] = r.phased;
  j["bidirectional"] = r.bidirectional;
  j["predicted_ranks_per_s"] = r.predicted_per_s;
  j["pipeline"] = r.pipeline;
  j["distance_metric"] = analysis::distance_metric_name(r.metric);
  j["grid"] = r.grid;
  j["periodic"] = r.periodic;
  j["matrix"] = {{"t0_s", r.matrix.t0},
                 {"bin_s", r.matrix.bin},
                 {"bins", r.matrix.bins},
                 {"ranks", r.matrix.ranks},
                 {"file", kMatrix}};
  nlohmann::ordered_json waves = nlohmann::ordered_json::array();
  for (const auto& w : r.waves) {
    nlohmann::ordered_json fronts = {front_json(w.down, r.metric), front_json(w.up, r.metric)};
    for (const auto& f : w.axes) fronts.push_back(front_json(f, r.metric));
    waves.push_back({{"source_rank", w.source_rank},
                     {"source_time_s", w.source_time},
                     {"source_iteration", w.source_iteration},
                     {"delay_s", w.delay},
                     {"injected", w.injected},
                     {"fronts", fronts},
                     {"onset_s", w.onset},
                     {"reached_ranks", w.reached}});
  }
  j["waves"] = waves;
  j["waves_left_out"] = r.waves_left_out;
  const auto& ss = r.self_sync;
  j["self_sync"] = {{"slow_group", ss.slow_group},
                    {"detected", ss.detected},
                    {"slow_ranks", ss.slow_ranks.size()},
                    {"first_slow_rank", ss.slow_ranks.empty() ? -1 : ss.slow_ranks.front()},
                    {"last_slow_rank", ss.slow_ranks.empty() ? -1 : ss.slow_ranks.back()},
                    {"slow_rank_ranges", rank_ranges(ss.slow_ranks)},
                    {"t_slow_s", ss.t_slow},
                    {"t_fast_s", ss.t_fast},
                    {"expected_idle_s", ss.expected_idle},
                    {"fast_idle_per_iteration_s", ss.fast_idle_per_iteration},
                    {"fast_idle_raw_per_iteration_s", ss.fast_idle_raw_per_iteration},
                    {"baseline_idle_per_iteration_s", ss.baseline_idle_per_iteration},
                    {"phase_spread_s", ss.phase_spread},
                    {"neighbour_phase_shift_s", ss.neighbour_phase_shift},
                    {"front_ranks_per_iteration", ss.front.slope},
                    {"front_fit_r2", ss.front.r2},
                    {"front_ranks", ss.front.points}};
  return j;
}

std::vector<std::string> write_idlewave_files(const std::string& dir, const IdleWaveResult* r) {
  std::vector<std::string> written;
  const fs::path d(dir);
  const auto file = [&](const char* name, bool present, const std::function<void(std::ostream&)>& body) {
    const std::string path = (d / name).string();
    if (trace::write_or_remove(path, present, body)) written.push_back(path);
  };
  file(kJson, r != nullptr, [&](std::ostream& os) { os << output::json_text(idlewave_json(*r)) << '\n'; });
  file(kFronts, r != nullptr, [&](std::ostream& os) {
    os << "wave,source_rank,direction,rank,distance,time_s,iteration,amplitude_s\n";
    for (std::size_t i = 0; i < r->waves.size(); ++i) {
      const auto& w = r->waves[i];
      std::vector<const Front*> fronts = {&w.down, &w.up};
      for (const auto& f : w.axes) fronts.push_back(&f);
      for (const Front* f : fronts)
        for (const auto& p : f->points)
          os << i << ',' << w.source_rank << ',' << direction_name(*f) << ',' << p.rank << ',' << p.distance << ','
             << num(p.time) << ',' << p.iteration << ',' << num(p.amplitude) << '\n';
    }
  });
  file(kMatrix, r != nullptr, [&](std::ostream& os) { output::write_npy_f32(os, r->matrix.ranks, r->matrix.bins, r->matrix.idle); });
  std::int32_t k0 = 0;
  const auto ranks = r != nullptr ? selfsync_ranks(*r, k0) : std::vector<analysis::Rank>{};
  file(kSelfSync, !ranks.empty(), [&](std::ostream& os) {
    os << "rank,slow,start_s,seconds,iteration\n";
    for (const auto& p : r->periods) {
      if (p.iteration < k0 || p.iteration >= k0 + 6 || !std::binary_search(ranks.begin(), ranks.end(), p.rank))
        continue;
      const bool slow = std::binary_search(r->self_sync.slow_ranks.begin(), r->self_sync.slow_ranks.end(), p.rank);
      os << p.rank << ',' << (slow ? 1 : 0) << ',' << num(p.start) << ',' << num(p.seconds) << ',' << p.iteration
         << '\n';
    }
  });
  return written;
}

// A decay for the terminal: rounded to the time resolution per distance unit (the analysis
// rounds it too), in µs, never −0.
std::string decay_text(double s_per_unit, std::string_view unit) {
  const double us = std::round(s_per_unit / analysis::kTimeResolution) * analysis::kTimeResolution * 1e6 + 0.0;
  if (us == 0) return fmt::format("no decay");
  return fmt::format("decay {:.3g} µs/{}", us, unit);
}

void print_idlewave_summary(const IdleWaveResult& r, std::ostream& out) {
  const bool hops = r.metric == analysis::DistanceMetric::Hops;
  const std::string_view unit = hops ? "hop" : "rank";
  const std::string_view units = hops ? "hops" : "ranks";
  const char* exchange = !r.bidirectional ? "one direction"
                         : !r.phased       ? "both directions at once"
                         : r.eager         ? "both directions in phases, eager"
                                           : "both directions in phases, sends wait for receivers";
  std::string topology = "1D chain";
  if (hops && r.grid.empty()) topology = "communication graph";
  if (!r.grid.empty()) {
    topology = fmt::format("{}D grid {}", r.grid.size(), fmt::join(r.grid, "×"));
    if (r.periodic) topology += " (periodic)";
  } else if (!hops && r.periodic) {
    topology = "ring";
  }
  out << fmt::format("idle waves      iteration {:.6g} s as run (T_exec {:.6g} s, T_comm {:.6g} s), {}, σ = {}, "
                     "d = {} {} ({})",
                     r.iteration_s, r.t_exec_s, r.t_comm_s, topology, r.sigma, r.distance,
                     r.distance == 1 ? unit : units, exchange);
  if (r.waves.empty())
    out << ": no idle wave\n";
  else if (r.predicted_per_s > 0)
    out << fmt::format(": model {:.6g} {}/s\n", r.predicted_per_s, units);
  else if (r.pipeline)
    out << ": a wavefront pipeline (the sweeps carry a delay within its own iteration, one block step per hop): "
           "the model σ·d/T_iter does not apply\n";
  else
    out << ": model not applicable (no iteration found)\n";
  for (std::size_t i = 0; i < r.waves.size() && i < 8; ++i) {
    const auto& w = r.waves[i];
    out << fmt::format("  wave {} from rank {} at {:.6g} s ({} {:.6g} s), {} ranks reached\n", i, w.source_rank,
                       w.source_time, w.injected ? "delay" : "idle", w.delay, w.reached);
    std::vector<const Front*> fronts = {&w.down, &w.up};
    for (const auto& f : w.axes) fronts.push_back(&f);
    for (const Front* f : fronts) {
      std::string stop(analysis::front_stop_name(f->stop));
      if (f->met_wave >= 0)
        stop += f->stop == analysis::FrontStop::Met ? fmt::format(" (wave {} survives)", f->met_wave)
                                                    : fmt::format(" (survived wave {})", f->met_wave);
      const std::string dir = direction_name(*f);
      const int reach = f->points.empty() ? 0 : f->points.back().distance;
      if (f->at_once)
        out << fmt::format("    {:<4} {:>5} ranks, all idle at once in iteration {} (nothing travels), stops: {}\n",
                           dir, f->reach(), f->points.front().iteration, stop);
      else if (f->points.size() < 2)
        out << fmt::format("    {:<4} {:>5} ranks, too few to measure a speed, stops: {}\n", dir, f->reach(), stop);
      else if (r.pipeline && f->axis < 0)
        // In rank order the side mixes quadrants that different sweeps carry: no one speed.
        out << fmt::format("    {:<4} {:>5} ranks out to {} {} (carried by different sweeps: speeds per axis), "
                           "stops: {}\n",
                           dir, f->reach(), reach, reach == 1 ? unit : units, stop);
      else
        out << fmt::format("    {:<4} {:>5} ranks{}, {:>10.6g} {}/s{}, {:.4g} {}/iteration, {}, stops: {}\n", dir,
                           f->reach(),
                           units == "ranks" ? std::string() : fmt::format(" out to {} {}", reach, reach == 1 ? unit : units),
                           f->by_time.slope, units,
                           f->predicted_ranks_per_s > 0 ? fmt::format(" ({:.3f} of the model)", f->measured_over_predicted)
                                                        : std::string(),
                           f->by_iteration.slope, units, decay_text(f->decay_s_per_rank, unit), stop);
    }
  }
  const auto& ss = r.self_sync;
  if (ss.slow_group)
    out << fmt::format(
        "  self-synchronisation {}: {} slow ranks ({:.6g} s vs {:.6g} s compute per iteration); fast ranks idle "
        "{:.6g} s per iteration over the baseline of {:.6g} s (expected {:.6g} s), neighbours {:.3g} s apart in "
        "phase, front {:.3g} {}/iteration\n",
        ss.detected ? "detected" : "not detected", ss.slow_ranks.size(), ss.t_slow, ss.t_fast,
        ss.fast_idle_per_iteration, ss.baseline_idle_per_iteration, ss.expected_idle, ss.neighbour_phase_shift,
        ss.front.slope, units);
}

}  // namespace waitlab::analysis
