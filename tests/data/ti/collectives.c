/* Collectives whose algorithm or counts matter, compiled with smpicc by
 * tests/app/test_smpi_replay.cpp and traced with `smpirun -trace-ti`. The first argument picks
 * the program:
 *   alltoall   MPI_Alltoall of 1, 4 and 16 KiB per pair, rank-dependent compute between;
 *   alltoallv  MPI_Alltoallv with uneven counts: rank i sends ((i * j) % 7 + 1) KiB to rank j
 *              (as doubles), three times, rank-dependent compute between;
 *   vcoll      MPI_Gatherv (root 1), MPI_Allgatherv and MPI_Scatterv (root 2) with rank j's block
 *              (j % 5 + 1) KiB, and MPI_Reduce_scatter with blocks ((j % 3) + 1) KiB. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

static void work(int rank, int it) {
  volatile double x = 0;
  for (int i = 0; i < 20000 * ((rank + it) % 4 + 1); ++i) x += i * 1e-9;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* what = argc > 1 ? argv[1] : "alltoall";
  const int kib = 128; /* doubles per KiB */
  int* scounts = malloc(sizeof(int) * (size_t)size);
  int* rcounts = malloc(sizeof(int) * (size_t)size);
  int* sdispls = malloc(sizeof(int) * (size_t)size);
  int* rdispls = malloc(sizeof(int) * (size_t)size);
  double* sbuf = calloc((size_t)size * 16 * kib, sizeof(double));
  double* rbuf = calloc((size_t)size * 16 * kib, sizeof(double));
  if (strcmp(what, "alltoall") == 0) {
    const int sizes[3] = {1, 4, 16};
    for (int it = 0; it < 6; ++it) {
      work(rank, it);
      MPI_Alltoall(sbuf, sizes[it % 3] * kib, MPI_DOUBLE, rbuf, sizes[it % 3] * kib, MPI_DOUBLE, MPI_COMM_WORLD);
    }
  } else if (strcmp(what, "alltoallv") == 0) {
    int st = 0, rt = 0;
    for (int j = 0; j < size; ++j) {
      scounts[j] = ((rank * j) % 7 + 1) * kib;
      rcounts[j] = ((j * rank) % 7 + 1) * kib;
      sdispls[j] = st;
      rdispls[j] = rt;
      st += scounts[j];
      rt += rcounts[j];
    }
    for (int it = 0; it < 3; ++it) {
      work(rank, it);
      MPI_Alltoallv(sbuf, scounts, sdispls, MPI_DOUBLE, rbuf, rcounts, rdispls, MPI_DOUBLE, MPI_COMM_WORLD);
    }
  } else {
    int t = 0;
    for (int j = 0; j < size; ++j) {
      rcounts[j] = (j % 5 + 1) * kib;
      rdispls[j] = t;
      t += rcounts[j];
    }
    const int mine = (rank % 5 + 1) * kib;
    work(rank, 0);
    MPI_Gatherv(sbuf, mine, MPI_DOUBLE, rbuf, rcounts, rdispls, MPI_DOUBLE, 1, MPI_COMM_WORLD);
    work(rank, 1);
    MPI_Allgatherv(sbuf, mine, MPI_DOUBLE, rbuf, rcounts, rdispls, MPI_DOUBLE, MPI_COMM_WORLD);
    work(rank, 2);
    MPI_Scatterv(sbuf, rcounts, rdispls, MPI_DOUBLE, rbuf, mine, MPI_DOUBLE, 2, MPI_COMM_WORLD);
    work(rank, 3);
    for (int j = 0; j < size; ++j) scounts[j] = (j % 3 + 1) * kib;
    MPI_Reduce_scatter(sbuf, rbuf, scounts, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    work(rank, 4);
  }
  free(scounts);
  free(rcounts);
  free(sdispls);
  free(rdispls);
  free(sbuf);
  free(rbuf);
  MPI_Finalize();
  return 0;
}
