// waitlab::models — perturbations: imbalance, one-off delays and OS noise.
//
// Promise: perturbations act on compute actions only and record what they add.
// The engine asks, for every compute interval of rank r in program order, how long it
// really takes given its nominal duration and the simulated time it starts at; the
// answer splits the added time by cause. Order: imbalance scales the nominal work,
// one-off delays add their duration, then noise stretches the interval [t, t+d) on the
// host's timeline by every detour that falls in it (a detour already running at t
// counts with its remaining part; detours while the rank waits in MPI are absorbed).
// Deterministic for a seed: every draw comes from a generator seeded by (seed, rank or
// node, purpose). No global state: per-rank state lives in the RankPerturber.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "analysis/trace/trace.hpp"
#include "models/platform.hpp"
#include "models/spec.hpp"

namespace waitlab::models {

using trace::Rank;  // as in models/action.hpp; this header must compile on its own

// What a perturbation model may know about the run.
struct ModelContext {
  int ranks = 0;
  int iterations = 0;                           // workload iterations (0 = not known: not checked)
  std::vector<int> grid;                        // workload process grid (product == ranks)
  std::vector<Slot> placement;                  // rank -> node/socket/core
  const trace::Definitions* regions = nullptr;  // workload user regions (names)
  std::uint64_t seed = 0;
};

// One compute interval as the engine sees it.
struct ComputeInterval {
  Rank rank = 0;
  std::int32_t iteration = -1;
  trace::RegionId region = 0;
  double start = 0;    // simulated time the interval starts
  double nominal = 0;  // seconds the workload asked for
};

struct Perturbed {
  double duration = 0;                                // seconds the interval really takes
  std::array<double, trace::kCauseCount> injected{};  // duration - nominal, split by cause
};

// Per-rank effect of one perturbation model; called for each compute interval in order.
class RankEffect {
 public:
  virtual ~RankEffect() = default;
  // `duration` is the interval's duration after the models applied before this one.
  virtual double apply(const ComputeInterval& c, double duration) = 0;
};

class Perturbation {
 public:
  virtual ~Perturbation() = default;
  virtual trace::Cause cause() const = 0;
  virtual std::string describe() const = 0;
  virtual std::unique_ptr<RankEffect> for_rank(Rank r) const = 0;
};

// All perturbations of a run, applied in the order imbalance, delay, noise.
class RankPerturber {
 public:
  Perturbed apply(const ComputeInterval& c);
  std::vector<std::pair<trace::Cause, std::unique_ptr<RankEffect>>> effects;
};

class Perturbations {
 public:
  void add(std::unique_ptr<Perturbation> p);
  bool empty() const { return models_.empty(); }
  const std::vector<std::unique_ptr<Perturbation>>& models() const { return models_; }
  std::unique_ptr<RankPerturber> for_rank(Rank r) const;

 private:
  std::vector<std::unique_ptr<Perturbation>> models_;
};

using PerturbationFactory = std::function<std::unique_ptr<Perturbation>(const Options&, const ModelContext&)>;

struct PerturbationEntry {
  Spec spec;
  PerturbationFactory make;
  trace::Cause cause = trace::Cause::Imbalance;  // what its models inject (what-if variants remove by cause)
};

// imbalance models (uniform, gradient, hotspot, slow_group, periodic_region), delay,
// noise models (periodic_noise, random_noise), in registration order.
const std::vector<PerturbationEntry>& perturbation_models();
const PerturbationEntry* find_perturbation(std::string_view name);
std::unique_ptr<Perturbation> make_perturbation(const std::string& type, const Options& opts,
                                                const ModelContext& ctx);

}  // namespace waitlab::models
