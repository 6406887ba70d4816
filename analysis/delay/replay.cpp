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

// A wait at a message (Late Sender, Late Receiver): its short-term scale is capped.
bool is_p2p_pattern(Pattern p) { return p == Pattern::LateSender || p == Pattern::LateReceiver; }

// A wait state whose waiting is charged to its causes: every one with a delaying rank but
// Wait at Init, Wait at Finalize and Early Scan, for which Scalasca has no delay metric (its
// delay analysis runs at barriers, N-to-N, 1-to-N and N-to-1 collectives and messages only).
// MPI_Init and MPI_Finalize still synchronise their members (an interval can start at
// MPI_Init); a scan does not (scout registers no synchronisation point there).
bool charged(const WaitState& x) {
  return has_cause(x.pattern) && x.cause_rank != trace::kNoRank && x.pattern != Pattern::WaitAtInit &&
         x.pattern != Pattern::WaitAtFinalize && x.pattern != Pattern::EarlyScan;
}

// A wait state at which two ranks synchronised (its waiting rank and its cause): every one with
// a cause but Early Scan (scout registers no synchronisation point at a scan).
bool is_sync_wait(const WaitState& x) {
  return has_cause(x.pattern) && x.cause_rank != trace::kNoRank && x.pattern != Pattern::EarlyScan;
}

// A wait state whose waiting is no processing in an interval (scout's CalculateWaitMap subtracts
// the waiting of the synchronisation points inside it): every pattern but the completion ones
// (the rank was busy finishing the operation), Wait at Init (Scalasca has no such waiting) and
// Early Scan (no synchronisation point).
bool is_interval_wait(Pattern p) {
  return p != Pattern::BarrierCompletion && p != Pattern::NxNCompletion && p != Pattern::InitCompletion &&
         p != Pattern::WaitAtInit && p != Pattern::EarlyScan;
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
  member_of_.resize(static_cast<std::size_t>(owned.size()));
  for (engine::Location r = owned.first; r < owned.last; ++r)
    member_of_[static_cast<std::size_t>(r - owned.first)].assign(m.calls[static_cast<std::size_t>(r)].size(), kNone);
  member_instance_.assign(m.members.size(), kNone);
  for (std::uint32_t i = 0; i < m.collectives.size(); ++i) {
    const auto& c = m.collectives[i];
    for (std::uint32_t k = c.first; k < c.first + c.count; ++k) {
      member_of_[static_cast<std::size_t>(m.members[k].rank - owned.first)][m.members[k].call] = k;
      member_instance_[k] = i;
    }
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
  find_completions();
  exchange_causes(ex);
  mark_sync_collectives();
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
      else if (dp.capped()) a.unattributed += dp.w - dp.denom;
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
  const auto per_rank = [&](const std::vector<double>& v) {
    return engine::chained_fold(transport_, shard_.owned, 0.0, [&](engine::Location l, double& a) {
      a += v[static_cast<std::size_t>(l - shard_.owned.first)];
    });
  };
  res.scalasca_collective_long_term_lost = per_rank(collective_lost_);
  res.scalasca_late_receiver_at_stake = per_rank(lr_at_stake_);
  return res;
}

// Pass 2: the delaying side, in (delaying rank, its call, instance) order.
void Replay::delaying_side() {
  std::vector<double> remote(m_.paths.size(), 0.0);
  for (DelayerPoint& dp : dpts_) {
    const double w = dp.w;
    const auto [lo, hi] = profile(dp.d, dp.d_prev, dp.t0_d, dp.cause_call, &dp.w_d);
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
      dp.s = dp.s_long = 0;
    } else {
      // Scalasca's scales: the wait is distributed over Δ and d's waiting in proportion; at a
      // message never more than Δ and that waiting themselves (s·w ≤ 1: what is left of a wait
      // longer than its causes in the interval has no cause inside the trace), at a collective
      // all of it (scout's CalculateCollectiveDelay has no cap). The long-term cost the wait
      // carries is distributed uncapped at both (Delay.MPI.pattern's scale_c).
      dp.s_long = 1.0 / dp.denom;
      dp.s = is_p2p_pattern(dp.pattern) && w > dp.denom ? 1.0 / w : dp.s_long;
      const auto kind = static_cast<std::uint8_t>(delay_kind(dp.pattern));
      dp.d_first = static_cast<std::uint32_t>(dbuf_.size());
      for (CallPathId c : touched_) {
        if (prof_[c] <= 0) continue;
        const double share = dp.s * prof_[c];
        dbuf_.push_back(PathValue{c, dp.capped() ? dp.s_long * prof_[c] : share});
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
  scalasca_collective_loss();
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

// Scalasca 2.6's long-term defect at collectives (MpiDelayOps.cpp CalculateScales with
// DelayCostMap::addCosts): at a collective S, the delaying rank's calls at which it last
// synchronised with each waiter are intermediate points; scout applies the waiters' scales summed
// up to the latest intermediate point *before* each one (the scale switches at a point to the
// sum of the earlier points' waiters), so a wait x of d strictly between two points (or after the
// last) misses the scale of the waiters of the point just before it. waitlab gives every wait in
// a waiter's interval that waiter's (w + γ)·s·x; what scout misses is added up here, per
// delaying rank, in dpts_ order.
void Replay::scalasca_collective_loss() {
  collective_lost_.assign(static_cast<std::size_t>(shard_.owned.size()), 0.0);
  const auto& inst = w_.instances;
  for (std::size_t g = 0; g < dpts_.size();) {
    std::size_t e = g;
    while (e < dpts_.size() && dpts_[e].d == dpts_[g].d && dpts_[e].cause_call == dpts_[g].cause_call) ++e;
    if (!is_p2p_pattern(dpts_[g].pattern)) {
      // The points, by d's call (kNone: the start of the trace, before every call).
      const auto at = [](std::uint32_t c) { return c == kNone ? -1 : static_cast<std::int64_t>(c); };
      std::vector<std::int64_t> points;
      std::uint32_t first = dpts_[g].waits_first, end = dpts_[g].waits_end;
      for (std::size_t j = g; j < e; ++j) {
        points.push_back(at(dpts_[j].d_prev));
        first = std::min(first, dpts_[j].waits_first);
        end = std::max(end, dpts_[j].waits_end);
      }
      std::sort(points.begin(), points.end());
      double& lost = collective_lost_[static_cast<std::size_t>(dpts_[g].d - shard_.owned.first)];
      for (std::uint32_t k = first; k < end; ++k) {
        if (!charged(inst[k])) continue;
        const auto c = static_cast<std::int64_t>(inst[k].call);
        if (std::binary_search(points.begin(), points.end(), c)) continue;  // at a point: scout's scale is right
        const auto before = std::lower_bound(points.begin(), points.end(), c);
        if (before == points.begin()) continue;
        const std::int64_t p = *std::prev(before);
        for (std::size_t j = g; j < e; ++j) {
          const DelayerPoint& dp = dpts_[j];
          if (at(dp.d_prev) != p || !(dp.denom > 0)) continue;
          double g_total = 0;
          for (double v : dp.gamma) g_total += v;
          lost += (dp.w * dp.s + g_total * dp.s_long) * inst[k].seconds;
        }
      }
    }
    g = e;
  }
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
