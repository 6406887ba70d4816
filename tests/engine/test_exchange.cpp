// Exchange: what each location receives is sorted by (source location, key) and does not
// depend on the number of processes, the partition or the delivery order
// (analysis/engine/exchange.hpp): the same bytes for P = 1, 2, 3, 4, 7 (and P > L) under
// several seeds, and a floating-point sum over the received records that order would change.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "analysis/engine/exchange.hpp"
#include "analysis/engine/fold.hpp"
#include "processes.hpp"

namespace waitlab::engine {
namespace {

const std::vector<std::uint64_t> kEvents = {4, 1, 7, 2, 2, 9, 3};
constexpr Channel kChannel = 7;

// Every location sends every location (itself too) its value under two keys, emitted in
// descending key order and the first key twice (so the sort, and its stability, show), and
// location 6 gets one extra record from each source. Then each location sums, in its inbox
// order, the doubles it received; returns (per location, in location order) the inbox bytes
// and that sum, on process 0.
Bytes exchange_round(Transport& t, Location locations) {
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

TEST(Exchange, LocationsReceiveTheSameBytesForEveryProcessCountAndSeed) {
  for (Location locations : {7, 3}) {
    const Bytes serial = on_serial([&](Transport& t) { return exchange_round(t, locations); })[0];
    for (int p : kProcessCounts)
      for (std::uint64_t seed : kSeeds) {
        const auto results = on_virtual(p, seed, [&](Transport& t) { return exchange_round(t, locations); });
        EXPECT_EQ(results[0], serial) << locations << " locations, " << p << " processes, seed " << seed;
      }
  }
}

TEST(Exchange, InboxIsSortedBySourceThenKeyAndKeepsEmissionOrderOnEqualKeys) {
  on_virtual(3, 11, [](Transport& t) {
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
    return Bytes{};
  });
}

// One location's sum of what it received: 1e16, 1, 1, 1, −1e16, 1, 1 from locations 0..6 in
// source order is 2.0; arrival order could give another value (reverse order gives 4.0); the
// engine always gives the serial sum.
TEST(Exchange, ReceivedValuesSumInSourceOrderWhateverTheArrival) {
  double serial = 0, reverse = 0;
  for (double v : kValues) serial += v;
  for (auto it = kValues.rbegin(); it != kValues.rend(); ++it) reverse += *it;
  ASSERT_EQ(serial, 2.0);
  ASSERT_EQ(reverse, 4.0);  // the order matters
  on_every_world([&](Transport& t, const std::string& where) {
    const Partition partition = Partition::balanced(kEvents, t.size());
    const LocationRange owned = partition.range(t.self());
    Exchange exchange(t, partition, kChannel);
    for (Location s = owned.first; s < owned.last; ++s) exchange.emit(s, 3, 0, encode(kValues[static_cast<std::size_t>(s)]));
    const Inbox inbox = exchange.deliver();
    if (!owned.holds(3)) return;
    double sum = 0;
    for (const ExchangeRecord& r : inbox.of(3)) sum += decode<double>(r.payload);
    EXPECT_EQ(bits(sum), bits(serial)) << where;
  });
}

// Rounds back to back on one channel: a process done with round 1 already sends round 2 while
// others still wait for round 1's parcels; each round still gets exactly its own records.
TEST(Exchange, RoundsOnOneChannelDoNotMix) {
  on_every_world([&](Transport& t, const std::string& where) {
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
  });
}

TEST(Exchange, RefusesWhatThisProcessDoesNotOwn) {
  on_virtual(2, 1, [](Transport& t) {
    const Partition partition = Partition::balanced(kEvents, t.size());
    Exchange exchange(t, partition, kChannel);
    const Location foreign = partition.range(1 - t.self()).first;
    const Location own = partition.range(t.self()).first;
    EXPECT_THROW(exchange.emit(foreign, own, 0, {}), std::out_of_range);
    EXPECT_THROW(exchange.emit(own, 7, 0, {}), std::out_of_range);
    const Inbox inbox = exchange.deliver();  // nothing emitted: every inbox empty
    EXPECT_TRUE(inbox.of(own).empty());
    EXPECT_THROW(inbox.of(foreign), std::out_of_range);
    return Bytes{};
  });
  SerialTransport serial;
  EXPECT_THROW(Exchange(serial, Partition::balanced(kEvents, 2), kChannel), std::invalid_argument);
}

}  // namespace
}  // namespace waitlab::engine
