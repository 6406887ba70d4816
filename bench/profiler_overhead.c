/* The MPI micro-benchmarks of bench/profiler_overhead.sh: libwaitlab-profiler's cost per call.
 *
 *   profiler_overhead MODE ITERATIONS REPETITIONS
 *
 *   pingpong       2 ranks, 8 B: rank 0 MPI_Send, rank 1 MPI_Recv + MPI_Send, rank 0 MPI_Recv
 *                  (4 calls per round trip, one after the other)
 *   pingpong-wait  the same with the receives as MPI_Irecv + MPI_Wait, so that the test at
 *                  entry of MPI_Wait (WAITLAB_PROFILER_TEST) is on the round trip
 *                  (5 calls per round trip: rank 1 posts its MPI_Irecv off the path)
 *   allreduce      any number of ranks, MPI_Allreduce of one double (8 B)
 *
 * Rank 0 prints "MODE ns_per_iteration calls_per_iteration": the fastest of REPETITIONS runs
 * of ITERATIONS iterations (the minimum is the least disturbed by the rest of the machine),
 * and the number of MPI calls whose costs add up in one iteration. Plain C and MPI: the
 * script runs the same binary with and without the profiler preloaded. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void pingpong(int rank, long iterations, int with_wait) {
  double buf = 1.0;
  const int peer = 1 - rank;
  MPI_Request req;
  for (long i = 0; i < iterations; ++i) {
    if (rank == 0) {
      if (with_wait) MPI_Irecv(&buf, 1, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD, &req);
      MPI_Send(&buf, 1, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD);
      if (with_wait)
        MPI_Wait(&req, MPI_STATUS_IGNORE);
      else
        MPI_Recv(&buf, 1, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      if (with_wait) {
        MPI_Irecv(&buf, 1, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(&buf, 1, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
      MPI_Send(&buf, 1, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD);
    }
  }
}

static void allreduce(long iterations) {
  double in = 1.0, out = 0.0;
  for (long i = 0; i < iterations; ++i) MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const char* mode = argc == 4 ? argv[1] : "";
  const long iterations = argc == 4 ? atol(argv[2]) : 0;
  const int repetitions = argc == 4 ? atoi(argv[3]) : 0;
  const int is_pingpong = strcmp(mode, "pingpong") == 0, is_wait = strcmp(mode, "pingpong-wait") == 0;
  const int is_allreduce = strcmp(mode, "allreduce") == 0;
  if (iterations <= 0 || repetitions <= 0 || !(is_pingpong || is_wait || is_allreduce) ||
      ((is_pingpong || is_wait) && ranks != 2)) {
    if (rank == 0)
      fprintf(stderr,
              "usage: profiler_overhead pingpong|pingpong-wait|allreduce ITERATIONS REPETITIONS "
              "(the ping-pongs on 2 ranks)\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  double best = -1;
  for (int r = 0; r < repetitions; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    if (is_allreduce)
      allreduce(iterations);
    else
      pingpong(rank, iterations, is_wait);
    const double t = (MPI_Wtime() - t0) / (double)iterations;
    if (best < 0 || t < best) best = t;
  }
  if (rank == 0) printf("%s %.1f %d\n", mode, best * 1e9, is_allreduce ? 1 : is_wait ? 5 : 4);
  MPI_Finalize();
  return 0;
}
