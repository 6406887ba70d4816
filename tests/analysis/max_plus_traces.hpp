// Max-plus traces with idle waves whose answer is known exactly (ALGORITHMS.md §7): a 1D chain
// with one delay, with or without ground truth (tests/analysis/test_idlewave.cpp), and the same
// recurrence on a Cartesian grid (test_idlewave_grid.cpp); the engine's tests run them too
// (tests/engine/test_shard_idlewave.cpp).
#pragma once

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "trace_builder.hpp"

namespace waitlab::analysis::test::max_plus {

using trace::MpiOp;
using trace::Rank;

inline constexpr int kP = 9, kIters = 12, kR0 = 4, kI0 = 2;
inline constexpr double kExec = 100, kDelta = 500;  // µs

// Per iteration every rank computes kExec (rank kR0 kExec + kDelta in iteration kI0), sends
// to both neighbours (eager: the sends take no time), then receives from the left and from
// the right; a receive ends when the neighbour's send has happened. Iteration starts by the
// recurrence t_r(i+1) = max(t_{r−1}, t_r, t_{r+1})(i) + compute, in µs.
// With `truth`, every compute interval also carries its ground truth, the delay as injected.
// Rank 0 computes `edge` µs less than the others (so it idles that long in every iteration,
// and δ + edge when the wave reaches it).
inline trace::Trace max_plus_chain(double delta = kDelta, bool truth = false, double edge = 0) {
  TraceBuilder b(kP, 1e-6);
  std::vector<std::vector<trace::ComputeTruth>> computed(kP);
  std::vector<double> start(kP, 0.0), next(kP);
  for (Rank r = 0; r < kP; ++r) b.enter(r, 0, "main").call(r, MpiOp::Init, 0, 0);
  for (int i = 0; i < kIters; ++i) {
    std::vector<double> sent(kP);
    for (Rank r = 0; r < kP; ++r)
      sent[r] = start[r] + kExec + (r == kR0 && i == kI0 ? delta : 0) - (r == 0 ? edge : 0);
    for (Rank r = 0; r < kP; ++r) {
      b.enter(r, start[r], "compute").leave(r, sent[r], "compute").enter(r, sent[r], "exchange");
      trace::ComputeTruth c;
      c.start = start[r] * 1e-6;
      c.end = sent[r] * 1e-6;
      c.nominal = (kExec - (r == 0 ? edge : 0)) * 1e-6;
      c.injected[static_cast<std::size_t>(trace::Cause::Delay)] = (sent[r] - start[r] - kExec) * 1e-6;
      c.iteration = i;
      computed[r].push_back(c);
      if (r + 1 < kP) b.send(r, sent[r], sent[r], r + 1, 0);
      if (r > 0) b.send(r, sent[r], sent[r], r - 1, 1);
      double t = sent[r];
      if (r > 0) {
        const double at = std::max(t, sent[r - 1]);
        b.recv(r, t, at, at, r - 1, 0);
        t = at;
      }
      if (r + 1 < kP) {
        const double at = std::max(t, sent[r + 1]);
        b.recv(r, t, at, at, r + 1, 1);
        t = at;
      }
      b.leave(r, t, "exchange");
      next[r] = t;
    }
    start = next;
  }
  double end = *std::max_element(start.begin(), start.end());
  for (Rank r = 0; r < kP; ++r) b.call(r, MpiOp::Finalize, start[r], end).leave(r, end, "main");
  trace::Trace t = b.trace();
  if (truth) {
    t.has_truth = true;
    for (Rank r = 0; r < kP; ++r) t.locations[r].truth = computed[r];
  }
  return t;
}

// A Cartesian grid in MPI_Cart order (the last extent varies fastest).
struct Grid {
  std::vector<int> extents;
  bool periodic = false;
  int ranks() const {
    int p = 1;
    for (int e : extents) p *= e;
    return p;
  }
  std::vector<int> coords(int r) const {
    std::vector<int> c(extents.size());
    for (std::size_t d = extents.size(); d-- > 0;) {
      c[d] = r % extents[d];
      r /= extents[d];
    }
    return c;
  }
  int rank(const std::vector<int>& c) const {
    int r = 0;
    for (std::size_t d = 0; d < extents.size(); ++d) r = r * extents[d] + c[d];
    return r;
  }
  std::vector<Rank> neighbours(int r) const {
    std::vector<Rank> n;
    const auto c = coords(r);
    for (std::size_t d = 0; d < extents.size(); ++d)
      for (int s : {-1, 1}) {
        auto q = c;
        q[d] += s;
        if (periodic) q[d] = (q[d] + extents[d]) % extents[d];
        if (q[d] < 0 || q[d] >= extents[d]) continue;
        n.push_back(rank(q));
      }
    return n;
  }
  int manhattan(int a, int b) const {
    const auto ca = coords(a), cb = coords(b);
    int m = 0;
    for (std::size_t d = 0; d < extents.size(); ++d) {
      int o = std::abs(ca[d] - cb[d]);
      if (periodic) o = std::min(o, extents[d] - o);
      m += o;
    }
    return m;
  }
};

// The max-plus recurrence on a grid: every rank computes kExec (rank r0 kExec + kDelta in
// iteration i0), sends to every neighbour (eager, instantly), then receives from each in turn;
// a receive ends when the neighbour's send has happened. No ground truth: a replayed trace.
inline trace::Trace max_plus_grid(const Grid& g, int r0, int i0, int iters) {
  const int P = g.ranks();
  TraceBuilder b(P, 1e-6);
  std::vector<double> start(static_cast<std::size_t>(P), 0.0), next(static_cast<std::size_t>(P));
  for (Rank r = 0; r < P; ++r) b.enter(r, 0, "main").call(r, MpiOp::Init, 0, 0);
  for (int i = 0; i < iters; ++i) {
    std::vector<double> sent(static_cast<std::size_t>(P));
    for (Rank r = 0; r < P; ++r)
      sent[static_cast<std::size_t>(r)] = start[static_cast<std::size_t>(r)] + kExec + (r == r0 && i == i0 ? kDelta : 0);
    for (Rank r = 0; r < P; ++r) {
      const double s = sent[static_cast<std::size_t>(r)];
      b.enter(r, start[static_cast<std::size_t>(r)], "compute").leave(r, s, "compute").enter(r, s, "exchange");
      const auto nb = g.neighbours(r);
      for (Rank q : nb) b.send(r, s, s, q, 0);
      double t = s;
      for (Rank q : nb) {
        const double at = std::max(t, sent[static_cast<std::size_t>(q)]);
        b.recv(r, t, at, at, q, 0);
        t = at;
      }
      b.leave(r, t, "exchange");
      next[static_cast<std::size_t>(r)] = t;
    }
    start = next;
  }
  const double end = *std::max_element(start.begin(), start.end());
  for (Rank r = 0; r < P; ++r)
    b.call(r, MpiOp::Finalize, start[static_cast<std::size_t>(r)], end).leave(r, end, "main");
  return b.trace();
}

}  // namespace waitlab::analysis::test::max_plus
