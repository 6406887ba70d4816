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
#include "exchange_checks.hpp"
#include "processes.hpp"

namespace waitlab::engine {
namespace {

using namespace exchange_checks;

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
    expect_sorted_inbox(t);
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
  on_every_world([&](Transport& t, const std::string& where) { expect_sum_in_source_order(t, serial, where); });
}

// Rounds back to back on one channel: each round gets exactly its own records.
TEST(Exchange, RoundsOnOneChannelDoNotMix) {
  on_every_world([&](Transport& t, const std::string& where) { expect_rounds_apart(t, where); });
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
