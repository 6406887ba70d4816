#include "models/workloads/common.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace waitlab::models::synth {

namespace {

// Saturates above kMaxRanks (extents up to 2^20 each would overflow 64 bits in 4D).
std::int64_t product(const std::vector<int>& v) {
  std::int64_t p = 1;
  for (int x : v) p = std::min<std::int64_t>(p * x, std::int64_t{kMaxRanks} + 1);
  return p;
}

std::vector<int> divisors(int n) {
  std::vector<int> d;
  for (int i = 1; static_cast<std::int64_t>(i) * i <= n; ++i)
    if (n % i == 0) {
      d.push_back(i);
      if (i != n / i) d.push_back(n / i);
    }
  std::sort(d.begin(), d.end(), std::greater<>());
  return d;
}

// The most even non-increasing factorisation of m into `parts` factors: smallest spread
// (largest - smallest); among equal spreads the first found from the largest leading factor.
void balanced(int m, int parts, int cap, std::vector<int>& cur, std::vector<int>& best, int& best_spread) {
  if (parts == 1) {
    if (m > cap) return;
    cur.push_back(m);
    const int spread = cur.front() - cur.back();
    if (best.empty() || spread < best_spread) {
      best = cur;
      best_spread = spread;
    }
    cur.pop_back();
    return;
  }
  for (int d : divisors(m)) {
    if (d > cap) continue;
    cur.push_back(d);
    balanced(m / d, parts - 1, d, cur, best, best_spread);
    cur.pop_back();
  }
}

}  // namespace

OptionSpec ranks_option(bool required) {
  return quantity_option("ranks", units::Quantity::Integer, "",
                         required ? "number of MPI ranks"
                                  : "number of MPI ranks; may be left out when every grid extent is given",
                         !required);
}

OptionSpec iterations_option(std::string default_value) {
  return quantity_option("iterations", units::Quantity::Integer, std::move(default_value),
                         "number of iterations");
}

OptionSpec compute_option(std::string default_value, std::string description) {
  return quantity_option("compute", units::Quantity::Duration, std::move(default_value),
                         std::move(description));
}

OptionSpec flops_option(std::string what) {
  return quantity_option("flops", units::Quantity::Flops, "",
                         "if set, " + what +
                             " is this many flops, executed at the host's speed, instead of the duration "
                             "given by `compute`",
                         true);
}

std::uint64_t Reader::bytes(std::string_view name) const {
  const double v = non_negative(name, units::Quantity::Bytes);
  if (v != std::floor(v)) fail(name, "must be a whole number of bytes, got " + shown(v));
  if (v > static_cast<double>(kMaxMessageBytes))
    fail(name, "must be at most " + std::to_string(kMaxMessageBytes) + " bytes (2GiB - 1B: MPI counts are int), got " +
                   shown(v, units::Quantity::Bytes));
  return static_cast<std::uint64_t>(v);
}

double Reader::duration(std::string_view name) const {
  return non_negative(name, units::Quantity::Duration);
}

int Reader::rank_count(std::string_view name) const {
  const double v = number(name);
  if (std::isfinite(v) && v == std::floor(v) && v > kMaxRanks)
    fail(name, "must be at most " + std::to_string(kMaxRanks) + " (waitlab's limit on ranks), got " + shown(v));
  return static_cast<int>(integer(name, 1, kMaxRanks));
}

Amount Reader::compute(std::string_view seconds_name, std::string_view flops_name) const {
  if (has(flops_name)) return {non_negative(flops_name, units::Quantity::Flops), true};
  return {duration(seconds_name), false};
}

std::vector<int> Reader::grid(const std::vector<std::string>& extent_names) const {
  std::vector<int> dims;
  std::string given;  // "px = 4, py = 0" for messages
  for (const auto& n : extent_names) {
    dims.push_back(static_cast<int>(integer(n, 0, kMaxRanks)));
    given += (given.empty() ? "" : ", ") + n + " = " + std::to_string(dims.back());
  }
  const bool all_given = std::none_of(dims.begin(), dims.end(), [](int d) { return d == 0; });
  if (!has("ranks")) {
    if (!all_given) fail("ranks", "is required unless every extent is given (" + given + ")");
    const std::int64_t n = product(dims);
    if (n > kMaxRanks)
      fail(extent_names.front(),
           "the grid (" + given + ") has more than " + std::to_string(kMaxRanks) + " ranks (waitlab's limit)");
    return dims;
  }
  const auto n = rank_count("ranks");
  try {
    return dims_create(n, dims);
  } catch (const std::invalid_argument& e) {
    fail("ranks", e.what());
  }
}

void read_basic(const Reader& in, BasicParams& out, const std::vector<std::string>& extent_names) {
  if (extent_names.empty()) {
    out.ranks = in.rank_count("ranks");
    out.grid = {out.ranks};
  } else {
    out.grid = in.grid(extent_names);
    out.ranks = static_cast<int>(product(out.grid));  // Reader::grid keeps it <= kMaxRanks
  }
  out.iterations = static_cast<int>(in.integer("iterations", 1, kMaxCount));
  out.compute = in.compute();
  out.bytes = in.bytes("bytes");
}

std::vector<int> dims_create(int n, std::vector<int> dims) {
  std::int64_t fixed = 1;
  std::size_t free = 0;
  for (int d : dims) {
    if (d < 0) throw std::invalid_argument("grid extents must be >= 0 (0 = choose)");
    if (d == 0)
      ++free;
    else
      fixed = std::min<std::int64_t>(fixed * d, std::int64_t{n} + 1);  // saturate: no overflow
  }
  std::string shape;
  for (int d : dims) shape += (shape.empty() ? "" : " x ") + (d == 0 ? std::string("*") : std::to_string(d));
  if (n < 1) throw std::invalid_argument("the number of ranks must be >= 1");
  if (free == 0) {
    if (fixed != n)
      throw std::invalid_argument("the grid " + shape + " has " +
                                  (fixed > n ? "more than " + std::to_string(n) : std::to_string(fixed)) +
                                  " ranks, not " + std::to_string(n));
    return dims;
  }
  if (n % fixed != 0)
    throw std::invalid_argument(std::to_string(n) + " ranks cannot be arranged as a grid " + shape);
  std::vector<int> cur, best;
  int spread = 0;
  balanced(static_cast<int>(n / fixed), static_cast<int>(free), static_cast<int>(n / fixed), cur, best,
           spread);
  std::size_t j = 0;
  for (int& d : dims)
    if (d == 0) d = best[j++];
  return dims;
}

void BasicWorkload::check_rank(Rank r) const {
  if (r < 0 || r >= ranks_)
    throw std::out_of_range("workload " + name_ + ": rank " + std::to_string(r) + " outside [0, " +
                            std::to_string(ranks_) + ")");
}

}  // namespace waitlab::models::synth
