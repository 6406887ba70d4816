// Transport: the serial and the virtual transport's point-to-point promises (buffering,
// per-source order, the seeded delivery order, deadlock, abort) and the exact collectives for
// P = 1..7 (analysis/engine/transport.hpp, serial_transport.hpp, virtual_transport.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "analysis/engine/bytes.hpp"
#include "processes.hpp"
#include "transport_checks.hpp"

namespace waitlab::engine {
namespace {

TEST(Transport, SerialBuffersUntilFlushAndKeepsOrder) {
  SerialTransport t;
  t.post(0, 5, text("ab"));
  t.post(0, 5, text("cd"));  // the same buffer: one parcel
  t.post(0, 6, {});          // an empty post is still a parcel
  EXPECT_THROW(t.receive(5), std::logic_error);  // nothing flushed yet
  t.flush();
  t.post(0, 5, text("ef"));
  t.flush();
  EXPECT_EQ(as_text(t.receive(5).bytes), "abcd");
  EXPECT_EQ(as_text(t.receive(5).bytes), "ef");
  EXPECT_TRUE(t.receive(6).bytes.empty());
  EXPECT_THROW(t.receive(6), std::logic_error);
  EXPECT_THROW(t.post(1, 5, {}), std::invalid_argument);
  EXPECT_THROW(t.receive(5, 1), std::invalid_argument);
  EXPECT_THROW(t.post(0, kFirstReservedChannel, {}), std::invalid_argument);
}

TEST(Transport, SerialCollectivesReturnTheirArgument) {
  SerialTransport t;
  EXPECT_EQ(t.sum(41), 41u);
  EXPECT_EQ(bits(t.min(-0.0)), bits(-0.0));
  EXPECT_EQ(t.maxloc({2.5, 0}), (MaxLoc{2.5, 0}));
  const auto all = t.gather(text("x"));
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(as_text(all[0]), "x");
  EXPECT_EQ(as_text(t.broadcast(text("y"))), "y");
  EXPECT_EQ(as_text(t.chain(text("<"), [](Bytes b) { b.push_back(std::byte{'0'}); return b; })), "<0");
}

TEST(Transport, SerialAbortEndsTheProgramWithTheCode) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // earlier tests ran threads
  EXPECT_EXIT(SerialTransport().abort(3), ::testing::ExitedWithCode(3), "");
}

TEST(Transport, ExactCombinationsIgnoreTheOrder) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(bits(exact_min(0.0, -0.0)), bits(-0.0));
  EXPECT_EQ(bits(exact_min(-0.0, 0.0)), bits(-0.0));
  EXPECT_EQ(bits(exact_max(0.0, -0.0)), bits(0.0));
  EXPECT_EQ(bits(exact_max(-0.0, 0.0)), bits(0.0));
  EXPECT_TRUE(std::isnan(exact_min(1.0, nan)));
  EXPECT_TRUE(std::isnan(exact_max(nan, 1.0)));
  EXPECT_EQ(exact_maxloc({2.0, 5}, {2.0, 3}), (MaxLoc{2.0, 3}));
  EXPECT_EQ(exact_maxloc({2.0, 3}, {2.0, 5}), (MaxLoc{2.0, 3}));
  EXPECT_EQ(exact_maxloc({1.0, 0}, {2.0, 9}), (MaxLoc{2.0, 9}));
  EXPECT_EQ(exact_maxloc({nan, 7}, {2.0, 1}).location, 7);
}

// Every process gets the same, exact, result for P = 1..7 and several delivery orders.
TEST(Transport, VirtualCollectivesAreExactForOneToSevenProcesses) {
  for (int p = 1; p <= 7; ++p) {
    for (std::uint64_t seed : kSeeds) {
      on_virtual(p, seed, [&](Transport& t) {
        EXPECT_EQ(t.size(), p);
        expect_exact_collectives(t);
        return Bytes{};
      });
    }
  }
}

// The sources, in the order process 0 received their parcels.
std::vector<int> arrival_order(int processes, std::uint64_t seed) {
  std::vector<int> order;
  on_virtual(processes, seed, [&](Transport& t) {
    const std::vector<int> mine = arrivals_in_source_order(t);
    if (t.self() == 0) order = mine;
    return Bytes{};
  });
  return order;
}

TEST(Transport, VirtualKeepsEachSourcesOrderAndShufflesBySeed) {
  const std::vector<int> first = arrival_order(7, 1);
  EXPECT_EQ(first.size(), 18u);
  EXPECT_EQ(arrival_order(7, 1), first);  // one seed, one order
  bool differs = false;
  for (std::uint64_t seed : kSeeds) differs = differs || arrival_order(7, seed) != first;
  EXPECT_TRUE(differs) << "every seed delivered in the same order";
}

TEST(Transport, VirtualReportsAWaitForeverAndUnreceivedParcels) {
  EXPECT_THROW(on_virtual(3, 1, [](Transport& t) { return t.receive(2).bytes; }), std::runtime_error);
  EXPECT_THROW(on_virtual(2, 1,
                          [](Transport& t) {
                            if (t.self() == 0) t.post(1, 2, text("lost"));
                            t.flush();
                            return Bytes{};
                          }),
               std::runtime_error);
}

TEST(Transport, VirtualAbortEndsEveryProcess) {
  try {
    on_virtual(4, 7, [](Transport& t) {
      if (t.self() == 2) t.abort(2);
      return t.receive(3).bytes;  // the others wait for what never comes
    });
    FAIL() << "no abort";
  } catch (const Aborted& a) {
    EXPECT_EQ(a.code, 2);
  }
}

TEST(Transport, VirtualRethrowsABodysError) {
  EXPECT_THROW(on_virtual(3, 5,
                          [](Transport& t) -> Bytes {
                            if (t.self() == 1) throw std::invalid_argument("bad input on 1");
                            return t.broadcast(text("x"));
                          }),
               std::invalid_argument);
}

}  // namespace
}  // namespace waitlab::engine
