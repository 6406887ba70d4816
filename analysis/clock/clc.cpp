// clamp and clc of passes.hpp: the two logical clocks on the owned ranks. The forward passes are
// forward_replay's visit with a rule of their own; the CLC's backward pass is local to each rank
// once the limits of its logical sends have arrived (the earliest receive-side events that depend
// on them: one exchange round and one fold over the collective instances).
#include <algorithm>
#include <cmath>
#include <utility>

#include "analysis/clock/passes.hpp"

namespace waitlab::clock {

namespace {

// Scalasca 2.6's controlled logical clock runs one pass with these (docs/clock-correction.md).
constexpr double kGamma = 0.99999;  // a local interval keeps at least this share of its length
constexpr double kTick = 1e-9;      // s: the least a rank's clock advances from one event to the next
constexpr double kWindow = 100;     // the backward pass spreads a jump Δ over 100·Δ before it (slope 0.01)

// Clamping: each rank carries a shift δ_r that only grows; an event moves to
// max(t + δ_r, previous event, c) and δ_r follows it. Local intervals are kept exactly after
// the first jump, the one before a jump grows by it.
class Clamp final : public Rule {
 public:
  explicit Clamp(const Owned& owned) : owned_(owned) {
    const auto n = static_cast<std::size_t>(owned.range.size());
    shift_.assign(n, 0);
    prev_.assign(n, kNoTime);
    changes_.assign(n, {});
  }

  Time place(Rank r, std::uint32_t, Time old, Time c) override {
    const auto x = static_cast<std::size_t>(r - owned_.range.first);
    const Time base = old + shift_[x];
    Time t = base;
    if (prev_[x] > t) t = prev_[x];
    if (c > t) t = c;
    if (t != base) {
      shift_[x] = t - old;
      max_shift = std::max(max_shift, shift_[x]);
      if (!owned_[r].truth.empty()) changes_[x].push_back({old, shift_[x]});
    }
    if (t != old) ++events_moved;
    prev_[x] = t;
    return t;
  }

  // A compute interval moves with the shift of the last event at or before its start (it
  // holds no event, so the shift is constant over it and its duration is kept).
  void move_truth() {
    for (Rank r = owned_.range.first; r < owned_.range.last; ++r) {
      const auto& ch = changes_[static_cast<std::size_t>(r - owned_.range.first)];
      if (ch.empty()) continue;
      std::size_t j = 0;
      double shift = 0;
      for (trace::ComputeTruth& ct : owned_[r].truth) {
        while (j < ch.size() && ch[j].first <= ct.start) shift = ch[j++].second;
        ct.start += shift;
        ct.end += shift;
      }
    }
  }

  double max_shift = 0;
  std::uint64_t events_moved = 0;

 private:
  const Owned& owned_;
  std::vector<double> shift_, prev_;
  std::vector<std::vector<std::pair<Time, double>>> changes_;  // (old time, shift from there)
};

// The latest time s with s + l ≤ e as the floating-point sum count_violations forms: a send
// (or begin) at s keeps the condition with an end or receive at e.
Time latest_before(Time e, double l) {
  Time s = e - l;
  while (s + l > e) s = std::nextafter(s, kNoTime);
  return s;
}

// Scalasca's controlled logical clock. Forward, in happened-before order, event e of a rank
// gets
//   C(e) = max( C(p) + kTick, C(p) + γ·(t(e) − t(p)), t(e), c(e) )
// with p the rank's previous event and t the times given (C(first event) = max(t, c)). Where
// c(e) decided, the jump Δ = C(e) − (the same without c) is recorded. Backward, per rank,
// each jump is spread over the events before it: a linear ramp over 100·Δ of time, lowered
// where a logical send (a message's send, a begin an end follows) would pass the latest time
// its receivers allow. Forward, no event moves earlier and a local interval keeps at least γ
// of its length; backward, events only move later, intervals only grow, and no send passes
// its limit: the clock condition the forward pass established holds.
class Clc final : public Rule {
 public:
  Clc(const engine::Shard& shard, const Owned& owned, const Graph& g, double lmin,
      engine::Transport& transport)
      : shard_(shard), owned_(owned), g_(g), lmin_(lmin), transport_(transport) {}

  void run(trace::ClockReport& rep) {
    const engine::LocationRange range = owned_.range;
    const auto n = static_cast<std::size_t>(range.size());
    orig_.resize(n);
    for (Rank r = range.first; r < range.last; ++r) {
      const auto& ev = owned_.events(r);
      auto& o = orig_[at(r)];
      o.resize(ev.size());
      for (std::size_t i = 0; i < ev.size(); ++i) o[i] = ev[i].time;
    }
    jumps_.assign(n, {});
    rep.constraints_dropped += forward_replay(shard_, owned_, g_, lmin_, *this, transport_);
    bool any = false;
    for (const auto& j : jumps_) any = any || !j.empty();
    if (transport_.sum(any ? 1 : 0) > 0) {
      limits();
      for (Rank r = range.first; r < range.last; ++r) amortise(r);
    }
    std::uint64_t moved = 0;
    double shift = 0;
    for (Rank r = range.first; r < range.last; ++r) {
      const auto& ev = owned_.events(r);
      const auto& o = orig_[at(r)];
      for (std::size_t i = 0; i < ev.size(); ++i) {
        if (ev[i].time == o[i]) continue;
        ++moved;
        shift = std::max(shift, std::abs(ev[i].time - o[i]));
      }
      move_truth(r);
    }
    rep.events_moved += transport_.sum(moved);
    rep.max_shift = std::max(rep.max_shift, transport_.max(shift));
  }

  Time place(Rank r, std::uint32_t i, Time t, Time c) override {
    Time in = t;  // the internal rule
    if (i > 0) {
      const Time prev = owned_.events(r)[i - 1].time;
      in = std::max({prev + kTick, prev + kGamma * (t - orig_[at(r)][i - 1]), t});
    }
    if (c <= in) return in;
    jumps_[at(r)].push_back({i, in, c - in});
    return c;
  }

 private:
  struct Jump {
    std::uint32_t event;
    Time before;  // the time the internal rule gave it
    double size;  // Δ
  };
  struct Limit {
    std::uint32_t event;  // a logical send
    Time latest;          // the latest time its receivers allow it
  };

  std::size_t at(Rank r) const { return static_cast<std::size_t>(r - owned_.range.first); }

  // Per owned rank, its logical sends in event order and their limits, at the forward pass's times
  // (the backward pass moves ends and receives only later: the limits stay safe).
  void limits() {
    const trace::Matching& m = shard_.matching;
    const auto time = [&](Rank r, std::uint32_t e) { return owned_.events(r)[e].time; };
    // Per instance, the earliest end that follows a begin (Prefix: per position, the ends from
    // there on).
    std::vector<double> ends = fold_slots(
        shard_, g_, transport_, kNever, engine::exact_min, [&](std::uint32_t k, const SlotPut& put) {
          if (!g_.constrained(k)) return;
          const std::uint32_t i = g_.inst[k];
          const std::uint64_t p = g_.dep[i] == Dep::Prefix ? g_.position[k] : 0;
          put(g_.slot_first[i] + p, time(m.members[k].rank, m.members[k].end_event));
        });
    for (std::uint32_t i = 0; i < m.collectives.size(); ++i)
      if (g_.dep[i] == Dep::Prefix)
        for (std::uint64_t x = g_.slot_first[i + 1] - 1; x-- > g_.slot_first[i];)
          ends[x] = std::min(ends[x], ends[x + 1]);
    const std::vector<Time> received = message_partner_times(
        shard_, transport_, false,
        [&](std::uint32_t id) { return time(m.messages[id].receiver, m.messages[id].recv_event); });
    sends_.assign(static_cast<std::size_t>(owned_.range.size()), {});
    for (Rank r = owned_.range.first; r < owned_.range.last; ++r) {
      auto& out = sends_[at(r)];
      for (const Graph::Point& p : g_.points[at(r)]) {
        if (p.kind != Graph::kSend && p.kind != Graph::kBegin) continue;
        Time e = kNever;
        if (p.kind == Graph::kSend) {
          e = received[p.id];
        } else {
          const std::uint32_t i = g_.inst[p.id];
          e = ends[g_.slot_first[i] + (g_.dep[i] == Dep::Prefix ? g_.position[p.id] : 0)];
        }
        const Time latest = e == kNever ? kNever : latest_before(e, lmin_);
        if (!out.empty() && out.back().event == p.event) {
          out.back().latest = std::min(out.back().latest, latest);
        } else {
          out.push_back({p.event, latest});
        }
      }
    }
  }

  void amortise(Rank r) {
    auto& ev = owned_.events(r);
    const auto& sends = sends_[at(r)];
    for (const Jump& j : jumps_[at(r)]) {
      if (j.event == 0) continue;  // nothing before it
      Time tr = j.before;
      double d = j.size;
      Time tl = tr - kWindow * d;
      if (tl < ev[0].time) tl = ev[0].time;  // the ramp starts no earlier than the rank's first event
      if (!(tr > tl)) continue;
      double m = d / (tr - tl);
      // Ramps the events before `hi` (at time tr before the jump, tr + d after it) up to d;
      // where a send's slack is smaller than the ramp, from that send on, and then the events
      // before the send up to its slack, again limited by the sends before it.
      std::uint32_t hi = j.event;
      for (;;) {
        const auto below = std::lower_bound(sends.begin(), sends.end(), hi,
                                            [](const Limit& s, std::uint32_t e) { return s.event < e; });
        auto limiting = sends.end();
        double steepest = m, slack = 0;
        for (auto s = below; s != sends.begin();) {
          --s;
          const Time ts = ev[s->event].time;
          if (!(ts > tl)) break;
          const double room = std::max(0.0, s->latest - ts);
          const double slope = (d - room) / (tr - ts);
          if (slope > steepest) {
            steepest = slope;
            slack = room;
            limiting = s;
          }
        }
        const bool limited = limiting != sends.end();
        const Time from = limited ? ev[limiting->event].time : tl;
        const double base = limited ? slack : 0;
        auto s = below;
        for (std::uint32_t e = hi; e-- > 0;) {
          const Time t = ev[e].time;
          if (limited ? e < limiting->event : !(t > tl)) break;
          // Rounding never lets an event pass the next one, nor a send its limit.
          Time nt = std::min(t + base + steepest * (t - from), ev[e + 1].time);
          if (s != sends.begin() && std::prev(s)->event == e) nt = std::min(nt, (--s)->latest);
          ev[e].time = std::max(t, nt);
        }
        if (!limited || slack <= 0) break;
        hi = limiting->event;
        tr = from;
        d = slack;
        m = d / (tr - tl);
      }
    }
  }

  // A compute interval holds no event: its ends move as the time between the events around
  // them does (linearly; before the first or after the last event, with that event).
  void move_truth(Rank r) {
    auto& truth = owned_[r].truth;
    const auto& ev = owned_.events(r);
    const auto& o = orig_[at(r)];
    if (truth.empty() || ev.empty()) return;
    const auto map = [&](Time x) {
      const auto j = static_cast<std::size_t>(std::upper_bound(o.begin(), o.end(), x) - o.begin());
      if (j == 0) return x + (ev[0].time - o[0]);
      if (j == o.size()) return x + (ev[j - 1].time - o[j - 1]);
      const std::size_t i = j - 1;
      return ev[i].time + (x - o[i]) * (ev[j].time - ev[i].time) / (o[j] - o[i]);
    };
    for (trace::ComputeTruth& ct : truth) {
      ct.start = map(ct.start);
      ct.end = map(ct.end);
    }
  }

  const engine::Shard& shard_;
  const Owned& owned_;
  const Graph& g_;
  double lmin_;
  engine::Transport& transport_;
  std::vector<std::vector<Time>> orig_;    // per owned rank and event: the time given
  std::vector<std::vector<Jump>> jumps_;   // per owned rank, in event order
  std::vector<std::vector<Limit>> sends_;  // per owned rank, in event order
};

}  // namespace

void clamp(const engine::Shard& shard, const Owned& owned, const Graph& g, double lmin,
           engine::Transport& transport, trace::ClockReport& rep) {
  Clamp rule(owned);
  rep.constraints_dropped += forward_replay(shard, owned, g, lmin, rule, transport);
  rule.move_truth();
  rep.events_moved += transport.sum(rule.events_moved);
  rep.max_shift = std::max(rep.max_shift, transport.max(rule.max_shift));
}

void clc(const engine::Shard& shard, const Owned& owned, const Graph& g, double lmin,
         engine::Transport& transport, trace::ClockReport& rep) {
  Clc(shard, owned, g, lmin, transport).run(rep);
}

}  // namespace waitlab::clock
