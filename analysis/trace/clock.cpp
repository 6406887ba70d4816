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
  for (M m : {M::Auto, M::None, M::Linear, M::Clamp, M::LinearAndClamp}) {
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
  }
  return "?";
}

namespace {

constexpr std::uint32_t kNone = 0xffffffffu;
constexpr double kNoTime = -std::numeric_limits<double>::infinity();

// Whose begins a member's end has to follow (its own begin never counts: local order
// already puts it first, and l_min is a communication latency).
enum class Dep : std::uint8_t {
  None,      // no constraint (MPI_Finalize: it need not synchronise, see the docs)
  All,       // every other member (barrier, allreduce, alltoall, allgather, reduce_scatter, init)
  FromRoot,  // non-root members follow the root (bcast, scatter)
  ToRoot,    // the root follows every other member (reduce, gather)
  Prefix,    // member i follows members 0..i-1 (scan, exscan)
};

Dep dependency(MpiOp op) {
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
// completes each matched message, which events begin and end each collective member, and
// per rank the events that carry a constraint or release one, in event order.
struct Graph {
  enum Kind : std::uint8_t { kSend, kRecv, kBegin, kEnd };
  struct Point {
    std::uint32_t event;
    std::uint32_t id;  // message (kSend, kRecv) or member (kBegin, kEnd)
    Kind kind;
  };

  std::vector<std::uint32_t> inst;                    // per member: its instance
  std::vector<Dep> dep;                               // per instance
  std::vector<std::uint32_t> root;                    // per instance: root member or kNone
  std::vector<std::vector<Point>> points;             // per rank, by event
  bool any_prefix = false;

  bool constrained(std::uint32_t k) const {
    const std::uint32_t i = inst[k];
    switch (dep[i]) {
      case Dep::All:
        return count(i) >= 2;
      case Dep::FromRoot:
        return root[i] != kNone && k != root[i];
      case Dep::ToRoot:
        return root[i] != kNone && k == root[i] && count(i) >= 2;
      case Dep::Prefix:
        return k > first(i);
      case Dep::None:
        return false;
    }
    return false;
  }
  bool releases(std::uint32_t k) const {  // does member k's begin matter to another member?
    const std::uint32_t i = inst[k];
    switch (dep[i]) {
      case Dep::All:
        return count(i) >= 2;
      case Dep::ToRoot:
        return root[i] != kNone && count(i) >= 2;
      case Dep::FromRoot:
        return root[i] != kNone && k == root[i];
      case Dep::Prefix:
        return count(i) >= 2;  // the prefix passes a member once it began
      case Dep::None:
        return false;
    }
    return false;
  }
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
  g.dep.assign(m.collectives.size(), Dep::None);
  g.root.assign(m.collectives.size(), kNone);
  for (std::uint32_t i = 0; i < m.collectives.size(); ++i) {
    const CollInstance& ci = m.collectives[i];
    g.dep[i] = dependency(ci.op);
    g.any_prefix = g.any_prefix || g.dep[i] == Dep::Prefix;
    for (std::uint32_t k = ci.first; k < ci.first + ci.count; ++k) {
      g.inst[k] = i;
      if (g.dep[i] != Dep::None && m.members[k].rank == ci.root) g.root[i] = k;
    }
  }

  // Per rank, the points in event order (a message's two sides, a member's begin and end).
  g.points.resize(n);
  for (std::uint32_t id = 0; id < nm; ++id) {
    const Message& msg = m.messages[id];
    g.points[static_cast<std::size_t>(msg.sender)].push_back({msg.send_event, id, Graph::kSend});
    g.points[static_cast<std::size_t>(msg.receiver)].push_back({msg.recv_event, id, Graph::kRecv});
  }
  for (std::uint32_t k = 0; k < nk; ++k) {
    if (g.inst[k] == kNone || g.dep[g.inst[k]] == Dep::None) continue;
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

// Counts the violations of the clock condition at the trace's current times.
std::uint64_t count_violations(const Trace& trace, const Matching& m, const Graph& g, double lmin) {
  std::uint64_t v = 0;
  for (std::size_t id = 0; id < m.messages.size(); ++id) {
    const Message& msg = m.messages[id];
    const Time s = trace.locations[msg.sender].events[msg.send_event].time;
    const Time r = trace.locations[msg.receiver].events[msg.recv_event].time;
    if (r < s + lmin) ++v;
  }
  const auto begin = [&](std::uint32_t k) {
    return trace.locations[m.members[k].rank].events[m.members[k].begin_event].time;
  };
  const auto end = [&](std::uint32_t k) {
    return trace.locations[m.members[k].rank].events[m.members[k].end_event].time;
  };
  for (std::uint32_t i = 0; i < m.collectives.size(); ++i) {
    const std::uint32_t first = g.first(i), last = first + g.count(i);
    switch (g.dep[i]) {
      case Dep::All:
      case Dep::ToRoot: {
        double max1 = kNoTime, max2 = kNoTime;
        std::uint32_t arg1 = kNone;
        for (std::uint32_t k = first; k < last; ++k) {
          const double b = begin(k);
          if (b > max1) {
            max2 = max1;
            max1 = b;
            arg1 = k;
          } else if (b > max2) {
            max2 = b;
          }
        }
        for (std::uint32_t k = first; k < last; ++k)
          if (g.constrained(k) && end(k) < (k == arg1 ? max2 : max1) + lmin) ++v;
        break;
      }
      case Dep::FromRoot:
        for (std::uint32_t k = first; k < last; ++k)
          if (g.constrained(k) && end(k) < begin(g.root[i]) + lmin) ++v;
        break;
      case Dep::Prefix: {
        double running = kNoTime;
        for (std::uint32_t k = first; k < last; ++k) {
          if (g.constrained(k) && end(k) < running + lmin) ++v;
          running = std::max(running, begin(k));
        }
        break;
      }
      case Dep::None:
        break;
    }
  }
  return v;
}

// Linear correction: t' = I0 + (t − Ir)·(F0 − I0)/(Fr − Ir) per rank r, from the Leave
// times of MPI_Init (I) and MPI_Finalize (F) on r and on rank 0; one of them → an offset.
void correct_linear(Trace& trace, const Matching& m, ClockReport& rep) {
  const std::size_t n = trace.ranks();
  if (n == 0) return;
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
    Location& loc = trace.locations[r];
    if (has_i && has_f && fin[r] > init[r] && f0 > i0) {
      const double ir = init[r];
      const double b = (f0 - i0) / (fin[r] - ir);
      rep.max_offset = std::max(rep.max_offset, std::abs(ir - i0));
      rep.max_drift = std::max(rep.max_drift, std::abs((fin[r] - ir) / (f0 - i0) - 1));
      if (ir == i0 && b == 1) continue;
      const auto map = [&](Time t) { return i0 + (t - ir) * b; };
      for (Event& e : loc.events) e.time = map(e.time);
      for (ComputeTruth& ct : loc.truth) {
        ct.start = map(ct.start);
        ct.end = map(ct.end);
      }
      ++rep.ranks_linear;
    } else if (has_i || has_f) {
      const double d = has_i ? i0 - init[r] : f0 - fin[r];
      rep.max_offset = std::max(rep.max_offset, std::abs(d));
      if (d == 0) continue;
      for (Event& e : loc.events) e.time += d;
      for (ComputeTruth& ct : loc.truth) {
        ct.start += d;
        ct.end += d;
      }
      ++rep.ranks_linear;
    }
  }
}

// Clamping: the forward pass of the controlled logical clock. Ranks advance event by event;
// an event with a constraint waits until the events it depends on have their final time.
class Clamp {
 public:
  Clamp(Trace& trace, const Matching& m, const Graph& g, double lmin, ClockReport& rep)
      : t_(trace), m_(m), g_(g), lmin_(lmin), rep_(rep) {}

  void run() {
    const std::size_t n = t_.ranks();
    pos_.assign(n, 0);
    cur_.assign(n, 0);
    shift_.assign(n, 0);
    prev_.assign(n, kNoTime);
    queued_.assign(n, 0);
    st_.assign(m_.collectives.size(), InstState{});
    if (g_.any_prefix) mval_.assign(m_.members.size(), kNoTime);
    changes_.assign(n, {});
    for (const auto& loc : t_.locations) truth_ = truth_ || !loc.truth.empty();
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
    for (std::size_t r = 0; r < n; ++r) move_truth(r);
  }

 private:
  struct InstState {
    std::uint32_t done = 0;  // releasing begins processed
    std::uint32_t ptr = 0;   // Prefix: members [first, first+ptr) passed
    std::uint32_t arg1 = kNone;
    double max1 = kNoTime, max2 = kNoTime;  // Prefix: max1 is the running maximum
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
      case Dep::ToRoot:
        if (s.done < g_.count(i)) return false;
        bound = k == s.arg1 ? s.max2 : s.max1;
        return true;
      case Dep::FromRoot:
        if (s.done == 0) return false;
        bound = s.max1;
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
      case Dep::ToRoot:
        if (t > s.max1) {
          s.max2 = s.max1;
          s.max1 = t;
          s.arg1 = k;
        } else if (t > s.max2) {
          s.max2 = t;
        }
        if (++s.done == count)
          for (std::uint32_t x = first; x < first + count; ++x)
            if (g_.constrained(x)) wake(m_.members[x].rank);
        break;
      case Dep::FromRoot:
        ++s.done;
        s.max1 = t;
        for (std::uint32_t x = first; x < first + count; ++x)
          if (x != k) wake(m_.members[x].rank);
        break;
      case Dep::Prefix:
        mval_[k] = t;  // begun: its begin time until the prefix passes it
        while (s.ptr < count) {
          const std::uint32_t x = first + s.ptr;
          if (!begun(x)) break;
          const double b = mval_[x];
          mval_[x] = s.max1;  // passed: the latest begin before it
          s.max1 = std::max(s.max1, b);
          if (s.ptr > 0) wake(m_.members[x].rank);
          ++s.ptr;
        }
        break;
      case Dep::None:
        break;
    }
  }

  // Prefix members not yet passed hold their begin time in mval_ once begun.
  bool begun(std::uint32_t x) const { return mval_[x] != kNoTime; }

  void advance(Rank r, bool force) {
    auto& ev = t_.locations[r].events;
    const auto& pts = g_.points[r];
    std::uint32_t& pos = pos_[r];
    std::size_t& cur = cur_[r];
    while (pos < ev.size()) {
      const std::uint32_t i = pos;
      std::size_t end = cur;
      while (end < pts.size() && pts[end].event < i) ++end;  // never: points are in event order
      cur = end;
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
        rep_.constraints_dropped += dropped;
        force = false;
      }
      Event& e = ev[i];
      const Time old = e.time;
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
      e.time = t;
      prev_[r] = t;
      ++pos;
      for (std::size_t x = cur; x < end; ++x)
        if (pts[x].kind == Graph::kSend || pts[x].kind == Graph::kBegin) release(pts[x], t);
      cur = end;
    }
  }

  // A compute interval moves with the shift of the last event at or before its start (it
  // holds no event, so the shift is constant over it and its duration is kept).
  void move_truth(std::size_t r) {
    auto& truth = t_.locations[r].truth;
    const auto& ch = changes_[r];
    if (ch.empty()) return;
    std::size_t j = 0;
    double shift = 0;
    for (ComputeTruth& ct : truth) {
      while (j < ch.size() && ch[j].first <= ct.start) shift = ch[j++].second;
      ct.start += shift;
      ct.end += shift;
    }
  }

  Trace& t_;
  const Matching& m_;
  const Graph& g_;
  double lmin_;
  ClockReport& rep_;
  std::vector<std::uint32_t> pos_;  // next event per rank
  std::vector<std::size_t> cur_;    // next point per rank
  std::vector<double> shift_, prev_;
  std::vector<char> queued_;
  std::vector<Rank> stack_;
  std::vector<InstState> st_;
  std::vector<double> mval_;
  std::vector<std::vector<std::pair<Time, double>>> changes_;  // (old time, shift from there)
  bool truth_ = false;
};

}  // namespace

ClockReport correct_clocks(Trace& trace, const ClockOptions& options) {
  using M = ClockOptions::Mode;
  ClockReport rep;
  const double lmin = options.min_latency;
  const Matching m = Matching::build(trace);
  const Graph g = build_graph(trace, m);
  rep.violations_before = count_violations(trace, m, g, lmin);
  rep.violations_after_linear = rep.violations_before;
  rep.violations_after = rep.violations_before;
  M mode = options.mode;
  if (mode == M::Auto) {
    if (rep.violations_before == 0) return rep;
    mode = M::LinearAndClamp;
  }
  const bool linear = mode == M::Linear || mode == M::LinearAndClamp;
  if (linear) {
    correct_linear(trace, m, rep);
    rep.violations_after_linear = count_violations(trace, m, g, lmin);
    rep.violations_after = rep.violations_after_linear;
    rep.method = "linear";
  }
  // Auto clamps only what the linear correction left; LinearAndClamp and Clamp always run.
  const bool clamp = mode == M::Clamp || (mode == M::LinearAndClamp &&
                                          (options.mode != M::Auto || rep.violations_after_linear > 0));
  if (clamp) {
    Clamp(trace, m, g, lmin, rep).run();
    rep.violations_after = count_violations(trace, m, g, lmin);
    rep.method = linear ? "linear+clamp" : "clamp";
  }
  return rep;
}

}  // namespace waitlab::trace
