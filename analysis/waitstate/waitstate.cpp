#include "analysis/waitstate/waitstate.hpp"

#include <algorithm>
#include <deque>
#include <limits>
#include <span>
#include <tuple>

#include "analysis/engine/fold.hpp"
#include "analysis/engine/serial_transport.hpp"
#include "analysis/trace/cells.hpp"
#include "analysis/waitstate/partners.hpp"

namespace waitlab::analysis {

using trace::Matching;
using trace::MpiOp;

namespace {

constexpr std::array<std::string_view, kPatternCount> kNames = {
    "late_sender",     "late_sender_wrong_order_same_source", "late_sender_wrong_order_different_source",
    "late_receiver",   "wait_at_barrier",                     "barrier_completion",
    "wait_at_nxn",     "nxn_completion",                      "late_broadcast",
    "early_reduce",    "early_scan",                          "wait_at_init",
    "wait_at_finalize", "init_completion"};
constexpr std::array<std::string_view, kPatternCount> kTitles = {
    "Late Sender",   "Late Sender, wrong order (same source)", "Late Sender, wrong order (different source)",
    "Late Receiver", "Wait at Barrier",                        "Barrier Completion",
    "Wait at NxN",   "NxN Completion",                         "Late Broadcast",
    "Early Reduce",  "Early Scan",                             "Wait at Init",
    "Wait at Finalize", "MPI Initialization Completion"};

// Late Sender instances remembered for the wrong-order check, per receiving rank (Scalasca
// keeps a bounded buffer of recent instances too).
constexpr std::size_t kWrongOrderWindow = 100;

// A point-to-point candidate for a call: the largest instance counts.
struct P2P {
  Rank rank;
  std::uint32_t call;
  double seconds;
  Rank cause_rank;
  std::uint32_t cause_call;
  Time send_time;  // Late Sender: the time of the awaited message's send event
  Rank source;
  bool late_sender;
  std::uint32_t order;  // within the call: the event that completes the message (ties: the first completed is blamed)
};

}  // namespace

// Scalasca's N×N class: MPI_Alltoallv (and Alltoallw) "can implement arbitrary
// communication patterns" and is ignored (scout's MpiCommunicationHandler returns before
// dispatching it); MPI_Allgatherv is N×N.
bool is_nxn_collective(MpiOp op, const WaitStateOptions& options) {
  if (op == MpiOp::Alltoallv) return options.alltoallv_nxn;
  op = trace::base_collective(op);
  return op == MpiOp::Allreduce || op == MpiOp::Allgather || op == MpiOp::Alltoall ||
         op == MpiOp::ReduceScatter;
}

std::string_view pattern_name(Pattern p) {
  return kNames[static_cast<std::size_t>(p)];
}
std::string_view pattern_title(Pattern p) {
  return kTitles[static_cast<std::size_t>(p)];
}
bool is_subset_pattern(Pattern p) {
  return p == Pattern::LateSenderWrongOrderSameSource || p == Pattern::LateSenderWrongOrderDifferentSource;
}
bool has_cause(Pattern p) {
  return p != Pattern::BarrierCompletion && p != Pattern::NxNCompletion && p != Pattern::InitCompletion &&
         !is_subset_pattern(p);
}

std::pair<std::size_t, std::size_t> WaitStateResult::of_call(Rank r, std::uint32_t call) const {
  const auto begin = instances.begin() + static_cast<std::ptrdiff_t>(rank_first[static_cast<std::size_t>(r)]);
  const auto end = instances.begin() + static_cast<std::ptrdiff_t>(rank_first[static_cast<std::size_t>(r) + 1]);
  const auto lo = std::lower_bound(begin, end, call, [](const WaitState& a, std::uint32_t c) { return a.call < c; });
  const auto hi = std::upper_bound(lo, end, call, [](std::uint32_t c, const WaitState& a) { return c < a.call; });
  return {static_cast<std::size_t>(lo - instances.begin()), static_cast<std::size_t>(hi - instances.begin())};
}

double WaitStateResult::ratio(Pattern p) const {
  const double denom = wall_time * static_cast<double>(ranks);
  return denom > 0 ? total[static_cast<std::size_t>(p)] / denom : 0.0;
}

namespace {

// Point-to-point: one Late Sender candidate per message on its receiver and one Late Receiver
// candidate on its sender (for the ranks the shard owns; the partner's times come with `times`), in
// program order per rank; within a call the largest first, Late Sender before Late Receiver on ties,
// and among equal waits the message completed first (Scalasca's choice in an MPI_Waitall; the sort
// is total, so the blamed rank never depends on the sort's luck).
std::vector<P2P> p2p_candidates(const engine::Shard& shard, const Matching& m, const std::vector<MessageTimes>& times) {
  const auto enter = [&](Rank r, std::uint32_t call) { return shard.time(r, m.calls[r][call].enter); };
  const auto leave = [&](Rank r, std::uint32_t call) { return shard.time(r, m.calls[r][call].leave); };
  std::vector<P2P> p2p;
  p2p.reserve(m.messages.size() * 2);
  for (std::size_t i = 0; i < m.messages.size(); ++i) {
    const trace::Message& msg = m.messages[i];
    if (shard.owned.holds(msg.receiver)) {
      const Time recv_enter = enter(msg.receiver, msg.recv_done_call);
      const Time recv_leave = leave(msg.receiver, msg.recv_done_call);
      const double ls = std::max(0.0, std::min(times[i].send_enter, recv_leave) - recv_enter);
      // The wrong-order test compares the send events' times, not the send calls' Enters
      // (Scalasca's MPI_LATESENDER_WO: they differ when a call's Enter and its send event do).
      p2p.push_back(P2P{msg.receiver, msg.recv_done_call, ls, msg.sender, msg.send_call, times[i].send_event,
                        msg.sender, true, msg.recv_event});
    }
    if (shard.owned.holds(msg.sender)) {
      const Time done_enter = enter(msg.sender, msg.send_done_call);
      const Time done_leave = leave(msg.sender, msg.send_done_call);
      const Time post_enter = times[i].post_enter;
      const double lr = done_leave > post_enter ? std::max(0.0, post_enter - done_enter) : 0.0;
      p2p.push_back(
          P2P{msg.sender, msg.send_done_call, lr, msg.receiver, msg.recv_post_call, 0, msg.sender, false, msg.send_event});
    }
  }
  std::sort(p2p.begin(), p2p.end(), [](const P2P& a, const P2P& b) {
    return std::tie(a.rank, a.call, b.seconds, b.late_sender, a.order) <
           std::tie(b.rank, b.call, a.seconds, a.late_sender, b.order);
  });
  return p2p;
}

// The largest candidate of each call becomes a Late Sender or Late Receiver instance (into
// out); a Late Sender that a later message of the same receiver reveals as received in the
// wrong order is listed in `rebooked` (instance index, subset pattern).
void point_to_point_waits(const std::vector<P2P>& p2p, std::vector<WaitState>& out,
                          std::vector<std::pair<std::size_t, Pattern>>& rebooked) {
  // Late Sender, wrong order: per receiving rank, recent Late Sender instances in a window.
  struct Recent {
    std::size_t instance;
    Time send_time;
    Rank source;
  };
  std::deque<Recent> recent;
  Rank recent_rank = trace::kNoRank;

  for (std::size_t i = 0; i < p2p.size();) {
    std::size_t j = i;
    while (j < p2p.size() && p2p[j].rank == p2p[i].rank && p2p[j].call == p2p[i].call) ++j;
    const P2P& best = p2p[i];  // the largest candidate of this call
    if (best.rank != recent_rank) {
      recent.clear();
      recent_rank = best.rank;
    }
    // Every message this call receives: does it reveal an earlier Late Sender as wrong order?
    for (std::size_t k = i; k < j; ++k) {
      if (!p2p[k].late_sender) continue;
      for (auto it = recent.begin(); it != recent.end();) {
        if (it->send_time > p2p[k].send_time) {
          rebooked.emplace_back(it->instance, it->source == p2p[k].source
                                                  ? Pattern::LateSenderWrongOrderSameSource
                                                  : Pattern::LateSenderWrongOrderDifferentSource);
          it = recent.erase(it);
        } else {
          ++it;
        }
      }
    }
    if (best.seconds > kTimeResolution) {
      const Pattern p = best.late_sender ? Pattern::LateSender : Pattern::LateReceiver;
      out.push_back(WaitState{best.rank, best.call, p, best.seconds, best.cause_rank, best.cause_call});
      if (best.late_sender) {
        recent.push_back(Recent{out.size() - 1, best.send_time, best.source});
        if (recent.size() > kWrongOrderWindow) recent.pop_front();
      }
    }
    i = j;
  }
}

// The wait states of collectives, MPI_Init and MPI_Finalize of the owned members (into out), each
// from what its instance's members combined (`sums`).
void collective_waits(const engine::Shard& shard, const Matching& m, const CollectiveSummaries& sums,
                      const WaitStateOptions& options, std::vector<WaitState>& out) {
  const CommPositions positions(shard);
  const auto add = [&](const trace::CollMember& me, Pattern p, double v, Rank cause_rank, std::uint32_t cause_call) {
    if (v > kTimeResolution) out.push_back(WaitState{me.rank, me.call, p, v, cause_rank, cause_call});
  };
  for (std::size_t k = 0; k < m.collectives.size(); ++k) {
    const trace::CollInstance& inst = m.collectives[k];
    const CollectiveSummary& sum = sums.of[k];
    const std::span<const trace::CollMember> mine(m.members.data() + inst.first, inst.count);
    const MemberMark& last_in = sum.latest;  // the member that began last (first such in communicator order)
    const auto barrier_like = [&](Pattern wait, Pattern completion, bool with_completion) {
      for (const trace::CollMember& me : mine) {
        add(me, wait, std::min(last_in.begin, me.end) - me.begin, last_in.rank, last_in.call);
        if (with_completion) add(me, completion, me.end - std::max(sum.min_end, last_in.begin), trace::kNoRank, 0);
      }
    };
    switch (trace::base_collective(inst.op)) {
      case MpiOp::Init:
        barrier_like(Pattern::WaitAtInit, Pattern::InitCompletion, true);
        break;
      case MpiOp::Finalize:
        barrier_like(Pattern::WaitAtFinalize, Pattern::WaitAtFinalize, false);
        break;
      case MpiOp::Barrier:
        barrier_like(Pattern::WaitAtBarrier, Pattern::BarrierCompletion, true);
        break;
      case MpiOp::Bcast:
      case MpiOp::Scatter:
        if (!sum.root.found()) break;
        for (const trace::CollMember& me : mine)
          if (me.rank != inst.root)
            add(me, Pattern::LateBroadcast, std::min(sum.root.begin, me.end) - me.begin, sum.root.rank, sum.root.call);
        break;
      case MpiOp::Reduce:
      case MpiOp::Gather: {
        if (!sum.root.found() || !sum.latest_nonroot.found()) break;
        for (const trace::CollMember& me : mine)
          if (me.rank == inst.root)
            add(me, Pattern::EarlyReduce, std::min(sum.latest_nonroot.begin, me.end) - me.begin,
                sum.latest_nonroot.rank, sum.latest_nonroot.call);
        break;
      }
      case MpiOp::Scan:
      case MpiOp::Exscan: {
        const MemberMark* all = sums.scan_members.data() + sums.scan_first[k];
        MemberMark latest;
        std::uint32_t next = 0;
        for (const trace::CollMember& me : mine) {
          // the last to begin up to me, first such in communicator order (mine are in that order)
          for (const std::uint32_t at = positions.of(inst.comm, me.rank); next <= at; ++next)
            latest = later_begin(latest, all[next]);
          add(me, Pattern::EarlyScan, std::min(latest.begin, me.end) - me.begin, latest.rank, latest.call);
        }
        break;
      }
      default:
        if (is_nxn_collective(inst.op, options)) barrier_like(Pattern::WaitAtNxN, Pattern::NxNCompletion, true);
        break;
    }
  }
}

// The totals of the patterns, folded in rank order (rule D3a: the serial bits on any number of
// processes).
struct Totals {
  std::array<double, kPatternCount> total{};
  std::array<std::uint64_t, kPatternCount> count{};
  std::array<double, kPatternCount> max{};
  double total_waiting = 0;
};

// The instances sorted by (rank, call, pattern) with each rank's first, the wrong-order subset
// booked besides them, the table per (pattern, call path, rank) of the owned ranks and the totals
// over all ranks.
void tabulate(const engine::Shard& shard, const Matching& m, const std::vector<std::pair<std::size_t, Pattern>>& rebooked,
              engine::Transport& transport, WaitStateResult& res) {
  auto& out = res.instances;
  // Re-book wrong-order instances: they stay Late Sender instances (the subset is listed in
  // the table), so remember them as extra rows.
  std::vector<WaitState> subset;
  for (const auto& [idx, p] : rebooked) {
    WaitState w = out[idx];
    w.pattern = p;
    subset.push_back(w);
  }
  std::sort(out.begin(), out.end(), [](const WaitState& a, const WaitState& b) {
    return std::tie(a.rank, a.call, a.pattern) < std::tie(b.rank, b.call, b.pattern);
  });
  res.rank_first.assign(res.ranks + 1, 0);
  for (const auto& x : out) ++res.rank_first[static_cast<std::size_t>(x.rank) + 1];
  for (std::size_t r = 0; r < res.ranks; ++r) res.rank_first[r + 1] += res.rank_first[r];

  trace::CellTable<std::pair<double, std::uint64_t>> table;
  for (const auto* rows : {&out, &subset})
    for (const WaitState& w : *rows) {
      auto& e = table.at(static_cast<std::uint8_t>(w.pattern), m.calls[w.rank][w.call].path, w.rank);
      e.first += w.seconds;
      ++e.second;
    }
  res.table.reserve(table.size());
  for (const auto& [cell, v] : table.sorted())
    res.table.push_back(WaitEntry{static_cast<Pattern>(cell.kind), cell.path, cell.rank, v.first, v.second});

  // Per pattern the rows come from one list only (the subsets are never instances), each in rank
  // order: so rank by rank, the instances then the subset rows continue the serial fold.
  const auto book = [](const WaitState& w, Totals& t) {
    const auto p = static_cast<std::size_t>(w.pattern);
    t.total[p] += w.seconds;
    ++t.count[p];
    t.max[p] = std::max(t.max[p], w.seconds);
    if (!is_subset_pattern(w.pattern)) t.total_waiting += w.seconds;
  };
  std::size_t next_subset = 0;
  const Totals totals = engine::chained_fold(transport, shard.owned, Totals{}, [&](engine::Location l, Totals& t) {
    const auto r = static_cast<std::size_t>(l);
    for (std::size_t i = res.rank_first[r]; i < res.rank_first[r + 1]; ++i) book(out[i], t);
    for (; next_subset < subset.size() && subset[next_subset].rank == l; ++next_subset) book(subset[next_subset], t);
  });
  res.total = totals.total;
  res.count = totals.count;
  res.max = totals.max;
  res.total_waiting = totals.total_waiting;
  const double denom = res.wall_time * static_cast<double>(res.ranks);
  res.wait_ratio = denom > 0 ? res.total_waiting / denom : 0.0;
}

// The time from the earliest to the latest event of any rank.
double wall_time(const engine::Shard& shard, engine::Transport& transport) {
  Time begin = std::numeric_limits<Time>::infinity(), end = -std::numeric_limits<Time>::infinity();
  for (const trace::Location& l : shard.locations)
    if (!l.events.empty()) {
      begin = std::min(begin, l.events.front().time);
      end = std::max(end, l.events.back().time);
    }
  begin = transport.min(begin);
  end = transport.max(end);
  return (end == -std::numeric_limits<Time>::infinity() ? 0 : end) -
         (begin == std::numeric_limits<Time>::infinity() ? 0 : begin);
}

}  // namespace

WaitStateResult wait_states(const engine::Shard& shard, const Matching& m, engine::Transport& transport,
                            const WaitStateOptions& options) {
  WaitStateResult res;
  res.options = options;
  res.ranks = static_cast<std::size_t>(shard.ranks);
  res.wall_time = wall_time(shard, transport);
  std::vector<std::pair<std::size_t, Pattern>> rebooked;  // instance index -> subset pattern
  point_to_point_waits(p2p_candidates(shard, m, partner_times(shard, m, transport)), res.instances, rebooked);
  collective_waits(shard, m, collective_summaries(shard, m, transport), options, res.instances);
  tabulate(shard, m, rebooked, transport, res);
  return res;
}

WaitStateResult wait_states(const trace::Trace& tr, const Matching& m, const WaitStateOptions& options) {
  engine::SerialTransport serial;
  return wait_states(engine::Shard::whole(tr), m, serial, options);
}

}  // namespace waitlab::analysis
