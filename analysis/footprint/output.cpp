// waitlab::analysis — the counterfactual footprint as data, text and report (output.hpp).
#include "analysis/footprint/output.hpp"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>

#include "analysis/output/html.hpp"
#include "analysis/output/json_text.hpp"
#include "analysis/output/npy.hpp"
#include "analysis/trace/atomic_file.hpp"

namespace waitlab::analysis {

namespace fs = std::filesystem;
using output::Json;

namespace {

const char* const kJson = "footprint.json";
const char* const kCsv = "footprint.csv";
const char* const kMatrix = "footprint_shift.npy";

std::string num(double v) { return fmt::format("{}", v); }

// The rank with the largest shift (the lowest on ties).
const FootprintRank* largest(const FootprintResult& f) {
  const FootprintRank* best = nullptr;
  for (const auto& r : f.ranks)
    if (best == nullptr || std::abs(r.peak_shift) > std::abs(best->peak_shift)) best = &r;
  return best;
}

}  // namespace

nlohmann::ordered_json footprint_json(const FootprintResult& f) {
  nlohmann::ordered_json j;
  j["removed"] = f.removed;
  j["source_rank"] = f.source == trace::kNoRank ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(f.source);
  j["injected_s"] = f.injected;
  j["run_wall_time_s"] = f.run_wall;
  j["twin_wall_time_s"] = f.twin_wall;
  j["reached_end_s"] = f.reached_end;
  j["absorbed_s"] = f.absorbed;
  j["reached_fraction"] = f.reached_fraction();
  j["events_compared"] = f.events;
  if (const FootprintRank* r = largest(f); r != nullptr)
    j["largest_shift"] = {{"rank", r->rank}, {"shift_s", r->peak_shift}, {"time_s", r->peak_time}};
  auto reach = nlohmann::ordered_json::array();
  for (const auto& x : f.reach)
    reach.push_back({{"level", x.level}, {"shift_at_least_s", x.level * f.injected}, {"down", x.down}, {"up", x.up}});
  j["reach"] = reach;
  if (f.source != trace::kNoRank) j["idle_wave_reach"] = {{"down", f.wave_down}, {"up", f.wave_up}};
  j["matrix"] = {{"t0_s", f.shift.t0}, {"bin_s", f.shift.bin}, {"bins", f.shift.bins}, {"ranks", f.shift.ranks}};
  return j;
}

std::vector<std::string> write_footprint_files(const std::string& dir, const FootprintResult* f) {
  std::vector<std::string> written;
  const auto file = [&](const char* name, bool present, const std::function<void(std::ostream&)>& body) {
    const std::string path = (fs::path(dir) / name).string();
    if (trace::write_or_remove(path, present, body)) written.push_back(path);
  };
  file(kJson, f != nullptr, [&](std::ostream& os) { os << output::json_text(footprint_json(*f)) << '\n'; });
  file(kCsv, f != nullptr, [&](std::ostream& os) {
    os << "rank,offset,peak_shift_s,peak_time_s,end_shift_s,largest_idle_s,twin_largest_idle_s\n";
    for (const auto& r : f->ranks)
      os << r.rank << ',' << r.offset << ',' << num(r.peak_shift) << ',' << num(r.peak_time) << ','
         << num(r.end_shift) << ',' << num(r.largest_idle) << ',' << num(r.twin_largest_idle) << '\n';
  });
  file(kMatrix, f != nullptr,
       [&](std::ostream& os) { output::write_npy_f32(os, f->shift.ranks, f->shift.bins, f->shift.shift); });
  return written;
}

void print_footprint_summary(const FootprintResult& f, std::ostream& out) {
  std::string removed;
  for (const auto& r : f.removed) removed += (removed.empty() ? "" : ", ") + r;
  out << fmt::format("footprint       without {}{}: {:.6g} s injected, {:.6g} s reached the end of the run ({:.1f} %), "
                     "{:.6g} s absorbed\n",
                     removed, f.source == trace::kNoRank ? "" : fmt::format(" (rank {})", f.source), f.injected,
                     f.reached_end, 100.0 * f.reached_fraction(), f.absorbed);
  if (f.source != trace::kNoRank) {
    std::string levels;
    for (const auto& x : f.reach)
      levels += fmt::format("{}≥ {:g} %: {} down, {} up", levels.empty() ? "" : "; ", 100 * x.level, x.down, x.up);
    out << fmt::format("  ranks shifted {}; the idle wave was followed {} down, {} up\n", levels, f.wave_down,
                       f.wave_up);
  }
  if (const FootprintRank* r = largest(f); r != nullptr)
    out << fmt::format("  largest shift {:.6g} s at rank {} (t = {:.6g} s)\n", r->peak_shift, r->rank, r->peak_time);
}

std::string footprint_report_html(const Json* fp, const output::ReportContext& rc) {
  using namespace output;
  if (fp == nullptr) return "";
  std::string removed;
  if (const Json* r = at(*fp, {"removed"}); r != nullptr && r->is_array())
    for (const auto& c : *r) removed += (removed.empty() ? "" : ", ") + c.get<std::string>();
  std::string h = fmt::format(
      "<p>The same run without {}{} — the same seed and noise — is its twin: each event's shift is its time here "
      "minus its time there. Where the idle wave shows the waiting the perturbation caused, the shift shows where "
      "its time went: a wave whose idle periods decay into the noise can still have moved every rank it spread "
      "over, and what reaches the end of the run lengthens it.</p>\n",
      esc(removed), at(*fp, {"source_rank"}) != nullptr ? " on rank " + plain(at(*fp, {"source_rank"})) : "");
  h += "<table class=\"data\"><tbody>\n";
  h += kv_row("injected", esc(time_of(at(*fp, {"injected_s"}))));
  h += kv_row("reached the end of the run",
              esc(time_of(at(*fp, {"reached_end_s"}))) + " (" + esc(percent(number(*fp, {"reached_fraction"}).value_or(NAN))) + ")");
  h += kv_row("absorbed on the way", esc(time_of(at(*fp, {"absorbed_s"}))));
  h += kv_row("wall time, run / twin",
              esc(time_of(at(*fp, {"run_wall_time_s"}))) + " / " + esc(time_of(at(*fp, {"twin_wall_time_s"}))));
  h += "</tbody></table>\n";
  if (const Json* reach = at(*fp, {"reach"}); reach != nullptr && reach->is_array() && !reach->empty()) {
    h += "<h3>How far the ranks were shifted</h3>\n<table class=\"data\"><thead><tr><th>shift at least</th>"
         "<th class=\"num\">ranks down</th><th class=\"num\">ranks up</th></tr></thead><tbody>\n";
    for (const auto& x : *reach)
      h += fmt::format("<tr><td>{} ({} of the injected)</td>{}{}</tr>\n", esc(time_of(at(x, {"shift_at_least_s"}))),
                       esc(percent(number(x, {"level"}).value_or(NAN))), num_cell(plain(at(x, {"down"}))),
                       num_cell(plain(at(x, {"up"}))));
    if (const Json* w = at(*fp, {"idle_wave_reach"}); w != nullptr)
      h += fmt::format("<tr><td>the idle wave's fronts (tracker)</td>{}{}</tr>\n", num_cell(plain(at(*w, {"down"}))),
                       num_cell(plain(at(*w, {"up"}))));
    h += "</tbody></table>\n";
  }
  for (const auto& p : rc.pictures)
    if (p.owner == "footprint") h += figure_html(rc.dir, p);
  return h;
}

}  // namespace waitlab::analysis
