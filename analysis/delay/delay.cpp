#include "analysis/delay/delay.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <tuple>

#include "analysis/trace/cells.hpp"

namespace waitlab::analysis {

using trace::Matching;

namespace {

constexpr std::uint32_t kNone = 0xffffffffu;

constexpr std::array<std::string_view, kDelayKindCount> kKindNames = {
    "late_sender", "late_receiver", "barrier", "n_to_n", "1_to_n", "n_to_1"};

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

// Per rank, its pairwise synchronisation points (a wait state's waiting and delaying rank)
// with each peer: its call and the peer's, to find the previous synchronisation of a pair.
struct PeerCall {
  Rank peer;
  std::uint32_t call;
  std::uint32_t peer_call;
  auto key() const { return std::tie(peer, call); }
};

class Replay {
 public:
  Replay(const trace::Trace& tr, const Matching& m, const WaitStateResult& w)
      : tr_(tr), m_(m), w_(w), prof_(m.paths.size(), 0.0), mark_(m.paths.size(), 0) {
    const std::size_t n = tr.ranks();
    peers_.resize(n);
    nxn_.resize(n);
    nxn_by_instance_.resize(n);
    // A synchronisation point is a communication event that carries a wait state; the two
    // ranks synchronised there. In an N-to-N collective (barrier, allreduce, ...) in which
    // some rank waited, every member synchronised with every other; elsewhere (messages,
    // 1-to-N, N-to-1, scans) the waiting rank with the delaying one.
    std::vector<std::vector<std::uint32_t>> instance_of(n);
    for (std::size_t r = 0; r < n; ++r) instance_of[r].assign(m.calls[r].size(), kNone);
    for (std::uint32_t i = 0; i < m.collectives.size(); ++i) {
      const auto& inst = m.collectives[i];
      for (std::uint32_t k = 0; k < inst.count; ++k) instance_of[m.members[inst.first + k].rank][m.members[inst.first + k].call] = i;
    }
    std::vector<char> waited(m.collectives.size(), 0);
    for (const auto& x : w.instances) {
      if (!has_cause(x.pattern) || x.cause_rank == trace::kNoRank) continue;
      const std::uint32_t i = instance_of[x.rank][x.call];
      if (i != kNone && is_nxn_sync(x.pattern)) {
        waited[i] = 1;
      } else {
        peers_[x.rank].push_back(PeerCall{x.cause_rank, x.call, x.cause_call});
        peers_[x.cause_rank].push_back(PeerCall{x.rank, x.cause_call, x.call});
      }
    }
    for (std::uint32_t i = 0; i < m.collectives.size(); ++i) {
      if (!waited[i]) continue;
      const auto& inst = m.collectives[i];
      for (std::uint32_t k = 0; k < inst.count; ++k) {
        const auto& mem = m.members[inst.first + k];
        nxn_[mem.rank].emplace_back(mem.call, i);
        nxn_by_instance_[mem.rank].emplace_back(i, mem.call);
      }
    }
    for (auto& v : nxn_) std::sort(v.begin(), v.end());
    for (auto& v : nxn_by_instance_) std::sort(v.begin(), v.end());
    for (auto& p : peers_) {
      std::sort(p.begin(), p.end(), [](const PeerCall& a, const PeerCall& b) { return a.key() < b.key(); });
      p.erase(std::unique(p.begin(), p.end(), [](const PeerCall& a, const PeerCall& b) { return a.key() == b.key(); }),
              p.end());
    }
  }

  // Four passes, so that only the γ propagation follows the global backward order and
  // everything that reads the trace runs rank by rank, in memory order:
  //  1. per waiting rank: the previous synchronisation of the pair and its processing-time
  //     profile over I_S (sparse, kept);
  //  2. per delaying rank: its profile over I_S, Δ, the scale, the short-term costs and the
  //     direct / indirect split — none of which depends on γ — and its wait states in I_S;
  //  3. latest point first: γ_long[x][k] += (w·[k = kind(S)] + γ_long(S)[k])·s·x for d's wait
  //     states x in I_S — per kind of the wait it finally causes;
  //  4. long-term costs γ_long(S)[k]·s·Δ[c] under kind k, now that every γ_long is final.
  DelayResult run() {
    DelayResult res;
    const auto& inst = w_.instances;
    res.classes.assign(inst.size(), WaitClass{});
    std::vector<Kinds> gamma(inst.size(), Kinds{});
    std::vector<double> propagated(inst.size(), 0.0);
    std::vector<Point> pts = sync_points();
    res.sync_points = pts.size();
    std::vector<PathValue> rbuf, dbuf;
    trace::CellTable<std::pair<double, double>> costs;
    waiting_side(pts, rbuf);
    delaying_side(pts, rbuf, dbuf, costs, res);
    rbuf = {};
    propagate_gamma(pts, gamma, propagated, res);
    long_term_costs(pts, gamma, dbuf, costs);
    totals(pts, gamma, propagated, costs, res);
    return res;
  }

 private:
  struct PathValue {
    CallPathId path;
    double value;
  };
  // One synchronisation point and what the passes compute for it.
  using Kinds = std::array<double, kDelayKindCount>;
  struct Point {
    std::uint32_t instance = 0;                  // index into the wait-state instances
    std::uint32_t r_prev = kNone, d_prev = kNone;  // the pair's calls at their previous synchronisation
    trace::Time t0 = 0;                          // I_S starts here (−∞: at the start of the trace)
    double denom = 0;                            // ΣΔ + W_d
    std::uint32_t r_first = 0, r_count = 0;      // the waiting rank's profile in rbuf
    std::uint32_t d_first = 0, d_count = 0;      // s·Δ[c] in dbuf
    std::uint32_t waits_first = 0, waits_end = 0;  // the delaying rank's instances in I_S
    double s = 0;                                // 0: no cause inside the trace
    double w_d = 0;                              // waiting of the delaying rank in I_S
    trace::Time cause_enter = 0, wait_enter = 0; // the backward order
  };

  // The synchronisation points: the charged wait states that waited.
  std::vector<Point> sync_points() const {
    const auto& inst = w_.instances;
    std::vector<Point> pts;
    for (std::size_t i = 0; i < inst.size(); ++i) {
      const auto& x = inst[i];
      if (!charged(x) || !(x.seconds > 0)) continue;
      Point pt;
      pt.instance = static_cast<std::uint32_t>(i);
      pts.push_back(pt);
    }
    return pts;
  }

  // Pass 1: the waiting side, in (rank, call) order as the instances are.
  void waiting_side(std::vector<Point>& pts, std::vector<PathValue>& rbuf) {
    const auto& inst = w_.instances;
    for (auto& pt : pts) {
      const WaitState& x = inst[pt.instance];
      const auto [r_prev, d_prev] = previous_sync(x.rank, x.cause_rank, x.call);
      pt.r_prev = r_prev;
      pt.d_prev = d_prev;
      pt.t0 = r_prev == kNone ? -std::numeric_limits<double>::infinity()
                              : std::min(m_.leave(tr_, x.rank, r_prev), m_.leave(tr_, x.cause_rank, d_prev));
      pt.wait_enter = m_.enter(tr_, x.rank, x.call);
      profile(x.rank, r_prev, pt.t0, x.call, nullptr);
      pt.r_first = static_cast<std::uint32_t>(rbuf.size());
      for (CallPathId c : touched_) rbuf.push_back(PathValue{c, prof_[c]});
      pt.r_count = static_cast<std::uint32_t>(rbuf.size() - pt.r_first);
      clear();
    }
  }

  // Pass 2: the delaying side, in (rank, call) order.
  void delaying_side(std::vector<Point>& pts, const std::vector<PathValue>& rbuf,
                     std::vector<PathValue>& dbuf, trace::CellTable<std::pair<double, double>>& costs,
                     DelayResult& res) {
    const auto& inst = w_.instances;
    std::vector<std::uint32_t> by_cause(pts.size());
    for (std::uint32_t j = 0; j < pts.size(); ++j) by_cause[j] = j;
    std::sort(by_cause.begin(), by_cause.end(), [&](std::uint32_t a, std::uint32_t b) {
      const WaitState& x = inst[pts[a].instance];
      const WaitState& y = inst[pts[b].instance];
      return std::tie(x.cause_rank, x.cause_call, pts[a].instance) <
             std::tie(y.cause_rank, y.cause_call, pts[b].instance);
    });
    std::vector<double> remote(m_.paths.size(), 0.0);
    for (std::uint32_t j : by_cause) {
      Point& pt = pts[j];
      const WaitState& x = inst[pt.instance];
      const Rank d = x.cause_rank;
      const double w = x.seconds;
      res.sync_waiting += w;
      pt.cause_enter = m_.enter(tr_, d, x.cause_call);
      const auto [lo, hi] = profile(d, pt.d_prev, pt.t0, x.cause_call, &pt.w_d);
      pt.waits_first = lo;
      pt.waits_end = hi;
      for (std::uint32_t k = pt.r_first; k < pt.r_first + pt.r_count; ++k)
        remote[rbuf[k].path] = rbuf[k].value;
      double sum_delta = 0;
      for (CallPathId c : touched_) {
        const double diff = prof_[c] - remote[c];
        prof_[c] = diff > kTimeResolution ? diff : 0.0;
        sum_delta += prof_[c];
      }
      for (std::uint32_t k = pt.r_first; k < pt.r_first + pt.r_count; ++k) remote[rbuf[k].path] = 0.0;
      WaitClass& cls = res.classes[pt.instance];
      const double denom = sum_delta + pt.w_d;
      pt.denom = denom;
      if (!(denom > 0)) {
        pt.s = 0;
        res.unattributed += w;
        cls.direct = w;
      } else {
        // Scalasca's scale: the wait is distributed over Δ and d's waiting in proportion, but
        // never more than Δ and that waiting themselves (s·w ≤ 1); what is left of a wait
        // longer than its causes in the interval has no cause inside the trace.
        pt.s = w > denom ? 1.0 / w : 1.0 / denom;
        if (w > denom) res.unattributed += w - denom;
        const auto kind = static_cast<std::uint8_t>(delay_kind(x.pattern));
        pt.d_first = static_cast<std::uint32_t>(dbuf.size());
        for (CallPathId c : touched_) {
          if (prof_[c] <= 0) continue;
          const double share = pt.s * prof_[c];
          dbuf.push_back(PathValue{c, share});
          costs.at(kind, c, d).first += w * share;
        }
        pt.d_count = static_cast<std::uint32_t>(dbuf.size() - pt.d_first);
        cls.indirect = w * pt.s * pt.w_d;
        cls.direct = w - cls.indirect;
      }
      clear();
    }
  }

  // Pass 3: γ_long, latest synchronisation point first (a wait state's γ_long is complete
  // once every later point that it propagates to has been processed: those points lie
  // after it on its rank).
  void propagate_gamma(const std::vector<Point>& pts, std::vector<Kinds>& gamma,
                       std::vector<double>& propagated, DelayResult& res) const {
    const auto& inst = w_.instances;
    std::vector<std::uint32_t> order(pts.size());
    for (std::uint32_t j = 0; j < pts.size(); ++j) order[j] = j;
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
      const Point& p = pts[a];
      const Point& q = pts[b];
      const WaitState& x = inst[p.instance];
      const WaitState& y = inst[q.instance];
      return std::tie(p.cause_enter, p.wait_enter, x.rank, x.call) >
             std::tie(q.cause_enter, q.wait_enter, y.rank, y.call);
    });
    for (std::uint32_t j : order) {
      const Point& pt = pts[j];
      const WaitState& s_wait = inst[pt.instance];
      const double w = s_wait.seconds;
      const Kinds& g = gamma[pt.instance];
      double g_total = 0;
      for (double v : g) g_total += v;
      if (pt.s == 0) {
        res.unattributed += g_total;
        continue;
      }
      if (w > pt.denom) res.unattributed += g_total * (1 - pt.denom / w);  // capped: the rest has no cause
      const auto kind = static_cast<std::size_t>(delay_kind(s_wait.pattern));
      for (std::uint32_t k = pt.waits_first; k < pt.waits_end; ++k) {
        if (!charged(inst[k])) continue;
        const double share = pt.s * inst[k].seconds;
        for (std::size_t c = 0; c < kDelayKindCount; ++c) gamma[k][c] += g[c] * share;
        gamma[k][kind] += w * share;
        propagated[k] += w * share;
      }
    }
  }

  // Pass 4: long-term costs, under the kind of the wait they finally cause.
  void long_term_costs(const std::vector<Point>& pts, const std::vector<Kinds>& gamma,
                       const std::vector<PathValue>& dbuf,
                       trace::CellTable<std::pair<double, double>>& costs) const {
    const auto& inst = w_.instances;
    for (const Point& pt : pts) {
      const WaitState& x = inst[pt.instance];
      const Kinds& g = gamma[pt.instance];
      for (std::size_t kind = 0; kind < kDelayKindCount; ++kind) {
        if (!(g[kind] > 0)) continue;
        for (std::uint32_t k = pt.d_first; k < pt.d_first + pt.d_count; ++k)
          costs.at(static_cast<std::uint8_t>(kind), dbuf[k].path, x.cause_rank).second +=
              g[kind] * dbuf[k].value;
      }
    }
  }

  // Each wait state's classes and the result's totals, the cost table sorted.
  void totals(const std::vector<Point>& pts, const std::vector<Kinds>& gamma,
              const std::vector<double>& propagated, const trace::CellTable<std::pair<double, double>>& costs,
              DelayResult& res) const {
    const auto& inst = w_.instances;
    for (const Point& pt : pts) {
      WaitClass& cls = res.classes[pt.instance];
      for (double v : gamma[pt.instance]) cls.gamma_long += v;
      cls.propagating = std::min(propagated[pt.instance], inst[pt.instance].seconds);
      cls.terminal = inst[pt.instance].seconds - cls.propagating;
      res.direct += cls.direct;
      res.indirect += cls.indirect;
      res.propagating += cls.propagating;
      res.terminal += cls.terminal;
    }
    // Below the time resolution the sum is rounding residue of the subtractions above.
    if (std::abs(res.unattributed) < kTimeResolution) res.unattributed = 0;
    res.table.reserve(costs.size());
    for (const auto& [cell, v] : costs.sorted()) {
      const auto kind = static_cast<DelayKind>(cell.kind);
      res.table.push_back(DelayEntry{kind, cell.path, cell.rank, v.first, v.second});
      res.short_total[cell.kind] += v.first;
      res.long_total[cell.kind] += v.second;
      res.short_term += v.first;
      res.long_term += v.second;
    }
  }

  // The previous synchronisation of ranks r and d before r's call `before`: r's and d's calls
  // there (kNone: none, I_S starts with the trace) — the later of their last pairwise point
  // and the last N-to-N collective in which some rank waited and both took part.
  std::pair<std::uint32_t, std::uint32_t> previous_sync(Rank r, Rank d, std::uint32_t before) const {
    std::pair<std::uint32_t, std::uint32_t> best{kNone, kNone};
    const auto& p = peers_[r];
    auto it = std::lower_bound(p.begin(), p.end(), PeerCall{d, before, 0},
                               [](const PeerCall& a, const PeerCall& b) { return a.key() < b.key(); });
    if (it != p.begin() && std::prev(it)->peer == d) best = {std::prev(it)->call, std::prev(it)->peer_call};
    const auto& mine = nxn_[r];
    const auto& theirs = nxn_by_instance_[d];
    for (auto k = std::lower_bound(mine.begin(), mine.end(), std::pair<std::uint32_t, std::uint32_t>{before, 0});
         k != mine.begin();) {
      --k;
      if (best.first != kNone && k->first < best.first) break;
      const auto t = std::lower_bound(theirs.begin(), theirs.end(), std::pair<std::uint32_t, std::uint32_t>{k->second, 0});
      if (t != theirs.end() && t->first == k->second) {
        best = {k->first, t->second};
        break;
      }
    }
    return best;
  }

  // Processing time per call path (into prof_/touched_) on rank r from time t0 — inside or
  // after call `from`, r's call at the pair's previous synchronisation (kNone: the start of
  // the trace) — to the start of call `to`: exclusive time minus the waiting time of the wait
  // states of the calls in between. What r spent in `from` after t0 is processing on its
  // path. Returns the index range of those wait states; with `waiting`, adds up the ones
  // that have a cause.
  std::pair<std::uint32_t, std::uint32_t> profile(Rank r, std::uint32_t from, trace::Time t0, std::uint32_t to,
                                                  double* waiting) {
    const auto& ev = tr_.locations[r].events;
    const auto& after = m_.path_after[r];
    const auto& calls = m_.calls[r];
    const std::uint32_t begin = from == kNone ? 0 : calls[from].enter;
    const std::uint32_t end = calls[to].enter;
    for (std::uint32_t k = begin; k < end; ++k) {
      const CallPathId c = after[k];
      if (c == trace::kNoCallPath) continue;
      const double dt = ev[k + 1].time - std::max(ev[k].time, t0);
      if (dt <= 0) continue;
      touch(c);
      prof_[c] += dt;
    }
    const auto& inst = w_.instances;
    const auto rank_begin = inst.begin() + static_cast<std::ptrdiff_t>(w_.rank_first[static_cast<std::size_t>(r)]);
    const auto rank_end = inst.begin() + static_cast<std::ptrdiff_t>(w_.rank_first[static_cast<std::size_t>(r) + 1]);
    const std::uint32_t lo_call = from == kNone ? 0 : from + 1;
    const auto by_call = [](const WaitState& a, std::uint32_t call) { return a.call < call; };
    const auto lo = std::lower_bound(rank_begin, rank_end, lo_call, by_call);
    auto it = lo;
    for (; it != rank_end && it->call < to; ++it) {
      const CallPathId c = calls[it->call].path;
      touch(c);
      prof_[c] -= it->seconds;
      if (waiting && charged(*it)) *waiting += it->seconds;
    }
    return {static_cast<std::uint32_t>(lo - inst.begin()), static_cast<std::uint32_t>(it - inst.begin())};
  }

  void touch(CallPathId c) {
    if (!mark_[c]) {
      mark_[c] = 1;
      touched_.push_back(c);
    }
  }

  void clear() {
    for (CallPathId c : touched_) {
      prof_[c] = 0.0;
      mark_[c] = 0;
    }
    touched_.clear();
  }

  const trace::Trace& tr_;
  const Matching& m_;
  const WaitStateResult& w_;
  std::vector<std::vector<PeerCall>> peers_;
  // Per rank, the waited N-to-N collectives it took part in: (call, instance) by call and
  // (instance, call) by instance.
  std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> nxn_;
  std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> nxn_by_instance_;
  std::vector<double> prof_;
  std::vector<std::uint8_t> mark_;
  std::vector<CallPathId> touched_;
};

}  // namespace

std::string_view delay_kind_name(DelayKind k) {
  return kKindNames[static_cast<std::size_t>(k)];
}

DelayKind delay_kind(Pattern p) {
  switch (p) {
    case Pattern::LateSender: return DelayKind::LateSender;
    case Pattern::LateReceiver: return DelayKind::LateReceiver;
    case Pattern::WaitAtNxN:
    case Pattern::EarlyScan: return DelayKind::NxN;
    case Pattern::LateBroadcast: return DelayKind::OneToN;
    case Pattern::EarlyReduce: return DelayKind::NToOne;
    default: return DelayKind::Barrier;
  }
}

DelayResult delay_costs(const trace::Trace& trace, const Matching& matching, const WaitStateResult& waits) {
  Replay replay(trace, matching, waits);
  return replay.run();
}

}  // namespace waitlab::analysis
