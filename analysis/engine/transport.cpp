// waitlab::engine — the exact combinations and the collectives' default forms (transport.hpp).
#include "analysis/engine/transport.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace waitlab::engine {
namespace {

constexpr Channel kGatherChannel = kFirstReservedChannel;
constexpr Channel kBroadcastChannel = kFirstReservedChannel + 1;
constexpr Channel kChainChannel = kFirstReservedChannel + 2;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Process 0's combination of one value per process (the operations are exact, so the order
// is a convention, not a requirement).
template <typename T, typename Op>
Bytes fold_in_process_order(const std::vector<Bytes>& all, Op op) {
  T acc = decode<T>(all.at(0));
  for (std::size_t p = 1; p < all.size(); ++p) acc = op(acc, decode<T>(all[p]));
  return encode(acc);
}

}  // namespace

double exact_min(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return kNaN;
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

double exact_max(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return kNaN;
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}

MaxLoc exact_maxloc(const MaxLoc& a, const MaxLoc& b) {
  const bool a_nan = std::isnan(a.value), b_nan = std::isnan(b.value);
  if (a_nan || b_nan) {
    if (a_nan && b_nan) return {kNaN, std::min(a.location, b.location)};
    return a_nan ? MaxLoc{kNaN, a.location} : MaxLoc{kNaN, b.location};
  }
  if (a.value == b.value) return {exact_max(a.value, b.value), std::min(a.location, b.location)};
  return a.value > b.value ? a : b;
}

Aborted::Aborted(int exit_code) : std::runtime_error("aborted with exit code " + std::to_string(exit_code)), code(exit_code) {}

void Transport::post(int destination, Channel channel, std::span<const std::byte> bytes) {
  if (destination < 0 || destination >= size())
    throw std::invalid_argument("transport: destination " + std::to_string(destination) + " of " + std::to_string(size()));
  if (channel >= kFirstReservedChannel)
    throw std::invalid_argument("transport: channel " + std::to_string(channel) + " is reserved for the collectives");
  post_unchecked(destination, channel, bytes);
}

std::vector<Bytes> Transport::gather(std::span<const std::byte> bytes) {
  if (self() != 0) {
    post_unchecked(0, kGatherChannel, bytes);
    flush();
    return {};
  }
  std::vector<Bytes> all(static_cast<std::size_t>(size()));
  all[0].assign(bytes.begin(), bytes.end());
  for (int source = 1; source < size(); ++source)
    all[static_cast<std::size_t>(source)] = receive(kGatherChannel, source).bytes;
  return all;
}

Bytes Transport::broadcast(std::span<const std::byte> bytes) {
  if (self() != 0) return receive(kBroadcastChannel, 0).bytes;
  for (int d = 1; d < size(); ++d) post_unchecked(d, kBroadcastChannel, bytes);
  if (size() > 1) flush();
  return Bytes(bytes.begin(), bytes.end());
}

Bytes Transport::chain(Bytes initial, const std::function<Bytes(Bytes)>& step) {
  Bytes acc = step(self() == 0 ? std::move(initial) : receive(kChainChannel, self() - 1).bytes);
  if (size() == 1) return acc;
  // The last process hands the result back to process 0, which broadcasts it.
  post_unchecked(self() + 1 < size() ? self() + 1 : 0, kChainChannel, acc);
  flush();
  return broadcast(self() == 0 ? receive(kChainChannel, size() - 1).bytes : Bytes{});
}

Bytes Transport::combine_all(Bytes mine, const std::function<Bytes(const std::vector<Bytes>&)>& combine) {
  const std::vector<Bytes> all = gather(mine);
  return broadcast(self() == 0 ? combine(all) : Bytes{});
}

std::uint64_t Transport::sum(std::uint64_t value) {
  return decode<std::uint64_t>(combine_all(encode(value), [](const std::vector<Bytes>& all) {
    return fold_in_process_order<std::uint64_t>(all, [](std::uint64_t a, std::uint64_t b) { return a + b; });
  }));
}

double Transport::min(double value) {
  return decode<double>(combine_all(encode(value), [](const std::vector<Bytes>& all) {
    return fold_in_process_order<double>(all, exact_min);
  }));
}

double Transport::max(double value) {
  return decode<double>(combine_all(encode(value), [](const std::vector<Bytes>& all) {
    return fold_in_process_order<double>(all, exact_max);
  }));
}

MaxLoc Transport::maxloc(const MaxLoc& value) {
  return decode<MaxLoc>(combine_all(encode(value), [](const std::vector<Bytes>& all) {
    return fold_in_process_order<MaxLoc>(all, exact_maxloc);
  }));
}

}  // namespace waitlab::engine
