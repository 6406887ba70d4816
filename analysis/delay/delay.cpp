#include "analysis/delay/delay.hpp"

#include <algorithm>
#include <tuple>

#include "analysis/trace/cells.hpp"

namespace waitlab::analysis {

using trace::Matching;

namespace {

constexpr std::uint32_t kNone = 0xffffffffu;
// Profile differences below a picosecond are the rounding of sums of times, not a delay.
constexpr double kResolution = 1e-12;

constexpr std::array<std::string_view, kDelayKindCount> kKindNames = {
    "late_sender", "late_receiver", "barrier", "n_to_n", "1_to_n", "n_to_1"};

bool is_p2p(Pattern p) {
  return p == Pattern::LateSender || p == Pattern::LateReceiver;
}

// Per rank, the calls that complete a message with each peer, to find the previous
// synchronisation point of a pair of ranks.
struct PeerCall {
  Rank peer;
  std::uint32_t call;
  auto key() const { return std::tie(peer, call); }
};

class Replay {
 public:
  Replay(const trace::Trace& tr, const Matching& m, const WaitStateResult& w)
      : tr_(tr), m_(m), w_(w), prof_(m.paths.size(), 0.0), other_(m.paths.size(), 0.0),
        mark_(m.paths.size(), 0), other_mark_(m.paths.size(), 0) {
    const std::size_t n = tr.ranks();
    peers_.resize(n);
    // A synchronisation point is a communication event that carries a wait state; the
    // interval of S starts at the previous synchronisation point of the same ranks.
    // Collectives: per rank and call, the call of the previous instance on the same
    // communicator in which some rank waited.
    std::vector<std::vector<std::uint32_t>> instance_of(n);
    for (std::size_t r = 0; r < n; ++r) instance_of[r].assign(m.calls[r].size(), kNone);
    for (std::uint32_t i = 0; i < m.collectives.size(); ++i) {
      const auto& inst = m.collectives[i];
      for (std::uint32_t k = 0; k < inst.count; ++k) instance_of[m.members[inst.first + k].rank][m.members[inst.first + k].call] = i;
    }
    std::vector<char> waited(m.collectives.size(), 0);
    for (const auto& x : w.instances) {
      if (!has_cause(x.pattern) || x.cause_rank == trace::kNoRank) continue;
      if (is_p2p(x.pattern)) {
        peers_[x.rank].push_back(PeerCall{x.cause_rank, x.call});
        peers_[x.cause_rank].push_back(PeerCall{x.rank, x.cause_call});
      } else if (instance_of[x.rank][x.call] != kNone) {
        waited[instance_of[x.rank][x.call]] = 1;
      }
    }
    prev_coll_.resize(n);
    for (std::size_t r = 0; r < n; ++r) prev_coll_[r].assign(m.calls[r].size(), kNone);
    std::vector<std::uint32_t> last(n, kNone);
    trace::CommId comm = kNone;
    for (std::uint32_t i = 0; i < m.collectives.size(); ++i) {
      const auto& inst = m.collectives[i];
      if (inst.comm != comm) {
        std::fill(last.begin(), last.end(), kNone);
        comm = inst.comm;
      }
      for (std::uint32_t k = 0; k < inst.count; ++k) {
        const auto& mem = m.members[inst.first + k];
        prev_coll_[mem.rank][mem.call] = last[mem.rank];
        if (waited[i]) last[mem.rank] = mem.call;
      }
    }
    // Point-to-point: per rank, the calls of its synchronisation points with each peer.
    for (auto& p : peers_) {
      std::sort(p.begin(), p.end(), [](const PeerCall& a, const PeerCall& b) { return a.key() < b.key(); });
      p.erase(std::unique(p.begin(), p.end(), [](const PeerCall& a, const PeerCall& b) { return a.key() == b.key(); }),
              p.end());
    }
    // First instance of each rank (instances are sorted by rank, call).
    first_.assign(n + 1, 0);
    for (const auto& x : w.instances) ++first_[x.rank + 1];
    for (std::size_t r = 0; r < n; ++r) first_[r + 1] += first_[r];
  }

  DelayResult run() {
    DelayResult res;
    const auto& inst = w_.instances;
    res.classes.assign(inst.size(), WaitClass{});
    gamma_.assign(inst.size(), 0.0);
    propagated_.assign(inst.size(), 0.0);
    std::vector<std::size_t> points;
    for (std::size_t i = 0; i < inst.size(); ++i)
      if (has_cause(inst[i].pattern) && inst[i].cause_rank != trace::kNoRank && inst[i].seconds > 0) points.push_back(i);
    // Latest first: a wait state's long-term cost is complete once every later point that
    // it propagates to has been processed (those points lie after it on its rank).
    std::vector<std::tuple<trace::Time, trace::Time, Rank, std::uint32_t, std::size_t>> order;
    order.reserve(points.size());
    for (std::size_t i : points) {
      const auto& x = inst[i];
      order.emplace_back(m_.enter(tr_, x.cause_rank, x.cause_call), m_.enter(tr_, x.rank, x.call), x.rank, x.call, i);
    }
    std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a > b; });
    res.sync_points = order.size();

    trace::CellTable<std::pair<double, double>> costs;
    std::vector<std::size_t> d_waits;
    for (const auto& o : order) {
      const std::size_t i = std::get<4>(o);
      const WaitState& x = inst[i];
      const Rank r = x.rank, d = x.cause_rank;
      const double w = x.seconds, g = gamma_[i];
      res.sync_waiting += w;
      const bool p2p = is_p2p(x.pattern);
      const std::uint32_t prev_r = p2p ? prev_peer(r, d, x.call) : prev_coll_[r][x.call];
      const std::uint32_t prev_d = p2p ? prev_peer(d, r, x.cause_call) : prev_coll_[d][x.cause_call];
      profile(r, prev_r, x.call, other_, other_mark_, other_touched_, nullptr);
      d_waits.clear();
      profile(d, prev_d, x.cause_call, prof_, mark_, touched_, &d_waits);
      double sum_delta = 0, w_d = 0;
      for (CallPathId c : touched_) {
        const double diff = prof_[c] - other_[c];
        const double delta = diff > kResolution ? diff : 0.0;
        prof_[c] = delta;
        sum_delta += delta;
      }
      for (std::size_t k : d_waits) w_d += inst[k].seconds;
      WaitClass& cls = res.classes[i];
      const double denom = sum_delta + w_d;
      if (!(denom > 0)) {
        res.unattributed += w + g;
        cls.direct = w;
      } else {
        const double s = 1.0 / denom;
        const DelayKind kind = delay_kind(x.pattern);
        for (CallPathId c : touched_) {
          if (prof_[c] <= 0) continue;
          auto& e = costs.at(static_cast<std::uint8_t>(kind), c, d);
          e.first += w * s * prof_[c];
          e.second += g * s * prof_[c];
        }
        for (std::size_t k : d_waits) {
          gamma_[k] += (w + g) * s * inst[k].seconds;
          propagated_[k] += w * s * inst[k].seconds;
        }
        cls.indirect = w * s * w_d;
        cls.direct = w - cls.indirect;
      }
      clear(other_, other_mark_, other_touched_);
      clear(prof_, mark_, touched_);
    }

    for (std::size_t i : points) {
      WaitClass& cls = res.classes[i];
      cls.gamma_long = gamma_[i];
      cls.propagating = std::min(propagated_[i], inst[i].seconds);
      cls.terminal = inst[i].seconds - cls.propagating;
      res.direct += cls.direct;
      res.indirect += cls.indirect;
      res.propagating += cls.propagating;
      res.terminal += cls.terminal;
    }
    res.table.reserve(costs.size());
    for (const auto& [cell, v] : costs.sorted()) {
      const auto kind = static_cast<DelayKind>(cell.kind);
      res.table.push_back(DelayEntry{kind, cell.path, cell.rank, v.first, v.second});
      res.short_total[static_cast<std::size_t>(kind)] += v.first;
      res.long_total[static_cast<std::size_t>(kind)] += v.second;
      res.short_term += v.first;
      res.long_term += v.second;
    }
    return res;
  }

 private:
  // The last synchronisation point of rank r with `peer` before call `before`.
  std::uint32_t prev_peer(Rank r, Rank peer, std::uint32_t before) const {
    const auto& p = peers_[r];
    auto it = std::lower_bound(p.begin(), p.end(), PeerCall{peer, before},
                               [](const PeerCall& a, const PeerCall& b) { return a.key() < b.key(); });
    if (it == p.begin()) return kNone;
    --it;
    return it->peer == peer ? it->call : kNone;
  }

  // Processing time per call path on rank r between the end of call `from` (kNone: the
  // start of the trace) and the start of call `to`; the wait states of the calls in
  // between are subtracted, and those with a cause are listed in `waits`.
  void profile(Rank r, std::uint32_t from, std::uint32_t to, std::vector<double>& prof,
               std::vector<std::uint8_t>& mark, std::vector<CallPathId>& touched,
               std::vector<std::size_t>* waits) {
    const auto& ev = tr_.locations[r].events;
    const auto& after = m_.path_after[r];
    const auto& calls = m_.calls[r];
    const std::uint32_t begin = from == kNone ? 0 : calls[from].leave;
    const std::uint32_t end = calls[to].enter;
    const auto touch = [&](CallPathId c) {
      if (!mark[c]) {
        mark[c] = 1;
        touched.push_back(c);
      }
    };
    for (std::uint32_t k = begin; k < end; ++k) {
      const CallPathId c = after[k];
      if (c == trace::kNoCallPath) continue;
      const double dt = ev[k + 1].time - ev[k].time;
      if (dt <= 0) continue;
      touch(c);
      prof[c] += dt;
    }
    const auto& inst = w_.instances;
    const std::uint32_t lo = from == kNone ? 0 : from + 1;
    auto it = std::lower_bound(inst.begin() + static_cast<std::ptrdiff_t>(first_[r]),
                               inst.begin() + static_cast<std::ptrdiff_t>(first_[r + 1]), lo,
                               [](const WaitState& a, std::uint32_t call) { return a.call < call; });
    for (; it != inst.begin() + static_cast<std::ptrdiff_t>(first_[r + 1]) && it->call < to; ++it) {
      const CallPathId c = calls[it->call].path;
      touch(c);
      prof[c] -= it->seconds;
      if (waits && has_cause(it->pattern) && it->cause_rank != trace::kNoRank)
        waits->push_back(static_cast<std::size_t>(it - inst.begin()));
    }
  }

  static void clear(std::vector<double>& prof, std::vector<std::uint8_t>& mark, std::vector<CallPathId>& touched) {
    for (CallPathId c : touched) {
      prof[c] = 0.0;
      mark[c] = 0;
    }
    touched.clear();
  }

  const trace::Trace& tr_;
  const Matching& m_;
  const WaitStateResult& w_;
  std::vector<std::vector<std::uint32_t>> prev_coll_;
  std::vector<std::vector<PeerCall>> peers_;
  std::vector<std::size_t> first_;
  std::vector<double> gamma_, propagated_;
  std::vector<double> prof_, other_;
  std::vector<std::uint8_t> mark_, other_mark_;
  std::vector<CallPathId> touched_, other_touched_;
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
