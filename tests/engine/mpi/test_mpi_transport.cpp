// MpiTransport (analysis/engine/mpi/mpi_transport.hpp) under mpiexec, on as many processes as
// the job has (ctest runs it on 1, 2, 3, 4 and 7): the Transport's promises checked by the same
// code as the virtual transport's (transport_checks.hpp, exchange_checks.hpp, fold_checks.hpp,
// shard_checks.hpp, clock_checks.hpp); parcels of a megabyte and more flushed by every process at once and then
// received (no deadlock, bytes intact); the native collectives bit for bit equal to the default
// forms (NaN, signed zeros, infinities, wrap-around); the traffic counters exact; and the
// sharded matching of the random and Score-P test traces equal to Matching::build; clock
// correction on shards equal to the one-process correction, in every mode; the causal forward
// replay of random declarations (causal_checks.hpp) equal to its one-process run; and
// abort() (a disabled test ctest runs alone: it ends the job). Every
// process runs every test, in the same order (they are collective); a process other than 0
// prints its failures only.
#include <gtest/gtest.h>
#include <mpi.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "analysis/engine/mpi/mpi_transport.hpp"
#include "analysis/engine/serial_transport.hpp"
#include "analysis/trace/trace_io.hpp"
#include "causal_checks.hpp"
#include "clock_checks.hpp"
#include "exchange_checks.hpp"
#include "fold_checks.hpp"
#include "shard_checks.hpp"
#include "transport_checks.hpp"

namespace waitlab::engine {
namespace {

// Parcel bytes that name their sender, receiver and position (so a mix-up or a torn parcel shows).
Bytes pattern(int from, int to, std::size_t n) {
  Bytes b(n);
  for (std::size_t i = 0; i < n; ++i)
    b[i] = static_cast<std::byte>((i * 31 + static_cast<std::size_t>(from * 7 + to)) % 251);
  return b;
}
std::size_t big(int from) {
  return (std::size_t{1} << 20) + static_cast<std::size_t>(from) * 4099;
}

TEST(MpiTransport, IsTheCommunicatorsProcess) {
  MpiTransport t;
  int size = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  EXPECT_EQ(t.size(), size);
  EXPECT_EQ(t.self(), rank);
}

TEST(MpiTransport, CollectivesAreExact) {
  MpiTransport t;
  expect_exact_collectives(t);
}

TEST(MpiTransport, KeepsEachSourcesOrder) {
  MpiTransport t;
  const std::vector<int> order = arrivals_in_source_order(t);
  EXPECT_EQ(order.size(), t.self() == 0 ? 3u * static_cast<std::size_t>(t.size() - 1) : 0u);
}

// Every process posts a parcel of over a megabyte (in two posts) to every process, itself
// included, and an empty one on another channel, flushes, and only then receives: nothing
// waits for a receiver, so nothing deadlocks, and every parcel arrives whole. Two rounds, on
// channels of their own: a process done with round 0 already sends round 1's parcels, which a
// receive from any source on round 0's channel must not take.
TEST(MpiTransport, EveryProcessFlushesThenReceivesLargeAndEmptyParcels) {
  MpiTransport t;
  const int me = t.self();
  for (int round = 0; round < 2; ++round) {
    const auto data = static_cast<Channel>(5 + 2 * round), empty = static_cast<Channel>(6 + 2 * round);
    for (int d = 0; d < t.size(); ++d) {
      const Bytes all = pattern(me, d + 100 * round, big(me));
      t.post(d, data, std::span(all).first(1000));
      t.post(d, data, std::span(all).subspan(1000));
      t.post(d, empty, {});
    }
    t.flush();
    std::vector<int> seen(static_cast<std::size_t>(t.size()), 0);
    for (int n = 0; n < t.size(); ++n) {
      // Round 0 takes them as they come, round 1 source by source.
      const Parcel p = round == 0 ? t.receive(data) : t.receive(data, n);
      ASSERT_GE(p.source, 0);
      ASSERT_LT(p.source, t.size());
      ++seen[static_cast<std::size_t>(p.source)];
      EXPECT_EQ(p.bytes, pattern(p.source, me + 100 * round, big(p.source))) << "from " << p.source;
    }
    for (int s = 0; s < t.size(); ++s) {
      EXPECT_EQ(seen[static_cast<std::size_t>(s)], 1) << "parcels from " << s;
      const Parcel p = t.receive(empty, s);
      EXPECT_EQ(p.source, s);
      EXPECT_TRUE(p.bytes.empty());
    }
  }
}

TEST(MpiTransport, RefusesWhatNoProcessOrChannelCanTake) {
  MpiTransport t;
  EXPECT_THROW(t.post(t.size(), 5, {}), std::invalid_argument);
  EXPECT_THROW(t.post(-1, 5, {}), std::invalid_argument);
  EXPECT_THROW(t.post(0, kFirstReservedChannel, {}), std::invalid_argument);
  EXPECT_THROW(t.receive(5, t.size()), std::invalid_argument);
  EXPECT_THROW(t.receive(5, -1), std::invalid_argument);
}

// The native collectives against the base class's default forms, run on the same transport:
// the same bits for values where MPI_MIN, MPI_MAX or MPI_MAXLOC could differ.
TEST(MpiTransport, NativeCollectivesEqualTheDefaultForms) {
  MpiTransport t;
  const int me = t.self();
  const double inf = std::numeric_limits<double>::infinity();
  const double payload_nan = -std::bit_cast<double>(std::uint64_t{0x7FF8'0000'0000'0123});
  const double denormal = std::numeric_limits<double>::denorm_min();
  const std::vector<std::vector<double>> rounds = {
      {0.0, -0.0},     {-0.0, 0.0}, {1.0, payload_nan, 2.0}, {inf, -inf}, {denormal, -denormal, 0.0},
      {3.0, 3.0, -1.0}};
  for (std::size_t r = 0; r < rounds.size(); ++r) {
    const double v = rounds[r][static_cast<std::size_t>(me) % rounds[r].size()];
    const double native_min = t.min(v), native_max = t.max(v);
    EXPECT_EQ(bits(native_min), bits(t.Transport::min(v))) << "round " << r;
    EXPECT_EQ(bits(native_max), bits(t.Transport::max(v))) << "round " << r;
    const MaxLoc mine{v, 50 - me};
    const MaxLoc native = t.maxloc(mine), fallback = t.Transport::maxloc(mine);
    EXPECT_EQ(bits(native.value), bits(fallback.value)) << "round " << r;
    EXPECT_EQ(native.location, fallback.location) << "round " << r;
  }
  const std::uint64_t near_wrap =
      std::numeric_limits<std::uint64_t>::max() - 2 + static_cast<std::uint64_t>(me);
  EXPECT_EQ(t.sum(near_wrap), t.Transport::sum(near_wrap));
  const Bytes mine = pattern(me, 0, static_cast<std::size_t>(me) * 1000);
  EXPECT_EQ(t.gather(mine), t.Transport::gather(mine));
  const Bytes root = pattern(0, 0, 70000);
  EXPECT_EQ(t.broadcast(me == 0 ? root : Bytes{}), root);
  EXPECT_EQ(t.Transport::broadcast(me == 0 ? root : Bytes{}), root);
}

// What crossed: one parcel per flushed buffer with exactly its bytes, each way, the one to
// itself apart; a native collective counted once with the bytes this process gave it.
TEST(MpiTransport, CountsWhatItSendsAndReceives) {
  MpiTransport t;
  const int p = t.size(), me = t.self();
  for (int d = 0; d < p; ++d) t.post(d, 9, Bytes(static_cast<std::size_t>(d + 1)));
  t.flush();
  for (int s = 0; s < p; ++s) EXPECT_EQ(t.receive(9, s).bytes.size(), static_cast<std::size_t>(me + 1));
  const auto n = static_cast<std::uint64_t>(p), mine = static_cast<std::uint64_t>(me + 1);
  EXPECT_EQ(t.traffic().parcels_sent, n - 1);
  EXPECT_EQ(t.traffic().bytes_sent, n * (n + 1) / 2 - mine);
  EXPECT_EQ(t.traffic().parcels_received, n - 1);
  EXPECT_EQ(t.traffic().bytes_received, (n - 1) * mine);
  EXPECT_EQ(t.traffic().parcels_to_self, 1u);
  EXPECT_EQ(t.traffic().bytes_to_self, mine);
  EXPECT_EQ(t.traffic().collectives, 0u);
  (void)t.sum(1);
  EXPECT_EQ(t.traffic().collectives, 1u);
  EXPECT_EQ(t.traffic().collective_bytes, 8u);
}

TEST(MpiExchange, LocationsReceiveTheSerialBytes) {
  MpiTransport t;
  for (Location locations : {7, 3}) {
    const Bytes serial =
        on_serial([&](Transport& s) { return exchange_checks::exchange_round(s, locations); })[0];
    const Bytes mine = exchange_checks::exchange_round(t, locations);
    if (t.self() == 0) {
      EXPECT_EQ(mine, serial) << locations << " locations";
    }
  }
}

TEST(MpiExchange, InboxIsSortedBySourceThenKey) {
  MpiTransport t;
  exchange_checks::expect_sorted_inbox(t);
}

TEST(MpiExchange, ReceivedValuesSumInSourceOrder) {
  MpiTransport t;
  double serial = 0;
  for (double v : kValues) serial += v;
  exchange_checks::expect_sum_in_source_order(t, serial, std::to_string(t.size()) + " processes");
}

TEST(MpiExchange, RoundsOnOneChannelDoNotMix) {
  MpiTransport t;
  exchange_checks::expect_rounds_apart(t, std::to_string(t.size()) + " processes");
}

TEST(MpiFold, SumsGiveTheSerialBits) {
  MpiTransport t;
  for (Location locations : {7, 5, 3})
    for (const fold_checks::Fold& fold :
         {fold_checks::Fold(fold_checks::chained_sum), fold_checks::Fold(fold_checks::location_order_sum_of)})
      EXPECT_EQ(bits(decode<double>(fold_checks::fold_of(t, locations, fold))),
                bits(fold_checks::serial_sum(locations)))
          << locations << " locations";
  EXPECT_EQ(fold_checks::chained_vector_fold(t), encode(fold_checks::serial_vector_fold()));
  fold_checks::expect_gathered_in_location_order(t);
  for (std::size_t n = 0; n <= fold_checks::kMedianValues.size(); n += 5)
    EXPECT_EQ(bits(fold_checks::spread_median(t, n)), bits(fold_checks::serial_median(n) + 0.0)) << n << " values";
}

// Each process matches its shard and compares it with the serial matching of the whole trace;
// the owned locations, summed over the processes, are every location once.
void expect_sharded_as_serial(Transport& t, const trace::Trace& tr, const std::string& name) {
  const trace::Matching serial = trace::Matching::build(tr);
  const Location owned = shard_checks::expect_shard_as_serial(
      t, tr, serial, name + ", " + std::to_string(t.size()) + " processes");
  EXPECT_EQ(t.sum(static_cast<std::uint64_t>(owned)), tr.ranks()) << name;
}

TEST(MpiShardMatching, RandomTracesMatchAsSerial) {
  MpiTransport t;
  for (std::uint64_t seed : {1u, 2u, 3u, 99u})
    for (trace::Rank locations : {1, 5, 9})
      expect_sharded_as_serial(t, shard_checks::random_trace(locations, seed),
                               std::to_string(locations) + " locations, trace seed " + std::to_string(seed));
}

TEST(MpiShardMatching, ScorePTracesMatchAsSerial) {
  MpiTransport t;
  const std::filesystem::path data = std::filesystem::path(WAITLAB_SOURCE_DIR) / "tests/data/scorep";
  for (const char* name : {"ping-pong-otf2", "npb-is.W.16"})
    expect_sharded_as_serial(t, trace::read_trace((data / name / "traces.otf2").string()), name);
}

// Each process corrects its shard of skewed random traces and of a Score-P trace in every mode and
// compares it with the one-process correction of the whole trace (clock_checks.hpp).
TEST(MpiClock, ShardsAreCorrectedAsByOneProcessInEveryMode) {
  MpiTransport t;
  using Mode = trace::ClockOptions::Mode;
  std::vector<std::pair<std::string, trace::Trace>> traces;
  for (std::uint64_t seed : {1u, 3u})
    for (trace::Rank locations : {5, 9})
      traces.emplace_back(std::to_string(locations) + " locations, trace seed " + std::to_string(seed),
                          clock_checks::skewed(shard_checks::random_trace(locations, seed), seed + 5, 1.0));
  const std::filesystem::path data = std::filesystem::path(WAITLAB_SOURCE_DIR) / "tests/data/scorep";
  traces.emplace_back("npb-is.W.16", trace::read_trace((data / "npb-is.W.16" / "traces.otf2").string()));
  for (const auto& [name, tr] : traces)
    for (Mode mode : {Mode::Auto, Mode::None, Mode::Linear, Mode::Clamp, Mode::LinearAndClamp, Mode::Clc}) {
      trace::ClockOptions options;
      options.mode = mode;
      trace::Trace serial = tr;
      const trace::ClockReport expected = trace::correct_clocks(serial, options);
      clock_checks::expect_shard_as_serial(t, tr, serial, expected, options,
                                           name + ", mode " + trace::clock_mode_name(mode),
                                           std::to_string(t.size()) + " processes");
    }
}

// Every process replays its part of random declarations, with and without cycles, under both
// rules; process 0 compares the joined values and let-goes with the one-process run's bits.
TEST(MpiCausal, RandomDeclarationsGiveTheOneProcessValues) {
  MpiTransport t;
  for (std::uint64_t seed = 1; seed <= 25; ++seed)
    for (const bool acyclic : {true, false})
      for (const LetGo rule : {LetGo::Blocked, LetGo::Event}) {
        causal_checks::Graph g = causal_checks::random_graph(seed, acyclic);
        g.rule = rule;
        const std::vector<Bytes> parts = t.gather(causal_checks::replay(t, g));
        if (t.self() != 0) continue;
        SerialTransport one;
        EXPECT_EQ(causal_checks::bits_of(causal_checks::joined(parts)),
                  causal_checks::bits_of(decode<causal_checks::Result>(causal_checks::replay(one, g))))
            << "seed " << seed << (acyclic ? ", acyclic" : ", cycles") << ", " << t.size() << " processes";
      }
}

// abort() ends every process, the others waiting for a parcel that never comes, and the job
// exits with the code. Disabled: it ends the program; ctest's engine_mpi.abort runs it alone.
TEST(MpiAbort, DISABLED_EndsEveryProcessWithItsCode) {
  MpiTransport t;
  ASSERT_EQ(t.size(), 3) << "engine_mpi.abort runs it on 3 processes";
  if (t.self() == t.size() - 1) t.abort(3);  // ends the job: the test below never finishes
  const Parcel stray = t.receive(5);
  FAIL() << "process " << t.self() << " received " << stray.bytes.size() << " bytes nobody sent";
}

// On processes other than 0: each failure, named by process (process 0 prints as usual).
class FailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit FailurePrinter(int process) : process_(process) {}
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::cerr << "[process " << process_ << "] " << (result.file_name() ? result.file_name() : "?") << ":"
              << result.line_number() << ": failure\n"
              << result.message() << '\n';
  }

 private:
  int process_;
};

}  // namespace
}  // namespace waitlab::engine

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new waitlab::engine::FailurePrinter(rank));
  }
  const int failed = RUN_ALL_TESTS();
  MPI_Finalize();
  return failed;
}
