// waitlab::engine — the balanced partition of locations (partition.hpp).
#include "analysis/engine/partition.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace waitlab::engine {
namespace {

__extension__ typedef unsigned __int128 Wide;  // prefix sums × P do not fit 64 bits in general

// The boundary b (0 ≤ b ≤ L) whose prefix sum prefix[b] is nearest to k·N/P, the lower one on a
// tie: compared as |prefix[b]·P − k·N| without rounding.
Location nearest_cut(const std::vector<std::uint64_t>& prefix, int processes, int k) {
  const Wide target = static_cast<Wide>(prefix.back()) * static_cast<Wide>(k);
  const auto scaled = [&](std::size_t b) { return static_cast<Wide>(prefix[b]) * static_cast<Wide>(processes); };
  std::size_t lo = 0, hi = prefix.size() - 1;  // the first boundary with scaled ≥ target
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (scaled(mid) >= target) hi = mid; else lo = mid + 1;
  }
  if (lo == 0 || scaled(lo) - target < target - scaled(lo - 1)) return static_cast<Location>(lo);
  // The boundary below is as near or nearer; so are those below it across zero-count locations.
  std::size_t best = lo - 1;
  while (best > 0 && prefix[best - 1] == prefix[best]) --best;
  return static_cast<Location>(best);
}

}  // namespace

Partition Partition::balanced(std::span<const std::uint64_t> events, int processes) {
  if (processes < 1) throw std::invalid_argument("partition: " + std::to_string(processes) + " processes (at least 1)");
  std::vector<std::uint64_t> prefix(events.size() + 1, 0);
  bool all_zero = true;
  for (std::size_t i = 0; i < events.size(); ++i) all_zero = all_zero && events[i] == 0;
  for (std::size_t i = 0; i < events.size(); ++i) prefix[i + 1] = prefix[i] + (all_zero ? 1 : events[i]);
  std::vector<Location> cuts(static_cast<std::size_t>(processes) + 1, 0);
  for (int k = 1; k < processes; ++k) cuts[static_cast<std::size_t>(k)] = nearest_cut(prefix, processes, k);
  cuts.back() = static_cast<Location>(events.size());
  return Partition(std::move(cuts));
}

int Partition::owner(Location location) const {
  if (location < 0 || location >= locations())
    throw std::out_of_range("partition: location " + std::to_string(location) + " of " + std::to_string(locations()));
  // The last boundary ≤ location starts the (non-empty) range that holds it.
  const auto after = std::upper_bound(cuts_.begin(), cuts_.end(), location);
  return static_cast<int>(after - cuts_.begin()) - 1;
}

}  // namespace waitlab::engine
