#include "analysis/trace/clock.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <utility>
#include <vector>

#include "analysis/trace/match.hpp"

namespace waitlab::trace {

bool parse_clock_mode(const std::string& text, ClockOptions::Mode& mode) {
  using M = ClockOptions::Mode;
  for (M m : {M::Auto, M::None, M::Linear, M::Clamp, M::LinearAndClamp, M::Clc}) {
    if (text == clock_mode_name(m)) {
      mode = m;
      return true;
    }
  }
  return false;
}

const char* clock_mode_name(ClockOptions::Mode mode) {
  switch (mode) {
    case ClockOptions::Mode::Auto:
      return "auto";
    case ClockOptions::Mode::None:
      return "none";
    case ClockOptions::Mode::Linear:
      return "linear";
    case ClockOptions::Mode::Clamp:
      return "clamp";
    case ClockOptions::Mode::LinearAndClamp:
      return "linear+clamp";
    case ClockOptions::Mode::Clc:
      return "clc";
  }
  return "?";
}

namespace {

constexpr std::uint32_t kNone = 0xffffffffu;
constexpr double kNoTime = -std::numeric_limits<double>::infinity();
constexpr double kNever = std::numeric_limits<double>::infinity();

// Scalasca 2.6's controlled logical clock runs one pass with these (docs/clock-correction.md).
constexpr double kGamma = 0.99999;  // a local interval keeps at least this share of its length
constexpr double kTick = 1e-9;      // s: the least a rank's clock advances from one event to the next
constexpr double kWindow = 100;     // the backward pass spreads a jump Δ over 100·Δ before it (slope 0.01)

// Whose begins a member's end has to follow. A member's own begin counts too (Scalasca's
// rule: with l_min > 0 it keeps a collective at least l_min long).
enum class Dep : std::uint8_t {
  None,      // no constraint (MPI_Finalize, MPI_Alltoallv, a communicator of one)
  All,       // every member (barrier, allreduce, alltoall, allgather, reduce_scatter, init)
  FromRoot,  // non-root members follow the root (bcast, scatter)
  ToRoot,    // the root follows every member (reduce, gather)
  Prefix,    // member i follows members 0..i (scan, exscan)
};

Dep dependency(MpiOp op) {
  // MPI_Alltoallv can carry any pattern (a member may send to nobody): which begins an end
  // depends on is not in the trace, so none (Scalasca ignores it for the same reason).
  if (op == MpiOp::Alltoallv) return Dep::None;
  switch (trace::base_collective(op)) {
    case MpiOp::Init:
    case MpiOp::Barrier:
    case MpiOp::Allreduce:
    case MpiOp::Alltoall:
    case MpiOp::Allgather:
    case MpiOp::ReduceScatter:
      return Dep::All;
    case MpiOp::Bcast:
    case MpiOp::Scatter:
      return Dep::FromRoot;
    case MpiOp::Reduce:
    case MpiOp::Gather:
      return Dep::ToRoot;
    case MpiOp::Scan:
    case MpiOp::Exscan:
      return Dep::Prefix;
    default:
      return Dep::None;
  }
}

// The happened-before structure of a trace as event indices: which event sends and which
// completes each matched message, which members' begins release and which members' ends
// are constrained in each collective, and per rank the events that carry a constraint or
// release one, in event order.
struct Graph {
  enum Kind : std::uint8_t { kSend, kRecv, kBegin, kEnd };
  struct Point {
    std::uint32_t event;
    std::uint32_t id;  // message (kSend, kRecv) or member (kBegin, kEnd)
    Kind kind;
  };
  static constexpr std::uint8_t kReleases = 1;     // the member's begin matters to an end
  static constexpr std::uint8_t kConstrained = 2;  // the member's end follows begins

  std::vector<std::uint32_t> inst;         // per member: its instance
  std::vector<std::uint8_t> role;          // per member: kReleases | kConstrained
  std::vector<Dep> dep;                    // per instance
  std::vector<std::uint32_t> releasers;    // per instance: members that release
  std::vector<std::vector<Point>> points;  // per rank, by event
  bool any_prefix = false;

  bool releases(std::uint32_t k) const { return (role[k] & kReleases) != 0; }
  bool constrained(std::uint32_t k) const { return (role[k] & kConstrained) != 0; }
  std::uint32_t first(std::uint32_t i) const { return (*instances)[i].first; }
  std::uint32_t count(std::uint32_t i) const { return (*instances)[i].count; }

  const std::vector<CollInstance>* instances = nullptr;
};

Graph build_graph(const Trace& trace, const Matching& m) {
  Graph g;
  g.instances = &m.collectives;
  const std::size_t n = trace.ranks();
  const std::size_t nm = m.messages.size();

  // Collective members: the matcher's CollBegin/CollEnd events (Enter/Leave for MPI_Init,
  // MPI_Finalize, or a call without a CollBegin).
  const std::size_t nk = m.members.size();
  g.inst.assign(nk, kNone);
  g.role.assign(nk, 0);
  g.dep.assign(m.collectives.size(), Dep::None);
  g.releasers.assign(m.collectives.size(), 0);
  for (std::uint32_t i = 0; i < m.collectives.size(); ++i) {
    const CollInstance& ci = m.collectives[i];
    const std::uint32_t first = ci.first, last = ci.first + ci.count;
    std::uint32_t root = kNone;
    for (std::uint32_t k = first; k < last; ++k) {
      g.inst[k] = i;
      if (m.members[k].rank == ci.root) root = k;
    }
    Dep dep = ci.count >= 2 ? dependency(ci.op) : Dep::None;
    if ((dep == Dep::FromRoot || dep == Dep::ToRoot) && root == kNone) dep = Dep::None;
    if (dep == Dep::None) continue;
    // Scalasca's byte gates: a member whose CollEnd says it sent no bytes releases nothing,
    // one that received none follows nobody. A barrier moves no data and synchronises all the
    // same; MPI_Init's Enter/Leave carry no sizes.
    const auto moves = [&](std::uint32_t k, bool sent) {
      const Event& e = trace.locations[m.members[k].rank].events[m.members[k].end_event];
      if (e.kind != EventKind::CollEnd || ci.op == MpiOp::Barrier) return true;
      return (sent ? e.bytes : e.aux) > 0;
    };
    for (std::uint32_t k = first; k < last; ++k) {
      std::uint8_t role = 0;
      if (moves(k, true) && (dep != Dep::FromRoot || k == root)) role |= Graph::kReleases;
      const bool follows = dep == Dep::All || dep == Dep::Prefix || (dep == Dep::FromRoot && k != root) ||
                           (dep == Dep::ToRoot && k == root);
      if (follows && moves(k, false)) role |= Graph::kConstrained;
      g.role[k] = role;
      g.releasers[i] += role & Graph::kReleases;
    }
    // An end with no begin to follow is none: drop it (and, if no end is left, the begins).
    bool any = false;
    bool released = false;  // Prefix: a member at or before k releases
    for (std::uint32_t k = first; k < last; ++k) {
      released = released || g.releases(k);
      if (!(dep == Dep::Prefix ? released : g.releasers[i] > 0)) g.role[k] &= ~Graph::kConstrained;
      any = any || g.constrained(k);
    }
    if (!any) {
      for (std::uint32_t k = first; k < last; ++k) g.role[k] = 0;
      g.releasers[i] = 0;
      continue;
    }
    g.dep[i] = dep;
    g.any_prefix = g.any_prefix || dep == Dep::Prefix;
  }

  // Per rank, the points in event order (a message's two sides, a member's begin and end).
  g.points.resize(n);
  for (std::uint32_t id = 0; id < nm; ++id) {
    const Message& msg = m.messages[id];
    g.points[static_cast<std::size_t>(msg.sender)].push_back({msg.send_event, id, Graph::kSend});
    g.points[static_cast<std::size_t>(msg.receiver)].push_back({msg.recv_event, id, Graph::kRecv});
  }
  for (std::uint32_t k = 0; k < nk; ++k) {
    auto& pts = g.points[static_cast<std::size_t>(m.members[k].rank)];
    if (g.releases(k)) pts.push_back({m.members[k].begin_event, k, Graph::kBegin});
    if (g.constrained(k)) pts.push_back({m.members[k].end_event, k, Graph::kEnd});
  }
  for (auto& pts : g.points)
    std::sort(pts.begin(), pts.end(), [](const Graph::Point& a, const Graph::Point& b) {
      return std::tie(a.event, a.kind, a.id) < std::tie(b.event, b.kind, b.id);
    });
  return g;
}

// Counts the violations of the clock condition at the times time(rank, event) gives.
template <class TimeOf>
std::uint64_t count_violations(const Matching& m, const Graph& g, double lmin, const TimeOf& time) {
  std::uint64_t v = 0;
  for (const Message& msg : m.messages)
    if (time(msg.receiver, msg.recv_event) < time(msg.sender, msg.send_event) + lmin) ++v;
  const auto begin = [&](std::uint32_t k) { return time(m.members[k].rank, m.members[k].begin_event); };
  const auto end = [&](std::uint32_t k) { return time(m.members[k].rank, m.members[k].end_event); };
  for (std::uint32_t i = 0; i < m.collectives.size(); ++i) {
    const std::uint32_t first = g.first(i), last = first + g.count(i);
    switch (g.dep[i]) {
      case Dep::All:
      case Dep::FromRoot:
      case Dep::ToRoot: {
        double latest = kNoTime;
        for (std::uint32_t k = first; k < last; ++k)
          if (g.releases(k)) latest = std::max(latest, begin(k));
        for (std::uint32_t k = first; k < last; ++k)
          if (g.constrained(k) && end(k) < latest + lmin) ++v;
        break;
      }
      case Dep::Prefix: {
        double running = kNoTime;
        for (std::uint32_t k = first; k < last; ++k) {
          if (g.releases(k)) running = std::max(running, begin(k));
          if (g.constrained(k) && end(k) < running + lmin) ++v;
        }
        break;
      }
      case Dep::None:
        break;
    }
  }
  return v;
}

// One rank's linear map: t' = I0 + (t − Ir)·b from two points, or t + d from one.
struct Affine {
  enum Kind : std::uint8_t { kIdentity, kTwoPoint, kOffset };
  Kind kind = kIdentity;
  double i0 = 0, ir = 0, b = 1, d = 0;
  Time operator()(Time t) const {
    switch (kind) {
      case kTwoPoint:
        return i0 + (t - ir) * b;
      case kOffset:
        return t + d;
      case kIdentity:
        break;
    }
    return t;
  }
};

// The linear correction's maps, t' = I0 + (t − Ir)·(F0 − I0)/(Fr − Ir) per rank r, from the
// Leave times of MPI_Init (I) and MPI_Finalize (F) on r and on rank 0; one of them → an
// offset. Measures max_offset and max_drift; changes nothing.
std::vector<Affine> fit_linear(const Trace& trace, const Matching& m, ClockReport& rep) {
  const std::size_t n = trace.ranks();
  std::vector<Affine> maps(n);
  if (n == 0) return maps;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> init(n, nan), fin(n, nan);
  for (std::size_t r = 0; r < n; ++r) {
    const auto& ev = trace.locations[r].events;
    for (const Call& c : m.calls[r]) {
      if (c.op == MpiOp::Init && std::isnan(init[r])) init[r] = ev[c.leave].time;
      if (c.op == MpiOp::Finalize) fin[r] = ev[c.leave].time;
    }
  }
  const double i0 = init[0], f0 = fin[0];
  for (std::size_t r = 1; r < n; ++r) {
    const bool has_i = !std::isnan(i0) && !std::isnan(init[r]);
    const bool has_f = !std::isnan(f0) && !std::isnan(fin[r]);
    Affine& a = maps[r];
    if (has_i && has_f && fin[r] > init[r] && f0 > i0) {
      const double ir = init[r];
      const double b = (f0 - i0) / (fin[r] - ir);
      rep.max_offset = std::max(rep.max_offset, std::abs(ir - i0));
      rep.max_drift = std::max(rep.max_drift, std::abs((fin[r] - ir) / (f0 - i0) - 1));
      if (ir == i0 && b == 1) continue;
      a.kind = Affine::kTwoPoint;
      a.i0 = i0;
      a.ir = ir;
      a.b = b;
    } else if (has_i || has_f) {
      const double d = has_i ? i0 - init[r] : f0 - fin[r];
      rep.max_offset = std::max(rep.max_offset, std::abs(d));
      if (d == 0) continue;
      a.kind = Affine::kOffset;
      a.d = d;
    }
  }
  return maps;
}

// Applies the maps to every event and ground-truth interval (a rank whose map is the
// identity is not touched: bit-identical).
void apply_linear(Trace& trace, const std::vector<Affine>& maps, ClockReport& rep) {
  for (std::size_t r = 0; r < maps.size(); ++r) {
    const Affine& map = maps[r];
    if (map.kind == Affine::kIdentity) continue;
    Location& loc = trace.locations[r];
    for (Event& e : loc.events) e.time = map(e.time);
    for (ComputeTruth& ct : loc.truth) {
      ct.start = map(ct.start);
      ct.end = map(ct.end);
    }
    ++rep.ranks_linear;
  }
}

// The forward replay shared by the logical clocks: ranks advance event by event; an event
// with a constraint waits until the events it depends on have their final time. At each event
// the rule gives the new time from the old one and c, the constraint's bound + l_min (−∞ if
// none): Rule::place(rank, event, old time, c).
template <class Rule>
class Replay {
 public:
  Replay(Trace& trace, const Matching& m, const Graph& g, double lmin, Rule& rule, std::uint64_t& dropped)
      : t_(trace), m_(m), g_(g), lmin_(lmin), rule_(rule), dropped_(dropped) {}

  void run() {
    const std::size_t n = t_.ranks();
    pos_.assign(n, 0);
    cur_.assign(n, 0);
    queued_.assign(n, 0);
    st_.assign(m_.collectives.size(), InstState{});
    if (g_.any_prefix) {
      mval_.assign(m_.members.size(), kNoTime);
      begun_.assign(m_.members.size(), 0);
      for (std::uint32_t i = 0; i < m_.collectives.size(); ++i)
        if (g_.dep[i] == Dep::Prefix) pass(i);
    }
    for (std::size_t r = n; r-- > 0;) wake(static_cast<Rank>(r));
    std::size_t lowest = 0;  // ranks below it have finished
    for (;;) {
      if (stack_.empty()) {
        // Every unfinished rank waits for another: a cycle. Break it at the lowest rank.
        while (lowest < n && pos_[lowest] == t_.locations[lowest].events.size()) ++lowest;
        if (lowest == n) break;
        advance(static_cast<Rank>(lowest), true);
        continue;
      }
      const Rank r = stack_.back();
      stack_.pop_back();
      queued_[r] = 0;
      advance(r, false);
    }
  }

 private:
  struct InstState {
    std::uint32_t done = 0;  // releasing begins processed
    std::uint32_t ptr = 0;   // Prefix: members [first, first+ptr) passed
    double max = kNoTime;    // latest begin processed (Prefix: of the members passed)
  };

  void wake(Rank r) {
    if (queued_[r]) return;
    queued_[r] = 1;
    stack_.push_back(r);
  }

  // Is the constraint of point p satisfiable yet; if so, its bound (before l_min).
  bool ready(const Graph::Point& p, double& bound) const {
    if (p.kind == Graph::kRecv) {
      const Rank s = m_.messages[p.id].sender;
      const std::uint32_t e = m_.messages[p.id].send_event;
      if (pos_[s] <= e) return false;
      bound = t_.locations[s].events[e].time;
      return true;
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
        if (s.ptr <= k - g_.first(i)) return false;
        bound = mval_[k];
        return true;
      case Dep::None:
        break;
    }
    return true;
  }

  void release(const Graph::Point& p, Time t) {
    if (p.kind == Graph::kSend) {
      wake(m_.messages[p.id].receiver);
      return;
    }
    const std::uint32_t k = p.id, i = g_.inst[k];
    const std::uint32_t first = g_.first(i), count = g_.count(i);
    InstState& s = st_[i];
    switch (g_.dep[i]) {
      case Dep::All:
      case Dep::FromRoot:
      case Dep::ToRoot:
        s.max = std::max(s.max, t);
        if (++s.done == g_.releasers[i])
          for (std::uint32_t x = first; x < first + count; ++x)
            if (g_.constrained(x)) wake(m_.members[x].rank);
        break;
      case Dep::Prefix:
        mval_[k] = t;  // begun: its begin time until the prefix passes it
        begun_[k] = 1;
        pass(i);
        break;
      case Dep::None:
        break;
    }
  }

  // Moves a prefix past the members whose begin is known (or does not matter); a member
  // passed holds the latest begin of the members up to it, its own included.
  void pass(std::uint32_t i) {
    InstState& s = st_[i];
    const std::uint32_t first = g_.first(i), count = g_.count(i);
    while (s.ptr < count) {
      const std::uint32_t x = first + s.ptr;
      if (g_.releases(x)) {
        if (!begun_[x]) break;
        s.max = std::max(s.max, mval_[x]);
      }
      mval_[x] = s.max;
      if (g_.constrained(x)) wake(m_.members[x].rank);
      ++s.ptr;
    }
  }

  void advance(Rank r, bool force) {
    auto& ev = t_.locations[r].events;
    const auto& pts = g_.points[r];
    std::uint32_t& pos = pos_[r];
    std::size_t& cur = cur_[r];
    while (pos < ev.size()) {
      const std::uint32_t i = pos;
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
      for (std::size_t x = cur; x < end; ++x)
        if (pts[x].kind == Graph::kSend || pts[x].kind == Graph::kBegin) release(pts[x], t);
      cur = end;
    }
  }

  Trace& t_;
  const Matching& m_;
  const Graph& g_;
  double lmin_;
  Rule& rule_;
  std::uint64_t& dropped_;
  std::vector<std::uint32_t> pos_;  // next event per rank
  std::vector<std::size_t> cur_;    // next point per rank
  std::vector<char> queued_;
  std::vector<Rank> stack_;
  std::vector<InstState> st_;
  std::vector<double> mval_;  // Prefix, per member: begin time, then (passed) the latest begin up to it
  std::vector<char> begun_;   // Prefix, per member: its begin was processed
};

// Clamping: each rank carries a shift δ_r that only grows; an event moves to
// max(t + δ_r, previous event, c) and δ_r follows it. Local intervals are kept exactly after
// the first jump, the one before a jump grows by it.
class Clamp {
 public:
  Clamp(Trace& trace, ClockReport& rep) : t_(trace), rep_(rep) {
    const std::size_t n = trace.ranks();
    shift_.assign(n, 0);
    prev_.assign(n, kNoTime);
    changes_.assign(n, {});
    for (const auto& loc : t_.locations) truth_ = truth_ || !loc.truth.empty();
  }

  Time place(Rank r, std::uint32_t, Time old, Time c) {
    const Time base = old + shift_[r];
    Time t = base;
    if (prev_[r] > t) t = prev_[r];
    if (c > t) t = c;
    if (t != base) {
      shift_[r] = t - old;
      rep_.max_shift = std::max(rep_.max_shift, shift_[r]);
      if (truth_) changes_[r].push_back({old, shift_[r]});
    }
    if (t != old) ++rep_.events_moved;
    prev_[r] = t;
    return t;
  }

  // A compute interval moves with the shift of the last event at or before its start (it
  // holds no event, so the shift is constant over it and its duration is kept).
  void move_truth() {
    for (std::size_t r = 0; r < t_.ranks(); ++r) {
      const auto& ch = changes_[r];
      if (ch.empty()) continue;
      std::size_t j = 0;
      double shift = 0;
      for (ComputeTruth& ct : t_.locations[r].truth) {
        while (j < ch.size() && ch[j].first <= ct.start) shift = ch[j++].second;
        ct.start += shift;
        ct.end += shift;
      }
    }
  }

 private:
  Trace& t_;
  ClockReport& rep_;
  std::vector<double> shift_, prev_;
  std::vector<std::vector<std::pair<Time, double>>> changes_;  // (old time, shift from there)
  bool truth_ = false;
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
class Clc {
 public:
  Clc(Trace& trace, const Matching& m, const Graph& g, double lmin, ClockReport& rep)
      : t_(trace), m_(m), g_(g), lmin_(lmin), rep_(rep) {}

  void run() {
    const std::size_t n = t_.ranks();
    orig_.resize(n);
    for (std::size_t r = 0; r < n; ++r) {
      const auto& ev = t_.locations[r].events;
      orig_[r].resize(ev.size());
      for (std::size_t i = 0; i < ev.size(); ++i) orig_[r][i] = ev[i].time;
    }
    jumps_.assign(n, {});
    Replay<Clc>(t_, m_, g_, lmin_, *this, rep_.constraints_dropped).run();
    bool any = false;
    for (const auto& j : jumps_) any = any || !j.empty();
    if (any) {
      limits();
      for (std::size_t r = 0; r < n; ++r) amortise(r);
    }
    for (std::size_t r = 0; r < n; ++r) {
      const auto& ev = t_.locations[r].events;
      for (std::size_t i = 0; i < ev.size(); ++i) {
        if (ev[i].time == orig_[r][i]) continue;
        ++rep_.events_moved;
        rep_.max_shift = std::max(rep_.max_shift, std::abs(ev[i].time - orig_[r][i]));
      }
      move_truth(r);
    }
  }

  Time place(Rank r, std::uint32_t i, Time t, Time c) {
    Time in = t;  // the internal rule
    if (i > 0) {
      const Time prev = t_.locations[r].events[i - 1].time;
      in = std::max({prev + kTick, prev + kGamma * (t - orig_[r][i - 1]), t});
    }
    if (c <= in) return in;
    jumps_[r].push_back({i, in, c - in});
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

  // Per rank, its logical sends in event order and their limits, at the forward pass's times
  // (the backward pass moves ends and receives only later: the limits stay safe).
  void limits() {
    const auto time = [&](Rank r, std::uint32_t e) { return t_.locations[r].events[e].time; };
    // Per releasing member: the earliest end that follows it.
    std::vector<Time> first_end(m_.members.size(), kNever);
    for (std::uint32_t i = 0; i < m_.collectives.size(); ++i) {
      const std::uint32_t first = g_.first(i), last = first + g_.count(i);
      const auto end = [&](std::uint32_t k) { return time(m_.members[k].rank, m_.members[k].end_event); };
      Time earliest = kNever;
      if (g_.dep[i] == Dep::Prefix) {
        for (std::uint32_t k = last; k-- > first;) {  // member k's begin: the ends from k on
          if (g_.constrained(k)) earliest = std::min(earliest, end(k));
          first_end[k] = earliest;
        }
        continue;
      }
      for (std::uint32_t k = first; k < last; ++k)
        if (g_.constrained(k)) earliest = std::min(earliest, end(k));
      for (std::uint32_t k = first; k < last; ++k) first_end[k] = earliest;
    }
    sends_.assign(t_.ranks(), {});
    for (std::size_t r = 0; r < t_.ranks(); ++r) {
      auto& out = sends_[r];
      for (const Graph::Point& p : g_.points[r]) {
        if (p.kind != Graph::kSend && p.kind != Graph::kBegin) continue;
        const Time e = p.kind == Graph::kSend ? time(m_.messages[p.id].receiver, m_.messages[p.id].recv_event)
                                              : first_end[p.id];
        const Time latest = e == kNever ? kNever : latest_before(e, lmin_);
        if (!out.empty() && out.back().event == p.event) {
          out.back().latest = std::min(out.back().latest, latest);
        } else {
          out.push_back({p.event, latest});
        }
      }
    }
  }

  void amortise(std::size_t r) {
    auto& ev = t_.locations[r].events;
    const auto& sends = sends_[r];
    for (const Jump& j : jumps_[r]) {
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
  void move_truth(std::size_t r) {
    auto& truth = t_.locations[r].truth;
    const auto& ev = t_.locations[r].events;
    const auto& o = orig_[r];
    if (truth.empty() || ev.empty()) return;
    const auto map = [&](Time x) {
      const std::size_t j = static_cast<std::size_t>(std::upper_bound(o.begin(), o.end(), x) - o.begin());
      if (j == 0) return x + (ev[0].time - o[0]);
      if (j == o.size()) return x + (ev[j - 1].time - o[j - 1]);
      const std::size_t i = j - 1;
      return ev[i].time + (x - o[i]) * (ev[j].time - ev[i].time) / (o[j] - o[i]);
    };
    for (ComputeTruth& ct : truth) {
      ct.start = map(ct.start);
      ct.end = map(ct.end);
    }
  }

  Trace& t_;
  const Matching& m_;
  const Graph& g_;
  double lmin_;
  ClockReport& rep_;
  std::vector<std::vector<Time>> orig_;    // per rank and event: the time given
  std::vector<std::vector<Jump>> jumps_;   // per rank, in event order
  std::vector<std::vector<Limit>> sends_;  // per rank, in event order
};

}  // namespace

ClockReport correct_clocks(Trace& trace, const ClockOptions& options) {
  using M = ClockOptions::Mode;
  ClockReport rep;
  const double lmin = options.min_latency;
  const Matching m = Matching::build(trace);
  const Graph g = build_graph(trace, m);
  const auto now = [&](Rank r, std::uint32_t e) { return trace.locations[r].events[e].time; };
  rep.violations_before = count_violations(m, g, lmin, now);
  rep.violations_after_linear = rep.violations_before;
  rep.violations_after = rep.violations_before;
  const M mode = options.mode;
  bool linear = false, clamp = false, clc = false;
  if (mode == M::Auto) {
    if (rep.violations_before == 0) {
      rep.reason = "no violation: nothing to correct";
      return rep;
    }
    // The trace names no host per location: only the violations can show separate clocks.
    // The linear map is evidence of them if it explains violations away, and harm if it
    // adds some (an MPI_Finalize that does not synchronise gives a false drift).
    const std::vector<Affine> maps = fit_linear(trace, m, rep);
    rep.violations_after_linear =
        count_violations(m, g, lmin, [&](Rank r, std::uint32_t e) { return maps[r](now(r, e)); });
    const std::uint64_t before = rep.violations_before, after = rep.violations_after_linear;
    linear = after < before;
    rep.reason = "the linear map " +
                 std::string(linear           ? "lowers"
                             : after > before ? "would raise"
                                              : "would leave") +
                 " violations " + std::to_string(before) + " → " + std::to_string(after) +
                 (linear ? ": applied" : ": not applied");
    if (linear) {
      apply_linear(trace, maps, rep);
      rep.violations_after = after;
    }
    clc = rep.violations_after > 0;
    if (clc) rep.reason += "; clc for the " + std::to_string(rep.violations_after) + " left";
  } else {
    linear = mode == M::Linear || mode == M::LinearAndClamp;
    clamp = mode == M::Clamp || mode == M::LinearAndClamp;
    clc = mode == M::Clc;
    rep.reason = std::string("mode ") + clock_mode_name(mode);
    if (linear) {
      apply_linear(trace, fit_linear(trace, m, rep), rep);
      rep.violations_after_linear = count_violations(m, g, lmin, now);
      rep.violations_after = rep.violations_after_linear;
    }
  }
  if (linear) rep.method = "linear";
  if (clamp) {
    Clamp rule(trace, rep);
    Replay<Clamp>(trace, m, g, lmin, rule, rep.constraints_dropped).run();
    rule.move_truth();
    rep.method = linear ? "linear+clamp" : "clamp";
  }
  if (clc) {
    // Mode clc is Scalasca's, with its 1 µs. Auto's keeps min_latency: with 1 µs it would also
    // push every consistent message faster than that (intra-node, shared memory), and the
    // pushes add up along chains (59 µs on the demo scenario's trace for three 0.5 µs
    // violations, 0.56 µs with l_min = 0).
    const double l = mode == M::Clc ? std::max(lmin, options.clc_latency) : lmin;
    Clc(trace, m, g, l, rep).run();
    rep.method = linear ? "linear+clc" : "clc";
  }
  if (clamp || clc) rep.violations_after = count_violations(m, g, lmin, now);
  return rep;
}

}  // namespace waitlab::trace
