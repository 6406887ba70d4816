// Partition: contiguous location ranges balanced by event counts (analysis/engine/partition.hpp),
// checked against cuts worked out by hand and against a brute-force nearest-cut search.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <vector>

#include "analysis/engine/partition.hpp"

namespace waitlab::engine {
namespace {

std::vector<Location> cuts_of(const Partition& p) {
  std::vector<Location> cuts{p.range(0).first};
  for (int k = 0; k < p.processes(); ++k) cuts.push_back(p.range(k).last);
  return cuts;
}

std::vector<Location> cuts(std::vector<std::uint64_t> events, int processes) {
  return cuts_of(Partition::balanced(events, processes));
}

TEST(Partition, WorkedSmallCases) {
  EXPECT_EQ(cuts({10, 10, 10, 10}, 2), (std::vector<Location>{0, 2, 4}));
  EXPECT_EQ(cuts({1, 100}, 2), (std::vector<Location>{0, 1, 2}));  // nearest to 50.5: 1, not 101
  EXPECT_EQ(cuts({5, 1, 1, 1, 1, 1}, 2), (std::vector<Location>{0, 1, 6}));
  EXPECT_EQ(cuts({2, 0, 0, 2}, 2), (std::vector<Location>{0, 1, 4}));  // 2 is met at 1, 2, 3: the lowest
  EXPECT_EQ(cuts({0, 0, 10}, 2), (std::vector<Location>{0, 0, 3}));    // 0 and 10 tie around 5: the lower
  EXPECT_EQ(cuts({7}, 1), (std::vector<Location>{0, 1}));
}

TEST(Partition, OneToSevenProcesses) {
  const std::vector<std::uint64_t> events = {4, 1, 7, 2, 2, 9, 3, 5};  // N = 33
  const std::vector<std::vector<Location>> expected = {
      {0, 8},
      {0, 5, 8},
      {0, 3, 6, 8},
      {0, 2, 5, 6, 8},
      {0, 2, 4, 5, 6, 8},
      {0, 2, 3, 5, 6, 7, 8},
      {0, 2, 3, 4, 5, 6, 7, 8},
  };
  for (int p = 1; p <= 7; ++p) EXPECT_EQ(cuts(events, p), expected[static_cast<std::size_t>(p - 1)]) << p << " processes";
}

TEST(Partition, EachCutIsTheNearestBoundaryLowestOnTies) {
  const std::vector<std::uint64_t> events = {0, 3, 0, 0, 8, 1, 1, 0, 5, 2, 2, 0};
  std::vector<std::int64_t> prefix{0};
  for (auto e : events) prefix.push_back(prefix.back() + static_cast<std::int64_t>(e));
  const std::int64_t n = prefix.back();
  for (int p = 1; p <= 15; ++p) {
    const auto c = cuts(events, p);
    for (int k = 1; k < p; ++k) {
      std::size_t best = 0;  // brute force over all boundaries: |prefix·P − k·N| smallest, then lowest
      for (std::size_t b = 1; b < prefix.size(); ++b)
        if (std::llabs(prefix[b] * p - k * n) < std::llabs(prefix[best] * p - k * n)) best = b;
      EXPECT_EQ(c[static_cast<std::size_t>(k)], static_cast<Location>(best)) << p << " processes, cut " << k;
    }
  }
}

TEST(Partition, MoreProcessesThanLocationsLeavesEmptyRanges) {
  const Partition two = Partition::balanced(std::vector<std::uint64_t>{3, 3}, 4);
  EXPECT_EQ(cuts_of(two), (std::vector<Location>{0, 0, 1, 1, 2}));
  EXPECT_TRUE(two.range(0).empty());
  EXPECT_EQ(two.range(1), (LocationRange{0, 1}));
  EXPECT_TRUE(two.range(2).empty());
  EXPECT_EQ(two.range(3), (LocationRange{1, 2}));
  EXPECT_EQ(two.owner(0), 1);
  EXPECT_EQ(two.owner(1), 3);
  EXPECT_EQ(cuts({1, 1, 1}, 7), (std::vector<Location>{0, 0, 1, 1, 2, 2, 3, 3}));
  const Partition none = Partition::balanced(std::vector<std::uint64_t>{}, 3);
  EXPECT_EQ(none.locations(), 0);
  for (int k = 0; k < 3; ++k) EXPECT_TRUE(none.range(k).empty());
}

TEST(Partition, AllZeroCountsBalanceTheLocations) {
  EXPECT_EQ(cuts({0, 0, 0, 0, 0, 0}, 4), (std::vector<Location>{0, 1, 3, 4, 6}));  // as if each were 1
  EXPECT_EQ(cuts({0, 0, 0, 0, 0, 0}, 2), (std::vector<Location>{0, 3, 6}));
  EXPECT_EQ(cuts({0, 0}, 5), (std::vector<Location>{0, 0, 1, 1, 2, 2}));  // nearest to 0.4, 0.8, 1.2, 1.6
}

TEST(Partition, HugeCountsDoNotOverflow) {
  const std::uint64_t big = std::uint64_t{1} << 62;
  EXPECT_EQ(cuts({big, 1, big - 1, 2}, 7), (std::vector<Location>{0, 0, 1, 1, 2, 2, 3, 4}));  // N·k beyond 2^64
  EXPECT_EQ(cuts({big, 1, big - 1, 2}, 3), (std::vector<Location>{0, 1, 2, 4}));
  EXPECT_EQ(cuts({big, big / 2, big / 2}, 2), (std::vector<Location>{0, 1, 3}));
}

TEST(Partition, OwnerOfEveryLocationHoldsIt) {
  const Partition p = Partition::balanced(std::vector<std::uint64_t>{4, 1, 7, 2, 2, 9, 3, 5}, 5);
  for (Location l = 0; l < p.locations(); ++l) EXPECT_TRUE(p.range(p.owner(l)).holds(l)) << l;
  EXPECT_THROW(p.owner(8), std::out_of_range);
  EXPECT_THROW(p.owner(-1), std::out_of_range);
  EXPECT_THROW(Partition::balanced(std::vector<std::uint64_t>{1}, 0), std::invalid_argument);
}

}  // namespace
}  // namespace waitlab::engine
