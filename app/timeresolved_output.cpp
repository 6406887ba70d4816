#include "app/timeresolved_output.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <functional>

#include "analysis/trace/atomic_file.hpp"
#include "app/plot.hpp"
#include "models/windows.hpp"

namespace waitlab::app {

namespace fs = std::filesystem;
using analysis::Efficiency;
using analysis::TimeResolvedResult;

namespace {

const char* const kJson = "timeresolved.json";
const char* const kCsv = "timeresolved.csv";

std::string num(double v) {
  return fmt::format("{}", v);
}

void add_efficiency(nlohmann::ordered_json& j, const Efficiency& e) {
  j["load_balance"] = e.lb;
  j["communication_efficiency"] = e.comm_e;
  j["serialisation_efficiency"] = e.ser_e;
  j["transfer_efficiency"] = e.trf_e;
  j["parallel_efficiency"] = e.pe;
}

// The window of lowest parallel efficiency (the first of equals).
std::size_t lowest(const TimeResolvedResult& r) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < r.windows.size(); ++i)
    if (r.windows[i].eff.pe < r.windows[best].eff.pe) best = i;
  return best;
}

}  // namespace

nlohmann::ordered_json timeresolved_json(const TimeResolvedResult& r, const std::string& note) {
  nlohmann::ordered_json j;
  j["source"] = r.source;
  j["note"] = note;
  j["ranks"] = r.ranks;
  j["start_s"] = r.t0;
  j["end_s"] = r.t1;
  j["elapsed_s"] = r.elapsed;
  j["ideal_s"] = r.ideal;
  j["ideal_unclamped_s"] = r.ideal_unclamped;
  j["useful_max_s"] = r.useful_max;
  j["useful_mean_s"] = r.useful_mean;
  add_efficiency(j, r.eff);
  j["windows"] = {{"rule", analysis::window_rule_name(r.windows_rule.rule)},
                  {"spec", models::windows_text(r.windows_rule)},
                  {"count", r.windows.size()},
                  {"length_s", r.windows_rule.rule == analysis::WindowRule::Fixed ? r.windows_rule.length : 0.0},
                  {"min_events_per_rank", r.min_events}};
  if (!r.windows.empty()) {
    const std::size_t i = lowest(r);
    const auto& w = r.windows[i];
    nlohmann::ordered_json lw = {{"window", i}, {"start_s", w.start}, {"end_s", w.end}};
    add_efficiency(lw, w.eff);
    j["lowest_window"] = lw;
  } else {
    j["lowest_window"] = nullptr;
  }
  j["lamport"] = {{"relaxed_sends", r.relaxed_sends}, {"unresolved", r.unresolved}};
  j["file"] = kCsv;
  return j;
}

std::vector<std::string> write_timeresolved_files(const std::string& dir, const TimeResolvedResult* r,
                                                  const std::string& note) {
  std::vector<std::string> written;
  const fs::path d(dir);
  const auto file = [&](const char* name, const std::function<void(std::ostream&)>& body) {
    const std::string path = (d / name).string();
    if (trace::write_or_remove(path, r != nullptr, body)) written.push_back(path);
  };
  file(kCsv, [&](std::ostream& os) {
    os << "window,start_s,end_s,events,useful_max_s,useful_mean_s,ideal_s,ideal_end_s,lb,comm_e,ser_e,trf_e,pe,"
          "cum_useful_max_s,cum_useful_mean_s,cum_ideal_s,cum_lb,cum_comm_e,cum_ser_e,cum_trf_e,cum_pe\n";
    for (std::size_t i = 0; i < r->windows.size(); ++i) {
      const auto& w = r->windows[i];
      os << i << ',' << num(w.start) << ',' << num(w.end) << ',' << w.events << ',' << num(w.useful_max) << ','
         << num(w.useful_mean) << ',' << num(w.ideal) << ',' << num(w.ideal_end) << ',' << num(w.eff.lb) << ','
         << num(w.eff.comm_e) << ',' << num(w.eff.ser_e) << ',' << num(w.eff.trf_e) << ',' << num(w.eff.pe) << ','
         << num(w.cum_useful_max) << ',' << num(w.cum_useful_mean) << ',' << num(w.cum_ideal) << ','
         << num(w.cum.lb) << ',' << num(w.cum.comm_e) << ',' << num(w.cum.ser_e) << ',' << num(w.cum.trf_e) << ','
         << num(w.cum.pe) << '\n';
    }
  });
  file(kJson, [&](std::ostream& os) { os << timeresolved_json(*r, note).dump(2) << '\n'; });
  return written;
}

std::string draw_timeresolved(const std::string& dir) {
  for (const char* ext : {".png", ".svg"}) {
    std::error_code ec;
    fs::remove(fs::path(dir) / (std::string(kTimeresolvedPicture) + ext), ec);  // an old one describes another run
  }
  return draw("timeresolved", {dir});
}

void print_timeresolved_summary(const TimeResolvedResult& r, const std::string& note, std::ostream& out) {
  const auto pct = [](double f) { return fmt::format("{:.2f} %", 100 * f); };
  out << fmt::format("efficiency      PE {} = LB {} × CommE {} (SerE {} × TrfE {}); T {:.6g} s, T_ideal {:.6g} s ({})\n",
                     pct(r.eff.pe), pct(r.eff.lb), pct(r.eff.comm_e), pct(r.eff.ser_e), pct(r.eff.trf_e), r.elapsed,
                     r.ideal, r.source == "lamport" ? "Lamport replay" : "ideal-network run");
  if (!r.windows.empty()) {
    const auto& w = r.windows[lowest(r)];
    const auto& rule = r.windows_rule;
    const std::string how = rule.rule == analysis::WindowRule::Count   ? std::string("equal")
                            : rule.rule == analysis::WindowRule::Fixed ? models::windows_text(rule) + " each"
                                                                       : fmt::format("adaptive, ≥ {} events per rank, from {} base windows",
                                                                                     r.min_events, rule.count);
    out << fmt::format("  {} windows ({}); lowest PE {} in {:.6g}–{:.6g} s (CommE {}, LB {})\n", r.windows.size(), how,
                       pct(w.eff.pe), w.start, w.end, pct(w.eff.comm_e), pct(w.eff.lb));
  }
  if (!note.empty()) out << "  " << note << "\n";
}

}  // namespace waitlab::app
