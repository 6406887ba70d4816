// The Exchange's promises as checks on any transport (the virtual one in test_exchange.cpp,
// MPI's in mpi/test_mpi_transport.cpp): each is called by every process of one run; what a
// location receives must not depend on the number of processes, the partition or the order
// in which parcels arrive (analysis/engine/exchange.hpp).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "analysis/engine/exchange.hpp"
#include "analysis/engine/fold.hpp"
#include "processes.hpp"

namespace waitlab::engine::exchange_checks {

inline const std::vector<std::uint64_t> kEvents = {4, 1, 7, 2, 2, 9, 3};
inline constexpr Channel kChannel = 7;

// Every location sends every location (itself too) its value under two keys, emitted in
// descending key order and the first key twice (so the sort, and its stability, show), and
// location 6 gets one extra record from each source. Then each location sums, in its inbox
// order, the doubles it received; returns (per location, in location order) the inbox bytes
// and that sum, on process 0.
inline Bytes exchange_round(Transport& t, Location locations) {
  const Partition partition = Partition::balanced(std::span(kEvents).first(static_cast<std::size_t>(locations)), t.size());
  const LocationRange owned = partition.range(t.self());
  Exchange exchange(t, partition, kChannel);
  for (Location s = owned.first; s < owned.last; ++s) {
    const double v = kValues[static_cast<std::size_t>(s)];
    for (Location d = locations - 1; d >= 0; --d) {
      exchange.emit(s, d, 20 + static_cast<std::uint64_t>(d), encode(v));
      exchange.emit(s, d, 10, encode(v));
      exchange.emit(s, d, 10, encode(-2.0 * static_cast<double>(s)));  // equal key: after the one above
      if (d == locations - 1) exchange.emit(s, d, 0, encode(0.5));
    }
  }
  const Inbox inbox = exchange.deliver();
  ByteWriter out;
  std::vector<double> sums;
  for (Location d = owned.first; d < owned.last; ++d) {
    double sum = 0;
    for (const ExchangeRecord& r : inbox.of(d)) {
      out.put(r.source).put(r.key).put_raw(r.payload);
      sum += decode<double>(r.payload);
    }
    sums.push_back(sum);
  }
  const std::vector<Bytes> inboxes = t.gather(std::move(out).bytes());
  const std::vector<double> all_sums = gather_in_location_order(t, owned, std::span<const double>(sums));
  ByteWriter result;
  for (const Bytes& b : inboxes) result.put_raw(b);  // process order = location order
  result.put(all_sums);
  return std::move(result).bytes();
}

// Location 6 receives three records from every location, keys 9, 3, 3 in that emission order:
// sorted by source, then key, the two of key 3 in emission order.
inline void expect_sorted_inbox(Transport& t) {
  const Partition partition = Partition::balanced(kEvents, t.size());
  Exchange exchange(t, partition, kChannel);
  const LocationRange owned = partition.range(t.self());
  for (Location s = owned.first; s < owned.last; ++s) {
    for (std::uint64_t key : {9u, 3u, 3u}) exchange.emit(s, 6, key, encode(static_cast<double>(s * 100) + static_cast<double>(key)));
  }
  const Inbox inbox = exchange.deliver();
  if (owned.holds(6)) {
    const auto records = inbox.of(6);
    EXPECT_EQ(records.size(), 21u);
    for (std::size_t i = 0; i < records.size() && i < 21; ++i) {
      const Location s = static_cast<Location>(i / 3);
      const std::uint64_t key = i % 3 < 2 ? 3 : 9;
      EXPECT_EQ(records[i].source, s);
      EXPECT_EQ(records[i].key, key);
      EXPECT_EQ(decode<double>(records[i].payload), s * 100 + static_cast<double>(key));
    }
  }
}

// Location 3 sums the values of locations 0..6 in its inbox order: the serial sum's bits
// (`serial`, the sum in source order) whatever the arrival order.
inline void expect_sum_in_source_order(Transport& t, double serial, const std::string& where) {
  const Partition partition = Partition::balanced(kEvents, t.size());
  const LocationRange owned = partition.range(t.self());
  Exchange exchange(t, partition, kChannel);
  for (Location s = owned.first; s < owned.last; ++s) exchange.emit(s, 3, 0, encode(kValues[static_cast<std::size_t>(s)]));
  const Inbox inbox = exchange.deliver();
  if (!owned.holds(3)) return;
  double sum = 0;
  for (const ExchangeRecord& r : inbox.of(3)) sum += decode<double>(r.payload);
  EXPECT_EQ(bits(sum), bits(serial)) << where;
}

// Rounds back to back on one channel: a process done with round 1 already sends round 2 while
// others still wait for round 1's parcels; each round still gets exactly its own records.
inline void expect_rounds_apart(Transport& t, const std::string& where) {
  const Partition partition = Partition::balanced(kEvents, t.size());
  const LocationRange owned = partition.range(t.self());
  Exchange exchange(t, partition, kChannel);
  for (std::uint64_t round = 1; round <= 4; ++round) {
    for (Location s = owned.first; s < owned.last; ++s) exchange.emit(s, (s + 1) % 7, round, encode(s));
    const Inbox inbox = exchange.deliver();
    for (Location d = owned.first; d < owned.last; ++d) {
      const auto records = inbox.of(d);
      EXPECT_EQ(records.size(), 1u) << where << ", round " << round;
      for (const ExchangeRecord& r : records) {
        EXPECT_EQ(r.source, (d + 6) % 7);
        EXPECT_EQ(r.key, round);
      }
    }
  }
}

}  // namespace waitlab::engine::exchange_checks
