// The engine's tests run one body on P processes: P = 1 on the SerialTransport, any P (1
// included) on a VirtualWorld with a seed; the numbers of processes and seeds every
// P-independence test goes through, and values whose sum shows the order of its terms.
#pragma once

#include <bit>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "analysis/engine/serial_transport.hpp"
#include "analysis/engine/virtual_transport.hpp"

namespace waitlab::engine {

inline const std::vector<int> kProcessCounts = {1, 2, 3, 4, 7};
inline const std::vector<std::uint64_t> kSeeds = {1, 2, 3, 17, 4242};

// One value per location (7): added in location order they give 2.0, in reverse order 4.0, and
// as the partial sums of locations [0, 3) and [3, 7) 0.0 — 1e16 + 1 is 1e16.
inline const std::vector<double> kValues = {1e16, 1.0, 1.0, 1.0, -1e16, 1.0, 1.0};

inline std::uint64_t bits(double d) { return std::bit_cast<std::uint64_t>(d); }

// What each process's body returned, in process order.
inline std::vector<Bytes> on_serial(const std::function<Bytes(Transport&)>& body) {
  SerialTransport transport;
  return {body(transport)};
}

inline std::vector<Bytes> on_virtual(int processes, std::uint64_t seed, const std::function<Bytes(Transport&)>& body) {
  std::vector<Bytes> results(static_cast<std::size_t>(processes));
  VirtualWorld(processes, seed).run([&](Transport& t) { results[static_cast<std::size_t>(t.self())] = body(t); });
  return results;
}

// Runs body on every process count and seed above; `where` names them for messages.
inline void on_every_world(const std::function<void(Transport& t, const std::string& where)>& body) {
  for (int p : kProcessCounts)
    for (std::uint64_t seed : kSeeds)
      on_virtual(p, seed, [&](Transport& t) {
        body(t, std::to_string(p) + " processes, seed " + std::to_string(seed));
        return Bytes{};
      });
}

}  // namespace waitlab::engine
