// The catalogue of perturbation models and what the model files share (models/perturbation_models.hpp).
#include "models/perturbation_models.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "util/units.hpp"

namespace waitlab::models {

const std::vector<PerturbationEntry>& perturbation_models() {
  // Built once on first use, immutable afterwards.
  static const std::vector<PerturbationEntry> entries = [] {
    std::vector<PerturbationEntry> e;
    const auto add = [&e](void (*models)(std::vector<PerturbationEntry>&), trace::Cause cause) {
      const std::size_t first = e.size();
      models(e);
      for (std::size_t i = first; i < e.size(); ++i) e[i].cause = cause;
    };
    add(perturb::add_imbalance_models, trace::Cause::Imbalance);
    add(perturb::add_delay_model, trace::Cause::Delay);
    add(perturb::add_noise_models, trace::Cause::Noise);
    return e;
  }();
  return entries;
}

const PerturbationEntry* find_perturbation(std::string_view name) {
  for (const auto& e : perturbation_models())
    if (e.spec.name == name) return &e;
  return nullptr;
}

std::unique_ptr<Perturbation> make_perturbation(const std::string& type, const Options& opts,
                                                const ModelContext& ctx) {
  const auto* e = find_perturbation(type);
  if (!e) {
    std::vector<std::string> names;
    for (const auto& p : perturbation_models()) names.push_back(p.spec.name);
    throw InputError(unknown_model_message(SpecKind::Perturbation, type, names, opts.context()));
  }
  return e->make(opts, ctx);
}

// ---- helpers shared by the model files ----
namespace perturb {

OptionSpec region_option() {
  return text_option("region",
                     "only compute intervals inside this user region of the workload (e.g. compute, fixup); "
                     "default: every compute interval",
                     true);
}

OptionSpec stream_option() {
  return quantity_option("stream", units::Quantity::Integer, "0",
                         "index of the random stream; give two otherwise identical models different streams "
                         "so that their draws differ");
}

double Reader::factor(std::string_view name) const {
  const double v = number(name);
  if (!std::isfinite(v) || v < 1)
    fail(name, "must be a slowdown factor >= 1 (1.1 = 10% slower), got " + shown(v));
  return v;
}

std::vector<Rank> Reader::ranks(std::string_view name) const {
  std::vector<Rank> out;
  for (const auto v : list(name)) {
    if (v < 0 || v >= ctx_.ranks)
      fail(name, "rank " + std::to_string(v) + " does not exist (the run has ranks 0.." +
                     std::to_string(ctx_.ranks - 1) + ")");
    out.push_back(static_cast<Rank>(v));
  }
  return out;
}

std::optional<trace::RegionId> Reader::region() const {
  if (!has("region")) return std::nullopt;
  const std::string& name = choice("region");
  std::vector<std::string> names;
  if (ctx_.regions) {
    for (std::size_t i = 0; i < ctx_.regions->regions.size(); ++i) {
      const auto& r = ctx_.regions->regions[i];
      if (r.op != trace::MpiOp::None) continue;
      if (r.name == name) return static_cast<trace::RegionId>(i);
      names.push_back(r.name);
    }
  }
  std::string what = "'" + name + "' is not a region of the workload";
  const auto hint = did_you_mean(name, names);
  if (!hint.empty()) what += "; did you mean '" + hint + "'?";
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  what += " (regions: " + (list.empty() ? std::string("none") : list) + ")";
  fail("region", what);
}

std::uint64_t Reader::stream() const {
  return static_cast<std::uint64_t>(integer("stream", 0, std::numeric_limits<std::int32_t>::max()));
}

std::vector<int> Reader::grid() const {
  std::vector<int> g = ctx_.grid.empty() ? std::vector<int>{ctx_.ranks} : ctx_.grid;
  std::int64_t product = 1;
  for (int d : g) product *= d;
  if (product != ctx_.ranks)
    throw std::logic_error("perturbation " + model() + ": the process grid does not hold exactly " +
                           std::to_string(ctx_.ranks) + " ranks");
  return g;
}

std::vector<int> Reader::coords(std::string_view name, const std::vector<int>& grid) const {
  const auto& v = list(name);
  std::string shape;
  for (int d : grid) shape += (shape.empty() ? "" : " x ") + std::to_string(d);
  if (v.size() != grid.size())
    fail(name, "needs " + std::to_string(grid.size()) +
                   " coordinate(s), one per dimension of the process grid " + shape + ", got " +
                   std::to_string(v.size()));
  std::vector<int> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i] >= grid[i])
      fail(name, "coordinate " + std::to_string(v[i]) + " of dimension " + std::to_string(i) +
                     " is outside the process grid " + shape);
    out.push_back(static_cast<int>(v[i]));
  }
  return out;
}

std::string show(double value, units::Quantity q) {
  return units::format(value, q);
}

}  // namespace perturb

}  // namespace waitlab::models
