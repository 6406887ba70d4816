// OS noise: detours on the host's timeline that stretch the compute intervals they fall in.
//
// Each rank (scope rank) or node (scope node) has a timeline of detours — non-overlapping
// intervals during which the CPU does no work for the application — generated lazily in
// increasing time order from Rng(seed, key, purpose). All ranks of a node regenerate the
// same node timeline independently, so they share it without sharing mutable state.
#include <cmath>
#include <deque>
#include <limits>

#include "models/perturbation_models.hpp"
#include "models/rng.hpp"

namespace waitlab::models::perturb {

namespace {

using units::Quantity;

struct Detour {
  double start = 0;
  double end = 0;
};

// A lazy, increasing, non-overlapping sequence of detours.
class Timeline {
 public:
  virtual ~Timeline() = default;
  virtual Detour next() = 0;
  // The first not yet returned detour that ends after t (earlier ones are skipped).
  virtual Detour next_after(double t) {
    for (;;) {
      const Detour d = next();
      if (d.end > t) return d;
    }
  }
};

class PeriodicTimeline final : public Timeline {
 public:
  PeriodicTimeline(double frequency, double duration, double phase)
      : frequency_(frequency), duration_(duration), phase_(phase) {}
  Detour next() override { return at(k_++); }
  Detour next_after(double t) override {
    // Jump over long gaps (a rank waiting in MPI for seconds) in O(1).
    const double guess = std::floor((t - phase_ - duration_) * frequency_);
    if (guess > static_cast<double>(k_)) k_ = static_cast<std::int64_t>(guess);
    for (;;) {
      const Detour d = at(k_++);
      if (d.end > t) return d;
    }
  }

 private:
  // k / f rather than a running sum: no drift over millions of periods.
  Detour at(std::int64_t k) const {
    const double s = phase_ + static_cast<double>(k) / frequency_;
    return {s, s + duration_};
  }
  double frequency_, duration_, phase_;
  // From k = -1: with a phase above 1/f - duration, detour -1 is still running at t = 0.
  std::int64_t k_ = -1;
};

enum class Law { Fixed, Exponential, Pareto };

class RandomTimeline final : public Timeline {
 public:
  RandomTimeline(Rng rng, double mean_interval, Law law, double duration, double shape)
      : rng_(rng), mean_interval_(mean_interval), law_(law), duration_(duration), shape_(shape) {}
  Detour next() override {
    arrival_ += rng_.exponential(mean_interval_);
    double length = duration_;
    if (law_ == Law::Exponential) length = rng_.exponential(duration_);
    if (law_ == Law::Pareto) length = rng_.pareto(duration_, shape_);
    // A detour that arrives while the previous one still runs waits for it (the CPU is
    // stolen once, not twice): detours never overlap.
    const double start = std::max(arrival_, busy_until_);
    busy_until_ = start + length;
    return {start, busy_until_};
  }

 private:
  Rng rng_;
  double mean_interval_;
  Law law_;
  double duration_, shape_;
  double arrival_ = 0, busy_until_ = 0;
};

// The stretch rule of models/perturbation.hpp on one timeline.
class NoiseEffect final : public RankEffect {
 public:
  explicit NoiseEffect(std::unique_ptr<Timeline> t) : timeline_(std::move(t)) {}
  double apply(const ComputeInterval& c, double duration) override {
    if (!(duration > 0)) return duration;  // no work, nothing to stretch
    const double t = c.start;
    // Forget detours that ended by t (intervals of a rank come in increasing start order).
    while (!pending_.empty() && pending_.front().end <= t) pending_.pop_front();
    if (pending_.empty()) pending_.push_back(timeline_->next_after(t));
    double stolen = 0;
    for (std::size_t i = 0;; ++i) {
      if (i == pending_.size()) pending_.push_back(timeline_->next());
      const Detour& d = pending_[i];
      if (d.start >= t + duration + stolen) break;  // starts after the (stretched) end
      stolen += d.end - std::max(d.start, t);       // a detour running at t counts with its rest
    }
    return duration + stolen;
  }

 private:
  std::unique_ptr<Timeline> timeline_;
  std::deque<Detour> pending_;  // generated, not yet ended before the last interval's start
};

// Key of the timeline of rank r: the rank or its node.
struct Scope {
  bool node = false;
  std::vector<int> node_of;  // rank -> node when node
  std::uint64_t key(Rank r) const {
    return static_cast<std::uint64_t>(node ? node_of[static_cast<std::size_t>(r)] : r);
  }
};

Scope read_scope(const Reader& rd) {
  Scope s;
  s.node = rd.choice("scope") == "node";
  if (s.node) {
    const auto& ctx = rd.context();
    if (ctx.placement.size() != static_cast<std::size_t>(ctx.ranks))
      rd.fail("scope", "'node' needs the platform's rank placement, which is not known here");
    for (const auto& slot : ctx.placement) s.node_of.push_back(slot.node);
  }
  return s;
}

class Noise final : public Perturbation {
 public:
  using Make = std::function<std::unique_ptr<Timeline>(std::uint64_t key)>;
  Noise(std::string text, Scope scope, Make make)
      : text_(std::move(text)), scope_(std::move(scope)), make_(std::move(make)) {}
  trace::Cause cause() const override { return trace::Cause::Noise; }
  std::string describe() const override { return text_; }
  std::unique_ptr<RankEffect> for_rank(Rank r) const override {
    return std::make_unique<NoiseEffect>(make_(scope_.key(r)));
  }

 private:
  std::string text_;
  Scope scope_;
  Make make_;
};

std::string pct(double fraction) {
  return show(fraction, Quantity::Percent);
}

// Detours come at most this often (1 MHz, one per microsecond): every detour inside a compute
// interval is visited, so 1 THz of zero-length detours would hang the run in the noise model.
// OS noise is in the Hz to kHz range.
constexpr double kMaxDetourRate = 1e6;
constexpr double kDefaultParetoShape = 2.5;  // the shape when a pareto random_noise gives none

double detour_rate(const Reader& rd, std::string_view name) {
  const double f = rd.positive(name, Quantity::Frequency);
  if (f > kMaxDetourRate)
    rd.fail(name, "must be at most 1MHz (one detour per microsecond), got " + show(f, Quantity::Frequency));
  return f;
}

// ---- periodic_noise ----
std::unique_ptr<Perturbation> make_periodic(const Options& o, const ModelContext& ctx) {
  const Reader rd(o, ctx, "periodic_noise");
  const double f = detour_rate(rd, "frequency");
  const double dur = rd.non_negative("duration");
  if (dur * f >= 1)
    rd.fail("duration", show(dur, Quantity::Duration) + " is not shorter than the period " +
                            show(1 / f, Quantity::Duration) + " (1/frequency): the CPU would never run");
  const bool random_phase = rd.choice("phase") == "random";
  const auto stream = rd.stream();
  auto scope = read_scope(rd);
  const std::uint64_t seed = ctx.seed;
  std::string text = "periodic_noise: " + show(dur, Quantity::Duration) + " every " +
                     show(1 / f, Quantity::Duration) + " (" + pct(dur * f) + " of the CPU) per " +
                     (scope.node ? "node" : "rank") + ", " + (random_phase ? "random phase" : "phase 0");
  return std::make_unique<Noise>(std::move(text), std::move(scope), [=](std::uint64_t key) {
    double phase = 0;
    if (random_phase) phase = Rng(seed, stream_key(key, stream), Purpose::PeriodicNoise).uniform() / f;
    return std::make_unique<PeriodicTimeline>(f, dur, phase);
  });
}

// ---- random_noise ----
std::unique_ptr<Perturbation> make_random(const Options& o, const ModelContext& ctx) {
  const Reader rd(o, ctx, "random_noise");
  if (rd.has("rate") == rd.has("interval"))
    rd.fail("rate", rd.has("rate") ? "conflicts with 'interval' (both give the arrival rate): give only one"
                                   : "is required (or 'interval', the mean time between detours)");
  const double interval = rd.has("rate") ? 1 / detour_rate(rd, "rate") : rd.positive("interval", Quantity::Duration);
  if (interval < 1 / kMaxDetourRate)
    rd.fail("interval", "must be at least 1us (at most one detour per microsecond), got " +
                            show(interval, Quantity::Duration));
  const double dur = rd.non_negative("duration");
  const std::string& law_name = rd.choice("distribution");
  const Law law = law_name == "exponential" ? Law::Exponential
                  : law_name == "pareto"    ? Law::Pareto
                                            : Law::Fixed;
  // `shape` belongs to the Pareto law only: given with another law it would do nothing.
  double shape = 0;
  double mean = dur;
  if (law != Law::Pareto && rd.has("shape"))
    rd.fail("shape", "belongs to the pareto distribution only (this one is " + law_name +
                         "): remove it, or set distribution: pareto");
  if (law == Law::Pareto) {
    shape = rd.has("shape") ? rd.positive("shape") : kDefaultParetoShape;
    if (shape <= 1) rd.fail("shape", "must be greater than 1 (the mean detour is infinite otherwise)");
    mean = shape * dur / (shape - 1);
  }
  if (mean >= interval)
    rd.fail("duration", "the mean detour " + show(mean, Quantity::Duration) +
                            " is not shorter than the mean time " + show(interval, Quantity::Duration) +
                            " between detours: the CPU would never run");
  const auto stream = rd.stream();
  auto scope = read_scope(rd);
  const std::uint64_t seed = ctx.seed;
  std::string text = "random_noise: detours at exponential intervals of mean " +
                     show(interval, Quantity::Duration) + ", " + law_name + " durations " +
                     (law == Law::Pareto ? "(minimum " + show(dur, Quantity::Duration) + ", shape " +
                                               show(shape, Quantity::Number) + ", mean " +
                                               show(mean, Quantity::Duration) + ")"
                                         : "of mean " + show(dur, Quantity::Duration)) +
                     " (" + pct(mean / interval) + " of the CPU) per " + (scope.node ? "node" : "rank");
  return std::make_unique<Noise>(std::move(text), std::move(scope), [=](std::uint64_t key) {
    return std::make_unique<RandomTimeline>(Rng(seed, stream_key(key, stream), Purpose::RandomNoise),
                                            interval, law, dur, shape);
  });
}

}  // namespace

void add_noise_models(std::vector<PerturbationEntry>& out) {
  const auto scope = [] {
    return choice_option("scope", {"rank", "node"}, "rank",
                         "whose timeline the detours are on: each rank's own, or one per node shared by all "
                         "ranks placed on it");
  };
  out.push_back(
      {make_spec(
           SpecKind::Perturbation, "periodic_noise",
           "Periodic OS noise (timer interrupts, daemons): a detour of `duration` every 1/`frequency` on "
           "each timeline. A compute interval [t, t+d) is stretched by every detour that falls in it; "
           "detours while the rank waits in MPI are absorbed.",
           {quantity_option("frequency", Quantity::Frequency, "", "detours per second (e.g. 1kHz)"),
            quantity_option("duration", Quantity::Duration, "", "length of each detour (e.g. 10us)"),
            choice_option("phase", {"zero", "random"}, "random",
                          "zero: detours at 0, 1/f, 2/f, ...; random: each timeline shifted by its own "
                          "uniform draw in [0, 1/f)"),
            scope(), stream_option()}),
       make_periodic});
  out.push_back(
      {make_spec(
           SpecKind::Perturbation, "random_noise",
           "Random OS noise: detours arrive at exponentially distributed intervals (a Poisson process) on "
           "each timeline, with fixed, exponential or Pareto (heavy-tailed) durations. A detour arriving "
           "during another starts when it ends. Stretch rule as periodic_noise.",
           {quantity_option("rate", Quantity::Frequency, "", "mean detours per second (or give interval)",
                            true),
            quantity_option("interval", Quantity::Duration, "",
                            "mean time between detour arrivals (or give rate)", true),
            quantity_option(
                "duration", Quantity::Duration, "",
                "detour length: the fixed length, the mean (exponential) or the minimum (pareto)"),
            choice_option("distribution", {"fixed", "exponential", "pareto"}, "fixed",
                          "law of the detour lengths"),
            quantity_option("shape", Quantity::Number, "",
                            "Pareto shape alpha > 1 (smaller = heavier tail; default 2.5); only with distribution: "
                            "pareto",
                            true),
            scope(), stream_option()}),
       make_random});
}

}  // namespace waitlab::models::perturb
