// Fold: sums over locations give the serial loop's bits for P = 1, 2, 3, 4, 7 (and P > L) and
// every delivery order (analysis/engine/fold.hpp, rules D3 and D4), where per-process partial
// sums would not.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "analysis/engine/fold.hpp"
#include "fold_checks.hpp"
#include "processes.hpp"

namespace waitlab::engine {
namespace {

using namespace fold_checks;

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
void expect_serial_bits(Location locations, const Fold& fold) {
  const double expected = serial_sum(locations);
  const auto run = [&](Transport& t) { return fold_of(t, locations, fold); };
  EXPECT_EQ(bits(decode<double>(on_serial(run)[0])), bits(expected));
  for (int p : kProcessCounts)
    for (std::uint64_t seed : kSeeds)
      for (const Bytes& result : on_virtual(p, seed, run))
        EXPECT_EQ(bits(decode<double>(result)), bits(expected)) << locations << " locations, " << p << " processes, seed " << seed;
}

TEST(Fold, ChainedFoldGivesTheSerialSumForEveryProcessCount) {
  for (Location locations : {7, 5, 3}) expect_serial_bits(locations, chained_sum);
}

TEST(Fold, LocationOrderSumGivesTheSerialSumForEveryProcessCount) {
  for (Location locations : {7, 5, 3}) expect_serial_bits(locations, location_order_sum_of);
}

TEST(Fold, ChainedFoldContinuesAVectorTermByTerm) {
  const std::vector<double> serial = serial_vector_fold();
  EXPECT_EQ(on_serial(chained_vector_fold)[0], encode(serial));
  for (int p : kProcessCounts)
    for (std::uint64_t seed : kSeeds)
      for (const Bytes& result : on_virtual(p, seed, chained_vector_fold)) EXPECT_EQ(result, encode(serial)) << p << " processes, seed " << seed;
}

TEST(Fold, SerialMedianOfTheTestValues) {
  EXPECT_EQ(serial_median(0), 0.0);
  EXPECT_EQ(serial_median(1), 3.5);
  EXPECT_EQ(serial_median(2), 0.75);     // (3.5 + −2) / 2
  EXPECT_EQ(serial_median(5), 0.0);      // −2, ±0, ±0, 3.5, 1e300
  EXPECT_EQ(serial_median(9), 4.9e-324);  // −2, −1e-300, ±0, ±0, the subnormal, …
  EXPECT_EQ(serial_median(24), (0.125 + 2.5e-9) / 2);
}

// The spread median is the serial one, bit for bit (a zero as +0), for every count (odd, even,
// none), process count and delivery order.
TEST(Fold, MedianOfValuesSpreadOverTheProcessesIsTheSerialMedian) {
  for (std::size_t n = 0; n <= kMedianValues.size(); ++n) {
    const auto run = [&](Transport& t) { return encode(spread_median(t, n)); };
    EXPECT_EQ(bits(decode<double>(on_serial(run)[0])), bits(serial_median(n) + 0.0)) << n;
    for (int p : kProcessCounts)
      for (std::uint64_t seed : kSeeds)
        for (const Bytes& result : on_virtual(p, seed, run))
          EXPECT_EQ(bits(decode<double>(result)), bits(serial_median(n) + 0.0)) << n << " values, " << p << " processes, seed " << seed;
  }
}

TEST(Fold, GatherInLocationOrderHandsProcessZeroEveryLocation) {
  for (int p : kProcessCounts) {
    on_virtual(p, 3, [&](Transport& t) {
      expect_gathered_in_location_order(t);
      return Bytes{};
    });
  }
}

}  // namespace
}  // namespace waitlab::engine
