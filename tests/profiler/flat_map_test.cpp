// profiler::FlatMap against std::unordered_map: random inserts and erases on keys that
// collide and cluster (few distinct keys, pointer-like multiples of 64), through growth.
#include "profiler/flat_map.hpp"

#include <cstdint>
#include <cstdio>
#include <random>
#include <unordered_map>

int main() {
  std::mt19937_64 rng(7);
  int failures = 0;
  for (const std::uint64_t range : {std::uint64_t{40}, std::uint64_t{3000}}) {
    waitlab::profiler::FlatMap<std::uint64_t> map;
    std::unordered_map<std::uint64_t, std::uint64_t> ref;
    for (int step = 0; step < 200000; ++step) {
      const std::uint64_t key = 64 * (1 + rng() % range);
      const std::uint64_t value = rng();
      if (rng() % 2 == 0) {
        const auto [v, added] = map.insert(key, value);
        const auto [it, ref_added] = ref.try_emplace(key, value);
        if (added != ref_added || *v != it->second) ++failures;
      } else {
        std::uint64_t got = 0;
        const bool erased = map.erase(key, &got);
        const auto it = ref.find(key);
        if (erased != (it != ref.end()) || (erased && got != it->second)) ++failures;
        if (it != ref.end()) ref.erase(it);
      }
      if (map.empty() != ref.empty()) ++failures;
    }
    // Whatever is left is still found, with its value.
    for (const auto& [key, value] : ref) {
      std::uint64_t got = 0;
      if (!map.erase(key, &got) || got != value) ++failures;
    }
    if (!map.empty()) ++failures;
  }
  if (failures != 0) std::fprintf(stderr, "FlatMap differs from std::unordered_map %d times\n", failures);
  return failures == 0 ? 0 : 1;
}
