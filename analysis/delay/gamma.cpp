// Pass 3 of the delay replay (replay.hpp): γ_long propagated backwards in the serial key order.
//
// A point S (waiting rank r, delaying rank d) is applied on d's process: γ_long(S), the long-term
// cost its wait carries, goes to d's wait states inside I_S. γ_long(S) is final for this pass once
// r's process has applied every point of its own with a larger key (those are the only ones that
// add to it before S in the serial order), so r's process sends it then; d's process applies its
// points in descending key order, waiting for each one's γ. The globally largest unapplied point
// can always be applied — its γ needs only larger keys — so the replay never deadlocks, and every
// addition happens in the serial order: the serial bits, anomalies included.
#include <algorithm>
#include <unordered_map>

#include "analysis/delay/replay.hpp"
#include "analysis/engine/bytes.hpp"

namespace waitlab::analysis::delay_replay {

namespace {

struct GammaParcelRecord {
  Rank r;
  std::uint32_t call;
  Kinds gamma;
};

// One step of the replay: send the γ of an owned waiter point, or apply an owned delayer point.
struct Step {
  GammaKey key;
  bool send;  // at equal keys (the same point, both ranks here) the send comes first
  std::uint32_t index;
};

}  // namespace

void Replay::propagate_gamma(std::vector<std::pair<GammaKey, double>>& unattributed) {
  const auto& inst = w_.instances;
  std::vector<Step> steps;
  steps.reserve(pts_.size() + dpts_.size());
  for (std::uint32_t j = 0; j < pts_.size(); ++j) {
    const WaitState& x = inst[pts_[j].instance];
    steps.push_back(Step{GammaKey{pts_[j].cause_enter, pts_[j].wait_enter, x.rank, x.call}, true, j});
  }
  for (std::uint32_t j = 0; j < dpts_.size(); ++j) steps.push_back(Step{dpts_[j].key(), false, j});
  std::sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) {
    if (a.key.tie() != b.key.tie()) return a.key.later_than(b.key);
    return a.send && !b.send;
  });
  std::unordered_map<std::uint64_t, Kinds> arrived;  // γ of the points to apply here, by (rank, call)
  const auto id = [](Rank r, std::uint32_t call) { return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(r)) << 32) | call; };
  const auto take = [&](const engine::Parcel& parcel) {
    engine::ByteReader in(parcel.bytes);
    while (!in.done()) {
      const auto rec = in.get<GammaParcelRecord>();
      arrived[id(rec.r, rec.call)] = rec.gamma;
    }
  };
  for (const Step& step : steps) {
    if (step.send) {
      const WaiterPoint& pt = pts_[step.index];
      const WaitState& x = inst[pt.instance];
      const GammaParcelRecord rec{x.rank, x.call, gamma_[pt.instance]};
      const int owner = shard_.partition.owner(x.cause_rank);
      if (owner == transport_.self()) arrived[id(x.rank, x.call)] = rec.gamma;
      else transport_.post(owner, kGammaChannel, engine::encode(rec));
      continue;
    }
    const DelayerPoint& dp = dpts_[step.index];
    auto it = arrived.find(id(dp.r, dp.call));
    while (it == arrived.end()) {
      transport_.flush();
      take(transport_.receive(kGammaChannel));
      it = arrived.find(id(dp.r, dp.call));
    }
    const Kinds g = it->second;
    arrived.erase(it);
    double g_total = 0;
    for (double v : g) g_total += v;
    if (dp.s == 0) {
      if (g_total != 0) unattributed.emplace_back(dp.key(), g_total);
      continue;
    }
    const auto kind = static_cast<std::size_t>(delay_kind(dp.pattern));
    for (std::uint32_t k = dp.waits_first; k < dp.waits_end; ++k) {
      if (!charged(inst[k])) continue;
      const double share = dp.s * inst[k].seconds;
      const double share_long = dp.capped() ? dp.s_long * inst[k].seconds : share;
      for (std::size_t c = 0; c < kDelayKindCount; ++c) gamma_[k][c] += g[c] * share_long;
      gamma_[k][kind] += dp.w * share;
      propagated_[k] += dp.w * share;
    }
  }
  transport_.flush();
}

}  // namespace waitlab::analysis::delay_replay
