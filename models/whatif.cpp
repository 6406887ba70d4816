#include "models/whatif.hpp"

#include <algorithm>
#include <limits>

#include "util/error.hpp"

namespace waitlab::models {

namespace {

trace::RegionId find_region(const Workload& w, const std::string& name, const std::string& where) {
  const auto& regions = w.definitions().regions;
  std::vector<std::string> names;
  for (std::size_t i = 0; i < regions.size(); ++i) {
    if (regions[i].name == name) return static_cast<trace::RegionId>(i);
    names.push_back(regions[i].name);
  }
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  throw InputError(where + ": workload '" + w.name() + "' has no region '" + name + "' (its regions: " + list +
                   ")");
}

// Per rank and region, the factor every compute action gets.
class ChangedWorkload : public Workload {
 public:
  ChangedWorkload(std::unique_ptr<Workload> base, std::vector<std::vector<double>> factors)
      : base_(std::move(base)), factors_(std::move(factors)) {}

  std::string name() const override { return base_->name(); }
  int ranks() const override { return base_->ranks(); }
  int iterations() const override { return base_->iterations(); }
  const trace::Definitions& definitions() const override { return base_->definitions(); }
  std::vector<int> grid() const override { return base_->grid(); }
  std::unique_ptr<ActionStream> stream(Rank r) const override {
    return std::make_unique<Stream>(base_->stream(r), factors_[static_cast<std::size_t>(r)]);
  }
  const Counts* counts(std::uint32_t id) const override { return base_->counts(id); }

 private:
  class Stream : public ActionStream {
   public:
    Stream(std::unique_ptr<ActionStream> base, const std::vector<double>& factors)
        : base_(std::move(base)), factors_(factors) {}
    bool next(Action& a) override {
      if (!base_->next(a)) return false;
      if (a.kind == ActionKind::Compute && a.region < factors_.size()) a.amount *= factors_[a.region];
      return true;
    }
    double done() const override { return base_->done(); }

   private:
    std::unique_ptr<ActionStream> base_;
    const std::vector<double>& factors_;
  };

  std::unique_ptr<Workload> base_;
  std::vector<std::vector<double>> factors_;  // [rank][region]
};

}  // namespace

std::vector<std::vector<double>> region_work(const Workload& w, const Perturbations& perturbations, double speed) {
  std::vector<std::vector<double>> work(static_cast<std::size_t>(w.ranks()),
                                        std::vector<double>(w.definitions().regions.size(), 0.0));
  for (Rank r = 0; r < w.ranks(); ++r) {
    auto perturber = perturbations.for_rank(r);
    // Only the imbalance models scale the work; delays and noise are not the region's work.
    std::erase_if(perturber->effects, [](const auto& e) { return e.first != trace::Cause::Imbalance; });
    auto stream = w.stream(r);
    auto& mine = work[static_cast<std::size_t>(r)];
    Action a;
    while (stream->next(a)) {
      if (a.kind != ActionKind::Compute) continue;
      ComputeInterval c;
      c.rank = r;
      c.iteration = a.iteration;
      c.region = a.region;
      c.nominal = a.flops ? a.amount / speed : a.amount;
      // Every model sees every interval in program order, as in the engine, so that models
      // with per-rank state (random draws) give the same numbers.
      const double d = perturber->apply(c).duration;
      if (a.region < mine.size()) mine[a.region] += d;
    }
  }
  return work;
}

std::unique_ptr<Workload> change_workload(std::unique_ptr<Workload> base, const WorkloadChange& change,
                                          const Perturbations& perturbations, double speed,
                                          const std::string& where) {
  if (change.empty()) return base;
  const auto ranks = static_cast<std::size_t>(base->ranks());
  const auto& regions = base->definitions().regions;
  std::vector<std::vector<double>> factors(ranks, std::vector<double>(regions.size(), 1.0));
  for (const auto& s : change.scales) {
    if (!s.region.empty()) (void)find_region(*base, s.region, where);
    if (s.last >= base->ranks())
      throw InputError(where + ": compute scale names rank " + std::to_string(s.last) + " but the workload has " +
                       std::to_string(base->ranks()) + " ranks");
    for (std::size_t r = 0; r < ranks; ++r)
      for (std::size_t g = 0; g < regions.size(); ++g)
        if (s.applies(regions[g].name, static_cast<Rank>(r))) factors[r][g] *= s.factor;
  }
  std::vector<std::vector<double>> all_work;  // [rank][region], measured once for every rebalanced region
  if (!change.rebalance.empty()) all_work = region_work(*base, perturbations, speed);
  for (const auto& b : change.rebalance) {
    const trace::RegionId g = find_region(*base, b.region, where);
    // Imbalance models scale the work, so a scale applied above scales the region's work too.
    std::vector<double> work(ranks);
    for (std::size_t r = 0; r < ranks; ++r) work[r] = all_work[r][g] * factors[r][g];
    double sum = 0, lowest = std::numeric_limits<double>::infinity();
    std::size_t working = 0;
    for (double w : work)
      if (w > 0) {
        sum += w;
        lowest = std::min(lowest, w);
        ++working;
      }
    if (working == 0) throw InputError(where + ": no rank computes in region '" + b.region + "'; nothing to rebalance");
    const double target = b.target == RegionRebalance::Target::Mean ? sum / static_cast<double>(working) : lowest;
    for (std::size_t r = 0; r < ranks; ++r)
      if (work[r] > 0) factors[r][g] *= target / work[r];
  }
  return std::make_unique<ChangedWorkload>(std::move(base), std::move(factors));
}

}  // namespace waitlab::models
