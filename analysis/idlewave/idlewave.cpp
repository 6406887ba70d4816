#include "analysis/idlewave/idlewave.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <queue>
#include <tuple>

#include "analysis/engine/serial_transport.hpp"
#include "analysis/idlewave/summary.hpp"

namespace waitlab::analysis {

using idle::iteration_at;
using idle::median;
using idle::offset;
using idle::RankSummary;
using idle::Summaries;

std::string_view front_stop_name(FrontStop s) {
  switch (s) {
    case FrontStop::Boundary: return "boundary";
    case FrontStop::Decayed: return "decayed";
    case FrontStop::Met: return "met";
    case FrontStop::EndOfTrace: return "end_of_trace";
  }
  return "?";
}

std::string_view distance_metric_name(DistanceMetric m) {
  return m == DistanceMetric::Hops ? "hops" : "ranks";
}

LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y) {
  LineFit f;
  f.points = x.size();
  if (x.empty()) return f;
  const double n = static_cast<double>(x.size());
  const double mx = std::accumulate(x.begin(), x.end(), 0.0) / n;
  const double my = std::accumulate(y.begin(), y.end(), 0.0) / n;
  double sxx = 0, sxy = 0, syy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (y[i] - my);
    syy += (y[i] - my) * (y[i] - my);
  }
  f.slope = sxx > 0 ? sxy / sxx : 0;
  f.intercept = my - f.slope * mx;
  // Every y equal: the line explains them all.
  f.r2 = syy > 0 && sxx > 0 ? (sxy * sxy) / (sxx * syy) : 1.0;
  return f;
}

namespace {

// A line with one slope and an intercept per segment (seg[i]: the segment of point i), by least
// squares within the segments: a front that crossed another wave's band is one line with a step
// (the ranks beyond were late already: its idle periods start later, by the other wave's
// amplitude, and are shorter), which must neither slow it down nor read as decay. The intercept
// is the first segment's; with one segment this is fit_line.
LineFit fit_segmented(const std::vector<double>& x, const std::vector<double>& y, const std::vector<int>& seg) {
  if (x.empty() || seg.back() == 0) return fit_line(x, y);
  const auto k = static_cast<std::size_t>(seg.back()) + 1;
  std::vector<double> sx(k, 0), sy(k, 0), n(k, 0);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const auto s = static_cast<std::size_t>(seg[i]);
    sx[s] += x[i], sy[s] += y[i], n[s] += 1;
  }
  double sxx = 0, sxy = 0, syy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const auto s = static_cast<std::size_t>(seg[i]);
    const double dx = x[i] - sx[s] / n[s], dy = y[i] - sy[s] / n[s];
    sxx += dx * dx, sxy += dx * dy, syy += dy * dy;
  }
  LineFit f;
  f.points = x.size();
  f.slope = sxx > 0 ? sxy / sxx : 0;
  f.intercept = sy[0] / n[0] - f.slope * sx[0] / n[0];
  f.r2 = syy > 0 && sxx > 0 ? (sxy * sxy) / (sxx * syy) : 1.0;
  return f;
}

// The communication topology the fronts are tracked in: the graph of the ranks that exchange
// point-to-point messages, recognised as a 1D chain (every rank exchanges with every rank up to
// d away: distances in ranks, walked rank by rank) or a Cartesian grid (every message one
// step along one axis), else any graph (distances in hops).
struct Topology {
  DistanceMetric metric = DistanceMetric::Ranks;
  bool ring = false;                    // a chain closed into a ring
  int d = 1;                            // largest rank distance of a message (chain)
  std::vector<int> extents, strides;    // grid, MPI_Cart order (the last varies fastest)
  bool periodic = false;
  std::vector<std::vector<Rank>> adj;   // the graph the waves flood
  int coord(Rank r, std::size_t dim) const { return (r / strides[dim]) % extents[dim]; }
};

// A pair of ranks some point-to-point message goes between (sender ≠ receiver): what the
// topology is inferred from (every message between the pair says the same).
struct Edge {
  Rank sender = 0, receiver = 0;
};

// Signed shorter offset from coordinate a to b on an axis of extent e (periodic or not).
int axis_offset(int a, int b, int e, bool periodic) {
  int o = b - a;
  if (periodic && 2 * std::abs(o) > e) o -= o > 0 ? e : -e;
  return o;
}

// A grid with the given strides (ascending, strides[0] == 1) explains every message: each
// changes one coordinate by ±1 (or wraps round a periodic axis of extent ≥ 3).
bool try_grid(const std::vector<Edge>& edges, std::size_t P, const std::vector<long long>& asc, Topology& g) {
  const long long top = asc.back();
  if (top <= 0 || static_cast<long long>(P) % top != 0 || static_cast<long long>(P) / top < 2) return false;
  std::vector<int> extents, strides;  // MPI_Cart order: slowest first
  extents.push_back(static_cast<int>(static_cast<long long>(P) / top));
  strides.push_back(static_cast<int>(top));
  for (std::size_t i = asc.size() - 1; i-- > 0;) {
    if (asc[i + 1] % asc[i] != 0 || asc[i + 1] / asc[i] < 2) return false;
    extents.push_back(static_cast<int>(asc[i + 1] / asc[i]));
    strides.push_back(static_cast<int>(asc[i]));
  }
  g.extents = extents;
  g.strides = strides;
  bool periodic = false;
  for (const Edge& msg : edges) {
    int moved = 0;
    for (std::size_t dim = 0; dim < extents.size(); ++dim) {
      const int a = g.coord(msg.sender, dim), b = g.coord(msg.receiver, dim);
      if (a == b) continue;
      const int e = extents[dim];
      if (std::abs(a - b) == 1) {
        ++moved;
      } else if (e >= 3 && std::abs(a - b) == e - 1) {
        ++moved;
        periodic = true;
      } else {
        return false;
      }
    }
    if (moved != 1) return false;
  }
  g.periodic = periodic;
  return true;
}

Topology infer_topology(const std::vector<Edge>& edges, std::size_t P) {
  Topology g;
  std::vector<std::vector<Rank>> partners(P);
  std::vector<long long> offsets;
  int dmax = 0;
  for (const Edge& msg : edges) {
    partners[static_cast<std::size_t>(msg.sender)].push_back(msg.receiver);
    partners[static_cast<std::size_t>(msg.receiver)].push_back(msg.sender);
    const long long direct = std::llabs(static_cast<long long>(msg.receiver) - msg.sender);
    offsets.push_back(direct);
    if (2 * direct > static_cast<long long>(P)) g.ring = true;
    dmax = std::max(dmax, std::abs(offset(msg.receiver, msg.sender, P)));
  }
  for (auto& v : partners) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  }
  std::sort(offsets.begin(), offsets.end());
  offsets.erase(std::unique(offsets.begin(), offsets.end()), offsets.end());
  g.d = std::max(dmax, 1);
  // A chain: every rank's partners are exactly the ranks up to d away (round the ring if a
  // message goes round it). No message at all: a chain too (collectives: rank order).
  bool chain = true;
  if (dmax > 0) {
    std::vector<Rank> want;
    for (std::size_t r = 0; r < P && chain; ++r) {
      want.clear();
      for (int j = -dmax; j <= dmax; ++j) {
        if (j == 0) continue;
        long long q = static_cast<long long>(r) + j;
        if (g.ring) q = ((q % static_cast<long long>(P)) + static_cast<long long>(P)) % static_cast<long long>(P);
        if (q < 0 || q >= static_cast<long long>(P) || q == static_cast<long long>(r)) continue;
        want.push_back(static_cast<Rank>(q));
      }
      std::sort(want.begin(), want.end());
      want.erase(std::unique(want.begin(), want.end()), want.end());
      chain = want == partners[r];
    }
  }
  if (chain) {
    g.adj.assign(P, {});
    for (std::size_t r = 0; r < P; ++r) {
      if (r > 0) g.adj[r].push_back(static_cast<Rank>(r - 1));
      if (r + 1 < P) g.adj[r].push_back(static_cast<Rank>(r + 1));
    }
    if (g.ring && P > 2) {
      g.adj[0].push_back(static_cast<Rank>(P - 1));
      g.adj[P - 1].push_back(0);
    }
    return g;
  }
  g.metric = DistanceMetric::Hops;
  g.ring = false;
  g.d = 1;
  g.adj = std::move(partners);
  // Grid: strides from the message offsets (1 < s1 < s2, each dividing the next), three
  // axes before two; offsets that wrap round an axis are the other candidates.
  if (offsets.size() <= 8 && !offsets.empty() && offsets.front() == 1) {
    Topology t = g;
    bool found = false;
    for (std::size_t i = 1; i < offsets.size() && !found; ++i)
      for (std::size_t j = i + 1; j < offsets.size() && !found; ++j)
        found = try_grid(edges, P, {1, offsets[i], offsets[j]}, t);
    for (std::size_t i = 1; i < offsets.size() && !found; ++i) found = try_grid(edges, P, {1, offsets[i]}, t);
    if (found) {
      g.extents = t.extents;
      g.strides = t.strides;
      g.periodic = t.periodic;
    }
  }
  return g;
}

// Hop distances from `from` over the graph (−1: unreachable).
std::vector<int> bfs(const Topology& g, const std::vector<Rank>& from) {
  std::vector<int> dist(g.adj.size(), -1);
  std::vector<Rank> q;
  for (Rank r : from) {
    dist[static_cast<std::size_t>(r)] = 0;
    q.push_back(r);
  }
  for (std::size_t h = 0; h < q.size(); ++h)
    for (Rank n : g.adj[static_cast<std::size_t>(q[h])])
      if (dist[static_cast<std::size_t>(n)] < 0) {
        dist[static_cast<std::size_t>(n)] = dist[static_cast<std::size_t>(q[h])] + 1;
        q.push_back(n);
      }
  return dist;
}

// Which front of a wave from `src` a rank belongs to: `axis` −1 is rank order (the side of
// the source; on a ring, the shorter way round), else the ranks on that grid axis through the
// source. Returns −1, +1 or 0 (neither).
int side_of(const Topology& g, std::size_t P, Rank src, Rank r, int axis) {
  if (r == src) return 0;
  if (axis < 0) {
    const int o = g.ring ? offset(src, r, P) : (r < src ? -1 : 1);
    return o < 0 ? -1 : 1;
  }
  for (std::size_t dim = 0; dim < g.extents.size(); ++dim)
    if (static_cast<int>(dim) != axis && g.coord(r, dim) != g.coord(src, dim)) return 0;
  const auto a = static_cast<std::size_t>(axis);
  const int o = axis_offset(g.coord(src, a), g.coord(r, a), g.extents[a], g.periodic);
  return o < 0 ? -1 : 1;
}

// One (wave, rank) attempt of the flood.
struct Attempt {
  enum : std::uint8_t { Untried = 0, Reached, Failed, Source } state = Untried;
  FrontStop why = FrontStop::Decayed;
  int met = -1;
  std::ptrdiff_t blocker = -1;  // the largest period ≥ threshold it could not take
  Time t = 0, hi = 0;           // the front point next to it, the window's end
  std::int32_t iteration = -1;  // of the front point next to it
};

struct Step {
  Time t;
  std::uint64_t seq;
  std::size_t wave;
  Rank rank;
  double amplitude;
  std::int32_t iteration;  // of the front point next to it (−1: unknown)
  Time end;                // when the idle period of that point ended (−∞: the source)
  bool operator>(const Step& o) const { return std::tie(t, seq) > std::tie(o.t, o.seq); }
};

// The earliest and the latest event time over all ranks (0, 0 if none: Trace::begin_time and
// end_time), folded in rank order.
std::pair<Time, Time> time_range(const Summaries& s) {
  Time begin = std::numeric_limits<Time>::infinity(), end = -std::numeric_limits<Time>::infinity();
  for (const RankSummary& r : s.of)
    if (r.has_events) {
      begin = std::min(begin, r.first_time);
      end = std::max(end, r.last_time);
    }
  return {begin == std::numeric_limits<Time>::infinity() ? 0 : begin,
          end == -std::numeric_limits<Time>::infinity() ? 0 : end};
}

// What the steps of idle_waves share beyond the result: every rank's summary (summary.hpp; its
// starts and idle periods are moved out of it), the options, and what the earlier steps found.
struct IdleWaveRun {
  IdleWaveRun(Summaries& summaries, const IdleWaveOptions& options, IdleWaveResult& result)
      : s(summaries), opt(options), res(result), P(summaries.ranks()), t_begin(time_range(summaries).first),
        t_end(time_range(summaries).second) {}
  Summaries& s;
  const IdleWaveOptions& opt;
  IdleWaveResult& res;
  std::size_t P = 0;
  Time t_begin = 0, t_end = 0;
  std::vector<std::vector<Time>> starts;                // step 1: each rank's iteration starts
  std::vector<std::size_t> first;                       // step 2: rank r's periods: [first[r], first[r + 1])
  Topology topo;                                        // step 4
  // The idle a wave can account for: in a pipeline what the period holds beyond the usual.
  double amount(const IdlePeriod& p) const { return res.pipeline ? p.seconds - p.usual : p.seconds; }
};

// What the flood of step 5 leaves for the steps after it, per wave: the attempt at each rank,
// the distances from its source, its front points; and which wave each idle period belongs to.
struct WaveTracks {
  std::vector<int> claim;  // wave that a period belongs to
  std::vector<std::vector<Attempt>> tried;
  std::vector<std::vector<int>> dist;
  std::vector<std::vector<FrontPoint>> points;
  std::uint64_t seq = 0;
  // Idle per (rank, iteration): its median is the background a front must stand out of
  // (0 without noise), its mean the scale a wave's source must exceed on a measured trace.
  double typical = 0, mean_cell = 0;
  double T = 0;  // the period the windows are measured in
};

// Step 1: the iterations of each rank.
void find_iterations(IdleWaveRun& run) {
  run.res.iterations_from_truth = run.s.iterations_from_truth;
  for (RankSummary& r : run.s.of) run.starts.push_back(std::move(r.starts));
  for (const auto& s : run.starts)
    run.res.iterations = std::max(run.res.iterations, static_cast<std::int32_t>(s.size()));
}

// Step 2: the idle periods, sorted by (rank, start) (the summaries': rank by rank, each by
// start), and where each rank's begin.
void collect_idle_periods(IdleWaveRun& run) {
  IdleWaveResult& res = run.res;
  res.periods = std::move(run.s.periods);
  for (const IdlePeriod& p : res.periods) res.total_idle += p.seconds;
  run.first.assign(run.P + 1, 0);
  for (const auto& p : res.periods) ++run.first[static_cast<std::size_t>(p.rank) + 1];
  std::partial_sum(run.first.begin(), run.first.end(), run.first.begin());
}

// Step 3: the iteration: its length as run, and the time outside and inside MPI, medians over
// every (rank, iteration) but each rank's first and last (start-up, and no following iteration
// start) — the summaries' order statistics.
void measure_iterations(IdleWaveRun& run) {
  run.res.t_exec_s = run.s.exec_median;
  run.res.t_comm_s = run.s.comm_median;
  // Until the waves are known, the median iteration stands for the period.
  run.res.iteration_s = run.s.period_median;
}

// Step 4: the exchange: topology, distance, direction, phases, protocol.
void infer_exchange(IdleWaveRun& run) {
  const std::size_t P = run.P;
  IdleWaveResult& res = run.res;
  std::vector<Edge> edges;
  for (std::size_t r = 0; r < P; ++r)
    for (const Rank from : run.s.of[r].senders) edges.push_back({from, static_cast<Rank>(r)});
  run.topo = infer_topology(edges, P);
  const Topology& topo = run.topo;
  res.metric = topo.metric;
  res.grid = topo.extents;
  res.periodic = topo.ring || topo.periodic;
  bool eager = false;
  std::size_t receiving = 0, both = 0, calls_with_recv = 0, one_sided = 0;
  for (const RankSummary& r : run.s.of) {
    eager = eager || r.eager;
    if (r.sides != 0) ++receiving;
    if (r.sides == 3) {
      ++both;
      calls_with_recv += r.receiving_calls;
      one_sided += r.one_sided_calls;
    }
  }
  const IdleWaveOptions& opt = run.opt;
  res.eager = eager;
  res.bidirectional = receiving > 0 && 2 * both >= receiving;
  res.phased = res.bidirectional && calls_with_recv > 0 && one_sided * 10 >= calls_with_recv * 9;
  res.distance = opt.distance > 0 ? opt.distance : topo.d;
  res.distance_inferred = opt.distance <= 0;
  res.sigma = opt.sigma > 0 ? opt.sigma : (!eager && res.phased ? 2 : 1);
  res.sigma_inferred = opt.sigma <= 0;
}

// Step 4b: what each rank usually idles at each point of its iterations: per (rank, position of
// the call in the iteration) the median over the rank's iterations (0 where it idles now
// and then). A wavefront pipeline waits at the same points every iteration: if that usual
// idle is a quarter of the period or more on a graph, the fronts follow the extra idle. Each
// rank's owner measured its usual idle (summary.hpp); the pipeline is decided from their sums.
void find_usual_idle(IdleWaveRun& run) {
  IdleWaveResult& res = run.res;
  std::vector<double> usual_cells;  // each rank's (with iterations) from its summary
  for (std::size_t r = 0; r < run.P; ++r)
    if (!run.starts[r].empty()) usual_cells.push_back(run.s.of[r].usual_idle);
  res.pipeline = run.topo.metric == DistanceMetric::Hops && res.iteration_s > 0 &&
                 median(usual_cells) >= 0.25 * res.iteration_s;
}

// The injected delays as wave sources (one per delayed iteration of a rank), the largest
// max_waves of them, by the time the delayed computation ended.
void injected_sources(IdleWaveRun& run) {
  IdleWaveResult& res = run.res;
  const IdleWaveOptions& opt = run.opt;
  for (std::size_t r = 0; r < run.P; ++r) {
    for (const idle::InjectedDelay& c : run.s.of[r].delays) {
      const double d = c.delay;
      Wave* last = res.waves.empty() ? nullptr : &res.waves.back();
      if (last != nullptr && last->source_rank == static_cast<Rank>(r) && last->source_iteration == c.iteration &&
          c.iteration >= 0) {
        last->delay += d;
        last->source_time = c.end;
        continue;
      }
      Wave w;
      w.source_rank = static_cast<Rank>(r);
      w.source_time = c.end;
      w.onset = c.start;
      w.source_iteration = c.iteration >= 0 ? c.iteration : iteration_at(run.starts[r], c.start);
      w.delay = d;
      w.injected = true;
      res.waves.push_back(w);
    }
  }
  // The largest delays (fronts are followed together: their number bounds the cost).
  if (res.waves.size() > static_cast<std::size_t>(std::max(opt.max_waves, 0))) {
    std::stable_sort(res.waves.begin(), res.waves.end(), [](const Wave& a, const Wave& b) { return a.delay > b.delay; });
    res.waves_left_out = res.waves.size() - static_cast<std::size_t>(std::max(opt.max_waves, 0));
    res.waves.resize(static_cast<std::size_t>(std::max(opt.max_waves, 0)));
  }
  std::stable_sort(res.waves.begin(), res.waves.end(),
                   [](const Wave& a, const Wave& b) { return a.source_time < b.source_time; });
}

// The idle per (rank, iteration) the fronts must stand out of: its median and its mean.
void idle_background(const IdleWaveRun& run, WaveTracks& tracks) {
  const IdleWaveResult& res = run.res;
  const std::size_t P = run.P;
  const auto n_iter = static_cast<std::size_t>(res.iterations);
  std::vector<double> cell(P * n_iter, 0.0);
  for (const auto& p : res.periods)
    if (p.iteration >= 0 && static_cast<std::size_t>(p.iteration) < n_iter)
      cell[static_cast<std::size_t>(p.rank) * n_iter + static_cast<std::size_t>(p.iteration)] += run.amount(p);
  tracks.typical = median(cell);
  double counted = 0;
  for (const auto& p : res.periods) counted += run.amount(p);
  tracks.mean_cell = P == 0 ? 0 : counted / static_cast<double>(P * std::max<std::size_t>(n_iter, 1));
  tracks.T = res.iteration_s > 0 ? res.iteration_s : (run.t_end - run.t_begin);
}

// Floods waves [from, end) together over the topology's graph, always taking the step
// whose front point is earliest, so that where two waves meet the first to arrive claims
// the ranks; a rank is tried once per wave, from its earliest reached neighbour.
class Flood {
 public:
  Flood(const IdleWaveRun& run, WaveTracks& tracks) : run_(run), res_(run.res), tr_(tracks) {}

  void waves_from(std::size_t from) {
    for (std::size_t w = from; w < res_.waves.size(); ++w) {
      const Wave& wave = res_.waves[w];
      tr_.tried.emplace_back(run_.P);
      tr_.dist.push_back(bfs(run_.topo, {wave.source_rank}));
      tr_.points.emplace_back();
      tr_.tried[w][static_cast<std::size_t>(wave.source_rank)].state = Attempt::Source;
      // The source's lateness: its delay, and at most the whole delayed interval besides
      // (noise in it makes the first idle periods longer than the delay).
      push_next(w, wave.source_rank, wave.onset, wave.delay + (wave.source_time - wave.onset), wave.source_iteration,
                -std::numeric_limits<Time>::infinity());
    }
    while (!queue_.empty()) {
      const Step st = queue_.top();
      queue_.pop();
      attempt(st);
    }
    explain_failures(from);
  }

 private:
  void push_next(std::size_t w, Rank at, Time when, double amplitude, std::int32_t iteration, Time end) {
    const auto& dw = tr_.dist[w];
    for (Rank n : run_.topo.adj[static_cast<std::size_t>(at)])
      if (dw[static_cast<std::size_t>(n)] == dw[static_cast<std::size_t>(at)] + 1 &&
          tr_.tried[w][static_cast<std::size_t>(n)].state == Attempt::Untried)
        queue_.push({when, tr_.seq++, w, n, amplitude, iteration, end});
  }

  // The wave of step `st` tries its rank: the largest of the rank's idle periods in the window
  // that continues the front, else the attempt fails (why: explain_failures).
  void attempt(const Step& st) {
    Attempt& at = tr_.tried[st.wave][static_cast<std::size_t>(st.rank)];
    if (at.state != Attempt::Untried) return;
    const bool pipe = res_.pipeline;
    const double T = tr_.T, typical = tr_.typical;
    const Wave& wave = res_.waves[st.wave];
    const double threshold = std::max(run_.opt.threshold * wave.delay, 5 * typical);
    // The wave's own idle period continues its amplitude: noise adds a little at most.
    const double bound = 1.25 * st.amplitude + 5 * typical;
    const auto r = static_cast<std::size_t>(st.rank);
    const auto& first = run_.first;
    // A rank the wave finds late already (another wave passed it) idles later: up to the
    // amplitude next to it.
    const Time lo = st.t - 0.5 * T, hi = st.t + st.amplitude + 3 * T;
    // In a pipeline the window holds the periods' ends (when the rank goes on): it waits
    // at its usual point from whenever it got there.
    auto it = pipe ? res_.periods.begin() + static_cast<std::ptrdiff_t>(first[r])
                   : std::lower_bound(res_.periods.begin() + static_cast<std::ptrdiff_t>(first[r]),
                                      res_.periods.begin() + static_cast<std::ptrdiff_t>(first[r + 1]), lo,
                                      [](const IdlePeriod& p, Time x) { return p.start < x; });
    const auto end = res_.periods.begin() + static_cast<std::ptrdiff_t>(first[r + 1]);
    std::ptrdiff_t best = -1, blocker = -1;
    for (; it != end && it->start <= hi; ++it) {
      if (pipe && (it->start + it->seconds < lo || it->start + it->seconds > hi)) continue;
      const double extra = run_.amount(*it);
      if (extra < threshold) continue;
      // A wave moves at least one step per iteration: the iteration of the point next to
      // it, or the one after (a later idle period is someone else's lateness). In a
      // pipeline: the iteration in which the rank goes on (a rank waits for the sweep's
      // first block before its iteration's first compute).
      const std::int32_t k = pipe ? iteration_at(run_.starts[r], it->start + it->seconds + 0.02 * T) : it->iteration;
      if (st.iteration >= 0 && k >= 0 && (k < st.iteration || k > st.iteration + 1)) continue;
      // The wave reaches a rank through the rank next to it, which goes on only once its own
      // idle period has ended: an idle period that ends before that one (by more than 2 % of an
      // iteration: latencies, the order in which a collective lets its members go) waited for
      // someone else — under noise, the other neighbour's lateness, in which the wave is
      // absorbed.
      if (it->start + it->seconds < st.end - 0.02 * T) continue;
      const std::ptrdiff_t i = it - res_.periods.begin();
      const int c = tr_.claim[static_cast<std::size_t>(i)];
      const bool free = c < 0 || c == static_cast<int>(st.wave);
      auto& slot = free && extra <= bound ? best : blocker;
      if (slot < 0 || extra > run_.amount(res_.periods[static_cast<std::size_t>(slot)])) slot = i;
    }
    at.t = st.t;
    at.hi = hi;
    at.iteration = st.iteration;
    if (best < 0) {
      at.state = Attempt::Failed;
      at.blocker = blocker;
      return;
    }
    const IdlePeriod& p = res_.periods[static_cast<std::size_t>(best)];
    tr_.claim[static_cast<std::size_t>(best)] = static_cast<int>(st.wave);
    at.state = Attempt::Reached;
    // In a pipeline the rank reached waits at its usual point anyway: the wave is when it
    // goes on, late by the extra idle.
    const Time when = pipe ? p.start + p.seconds : p.start;
    const std::int32_t k = pipe ? iteration_at(run_.starts[r], when + 0.02 * T) : p.iteration;
    tr_.points[st.wave].push_back({p.rank, tr_.dist[st.wave][r], when, k, run_.amount(p)});
    push_next(st.wave, st.rank, when, run_.amount(p), k, p.start + p.seconds);
  }

  // Why each failed attempt failed, now that the waves flooded together have claimed their
  // periods: the period it could not take (or one just before) belongs to another wave —
  // they met, that one survives —, the rank had no iteration left, or the wave decayed.
  void explain_failures(std::size_t from) {
    const auto& first = run_.first;
    const auto& claim = tr_.claim;
    const double T = tr_.T;
    for (std::size_t w = from; w < res_.waves.size(); ++w) {
      for (std::size_t r = 0; r < run_.P; ++r) {
        Attempt& at = tr_.tried[w][r];
        if (at.state != Attempt::Failed) continue;
        if (at.blocker >= 0) {
          const int c = claim[static_cast<std::size_t>(at.blocker)];
          if (c >= 0 && c != static_cast<int>(w)) at.met = c;
        }
        for (std::size_t i = first[r]; i < first[r + 1] && at.met < 0; ++i)
          if (claim[i] >= 0 && claim[i] != static_cast<int>(w) && res_.periods[i].start >= at.t - 2 * T &&
              res_.periods[i].start <= at.hi)
            at.met = claim[i];
        // The wave had no iteration left to arrive in: the next iteration is the rank's last
        // (it ends at MPI_Finalize), or the window runs past its last iteration start.
        const auto& starts = run_.starts[r];
        const bool ended = at.iteration >= 0 ? static_cast<std::size_t>(at.iteration) + 2 >= starts.size()
                                             : at.hi >= run_.t_end || (!starts.empty() && at.hi >= starts.back());
        at.why = at.met >= 0 ? FrontStop::Met : ended ? FrontStop::EndOfTrace : FrontStop::Decayed;
      }
    }
  }

  const IdleWaveRun& run_;
  IdleWaveResult& res_;
  WaveTracks& tr_;
  std::priority_queue<Step, std::vector<Step>, std::greater<>> queue_;
};

// On a measured trace: idle periods that stand out — at least half the largest and 10 times
// the mean idle time per rank and iteration (a slow group's fast ranks idle alike in every
// iteration; that is no wave) — earliest first: a wave's earliest idle period is next to its
// source. Each one not explained by a wave found before starts a wave, flooded at once.
void measured_sources(IdleWaveRun& run, WaveTracks& tracks, Flood& flood) {
  IdleWaveResult& res = run.res;
  double largest = 0;
  for (const auto& p : res.periods) largest = std::max(largest, run.amount(p));
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < res.periods.size(); ++i)
    if (largest > kTimeResolution && run.amount(res.periods[i]) >= 0.5 * largest &&
        run.amount(res.periods[i]) >= 10 * tracks.mean_cell)
      order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return res.periods[a].start < res.periods[b].start; });
  for (std::size_t i : order) {
    if (static_cast<int>(res.waves.size()) >= run.opt.max_waves) break;
    if (tracks.claim[i] >= 0) continue;
    const IdlePeriod& p = res.periods[i];
    Wave w;
    w.source_rank = p.cause_rank != trace::kNoRank ? p.cause_rank : p.rank;
    w.source_time = p.start + p.seconds;
    w.onset = p.start;
    w.delay = run.amount(p);
    w.source_iteration = iteration_at(run.starts[static_cast<std::size_t>(w.source_rank)], p.start);
    res.waves.push_back(w);
    flood.waves_from(res.waves.size() - 1);
    if (tracks.claim[i] < 0) tracks.claim[i] = static_cast<int>(res.waves.size() - 1);  // not adjacent: explained anyway
  }
}

// Step 5: the wave sources — the injected delays, or else the idle periods that stand out —
// and their flood over the communication graph.
WaveTracks track_waves(IdleWaveRun& run) {
  WaveTracks tracks;
  tracks.claim.assign(run.res.periods.size(), -1);
  if (run.s.has_truth) injected_sources(run);
  idle_background(run, tracks);
  Flood flood(run, tracks);
  if (run.s.has_truth) {
    // The simulator knows every cause: a simulated trace without injected delays has no wave.
    flood.waves_from(0);
  } else {
    measured_sources(run, tracks, flood);
  }
  return tracks;
}

// Step 5b: the period as run: the mean length of the iterations no wave passed (neither a
// source's delayed iteration nor one that holds an idle period of a wave): under noise the mean
// noisy iteration, which the fronts keep pace with; without noise the undisturbed one. And the
// model's speed σ·d/T_iter (none in a pipeline).
void measure_period_as_run(IdleWaveRun& run, const WaveTracks& tracks) {
  IdleWaveResult& res = run.res;
  const std::size_t P = run.P;
  // Iteration k of rank r (1 ≤ k ≤ its starts − 2) is struck[r][k − 1].
  std::vector<std::vector<char>> struck(P);
  for (std::size_t r = 0; r < P; ++r) struck[r].assign(run.starts[r].size() >= 3 ? run.starts[r].size() - 2 : 0, 0);
  auto strike = [&](std::size_t r, std::int32_t k) {
    if (k >= 1 && static_cast<std::size_t>(k) <= struck[r].size()) struck[r][static_cast<std::size_t>(k) - 1] = 1;
  };
  // A wave's idle periods, and any as long (what remains of a wave after a meet).
  double smallest = std::numeric_limits<double>::infinity();
  for (const auto& w : res.waves) smallest = std::min(smallest, std::max(run.opt.threshold * w.delay, 5 * tracks.typical));
  for (std::size_t i = 0; i < res.periods.size(); ++i)
    if (tracks.claim[i] >= 0 || run.amount(res.periods[i]) >= smallest)
      strike(static_cast<std::size_t>(res.periods[i].rank), res.periods[i].iteration);
  for (const auto& w : res.waves) strike(static_cast<std::size_t>(w.source_rank), w.source_iteration);
  double sum = 0;
  std::size_t count = 0;
  for (std::size_t r = 0; r < P; ++r)
    for (std::size_t k = 0; k < struck[r].size(); ++k)
      if (!struck[r][k]) {
        sum += idle::iteration_length(run.starts[r], k + 1);
        ++count;
      }
  if (count > 0) res.iteration_s = sum / static_cast<double>(count);
  res.predicted_per_s = res.iteration_s > 0 && !res.pipeline ? res.sigma * res.distance / res.iteration_s : 0;
}

// Where a front stops: met before the end of the trace before decay; the end of the chain if
// no attempt on its side failed.
void front_stop(const IdleWaveRun& run, const WaveTracks& tracks, std::size_t w, Front& f) {
  const Wave& wave = run.res.waves[w];
  f.stop = FrontStop::Boundary;
  for (std::size_t r = 0; r < run.P; ++r) {
    const Attempt& at = tracks.tried[w][r];
    if (at.state != Attempt::Failed ||
        side_of(run.topo, run.P, wave.source_rank, static_cast<Rank>(r), f.axis) != f.direction)
      continue;
    const auto rank_of = [](FrontStop s) {
      return s == FrontStop::Met ? 3 : s == FrontStop::EndOfTrace ? 2 : s == FrontStop::Decayed ? 1 : 0;
    };
    if (rank_of(at.why) > rank_of(f.stop)) {
      f.stop = at.why;
      f.met_wave = at.met;
    }
  }
  f.stop_rank = f.points.empty() ? wave.source_rank : f.points.back().rank;
}

// One front of wave w: its points on its side (rank order, or a grid axis), where it stops,
// and the lines fitted to them.
void fit_front(const IdleWaveRun& run, const WaveTracks& tracks, std::size_t w, Front& f) {
  const IdleWaveResult& res = run.res;
  const Wave& wave = res.waves[w];
  const double predicted = res.predicted_per_s;
  f.points.clear();
  for (const auto& p : tracks.points[w])
    if (side_of(run.topo, run.P, wave.source_rank, p.rank, f.axis) == f.direction) f.points.push_back(p);
  std::sort(f.points.begin(), f.points.end(), [](const FrontPoint& a, const FrontPoint& b) {
    return std::tie(a.distance, a.time, a.rank) < std::tie(b.distance, b.time, b.rank);
  });
  front_stop(run, tracks, w, f);
  std::vector<double> time, dst, iter, amp, iter_x, iter_y;
  std::vector<int> seg;  // a new segment where the front crossed another wave (its start jumps)
  // A front that reached the end of the chain may have found fewer ranks than it could
  // in its last iteration: that step stays out of the per-iteration fit.
  const std::int32_t cut = f.stop == FrontStop::Boundary && !f.points.empty()
                               ? f.points.back().iteration
                               : std::numeric_limits<std::int32_t>::max();
  for (std::size_t i = 0; i < f.points.size(); ++i) {
    const FrontPoint& p = f.points[i];
    // A step more than 1.5 iterations later than the model's pace: the rank was late already.
    const bool jump = i > 0 && predicted > 0 &&
                      p.time - f.points[i - 1].time >
                          (p.distance - f.points[i - 1].distance) / predicted + 1.5 * res.iteration_s;
    seg.push_back(i == 0 ? 0 : seg.back() + (jump ? 1 : 0));
    time.push_back(p.time);
    dst.push_back(p.distance);
    iter.push_back(static_cast<double>(p.iteration - wave.source_iteration));
    amp.push_back(p.amplitude);
    if (p.iteration < cut) {
      iter_x.push_back(iter.back());
      iter_y.push_back(p.distance);
    }
  }
  if (iter_x.size() < 2) {
    iter_x = iter;
    iter_y = dst;
  }
  // In a pipeline the ranks going on late in one iteration is the sweep carrying the delay.
  f.at_once = !res.pipeline && f.points.size() >= 2 &&
              std::all_of(f.points.begin(), f.points.end(),
                          [&](const FrontPoint& p) { return p.iteration == f.points.front().iteration; });
  if (f.points.size() >= 2) {
    f.amplitude = fit_segmented(dst, amp, seg);
    // Rounded to the time resolution: no rounding noise, no −0. A slope that changes the
    // amplitude by less than kNegligibleDecay of it over the whole front is no decay: the
    // ranks' own differences (a boundary rank exchanges with one neighbour only and idles
    // µs longer) tilt a flat wave by fractions of a ns per rank.
    f.decay_s_per_rank = std::round(-f.amplitude.slope / kTimeResolution) * kTimeResolution + 0.0;
    const double span = dst.back() - dst.front();
    if (std::abs(f.decay_s_per_rank) * span < kNegligibleDecay * median(amp)) f.decay_s_per_rank = 0;
    if (!f.at_once) {  // nothing travelled: no speed
      f.by_time = fit_segmented(time, dst, seg);
      f.by_iteration = fit_line(iter_x, iter_y);
    }
  }
  f.predicted_ranks_per_s = predicted;
  f.measured_over_predicted = predicted > 0 ? f.by_time.slope / predicted : 0;
}

// Step 5c: the fronts: the points of each side (rank order, and per grid axis), fitted; the
// survivors name the waves that ended against them; the smallest idle period followed.
void fit_fronts(IdleWaveRun& run, const WaveTracks& tracks) {
  IdleWaveResult& res = run.res;
  const Topology& topo = run.topo;
  for (std::size_t w = 0; w < res.waves.size(); ++w) {
    Wave& wave = res.waves[w];
    wave.down = Front{};
    wave.down.direction = -1;
    wave.up = Front{};
    fit_front(run, tracks, w, wave.down);
    fit_front(run, tracks, w, wave.up);
    wave.reached = tracks.points[w].size();
    for (std::size_t a = 0; a < topo.extents.size(); ++a)
      for (int dir : {-1, 1}) {
        Front f;
        f.axis = static_cast<int>(a);
        f.direction = dir;
        fit_front(run, tracks, w, f);
        wave.axes.push_back(std::move(f));
      }
  }
  // The survivors name the waves that ended against them.
  for (std::size_t w = 0; w < res.waves.size(); ++w)
    for (std::size_t r = 0; r < run.P; ++r) {
      const Attempt& at = tracks.tried[w][r];
      if (at.state != Attempt::Failed || at.met < 0) continue;
      Wave& other = res.waves[static_cast<std::size_t>(at.met)];
      // The rank where they met: the other wave's point there, or the rank itself.
      std::vector<Front*> fronts = {&other.down, &other.up};
      for (auto& f : other.axes) fronts.push_back(&f);
      for (Front* f : fronts)
        if (f->met_wave < 0 && f->stop != FrontStop::Met &&
            side_of(topo, run.P, other.source_rank, static_cast<Rank>(r), f->axis) == f->direction)
          f->met_wave = static_cast<int>(w);
    }
  res.threshold_s = 0;
  for (const auto& w : res.waves)
    res.threshold_s = std::max({res.threshold_s, run.opt.threshold * w.delay, 5 * tracks.typical});
}

// Step 6: the idle-period matrix.
void bin_idle_matrix(IdleWaveRun& run) {
  IdleWaveResult& res = run.res;
  const IdleWaveOptions& opt = run.opt;
  const Time t_begin = run.t_begin;
  IdleMatrix& mx = res.matrix;
  const double wall = run.t_end - t_begin;
  mx.t0 = t_begin;
  mx.ranks = run.P;
  if (wall > 0) {
    mx.bin = opt.bin_seconds > 0 ? opt.bin_seconds : (res.iteration_s > 0 ? res.iteration_s : wall / opt.max_bins);
    mx.bins = static_cast<std::size_t>(std::ceil(wall / mx.bin - 1e-9));
    const auto cap = static_cast<std::size_t>(std::max(opt.max_bins, 1));
    if (opt.bin_seconds <= 0 && mx.bins > cap) {
      mx.bin = wall / static_cast<double>(cap);
      mx.bins = cap;
    }
    mx.bins = std::max<std::size_t>(mx.bins, 1);
    mx.idle.assign(run.P * mx.bins, 0.0f);
    for (const auto& p : res.periods) {
      double a = p.start, b = p.start + p.seconds;
      auto bi = static_cast<std::size_t>(std::max(0.0, (a - t_begin) / mx.bin));
      while (a < b && bi < mx.bins) {
        const double edge = t_begin + static_cast<double>(bi + 1) * mx.bin;
        const double upto = std::min(b, edge);
        mx.idle[static_cast<std::size_t>(p.rank) * mx.bins + bi] += static_cast<float>(upto - a);
        a = upto;
        ++bi;
      }
    }
  }
}

// The slow group: per-rank mean compute per iteration split at its largest relative gap, if
// that gap exceeds slow_gap. Marks the slow ranks (slow[r]) and fills the group's figures.
bool find_slow_group(const IdleWaveRun& run, SelfSync& ss, std::vector<char>& slow) {
  const std::size_t P = run.P;
  std::vector<std::pair<double, Rank>> speed;
  for (std::size_t r = 0; r < P; ++r)
    if (run.s.of[r].has_exec_mean) speed.emplace_back(run.s.of[r].exec_mean, static_cast<Rank>(r));
  std::sort(speed.begin(), speed.end());
  std::size_t split = 0;
  double gap = 0;
  for (std::size_t i = 0; i + 1 < speed.size(); ++i) {
    if (speed[i].first <= 0) continue;
    const double g = (speed[i + 1].first - speed[i].first) / speed[i].first;
    if (g > gap) {
      gap = g;
      split = i + 1;
    }
  }
  if (!(gap > run.opt.slow_gap && split > 0)) return false;
  ss.slow_group = true;
  slow.assign(P, 0);
  double sum_slow = 0, sum_fast = 0;
  for (std::size_t i = 0; i < speed.size(); ++i) {
    if (i >= split) {
      slow[static_cast<std::size_t>(speed[i].second)] = 1;
      ss.slow_ranks.push_back(speed[i].second);
      sum_slow += speed[i].first;
    } else {
      sum_fast += speed[i].first;
    }
  }
  std::sort(ss.slow_ranks.begin(), ss.slow_ranks.end());
  ss.t_slow = sum_slow / static_cast<double>(speed.size() - split);
  ss.t_fast = sum_fast / static_cast<double>(split);
  ss.expected_idle = ss.t_slow - ss.t_fast;
  return true;
}

// The fast ranks beside a slow group: their idle time per iteration in the second half of the
// run over the baseline, the phase of their idle periods, and the synchronisation front.
void measure_self_sync(const IdleWaveRun& run, const std::vector<char>& slow, SelfSync& ss) {
  const IdleWaveResult& res = run.res;
  const std::size_t P = run.P;
  const auto& starts = run.starts;
  const auto n = static_cast<std::size_t>(res.iterations);
  // Per iteration of one rank at a time: its whole idle time (a pipeline's usual waits
  // included: the baseline takes them out), and its longest idle period's length and start.
  std::vector<double> idle(n), longest(n), longest_start(n);
  const auto of_rank = [&](std::size_t r) {
    std::fill(idle.begin(), idle.end(), 0.0);
    std::fill(longest.begin(), longest.end(), 0.0);
    std::fill(longest_start.begin(), longest_start.end(), 0.0);
    for (std::size_t i = run.first[r]; i < run.first[r + 1]; ++i) {
      const IdlePeriod& p = res.periods[i];
      if (p.iteration < 0 || static_cast<std::size_t>(p.iteration) >= n) continue;
      const auto k = static_cast<std::size_t>(p.iteration);
      idle[k] += p.seconds;
      if (p.seconds > longest[k]) {
        longest[k] = p.seconds;
        longest_start[k] = p.start;
      }
    }
  };
  std::vector<double> earliest(n, std::numeric_limits<double>::infinity());
  for (std::size_t r = 0; r < P; ++r)
    for (std::size_t k = 0; k < starts[r].size() && k < n; ++k) earliest[k] = std::min(earliest[k], starts[r][k]);
  const std::size_t half = n / 2, last = n >= 2 ? n - 1 : n;  // the last iteration ends at MPI_Finalize
  double fast_idle = 0;
  std::size_t fast_cells = 0;
  double pmin = std::numeric_limits<double>::infinity(), pmax = -pmin;
  // Distance of every rank to the nearest slow rank over the communication graph; the
  // baseline: the slow ranks' own median idle per iteration (they set the pace and wait as
  // every rank waits without a slow group).
  const std::vector<int> dist_slow = bfs(run.topo, ss.slow_ranks);
  std::vector<double> slow_cells;
  for (Rank q : ss.slow_ranks) {
    of_rank(static_cast<std::size_t>(q));
    for (std::size_t k = half; k < last; ++k) slow_cells.push_back(idle[k]);
  }
  ss.baseline_idle_per_iteration = median(slow_cells);
  std::vector<double> sync_iter, sync_dist;
  for (std::size_t r = 0; r < P; ++r) {
    if (slow[r]) continue;
    of_rank(r);
    double ph = 0;
    std::size_t ph_n = 0;
    for (std::size_t k = half; k < last; ++k) {
      fast_idle += idle[k];
      ++fast_cells;
      if (longest[k] > 0 && std::isfinite(earliest[k])) {
        ph += longest_start[k] - earliest[k];
        ++ph_n;
      }
    }
    if (ph_n > 0) {
      ss.phase[r] = ph / static_cast<double>(ph_n);
      pmin = std::min(pmin, ss.phase[r]);
      pmax = std::max(pmax, ss.phase[r]);
    }
    // The first iteration from which the rank idles at least half the expected time in
    // three iterations in a row.
    for (std::size_t k = 1; k + 3 <= last && dist_slow[r] > 0; ++k) {
      const double h = ss.baseline_idle_per_iteration + 0.5 * ss.expected_idle;
      if (idle[k] >= h && idle[k + 1] >= h && idle[k + 2] >= h) {
        sync_iter.push_back(static_cast<double>(k));
        sync_dist.push_back(static_cast<double>(dist_slow[r]));
        break;
      }
    }
  }
  ss.fast_idle_raw_per_iteration = fast_cells > 0 ? fast_idle / static_cast<double>(fast_cells) : 0;
  ss.fast_idle_per_iteration = ss.fast_idle_raw_per_iteration - ss.baseline_idle_per_iteration;
  ss.phase_spread = pmax >= pmin ? pmax - pmin : 0;
  // Neighbouring fast ranks idle at different phases (paper 003, Fig. 5): the median shift.
  std::vector<double> shifts;
  for (std::size_t r = 0; r < P; ++r)
    for (Rank q : run.topo.adj[r])
      if (static_cast<std::size_t>(q) > r && !slow[r] && !slow[static_cast<std::size_t>(q)])
        shifts.push_back(std::abs(ss.phase[static_cast<std::size_t>(q)] - ss.phase[r]));
  ss.neighbour_phase_shift = median(shifts);
  ss.front = fit_line(sync_iter, sync_dist);
  ss.detected = ss.expected_idle > 0 &&
                std::abs(ss.fast_idle_per_iteration - ss.expected_idle) <= 0.25 * ss.expected_idle;
}

// Step 7: self-synchronisation.
void detect_self_sync(IdleWaveRun& run) {
  SelfSync& ss = run.res.self_sync;
  ss.phase.assign(run.P, 0.0);
  std::vector<char> slow;
  if (find_slow_group(run, ss, slow)) measure_self_sync(run, slow, ss);
}

// Today's analysis on every rank's summary (process 0).
IdleWaveResult idle_waves_of(Summaries summaries, const IdleWaveOptions& opt) {
  IdleWaveResult res;
  IdleWaveRun run(summaries, opt, res);
  // Step 1: iterations.
  find_iterations(run);
  // Step 2: idle periods.
  collect_idle_periods(run);
  // Step 3: the iteration: its length as run, T_exec and T_comm.
  measure_iterations(run);
  // Step 4: the exchange: topology, distance, direction, phases, protocol.
  infer_exchange(run);
  // Step 4b: what each rank usually idles; a wavefront pipeline.
  find_usual_idle(run);
  // Step 5: wave sources, flooded over the communication graph.
  const WaveTracks tracks = track_waves(run);
  // Step 5b: the period as run and the model's speed.
  measure_period_as_run(run, tracks);
  // Step 5c: the fronts.
  fit_fronts(run, tracks);
  // Step 6: the idle-period matrix.
  bin_idle_matrix(run);
  // Step 7: self-synchronisation.
  detect_self_sync(run);
  return res;
}

}  // namespace

IdleWaveResult idle_waves(const engine::Shard& shard, const trace::Matching& matching, const WaitStateResult& waits,
                          engine::Transport& transport, const IdleWaveOptions& options) {
  Summaries summaries = idle::summarize(shard, matching, waits, transport);
  if (transport.self() != 0) return {};
  return idle_waves_of(std::move(summaries), options);
}

IdleWaveResult idle_waves(const trace::Trace& trace, const trace::Matching& matching, const WaitStateResult& waits,
                          const IdleWaveOptions& options) {
  engine::SerialTransport serial;
  return idle_waves(engine::Shard::whole(trace), matching, waits, serial, options);
}

}  // namespace waitlab::analysis
