// The synchronisation intervals of the delay replay (replay.hpp): which wait states are points,
// the previous synchronisation of each pair, the waiting side's profile, and what the delaying
// side is sent. Exchange rounds, waiter → delayer unless said otherwise:
//   causes     every wait with a cause: its call, the cause's call, where an interval starting
//              there starts on the waiter (its Leave, less its completion at a collective: the
//              delayer's pairwise points), answered with the cause call's Enter and that start;
//   previous   for an interval that starts at a synchronising N-to-N collective: the instance,
//              answered with the delayer's call there and where an interval starts on it;
//   points     each point: calls, w, pattern, the interval (d's previous call, t0 on each side),
//              the keys of the backward order and r's sparse profile over I_S.
// Before them, one fold along the processes gives each collective instance what its members'
// completion times need (find_completions).
#include <algorithm>
#include <iterator>
#include <map>

#include "analysis/delay/replay.hpp"
#include "analysis/engine/bytes.hpp"
#include "analysis/waitstate/partners.hpp"

namespace waitlab::analysis::delay_replay {

using engine::ByteReader;
using engine::Location;

namespace {

constexpr std::uint64_t kCauses = 0, kCausesAnswer = 1, kPrevious = 2, kPreviousAnswer = 3, kPoints = 4;

// A cause record: the waiting call, the cause's call, the waiting call's sync_start, pairwise or not.
struct CauseRecord {
  std::uint32_t instance;  // the waiter's, echoed in the answer
  std::uint32_t call;
  std::uint32_t cause_call;
  trace::Time start;
  std::uint8_t pairwise;
  std::uint8_t late_receiver;
};
struct CauseAnswer {
  std::uint32_t instance;
  trace::Time enter, start;  // the cause call's Enter and sync_start
};
struct PreviousAnswer {
  std::uint32_t point;  // the waiter's, echoed
  std::uint32_t call;
  trace::Time start;
};
struct PointHead {
  std::uint32_t call, cause_call, d_prev;
  std::uint8_t pattern;
  double w;
  trace::Time t0_d, wait_enter, cause_enter;
  std::uint32_t profile_size;
};

bool is_one_to_n(trace::MpiOp op) {
  op = trace::base_collective(op);
  return op == trace::MpiOp::Bcast || op == trace::MpiOp::Scatter;
}
bool is_n_to_one(trace::MpiOp op) {
  op = trace::base_collective(op);
  return op == trace::MpiOp::Reduce || op == trace::MpiOp::Gather;
}

}  // namespace

std::uint32_t Replay::collective_of(Rank r, std::uint32_t call) const {
  const std::uint32_t k = member_of_[static_cast<std::size_t>(r - shard_.owned.first)][call];
  return k == kNone ? kNone : member_instance_[k];
}

trace::Time Replay::sync_start(Rank r, std::uint32_t call) const {
  const std::uint32_t k = member_of_[static_cast<std::size_t>(r - shard_.owned.first)][call];
  if (k == kNone || trace::is_scan(m_.collectives[member_instance_[k]].op)) return leave(r, call);
  const trace::Time end = m_.members[k].end;
  const auto [earliest_end, begin] = completion_refs_[member_instance_[k]];
  const trace::Time completion = std::max(0.0, end - std::max(earliest_end, std::min(begin, end)));
  return completion > 0 ? leave(r, call) - completion : leave(r, call);
}

// Scalasca's completion of a collective's members (scout's MPI.pattern, MPI_COLLECTIVE and
// MPI_SYNC_COLLECTIVE; MpiCommunicationHandler.cpp): member q completes in
// max(0, F_q − max(E, min(B, F_q))), F its CollEnd, E the earliest CollEnd among the instance's
// synchronising members, B the root's begin at a 1-to-N, the last sender's at an N-to-1, the last
// begin elsewhere. The synchronising members: at a 1-to-N the non-roots that waited for the root
// (a Late Broadcast), at an N-to-1 the root and the last non-root to begin, elsewhere (barrier,
// N-to-N, MPI_Init, MPI_Finalize) every member. A scan is no such point in Scalasca: none there.
// An interval starting at the collective starts on each rank at its Leave less its completion.
// E over the 1-to-N and N-to-1 members is one fold of exact minima along the processes.
void Replay::find_completions() {
  const CollectiveSummaries sums = collective_summaries(shard_, m_, transport_);
  const std::size_t n = m_.collectives.size();
  std::vector<trace::Time> mine(n, std::numeric_limits<trace::Time>::infinity());
  for (const WaitState& x : w_.instances) {
    if (x.pattern != Pattern::LateBroadcast) continue;
    const std::uint32_t k = member_of_[static_cast<std::size_t>(x.rank - shard_.owned.first)][x.call];
    if (k != kNone) mine[member_instance_[k]] = std::min(mine[member_instance_[k]], m_.members[k].end);
  }
  for (std::size_t i = 0; i < n; ++i) {
    const trace::CollInstance& inst = m_.collectives[i];
    if (!is_n_to_one(inst.op)) continue;
    const MemberMark& last = sums.of[i].latest_nonroot;
    for (std::uint32_t k = inst.first; k < inst.first + inst.count; ++k) {
      const trace::CollMember& mem = m_.members[k];
      if (mem.rank == inst.root || (last.found() && mem.rank == last.rank && mem.call == last.call))
        mine[i] = std::min(mine[i], mem.end);
    }
  }
  const auto earliest = engine::decode<std::vector<trace::Time>>(transport_.chain(engine::encode(mine), [&](engine::Bytes in) {
    auto all = engine::decode<std::vector<trace::Time>>(in);
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = std::min(all[i], mine[i]);
    return engine::encode(all);
  }));
  completion_refs_.resize(n);
  always_sync_.assign(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const trace::CollInstance& inst = m_.collectives[i];
    const CollectiveSummary& s = sums.of[i];
    const trace::MpiOp op = trace::base_collective(inst.op);
    always_sync_[i] = op == trace::MpiOp::Barrier || op == trace::MpiOp::Init || op == trace::MpiOp::Finalize ||
                      (is_nxn_collective(inst.op, w_.options) && s.latest.found() && s.min_end > s.latest.begin);
    if (is_one_to_n(inst.op))
      completion_refs_[i] = {earliest[i], s.root.begin};
    else if (is_n_to_one(inst.op))
      completion_refs_[i] = {earliest[i], s.latest_nonroot.begin};
    else
      completion_refs_[i] = {s.min_end, s.latest.begin};
  }
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
    if (!is_sync_wait(x)) continue;
    const bool nxn = collective_of(x.rank, x.call) != kNone && is_nxn_sync(x.pattern);
    ex.record(x.rank, x.cause_rank, kCauses)
        .put(CauseRecord{i, x.call, x.cause_call, sync_start(x.rank, x.call), !nxn,
                         x.pattern == Pattern::LateReceiver});
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
        answer.put(CauseAnswer{c.instance, enter(d, c.cause_call), sync_start(d, c.cause_call)});
        if (c.pairwise)  // d received what the waiting sender of a Late Receiver sent
          sequence[static_cast<std::size_t>(d - owned.first)].emplace_back(
              rec.source, c.call, 1,
              PeerCall{rec.source, c.cause_call, c.call, c.start,
                       c.late_receiver ? std::max(0.0, c.start - leave(d, c.cause_call)) : 0.0});
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
    if (!is_sync_wait(x)) continue;
    if (collective_of(x.rank, x.call) != kNone && is_nxn_sync(x.pattern)) continue;
    const trace::Time gap =
        x.pattern == Pattern::LateReceiver ? std::max(0.0, leave(x.rank, x.call) - of_instance[i].start) : 0.0;
    sequence[static_cast<std::size_t>(x.rank - owned.first)].emplace_back(
        x.rank, x.call, 0, PeerCall{x.cause_rank, x.call, x.cause_call, of_instance[i].start, gap});
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

// The N-to-N collectives that synchronise their members: those in which some member waited with
// a cause (an OR over the processes) and those that always do (always_sync_).
void Replay::mark_sync_collectives() {
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
  for (std::size_t i = 0; i < waited.size(); ++i) waited[i] |= always_sync_[i];
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
// last synchronising N-to-N collective (mark_sync_collectives) both took part in (then d's call
// is asked of d: pt.nxn_instance).
std::pair<std::uint32_t, std::uint32_t> Replay::previous_sync(const WaitState& x, WaiterPoint& pt,
                                                              trace::Time& d_start) const {
  const Rank r = x.rank, d = x.cause_rank;
  const std::uint32_t before = x.call;
  std::pair<std::uint32_t, std::uint32_t> best{kNone, kNone};
  const auto& p = peers_[static_cast<std::size_t>(r - shard_.owned.first)];
  auto it = std::lower_bound(p.begin(), p.end(), PeerCall{d, before, 0, 0},
                             [](const PeerCall& a, const PeerCall& b) { return a.key() < b.key(); });
  if (it != p.begin() && std::prev(it)->peer == d) {
    best = {std::prev(it)->call, std::prev(it)->peer_call};
    d_start = std::prev(it)->peer_start;
    pt.lr_gap = std::prev(it)->lr_gap;
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
      pt.lr_gap = 0;
      break;
    }
  }
  return best;
}

// Round "previous": each point's interval; d's call and Leave at a waited collective asked of d.
void Replay::find_previous_syncs(engine::Exchange& ex) {
  const auto& inst = w_.instances;
  std::vector<trace::Time> d_start(pts_.size(), 0);
  for (std::size_t j = 0; j < pts_.size(); ++j) {
    WaiterPoint& pt = pts_[j];
    const WaitState& x = inst[pt.instance];
    const auto [r_prev, d_prev] = previous_sync(x, pt, d_start[j]);
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
        answer.put(PreviousAnswer{point, it->second, sync_start(d, it->second)});
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
        d_start[a.point] = a.start;
      }
    }
  // After a message both sides start at the earlier Leave (Scalasca's completion at either end
  // of a message is that Leave's distance to the other), after a collective each at its own
  // Leave less its completion there.
  for (std::size_t j = 0; j < pts_.size(); ++j) {
    WaiterPoint& pt = pts_[j];
    const WaitState& x = inst[pt.instance];
    if (pt.r_prev == kNone) {
      pt.t0 = pt.t0_d = -std::numeric_limits<double>::infinity();
    } else if (const std::uint32_t c = collective_of(x.rank, pt.r_prev); c != kNone && !trace::is_scan(m_.collectives[c].op)) {
      pt.t0 = sync_start(x.rank, pt.r_prev);
      pt.t0_d = d_start[j];
    } else {
      pt.t0 = pt.t0_d = std::min(leave(x.rank, pt.r_prev), d_start[j]);
    }
  }
  // Scalasca's Late Receiver completion is never positive: where an interval starts at a Late
  // Receiver whose sender left its call after the receiver left its own, scout starts the
  // sender's side at its own Leave and drops that much of its processing.
  lr_at_stake_.assign(static_cast<std::size_t>(shard_.owned.size()), 0.0);
  for (const WaiterPoint& pt : pts_)
    lr_at_stake_[static_cast<std::size_t>(inst[pt.instance].rank - shard_.owned.first)] += pt.lr_gap;
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
    out.put(PointHead{x.call, x.cause_call, pt.d_prev, static_cast<std::uint8_t>(x.pattern), x.seconds, pt.t0_d,
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
        dp.t0_d = h.t0_d;
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
    if (!is_interval_wait(it->pattern)) continue;
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
