// waitlab::engine — which process replays which locations.
//
// Promise: a Partition splits the locations 0..L−1 into P contiguous ranges, one per process
// in process order (process p owns [first, last), the next starts where it ends), balanced by
// event counts: the cut between processes k−1 and k is the location boundary whose prefix sum
// of events is nearest to k·N/P (N the total; ties to the lower boundary), computed in exact
// integer arithmetic. When every count is zero the locations themselves are balanced (each
// counted as one event). P may exceed L: some ranges are then empty, and those processes still
// take part in every exchange and fold. A pure function of the counts and P; no result of the
// engine depends on it (docs/plans/issue-32-replay-engine.md, D1–D7).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "analysis/trace/trace.hpp"

namespace waitlab::engine {

using Location = trace::Rank;  // a location is a rank of the trace (its threads go with it)

struct LocationRange {
  Location first = 0;
  Location last = 0;  // one past the end
  bool empty() const { return first == last; }
  Location size() const { return last - first; }
  bool holds(Location l) const { return first <= l && l < last; }
  bool operator==(const LocationRange&) const = default;
};

class Partition {
 public:
  // Balances `events` (one count per location) over `processes` (≥ 1; throws
  // std::invalid_argument otherwise).
  static Partition balanced(std::span<const std::uint64_t> events, int processes);

  int processes() const { return static_cast<int>(cuts_.size()) - 1; }
  Location locations() const { return cuts_.back(); }
  LocationRange range(int process) const { return {cuts_.at(process), cuts_.at(process + 1)}; }
  // The process owning `location` (0 ≤ location < locations(); throws std::out_of_range).
  int owner(Location location) const;

 private:
  explicit Partition(std::vector<Location> cuts) : cuts_(std::move(cuts)) {}
  std::vector<Location> cuts_;  // P + 1 boundaries: 0 = cuts_[0] ≤ … ≤ cuts_[P] = L
};

}  // namespace waitlab::engine
