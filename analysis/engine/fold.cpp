// waitlab::engine — the location-order sum and the spread median (fold.hpp).
#include "analysis/engine/fold.hpp"

#include <bit>
#include <cstdint>

namespace waitlab::engine {

double location_order_sum(Transport& transport, LocationRange owned, std::span<const double> values) {
  const std::vector<double> all = gather_in_location_order(transport, owned, values);
  double sum = 0;
  for (const double v : all) sum += v;
  return decode<double>(transport.broadcast(encode(sum)));
}

namespace {

constexpr std::uint64_t kSign = std::uint64_t{1} << 63;

// Doubles to integers in the same order (negatives below positives, −0 as +0).
std::uint64_t key_of(double x) {
  const auto bits = std::bit_cast<std::uint64_t>(x == 0 ? 0.0 : x);
  return (bits & kSign) != 0 ? ~bits : bits | kSign;
}

double value_of(std::uint64_t key) { return std::bit_cast<double>((key & kSign) != 0 ? key & ~kSign : ~key); }

// Every process's counts added, on every process.
std::vector<std::uint64_t> sum_all(Transport& transport, const std::vector<std::uint64_t>& mine) {
  std::vector<std::uint64_t> total(mine.size(), 0);
  for (const Bytes& part : transport.gather(encode(mine))) {
    const auto counts = decode<std::vector<std::uint64_t>>(part);
    for (std::size_t i = 0; i < total.size() && i < counts.size(); ++i) total[i] += counts[i];
  }
  return decode<std::vector<std::uint64_t>>(transport.broadcast(encode(total)));
}

// The key of rank k (0-based, k < the number of values) among every process's values: one byte
// of it per round, the values whose higher bytes match what is known counted per next byte.
std::uint64_t select(Transport& transport, std::span<const double> values, std::uint64_t k) {
  std::uint64_t prefix = 0, known = 0;  // the bytes found so far, and their mask
  for (int shift = 56; shift >= 0; shift -= 8) {
    std::vector<std::uint64_t> count(256, 0);
    for (const double v : values) {
      const std::uint64_t key = key_of(v);
      if ((key & known) == prefix) ++count[(key >> shift) & 0xff];
    }
    count = sum_all(transport, count);
    std::uint64_t byte = 0;
    while (byte < 255 && k >= count[byte]) k -= count[byte++];
    prefix |= byte << shift;
    known |= std::uint64_t{0xff} << shift;
  }
  return prefix;
}

}  // namespace

double median(Transport& transport, std::span<const double> values) {
  const std::uint64_t n = transport.sum(values.size());
  if (n == 0) return 0;
  const double hi = value_of(select(transport, values, n / 2));
  if (n % 2 == 1) return hi;
  return (hi + value_of(select(transport, values, n / 2 - 1))) / 2;
}

}  // namespace waitlab::engine
