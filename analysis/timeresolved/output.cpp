#include "analysis/timeresolved/output.hpp"
#include "analysis/output/json_text.hpp"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <functional>

#include "analysis/trace/atomic_file.hpp"
#include "analysis/timeresolved/windows.hpp"

namespace waitlab::analysis {

namespace fs = std::filesystem;

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

std::string estimate_title(const std::string& source) {
  if (source == "lamport") return "Lamport replay";
  if (source == "ideal_network") return "ideal-network run";
  if (source == "smpi_replay") return "SMPI replay on an ideal network";
  return source;
}

nlohmann::ordered_json convention_json(const TimeResolvedResult& r) {
  return {{"name", analysis::convention_name(r.convention)},
          {"span", analysis::convention_span_text(r.convention)},
          {"useful", analysis::convention_useful_text(r.convention)},
          {"units", r.units}};
}

nlohmann::ordered_json cut_json(const TimeResolvedResult& r) {
  if (!r.cut.any()) return nullptr;
  const Cut& c = r.cut;
  nlohmann::ordered_json pieces = nlohmann::ordered_json::array();
  for (const auto& [a, b] : c.pieces) pieces.push_back({a, b});
  const double run = r.run_t1 - r.run_t0;
  return {{"kind", cut_kind_name(c.spec.kind)},
          {"option", c.spec.option},
          {"spec", c.spec.text},
          {"text", cut_text(c)},
          {"instances", c.instances},
          {"locations", c.locations},
          {"length_s", r.elapsed},
          {"run_start_s", r.run_t0},
          {"run_end_s", r.run_t1},
          {"fraction_of_run", run > 0 ? r.elapsed / run : 0.0},
          {"pieces", pieces}};
}

nlohmann::ordered_json hybrid_json(const HybridEfficiency* h) {
  if (h == nullptr || !h->hybrid) return nullptr;
  const auto n = [](double v) { return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr); };
  nlohmann::ordered_json j;
  j["parallel_efficiency"] = n(h->hybrid_pe);
  j["mpi"] = {{"load_balance", n(h->mpi.lb)},
              {"communication_efficiency", n(h->mpi.comm_e)},
              {"serialisation_efficiency", n(h->mpi.ser_e)},
              {"transfer_efficiency", n(h->mpi.trf_e)},
              {"parallel_efficiency", n(h->mpi.pe)}};
  j["openmp"] = {{"load_balance", n(h->omp.lb)},
                 {"communication_efficiency", n(h->omp.comm_e)},
                 {"parallel_efficiency", n(h->omp.pe)}};
  if (h->talp)
    j["openmp_split"] = {{"serialisation_efficiency", n(h->omp_serialisation)},
                         {"load_balance", n(h->omp_load_balance)},
                         {"scheduling_efficiency", n(h->omp_scheduling)}};
  else
    j["openmp_split"] = nullptr;
  return j;
}

nlohmann::ordered_json timeresolved_json(const TimeResolvedResult& r, const std::string& note,
                                         const std::vector<std::string>& warnings, const HybridEfficiency* hybrid) {
  nlohmann::ordered_json j;
  j["source"] = r.source;
  j["note"] = note;
  j["warnings"] = warnings;
  j["convention"] = convention_json(r);
  j["cut"] = cut_json(r);
  j["mpi"] = r.mpi;
  j["ranks"] = r.ranks;
  j["start_s"] = r.t0;
  j["end_s"] = r.t1;
  j["elapsed_s"] = r.elapsed;
  j["ideal_s"] = r.ideal;
  j["ideal_unclamped_s"] = r.ideal_unclamped;
  j["useful_max_s"] = r.useful_max;
  j["useful_mean_s"] = r.useful_mean;
  j["useful_ideal_max_s"] = r.useful_ideal_max;
  add_efficiency(j, r.eff);
  j["hybrid"] = hybrid_json(hybrid);
  nlohmann::ordered_json est = nlohmann::ordered_json::array();
  for (const auto& e : r.estimates)
    est.push_back({{"source", e.source},
                   {"ideal_s", e.t_ideal},
                   {"useful_max_s", e.useful_max},
                   {"serialisation_efficiency", e.ser_e},
                   {"transfer_efficiency", e.trf_e}});
  j["ideal_estimates"] = est;
  const auto& c = r.counters;
  if (c.instructions || c.cycles) {
    j["counters"] = {{"useful_instructions", c.instructions ? nlohmann::ordered_json(c.useful_instructions) : nullptr},
                     {"useful_cycles", c.cycles ? nlohmann::ordered_json(c.useful_cycles) : nullptr},
                     {"ipc", c.instructions && c.cycles ? nlohmann::ordered_json(c.ipc) : nullptr},
                     {"frequency_hz", c.cycles ? nlohmann::ordered_json(c.frequency_hz) : nullptr}};
  } else {
    j["counters"] = nullptr;
  }
  j["windows"] = {{"rule", analysis::window_rule_name(r.windows_rule.rule)},
                  {"spec", analysis::windows_text(r.windows_rule)},
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
                                                  const std::string& note, const std::vector<std::string>& warnings,
                                                  const HybridEfficiency* hybrid) {
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
  file(kJson, [&](std::ostream& os) { os << output::json_text(timeresolved_json(*r, note, warnings, hybrid)) << '\n'; });
  return written;
}

void print_timeresolved_summary(const TimeResolvedResult& r, const std::string& note,
                                const std::vector<std::string>& warnings, std::ostream& out,
                                const HybridEfficiency* hybrid) {
  const auto pct = [](double f) { return fmt::format("{:.2f} %", 100 * f); };
  for (const auto& w : warnings) out << "warning         " << w << "\n";
  out << fmt::format("conventions     {} — span: {}; useful: {}; {} units\n", analysis::convention_name(r.convention),
                     analysis::convention_span_text(r.convention), analysis::convention_useful_text(r.convention),
                     r.units);
  if (r.cut.any()) {
    const double run = r.run_t1 - r.run_t0;
    out << fmt::format("cut             {} — {:.2f} % of the run's {:.6g} s\n", cut_text(r.cut),
                       run > 0 ? 100 * r.elapsed / run : 0.0, run);
  }
  out << fmt::format("efficiency      PE {} = LB {} × CommE {} (SerE {} × TrfE {}); T {:.6g} s, T_ideal {:.6g} s ({})\n",
                     pct(r.eff.pe), pct(r.eff.lb), pct(r.eff.comm_e), pct(r.eff.ser_e), pct(r.eff.trf_e), r.elapsed,
                     r.ideal, estimate_title(r.source));
  for (const auto& e : r.estimates)
    out << fmt::format("  ideal ({:<31}) T_ideal {:.6g} s: SerE {}, TrfE {}\n", estimate_title(e.source), e.t_ideal,
                       pct(e.ser_e), pct(e.trf_e));
  if (hybrid != nullptr && hybrid->hybrid) {
    const auto& h = *hybrid;
    out << fmt::format("  hybrid        PE {} = MPI PE {} (LB {} × CommE {}) × OpenMP PE {} (LB {} × CommE {})\n",
                       pct(h.hybrid_pe), pct(h.mpi.pe), pct(h.mpi.lb), pct(h.mpi.comm_e), pct(h.omp.pe), pct(h.omp.lb),
                       pct(h.omp.comm_e));
    if (h.talp)
      out << fmt::format("  OpenMP PE     {} = serialisation {} × load balance {} × scheduling {} (DLB TALP's split)\n",
                         pct(h.omp.pe), pct(h.omp_serialisation), pct(h.omp_load_balance), pct(h.omp_scheduling));
  }
  const auto& c = r.counters;
  if (c.instructions && c.cycles)
    out << fmt::format("  counters      IPC {:.4g} ({:.6g} instructions, {:.6g} cycles in useful time), {:.4g} GHz\n",
                       c.ipc, c.useful_instructions, c.useful_cycles, c.frequency_hz / 1e9);
  if (!r.windows.empty()) {
    const auto& w = r.windows[lowest(r)];
    const auto& rule = r.windows_rule;
    const std::string how = rule.rule == analysis::WindowRule::Count   ? std::string("equal")
                            : rule.rule == analysis::WindowRule::Fixed ? analysis::windows_text(rule) + " each"
                                                                       : fmt::format("adaptive, ≥ {} events per rank, from {} base windows",
                                                                                     r.min_events, rule.count);
    out << fmt::format("  {} windows ({}); lowest PE {} in {:.6g}–{:.6g} s (CommE {}, LB {})\n", r.windows.size(), how,
                       pct(w.eff.pe), w.start, w.end, pct(w.eff.comm_e), pct(w.eff.lb));
  }
  if (!note.empty()) out << "  " << note << "\n";
}

}  // namespace waitlab::analysis
