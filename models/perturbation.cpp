#include "models/perturbation.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "util/error.hpp"

namespace waitlab::models {

namespace {

// Position of a cause in the application order imbalance -> delay -> noise: imbalance
// scales the nominal work, a delay adds to it, and noise stretches the result on the
// host's timeline (it must see the final amount of work to know which detours it meets).
int order(trace::Cause c) {
  switch (c) {
    case trace::Cause::Imbalance:
      return 0;
    case trace::Cause::Delay:
      return 1;
    case trace::Cause::Noise:
      return 2;
    case trace::Cause::Count_:
      break;
  }
  return 3;
}

}  // namespace

Perturbed RankPerturber::apply(const ComputeInterval& c) {
  Perturbed out;
  double d = c.nominal;
  for (auto& [cause, effect] : effects) {
    const double before = d;
    d = effect->apply(c, d);
    out.injected[static_cast<std::size_t>(cause)] += d - before;
  }
  out.duration = d;
  return out;
}

void Perturbations::add(std::unique_ptr<Perturbation> p) {
  // Keep models sorted by application order; models of one cause stay in the order added.
  const auto pos = std::upper_bound(models_.begin(), models_.end(), p, [](const auto& a, const auto& b) {
    return order(a->cause()) < order(b->cause());
  });
  models_.insert(pos, std::move(p));
}

std::unique_ptr<RankPerturber> Perturbations::for_rank(Rank r) const {
  auto rp = std::make_unique<RankPerturber>();
  rp->effects.reserve(models_.size());
  for (const auto& m : models_) rp->effects.emplace_back(m->cause(), m->for_rank(r));
  return rp;
}

}  // namespace waitlab::models
