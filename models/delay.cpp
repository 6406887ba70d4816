// One-off delays: a fixed extra time on one rank in one iteration.
#include <limits>

#include "models/perturbation_models.hpp"

namespace waitlab::models::perturb {

namespace {

using units::Quantity;

// Adds the delay to the first matching compute interval, then never again.
class DelayEffect final : public RankEffect {
 public:
  DelayEffect(std::int64_t iteration, std::optional<trace::RegionId> region, double duration)
      : iteration_(iteration), region_(region), duration_(duration) {}
  double apply(const ComputeInterval& c, double duration) override {
    if (done_ || c.iteration != iteration_ || (region_ && c.region != *region_)) return duration;
    done_ = true;
    return duration + duration_;
  }

 private:
  std::int64_t iteration_;
  std::optional<trace::RegionId> region_;
  double duration_;
  bool done_ = false;
};

// Other ranks: nothing to do.
class NoEffect final : public RankEffect {
 public:
  double apply(const ComputeInterval&, double duration) override { return duration; }
};

class Delay final : public Perturbation {
 public:
  Delay(std::string text, Rank rank, std::int64_t iteration, std::optional<trace::RegionId> region,
        double duration)
      : text_(std::move(text)), rank_(rank), iteration_(iteration), region_(region), duration_(duration) {}
  trace::Cause cause() const override { return trace::Cause::Delay; }
  std::string describe() const override { return text_; }
  std::unique_ptr<RankEffect> for_rank(Rank r) const override {
    if (r != rank_) return std::make_unique<NoEffect>();
    return std::make_unique<DelayEffect>(iteration_, region_, duration_);
  }

 private:
  std::string text_;
  Rank rank_;
  std::int64_t iteration_;
  std::optional<trace::RegionId> region_;
  double duration_;
};

std::unique_ptr<Perturbation> make_delay(const Options& o, const ModelContext& ctx) {
  const Reader rd(o, ctx, "delay");
  if (ctx.ranks < 1) rd.fail("rank", "the run has no ranks");
  const auto rank = static_cast<Rank>(rd.integer("rank", 0, ctx.ranks - 1));
  const auto iteration = rd.integer("iteration", 0, std::numeric_limits<std::int32_t>::max());
  // A delay in an iteration the workload does not have would inject nothing, silently.
  if (ctx.iterations > 0 && iteration >= ctx.iterations)
    rd.fail("iteration", "iteration " + std::to_string(iteration) + " does not exist (the workload has iterations 0.." +
                             std::to_string(ctx.iterations - 1) + ")");
  const double duration = rd.non_negative("duration");
  const auto region = rd.region();
  std::string text = "delay: " + show(duration, Quantity::Duration) + " added to the first compute interval" +
                     (region ? " in region " + rd.choice("region") : std::string()) + " of rank " +
                     std::to_string(rank) + " in iteration " + std::to_string(iteration);
  return std::make_unique<Delay>(std::move(text), rank, iteration, region, duration);
}

}  // namespace

void add_delay_model(std::vector<PerturbationEntry>& out) {
  out.push_back(
      {make_spec(
           SpecKind::Perturbation, "delay",
           "A one-off delay: `duration` is added once, to the first compute interval of `rank` in "
           "`iteration` (in `region`, if given). Give several delay entries for several delays.",
           {quantity_option("rank", Quantity::Integer, "", "the delayed rank"),
            quantity_option("iteration", Quantity::Integer, "", "the workload iteration (0-based)"),
            quantity_option("duration", Quantity::Duration, "", "the extra compute time"), region_option()}),
       make_delay});
}

}  // namespace waitlab::models::perturb
