// waitlab::models::perturb — what the perturbation models are built from (internal to models/).
//
// Promise: one registration function per model file (imbalance.cpp, delay.cpp, noise.cpp),
// listed once in perturbation_models.cpp (with the catalogue and these helpers); an option reader that checks ranges and throws InputError
// naming the scenario context, the perturbation and the option; the region filter and the
// random-stream option shared by several models.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.hpp"
#include "models/perturbation.hpp"
#include "models/workload.hpp"

namespace waitlab::models::perturb {

// ---- registration ----
void add_imbalance_models(std::vector<PerturbationEntry>& out);
void add_delay_model(std::vector<PerturbationEntry>& out);
void add_noise_models(std::vector<PerturbationEntry>& out);

// ---- option specs (the generic builders are in models/spec.hpp) ----
OptionSpec region_option();  // optional `region`: restrict to compute intervals of one user region
OptionSpec stream_option();  // `stream`: selects an independent random stream (default 0)

// ---- option reader: OptionReader's range checks plus the ones that need the run's context ----
class Reader : public OptionReader {
 public:
  Reader(const Options& opts, const ModelContext& ctx, std::string model)
      : OptionReader(opts, SpecKind::Perturbation, std::move(model)), ctx_(ctx) {}

  double factor(std::string_view name) const;  // finite, >= 1 (a slowdown; see docs/models.md)
  // Every entry must be a rank of the run.
  std::vector<Rank> ranks(std::string_view name) const;
  // The `region` option resolved against the workload's regions; nullopt = every region.
  std::optional<trace::RegionId> region() const;
  // The `stream` option, mixed into random keys so that two otherwise equal models differ.
  std::uint64_t stream() const;
  // The run's process grid (ctx.grid, or {ranks} if empty), checked against ctx.ranks;
  // ranks are numbered in it by models::grid_coords (models/workload.hpp).
  std::vector<int> grid() const;
  // Grid coordinates from option `name`: one entry per grid dimension, each inside the grid.
  std::vector<int> coords(std::string_view name, const std::vector<int>& grid) const;

  const ModelContext& context() const { return ctx_; }

 private:
  const ModelContext& ctx_;
};

// Random-stream key: the rank or node id in the low 32 bits, the `stream` option above.
inline std::uint64_t stream_key(std::uint64_t id, std::uint64_t stream) {
  return (stream << 32) ^ id;
}

// Short human form of a value for describe() texts.
std::string show(double value, units::Quantity q);

}  // namespace waitlab::models::perturb
