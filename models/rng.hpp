// waitlab::models — deterministic random numbers.
//
// Promise: a stream is fully determined by (seed, key, purpose) and by nothing else —
// not the standard library, not the host. SplitMix64 seeding, xoshiro256** generation,
// and distributions written out here (std::*_distribution differ between libraries).
#pragma once

#include <cmath>
#include <cstdint>

namespace waitlab::models {

inline std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// Purposes keep the streams of different models apart for the same rank.
enum class Purpose : std::uint64_t {
  Imbalance = 1,
  Delay = 2,
  PeriodicNoise = 3,
  RandomNoise = 4,
  Workload = 5
};

class Rng {
 public:
  Rng(std::uint64_t seed, std::uint64_t key, Purpose purpose) {
    std::uint64_t x = seed ^ (key * 0xD1B54A32D192ED03ULL) ^ (static_cast<std::uint64_t>(purpose) << 56);
    for (auto& s : s_) s = splitmix64(x);
  }
  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  double exponential(double mean) { return -mean * std::log1p(-uniform()); }
  // Pareto with scale xm (minimum) and shape alpha.
  double pareto(double xm, double alpha) { return xm / std::pow(1.0 - uniform(), 1.0 / alpha); }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

}  // namespace waitlab::models
