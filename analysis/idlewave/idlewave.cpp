#include "analysis/idlewave/idlewave.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <tuple>

namespace waitlab::analysis {

using trace::Call;
using trace::EventKind;
using trace::Location;
using trace::Matching;
using trace::MpiOp;
using trace::Trace;

std::string_view front_stop_name(FrontStop s) {
  switch (s) {
    case FrontStop::Boundary: return "boundary";
    case FrontStop::Decayed: return "decayed";
    case FrontStop::Met: return "met";
    case FrontStop::EndOfTrace: return "end_of_trace";
  }
  return "?";
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

bool is_idle_pattern(Pattern p) {
  switch (p) {
    case Pattern::LateSender:
    case Pattern::LateReceiver:
    case Pattern::WaitAtNxN:
    case Pattern::WaitAtBarrier:
    case Pattern::LateBroadcast:
    case Pattern::EarlyReduce:
    case Pattern::EarlyScan:
      return true;
    default:
      return false;
  }
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (v.size() % 2 == 1) return *mid;
  const double hi = *mid;
  return (hi + *std::max_element(v.begin(), mid)) / 2;
}

// Mean of the middle 80 % (a one-off delay or a rare long detour does not make a rank slow).
double trimmed_mean(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t cut = v.size() / 10;
  double s = 0;
  for (std::size_t i = cut; i < v.size() - cut; ++i) s += v[i];
  return s / static_cast<double>(v.size() - 2 * cut);
}

// Start times of each rank's iterations: from the ground truth (the first compute interval
// of each workload iteration), or else the Enters of the user region entered once per
// iteration — the region with the fewest Enters (at least 3 on the median rank).
std::vector<std::vector<Time>> iteration_starts(const Trace& t, bool& from_truth) {
  const std::size_t P = t.ranks();
  std::vector<std::vector<Time>> starts(P);
  from_truth = t.has_truth;
  if (t.has_truth) {
    for (std::size_t r = 0; r < P; ++r) {
      std::int32_t last = -1;
      for (const auto& c : t.locations[r].truth) {
        if (c.iteration <= last) continue;
        while (last + 1 <= c.iteration) {
          starts[r].push_back(c.start);
          ++last;
        }
      }
    }
    bool any = false;
    for (const auto& s : starts) any = any || !s.empty();
    if (any) return starts;
    from_truth = false;
  }
  const std::size_t R = t.defs.regions.size();
  std::vector<std::vector<double>> counts(R);
  for (std::size_t r = 0; r < P; ++r) {
    std::vector<double> c(R, 0);
    for (const auto& e : t.locations[r].events)
      if (e.kind == EventKind::Enter && e.ref < R && t.defs.regions[e.ref].op == MpiOp::None) c[e.ref] += 1;
    for (std::size_t g = 0; g < R; ++g) counts[g].push_back(c[g]);
  }
  std::int64_t best = -1;
  double best_count = 0;
  for (std::size_t g = 0; g < R; ++g) {
    if (t.defs.regions[g].op != MpiOp::None) continue;
    const double m = median(counts[g]);
    if (m >= 3 && (best < 0 || m < best_count)) {
      best = static_cast<std::int64_t>(g);
      best_count = m;
    }
  }
  if (best < 0) return starts;
  for (std::size_t r = 0; r < P; ++r)
    for (const auto& e : t.locations[r].events)
      if (e.kind == EventKind::Enter && e.ref == static_cast<std::uint32_t>(best)) starts[r].push_back(e.time);
  return starts;
}

std::int32_t iteration_at(const std::vector<Time>& starts, Time time) {
  return static_cast<std::int32_t>(std::upper_bound(starts.begin(), starts.end(), time) - starts.begin()) - 1;
}

// Signed rank distance from `from` to `to`, the shorter way round on a ring of P ranks when
// the direct distance exceeds half the ranks.
int offset(Rank from, Rank to, std::size_t P) {
  long long d = static_cast<long long>(to) - from;
  const long long n = static_cast<long long>(P);
  if (2 * std::llabs(d) > n) d -= d > 0 ? n : -n;
  return static_cast<int>(d);
}

struct FrontState {
  std::size_t wave = 0;
  int direction = 1;
  int k = 0;           // distance reached
  Time t_prev = 0;     // time of the last front point (or of the source)
  double threshold = 0;
  bool done = false;
};

}  // namespace

IdleWaveResult idle_waves(const Trace& t, const Matching& m, const WaitStateResult& waits,
                          const IdleWaveOptions& opt) {
  IdleWaveResult res;
  const std::size_t P = t.ranks();
  const Time t_begin = t.begin_time();
  const Time t_end = t.end_time();

  // 1. Iterations.
  const auto starts = iteration_starts(t, res.iterations_from_truth);
  for (const auto& s : starts) res.iterations = std::max(res.iterations, static_cast<std::int32_t>(s.size()));

  // 2. Idle periods.
  for (const auto& w : waits.instances) {
    if (!is_idle_pattern(w.pattern)) continue;
    const Location& loc = t.locations[static_cast<std::size_t>(w.rank)];
    const Call& c = m.calls[static_cast<std::size_t>(w.rank)][w.call];
    Time start = loc.events[c.enter].time;
    if (w.pattern != Pattern::LateSender)
      for (std::uint32_t e = c.enter; e <= c.leave && e < loc.events.size(); ++e)
        if (loc.events[e].kind == EventKind::CollBegin) {
          start = loc.events[e].time;
          break;
        }
    IdlePeriod p;
    p.rank = w.rank;
    p.start = start;
    p.seconds = w.seconds;
    p.pattern = w.pattern;
    p.cause_rank = w.cause_rank;
    p.iteration = iteration_at(starts[static_cast<std::size_t>(w.rank)], start);
    res.periods.push_back(p);
    res.total_idle += w.seconds;
  }
  std::sort(res.periods.begin(), res.periods.end(),
            [](const IdlePeriod& a, const IdlePeriod& b) { return std::tie(a.rank, a.start) < std::tie(b.rank, b.start); });
  std::vector<std::size_t> first(P + 1, 0);
  for (const auto& p : res.periods) ++first[static_cast<std::size_t>(p.rank) + 1];
  std::partial_sum(first.begin(), first.end(), first.begin());

  // 3. The undisturbed iteration: time outside and inside MPI per (rank, iteration), the
  // first and last iteration left out (start-up, and no following iteration start).
  std::vector<double> exec_all, comm_all;
  std::vector<std::vector<double>> exec_of(P);
  for (std::size_t r = 0; r < P; ++r) {
    const auto& s = starts[r];
    if (s.size() < 3) continue;
    const auto& ev = t.locations[r].events;
    const auto& calls = m.calls[r];
    std::size_t ci = 0;
    for (std::size_t k = 1; k + 1 < s.size(); ++k) {
      double mpi = 0;
      while (ci < calls.size() && ev[calls[ci].enter].time < s[k]) ++ci;
      for (std::size_t cj = ci; cj < calls.size() && ev[calls[cj].enter].time < s[k + 1]; ++cj)
        if (calls[cj].op != MpiOp::Init && calls[cj].op != MpiOp::Finalize)
          mpi += ev[calls[cj].leave].time - ev[calls[cj].enter].time;
      const double period = s[k + 1] - s[k];
      exec_all.push_back(period - mpi);
      comm_all.push_back(mpi);
      exec_of[r].push_back(period - mpi);
    }
  }
  res.t_exec_s = median(exec_all);
  res.t_comm_s = median(comm_all);
  res.iteration_s = res.t_exec_s + res.t_comm_s;

  // 4. The exchange: distance, direction, phases, protocol.
  std::vector<std::vector<std::uint8_t>> sides(P);  // per receive-completing call: 1 left, 2 right
  for (std::size_t r = 0; r < P; ++r) sides[r].assign(m.calls[r].size(), 0);
  int dmax = 0;
  bool eager = false;
  for (const auto& msg : m.messages) {
    const int off = offset(msg.receiver, msg.sender, P);
    dmax = std::max(dmax, std::abs(off));
    if (off != 0) sides[static_cast<std::size_t>(msg.receiver)][msg.recv_done_call] |= off < 0 ? 1 : 2;
    const auto& sc = m.calls[static_cast<std::size_t>(msg.sender)][msg.send_done_call];
    const auto& rc = m.calls[static_cast<std::size_t>(msg.receiver)][msg.recv_post_call];
    const Time send_left = t.locations[static_cast<std::size_t>(msg.sender)].events[sc.leave].time;
    const Time recv_posted = t.locations[static_cast<std::size_t>(msg.receiver)].events[rc.enter].time;
    if (send_left < recv_posted - kTimeResolution) eager = true;
  }
  std::size_t receiving = 0, both = 0, calls_with_recv = 0, one_sided = 0;
  for (std::size_t r = 0; r < P; ++r) {
    std::uint8_t all = 0;
    std::size_t c_recv = 0, c_one = 0;
    for (auto s : sides[r]) {
      if (s == 0) continue;
      all |= s;
      ++c_recv;
      if (s != 3) ++c_one;
    }
    if (all != 0) ++receiving;
    if (all == 3) {
      ++both;
      calls_with_recv += c_recv;
      one_sided += c_one;
    }
  }
  res.eager = eager;
  res.bidirectional = receiving > 0 && 2 * both >= receiving;
  res.phased = res.bidirectional && calls_with_recv > 0 && one_sided * 10 >= calls_with_recv * 9;
  res.distance = opt.distance > 0 ? opt.distance : std::max(dmax, 1);
  res.distance_inferred = opt.distance <= 0;
  res.sigma = opt.sigma > 0 ? opt.sigma : (!eager && res.phased ? 2 : 1);
  res.sigma_inferred = opt.sigma <= 0;
  const double predicted = res.iteration_s > 0 ? res.sigma * res.distance / res.iteration_s : 0;

  // 5. Wave sources: the injected delays, or else the largest idle periods.
  std::vector<int> claim(res.periods.size(), -1);  // wave that a period belongs to
  if (t.has_truth) {
    for (std::size_t r = 0; r < P; ++r) {
      for (const auto& c : t.locations[r].truth) {
        const double d = c.injected[static_cast<std::size_t>(trace::Cause::Delay)];
        if (d <= kTimeResolution) continue;
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
        w.source_iteration = c.iteration >= 0 ? c.iteration : iteration_at(starts[r], c.start);
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

  // Idle per (rank, iteration): its median is the background a front must stand out of
  // (0 without noise), its mean the scale a wave's source must exceed on a measured trace.
  const auto n_iter = static_cast<std::size_t>(res.iterations);
  std::vector<double> cell(P * n_iter, 0.0);
  for (const auto& p : res.periods)
    if (p.iteration >= 0 && static_cast<std::size_t>(p.iteration) < n_iter)
      cell[static_cast<std::size_t>(p.rank) * n_iter + static_cast<std::size_t>(p.iteration)] += p.seconds;
  const double typical = median(cell);
  const double mean_cell = P == 0 ? 0 : res.total_idle / static_cast<double>(P * std::max<std::size_t>(n_iter, 1));
  // Tracks the fronts of waves [from, end) together, always advancing the one furthest
  // behind in time, so that where two waves meet the earlier one claims the ranks.
  auto track = [&](std::size_t from) {
    std::vector<FrontState> fs;
    for (std::size_t w = from; w < res.waves.size(); ++w) {
      const Wave& wave = res.waves[w];
      for (int dir : {-1, 1}) {
        FrontState f;
        f.wave = w;
        f.direction = dir;
        f.t_prev = wave.onset;
        f.threshold = std::max(opt.threshold * wave.delay, 5 * typical);
        fs.push_back(f);
      }
    }
    const double T = res.iteration_s > 0 ? res.iteration_s : (t_end - t_begin);
    while (true) {
      FrontState* f = nullptr;
      for (auto& c : fs)
        if (!c.done && (f == nullptr || c.t_prev < f->t_prev)) f = &c;
      if (f == nullptr) break;
      Wave& wave = res.waves[f->wave];
      Front& front = f->direction < 0 ? wave.down : wave.up;
      front.direction = f->direction;
      const long long next = static_cast<long long>(wave.source_rank) + f->direction * (f->k + 1);
      auto stop = [&](FrontStop why) {
        front.stop = why;
        front.stop_rank = front.points.empty() ? wave.source_rank : front.points.back().rank;
        f->done = true;
      };
      if (next < 0 || next >= static_cast<long long>(P)) {
        stop(FrontStop::Boundary);
        continue;
      }
      const auto r = static_cast<std::size_t>(next);
      const Time lo = f->t_prev - 0.5 * T, hi = f->t_prev + 3 * T;
      auto it = std::lower_bound(res.periods.begin() + static_cast<std::ptrdiff_t>(first[r]),
                                 res.periods.begin() + static_cast<std::ptrdiff_t>(first[r + 1]), lo,
                                 [](const IdlePeriod& p, Time x) { return p.start < x; });
      const auto end = res.periods.begin() + static_cast<std::ptrdiff_t>(first[r + 1]);
      std::ptrdiff_t found = -1;
      for (; it != end && it->start <= hi; ++it)
        if (it->seconds >= f->threshold) {
          found = it - res.periods.begin();
          break;
        }
      if (found >= 0 && claim[static_cast<std::size_t>(found)] >= 0 &&
          claim[static_cast<std::size_t>(found)] != static_cast<int>(f->wave)) {
        stop(FrontStop::Met);
        continue;
      }
      if (found < 0) {
        // Another wave passed this rank around this time: the fronts met.
        bool other = false;
        for (std::size_t i = first[r]; i < first[r + 1]; ++i)
          if (claim[i] >= 0 && claim[i] != static_cast<int>(f->wave) && res.periods[i].start >= f->t_prev - 2 * T &&
              res.periods[i].start <= hi)
            other = true;
        // Past the rank's last iteration start the wave had no iteration left to arrive in.
        const bool ended = hi >= t_end || (!starts[r].empty() && hi >= starts[r].back());
        stop(other ? FrontStop::Met : ended ? FrontStop::EndOfTrace : FrontStop::Decayed);
        continue;
      }
      const IdlePeriod& p = res.periods[static_cast<std::size_t>(found)];
      claim[static_cast<std::size_t>(found)] = static_cast<int>(f->wave);
      ++f->k;
      f->t_prev = p.start;
      front.points.push_back({p.rank, f->k, p.start, p.iteration, p.seconds});
    }
  };

  if (t.has_truth) {
    // The simulator knows every cause: a simulated trace without injected delays has no wave.
    track(0);
  } else {
    // Idle periods that stand out — at least half the largest and 10 times the mean idle
    // time per rank and iteration (a slow group's fast ranks idle alike in every iteration;
    // that is no wave) — earliest first: a wave's earliest idle period is next to its
    // source. Each one not explained by a wave found before starts a wave.
    double largest = 0;
    for (const auto& p : res.periods) largest = std::max(largest, p.seconds);
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < res.periods.size(); ++i)
      if (largest > kTimeResolution && res.periods[i].seconds >= 0.5 * largest &&
          res.periods[i].seconds >= 10 * mean_cell)
        order.push_back(i);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return res.periods[a].start < res.periods[b].start; });
    for (std::size_t i : order) {
      if (static_cast<int>(res.waves.size()) >= opt.max_waves) break;
      if (claim[i] >= 0) continue;
      const IdlePeriod& p = res.periods[i];
      Wave w;
      w.source_rank = p.cause_rank != trace::kNoRank ? p.cause_rank : p.rank;
      w.source_time = p.start + p.seconds;
      w.onset = p.start;
      w.delay = p.seconds;
      w.source_iteration = iteration_at(starts[static_cast<std::size_t>(w.source_rank)], p.start);
      res.waves.push_back(w);
      track(res.waves.size() - 1);
      if (claim[i] < 0) claim[i] = static_cast<int>(res.waves.size() - 1);  // not adjacent: explained anyway
    }
  }
  for (auto& w : res.waves) {
    for (Front* f : {&w.down, &w.up}) {
      std::vector<double> time, dist, iter, amp, iter_x, iter_y;
      // A front that reached the end of the chain may have found fewer ranks than it could
      // in its last iteration: that step stays out of the per-iteration fit.
      const std::int32_t cut = f->stop == FrontStop::Boundary && !f->points.empty()
                                   ? f->points.back().iteration
                                   : std::numeric_limits<std::int32_t>::max();
      for (const auto& p : f->points) {
        time.push_back(p.time);
        dist.push_back(p.distance);
        iter.push_back(static_cast<double>(p.iteration - w.source_iteration));
        amp.push_back(p.amplitude);
        if (p.iteration < cut) {
          iter_x.push_back(iter.back());
          iter_y.push_back(p.distance);
        }
      }
      if (iter_x.size() < 2) {
        iter_x = iter;
        iter_y = dist;
      }
      if (f->points.size() >= 2) {
        f->by_time = fit_line(time, dist);
        f->by_iteration = fit_line(iter_x, iter_y);
        f->amplitude = fit_line(dist, amp);
        f->decay_s_per_rank = -f->amplitude.slope;
      }
      f->at_once = f->points.size() >= 2 && f->points.front().iteration == f->points.back().iteration &&
                   f->points.front().time == f->points.back().time;
      f->predicted_ranks_per_s = predicted;
      f->measured_over_predicted = predicted > 0 ? f->by_time.slope / predicted : 0;
    }
  }
  res.threshold_s = 0;
  for (const auto& w : res.waves) res.threshold_s = std::max({res.threshold_s, opt.threshold * w.delay, 5 * typical});

  // 6. The idle-period matrix.
  IdleMatrix& mx = res.matrix;
  const double wall = t_end - t_begin;
  mx.t0 = t_begin;
  mx.ranks = P;
  if (wall > 0) {
    mx.bin = opt.bin_seconds > 0 ? opt.bin_seconds : (res.iteration_s > 0 ? res.iteration_s : wall / opt.max_bins);
    mx.bins = static_cast<std::size_t>(std::ceil(wall / mx.bin - 1e-9));
    const auto cap = static_cast<std::size_t>(std::max(opt.max_bins, 1));
    if (opt.bin_seconds <= 0 && mx.bins > cap) {
      mx.bin = wall / static_cast<double>(cap);
      mx.bins = cap;
    }
    mx.bins = std::max<std::size_t>(mx.bins, 1);
    mx.idle.assign(P * mx.bins, 0.0f);
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

  // 7. Self-synchronisation.
  SelfSync& ss = res.self_sync;
  ss.phase.assign(P, 0.0);
  std::vector<std::pair<double, Rank>> speed;
  for (std::size_t r = 0; r < P; ++r)
    if (exec_of[r].size() >= 3) speed.emplace_back(trimmed_mean(exec_of[r]), static_cast<Rank>(r));
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
  if (gap > opt.slow_gap && split > 0) {
    ss.slow_group = true;
    std::vector<char> slow(P, 0);
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

    // The longest idle period's start per (rank, iteration).
    const std::size_t n = n_iter;
    const std::vector<double>& idle = cell;
    std::vector<double> longest(P * n, 0.0), longest_start(P * n, 0.0);
    for (const auto& p : res.periods) {
      if (p.iteration < 0 || static_cast<std::size_t>(p.iteration) >= n) continue;
      const std::size_t c = static_cast<std::size_t>(p.rank) * n + static_cast<std::size_t>(p.iteration);
      if (p.seconds > longest[c]) {
        longest[c] = p.seconds;
        longest_start[c] = p.start;
      }
    }
    std::vector<double> earliest(n, std::numeric_limits<double>::infinity());
    for (std::size_t r = 0; r < P; ++r)
      for (std::size_t k = 0; k < starts[r].size() && k < n; ++k) earliest[k] = std::min(earliest[k], starts[r][k]);
    const std::size_t half = n / 2, last = n >= 2 ? n - 1 : n;  // the last iteration ends at MPI_Finalize
    double fast_idle = 0;
    std::size_t fast_cells = 0;
    double pmin = std::numeric_limits<double>::infinity(), pmax = -pmin;
    // Distance of every rank to the nearest slow rank (two sweeps).
    std::vector<long long> dist(P, std::numeric_limits<long long>::max() / 4);
    for (std::size_t r = 0; r < P; ++r)
      dist[r] = slow[r] ? 0 : (r > 0 ? dist[r - 1] + 1 : dist[r]);
    for (std::size_t r = P; r-- > 0;)
      if (r + 1 < P) dist[r] = std::min(dist[r], dist[r + 1] + 1);
    std::vector<double> sync_iter, sync_dist;
    for (std::size_t r = 0; r < P; ++r) {
      if (slow[r]) continue;
      double ph = 0;
      std::size_t ph_n = 0;
      for (std::size_t k = half; k < last; ++k) {
        fast_idle += idle[r * n + k];
        ++fast_cells;
        if (longest[r * n + k] > 0 && std::isfinite(earliest[k])) {
          ph += longest_start[r * n + k] - earliest[k];
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
      for (std::size_t k = 1; k + 3 <= last; ++k) {
        const double h = 0.5 * ss.expected_idle;
        if (idle[r * n + k] >= h && idle[r * n + k + 1] >= h && idle[r * n + k + 2] >= h) {
          sync_iter.push_back(static_cast<double>(k));
          sync_dist.push_back(static_cast<double>(dist[r]));
          break;
        }
      }
    }
    ss.fast_idle_per_iteration = fast_cells > 0 ? fast_idle / static_cast<double>(fast_cells) : 0;
    ss.phase_spread = pmax >= pmin ? pmax - pmin : 0;
    // Neighbouring fast ranks idle at different phases (paper 003, Fig. 5): the median shift.
    std::vector<double> shifts;
    for (std::size_t r = 0; r + 1 < P; ++r)
      if (!slow[r] && !slow[r + 1]) shifts.push_back(std::abs(ss.phase[r + 1] - ss.phase[r]));
    ss.neighbour_phase_shift = median(shifts);
    ss.front = fit_line(sync_iter, sync_dist);
    ss.detected = ss.expected_idle > 0 &&
                  std::abs(ss.fast_idle_per_iteration - ss.expected_idle) <= 0.25 * ss.expected_idle;
  }
  return res;
}

}  // namespace waitlab::analysis
