#include <mpi.h>
#include <stdio.h>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size; MPI_Comm_rank(MPI_COMM_WORLD, &rank); MPI_Comm_size(MPI_COMM_WORLD, &size);
  int a[64] = {0}, b[64 * 4] = {0}; int counts[4] = {1, 2, 3, 4}, displs[4] = {0, 1, 3, 6};
  int peer = rank ^ 1; MPI_Request r[2]; int flag, idx;
  MPI_Sendrecv(a, 3, MPI_INT, peer, 5, b, 4, MPI_INT, peer, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Isend(a, 2, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD, &r[0]);
  MPI_Irecv(b, 2, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD, &r[1]);
  MPI_Test(&r[0], &flag, MPI_STATUS_IGNORE);
  MPI_Wait(&r[1], MPI_STATUS_IGNORE);
  if (!flag) MPI_Wait(&r[0], MPI_STATUS_IGNORE);
  MPI_Irecv(b, 2, MPI_INT, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &r[1]);
  MPI_Issend(a, 2, MPI_INT, peer, 2, MPI_COMM_WORLD, &r[0]);
  MPI_Waitany(2, r, &idx, MPI_STATUS_IGNORE);
  MPI_Testany(2, r, &idx, &flag, MPI_STATUS_IGNORE);
  MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
  if (rank % 2 == 0) MPI_Ssend(a, 1, MPI_INT, peer, 9, MPI_COMM_WORLD); else MPI_Recv(b, 1, MPI_INT, MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Reduce(a, b, 5, MPI_INT, MPI_SUM, 1, MPI_COMM_WORLD);
  MPI_Gather(a, 2, MPI_INT, b, 2, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Scatter(b, 2, MPI_INT, a, 2, MPI_INT, 3, MPI_COMM_WORLD);
  MPI_Allgather(a, 2, MPI_INT, b, 2, MPI_INT, MPI_COMM_WORLD);
  MPI_Alltoall(a, 2, MPI_INT, b, 2, MPI_INT, MPI_COMM_WORLD);
  MPI_Gatherv(a, counts[rank], MPI_INT, b, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Scatterv(b, counts, displs, MPI_INT, a, counts[rank], MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Allgatherv(a, counts[rank], MPI_INT, b, counts, displs, MPI_INT, MPI_COMM_WORLD);
  {int c2[4]={2,2,2,2}, d2[4]={0,2,4,6}; MPI_Alltoallv(a, c2, d2, MPI_INT, b, c2, d2, MPI_INT, MPI_COMM_WORLD);}
  MPI_Reduce_scatter(b, a, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Scan(a, b, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Exscan(a, b, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Comm sub; MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &sub);
  MPI_Allreduce(a, b, 3, MPI_INT, MPI_SUM, sub);
  MPI_Comm dup; MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Barrier(dup);
  MPI_Iprobe(MPI_ANY_SOURCE, 77, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
  MPI_Request rz[2]; MPI_Isend(a, 1, MPI_INT, peer, 6, MPI_COMM_WORLD, &rz[0]); MPI_Irecv(b, 1, MPI_INT, peer, 6, MPI_COMM_WORLD, &rz[1]);
  int done = 0; while (!done) MPI_Testall(2, rz, &done, MPI_STATUSES_IGNORE);
  MPI_Finalize();
}
