// The folds' promises as checks on any transport (the virtual one in test_fold.cpp, MPI's in
// mpi/test_mpi_transport.cpp): sums over locations give the serial loop's bits whatever the
// number of processes (analysis/engine/fold.hpp, rules D3 and D4). Each is called by every
// process of one run.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "analysis/engine/fold.hpp"
#include "processes.hpp"

namespace waitlab::engine::fold_checks {

inline const std::vector<std::uint64_t> kEvents = {1, 1, 1, 1, 1, 1, 1};  // a partition by location counts

inline double serial_sum(Location locations) {
  double sum = 0;
  for (Location l = 0; l < locations; ++l) sum += kValues[static_cast<std::size_t>(l)];
  return sum;
}

using Fold = std::function<double(Transport&, LocationRange)>;

// The fold's result on this process for the first `locations` locations, as bytes.
inline Bytes fold_of(Transport& t, Location locations, const Fold& fold) {
  const auto events = std::span(kEvents).first(static_cast<std::size_t>(locations));
  return encode(fold(t, Partition::balanced(events, t.size()).range(t.self())));
}

inline double chained_sum(Transport& t, LocationRange owned) {
  return chained_fold(t, owned, 0.0, [](Location l, double& acc) { acc += kValues[static_cast<std::size_t>(l)]; });
}

inline double location_order_sum_of(Transport& t, LocationRange owned) {
  std::vector<double> mine;
  for (Location l = owned.first; l < owned.last; ++l) mine.push_back(kValues[static_cast<std::size_t>(l)]);
  return location_order_sum(t, owned, mine);
}

// A vector accumulator continued term by term (as the critical path's time per call path is):
// location l adds its terms to cells l % 3 and (l + 1) % 3, so every cell sees a 1e16 and a −1e16.
inline std::vector<double> serial_vector_fold() {
  std::vector<double> acc(3, 0.0);
  for (std::size_t l = 0; l < kValues.size(); ++l) {
    acc[l % 3] += kValues[l];
    acc[(l + 1) % 3] += 0.5 * kValues[l];
  }
  return acc;
}

inline Bytes chained_vector_fold(Transport& t) {
  const LocationRange owned = Partition::balanced(kEvents, t.size()).range(t.self());
  return encode(chained_fold(t, owned, std::vector<double>(3, 0.0), [](Location l, std::vector<double>& acc) {
    const auto i = static_cast<std::size_t>(l);
    acc[i % 3] += kValues[i];
    acc[(i + 1) % 3] += 0.5 * kValues[i];
  }));
}

// Process 0 gets every location's value in location order, the others nothing.
inline void expect_gathered_in_location_order(Transport& t) {
  const LocationRange owned = Partition::balanced(kEvents, t.size()).range(t.self());
  std::vector<Location> mine;
  for (Location l = owned.first; l < owned.last; ++l) mine.push_back(l * 10);
  const auto all = gather_in_location_order(t, owned, std::span<const Location>(mine));
  if (t.self() == 0) EXPECT_EQ(all, (std::vector<Location>{0, 10, 20, 30, 40, 50, 60})) << t.size();
  else EXPECT_TRUE(all.empty());
}

// Values for the spread median: negatives, zeros of both signs, ties, a subnormal, huge and tiny
// magnitudes — whose byte-wise order differs from their order as doubles unless mapped.
inline const std::vector<double> kMedianValues = {3.5,    -2.0,  0.0,   -0.0,   1e300, -1e-300, 4.9e-324, 3.5,
                                                  7.25,   -7.25, 1e-9,  2.5e-9, 3.5,   -1e300,  0.125,    42.0,
                                                  1.0e16, 1.5,   -1.5,  6.0,    6.0,   1e-310,  -3.0,     9.75};

// The median of the first n values in one process: sorted, the middle one, or the mean of the
// middle two (as idle::median; a zero may come out as −0).
inline double serial_median(std::size_t n) {
  std::vector<double> v(kMedianValues.begin(), kMedianValues.begin() + static_cast<std::ptrdiff_t>(n));
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 == 1 ? v[v.size() / 2] : (v[v.size() / 2] + v[v.size() / 2 - 1]) / 2;
}

// engine::median of the first n values, value i on process (i * i + 1) % P: spread unevenly, some
// processes holding none.
inline double spread_median(Transport& t, std::size_t n) {
  std::vector<double> mine;
  for (std::size_t i = 0; i < n; ++i)
    if (static_cast<int>((i * i + 1) % static_cast<std::size_t>(t.size())) == t.self()) mine.push_back(kMedianValues[i]);
  return median(t, mine);
}

}  // namespace waitlab::engine::fold_checks
