// forward_replay of passes.hpp: the logical clocks' visit in happened-before order, over the
// engine's processes.
//
// Each process advances its owned ranks as far as what it knows allows (a rank stops at an event
// whose constraint's source has no final time yet), then every process takes part in one exchange
// round: the final times of sends whose receiver, and of releasing begins whose instance has
// members, on another process travel to it, and wake the ranks waiting for them. Rounds repeat
// until every rank has finished. An event's new time depends only on its rank's earlier events and
// on the final times of the events it depends on, so the order of the visit cannot show (rule D7).
// A round in which no process placed an event is a global standstill: every unfinished rank waits
// for another (a cycle), and the process owning the lowest unfinished rank visits its blocked event
// without the constraints that are not ready — what the one-process visit does at the same point.
#include <algorithm>
#include <limits>

#include "analysis/clock/passes.hpp"
#include "analysis/engine/exchange.hpp"

namespace waitlab::clock {

namespace {

constexpr std::uint64_t kBeginKey = std::uint64_t{1} << 63;  // a begin's record: kBeginKey | instance

class Forward {
 public:
  Forward(const engine::Shard& shard, const Owned& owned, const Graph& g, double lmin, Rule& rule,
          engine::Transport& transport)
      : shard_(shard), m_(shard.matching), owned_(owned), g_(g), lmin_(lmin), rule_(rule), transport_(transport),
        exchange_(transport, shard.partition, kClockChannel) {}

  std::uint64_t run() {
    const auto n = static_cast<std::size_t>(shard_.owned.size());
    pos_.assign(n, 0);
    cur_.assign(n, 0);
    queued_.assign(n, 0);
    sent_.assign(m_.messages.size(), kNoTime);
    arrived_.assign(m_.messages.size(), 0);
    st_.assign(m_.collectives.size(), InstState{});
    prepare_prefixes();
    prepare_mailboxes();
    for (Rank r = shard_.owned.last; r-- > shard_.owned.first;) wake(r);
    for (;;) {
      drain();
      receive(exchange_.deliver());
      // Placed in this round, a forced visit at the end of the last one included: its records were
      // delivered in this round, so a round with none placed anywhere is a standstill.
      const std::uint64_t placed = transport_.sum(placed_);
      placed_ = 0;
      Rank mine = shard_.owned.first;  // the lowest unfinished owned rank
      while (mine < shard_.owned.last && finished(mine)) ++mine;
      const double lowest = transport_.min(mine < shard_.owned.last ? static_cast<double>(mine) : kNever);
      if (lowest == kNever) break;
      if (placed == 0 && shard_.owned.holds(static_cast<Rank>(lowest))) advance(static_cast<Rank>(lowest), true);
    }
    return transport_.sum(dropped_);
  }

 private:
  struct InstState {
    std::uint32_t done = 0;  // releasing begins known
    std::uint32_t ptr = 0;   // Prefix: positions [0, ptr) passed
    double max = kNoTime;    // latest begin known (Prefix: of the positions passed)
  };

  std::size_t at(Rank r) const { return static_cast<std::size_t>(r - shard_.owned.first); }
  bool finished(Rank r) const { return pos_[at(r)] == owned_.events(r).size(); }

  void wake(Rank r) {
    if (queued_[at(r)]) return;
    queued_[at(r)] = 1;
    stack_.push_back(r);
  }

  void drain() {
    while (!stack_.empty()) {
      const Rank r = stack_.back();
      stack_.pop_back();
      queued_[at(r)] = 0;
      advance(r, false);
    }
  }

  // Prefix instances: per position, the owned member there (kNone if none), its begin once known,
  // and, once passed, the latest begin up to it.
  void prepare_prefixes() {
    if (!g_.any_prefix) return;
    member_at_.assign(g_.slots(), kNone);
    value_.assign(g_.slots(), kNoTime);
    known_.assign(g_.slots(), 0);
    for (std::uint32_t k = 0; k < m_.members.size(); ++k)
      if (g_.inst[k] != kNone && g_.dep[g_.inst[k]] == Dep::Prefix) member_at_[g_.slot_first[g_.inst[k]] + g_.position[k]] = k;
    for (std::uint32_t i = 0; i < m_.collectives.size(); ++i)
      if (g_.dep[i] == Dep::Prefix) pass(i);
  }

  // Per communicator, the processes (other than this one) owning members of it, each with the
  // location its records go to.
  void prepare_mailboxes() {
    const auto& comms = shard_.defs.comms;
    mailboxes_.assign(comms.size(), {});
    for (std::size_t c = 0; c < comms.size(); ++c) {
      auto& to = mailboxes_[c];
      for (Rank member : comms[c].members) {
        if (member < 0 || member >= shard_.ranks) continue;
        const int q = shard_.partition.owner(member);
        if (q != transport_.self()) to.push_back(shard_.partition.range(q).first);
      }
      std::sort(to.begin(), to.end());
      to.erase(std::unique(to.begin(), to.end()), to.end());
    }
  }

  // Is the constraint of point p satisfiable yet; if so, its bound (before l_min).
  bool ready(const Graph::Point& p, double& bound) const {
    if (p.kind == Graph::kRecv) {
      const trace::Message& msg = m_.messages[p.id];
      if (shard_.owned.holds(msg.sender)) {
        if (pos_[at(msg.sender)] <= msg.send_event) return false;
        bound = owned_.events(msg.sender)[msg.send_event].time;
        return true;
      }
      bound = sent_[p.id];
      return arrived_[p.id] != 0;
    }
    const std::uint32_t k = p.id, i = g_.inst[k];
    const InstState& s = st_[i];
    switch (g_.dep[i]) {
      case Dep::All:
      case Dep::FromRoot:
      case Dep::ToRoot:
        if (s.done < g_.releasers[i]) return false;
        bound = s.max;
        return true;
      case Dep::Prefix:
        if (s.ptr <= g_.position[k]) return false;
        bound = value_[g_.slot_first[i] + g_.position[k]];
        return true;
      case Dep::None:
        break;
    }
    return true;
  }

  // A releasing begin of instance i at communicator position `position` has its final time t.
  void begun(std::uint32_t i, std::uint32_t position, Time t) {
    InstState& s = st_[i];
    if (g_.dep[i] == Dep::Prefix) {
      value_[g_.slot_first[i] + position] = t;  // its begin time until the prefix passes it
      known_[g_.slot_first[i] + position] = 1;
      pass(i);
      return;
    }
    s.max = std::max(s.max, t);
    if (++s.done == g_.releasers[i]) {
      const trace::CollInstance& ci = m_.collectives[i];
      for (std::uint32_t x = ci.first; x < ci.first + ci.count; ++x)
        if (g_.constrained(x)) wake(m_.members[x].rank);
    }
  }

  // Moves a prefix past the positions whose begin is known (or does not matter); a position passed
  // holds the latest begin of the positions up to it, its own included.
  void pass(std::uint32_t i) {
    InstState& s = st_[i];
    const std::uint64_t first = g_.slot_first[i];
    while (s.ptr < g_.size[i]) {
      const std::uint64_t x = first + s.ptr;
      if (g_.prefix_releases[x]) {
        if (!known_[x]) break;
        s.max = std::max(s.max, value_[x]);
      }
      value_[x] = s.max;
      if (member_at_[x] != kNone && g_.constrained(member_at_[x])) wake(m_.members[member_at_[x]].rank);
      ++s.ptr;
    }
  }

  void release(const Graph::Point& p, Time t) {
    if (p.kind == Graph::kSend) {
      const trace::Message& msg = m_.messages[p.id];
      if (shard_.owned.holds(msg.receiver)) wake(msg.receiver);
      else exchange_.record(msg.sender, msg.receiver, g_.pair_index[p.id]).put(t);
      return;
    }
    const std::uint32_t k = p.id, i = g_.inst[k];
    begun(i, g_.position[k], t);
    for (Location box : mailboxes_[m_.collectives[i].comm])
      exchange_.record(m_.members[k].rank, box, kBeginKey | i).put(t).put(g_.position[k]);
  }

  // What the other processes' ranks released in this round.
  void receive(const engine::Inbox& inbox) {
    for (Location l = shard_.owned.first; l < shard_.owned.last; ++l)
      for (const engine::ExchangeRecord& r : inbox.of(l)) {
        engine::ByteReader in(r.payload);
        if ((r.key & kBeginKey) == 0) {
          // The message is the key-th of its (sender, receiver) pair in the matching's order.
          const auto first = std::lower_bound(m_.messages.begin(), m_.messages.end(), std::pair(r.source, l),
                                              [](const trace::Message& msg, const std::pair<Rank, Rank>& key) {
                                                return std::pair(msg.sender, msg.receiver) < key;
                                              });
          const auto id = static_cast<std::size_t>(first - m_.messages.begin()) + static_cast<std::size_t>(r.key);
          sent_[id] = in.get<Time>();
          arrived_[id] = 1;
          wake(l);
          continue;
        }
        const auto i = static_cast<std::uint32_t>(r.key & ~kBeginKey);
        const Time t = in.get<Time>();
        begun(i, in.get<std::uint32_t>(), t);
      }
  }

  void advance(Rank r, bool force) {
    auto& ev = owned_.events(r);
    const auto& pts = g_.points[at(r)];
    std::size_t& pos = pos_[at(r)];
    std::size_t& cur = cur_[at(r)];
    while (pos < ev.size()) {
      const auto i = static_cast<std::uint32_t>(pos);
      std::size_t end = cur;
      double c = kNoTime;
      std::uint64_t dropped = 0;
      for (; end < pts.size() && pts[end].event == i; ++end) {
        const Graph::Point& p = pts[end];
        if (p.kind != Graph::kRecv && p.kind != Graph::kEnd) continue;
        double bound = kNoTime;
        if (ready(p, bound)) {
          c = std::max(c, bound + lmin_);
        } else if (force) {
          ++dropped;
        } else {
          return;  // woken again by whatever releases it
        }
      }
      if (force) {
        dropped_ += dropped;
        force = false;
      }
      const Time t = rule_.place(r, i, ev[i].time, c);
      ev[i].time = t;
      ++pos;
      ++placed_;
      for (std::size_t x = cur; x < end; ++x)
        if (pts[x].kind == Graph::kSend || pts[x].kind == Graph::kBegin) release(pts[x], t);
      cur = end;
    }
  }

  const engine::Shard& shard_;
  const trace::Matching& m_;
  const Owned& owned_;
  const Graph& g_;
  double lmin_;
  Rule& rule_;
  engine::Transport& transport_;
  engine::Exchange exchange_;
  std::uint64_t dropped_ = 0, placed_ = 0;
  std::vector<std::size_t> pos_;  // next event per owned rank
  std::vector<std::size_t> cur_;  // next point per owned rank
  std::vector<char> queued_;
  std::vector<Rank> stack_;
  std::vector<Time> sent_;     // per message whose sender is elsewhere: the send's final time
  std::vector<char> arrived_;  // … once it arrived
  std::vector<InstState> st_;
  std::vector<std::uint32_t> member_at_;  // per Prefix slot
  std::vector<double> value_;             // per Prefix slot: the begin there, then (passed) the latest up to it
  std::vector<char> known_;               // per Prefix slot: its begin is known
  std::vector<std::vector<Location>> mailboxes_;  // per communicator
};

}  // namespace

std::uint64_t forward_replay(const engine::Shard& shard, const Owned& owned, const Graph& g, double lmin, Rule& rule,
                             engine::Transport& transport) {
  return Forward(shard, owned, g, lmin, rule, transport).run();
}

}  // namespace waitlab::clock
