// The report's section on the idle waves (report.html): the model's figures, every wave and its
// fronts, the self-synchronisation behind a slow group, and the pictures — made from
// summary.json's analyses.idlewave and the pictures in the directory only.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "analysis/idlewave/output.hpp"

namespace waitlab::analysis {

namespace {

using output::Json;
using namespace output;  // the report's pieces

// What the idle-wave fronts' distances count (distance_metric): ranks on a chain, hops on a
// grid or graph. {singular, plural}.
std::pair<std::string, std::string> distance_units(const Json& iw) {
  if (text(iw, {"distance_metric"}) == "hops") return {"hop", "hops"};
  return {"rank", "ranks"};
}

// v rounded to a multiple of `resolution`; never −0.
double round_to(double v, double resolution) {
  if (!std::isfinite(v) || !(resolution > 0)) return v;
  return std::round(v / resolution) * resolution + 0.0;
}

// Why the idle-wave model uses its σ and d, from the exchange the analysis found in the trace
// (analysis/idlewave/idlewave.hpp: σ = 2 for a bidirectional exchange in one-sided phases under
// rendezvous, else 1; d the largest rank distance of a message).
std::string sigma_reason(const Json& iw) {
  const auto flag = [&](const char* k) {
    const Json* v = at(iw, {k});
    return v != nullptr && v->is_boolean() && v->get<bool>();
  };
  const Json* sv = at(iw, {"sigma"});
  const Json* dv = at(iw, {"distance"});
  const Json* si = at(iw, {"sigma_inferred"});
  const Json* di = at(iw, {"distance_inferred"});
  std::string h;
  if (sv != nullptr && sv->is_number()) {
    const int sigma = static_cast<int>(sv->get<double>());
    h = fmt::format("σ = {}", sigma);
    const int expected = flag("phased") && !flag("eager") ? 2 : 1;
    if (si != nullptr && si->is_boolean() && !si->get<bool>())
      h += ": given in the options.";
    else if (sigma != expected)
      h += ": inferred from the trace.";
    else if (!flag("bidirectional"))
      h += ": ranks receive from one side only; a wait moves on by one neighbour per iteration.";
    else if (!flag("phased"))
      h += ": ranks exchange with both sides at once (not in one-sided phases); a wait moves on by one "
           "neighbour per iteration.";
    else if (flag("eager"))
      h += ": ranks exchange with one side, then the other, but sends complete before their receive is posted "
           "(eager); a wait moves on by one neighbour per iteration.";
    else
      h += ": ranks exchange with one side, then the other, and every send waits for its receiver "
           "(rendezvous); a wait moves on by two neighbours per iteration.";
  }
  const auto [unit, units] = distance_units(iw);
  if (dv != nullptr && dv->is_number()) {
    h += fmt::format("{}d = {}", h.empty() ? "" : " ", plain(*dv));
    if (di != nullptr && di->is_boolean() && !di->get<bool>()) {
      h += ": given in the options.";
    } else if (unit == "hop") {
      std::string grid;
      if (const Json* g = at(iw, {"grid"}); g != nullptr && g->is_array() && !g->empty())
        for (const auto& n : *g) grid += (grid.empty() ? "" : "×") + plain(n);
      const Json* periodic = at(iw, {"periodic"});
      h += grid.empty() ? ": a message goes one hop on the communication graph; distances count hops."
                        : fmt::format(": a message goes one hop on the {}D grid {}{}; distances count hops (the "
                                      "Manhattan distance on the grid).",
                                      at(iw, {"grid"})->size(), grid,
                                      periodic != nullptr && periodic->is_boolean() && periodic->get<bool>()
                                          ? " (periodic)"
                                          : "");
    } else {
      h += ": the largest rank distance of a message.";
    }
  }
  if (const auto sg = number(sv), d = number(dv); sg && d)
    h += fmt::format(" A wave moves σ·d = {:g} {} per iteration.", *sg * *d, *sg * *d == 1 ? unit : units);
  return h;
}

// Rank ranges [first, last] as text: "16–31, 48–63, …, 1008–1023 (32 ranges)"; a single rank
// without a dash. `shown`: the ranges written out before the ellipsis (the last is always).
std::string rank_ranges(const std::vector<std::pair<std::int64_t, std::int64_t>>& ranges, std::size_t shown = 6) {
  const auto one = [](const std::pair<std::int64_t, std::int64_t>& r) {
    return r.first == r.second ? std::to_string(r.first) : fmt::format("{}–{}", r.first, r.second);
  };
  std::string s;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    if (ranges.size() > shown + 1 && i == shown) {
      s += ", …, " + one(ranges.back()) + fmt::format(" ({} ranges)", ranges.size());
      break;
    }
    s += (i == 0 ? "" : ", ") + one(ranges[i]);
  }
  return s;
}

// The slow group's ranks: from self_sync.slow_rank_ranges ([[first, last], ...]) when the
// analysis wrote them; else one range when first_slow_rank..last_slow_rank holds exactly
// slow_ranks ranks; else the count and the span, which is not one block.
std::string slow_ranks_text(const Json& ss) {
  const Json* n = at(ss, {"slow_ranks"});
  std::string v = plain(n);
  if (const Json* rr = at(ss, {"slow_rank_ranges"}); rr != nullptr && rr->is_array() && !rr->empty()) {
    std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
    for (const auto& r : *rr)
      if (r.is_array() && r.size() == 2 && r[0].is_number_integer() && r[1].is_number_integer())
        ranges.emplace_back(r[0].get<std::int64_t>(), r[1].get<std::int64_t>());
    if (ranges.size() == rr->size())
      return v + (ranges.size() == 1 && ranges[0].first == ranges[0].second ? " (rank " : " (ranks ") +
             rank_ranges(ranges) + ")";
  }
  const auto first = number(ss, {"first_slow_rank"}), last = number(ss, {"last_slow_rank"});
  const auto count = number(n);
  if (!first || !last || *first < 0) return v;
  if (count && *last - *first + 1 == *count)
    return v + (*first == *last ? fmt::format(" (rank {})", *first) : fmt::format(" (ranks {}–{})", *first, *last));
  return v + fmt::format(" (not one block: the first is rank {}, the last rank {})", *first, *last);
}

// Where a front stops, with the wave it met when the analysis names it (met_wave, from 0).
std::string stop_text(const Json& f) {
  std::string s = plain(at(f, {"stop"}));
  if (const auto m = number(f, {"met_wave"}); m && *m >= 0)
    s += s == "met" ? fmt::format(" (wave {:g} goes on)", *m) : fmt::format(" (wave {:g} ended against it)", *m);
  return s;
}

}  // namespace

std::string idlewave_report_html(const output::Json* iw, const output::ReportContext& rc) {
  const auto& dir = rc.dir;
  const auto& pics = rc.pictures;
  std::string h;
  if (iw != nullptr) {
    h += "<div class=\"cards\">\n";
    const auto [unit, units] = distance_units(*iw);
    if (const Json* it = at(*iw, {"iteration_s"})) {
      // T_iter: T_exec + T_comm, or the period measured as run (under noise, longer).
      const auto ti = number(it), te = number(*iw, {"t_exec_s"}), tc = number(*iw, {"t_comm_s"});
      const bool sum = ti && te && tc && std::fabs(*ti - (*te + *tc)) <= 1e-9 * std::fabs(*ti);
      h += card("Iteration T_iter", time_of(it),
                fmt::format("{}T_exec {}{} T_comm {}", sum ? "" : "as run; ", time_of(at(*iw, {"t_exec_s"})),
                            sum ? " +" : ",", time_of(at(*iw, {"t_comm_s"}))));
    }
    const Json* pipeline_flag = at(*iw, {"pipeline"});
    const bool pipeline = pipeline_flag != nullptr && pipeline_flag->is_boolean() && pipeline_flag->get<bool>();
    const std::string why = sigma_reason(*iw);
    if (!pipeline && (at(*iw, {"sigma"}) != nullptr || at(*iw, {"distance"}) != nullptr))
      h += card(units + " per iteration", fmt::format("σ {} · d {}", plain(at(*iw, {"sigma"})), plain(at(*iw, {"distance"}))),
                "the model's σ and d, from the exchange in the trace (below)");
    auto model = number(*iw, {"predicted_ranks_per_s"});
    if (!model) {
      const auto s = number(*iw, {"sigma"}), d = number(*iw, {"distance"}), it = number(*iw, {"iteration_s"});
      if (s && d && it && *it > 0) model = *s * *d / *it;
    }
    // No iteration measured, no model (not "0 ranks/s").
    if (model && *model > 0) h += card("Model speed", fmt::format("{:.5g} {}/s", *model, units), "σ·d / T_iter");
    if (const Json* idle = at(*iw, {"idle_total_s"}))
      h += card("Idle time", time_of(idle), plain(at(*iw, {"idle_periods"})) + " idle periods");
    h += "</div>\n";
    if (!why.empty() && !pipeline) h += "<p class=\"note\" id=\"idlewave-model\">" + esc(why) + "</p>\n";
    if (pipeline)
      h += "<p class=\"note\" id=\"idlewave-pipeline\">A wavefront pipeline (sweeps): every rank usually waits for "
           "its upstream neighbours, and a delay is carried by the sweeps within its own iteration, one block step "
           "per hop, to every rank. The model σ·d / T_iter does not apply; the fronts are followed on the extra idle "
           "time over each rank's usual wait, and their speeds (per grid axis) are the pipeline's pace.</p>\n";
    const double resolution = number(*iw, {"timer_resolution_s"}).value_or(analysis::kTimeResolution);

    const Json* waves = at(*iw, {"waves"});
    if (waves != nullptr && waves->is_array() && !waves->empty()) {
      // Waves numbered from 0, as in idlewave_fronts.csv and on the terminal; each at the start
      // of its delayed computation (onset_s) when summary.json has it, where the wave starts.
      const bool onsets = std::all_of(waves->begin(), waves->end(), [](const Json& w) { return number(w, {"onset_s"}).has_value(); });
      h += fmt::format(
          "<h3>Waves</h3>\n<div class=\"scroll\"><table class=\"data wide\" id=\"idlewave-waves\"><thead><tr>"
          "<th class=\"num\">wave</th><th class=\"num\">source rank</th><th class=\"num\">{2}</th>"
          "<th class=\"num\">iteration</th><th class=\"num\">delay</th><th>front</th><th class=\"num\">reach "
          "(ranks)</th><th class=\"num\">speed ({1}/s)</th><th class=\"num\">{1} per iteration</th><th class=\"num\">"
          "fit R²</th><th class=\"num\">model ({1}/s)</th><th class=\"num\">measured / model</th>"
          "<th class=\"num\">decay per {0}</th><th>stops</th></tr></thead><tbody>\n",
          unit, units, onsets ? "starts at" : "delay ends at");
      std::size_t n = 0;
      for (const auto& w : *waves) {
        ++n;
        const Json* fronts = at(w, {"fronts"});
        const std::size_t count = fronts != nullptr && fronts->is_array() ? fronts->size() : 0;
        const Json* injected = at(w, {"injected"});
        std::string delay = time_of(at(w, {"delay_s"}));
        if (injected != nullptr && injected->is_boolean()) delay += injected->get<bool>() ? " injected" : " idle";
        const std::string span = count > 1 ? fmt::format(" rowspan=\"{}\"", count) : "";
        const std::string wave_cells =
            fmt::format("<td class=\"num\"{0}>{1}</td><td class=\"num\"{0}>{2}</td><td class=\"num\"{0}>{3}</td>"
                        "<td class=\"num\"{0}>{4}</td><td class=\"num\"{0}>{5}</td>",
                        span, n - 1, esc(plain(at(w, {"source_rank"}))), esc(time_of(at(w, {onsets ? "onset_s" : "source_time_s"}))),
                        esc(plain(at(w, {"source_iteration"}))), esc(delay));
        if (count == 0) {
          h += "<tr>" + wave_cells + "<td colspan=\"9\">no front measured</td></tr>\n";
          continue;
        }
        for (std::size_t i = 0; i < count; ++i) {
          const Json& f = (*fronts)[i];
          // Rounded to the time resolution: a wave that does not decay shows 0, not rounding noise.
          // The exact value on hover.
          // A front over fewer than two ranks has no speed, fit or decay (dashes, not zeros).
          // In a pipeline a side in rank order (down, up) mixes quadrants that different sweeps
          // carry: no one speed (the axes have theirs).
          const Json* side_name = at(f, {"direction"});
          const bool side = side_name != nullptr && side_name->is_string() && (*side_name == "down" || *side_name == "up");
          const bool measured = number(f, {"reach_ranks"}).value_or(2) >= 2 && !(pipeline && side);
          const auto measure = [&](const char* key, const char* spec) {
            return num_cell(measured ? fixed(at(f, {key}), spec) : kDash);
          };
          const auto decay = measured ? number(f, {"decay_s_per_rank"}) : std::nullopt;
          const std::string decay_cell =
              decay ? fmt::format("<td class=\"num\" title=\"{} s\">{}</td>", exact(*decay),
                                  esc(secs(round_to(*decay, resolution))))
                    : num_cell(kDash);
          h += fmt::format("<tr>{}<td>{}</td>{}{}{}{}{}{}{}<td>{}</td></tr>\n", i == 0 ? wave_cells : "",
                           esc(plain(at(f, {"direction"}))), num_cell(plain(at(f, {"reach_ranks"}))),
                           measure("speed_ranks_per_s", "{:.5g}"), measure("speed_ranks_per_iteration", "{:.4g}"),
                           measure("fit_r2", "{:.4f}"),
                           pipeline ? num_cell(kDash) : num_cell(fixed(at(f, {"predicted_ranks_per_s"}), "{:.5g}")),
                           pipeline ? num_cell(kDash) : measure("measured_over_predicted", "{:.3f}"),
                           decay_cell, esc(stop_text(f)));
        }
      }
      h += "</tbody></table></div>\n";
    } else {
      h += "<p>No idle wave was found.</p>\n";
    }

    if (const Json* ss = at(*iw, {"self_sync"}); ss != nullptr && ss->is_object()) {
      h += "<h3>Self-synchronisation</h3>\n";
      const Json* group = at(*ss, {"slow_group"});
      if (group != nullptr && group->is_boolean() && !group->get<bool>()) {
        h += "<p class=\"note\">No slow group of ranks was found: nothing to self-synchronise to.</p>\n";
      } else {
        h += "<table class=\"kv\">\n";
        if (const Json* d = at(*ss, {"detected"})) h += kv_row("Detected", esc(plain(*d)));
        if (at(*ss, {"slow_ranks"}) != nullptr) h += kv_row("Slow ranks", esc(slow_ranks_text(*ss)));
        if (at(*ss, {"t_slow_s"}) != nullptr || at(*ss, {"t_fast_s"}) != nullptr)
          h += kv_row("Compute per iteration", esc(fmt::format("{} slow, {} fast", time_of(at(*ss, {"t_slow_s"})),
                                                               time_of(at(*ss, {"t_fast_s"})))));
        if (at(*ss, {"fast_idle_per_iteration_s"}) != nullptr || at(*ss, {"expected_idle_s"}) != nullptr)
          h += kv_row("Fast ranks idle per iteration",
                      esc(fmt::format("{} (expected {})", time_of(at(*ss, {"fast_idle_per_iteration_s"})),
                                      time_of(at(*ss, {"expected_idle_s"})))));
        if (const Json* ps = at(*ss, {"phase_spread_s"})) h += kv_row("Phase spread", esc(time_of(ps)));
        if (const Json* fr = at(*ss, {"front_ranks_per_iteration"}))
          h += kv_row("Front", esc(fixed(fr, "{:.4g}") + " ranks per iteration"));
        h += "</table>\n";
      }
    }
  } else {
    h += "<p class=\"note\">summary.json has no idle-wave analysis; these pictures may be left from an earlier "
         "run.</p>\n";
  }
  for (const auto& p : pics)
    if (p.owner == "idlewave") h += figure_html(dir, p);
  return h;
}


}  // namespace waitlab::analysis
