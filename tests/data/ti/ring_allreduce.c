/* A ring and an allreduce loop, compiled with smpicc by tests/app/test_smpi_replay.cpp and
 * traced with `smpirun -trace-ti`: blocking ring passes (8 KiB), a non-blocking exchange with
 * both neighbours, rank-dependent compute, MPI_Allreduce, MPI_Bcast and MPI_Barrier. */
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  static double buf[1024], halo[2][128], red[128], out[128];
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  for (int it = 0; it < 10; ++it) {
    if (rank == 0) {
      MPI_Send(buf, 1024, MPI_DOUBLE, next, 7, MPI_COMM_WORLD);
      MPI_Recv(buf, 1024, MPI_DOUBLE, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buf, 1024, MPI_DOUBLE, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf, 1024, MPI_DOUBLE, next, 7, MPI_COMM_WORLD);
    }
    volatile double x = 0;
    for (int i = 0; i < 20000 * (rank % 4 + 1); ++i) x += i * 1e-9;
    buf[0] = x;
    MPI_Request rq[4];
    MPI_Irecv(halo[0], 128, MPI_DOUBLE, prev, 3, MPI_COMM_WORLD, &rq[0]);
    MPI_Irecv(halo[1], 128, MPI_DOUBLE, next, 4, MPI_COMM_WORLD, &rq[1]);
    MPI_Isend(buf, 128, MPI_DOUBLE, next, 3, MPI_COMM_WORLD, &rq[2]);
    MPI_Isend(buf, 128, MPI_DOUBLE, prev, 4, MPI_COMM_WORLD, &rq[3]);
    MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
    MPI_Allreduce(red, out, 128, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (it % 3 == 0) MPI_Bcast(out, 16, MPI_DOUBLE, 2, MPI_COMM_WORLD);
    if (it % 5 == 0) MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
