#include "analysis/timeresolved/timeresolved.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "analysis/engine/bytes.hpp"
#include "analysis/engine/serial_transport.hpp"
#include "analysis/engine/shard.hpp"
#include "analysis/engine/transport.hpp"
#include "analysis/timeresolved/intervals.hpp"

namespace waitlab::analysis {

using trace::Event;
using trace::EventKind;
using trace::Matching;
using trace::MpiOp;
using trace::Rank;
using trace::Time;
using trace::Trace;
using intervals::Interval;
using intervals::mpi_boundary;
using intervals::outside_mpi;
using intervals::state_union;
using intervals::subtract;

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

Time records_end(const trace::Location& l) {
  if (l.states.empty() || l.states.back().state != trace::kStateNoRecord) return std::numeric_limits<Time>::infinity();
  Time end = l.states.back().begin;
  if (!l.events.empty()) end = std::max(end, l.events.back().time);
  if (!l.counters.empty()) end = std::max(end, l.counters.back().time);
  return end;
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

// The op of the region an Enter/Leave refers to (None for user regions and other events).
MpiOp region_op(const trace::Definitions& defs, const Event& e) {
  if (e.kind != EventKind::Enter && e.kind != EventKind::Leave) return MpiOp::None;
  return e.ref < defs.regions.size() ? defs.regions[e.ref].op : MpiOp::None;
}

// Waitlab's span of a rank: the events that open and close its run.
struct RankSpan {
  std::size_t start = 0, end = 0;  // event indices
  bool empty = true;
};

RankSpan rank_span(const trace::Definitions& defs, const std::vector<Event>& ev) {
  RankSpan s;
  if (ev.empty()) return s;
  s.empty = false;
  s.end = ev.size() - 1;
  bool init = false, fin = false;
  for (std::size_t k = 0; k < ev.size(); ++k) {
    const MpiOp op = region_op(defs, ev[k]);
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

}  // namespace

double time_outside_mpi(const trace::Definitions& defs, const trace::Location& l, Time a, Time b) {
  double u = 0;
  for (const auto& [x, y] : outside_mpi(defs, l, a, b)) u += y - x;
  return u;
}

namespace {


// Σ deltas of the samples whose stretch ends in useful time: sample at t counts when t − ε is
// useful, i.e. some useful interval has a < t ≤ b, and its stretch is not empty — a sample at
// the time of the location's previous one (Extrae's Enter and Leave of an MPI_Cart_create in
// the same nanosecond, both with PAPI values) has nothing before it: only the first sample at
// a time counts, as Paraver's "next event value" gives the burst before it the first one.
void add_counters(const std::vector<trace::CounterSample>& samples, const std::vector<Interval>& useful, double& ins,
                  double& cyc) {
  std::size_t j = 0;
  for (std::size_t k = 0; k < samples.size(); ++k) {
    const auto& s = samples[k];
    if (k > 0 && samples[k - 1].time == s.time) continue;
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

// --- the ideal reference of a re-simulation ----------------------------------------------

// Why owned rank r of the run and of the ideal run do not correspond ("" if they do).
std::string rank_mismatch(const trace::Location& run, const trace::Location& ideal, engine::Location r) {
  const auto completion = [](EventKind k) { return k == EventKind::IsendComplete || k == EventKind::IrecvComplete; };
  const auto& a = run.events;
  const auto& b = ideal.events;
  if (a.size() != b.size())
    return "rank " + std::to_string(r) + " has " + std::to_string(b.size()) + " events in the ideal run, " +
           std::to_string(a.size()) + " in the run";
  for (std::size_t k = 0; k < a.size(); ++k)
    if (a[k].kind != b[k].kind && !(completion(a[k].kind) && completion(b[k].kind)))
      return "event " + std::to_string(k) + " of rank " + std::to_string(r) + " is a " +
             std::string(trace::event_kind_name(b[k].kind)) + " in the ideal run, a " +
             std::string(trace::event_kind_name(a[k].kind)) + " in the run";
  return "";
}

}  // namespace

bool network_reference(const engine::Shard& shard, const Trace& ideal, IdealReference& out, std::string& why,
                       engine::Transport& transport) {
  if (static_cast<std::size_t>(shard.ranks) != ideal.ranks()) {
    why = "the ideal run has " + std::to_string(ideal.ranks()) + " ranks, the run " + std::to_string(shard.ranks);
    return false;
  }
  std::string mine;  // the first owned rank that does not correspond
  for (engine::Location r = shard.owned.first; r < shard.owned.last && mine.empty(); ++r)
    mine = rank_mismatch(shard.location(r), ideal.locations[static_cast<std::size_t>(r)], r);
  std::string first;  // the lowest rank's, on process 0
  for (const engine::Bytes& part : transport.gather(engine::encode(std::vector<char>(mine.begin(), mine.end()))))
    if (first.empty()) {
      const auto text = engine::decode<std::vector<char>>(part);
      first.assign(text.begin(), text.end());
    }
  const auto agreed = engine::decode<std::vector<char>>(transport.broadcast(engine::encode(std::vector<char>(first.begin(), first.end()))));
  if (!agreed.empty()) {
    why.assign(agreed.begin(), agreed.end());
    return false;
  }
  out = IdealReference{};
  out.source = "ideal_network";
  for (engine::Location r = shard.owned.first; r < shard.owned.last; ++r) {
    const auto& b = ideal.locations[static_cast<std::size_t>(r)].events;
    auto& times = out.times.emplace_back(b.size());
    for (std::size_t k = 0; k < b.size(); ++k) times[k] = b[k].time;
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

constexpr Time kInf = std::numeric_limits<Time>::infinity();

// --- the time the metrics cover -----------------------------------------------------------

// The run's span [T0, T1] as one piece, or a cut's pieces inside it (cut.hpp), ordered and
// disjoint.
struct Axis {
  bool cut = false;
  std::vector<Interval> pieces;
  Time t0() const { return pieces.front().a; }
  Time t1() const { return pieces.back().b; }
};

Axis axis_of(const Cut& cut, Time t0, Time t1) {
  Axis ax;
  if (!cut.any()) {
    ax.pieces.push_back({t0, t1});
    return ax;
  }
  ax.cut = true;
  for (const auto& [a, b] : clip_cut(cut, t0, t1)) ax.pieces.push_back({a, b});
  return ax;
}

// A cut's time and ideal time from its start to t: L(t), the time of the pieces before t, and
// D(t), Σ over the pieces' parts before t of I(end) − I(start) — I known at the points `pts`
// (every window boundary and piece end, in order). A window [s, e) has L(e) − L(s) of cut time
// and D(e) − D(s) of ideal time. O(log pieces) each.
class CutMeasure {
 public:
  CutMeasure(const Axis& ax, const std::vector<Time>& pts, const std::vector<Time>& I) : ax_(ax), pts_(pts), I_(I) {
    double l = 0, d = 0;
    for (const auto& [a, b] : ax.pieces) {
      length_before_.push_back(l);
      ideal_before_.push_back(d);
      l += b - a;
      d += at(b) - at(a);
    }
    length_before_.push_back(l);
    ideal_before_.push_back(d);
  }
  double length(Time t) const {
    const std::size_t k = piece(t);
    return k < ax_.pieces.size() && t > ax_.pieces[k].a ? length_before_[k] + (t - ax_.pieces[k].a) : length_before_[k];
  }
  double ideal(Time t) const {
    const std::size_t k = piece(t);
    return k < ax_.pieces.size() && t > ax_.pieces[k].a ? ideal_before_[k] + (at(t) - at(ax_.pieces[k].a))
                                                        : ideal_before_[k];
  }

 private:
  // The first piece that ends after t (pieces.size() if none).
  std::size_t piece(Time t) const {
    const auto it = std::partition_point(ax_.pieces.begin(), ax_.pieces.end(), [&](const Interval& p) { return p.b <= t; });
    return static_cast<std::size_t>(it - ax_.pieces.begin());
  }
  Time at(Time t) const {
    const auto it = std::lower_bound(pts_.begin(), pts_.end(), t);
    return I_[static_cast<std::size_t>(std::min<std::ptrdiff_t>(it - pts_.begin(), static_cast<std::ptrdiff_t>(pts_.size()) - 1))];
  }
  const Axis& ax_;
  const std::vector<Time>& pts_;
  const std::vector<Time>& I_;
  std::vector<double> length_before_, ideal_before_;
};

// Points on the cut's axis (from 0, the pieces laid end to end), in order, as times.
std::vector<Time> on_axis(const Axis& ax, const std::vector<Time>& c) {
  std::vector<Time> out(c.size());
  std::size_t k = 0;
  double before = 0;  // the pieces' length before piece k
  for (std::size_t i = 0; i < c.size(); ++i) {
    while (k + 1 < ax.pieces.size() && c[i] > before + (ax.pieces[k].b - ax.pieces[k].a)) {
      before += ax.pieces[k].b - ax.pieces[k].a;
      ++k;
    }
    out[i] = std::min(ax.pieces[k].b, ax.pieces[k].a + (c[i] - before));
  }
  if (!out.empty()) out.front() = ax.t0(), out.back() = ax.t1();
  return out;
}

// Whether times asked in increasing order are in a piece ([a, b), the last piece's end in).
struct PieceCursor {
  const Axis& ax;
  std::size_t k = 0;
  bool operator()(Time t) {
    while (k < ax.pieces.size() && ax.pieces[k].b <= t) ++k;
    if (k == ax.pieces.size()) return t == ax.t1();
    return t >= ax.pieces[k].a;
  }
};

// --- the windows on the replay engine ---------------------------------------------------

// The inputs time_resolved refuses: a reference of other locations, no window length or count.
void check_inputs(const engine::Shard& shard, const IdealReference& ref, const WindowOptions& opt) {
  const engine::LocationRange owned = shard.owned;
  if (ref.times.size() != static_cast<std::size_t>(owned.size()))
    throw std::invalid_argument("time_resolved: the ideal reference has another rank count");
  for (engine::Location r = owned.first; r < owned.last; ++r)
    if (ref.times[static_cast<std::size_t>(r - owned.first)].size() != shard.location(r).events.size())
      throw std::invalid_argument("time_resolved: the ideal reference of rank " + std::to_string(r) +
                                  " has another event count");
  if (opt.rule == WindowRule::Fixed && !(opt.length > 0 && std::isfinite(opt.length)))
    throw std::invalid_argument("time_resolved: the window length must be positive");
  if (opt.rule != WindowRule::Fixed && opt.count == 0)
    throw std::invalid_argument("time_resolved: the window count must be positive");
}

// One unit of the averages: a rank (it has ideal times) or a worker thread, owned here.
struct Unit {
  const trace::Location* loc = nullptr;
  const std::vector<Time>* ideal = nullptr;  // ranks only
  bool active = false;                       // counts in the averages
  Time begin = 0, end = 0;                   // its span
  Time stop = kInf;                          // Bsc ranks: where the rank's records end (records_end)
};

// What the span needs of a unit (process 0 gathers them in unit order).
struct UnitFacts {
  std::uint8_t events = 0, states = 0, span = 0;  // has events; has states; Waitlab: has a span
  Time first = 0, last = 0;                       // its first and last event
  Time begin = 0, end = 0, ideal_begin = 0, ideal_end = 0;  // Waitlab: its span and their ideal times
};

UnitFacts facts_of(const trace::Definitions& defs, const Unit& u) {
  UnitFacts f;
  const auto& ev = u.loc->events;
  f.states = u.loc->states.empty() ? 0 : 1;
  if (ev.empty()) return f;
  f.events = 1;
  f.first = ev.front().time;
  f.last = ev.back().time;
  if (u.ideal == nullptr) return f;
  const RankSpan span = rank_span(defs, ev);
  f.span = 1;
  f.begin = ev[span.start].time;
  f.end = ev[span.end].time;
  f.ideal_begin = (*u.ideal)[span.start];
  f.ideal_end = (*u.ideal)[span.end];
  return f;
}

// The run's span: T0 and T1, the ideal start i0 and end i1; the units in the averages.
struct Span {
  Time t0 = kInf, t1 = -kInf, i0 = kInf, i1 = -kInf;
  std::uint64_t active = 0;  // units in the averages
};

// Waitlab's span: from the first rank's MPI_Init to the last one's MPI_Finalize; only ranks with
// events count (facts: the ranks').
void waitlab_span(const std::vector<UnitFacts>& facts, Span& sp) {
  for (const UnitFacts& f : facts) {
    if (!f.span) continue;
    ++sp.active;
    sp.t0 = std::min(sp.t0, f.begin);
    sp.t1 = std::max(sp.t1, f.end);
    sp.i0 = std::min(sp.i0, f.ideal_begin);
    sp.i1 = std::max(sp.i1, f.ideal_end);
  }
}

// Bsc's and Scalasca's span: the whole trace (or the span it declares), every unit with events
// or states counted over all of it (facts: every unit's). The ideal start and end come later.
void whole_trace_span(const engine::Shard& shard, const std::vector<UnitFacts>& facts, Span& sp) {
  for (const UnitFacts& f : facts)
    if (f.events) {
      sp.t0 = std::min(sp.t0, f.first);
      sp.t1 = std::max(sp.t1, f.last);
    }
  if (shard.span_end >= shard.span_begin) {  // Trace::has_declared_span
    sp.t0 = shard.span_begin;
    sp.t1 = shard.span_end;
  }
  if (sp.t0 == kInf) sp.t0 = sp.t1 = 0;
  sp.t1 = std::max(sp.t1, sp.t0);
  for (const UnitFacts& f : facts) {
    sp.active += f.events || f.states ? 1 : 0;
  }
}

// Per-unit values of every process on process 0 in unit order: every rank's, then every thread's
// (`mine`: the owned ranks' first, `ranks` of them, then the owned threads').
template <typename T>
std::vector<T> gather_units(const std::vector<T>& mine, std::size_t ranks, engine::Transport& transport) {
  engine::ByteWriter w;
  w.put(std::vector<T>(mine.begin(), mine.begin() + static_cast<std::ptrdiff_t>(ranks)))
      .put(std::vector<T>(mine.begin() + static_cast<std::ptrdiff_t>(ranks), mine.end()));
  std::vector<T> all, threads;
  for (const engine::Bytes& part : transport.gather(w.bytes())) {
    engine::ByteReader in(part);
    const auto r = in.get_vector<T>();
    const auto t = in.get_vector<T>();
    all.insert(all.end(), r.begin(), r.end());
    threads.insert(threads.end(), t.begin(), t.end());
  }
  all.insert(all.end(), threads.begin(), threads.end());
  return all;
}

// Every unit's facts on process 0, in unit order.
std::vector<UnitFacts> gather_facts(const engine::Shard& shard, const std::vector<Unit>& units, std::size_t ranks,
                                    engine::Transport& transport) {
  std::vector<UnitFacts> mine;
  for (const Unit& u : units) mine.push_back(facts_of(shard.defs, u));
  return gather_units(mine, ranks, transport);
}

// The latest ideal time at T0 and at T1 over the ranks with events (Bsc, Scalasca), on process 0.
void whole_trace_ideal(const std::vector<Unit>& units, std::size_t ranks, Span& sp, engine::Transport& transport) {
  std::vector<Time> mine;  // per owned rank with events: ideal(T0), ideal(T1)
  for (std::size_t i = 0; i < ranks; ++i) {
    const auto& ev = units[i].loc->events;
    if (ev.empty()) continue;
    IdealCursor c0, c1;
    mine.push_back(ideal_at(ev, *units[i].ideal, c0, std::min(sp.t0, units[i].stop), true));
    mine.push_back(ideal_at(ev, *units[i].ideal, c1, std::min(sp.t1, units[i].stop), true));
  }
  sp.i0 = -kInf;  // I(T0) = max_p ideal_p(T0)
  for (const engine::Bytes& part : transport.gather(engine::encode(mine))) {
    const auto some = engine::decode<std::vector<Time>>(part);
    for (std::size_t k = 0; k < some.size(); k += 2) {
      sp.i0 = std::max(sp.i0, some[k]);
      sp.i1 = std::max(sp.i1, some[k + 1]);
    }
  }
  if (sp.i0 == -kInf) {  // no rank has an event: nothing to replay, the ideal run is the run
    sp.i0 = sp.t0;
    sp.i1 = sp.t1;
  }
}

// The span on process 0 (T0 and T1 on every process), and each owned unit's part in it.
Span span_of(const engine::Shard& shard, std::vector<Unit>& units, std::size_t ranks, Convention convention,
             engine::Transport& transport) {
  const bool waitlab = convention == Convention::Waitlab;
  // Bsc: a rank of the ideal run ends where its records end (Dimemas replays its records).
  if (convention == Convention::Bsc)
    for (std::size_t i = 0; i < ranks; ++i) units[i].stop = records_end(*units[i].loc);
  const std::vector<UnitFacts> facts = gather_facts(shard, units, ranks, transport);
  Span sp;
  if (transport.self() == 0) {
    if (waitlab)
      waitlab_span(facts, sp);
    else
      whole_trace_span(shard, facts, sp);
  }
  const auto t = engine::decode<std::vector<Time>>(transport.broadcast(engine::encode(std::vector<Time>{sp.t0, sp.t1})));
  sp.t0 = t[0];
  sp.t1 = t[1];
  if (!waitlab) whole_trace_ideal(units, ranks, sp, transport);
  for (Unit& u : units) {
    if (waitlab) {
      const UnitFacts f = facts_of(shard.defs, u);
      u.active = f.span != 0;
      u.begin = f.begin;
      u.end = f.end;
    } else {
      u.active = !u.loc->events.empty() || !u.loc->states.empty();
      u.begin = sp.t0;
      u.end = sp.t1;
    }
  }
  if (sp.active == 0) sp.t0 = sp.t1 = sp.i0 = sp.i1 = 0;
  sp.t1 = std::max(sp.t1, sp.t0);
  sp.i1 = std::max(sp.i1, sp.i0);
  const auto t01 = engine::decode<std::vector<Time>>(transport.broadcast(engine::encode(std::vector<Time>{sp.t0, sp.t1})));
  sp.t0 = t01[0];
  sp.t1 = t01[1];
  return sp;
}

// The adaptive rule: the base windows merged until every unit with events has √(units) events
// in each (a deficient last window joins the one before). Every process counts its units' events
// per base window; process 0 merges and broadcasts the boundaries.
std::vector<Time> adaptive_windows(const std::vector<Time>& base, const std::vector<Unit>& units, std::size_t counted,
                                   const Axis& ax, TimeResolvedResult& res, engine::Transport& transport) {
  const Time t0 = ax.t0(), t1 = ax.t1();
  const std::size_t B = base.size() - 1;
  std::vector<std::uint64_t> mine;  // per counted unit, its events per base window
  for (const Unit& u : units) {
    if (!u.active || u.loc->events.empty()) continue;
    const auto& ev = u.loc->events;
    std::size_t c = 0;
    while (c < ev.size() && ev[c].time < t0) ++c;
    PieceCursor in{ax};
    for (std::size_t j = 0; j < B; ++j) {
      const bool last = j + 1 == B;
      std::uint64_t n = 0;
      for (; c < ev.size() && (ev[c].time < base[j + 1] || (last && ev[c].time <= t1)); ++c) n += in(ev[c].time);
      mine.push_back(n);
    }
  }
  const std::size_t need = static_cast<std::size_t>(std::ceil(std::sqrt(static_cast<double>(counted)) - 1e-12));
  res.min_events = need;
  std::vector<Time> b;
  if (transport.self() == 0) {
    std::vector<std::uint64_t> counts;
    for (const engine::Bytes& part : transport.gather(engine::encode(mine))) {
      const auto some = engine::decode<std::vector<std::uint64_t>>(part);
      counts.insert(counts.end(), some.begin(), some.end());
    }
    const std::size_t U = B > 0 ? counts.size() / B : 0;
    std::vector<std::uint64_t> have(U, 0);
    std::size_t deficient = counted;
    b.push_back(t0);
    bool open = false;
    for (std::size_t j = 0; j < B; ++j) {
      for (std::size_t r = 0; r < U; ++r) {
        const std::uint64_t before = have[r];
        have[r] += counts[r * B + j];
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
  } else {
    transport.gather(engine::encode(mine));
  }
  return engine::decode<std::vector<Time>>(transport.broadcast(engine::encode(b)));
}

// What travels along the units in unit order (ranks, then threads): per window the useful
// time's sum and maximum over the units, both cumulated, the events, the ideal time at each
// boundary (the latest over the ranks) and the counter and useful totals — the serial loops' bits.
struct Folded {
  std::vector<double> sum, mx, cum_sum, cum_mx;
  std::vector<std::uint64_t> events;
  std::vector<Time> ideal;  // I(b[x]) over the ranks so far, x in 1..W−1
  double ins = 0, cyc = 0, useful_total = 0;
  double ideal_useful_max = 0;  // Bsc: max over the ranks of their useful time in the ideal run

  engine::Bytes bytes() const {
    engine::ByteWriter w;
    w.put(sum).put(mx).put(cum_sum).put(cum_mx).put(events).put(ideal).put(ins).put(cyc).put(useful_total);
    w.put(ideal_useful_max);
    return std::move(w).bytes();
  }
  static Folded of(const engine::Bytes& b) {
    engine::ByteReader in(b);
    Folded f;
    f.sum = in.get_vector<double>();
    f.mx = in.get_vector<double>();
    f.cum_sum = in.get_vector<double>();
    f.cum_mx = in.get_vector<double>();
    f.events = in.get_vector<std::uint64_t>();
    f.ideal = in.get_vector<Time>();
    f.ins = in.get<double>();
    f.cyc = in.get<double>();
    f.useful_total = in.get<double>();
    f.ideal_useful_max = in.get<double>();
    return f;
  }
};

// One unit's part of the fold: its useful time per window, its events, its counters; its total
// useful time returned.
double fold_unit(const trace::Definitions& defs, const Unit& unit, const std::vector<Time>& b, const Axis& ax,
                 bool waitlab, Folded& f) {
  const std::size_t W = b.size() - 1;
  const Time t0 = ax.t0(), t1 = ax.t1();
  std::vector<Interval> useful = outside_mpi(defs, *unit.loc, unit.begin, unit.end);
  if (!waitlab) useful = subtract(useful, state_union(unit.loc->states));
  if (ax.cut) useful = intervals::intersect(useful, ax.pieces);
  std::vector<double> u(W, 0.0);
  std::size_t w = 0;
  for (const auto& [a, e] : useful) {
    while (w + 1 < W && b[w + 1] <= a) ++w;
    for (std::size_t x = w; x < W && b[x] < e; ++x) u[x] += std::max(0.0, std::min(e, b[x + 1]) - std::max(a, b[x]));
  }
  std::size_t we = 0;
  PieceCursor in{ax};
  for (const auto& ev : unit.loc->events) {
    if (ev.time < t0 || ev.time > t1 || !in(ev.time)) continue;
    while (we + 1 < W && b[we + 1] <= ev.time) ++we;
    ++f.events[we];
  }
  double c = 0;
  for (std::size_t x = 0; x < W; ++x) {
    f.sum[x] += u[x];
    f.mx[x] = std::max(f.mx[x], u[x]);
    c += u[x];
    f.cum_sum[x] += c;
    f.cum_mx[x] = std::max(f.cum_mx[x], c);
  }
  f.useful_total += c;
  add_counters(unit.loc->counters, useful, f.ins, f.cyc);
  return c;
}

// A rank's useful time in BSC's ideal run: Dimemas replays every stretch outside MPI calls as
// computation of its measured length, states ("not created", flushing) included, from the
// span's start to where its records end — the time outside MPI calls in [T0, min(T1, stop)]
// (in each piece of a cut).
double ideal_useful(const trace::Definitions& defs, const Unit& unit, const Axis& ax) {
  if (!ax.cut) return time_outside_mpi(defs, *unit.loc, ax.t0(), std::min(ax.t1(), unit.stop));
  return intervals::length(intervals::intersect(outside_mpi(defs, *unit.loc, ax.t0(), std::min(ax.t1(), unit.stop)), ax.pieces));
}

// The fold along every unit (a chain over the processes for the ranks, another for the threads);
// each owned unit's useful total in `useful` (0 for a unit not in the averages).
// I is wanted at pts[from..to) (the inner window boundaries; with a cut, every boundary and
// piece end).
Folded fold_units(const trace::Definitions& defs, const std::vector<Unit>& units, std::size_t ranks,
                  const std::vector<Time>& b, const Axis& ax, const std::vector<Time>& pts, std::size_t from_pt,
                  std::size_t to_pt, Convention convention, std::vector<double>& useful, engine::Transport& transport) {
  const bool waitlab = convention == Convention::Waitlab;
  const std::size_t W = b.size() - 1;
  useful.assign(units.size(), 0.0);
  Folded initial{std::vector<double>(W, 0), std::vector<double>(W, 0), std::vector<double>(W, 0),
                 std::vector<double>(W, 0), std::vector<std::uint64_t>(W, 0), std::vector<Time>(pts.size(), -kInf)};
  const auto step = [&](std::size_t from, std::size_t to) {
    return [&, from, to](engine::Bytes in) {
      Folded f = Folded::of(in);
      for (std::size_t i = from; i < to; ++i) {
        const Unit& unit = units[i];
        if (unit.active) useful[i] = fold_unit(defs, unit, b, ax, waitlab, f);
        if (convention == Convention::Bsc && i < ranks && unit.active)
          f.ideal_useful_max = std::max(f.ideal_useful_max, ideal_useful(defs, unit, ax));
        if (i >= ranks || unit.loc->events.empty()) continue;
        IdealCursor c;  // I(t), the ideal time at each point: the latest over the ranks
        for (std::size_t x = from_pt; x < to_pt; ++x)
          f.ideal[x] = std::max(f.ideal[x], ideal_at(unit.loc->events, *unit.ideal, c, std::min(pts[x], unit.stop), !waitlab));
      }
      return f.bytes();
    };
  };
  engine::Bytes folded = transport.chain(initial.bytes(), step(0, ranks));
  if (!waitlab) folded = transport.chain(std::move(folded), step(ranks, units.size()));
  return Folded::of(folded);
}

// I(t) at each window boundary: the latest over the ranks (folded), never decreasing, at most i1.
std::vector<Time> ideal_at_boundaries(std::vector<Time> I, const std::vector<Time>& b, const Span& sp, bool waitlab) {
  const std::size_t W = b.size() - 1;
  I[0] = sp.i0;
  I[W] = sp.i1;
  if (W > 1 && !waitlab && I[1] == -kInf)  // no rank has an event: the ideal run is the run
    for (std::size_t x = 1; x < W; ++x) I[x] = sp.i0 + (b[x] - sp.t0);
  for (std::size_t x = 1; x <= W; ++x) I[x] = std::min(sp.i1, std::max(I[x], I[x - 1]));
  return I;
}

// I(t) at every point of a cut (the latest over the ranks, folded), never decreasing; with no
// rank event the ideal run is the run.
std::vector<Time> ideal_at_points(std::vector<Time> I, const std::vector<Time>& pts) {
  if (!I.empty() && I[0] == -kInf) return pts;
  for (std::size_t x = 1; x < I.size(); ++x) I[x] = std::max(I[x], I[x - 1]);
  return I;
}

// The windows' metrics and the whole run's, and the reference's estimate.
void fill_windows(const std::vector<Time>& b, const Folded& ut, const Axis& ax, const std::vector<Time>& pts,
                  const std::vector<Time>& I, Convention convention, const IdealReference& ref,
                  TimeResolvedResult& res) {
  const std::size_t W = b.size() - 1;
  const Time t0 = res.t0;
  const CutMeasure cut(ax, pts, I);  // used with a cut only
  if (ax.cut) res.ideal_unclamped = cut.ideal(ax.t1());  // Σ_k I(b_k) − I(a_k)
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
    // Without a cut, pts are the boundaries: I[x] is I(b[x]).
    const double len = ax.cut ? cut.length(win.end) - cut.length(win.start) : win.end - win.start;
    win.ideal = clamp_ideal(ax.cut ? cut.ideal(win.end) - cut.ideal(win.start) : I[x + 1] - I[x], win.useful_max, len);
    win.ideal_end = ax.cut ? cut.ideal(win.end) : I[x + 1] - I[0];
    win.eff = metrics(win.useful_max, win.useful_mean, win.ideal, len);
    win.cum_useful_max = cum_mx[x];
    win.cum_useful_mean = cum_sum[x] / Pn;
    const double clen = ax.cut ? cut.length(win.end) : win.end - t0;
    win.cum_ideal = clamp_ideal(win.ideal_end, win.cum_useful_max, clen);
    win.cum = metrics(win.cum_useful_max, win.cum_useful_mean, win.cum_ideal, clen);
  }
  res.useful_max = W > 0 ? cum_mx[W - 1] : 0;
  res.useful_mean = W > 0 ? cum_sum[W - 1] / Pn : 0;
  // The ideal run's largest useful time: Bsc (with MPI) BSC's, every rank's time outside MPI
  // calls up to where its records end; otherwise the measured one (compute keeps its length on
  // an ideal network, Lamport replay and ideal-network run alike).
  res.useful_ideal_max = convention == Convention::Bsc && res.mpi ? ut.ideal_useful_max : res.useful_max;
  res.ideal = clamp_ideal(res.ideal_unclamped, res.useful_ideal_max, res.elapsed);
  res.eff = metrics(res.useful_max, res.useful_mean, res.ideal, res.elapsed);
  res.estimates.push_back(make_estimate(ref.source, res.ideal, res.useful_ideal_max, res.eff.comm_e));
  if (convention == Convention::Bsc) {
    res.eff.ser_e = res.estimates[0].ser_e;
    res.eff.trf_e = res.estimates[0].trf_e;
  }
}

// The counter figures from the folded totals.
void set_counters(std::uint8_t counters, const Folded& f, UsefulCounters& k) {
  k.instructions = (counters & trace::kHasInstructions) != 0;
  k.cycles = (counters & trace::kHasCycles) != 0;
  k.useful_instructions = k.instructions ? f.ins : 0;
  k.useful_cycles = k.cycles ? f.cyc : 0;
  k.ipc = k.instructions && k.cycles && f.cyc > 0 ? f.ins / f.cyc : 0;
  k.frequency_hz = k.cycles && f.useful_total > 0 ? f.cyc / f.useful_total : 0;
}

// The owned units: the ranks, then (Bsc, Scalasca) their worker threads.
std::vector<Unit> owned_units(const engine::Shard& shard, const IdealReference& ref, bool waitlab) {
  std::vector<Unit> units;
  for (std::size_t i = 0; i < shard.locations.size(); ++i) units.push_back(Unit{&shard.locations[i], &ref.times[i]});
  if (!waitlab)
    for (const trace::Location& l : shard.threads) units.push_back(Unit{&l, nullptr});
  return units;
}

// A cut's pieces as cut.hpp gives them.
std::vector<Piece> cut_pieces(const Axis& ax) {
  std::vector<Piece> p;
  for (const auto& [a, b] : ax.pieces) p.emplace_back(a, b);
  return p;
}

// The window boundaries of the rule: over [T0, T1], or with a cut over its axis (from 0, the
// pieces end to end) and then placed in time.
std::vector<Time> window_boundaries(const WindowOptions& opt, const Axis& ax, double elapsed,
                                    const std::vector<Unit>& units, std::size_t counted, TimeResolvedResult& res,
                                    engine::Transport& transport) {
  const Time t0 = ax.cut ? 0 : ax.t0(), t1 = ax.cut ? elapsed : ax.t1();
  const auto placed = [&](std::vector<Time> b) { return ax.cut ? on_axis(ax, b) : b; };
  if (opt.rule == WindowRule::Fixed) return placed(fixed_windows(opt, t0, t1, elapsed));
  if (opt.rule == WindowRule::Count) return placed(equal_windows(t0, t1, elapsed, opt.count));
  return adaptive_windows(placed(equal_windows(t0, t1, elapsed, opt.count)), units, counted, ax, res, transport);
}

}  // namespace

TimeResolvedResult time_resolved(const engine::Shard& shard, const IdealReference& ref, const WindowOptions& opt,
                                 Convention convention, engine::Transport& transport, const Cut& cut) {
  check_inputs(shard, ref, opt);
  const bool waitlab = convention == Convention::Waitlab;
  std::vector<Unit> units = owned_units(shard, ref, waitlab);
  const std::size_t ranks = shard.locations.size();
  std::uint64_t mpi = 0;  // owned ranks and threads with an MPI call (every convention)
  for (const auto* list : {&shard.locations, &shard.threads})
    for (const trace::Location& l : *list)
      mpi += std::any_of(l.events.begin(), l.events.end(), [&](const Event& e) { return mpi_boundary(shard.defs, e); });
  mpi = transport.sum(mpi);

  TimeResolvedResult res;
  const Span sp = span_of(shard, units, ranks, convention, transport);
  const Axis ax = axis_of(cut, sp.t0, sp.t1);
  const double elapsed = ax.cut ? cut_length(cut_pieces(ax)) : sp.t1 - sp.t0;
  std::uint64_t counted = 0;  // units in the averages with events (the adaptive rule)
  for (const Unit& u : units) counted += u.active && !u.loc->events.empty() ? 1 : 0;
  counted = transport.sum(counted);
  const std::vector<Time> b = window_boundaries(opt, ax, elapsed, units, counted, res, transport);
  // Where the ideal time is wanted: the inner boundaries (the span's ends are known); with a
  // cut, every boundary and piece end.
  std::vector<Time> pts = b;
  std::size_t from_pt = 1, to_pt = b.size() > 2 ? b.size() - 1 : 1;
  if (ax.cut) {
    for (const auto& [a, e] : ax.pieces) pts.push_back(a), pts.push_back(e);
    std::sort(pts.begin(), pts.end());
    pts.erase(std::unique(pts.begin(), pts.end()), pts.end());
    from_pt = 0, to_pt = pts.size();
  }

  std::vector<double> useful;
  const Folded f = fold_units(shard.defs, units, ranks, b, ax, pts, from_pt, to_pt, convention, useful, transport);
  std::vector<double> all_useful = gather_units(useful, ranks, transport);
  if (transport.self() != 0) return TimeResolvedResult{};

  res.convention = convention;
  res.ranks = static_cast<std::size_t>(shard.ranks);
  res.source = ref.source;
  res.relaxed_sends = ref.relaxed_sends;
  res.unresolved = ref.unresolved;
  res.windows_rule = opt;
  res.mpi = mpi > 0;
  res.run_t0 = sp.t0;
  res.run_t1 = sp.t1;
  res.t0 = ax.t0();
  res.t1 = ax.t1();
  res.elapsed = elapsed;
  res.units = static_cast<std::size_t>(sp.active);
  res.useful = std::move(all_useful);
  set_counters(shard.counters, f, res.counters);
  const std::vector<Time> I = ax.cut ? ideal_at_points(f.ideal, pts) : ideal_at_boundaries(f.ideal, b, sp, waitlab);
  res.ideal_unclamped = sp.i1 - sp.i0;  // a cut's: fill_windows
  if (ax.cut) {
    res.cut = cut;
    res.cut.pieces = cut_pieces(ax);
  }
  fill_windows(b, f, ax, pts, I, convention, ref, res);
  return res;
}

bool network_reference(const Trace& t, const Trace& ideal, IdealReference& out, std::string& why) {
  const engine::Shard shard = engine::Shard::whole(t);
  engine::SerialTransport transport;
  return network_reference(shard, ideal, out, why, transport);
}

TimeResolvedResult time_resolved(const Trace& t, const IdealReference& ref, const WindowOptions& opt,
                                 Convention convention, const Cut& cut) {
  const engine::Shard shard = engine::Shard::whole(t);
  engine::SerialTransport transport;
  return time_resolved(shard, ref, opt, convention, transport, cut);
}

}  // namespace waitlab::analysis
