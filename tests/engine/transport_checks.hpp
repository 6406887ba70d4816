// The Transport's promises as checks on any transport (the virtual one in test_transport.cpp,
// MPI's in mpi/test_mpi_transport.cpp): each is called by every process of one run, with
// that process's Transport, and checks what the promise says that process must see.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/engine/bytes.hpp"
#include "analysis/engine/transport.hpp"
#include "processes.hpp"

namespace waitlab::engine {

inline Bytes text(const std::string& s) {
  Bytes b;
  for (char c : s) b.push_back(static_cast<std::byte>(c));
  return b;
}
inline std::string as_text(const Bytes& b) {
  std::string s;
  for (std::byte c : b) s.push_back(static_cast<char>(c));
  return s;
}

// Every process gets the same, exact, result of each collective, whatever P.
inline void expect_exact_collectives(Transport& t) {
  const int p = t.size();
  const int me = t.self();
  // Σ (me + 1)·2^40: beyond 32 bits, exactly.
  const std::uint64_t expected_sum = (static_cast<std::uint64_t>(p) * static_cast<std::uint64_t>(p + 1) / 2) << 40;
  EXPECT_EQ(t.sum(static_cast<std::uint64_t>(me + 1) << 40), expected_sum);
  // Zeros of both signs: min is −0.0 and max +0.0 whichever process holds which.
  const double zero = me % 2 == 0 ? 0.0 : -0.0;
  EXPECT_EQ(bits(t.min(zero)), bits(p == 1 ? 0.0 : -0.0));
  EXPECT_EQ(bits(t.max(-zero)), bits(p == 1 ? -0.0 : 0.0));
  EXPECT_EQ(t.min(10.0 - me), 11.0 - p);
  // The largest value is held by the two last processes: the lower location wins.
  const double v = me >= p - 2 ? 9.5 : me * 0.25;
  EXPECT_EQ(t.maxloc({v, 100 + me}), (MaxLoc{9.5, 100 + std::max(0, p - 2)}));
  const auto all = t.gather(text(std::string(static_cast<std::size_t>(me), 'g')));
  if (me == 0) {
    EXPECT_EQ(all.size(), static_cast<std::size_t>(p));
    for (int q = 0; q < p && q < static_cast<int>(all.size()); ++q) EXPECT_EQ(all[static_cast<std::size_t>(q)].size(), static_cast<std::size_t>(q));
  } else {
    EXPECT_TRUE(all.empty());
  }
  EXPECT_EQ(as_text(t.broadcast(text(me == 0 ? "from 0" : "ignored"))), "from 0");
  const Bytes chained = t.chain(text(me == 0 ? "<" : "ignored"), [&](Bytes b) {
    b.push_back(static_cast<std::byte>('0' + me));
    return b;
  });
  EXPECT_EQ(as_text(chained), "<" + std::string("0123456").substr(0, static_cast<std::size_t>(p)));
}

// Every process but 0 flushes kEach parcels, one at a time, to process 0 on channel 1; process 0
// receives them from any source and checks each source's come in order. Returns, on process 0,
// the sources in the order their parcels were received (empty on the others).
inline std::vector<int> arrivals_in_source_order(Transport& t) {
  constexpr int kEach = 3;
  std::vector<int> order;
  if (t.self() != 0) {
    for (int k = 0; k < kEach; ++k) {
      t.post(0, 1, encode(k));
      t.flush();
    }
    return order;
  }
  std::vector<int> next(static_cast<std::size_t>(t.size()), 0);
  for (int n = 0; n < kEach * (t.size() - 1); ++n) {
    const Parcel parcel = t.receive(1);
    EXPECT_EQ(decode<int>(parcel.bytes), next[static_cast<std::size_t>(parcel.source)]++)
        << "parcels from source " << parcel.source << " out of order";
    order.push_back(parcel.source);
  }
  return order;
}

}  // namespace waitlab::engine
