// Helpers for the perturbation tests: build a model from user-written options (defaults
// from its registered spec) for a given run context, and apply it to compute intervals.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "util/error.hpp"
#include "models/perturbation.hpp"

namespace waitlab::models::testing {

using Given = std::vector<std::pair<std::string, std::string>>;

inline std::unique_ptr<Perturbation> make(const std::string& type, const Given& given,
                                          const ModelContext& ctx) {
  const auto* e = find_perturbation(type);
  if (!e) throw std::runtime_error("no perturbation " + type);
  std::vector<UserOption> user;
  for (const auto& [k, v] : given) user.push_back({k, v, "t.yaml:9:9"});
  return make_perturbation(type, make_options(e->spec, user, "t.yaml:5:3", "t.yaml:5:3"), ctx);
}

inline std::string error_of(const std::string& type, const Given& given, const ModelContext& ctx) {
  try {
    make(type, given, ctx);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

inline ComputeInterval interval(Rank r, std::int32_t iteration, trace::RegionId region, double start,
                                double nominal) {
  ComputeInterval c;
  c.rank = r;
  c.iteration = iteration;
  c.region = region;
  c.start = start;
  c.nominal = nominal;
  return c;
}

// A context with `ranks` ranks, regions "compute" (0) and "fixup" (1).
struct Context {
  trace::Definitions defs;
  ModelContext ctx;
  explicit Context(int ranks, std::vector<int> grid = {}, std::uint64_t seed = 42) {
    defs.region("compute");
    defs.region("fixup");
    ctx.ranks = ranks;
    ctx.grid = std::move(grid);
    ctx.regions = &defs;
    ctx.seed = seed;
  }
  Context(const Context&) = delete;  // ctx.regions points into this object
  Context& operator=(const Context&) = delete;
};

}  // namespace waitlab::models::testing
