#include "analysis/timeresolved/timeresolved.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace waitlab::analysis {

using trace::Event;
using trace::EventKind;
using trace::Matching;
using trace::MpiOp;
using trace::Rank;
using trace::Time;
using trace::Trace;

std::string_view window_rule_name(WindowRule r) {
  switch (r) {
    case WindowRule::Fixed: return "fixed";
    case WindowRule::Count: return "count";
    case WindowRule::Adaptive: return "adaptive";
  }
  return "?";
}

std::string_view convention_name(Convention c) {
  switch (c) {
    case Convention::Waitlab: return "waitlab";
    case Convention::Bsc: return "bsc";
    case Convention::Scalasca: return "scalasca";
  }
  return "?";
}

bool parse_convention(std::string_view s, Convention& c) {
  for (const Convention x : {Convention::Waitlab, Convention::Bsc, Convention::Scalasca})
    if (s == convention_name(x)) {
      c = x;
      return true;
    }
  return false;
}

Convention default_convention(trace::Origin o) {
  switch (o) {
    case trace::Origin::Extrae: return Convention::Bsc;
    case trace::Origin::ScoreP: return Convention::Scalasca;
    case trace::Origin::Simulated:
    case trace::Origin::Unknown: break;
  }
  return Convention::Waitlab;
}

std::string convention_span_text(Convention c) {
  if (c == Convention::Waitlab)
    return "per rank from the end of MPI_Init to the start of MPI_Finalize (first and last event without them)";
  return "the whole trace: its declared span, else first to last event of every location and thread";
}

std::string convention_useful_text(Convention c) {
  switch (c) {
    case Convention::Waitlab: return "outside MPI calls (measurement states ignored); units: the ranks";
    case Convention::Bsc:
      return "outside MPI calls and in Paraver state Running (every other state is not useful); units: every "
             "thread of every rank";
    case Convention::Scalasca:
      return "outside MPI calls and outside measurement overhead; units: every location (ranks and threads)";
  }
  return "?";
}

IdealEstimate make_estimate(std::string source, double t_ideal, double useful_max, double comm_e) {
  IdealEstimate e;
  e.source = std::move(source);
  e.t_ideal = t_ideal;
  e.useful_max = useful_max;
  e.ser_e = t_ideal > 0 ? useful_max / t_ideal : 0.0;
  e.trf_e = e.ser_e > 0 ? comm_e / e.ser_e : 0.0;
  return e;
}

namespace {

// An Enter or Leave of an MPI call (Region::is_mpi: MPI_Comm_rank and the like included).
bool mpi_boundary(const Trace& t, const Event& e) {
  if (e.kind != EventKind::Enter && e.kind != EventKind::Leave) return false;
  return e.ref < t.defs.regions.size() && t.defs.regions[e.ref].is_mpi();
}

// The op of the region an Enter/Leave refers to (None for user regions and other events).
MpiOp region_op(const Trace& t, const Event& e) {
  if (e.kind != EventKind::Enter && e.kind != EventKind::Leave) return MpiOp::None;
  return e.ref < t.defs.regions.size() ? t.defs.regions[e.ref].op : MpiOp::None;
}

// Waitlab's span of a rank: the events that open and close its run.
struct RankSpan {
  std::size_t start = 0, end = 0;  // event indices
  bool empty = true;
};

RankSpan rank_span(const Trace& t, std::size_t r) {
  const auto& ev = t.locations[r].events;
  RankSpan s;
  if (ev.empty()) return s;
  s.empty = false;
  s.end = ev.size() - 1;
  bool init = false, fin = false;
  for (std::size_t k = 0; k < ev.size(); ++k) {
    const MpiOp op = region_op(t, ev[k]);
    if (!init && op == MpiOp::Init && ev[k].kind == EventKind::Leave) {
      s.start = k;
      init = true;
    }
    if (op == MpiOp::Finalize && ev[k].kind == EventKind::Enter && !fin) {
      s.end = k;
      fin = true;
    }
  }
  if (s.end < s.start) s.end = s.start;
  return s;
}

struct Interval {
  Time a = 0, b = 0;
};

// The stretches of [a, b] that a location spends outside every MPI call (any depth), ordered.
std::vector<Interval> outside_mpi(const Trace& t, const trace::Location& l, Time a, Time b) {
  std::vector<Interval> out;
  const auto add = [&](Time x, Time y) {
    x = std::max(x, a);
    y = std::min(y, b);
    if (y > x) out.push_back({x, y});
  };
  Time from = a;
  int depth = 0;
  for (const auto& e : l.events) {
    if (!mpi_boundary(t, e)) continue;
    if (e.kind == EventKind::Enter) {
      if (depth++ == 0) add(from, e.time);
    } else if (depth > 0 && --depth == 0) {
      from = e.time;
    }
  }
  if (depth == 0) add(from, b);
  return out;
}

// The union of a location's state intervals, ordered and disjoint.
std::vector<Interval> state_union(const std::vector<trace::StateInterval>& states) {
  std::vector<Interval> s;
  s.reserve(states.size());
  for (const auto& x : states)
    if (x.end > x.begin) s.push_back({x.begin, x.end});
  if (!std::is_sorted(s.begin(), s.end(), [](const Interval& x, const Interval& y) { return x.a < y.a; }))
    std::sort(s.begin(), s.end(), [](const Interval& x, const Interval& y) { return x.a < y.a; });
  std::vector<Interval> m;
  for (const auto& x : s) {
    if (!m.empty() && x.a <= m.back().b)
      m.back().b = std::max(m.back().b, x.b);
    else
      m.push_back(x);
  }
  return m;
}

// u minus m (both ordered and disjoint).
std::vector<Interval> subtract(const std::vector<Interval>& u, const std::vector<Interval>& m) {
  if (m.empty()) return u;
  std::vector<Interval> out;
  std::size_t j = 0;
  for (const auto& iv : u) {
    while (j < m.size() && m[j].b <= iv.a) ++j;
    Time x = iv.a;
    std::size_t k = j;
    for (; k < m.size() && m[k].a < iv.b; ++k) {
      if (m[k].a > x) out.push_back({x, m[k].a});
      x = std::max(x, m[k].b);
      if (m[k].b >= iv.b) break;
    }
    if (x < iv.b) out.push_back({x, iv.b});
    j = k;
  }
  return out;
}

// One unit of the averages: a rank (index < P, it has ideal times) or a worker thread.
struct Unit {
  const trace::Location* loc = nullptr;
  bool active = false;             // counts in the averages
  Time begin = 0, end = 0;         // its span
};

// Σ deltas of the samples whose stretch ends in useful time: sample at t counts when t − ε is
// useful, i.e. some useful interval has a < t ≤ b.
void add_counters(const std::vector<trace::CounterSample>& samples, const std::vector<Interval>& useful, double& ins,
                  double& cyc) {
  std::size_t j = 0;
  for (const auto& s : samples) {
    while (j < useful.size() && useful[j].b < s.time) ++j;
    if (j < useful.size() && useful[j].a < s.time) {
      ins += static_cast<double>(s.instructions);
      cyc += static_cast<double>(s.cycles);
    }
  }
}

double ratio(double a, double b) {
  return b > 0 ? a / b : 0.0;
}

Efficiency metrics(double useful_max, double useful_mean, double ideal, double length) {
  Efficiency e;
  e.lb = useful_max > 0 ? useful_mean / useful_max : 1.0;
  e.comm_e = ratio(useful_max, length);
  e.pe = ratio(useful_mean, length);
  e.ser_e = ratio(useful_max, ideal);
  e.trf_e = ratio(ideal, length);
  return e;
}

double clamp_ideal(double raw, double lo, double hi) {
  return std::max(lo, std::min(raw, hi));
}

// --- the Lamport replay ------------------------------------------------------------------

struct Dep {
  std::uint32_t event = 0;  // the event that waits
  bool coll = false;        // waits for a collective instance (index) or for event (rank, index)
  bool soft = false;        // a large send waiting for its receive to be posted
  Rank rank = 0;
  std::uint32_t index = 0;
};
struct Feed {
  std::uint32_t event = 0;  // a member's entry into collective instance `instance`
  std::uint32_t instance = 0;
};

// The Lamport replay: each event at its predecessor's ideal time plus the gap between them as
// measured (none inside an MPI call), and no earlier than what it waits for — the send of a
// message it receives, every member's entry into a collective it completes, the posting of the
// receive a large send waits for. Ranks are timed in turn until they block; a cycle (a deadlock
// of the model) is broken by letting a dependency go.
class LamportReplay {
 public:
  LamportReplay(const Trace& t, const Matching& m)
      : t_(t),
        m_(m),
        P_(t.ranks()),
        deps_(P_),
        feeds_(P_),
        arrived_(m.collectives.size(), 0),
        latest_(m.collectives.size(), -std::numeric_limits<Time>::infinity()),
        st_(P_),
        waiters_(P_),
        coll_waiters_(m.collectives.size()) {
    ref_.source = "lamport";
    ref_.times.resize(P_);
  }

  IdealReference run() {
    collect_dependencies();
    for (std::size_t r = P_; r-- > 0;) {
      if (t_.locations[r].events.empty()) {
        ++done_;
        continue;
      }
      ready_.push_back(static_cast<Rank>(r));
      st_[r].queued = true;
    }

    while (done_ < P_) {
      if (ready_.empty() && !release_cycle()) break;
      const Rank rank = ready_.back();
      ready_.pop_back();
      const auto r = static_cast<std::size_t>(rank);
      auto& s = st_[r];
      s.queued = false;
      if (s.next == t_.locations[r].events.size()) continue;  // finished (a stale wake-up)
      if (!time_events(rank)) ++done_;
      wake_waiters_of(rank);
    }
    if (done_ < P_) {
      // Unreachable in practice; leave untimed events at their own times.
      for (std::size_t r = 0; r < P_; ++r)
        for (std::size_t k = st_[r].next; k < t_.locations[r].events.size(); ++k) {
          ref_.times[r][k] = t_.locations[r].events[k].time;
          ++ref_.unresolved;
        }
    }
    return std::move(ref_);
  }

 private:
  struct State {
    std::size_t next = 0;  // next event to time
    std::size_t dep = 0, feed = 0;
    int depth = 0;  // MPI calls open before event `next`: the gap before it keeps its length when 0
    std::size_t skip = static_cast<std::size_t>(-1);     // a dependency let go (deadlock)
    std::size_t blocked = static_cast<std::size_t>(-1);  // the dependency it waits for
    bool queued = false;
  };

  // Each rank's dependencies (the events that wait, for what) and feeds (its entries into
  // collective instances), in event order.
  void collect_dependencies() {
    {  // each rank's lists at their final size (counted first)
      std::vector<std::size_t> nd(P_, 0), nf(P_, 0);
      for (const auto& msg : m_.messages) {
        ++nd[static_cast<std::size_t>(msg.receiver)];
        if (t_.locations[static_cast<std::size_t>(msg.sender)].events[msg.send_event].bytes >=
            kLamportEagerLimit)
          ++nd[static_cast<std::size_t>(msg.sender)];
      }
      for (const auto& mem : m_.members)
        ++nd[static_cast<std::size_t>(mem.rank)], ++nf[static_cast<std::size_t>(mem.rank)];
      for (std::size_t r = 0; r < P_; ++r) deps_[r].reserve(nd[r]), feeds_[r].reserve(nf[r]);
    }
    for (const auto& msg : m_.messages) {
      const auto s = static_cast<std::size_t>(msg.sender), r = static_cast<std::size_t>(msg.receiver);
      deps_[r].push_back({msg.recv_event, false, false, msg.sender, msg.send_event});
      if (t_.locations[s].events[msg.send_event].bytes >= kLamportEagerLimit)
        deps_[s].push_back({m_.calls[s][msg.send_done_call].leave, false, true, msg.receiver,
                            m_.calls[r][msg.recv_post_call].enter});
    }
    for (std::uint32_t i = 0; i < m_.collectives.size(); ++i) {
      const auto& c = m_.collectives[i];
      for (std::uint32_t k = c.first; k < c.first + c.count; ++k) {
        const auto& mem = m_.members[k];
        const auto r = static_cast<std::size_t>(mem.rank);
        feeds_[r].push_back({mem.begin_event, i});
        deps_[r].push_back({mem.end_event, true, false, 0, i});
      }
    }
    for (std::size_t r = 0; r < P_; ++r) {
      std::stable_sort(deps_[r].begin(), deps_[r].end(),
                       [](const Dep& a, const Dep& b) { return a.event < b.event; });
      std::stable_sort(feeds_[r].begin(), feeds_[r].end(),
                       [](const Feed& a, const Feed& b) { return a.event < b.event; });
      ref_.times[r].resize(t_.locations[r].events.size());
    }
  }

  // A cycle: let go the blocked dependency of the lowest rank, a large send's first. False if
  // no rank is blocked.
  bool release_cycle() {
    std::size_t pick = P_;
    for (int pass = 0; pass < 2 && pick == P_; ++pass)
      for (std::size_t r = 0; r < P_; ++r) {
        const auto& s = st_[r];
        if (s.blocked == static_cast<std::size_t>(-1)) continue;
        if (pass == 1 || deps_[r][s.blocked].soft) {
          pick = r;
          break;
        }
      }
    if (pick == P_) return false;  // cannot happen: every unfinished rank is blocked
    if (deps_[pick][st_[pick].blocked].soft)
      ++ref_.relaxed_sends;
    else
      ++ref_.unresolved;
    st_[pick].skip = st_[pick].blocked;
    wake(static_cast<Rank>(pick));
    return true;
  }

  // Times rank's events from the next one on, until one waits for an event not timed yet or a
  // collective not every member entered. Returns whether it blocked.
  bool time_events(Rank rank) {
    const auto r = static_cast<std::size_t>(rank);
    auto& s = st_[r];
    const auto& ev = t_.locations[r].events;
    auto& ideal = ref_.times[r];
    bool blocked = false;
    while (s.next < ev.size()) {
      const std::size_t k = s.next;
      Time at = k == 0 ? ev[0].time : ideal[k - 1] + (s.depth == 0 ? ev[k].time - ev[k - 1].time : 0.0);
      // Dependencies of this event (re-checked from the first after a wake-up).
      std::size_t d = s.dep;
      for (; d < deps_[r].size() && deps_[r][d].event == k; ++d) {
        if (d == s.skip) continue;
        const Dep& dep = deps_[r][d];
        if (dep.coll) {
          const auto& c = m_.collectives[dep.index];
          if (arrived_[dep.index] < c.count) {
            coll_waiters_[dep.index].push_back(rank);
            s.blocked = d;
            blocked = true;
            break;
          }
          at = std::max(at, latest_[dep.index]);
        } else {
          const auto q = static_cast<std::size_t>(dep.rank);
          if (st_[q].next <= dep.index) {
            waiters_[q].push_back(rank);
            s.blocked = d;
            blocked = true;
            break;
          }
          at = std::max(at, ref_.times[q][dep.index]);
        }
      }
      if (blocked) break;
      s.dep = d;
      ideal[k] = at;
      s.next = k + 1;
      if (mpi_boundary(t_, ev[k])) {
        if (ev[k].kind == EventKind::Enter)
          ++s.depth;
        else if (s.depth > 0)
          --s.depth;
      }
      for (; s.feed < feeds_[r].size() && feeds_[r][s.feed].event == k; ++s.feed) {
        const std::uint32_t i = feeds_[r][s.feed].instance;
        latest_[i] = std::max(latest_[i], at);
        if (++arrived_[i] == m_.collectives[i].count) {
          for (Rank w : coll_waiters_[i]) wake(w);
          coll_waiters_[i].clear();
        }
      }
    }
    return blocked;
  }

  // Wake the ranks that waited for an event this rank has now timed.
  void wake_waiters_of(Rank rank) {
    const auto r = static_cast<std::size_t>(rank);
    const auto& s = st_[r];
    auto& ws = waiters_[r];
    std::size_t keep = 0;
    for (Rank w : ws) {
      const auto& sw = st_[static_cast<std::size_t>(w)];
      if (sw.queued || sw.blocked == static_cast<std::size_t>(-1)) continue;  // stale
      const auto& dep = deps_[static_cast<std::size_t>(w)][sw.blocked];
      if (dep.coll || dep.rank != rank) continue;  // stale: it waits for something else now
      if (s.next > dep.index)
        wake(w);
      else
        ws[keep++] = w;
    }
    ws.resize(keep);
  }

  void wake(Rank w) {
    auto& s = st_[static_cast<std::size_t>(w)];
    if (!s.queued) {
      s.queued = true;
      s.blocked = static_cast<std::size_t>(-1);
      ready_.push_back(w);
    }
  }

  const Trace& t_;
  const Matching& m_;
  const std::size_t P_;
  IdealReference ref_;
  std::vector<std::vector<Dep>> deps_;
  std::vector<std::vector<Feed>> feeds_;
  std::vector<std::uint32_t> arrived_;  // per collective instance: members entered
  std::vector<Time> latest_;            // per collective instance: the latest entry
  std::vector<State> st_;
  std::vector<std::vector<Rank>> waiters_;       // ranks waiting for an event of rank q
  std::vector<std::vector<Rank>> coll_waiters_;  // ranks waiting for a collective instance
  std::vector<Rank> ready_;
  std::size_t done_ = 0;
};

}  // namespace

IdealReference lamport_reference(const Trace& t, const Matching& m) {
  return LamportReplay(t, m).run();
}

bool network_reference(const Trace& t, const Trace& ideal, IdealReference& out, std::string& why) {
  if (t.ranks() != ideal.ranks()) {
    why = "the ideal run has " + std::to_string(ideal.ranks()) + " ranks, the run " + std::to_string(t.ranks());
    return false;
  }
  const auto completion = [](EventKind k) { return k == EventKind::IsendComplete || k == EventKind::IrecvComplete; };
  for (std::size_t r = 0; r < t.ranks(); ++r) {
    const auto& a = t.locations[r].events;
    const auto& b = ideal.locations[r].events;
    if (a.size() != b.size()) {
      why = "rank " + std::to_string(r) + " has " + std::to_string(b.size()) + " events in the ideal run, " +
            std::to_string(a.size()) + " in the run";
      return false;
    }
    for (std::size_t k = 0; k < a.size(); ++k)
      if (a[k].kind != b[k].kind && !(completion(a[k].kind) && completion(b[k].kind))) {
        why = "event " + std::to_string(k) + " of rank " + std::to_string(r) + " is a " +
              std::string(trace::event_kind_name(b[k].kind)) + " in the ideal run, a " +
              std::string(trace::event_kind_name(a[k].kind)) + " in the run";
        return false;
      }
  }
  out = IdealReference{};
  out.source = "ideal_network";
  out.times.resize(t.ranks());
  for (std::size_t r = 0; r < t.ranks(); ++r) {
    const auto& b = ideal.locations[r].events;
    out.times[r].resize(b.size());
    for (std::size_t k = 0; k < b.size(); ++k) out.times[r][k] = b[k].time;
  }
  return true;
}

namespace {

// The ideal time of rank p at t: linear between consecutive events; before the first event and
// after the last constant (Waitlab) or, with `extend`, keeping the measured distance.
struct IdealCursor {
  std::size_t k = 0;  // first event later than the last t asked
};

Time ideal_at(const std::vector<Event>& ev, const std::vector<Time>& id, IdealCursor& c, Time t, bool extend) {
  while (c.k < ev.size() && ev[c.k].time <= t) ++c.k;
  const std::size_t k = c.k;
  if (k == 0) return extend ? id[0] - (ev[0].time - t) : id[0];
  if (k == ev.size()) return extend ? id[k - 1] + (t - ev[k - 1].time) : id[k - 1];
  return id[k - 1] + (id[k] - id[k - 1]) * ((t - ev[k - 1].time) / (ev[k].time - ev[k - 1].time));
}

}  // namespace

namespace {

// The inputs time_resolved refuses: a reference of another trace, no window length or count.
void check_inputs(const Trace& t, const IdealReference& ref, const WindowOptions& opt) {
  const std::size_t P = t.ranks();
  if (ref.times.size() != P) throw std::invalid_argument("time_resolved: the ideal reference has another rank count");
  for (std::size_t r = 0; r < P; ++r)
    if (ref.times[r].size() != t.locations[r].events.size())
      throw std::invalid_argument("time_resolved: the ideal reference of rank " + std::to_string(r) +
                                  " has another event count");
  if (opt.rule == WindowRule::Fixed && !(opt.length > 0 && std::isfinite(opt.length)))
    throw std::invalid_argument("time_resolved: the window length must be positive");
  if (opt.rule != WindowRule::Fixed && opt.count == 0)
    throw std::invalid_argument("time_resolved: the window count must be positive");
}

constexpr Time kInf = std::numeric_limits<Time>::infinity();

// The run's span: T0 and T1, the ideal start i0 and end i1.
struct Span {
  Time t0 = kInf, t1 = -kInf, i0 = kInf, i1 = -kInf;
};

// Waitlab's span: from the first rank's MPI_Init to the last one's MPI_Finalize; only ranks with
// events count.
void waitlab_span(const Trace& t, const IdealReference& ref, std::vector<Unit>& units, Span& sp) {
  const std::size_t P = t.ranks();
  Time &t0 = sp.t0, &t1 = sp.t1, &i0 = sp.i0, &i1 = sp.i1;
  for (std::size_t r = 0; r < P; ++r) {
    const RankSpan span = rank_span(t, r);
    if (span.empty) continue;
    const auto& ev = t.locations[r].events;
    Unit& u = units[r];
    u.active = true;
    u.begin = ev[span.start].time;
    u.end = ev[span.end].time;
    t0 = std::min(t0, u.begin);
    t1 = std::max(t1, u.end);
    i0 = std::min(i0, ref.times[r][span.start]);
    i1 = std::max(i1, ref.times[r][span.end]);
  }
}

// Bsc's and Scalasca's span: the whole trace (or the span it declares), every unit with events
// or states counted over all of it; the ideal start is the latest ideal time at T0.
void whole_trace_span(const Trace& t, const IdealReference& ref, std::vector<Unit>& units, Span& sp) {
  const std::size_t P = t.ranks();
  Time &t0 = sp.t0, &t1 = sp.t1, &i0 = sp.i0, &i1 = sp.i1;
  for (const Unit& u : units)
    if (!u.loc->events.empty()) {
      t0 = std::min(t0, u.loc->events.front().time);
      t1 = std::max(t1, u.loc->events.back().time);
    }
  if (t.has_declared_span()) {
    t0 = t.span_begin;
    t1 = t.span_end;
  }
  if (t0 == kInf) t0 = t1 = 0;
  t1 = std::max(t1, t0);
  for (Unit& u : units) {
    u.active = !u.loc->events.empty() || !u.loc->states.empty();
    u.begin = t0;
    u.end = t1;
  }
  i0 = -kInf;  // I(T0) = max_p ideal_p(T0)
  for (std::size_t r = 0; r < P; ++r) {
    const auto& ev = t.locations[r].events;
    if (ev.empty()) continue;
    IdealCursor c0, c1;
    i0 = std::max(i0, ideal_at(ev, ref.times[r], c0, t0, true));
    i1 = std::max(i1, ideal_at(ev, ref.times[r], c1, t1, true));
  }
  if (i0 == -kInf) {  // no rank has an event: nothing to replay, the ideal run is the run
    i0 = t0;
    i1 = t1;
  }
}

// n windows of equal length over [t0, t1].
std::vector<Time> equal_windows(Time t0, Time t1, double elapsed, std::size_t n) {
  std::vector<Time> v(n + 1);
  for (std::size_t i = 0; i <= n; ++i) v[i] = t0 + elapsed * static_cast<double>(i) / static_cast<double>(n);
  v[n] = t1;
  return v;
}

// Windows of a fixed length from t0, the last one ending at t1.
std::vector<Time> fixed_windows(const WindowOptions& opt, Time t0, Time t1, double elapsed) {
  std::vector<Time> b;
  b.push_back(t0);
  if (elapsed / opt.length > 1e6)
    throw std::invalid_argument("time_resolved: a window length of " + std::to_string(opt.length) +
                                " s makes more than a million windows");
  for (std::size_t i = 1;; ++i) {
    const Time x = t0 + opt.length * static_cast<double>(i);
    if (x >= t1 - 1e-9 * opt.length || !(elapsed > 0)) break;  // no sliver of a window
    b.push_back(x);
  }
  b.push_back(t1);
  return b;
}

// The adaptive rule: the base windows merged until every unit with events has √(units) events
// in each (a deficient last window joins the one before).
std::vector<Time> adaptive_windows(const WindowOptions& opt, const std::vector<Unit>& units, std::size_t counted,
                                   Time t0, Time t1, double elapsed, TimeResolvedResult& res) {
  std::vector<Time> b;
  const std::vector<Time> base = equal_windows(t0, t1, elapsed, opt.count);
  const std::size_t need = static_cast<std::size_t>(std::ceil(std::sqrt(static_cast<double>(counted)) - 1e-12));
  res.min_events = need;
  const std::size_t U = units.size();
  std::vector<std::size_t> cursor(U, 0), have(U, 0);
  const auto counts = [&](const Unit& u) { return u.active && !u.loc->events.empty(); };
  for (std::size_t r = 0; r < U; ++r) {
    const auto& ev = units[r].loc->events;
    while (cursor[r] < ev.size() && ev[cursor[r]].time < t0) ++cursor[r];
  }
  std::size_t deficient = counted;
  b.push_back(t0);
  bool open = false;
  for (std::size_t j = 0; j + 1 < base.size(); ++j) {
    const bool last = j + 2 == base.size();
    for (std::size_t r = 0; r < U; ++r) {
      if (!counts(units[r])) continue;
      const auto& ev = units[r].loc->events;
      std::size_t c = cursor[r];
      while (c < ev.size() && (ev[c].time < base[j + 1] || (last && ev[c].time <= t1))) ++c;
      const std::size_t before = have[r];
      have[r] += c - cursor[r];
      cursor[r] = c;
      if (before < need && have[r] >= need) --deficient;
    }
    open = true;
    if (deficient == 0 || need == 0) {
      b.push_back(base[j + 1]);
      open = false;
      std::fill(have.begin(), have.end(), 0);
      deficient = counted;
    }
  }
  if (open) {
    if (b.size() > 1) b.back() = t1;  // a deficient last window joins the one before
    else b.push_back(t1);
  }
  b.back() = t1;
  return b;
}

// Useful time per window (per unit, then max and sum, and both cumulated), events per window.
struct UsefulTime {
  std::vector<double> sum, mx, cum_sum, cum_mx;
  std::vector<std::uint64_t> events;
};

// The useful time of every active unit in the windows b, its total per unit (res.useful) and
// the useful counter figures (res.counters).
UsefulTime useful_time(const Trace& t, const std::vector<Unit>& units, const std::vector<Time>& b, bool waitlab,
                       TimeResolvedResult& res) {
  const std::size_t W = b.size() - 1;
  const Time t0 = res.t0, t1 = res.t1;
  UsefulTime ut{std::vector<double>(W, 0), std::vector<double>(W, 0), std::vector<double>(W, 0),
                std::vector<double>(W, 0), std::vector<std::uint64_t>(W, 0)};
  auto &sum = ut.sum, &mx = ut.mx, &cum_sum = ut.cum_sum, &cum_mx = ut.cum_mx;
  auto& events = ut.events;
  std::vector<double> u(W);
  res.useful.assign(units.size(), 0);
  double ins = 0, cyc = 0, useful_total = 0;
  for (std::size_t r = 0; r < units.size(); ++r) {
    const Unit& unit = units[r];
    if (!unit.active) continue;
    std::vector<Interval> useful = outside_mpi(t, *unit.loc, unit.begin, unit.end);
    if (!waitlab) useful = subtract(useful, state_union(unit.loc->states));
    std::fill(u.begin(), u.end(), 0.0);
    std::size_t w = 0;
    for (const auto& [a, e] : useful) {
      while (w + 1 < W && b[w + 1] <= a) ++w;
      for (std::size_t x = w; x < W && b[x] < e; ++x) u[x] += std::max(0.0, std::min(e, b[x + 1]) - std::max(a, b[x]));
    }
    std::size_t we = 0;
    for (const auto& ev : unit.loc->events) {
      if (ev.time < t0 || ev.time > t1) continue;
      while (we + 1 < W && b[we + 1] <= ev.time) ++we;
      ++events[we];
    }
    double c = 0;
    for (std::size_t x = 0; x < W; ++x) {
      sum[x] += u[x];
      mx[x] = std::max(mx[x], u[x]);
      c += u[x];
      cum_sum[x] += c;
      cum_mx[x] = std::max(cum_mx[x], c);
    }
    res.useful[r] = c;
    useful_total += c;
    add_counters(unit.loc->counters, useful, ins, cyc);
  }
  auto& k = res.counters;
  k.instructions = (t.counters & trace::kHasInstructions) != 0;
  k.cycles = (t.counters & trace::kHasCycles) != 0;
  k.useful_instructions = k.instructions ? ins : 0;
  k.useful_cycles = k.cycles ? cyc : 0;
  k.ipc = k.instructions && k.cycles && cyc > 0 ? ins / cyc : 0;
  k.frequency_hz = k.cycles && useful_total > 0 ? cyc / useful_total : 0;
  return ut;
}

// I(t), the ideal time at each window boundary: the latest over the ranks, never decreasing,
// at most i1.
std::vector<Time> ideal_at_boundaries(const Trace& t, const IdealReference& ref, const std::vector<Time>& b,
                                      const Span& sp, bool waitlab) {
  const std::size_t P = t.ranks();
  const std::size_t W = b.size() - 1;
  const Time t0 = sp.t0, i0 = sp.i0, i1 = sp.i1;
  std::vector<Time> I(W + 1, -kInf);
  I[0] = i0;
  I[W] = i1;
  if (W > 1) {
    for (std::size_t r = 0; r < P; ++r) {
      const auto& ev = t.locations[r].events;
      if (ev.empty()) continue;
      IdealCursor c;
      for (std::size_t x = 1; x < W; ++x) I[x] = std::max(I[x], ideal_at(ev, ref.times[r], c, b[x], !waitlab));
    }
    if (!waitlab && I[1] == -kInf)  // no rank has an event: the ideal run is the run
      for (std::size_t x = 1; x < W; ++x) I[x] = i0 + (b[x] - t0);
  }
  for (std::size_t x = 1; x <= W; ++x) I[x] = std::min(i1, std::max(I[x], I[x - 1]));
  return I;
}

// The windows' metrics and the whole run's, and the reference's estimate.
void fill_windows(const std::vector<Time>& b, const UsefulTime& ut, const std::vector<Time>& I, Time i0,
                  Convention convention, const IdealReference& ref, TimeResolvedResult& res) {
  const std::size_t W = b.size() - 1;
  const Time t0 = res.t0;
  const auto &sum = ut.sum, &mx = ut.mx, &cum_sum = ut.cum_sum, &cum_mx = ut.cum_mx;
  const auto& events = ut.events;
  const double Pn = res.units > 0 ? static_cast<double>(res.units) : 1.0;
  res.windows.resize(W);
  for (std::size_t x = 0; x < W; ++x) {
    Window& win = res.windows[x];
    win.start = b[x];
    win.end = b[x + 1];
    win.events = events[x];
    win.useful_max = mx[x];
    win.useful_mean = sum[x] / Pn;
    const double len = win.end - win.start;
    win.ideal = clamp_ideal(I[x + 1] - I[x], win.useful_max, len);
    win.ideal_end = I[x + 1] - i0;
    win.eff = metrics(win.useful_max, win.useful_mean, win.ideal, len);
    win.cum_useful_max = cum_mx[x];
    win.cum_useful_mean = cum_sum[x] / Pn;
    const double clen = win.end - t0;
    win.cum_ideal = clamp_ideal(win.ideal_end, win.cum_useful_max, clen);
    win.cum = metrics(win.cum_useful_max, win.cum_useful_mean, win.cum_ideal, clen);
  }
  res.useful_max = W > 0 ? cum_mx[W - 1] : 0;
  res.useful_mean = W > 0 ? cum_sum[W - 1] / Pn : 0;
  res.ideal = clamp_ideal(res.ideal_unclamped, res.useful_max, res.elapsed);
  res.eff = metrics(res.useful_max, res.useful_mean, res.ideal, res.elapsed);
  // The reference's estimate: compute keeps its length on an ideal network (Lamport replay and
  // ideal-network run alike), so the ideal run's largest useful time is the measured one.
  res.estimates.push_back(make_estimate(ref.source, res.ideal, res.useful_max, res.eff.comm_e));
  if (convention == Convention::Bsc) {
    res.eff.ser_e = res.estimates[0].ser_e;
    res.eff.trf_e = res.estimates[0].trf_e;
  }
}

}  // namespace

TimeResolvedResult time_resolved(const Trace& t, const IdealReference& ref, const WindowOptions& opt,
                                 Convention convention) {
  check_inputs(t, ref, opt);
  const std::size_t P = t.ranks();
  const bool waitlab = convention == Convention::Waitlab;
  TimeResolvedResult res;
  res.convention = convention;
  res.ranks = P;
  res.source = ref.source;
  res.relaxed_sends = ref.relaxed_sends;
  res.unresolved = ref.unresolved;
  res.windows_rule = opt;

  // The units: the ranks, then (Bsc, Scalasca) the worker threads.
  std::vector<Unit> units(P + (waitlab ? 0 : t.threads.size()));
  for (std::size_t r = 0; r < P; ++r) units[r].loc = &t.locations[r];
  for (std::size_t i = P; i < units.size(); ++i) units[i].loc = &t.threads[i - P];
  const auto has_mpi = [&](const trace::Location& l) {
    return std::any_of(l.events.begin(), l.events.end(), [&](const Event& e) { return mpi_boundary(t, e); });
  };
  res.mpi = std::any_of(t.locations.begin(), t.locations.end(), has_mpi) ||
            std::any_of(t.threads.begin(), t.threads.end(), has_mpi);

  // The span: T0, T1 and the ideal start i0 and end i1.
  Span sp;
  if (waitlab)
    waitlab_span(t, ref, units, sp);
  else
    whole_trace_span(t, ref, units, sp);
  Time &t0 = sp.t0, &t1 = sp.t1, &i0 = sp.i0, &i1 = sp.i1;
  std::size_t active = 0, counted = 0;  // units in the averages; those with events (adaptive rule)
  for (const Unit& u : units) {
    active += u.active ? 1 : 0;
    counted += u.active && !u.loc->events.empty() ? 1 : 0;
  }
  if (active == 0) t0 = t1 = i0 = i1 = 0;
  t1 = std::max(t1, t0);
  i1 = std::max(i1, i0);
  res.t0 = t0;
  res.t1 = t1;
  res.elapsed = t1 - t0;
  res.ideal_unclamped = i1 - i0;
  res.units = active;

  // Window boundaries.
  std::vector<Time> b;
  if (opt.rule == WindowRule::Fixed)
    b = fixed_windows(opt, t0, t1, res.elapsed);
  else if (opt.rule == WindowRule::Count)
    b = equal_windows(t0, t1, res.elapsed, opt.count);
  else
    b = adaptive_windows(opt, units, counted, t0, t1, res.elapsed, res);

  const UsefulTime ut = useful_time(t, units, b, waitlab, res);
  const std::vector<Time> I = ideal_at_boundaries(t, ref, b, sp, waitlab);
  fill_windows(b, ut, I, i0, convention, ref, res);
  return res;
}

}  // namespace waitlab::analysis
