// The synchronisation intervals of the delay replay (replay.hpp): which wait states are points,
// the previous synchronisation of each pair, the waiting side's profile, and what the delaying
// side is sent. Exchange rounds, waiter → delayer unless said otherwise:
//   causes     every wait with a cause: its call, the cause's call, its Leave (the delayer's
//              pairwise points), answered with the cause call's Enter and Leave;
//   previous   for an interval that starts at a waited N-to-N collective: the instance, answered
//              with the delayer's Leave of its call there;
//   points     each point: calls, w, pattern, the interval (d's previous call, t0), the keys of the
//              backward order and r's sparse profile over I_S.
#include <algorithm>
#include <iterator>
#include <map>

#include "analysis/delay/replay.hpp"
#include "analysis/engine/bytes.hpp"

namespace waitlab::analysis::delay_replay {

using engine::ByteReader;
using engine::Location;

namespace {

constexpr std::uint64_t kCauses = 0, kCausesAnswer = 1, kPrevious = 2, kPreviousAnswer = 3, kPoints = 4;

// A cause record: the waiting call, the cause's call, the waiting call's Leave, pairwise or not.
struct CauseRecord {
  std::uint32_t instance;  // the waiter's, echoed in the answer
  std::uint32_t call;
  std::uint32_t cause_call;
  trace::Time leave;
  std::uint8_t pairwise;
};
struct CauseAnswer {
  std::uint32_t instance;
  trace::Time enter, leave;
};
struct PreviousAnswer {
  std::uint32_t point;  // the waiter's, echoed
  std::uint32_t call;
  trace::Time leave;
};
struct PointHead {
  std::uint32_t call, cause_call, d_prev;
  std::uint8_t pattern;
  double w;
  trace::Time t0, wait_enter, cause_enter;
  std::uint32_t profile_size;
};

}  // namespace

std::uint32_t Replay::collective_of(Rank r, std::uint32_t call) const {
  return instance_of_[static_cast<std::size_t>(r - shard_.owned.first)][call];
}

trace::Time Replay::enter(Rank r, std::uint32_t call) const {
  return shard_.time(r, m_.calls[static_cast<std::size_t>(r)][call].enter);
}
trace::Time Replay::leave(Rank r, std::uint32_t call) const {
  return shard_.time(r, m_.calls[static_cast<std::size_t>(r)][call].leave);
}

// The points: the owned charged wait states that waited, in instance order.
void Replay::find_sync_points() {
  const auto& inst = w_.instances;
  for (std::size_t i = 0; i < inst.size(); ++i) {
    if (!charged(inst[i]) || !(inst[i].seconds > 0)) continue;
    WaiterPoint pt;
    pt.instance = static_cast<std::uint32_t>(i);
    pts_.push_back(pt);
  }
}

// Round "causes": a synchronisation point is a communication event that carries a wait state;
// the two ranks synchronised there. In an N-to-N collective (barrier, allreduce, ...) in which
// some rank waited, every member synchronised with every other; elsewhere (messages, 1-to-N,
// N-to-1, scans) the waiting rank with the delaying one, which learns it here. peers_ is built
// in the serial insertion order (by instance, the waiting side first) before its sort.
void Replay::exchange_causes(engine::Exchange& ex) {
  const auto& inst = w_.instances;
  const engine::LocationRange owned = shard_.owned;
  for (std::uint32_t i = 0; i < inst.size(); ++i) {
    const WaitState& x = inst[i];
    if (!has_cause(x.pattern) || x.cause_rank == trace::kNoRank) continue;
    const bool nxn = collective_of(x.rank, x.call) != kNone && is_nxn_sync(x.pattern);
    ex.record(x.rank, x.cause_rank, kCauses).put(CauseRecord{i, x.call, x.cause_call, leave(x.rank, x.call), !nxn});
  }
  engine::Inbox causes = ex.deliver();
  // Per owned rank: (instance rank, instance call, 0 waiting / 1 delaying side, entry).
  std::vector<std::vector<std::tuple<Rank, std::uint32_t, int, PeerCall>>> sequence(static_cast<std::size_t>(owned.size()));
  for (Location d = owned.first; d < owned.last; ++d)
    for (const engine::ExchangeRecord& rec : causes.of(d)) {
      ByteReader in(rec.payload);
      auto& answer = ex.record(d, rec.source, kCausesAnswer);
      while (!in.done()) {
        const auto c = in.get<CauseRecord>();
        answer.put(CauseAnswer{c.instance, enter(d, c.cause_call), leave(d, c.cause_call)});
        if (c.pairwise)
          sequence[static_cast<std::size_t>(d - owned.first)].emplace_back(rec.source, c.call, 1,
                                                                            PeerCall{rec.source, c.cause_call, c.call, c.leave});
      }
    }
  engine::Inbox answers = ex.deliver();
  std::vector<CauseAnswer> of_instance(inst.size(), CauseAnswer{0, 0, 0});
  for (Location r = owned.first; r < owned.last; ++r)
    for (const engine::ExchangeRecord& rec : answers.of(r)) {
      ByteReader in(rec.payload);
      while (!in.done()) {
        const auto a = in.get<CauseAnswer>();
        of_instance.at(a.instance) = a;
      }
    }
  for (std::uint32_t i = 0; i < inst.size(); ++i) {
    const WaitState& x = inst[i];
    if (!has_cause(x.pattern) || x.cause_rank == trace::kNoRank) continue;
    if (collective_of(x.rank, x.call) != kNone && is_nxn_sync(x.pattern)) continue;
    sequence[static_cast<std::size_t>(x.rank - owned.first)].emplace_back(
        x.rank, x.call, 0, PeerCall{x.cause_rank, x.call, x.cause_call, of_instance[i].leave});
  }
  for (WaiterPoint& pt : pts_) pt.cause_enter = of_instance[pt.instance].enter;
  peers_.resize(static_cast<std::size_t>(owned.size()));
  for (std::size_t k = 0; k < sequence.size(); ++k) {
    auto& seq = sequence[k];
    std::sort(seq.begin(), seq.end(), [](const auto& a, const auto& b) {
      return std::tie(std::get<0>(a), std::get<1>(a), std::get<2>(a)) < std::tie(std::get<0>(b), std::get<1>(b), std::get<2>(b));
    });
    auto& p = peers_[k];
    for (const auto& e : seq) p.push_back(std::get<3>(e));
    std::sort(p.begin(), p.end(), [](const PeerCall& a, const PeerCall& b) { return a.key() < b.key(); });
    p.erase(std::unique(p.begin(), p.end(), [](const PeerCall& a, const PeerCall& b) { return a.key() == b.key(); }),
            p.end());
  }
}

// The waited N-to-N collectives (some member waited with a cause): an OR over the processes.
void Replay::mark_waited_collectives() {
  const engine::LocationRange owned = shard_.owned;
  std::vector<std::uint8_t> waited(m_.collectives.size(), 0);
  for (const WaitState& x : w_.instances) {
    if (!has_cause(x.pattern) || x.cause_rank == trace::kNoRank || !is_nxn_sync(x.pattern)) continue;
    const std::uint32_t i = collective_of(x.rank, x.call);
    if (i != kNone) waited[i] = 1;
  }
  waited = engine::decode<std::vector<std::uint8_t>>(transport_.chain(engine::encode(waited), [&](engine::Bytes in) {
    auto all = engine::decode<std::vector<std::uint8_t>>(in);
    for (std::size_t i = 0; i < all.size(); ++i) all[i] |= waited[i];
    return engine::encode(all);
  }));
  nxn_.resize(static_cast<std::size_t>(owned.size()));
  for (std::uint32_t i = 0; i < m_.collectives.size(); ++i) {
    if (!waited[i]) continue;
    const auto& c = m_.collectives[i];
    for (std::uint32_t k = c.first; k < c.first + c.count; ++k)
      nxn_[static_cast<std::size_t>(m_.members[k].rank - owned.first)].emplace_back(m_.members[k].call, i);
  }
  for (auto& v : nxn_) std::sort(v.begin(), v.end());
  nxn_by_instance_.resize(nxn_.size());
  for (std::size_t k = 0; k < nxn_.size(); ++k) {
    for (const auto& [call, instance] : nxn_[k]) nxn_by_instance_[k].emplace_back(instance, call);
    std::sort(nxn_by_instance_[k].begin(), nxn_by_instance_[k].end());
  }
  comm_members_.resize(shard_.defs.comms.size());
  for (std::size_t c = 0; c < comm_members_.size(); ++c) {
    comm_members_[c] = shard_.defs.comms[c].members;
    std::sort(comm_members_[c].begin(), comm_members_[c].end());
  }
}

// The previous synchronisation of the point's ranks r and d before r's call: r's call there and
// d's (kNone: none, I_S starts with the trace) — the later of their last pairwise point and the
// last waited N-to-N collective both took part in (then d's call is asked of d: pt.nxn_instance).
std::pair<std::uint32_t, std::uint32_t> Replay::previous_sync(const WaitState& x, WaiterPoint& pt,
                                                              trace::Time& d_leave) const {
  const Rank r = x.rank, d = x.cause_rank;
  const std::uint32_t before = x.call;
  std::pair<std::uint32_t, std::uint32_t> best{kNone, kNone};
  const auto& p = peers_[static_cast<std::size_t>(r - shard_.owned.first)];
  auto it = std::lower_bound(p.begin(), p.end(), PeerCall{d, before, 0, 0},
                             [](const PeerCall& a, const PeerCall& b) { return a.key() < b.key(); });
  if (it != p.begin() && std::prev(it)->peer == d) {
    best = {std::prev(it)->call, std::prev(it)->peer_call};
    d_leave = std::prev(it)->peer_leave;
  }
  const auto& mine = nxn_[static_cast<std::size_t>(r - shard_.owned.first)];
  for (auto k = std::lower_bound(mine.begin(), mine.end(), std::pair<std::uint32_t, std::uint32_t>{before, 0});
       k != mine.begin();) {
    --k;
    if (best.first != kNone && k->first < best.first) break;
    const auto& members = comm_members_[m_.collectives[k->second].comm];
    if (std::binary_search(members.begin(), members.end(), d)) {
      best = {k->first, kNone};
      pt.nxn_instance = k->second;
      break;
    }
  }
  return best;
}

// Round "previous": each point's interval; d's call and Leave at a waited collective asked of d.
void Replay::find_previous_syncs(engine::Exchange& ex) {
  const auto& inst = w_.instances;
  std::vector<trace::Time> d_leave(pts_.size(), 0);
  for (std::size_t j = 0; j < pts_.size(); ++j) {
    WaiterPoint& pt = pts_[j];
    const WaitState& x = inst[pt.instance];
    const auto [r_prev, d_prev] = previous_sync(x, pt, d_leave[j]);
    pt.r_prev = r_prev;
    pt.d_prev = d_prev;
    if (pt.nxn_instance != kNone) {
      ex.record(x.rank, x.cause_rank, kPrevious).put(static_cast<std::uint32_t>(j)).put(pt.nxn_instance);
    }
  }
  engine::Inbox questions = ex.deliver();
  for (Location d = shard_.owned.first; d < shard_.owned.last; ++d) {
    const auto& mine = nxn_by_instance_[static_cast<std::size_t>(d - shard_.owned.first)];
    for (const engine::ExchangeRecord& rec : questions.of(d)) {
      ByteReader in(rec.payload);
      auto& answer = ex.record(d, rec.source, kPreviousAnswer);
      while (!in.done()) {
        const auto point = in.get<std::uint32_t>();
        const auto instance = in.get<std::uint32_t>();
        const auto it = std::lower_bound(mine.begin(), mine.end(), std::pair<std::uint32_t, std::uint32_t>{instance, 0});
        if (it == mine.end() || it->first != instance)
          throw std::logic_error("delay: a rank asked for a collective it did not take part in");
        answer.put(PreviousAnswer{point, it->second, leave(d, it->second)});
      }
    }
  }
  engine::Inbox answers = ex.deliver();
  for (Location r = shard_.owned.first; r < shard_.owned.last; ++r)
    for (const engine::ExchangeRecord& rec : answers.of(r)) {
      ByteReader in(rec.payload);
      while (!in.done()) {
        const auto a = in.get<PreviousAnswer>();
        pts_.at(a.point).d_prev = a.call;
        d_leave[a.point] = a.leave;
      }
    }
  for (std::size_t j = 0; j < pts_.size(); ++j) {
    WaiterPoint& pt = pts_[j];
    const WaitState& x = inst[pt.instance];
    pt.t0 = pt.r_prev == kNone ? -std::numeric_limits<double>::infinity()
                               : std::min(leave(x.rank, pt.r_prev), d_leave[j]);
  }
}

// Pass 1: the waiting side's profile over I_S, in instance order.
void Replay::waiting_side() {
  for (WaiterPoint& pt : pts_) {
    const WaitState& x = w_.instances[pt.instance];
    pt.wait_enter = enter(x.rank, x.call);
    profile(x.rank, pt.r_prev, pt.t0, x.call, nullptr);
    pt.r_first = static_cast<std::uint32_t>(rbuf_.size());
    for (CallPathId c : touched_) rbuf_.push_back(PathValue{c, prof_[c]});
    pt.r_count = static_cast<std::uint32_t>(rbuf_.size() - pt.r_first);
    clear();
  }
}

// Round "points": each point to its delaying rank; dpts_ sorted as the serial pass 2 visits them.
void Replay::send_to_delayers(engine::Exchange& ex) {
  for (const WaiterPoint& pt : pts_) {
    const WaitState& x = w_.instances[pt.instance];
    auto& out = ex.record(x.rank, x.cause_rank, kPoints);
    out.put(PointHead{x.call, x.cause_call, pt.d_prev, static_cast<std::uint8_t>(x.pattern), x.seconds, pt.t0,
                      pt.wait_enter, pt.cause_enter, pt.r_count});
    for (std::uint32_t k = pt.r_first; k < pt.r_first + pt.r_count; ++k) out.put(rbuf_[k]);
  }
  rbuf_ = {};
  engine::Inbox points = ex.deliver();
  for (Location d = shard_.owned.first; d < shard_.owned.last; ++d)
    for (const engine::ExchangeRecord& rec : points.of(d)) {
      ByteReader in(rec.payload);
      while (!in.done()) {
        const auto h = in.get<PointHead>();
        DelayerPoint dp;
        dp.r = rec.source;
        dp.call = h.call;
        dp.cause_call = h.cause_call;
        dp.d = d;
        dp.w = h.w;
        dp.pattern = static_cast<Pattern>(h.pattern);
        dp.d_prev = h.d_prev;
        dp.t0 = h.t0;
        dp.wait_enter = h.wait_enter;
        dp.cause_enter = h.cause_enter;
        dp.p_first = static_cast<std::uint32_t>(pbuf_.size());
        dp.p_count = h.profile_size;
        for (std::uint32_t k = 0; k < h.profile_size; ++k) pbuf_.push_back(in.get<PathValue>());
        dpts_.push_back(std::move(dp));
      }
    }
  std::sort(dpts_.begin(), dpts_.end(), [](const DelayerPoint& a, const DelayerPoint& b) {
    return std::tie(a.d, a.cause_call, a.r, a.call) < std::tie(b.d, b.cause_call, b.r, b.call);
  });
}

// Processing time per call path (into prof_/touched_) on rank r from time t0 — inside or after
// call `from`, r's call at the pair's previous synchronisation (kNone: the start of the trace) —
// to the start of call `to`: exclusive time minus the waiting time of the wait states of the calls
// in between. What r spent in `from` after t0 is processing on its path. Returns the index range of
// those wait states; with `waiting`, adds up the ones that have a cause.
std::pair<std::uint32_t, std::uint32_t> Replay::profile(Rank r, std::uint32_t from, trace::Time t0, std::uint32_t to,
                                                        double* waiting) {
  const auto& ev = shard_.location(r).events;
  const auto& after = m_.path_after[static_cast<std::size_t>(r)];
  const auto& calls = m_.calls[static_cast<std::size_t>(r)];
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

void Replay::touch(CallPathId c) {
  if (!mark_[c]) {
    mark_[c] = 1;
    touched_.push_back(c);
  }
}

void Replay::clear() {
  for (CallPathId c : touched_) {
    prof_[c] = 0.0;
    mark_[c] = 0;
  }
  touched_.clear();
}

}  // namespace waitlab::analysis::delay_replay
