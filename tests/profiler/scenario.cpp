// The MPI program of the profiler test (scenario.hpp says what it does). Built twice: linked
// with libwaitlab-profiler, and plain (run as is and with LD_PRELOAD). Its functions are
// exported (-rdynamic) and kept out of inlining and cloning, so that each MPI call site is
// the function named in scenario.hpp; app::shift_back is a C++ name, to be demangled.
#include "scenario.hpp"

#include <mpi.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <vector>

#if defined(__clang__)
#define CALL_SITE __attribute__((noinline))
#else
#define CALL_SITE __attribute__((noipa))
#endif

using namespace profiler_test;

namespace {

int rank = 0;
int ranks = 0;
std::uint64_t checksum = 0;  // of everything this rank received, in order

void mix(std::uint64_t v) {
  checksum = checksum * 1000003u + v;
}

void mix(const MPI_Status& st) {
  int count = 0;
  MPI_Get_count(&st, MPI_BYTE, &count);
  mix(static_cast<std::uint64_t>(st.MPI_SOURCE) * 7 + static_cast<std::uint64_t>(st.MPI_TAG) * 11 +
      static_cast<std::uint64_t>(count));
}

void sleep_ms(int ms) {
  timespec t{ms / 1000, static_cast<long>(ms % 1000) * 1000000L};
  while (nanosleep(&t, &t) != 0 && errno == EINTR) {
  }
}

int left() {
  return (rank + ranks - 1) % ranks;
}
int right() {
  return (rank + 1) % ranks;
}
std::uint64_t value(int it) {
  return static_cast<std::uint64_t>(rank) * 1000 + static_cast<std::uint64_t>(it);
}

}  // namespace

namespace app {

CALL_SITE void shift_back(int it) {
  std::uint64_t out = value(it), in = 0;
  MPI_Request recv, send;
  MPI_Irecv(&in, 1, MPI_UINT64_T, right(), 1, MPI_COMM_WORLD, &recv);
  MPI_Isend(&out, 1, MPI_UINT64_T, left(), 1, MPI_COMM_WORLD, &send);
  MPI_Status st;
  MPI_Wait(&recv, &st);
  MPI_Wait(&send, MPI_STATUS_IGNORE);
  mix(in);
  mix(st);
}

}  // namespace app

extern "C" {

CALL_SITE void swap_neighbours(int it) {
  std::uint64_t out = value(it) + 1, in = 0;
  MPI_Status st;
  MPI_Sendrecv(&out, 1, MPI_UINT64_T, right(), 2, &in, 1, MPI_UINT64_T, left(), 2, MPI_COMM_WORLD, &st);
  mix(in);
  mix(st);
}

CALL_SITE void ring_exchange(int it) {
  if (rank == 0 && it % 2 == 1) sleep_ms(kLateMs);
  std::uint64_t out = value(it) + 2, in = 0;
  MPI_Request reqs[2];
  MPI_Status st[2];
  MPI_Irecv(&in, 1, MPI_UINT64_T, left(), 3, MPI_COMM_WORLD, &reqs[0]);
  MPI_Isend(&out, 1, MPI_UINT64_T, right(), 3, MPI_COMM_WORLD, &reqs[1]);
  MPI_Waitall(2, reqs, st);
  mix(in);
  mix(st[0]);
}

CALL_SITE void pipeline(int it) {
  std::uint64_t v = value(it) + 3;
  if (rank > 0) {
    MPI_Status st;
    MPI_Recv(&v, 1, MPI_UINT64_T, rank - 1, 4, MPI_COMM_WORLD, &st);
    mix(st);
    v += static_cast<std::uint64_t>(rank);
  }
  if (rank + 2 == ranks)
    MPI_Ssend(&v, 1, MPI_UINT64_T, rank + 1, 4, MPI_COMM_WORLD);
  else if (rank + 1 < ranks)
    MPI_Send(&v, 1, MPI_UINT64_T, rank + 1, 4, MPI_COMM_WORLD);
  mix(v);
}

CALL_SITE void broadcast_params(int it) {
  if (rank == 0 && it % 2 == 1) sleep_ms(kRootMs);
  std::uint64_t params[3] = {value(it), value(it) * 3, 42};
  MPI_Bcast(params, 3, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  for (const auto p : params) mix(p);
}

CALL_SITE void reduce_results(int it) {
  if (rank == ranks - 1 && it % 2 == 1) sleep_ms(kRootMs);
  const std::uint64_t mine = value(it) ^ checksum;
  std::uint64_t total = 0;
  MPI_Reduce(&mine, &total, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  mix(total);
}

CALL_SITE void final_collectives() {
  const std::uint64_t mine = checksum % 997 + static_cast<std::uint64_t>(rank);
  std::vector<std::uint64_t> all(static_cast<std::size_t>(ranks)), back(static_cast<std::size_t>(ranks));
  MPI_Gather(&mine, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  std::uint64_t piece = 0;
  MPI_Scatter(all.data(), 1, MPI_UINT64_T, &piece, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  mix(piece);
  all[static_cast<std::size_t>(rank)] = piece * 5;
  MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD);
  MPI_Alltoall(all.data(), 1, MPI_UINT64_T, back.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD);
  for (const auto v : back) mix(v);
  std::vector<int> counts(static_cast<std::size_t>(ranks), 1);
  MPI_Reduce_scatter(back.data(), &piece, counts.data(), MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  mix(piece);
  std::uint64_t prefix = 0;
  MPI_Scan(&mine, &prefix, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  mix(prefix);
  prefix = 0;  // MPI_Exscan leaves rank 0's result undefined
  MPI_Exscan(&mine, &prefix, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  if (rank > 0) mix(prefix);
}

CALL_SITE void split_sum() {
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  const std::uint64_t mine = value(7);
  std::uint64_t sum = 0;
  MPI_Allreduce(&mine, &sum, 1, MPI_UINT64_T, MPI_SUM, half);
  mix(sum);
  MPI_Comm_free(&half);
}

CALL_SITE void dup_sum() {
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  const std::uint64_t mine = value(8);
  std::uint64_t sum = 0;
  MPI_Allreduce(&mine, &sum, 1, MPI_UINT64_T, MPI_SUM, dup);
  mix(sum);
  MPI_Comm_free(&dup);
}

}  // extern "C"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (ranks != kRanks) {
    if (rank == 0) std::fprintf(stderr, "the profiler scenario needs %d ranks, got %d\n", kRanks, ranks);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  for (int it = 0; it < kIterations; ++it) {
    app::shift_back(it);
    swap_neighbours(it);
    sleep_ms(rank * kComputeMs);
    const std::uint64_t mine = value(it);
    std::uint64_t sum = 0;
    MPI_Allreduce(&mine, &sum, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    mix(sum);
    ring_exchange(it);
    pipeline(it);
    broadcast_params(it);
    reduce_results(it);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  final_collectives();
  split_sum();
  dup_sum();
  std::uint64_t total = 0;
  MPI_Reduce(&checksum, &total, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) std::printf("checksum %llu\n", static_cast<unsigned long long>(total));
  MPI_Finalize();
  return 0;
}
