// The delay replay's run (replay.hpp): the passes in order, the delaying side (pass 2), the
// classes and long-term costs (pass 4) and the totals; delay_costs of delay.hpp.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <span>
#include <tuple>

#include "analysis/delay/replay.hpp"
#include "analysis/engine/fold.hpp"
#include "analysis/engine/serial_transport.hpp"

namespace waitlab::analysis {

using trace::Matching;

namespace delay_replay {

// A wait in a collective after which every member has synchronised with every other (no rank
// leaves before the last one entered): the barrier and N-to-N kinds — Wait at Barrier, Init,
// Finalize, Wait at NxN — but not Early Scan, where a rank waits only for the lower ranks.
bool is_nxn_sync(Pattern p) {
  const DelayKind k = delay_kind(p);
  return (k == DelayKind::Barrier || k == DelayKind::NxN) && p != Pattern::EarlyScan;
}

// A wait state whose waiting is charged to its causes: every one with a delaying rank but
// Wait at Init and Wait at Finalize, for which Scalasca has no delay metric (its delay
// analysis runs at barriers, N-to-N, 1-to-N and N-to-1 collectives and messages only). Those
// two still synchronise their members: an interval can start at MPI_Init.
bool charged(const WaitState& x) {
  return has_cause(x.pattern) && x.cause_rank != trace::kNoRank && x.pattern != Pattern::WaitAtInit &&
         x.pattern != Pattern::WaitAtFinalize;
}

namespace {

constexpr std::uint64_t kClasses = 5, kFinalGamma = 6;

struct ClassRecord {
  std::uint32_t call;
  double direct, indirect;
};
struct GammaRecord {
  std::uint32_t call;
  Kinds gamma;
};

// The sums the serial passes fold point by point, in their order.
struct Pass2Sums {
  double sync_waiting = 0, unattributed = 0;
};
struct ClassSums {
  double direct = 0, indirect = 0, propagating = 0, terminal = 0;
};
struct TableTotals {
  Kinds short_total{}, long_total{};
  double short_term = 0, long_term = 0;
};

}  // namespace

Replay::Replay(const engine::Shard& shard, const trace::Matching& m, const WaitStateResult& w, engine::Transport& t)
    : shard_(shard), m_(m), w_(w), transport_(t), prof_(m.paths.size(), 0.0), mark_(m.paths.size(), 0) {
  const engine::LocationRange owned = shard.owned;
  instance_of_.resize(static_cast<std::size_t>(owned.size()));
  for (engine::Location r = owned.first; r < owned.last; ++r)
    instance_of_[static_cast<std::size_t>(r - owned.first)].assign(m.calls[static_cast<std::size_t>(r)].size(), kNone);
  for (std::uint32_t i = 0; i < m.collectives.size(); ++i) {
    const auto& c = m.collectives[i];
    for (std::uint32_t k = c.first; k < c.first + c.count; ++k)
      instance_of_[static_cast<std::size_t>(m.members[k].rank - owned.first)][m.members[k].call] = i;
  }
}

// The serial passes, now split between the two sides of each point:
//  1. per waiting rank: the previous synchronisation of the pair and its processing-time
//     profile over I_S (sparse, sent to the delaying side);
//  2. per delaying rank: its profile over I_S, Δ, the scale, the short-term costs and the
//     direct / indirect split — none of which depends on γ — and its wait states in I_S;
//  3. latest point first: γ_long[x][k] += (w·[k = kind(S)] + γ_long(S)[k])·s·x for d's wait
//     states x in I_S — per kind of the wait it finally causes (a backward replay);
//  4. long-term costs γ_long(S)[k]·s·Δ[c] under kind k, now that every γ_long is final.
DelayResult Replay::run() {
  DelayResult res;
  res.classes.assign(w_.instances.size(), WaitClass{});
  gamma_.assign(w_.instances.size(), Kinds{});
  propagated_.assign(w_.instances.size(), 0.0);
  engine::Exchange ex(transport_, shard_.partition, kDelayChannel);
  find_sync_points();
  exchange_causes(ex);
  mark_waited_collectives();
  find_previous_syncs(ex);
  waiting_side();
  send_to_delayers(ex);
  delaying_side();
  return_classes(ex);
  std::vector<std::pair<GammaKey, double>> unattributed;  // pass 3's terms, keyed by point
  pbuf_ = {};
  propagate_gamma(unattributed);
  long_term_costs(ex);
  totals(res);
  // Unattributed: pass 2's terms folded by delaying rank, then pass 3's in the backward order.
  std::size_t next = 0;  // dpts_ are sorted by delaying rank
  const Pass2Sums pass2 = engine::chained_fold(transport_, shard_.owned, Pass2Sums{}, [&](engine::Location l, Pass2Sums& a) {
    for (; next < dpts_.size() && dpts_[next].d == l; ++next) {
      const DelayerPoint& dp = dpts_[next];
      a.sync_waiting += dp.w;
      if (!(dp.denom > 0)) a.unattributed += dp.w;
      else if (dp.w > dp.denom) a.unattributed += dp.w - dp.denom;
    }
  });
  res.sync_waiting = pass2.sync_waiting;
  engine::ByteWriter mine;
  for (const auto& [key, value] : unattributed) mine.put(key).put(value);
  const std::vector<engine::Bytes> all = transport_.gather(mine.bytes());
  double total = pass2.unattributed;
  if (transport_.self() == 0) {
    std::vector<std::pair<GammaKey, double>> terms;
    for (const engine::Bytes& part : all) {
      engine::ByteReader in(part);
      while (!in.done()) {
        const auto key = in.get<GammaKey>();
        terms.emplace_back(key, in.get<double>());
      }
    }
    std::sort(terms.begin(), terms.end(), [](const auto& a, const auto& b) { return a.first.later_than(b.first); });
    for (const auto& t : terms) total += t.second;
    // Below the time resolution the sum is rounding residue of the subtractions above.
    if (std::abs(total) < kTimeResolution) total = 0;
  }
  res.unattributed = engine::decode<double>(transport_.broadcast(engine::encode(total)));
  res.sync_points = transport_.sum(pts_.size());
  return res;
}

// Pass 2: the delaying side, in (delaying rank, its call, instance) order.
void Replay::delaying_side() {
  std::vector<double> remote(m_.paths.size(), 0.0);
  for (DelayerPoint& dp : dpts_) {
    const double w = dp.w;
    const auto [lo, hi] = profile(dp.d, dp.d_prev, dp.t0, dp.cause_call, &dp.w_d);
    dp.waits_first = lo;
    dp.waits_end = hi;
    const std::span<const PathValue> p_r(pbuf_.data() + dp.p_first, dp.p_count);
    for (const PathValue& v : p_r) remote[v.path] = v.value;
    double sum_delta = 0;
    for (CallPathId c : touched_) {
      const double diff = prof_[c] - remote[c];
      prof_[c] = diff > kTimeResolution ? diff : 0.0;
      sum_delta += prof_[c];
    }
    for (const PathValue& v : p_r) remote[v.path] = 0.0;
    dp.denom = sum_delta + dp.w_d;
    if (!(dp.denom > 0)) {
      dp.s = 0;
    } else {
      // Scalasca's scale: the wait is distributed over Δ and d's waiting in proportion, but
      // never more than Δ and that waiting themselves (s·w ≤ 1); what is left of a wait
      // longer than its causes in the interval has no cause inside the trace.
      dp.s = w > dp.denom ? 1.0 / w : 1.0 / dp.denom;
      const auto kind = static_cast<std::uint8_t>(delay_kind(dp.pattern));
      dp.d_first = static_cast<std::uint32_t>(dbuf_.size());
      for (CallPathId c : touched_) {
        if (prof_[c] <= 0) continue;
        const double share = dp.s * prof_[c];
        dbuf_.push_back(PathValue{c, share});
        costs_.at(kind, c, dp.d).first += w * share;
      }
      dp.d_count = static_cast<std::uint32_t>(dbuf_.size() - dp.d_first);
    }
    clear();
  }
}

// Each point's direct / indirect split, back to its waiting rank.
void Replay::return_classes(engine::Exchange& ex) {
  for (const DelayerPoint& dp : dpts_) {
    const double indirect = dp.denom > 0 ? dp.w * dp.s * dp.w_d : 0.0;
    const double direct = dp.denom > 0 ? dp.w - indirect : dp.w;
    ex.record(dp.d, dp.r, kClasses).put(ClassRecord{dp.call, direct, indirect});
  }
  const engine::Inbox inbox = ex.deliver();
  for (engine::Location r = shard_.owned.first; r < shard_.owned.last; ++r)
    for (const engine::ExchangeRecord& rec : inbox.of(r)) {
      engine::ByteReader in(rec.payload);
      while (!in.done()) {
        const auto c = in.get<ClassRecord>();
        WaiterPoint& pt = point_of(r, c.call);
        pt.direct = c.direct;
        pt.indirect = c.indirect;
      }
    }
}

// Pass 4: long-term costs under the kind of the wait they finally cause, points in instance order.
void Replay::long_term_costs(engine::Exchange& ex) {
  for (const WaiterPoint& pt : pts_) {
    const WaitState& x = w_.instances[pt.instance];
    ex.record(x.rank, x.cause_rank, kFinalGamma).put(GammaRecord{x.call, gamma_[pt.instance]});
  }
  const engine::Inbox inbox = ex.deliver();
  std::vector<std::uint32_t> order(dpts_.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return std::tie(dpts_[a].r, dpts_[a].call) < std::tie(dpts_[b].r, dpts_[b].call);
  });
  for (engine::Location d = shard_.owned.first; d < shard_.owned.last; ++d)
    for (const engine::ExchangeRecord& rec : inbox.of(d)) {
      engine::ByteReader in(rec.payload);
      while (!in.done()) {
        const auto g = in.get<GammaRecord>();
        const auto key = std::tuple(rec.source, g.call);
        const auto it = std::lower_bound(order.begin(), order.end(), key, [&](std::uint32_t k, const auto& want) {
          return std::tuple(dpts_[k].r, dpts_[k].call) < want;
        });
        dpts_[*it].gamma = g.gamma;
      }
    }
  for (std::uint32_t j : order) {
    const DelayerPoint& dp = dpts_[j];
    for (std::size_t kind = 0; kind < kDelayKindCount; ++kind) {
      if (!(dp.gamma[kind] > 0)) continue;
      for (std::uint32_t k = dp.d_first; k < dp.d_first + dp.d_count; ++k)
        costs_.at(static_cast<std::uint8_t>(kind), dbuf_[k].path, dp.d).second += dp.gamma[kind] * dbuf_[k].value;
    }
  }
}

// Each wait state's classes and the result's totals, the cost table sorted (the owned rows here;
// the totals over every row, folded on process 0 in the table's order).
void Replay::totals(DelayResult& res) {
  const auto& inst = w_.instances;
  for (const WaiterPoint& pt : pts_) {
    WaitClass& cls = res.classes[pt.instance];
    cls.direct = pt.direct;
    cls.indirect = pt.indirect;
    for (double v : gamma_[pt.instance]) cls.gamma_long += v;
    cls.propagating = std::min(propagated_[pt.instance], inst[pt.instance].seconds);
    cls.terminal = inst[pt.instance].seconds - cls.propagating;
  }
  std::size_t next = 0;
  const ClassSums sums = engine::chained_fold(transport_, shard_.owned, ClassSums{}, [&](engine::Location l, ClassSums& a) {
    for (; next < pts_.size() && inst[pts_[next].instance].rank == l; ++next) {
      const WaitClass& cls = res.classes[pts_[next].instance];
      a.direct += cls.direct;
      a.indirect += cls.indirect;
      a.propagating += cls.propagating;
      a.terminal += cls.terminal;
    }
  });
  res.direct = sums.direct;
  res.indirect = sums.indirect;
  res.propagating = sums.propagating;
  res.terminal = sums.terminal;
  res.table.reserve(costs_.size());
  for (const auto& [cell, v] : costs_.sorted())
    res.table.push_back(DelayEntry{static_cast<DelayKind>(cell.kind), cell.path, cell.rank, v.first, v.second});
  const std::vector<DelayEntry> rows = engine::gather_rows(transport_, res.table, cost_table_order);
  TableTotals t;
  for (const DelayEntry& e : rows) {  // on process 0: every row, in the table's order
    const auto k = static_cast<std::size_t>(e.kind);
    t.short_total[k] += e.short_term;
    t.long_total[k] += e.long_term;
    t.short_term += e.short_term;
    t.long_term += e.long_term;
  }
  t = engine::decode<TableTotals>(transport_.broadcast(engine::encode(t)));
  res.short_total = t.short_total;
  res.long_total = t.long_total;
  res.short_term = t.short_term;
  res.long_term = t.long_term;
}

WaiterPoint& Replay::point_of(Rank r, std::uint32_t call) {
  const auto it = std::lower_bound(pts_.begin(), pts_.end(), std::tuple(r, call), [&](const WaiterPoint& p, const auto& key) {
    const WaitState& x = w_.instances[p.instance];
    return std::tuple(x.rank, x.call) < key;
  });
  return *it;
}

}  // namespace delay_replay

DelayResult delay_costs(const engine::Shard& shard, const Matching& matching, const WaitStateResult& waits,
                        engine::Transport& transport) {
  delay_replay::Replay replay(shard, matching, waits, transport);
  return replay.run();
}

DelayResult delay_costs(const trace::Trace& trace, const Matching& matching, const WaitStateResult& waits) {
  engine::SerialTransport serial;
  return delay_costs(engine::Shard::whole(trace), matching, waits, serial);
}

}  // namespace waitlab::analysis
