#include "models/workloads/common.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace waitlab::models::synth {

namespace {

std::string show(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

OptionSpec quantity(std::string name, units::Quantity q, std::string default_value, std::string description) {
  OptionSpec o;
  o.name = std::move(name);
  o.type = OptionType::Quantity;
  o.quantity = q;
  o.default_value = std::move(default_value);
  o.description = std::move(description);
  return o;
}

// Saturates above kMaxCount (extents up to 2^30 each would overflow 64 bits in 3D).
std::int64_t product(const std::vector<int>& v) {
  std::int64_t p = 1;
  for (int x : v) p = std::min(p * x, kMaxCount + 1);
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
  auto o = quantity("ranks", units::Quantity::Integer, "",
                    required ? "number of MPI ranks"
                             : "number of MPI ranks; may be left out when every grid extent is given");
  o.optional = !required;
  return o;
}

OptionSpec iterations_option(std::string default_value) {
  return quantity("iterations", units::Quantity::Integer, std::move(default_value), "number of iterations");
}

OptionSpec compute_option(std::string name, std::string default_value, std::string description) {
  return quantity(std::move(name), units::Quantity::Duration, std::move(default_value),
                  std::move(description));
}

OptionSpec flops_option(std::string what) {
  auto o = quantity("flops", units::Quantity::Flops, "",
                    "if set, " + what +
                        " is this many flops, executed at the host's speed, instead of "
                        "the duration given by `compute`");
  o.optional = true;
  return o;
}

OptionSpec bytes_option(std::string name, std::string default_value, std::string description) {
  return quantity(std::move(name), units::Quantity::Bytes, std::move(default_value), std::move(description));
}

OptionSpec integer_option(std::string name, std::string default_value, std::string description) {
  return quantity(std::move(name), units::Quantity::Integer, std::move(default_value),
                  std::move(description));
}

OptionSpec bool_option(std::string name, std::string default_value, std::string description) {
  OptionSpec o;
  o.name = std::move(name);
  o.type = OptionType::Bool;
  o.default_value = std::move(default_value);
  o.description = std::move(description);
  return o;
}

OptionSpec choice_option(std::string name, std::vector<std::string> choices, std::string default_value,
                         std::string description) {
  OptionSpec o;
  o.name = std::move(name);
  o.type = OptionType::Choice;
  o.choices = std::move(choices);
  o.default_value = std::move(default_value);
  o.description = std::move(description);
  return o;
}

void Reader::fail(std::string_view option, const std::string& what) const {
  std::string msg;
  if (!opts_.context().empty()) msg = opts_.context() + ": ";
  msg += "option '" + std::string(option) + "' of workload " + workload_ + ": " + what;
  throw InputError(msg);
}

std::int64_t Reader::integer(std::string_view name, std::int64_t lo, std::int64_t hi) const {
  const double v = opts_.number(name);
  if (!std::isfinite(v) || v != std::floor(v)) fail(name, "must be a whole number, got " + show(v));
  if (v < static_cast<double>(lo) || v > static_cast<double>(hi))
    fail(name, "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " + show(v));
  return static_cast<std::int64_t>(v);
}

std::uint64_t Reader::bytes(std::string_view name) const {
  const double v = opts_.number(name);
  if (!std::isfinite(v) || v < 0) fail(name, "must be a non-negative size, got " + show(v) + " bytes");
  if (v != std::floor(v)) fail(name, "must be a whole number of bytes, got " + show(v));
  if (v > 0x1p53) fail(name, "is too large: " + show(v) + " bytes");
  return static_cast<std::uint64_t>(v);
}

double Reader::duration(std::string_view name) const {
  const double v = opts_.number(name);
  if (!std::isfinite(v) || v < 0) fail(name, "must be a non-negative duration, got " + show(v) + " s");
  return v;
}

Reader::Amount Reader::compute(std::string_view seconds_name, std::string_view flops_name) const {
  if (opts_.has(flops_name)) {
    const double f = opts_.number(flops_name);
    if (!std::isfinite(f) || f < 0)
      fail(flops_name, "must be a non-negative amount, got " + show(f) + " flops");
    return {f, true};
  }
  return {duration(seconds_name), false};
}

std::vector<int> Reader::grid(const std::vector<std::string>& extent_names) const {
  std::vector<int> dims;
  std::string given;  // "px = 4, py = 0" for messages
  for (const auto& n : extent_names) {
    dims.push_back(static_cast<int>(integer(n, 0, kMaxCount)));
    given += (given.empty() ? "" : ", ") + n + " = " + std::to_string(dims.back());
  }
  const bool all_given = std::none_of(dims.begin(), dims.end(), [](int d) { return d == 0; });
  if (!opts_.has("ranks")) {
    if (!all_given) fail("ranks", "is required unless every extent is given (" + given + ")");
    const std::int64_t n = product(dims);
    if (n > kMaxCount)
      fail(extent_names.front(),
           "the grid (" + given + ") has more than " + std::to_string(kMaxCount) + " ranks");
    return dims;
  }
  const auto n = static_cast<int>(integer("ranks", 1, kMaxCount));
  try {
    return dims_create(n, dims);
  } catch (const std::invalid_argument& e) {
    fail("ranks", e.what());
  }
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

std::vector<int> grid_coords(const std::vector<int>& dims, int rank) {
  std::vector<int> c(dims.size());
  for (std::size_t i = dims.size(); i-- > 0;) {
    c[i] = rank % dims[i];
    rank /= dims[i];
  }
  return c;
}

int grid_rank(const std::vector<int>& dims, const std::vector<int>& coords) {
  int r = 0;
  for (std::size_t i = 0; i < dims.size(); ++i) r = r * dims[i] + coords[i];
  return r;
}

void BasicWorkload::check_rank(Rank r) const {
  if (r < 0 || r >= ranks_)
    throw std::out_of_range("workload " + name_ + ": rank " + std::to_string(r) + " outside [0, " +
                            std::to_string(ranks_) + ")");
}

}  // namespace waitlab::models::synth
