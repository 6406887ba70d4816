#include "analysis/pop/pop.hpp"

#include <algorithm>
#include <numeric>

namespace waitlab::analysis {

std::string_view scaling_name(Scaling s) {
  return s == Scaling::Weak ? "weak" : "strong";
}

bool parse_scaling(std::string_view s, Scaling& out) {
  if (s == "strong") {
    out = Scaling::Strong;
    return true;
  }
  if (s == "weak") {
    out = Scaling::Weak;
    return true;
  }
  return false;
}

PopRun pop_run(std::string name, const TimeResolvedResult& r) {
  PopRun p;
  p.name = std::move(name);
  p.ranks = r.ranks;
  p.units = r.units;
  p.elapsed = r.elapsed;
  p.ideal = r.ideal;
  p.eff = r.eff;
  p.useful_sum = std::accumulate(r.useful.begin(), r.useful.end(), 0.0);
  p.useful_max = r.useful_max;
  p.useful_ideal_max = r.useful_ideal_max;
  if (r.counters.instructions) p.instructions = r.counters.useful_instructions;
  if (r.counters.cycles) p.cycles = r.counters.useful_cycles;
  return p;
}

namespace {

double ratio(double a, double b) {
  return b != 0 ? a / b : 0.0;
}

std::optional<double> ratio(const std::optional<double>& a, const std::optional<double>& b) {
  if (!a || !b) return std::nullopt;
  return ratio(*a, *b);
}

std::optional<double> ipc_of(const PopRun& r) {
  return ratio(r.instructions, r.cycles);
}

std::optional<double> frequency_of(const PopRun& r) {
  if (!r.cycles) return std::nullopt;
  return ratio(*r.cycles, r.useful_sum);
}

}  // namespace

PopTable pop_model(std::vector<PopRun> runs, Scaling scaling) {
  PopTable table;
  table.scaling = scaling;
  std::stable_sort(runs.begin(), runs.end(), [](const PopRun& a, const PopRun& b) { return a.units < b.units; });
  if (runs.empty()) return table;
  const PopRun& ref = runs.front();
  const auto ref_ipc = ipc_of(ref);
  const auto ref_f = frequency_of(ref);
  for (const PopRun& run : runs) {
    PopFactors f;
    f.name = run.name;
    f.ranks = run.ranks;
    f.units = run.units;
    f.elapsed = run.elapsed;
    f.ideal = run.ideal;
    f.useful_sum = run.useful_sum;
    f.useful_mean = ratio(run.useful_sum, static_cast<double>(run.units));
    f.useful_max = run.useful_max;
    f.useful_ideal_max = run.useful_ideal_max;
    f.eff = run.eff;
    // Weak scaling: the work grows with the units; the reference's, scaled, is the ideal.
    const double grow = scaling == Scaling::Weak ? ratio(static_cast<double>(run.units), static_cast<double>(ref.units))
                                                 : 1.0;
    f.comp_scal = ratio(ref.useful_sum * grow, run.useful_sum);
    f.global_e = f.eff.pe * f.comp_scal;
    f.speedup = ratio(ref.elapsed, run.elapsed);
    f.ipc = ipc_of(run);
    f.instructions = run.instructions;
    f.cycles = run.cycles;
    f.hybrid = run.hybrid;
    const auto freq = frequency_of(run);
    if (freq) f.ghz = *freq / 1e9;
    f.ipc_scal = ratio(f.ipc, ref_ipc);
    if (ref.instructions && run.instructions) f.ins_scal = ratio(*ref.instructions * grow, *run.instructions);
    f.freq_scal = ratio(freq, ref_f);
    table.runs.push_back(std::move(f));
  }
  return table;
}

}  // namespace waitlab::analysis
