// Fold: sums over locations give the serial loop's bits for P = 1, 2, 3, 4, 7 (and P > L) and
// every delivery order (analysis/engine/fold.hpp, rules D3 and D4), where per-process partial
// sums would not.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "analysis/engine/fold.hpp"
#include "processes.hpp"

namespace waitlab::engine {
namespace {

const std::vector<std::uint64_t> kEvents = {1, 1, 1, 1, 1, 1, 1};  // a partition by location counts

double serial_sum(Location locations) {
  double sum = 0;
  for (Location l = 0; l < locations; ++l) sum += kValues[static_cast<std::size_t>(l)];
  return sum;
}

// What an MPI_Allreduce(MPI_SUM) of per-process partial sums would give: the order-dependent
// result the engine must not produce.
double partial_sums(int processes) {
  const Partition partition = Partition::balanced(kEvents, processes);
  double total = 0;
  for (int p = 0; p < processes; ++p) {
    double partial = 0;
    for (Location l = partition.range(p).first; l < partition.range(p).last; ++l) partial += kValues[static_cast<std::size_t>(l)];
    total += partial;
  }
  return total;
}

TEST(Fold, PartialSumsPerProcessWouldDependOnP) {
  EXPECT_EQ(serial_sum(7), 2.0);
  EXPECT_EQ(partial_sums(1), 2.0);
  EXPECT_EQ(partial_sums(2), 0.0);  // [0, 3) and [3, 7): 1e16 + (−1e16)
}

// Runs `fold` on every process count and seed; every process's result must carry the serial bits.
void expect_serial_bits(Location locations, const std::function<double(Transport&, LocationRange)>& fold) {
  const double expected = serial_sum(locations);
  const auto run = [&](Transport& t) {
    const auto events = std::span(kEvents).first(static_cast<std::size_t>(locations));
    return encode(fold(t, Partition::balanced(events, t.size()).range(t.self())));
  };
  EXPECT_EQ(bits(decode<double>(on_serial(run)[0])), bits(expected));
  for (int p : kProcessCounts)
    for (std::uint64_t seed : kSeeds)
      for (const Bytes& result : on_virtual(p, seed, run))
        EXPECT_EQ(bits(decode<double>(result)), bits(expected)) << locations << " locations, " << p << " processes, seed " << seed;
}

TEST(Fold, ChainedFoldGivesTheSerialSumForEveryProcessCount) {
  for (Location locations : {7, 5, 3})
    expect_serial_bits(locations, [](Transport& t, LocationRange owned) {
      return chained_fold(t, owned, 0.0, [](Location l, double& acc) { acc += kValues[static_cast<std::size_t>(l)]; });
    });
}

TEST(Fold, LocationOrderSumGivesTheSerialSumForEveryProcessCount) {
  for (Location locations : {7, 5, 3})
    expect_serial_bits(locations, [](Transport& t, LocationRange owned) {
      std::vector<double> mine;
      for (Location l = owned.first; l < owned.last; ++l) mine.push_back(kValues[static_cast<std::size_t>(l)]);
      return location_order_sum(t, owned, mine);
    });
}

// A vector accumulator continued term by term (as the critical path's time per call path is):
// location l adds its terms to cells l % 3 and (l + 1) % 3, so every cell sees a 1e16 and a −1e16.
TEST(Fold, ChainedFoldContinuesAVectorTermByTerm) {
  const auto serial = [] {
    std::vector<double> acc(3, 0.0);
    for (std::size_t l = 0; l < kValues.size(); ++l) {
      acc[l % 3] += kValues[l];
      acc[(l + 1) % 3] += 0.5 * kValues[l];
    }
    return acc;
  }();
  const auto run = [](Transport& t) {
    const LocationRange owned = Partition::balanced(kEvents, t.size()).range(t.self());
    return encode(chained_fold(t, owned, std::vector<double>(3, 0.0), [](Location l, std::vector<double>& acc) {
      const auto i = static_cast<std::size_t>(l);
      acc[i % 3] += kValues[i];
      acc[(i + 1) % 3] += 0.5 * kValues[i];
    }));
  };
  EXPECT_EQ(on_serial(run)[0], encode(serial));
  for (int p : kProcessCounts)
    for (std::uint64_t seed : kSeeds)
      for (const Bytes& result : on_virtual(p, seed, run)) EXPECT_EQ(result, encode(serial)) << p << " processes, seed " << seed;
}

TEST(Fold, GatherInLocationOrderHandsProcessZeroEveryLocation) {
  for (int p : kProcessCounts) {
    on_virtual(p, 3, [&](Transport& t) {
      const LocationRange owned = Partition::balanced(kEvents, t.size()).range(t.self());
      std::vector<Location> mine;
      for (Location l = owned.first; l < owned.last; ++l) mine.push_back(l * 10);
      const auto all = gather_in_location_order(t, owned, std::span<const Location>(mine));
      if (t.self() == 0) EXPECT_EQ(all, (std::vector<Location>{0, 10, 20, 30, 40, 50, 60})) << p;
      else EXPECT_TRUE(all.empty());
      return Bytes{};
    });
  }
}

}  // namespace
}  // namespace waitlab::engine
