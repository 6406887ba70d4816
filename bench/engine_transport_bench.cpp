// The replay engine's exchange over Open MPI (analysis/engine/mpi): `mpirun -np P
// engine_transport_bench [ROUNDS]` runs, for several record sizes, ROUNDS exchange rounds in
// which each of 64 locations (balanced over the P processes) emits one record to every location,
// and prints, on process 0, what crossed between processes (parcels and bytes, summed over the
// processes, from MpiTransport::traffic: a process's parcels to itself not counted) and its
// rate in host seconds. Linked with
// wl_engine_mpi only: never with SimGrid (bench/CMakeLists.txt keeps it out of the glob).
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "analysis/engine/exchange.hpp"
#include "analysis/engine/mpi/mpi_transport.hpp"
#include "bench/bench_util.hpp"

namespace {

using waitlab::engine::Bytes;
using waitlab::engine::Location;

constexpr Location kLocations = 64;

void bench(waitlab::engine::MpiTransport& t, std::size_t record_bytes, int rounds) {
  const auto partition =
      waitlab::engine::Partition::balanced(std::vector<std::uint64_t>(kLocations, 1), t.size());
  const auto owned = partition.range(t.self());
  waitlab::engine::Exchange exchange(t, partition, 3);
  const Bytes payload(record_bytes, std::byte{0x5A});
  const waitlab::engine::MpiTraffic before = t.traffic();
  MPI_Barrier(MPI_COMM_WORLD);
  std::size_t received = 0;
  const double s = waitlab::bench::seconds([&] {
    for (int r = 0; r < rounds; ++r) {
      for (Location from = owned.first; from < owned.last; ++from)
        for (Location to = 0; to < kLocations; ++to)
          exchange.emit(from, to, static_cast<std::uint64_t>(r), payload);
      const auto inbox = exchange.deliver();
      for (Location l = owned.first; l < owned.last; ++l) received += inbox.of(l).size();
    }
    MPI_Barrier(MPI_COMM_WORLD);
  });
  std::uint64_t mine[2] = {t.traffic().parcels_sent - before.parcels_sent,
                           t.traffic().bytes_sent - before.bytes_sent};
  std::uint64_t all[2] = {0, 0};
  MPI_Reduce(mine, all, 2, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  if (received != static_cast<std::size_t>(rounds) * static_cast<std::size_t>(owned.size()) * kLocations)
    std::abort();
  if (t.self() == 0)
    std::printf(
        "%6zu B records  %6d rounds  %9.3f s  %10llu parcels  %12llu bytes  %10.0f parcels/s  %9.1f MB/s  "
        "%8.0f rounds/s\n",
        record_bytes, rounds, s, static_cast<unsigned long long>(all[0]),
        static_cast<unsigned long long>(all[1]), static_cast<double>(all[0]) / s,
        static_cast<double>(all[1]) / s / 1e6, rounds / s);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 200;
  {
    waitlab::engine::MpiTransport t;
    if (t.self() == 0)
      std::printf(
          "exchange over MpiTransport: %d processes, %d locations, every location to every location\n",
          t.size(), static_cast<int>(kLocations));
    for (std::size_t bytes : {8u, 64u, 512u, 4096u}) bench(t, bytes, bytes >= 4096 ? rounds / 4 : rounds);
  }
  MPI_Finalize();
  return 0;
}
