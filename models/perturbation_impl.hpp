// waitlab::models::perturb — what the perturbation models are built from (internal to models/).
//
// Promise: one registration function per model file (imbalance.cpp, delay.cpp, noise.cpp),
// listed once in perturbation.cpp; option helpers that check ranges and throw InputError
// naming the scenario context, the perturbation and the option; the region filter and the
// process-grid coordinates shared by several models.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/trace/error.hpp"
#include "models/perturbation.hpp"

namespace waitlab::models::perturb {

// ---- registration ----
void add_imbalance_models(std::vector<PerturbationEntry>& out);
void add_delay_model(std::vector<PerturbationEntry>& out);
void add_noise_models(std::vector<PerturbationEntry>& out);

// ---- option specs ----
OptionSpec quantity_option(std::string name, units::Quantity q, std::string default_value,
                           std::string description, bool optional = false);
OptionSpec choice_option(std::string name, std::vector<std::string> choices, std::string default_value,
                         std::string description);
OptionSpec list_option(std::string name, std::string description);  // optional IntList
OptionSpec region_option();  // optional `region`: restrict to compute intervals of one user region
OptionSpec stream_option();  // `stream`: selects an independent random stream (default 0)

// ---- option readers: range-checked, InputError on violation ----
class Reader {
 public:
  Reader(const Options& opts, const ModelContext& ctx, std::string model)
      : opts_(opts), ctx_(ctx), model_(std::move(model)) {}

  double number(std::string_view name) const { return opts_.number(name); }
  double positive(std::string_view name) const;      // finite, > 0
  double non_negative(std::string_view name) const;  // finite, >= 0
  double factor(std::string_view name) const;        // finite, >= 1 (a slowdown; see docs/models.md)
  std::int64_t integer(std::string_view name, std::int64_t lo, std::int64_t hi) const;
  const std::string& choice(std::string_view name) const { return opts_.string(name); }
  bool has(std::string_view name) const { return opts_.has(name); }
  const std::vector<std::int64_t>& list(std::string_view name) const { return opts_.int_list(name); }
  // Every entry must be a rank of the run.
  std::vector<Rank> ranks(std::string_view name) const;
  // The `region` option resolved against the workload's regions; nullopt = every region.
  std::optional<trace::RegionId> region() const;
  // The `stream` option, mixed into random keys so that two otherwise equal models differ.
  std::uint64_t stream() const;
  // The run's process grid (ctx.grid, or {ranks} if empty), checked against ctx.ranks.
  std::vector<int> grid() const;
  // Grid coordinates from option `name`: one entry per grid dimension, each inside the grid.
  std::vector<int> coords(std::string_view name, const std::vector<int>& grid) const;

  [[noreturn]] void fail(std::string_view option, const std::string& what) const;
  const ModelContext& context() const { return ctx_; }
  const std::string& model() const { return model_; }

 private:
  const Options& opts_;
  const ModelContext& ctx_;
  std::string model_;
};

// Row-major Cartesian coordinates of rank r (the last dimension varies fastest), as the
// workloads number their grids (MPI_Cart_create).
std::vector<int> grid_coords(Rank r, const std::vector<int>& grid);

// Random-stream key: the rank or node id in the low 32 bits, the `stream` option above.
inline std::uint64_t stream_key(std::uint64_t id, std::uint64_t stream) {
  return (stream << 32) ^ id;
}

// Short human form of a value for describe() texts.
std::string show(double value, units::Quantity q);

}  // namespace waitlab::models::perturb
