// waitlab::analysis::intervals — ordered, disjoint time intervals of one location: where it is
// outside MPI calls, the union of its state intervals, and the set operations between such
// lists. Shared by the time-resolved metrics (timeresolved.cpp) and the hybrid MPI+OpenMP
// factors (analysis/timeresolved/hybrid.cpp), so that both read a location's useful time alike.
//
// Promise: pure functions; every list taken and returned is ordered by begin and disjoint.
#pragma once

#include <algorithm>
#include <vector>

#include "analysis/trace/trace.hpp"

namespace waitlab::analysis::intervals {

struct Interval {
  trace::Time a = 0, b = 0;
};

// An Enter or Leave of an MPI call (Region::is_mpi: MPI_Comm_rank and the like included).
inline bool mpi_boundary(const trace::Definitions& defs, const trace::Event& e) {
  if (e.kind != trace::EventKind::Enter && e.kind != trace::EventKind::Leave) return false;
  return e.ref < defs.regions.size() && defs.regions[e.ref].is_mpi();
}

// The stretches of [a, b] that a location spends outside every MPI call (any depth), ordered.
inline std::vector<Interval> outside_mpi(const trace::Definitions& defs, const trace::Location& l, trace::Time a,
                                         trace::Time b) {
  std::vector<Interval> out;
  const auto add = [&](trace::Time x, trace::Time y) {
    x = std::max(x, a);
    y = std::min(y, b);
    if (y > x) out.push_back({x, y});
  };
  trace::Time from = a;
  int depth = 0;
  for (const auto& e : l.events) {
    if (!mpi_boundary(defs, e)) continue;
    if (e.kind == trace::EventKind::Enter) {
      if (depth++ == 0) add(from, e.time);
    } else if (depth > 0 && --depth == 0) {
      from = e.time;
    }
  }
  if (depth == 0) add(from, b);
  return out;
}

// The union of a location's state intervals, ordered and disjoint.
inline std::vector<Interval> state_union(const std::vector<trace::StateInterval>& states) {
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
inline std::vector<Interval> subtract(const std::vector<Interval>& u, const std::vector<Interval>& m) {
  if (m.empty()) return u;
  std::vector<Interval> out;
  std::size_t j = 0;
  for (const auto& iv : u) {
    while (j < m.size() && m[j].b <= iv.a) ++j;
    trace::Time x = iv.a;
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

// u ∩ m (both ordered and disjoint).
inline std::vector<Interval> intersect(const std::vector<Interval>& u, const std::vector<Interval>& m) {
  std::vector<Interval> out;
  std::size_t j = 0;
  for (const auto& iv : u) {
    while (j < m.size() && m[j].b <= iv.a) ++j;
    for (std::size_t k = j; k < m.size() && m[k].a < iv.b; ++k) {
      const trace::Time x = std::max(iv.a, m[k].a), y = std::min(iv.b, m[k].b);
      if (y > x) out.push_back({x, y});
    }
  }
  return out;
}

// The total length of a list.
inline double length(const std::vector<Interval>& u) {
  double s = 0;
  for (const auto& iv : u) s += iv.b - iv.a;
  return s;
}

}  // namespace waitlab::analysis::intervals
