/* LULESH's exchange pattern, compiled with smpicc by tests/app/test_smpi_replay.cpp and traced
 * with `smpirun -trace-ti`: 16 ranks on a 4x4 grid exchange with their up to 8 neighbours in
 * two phases per iteration, each posting its MPI_Irecvs, then its MPI_Isends, then
 * MPI_Waitall on its *sends only* — the array holds MPI_REQUEST_NULL where a boundary rank has
 * no neighbour, as LULESH's does — and completing its receives later with one MPI_Wait each:
 * phase B's receives stay pending across phase A's waitall (as LULESH's position/velocity
 * receives across its MONOQ exchange). Compute is rank-dependent, so receives arrive late.
 * With -DWAITALL_ALL each MPI_Waitall takes the phase's receives too (no MPI_Wait follows): a
 * trace SimGrid's own replayer can replay. Each rank prints its end time (run with
 * --cfg=smpi/wtime:0 so that MPI_Wtime costs nothing). */
#include <mpi.h>
#include <smpi/smpi.h>
#include <stdio.h>

#define N 8
/* Directions 0, 2, 5, 7 are corners (k and N-1-k are opposite directions). */
#define COUNT(k) (((k) == 0 || (k) == 2 || (k) == 5 || (k) == 7) ? 20000 : 1000)
#ifdef WAITALL_ALL
#define WAITALL_COUNT (2 * N)
#else
#define WAITALL_COUNT N
#endif

static double sbuf[2][N][20000], rbuf[2][N][20000];

/* Posts the phase's receives into req[N..2N-1] (tags base + direction as the sender sees it). */
static void post_recvs(int phase, const int* peer, int base, MPI_Request* req) {
  for (int k = 0; k < N; ++k) {
    req[N + k] = MPI_REQUEST_NULL;
    if (peer[k] >= 0)
      MPI_Irecv(rbuf[phase][k], COUNT(k), MPI_DOUBLE, peer[k], base + (N - 1 - k), MPI_COMM_WORLD, &req[N + k]);
  }
}
/* Posts the phase's sends into req[0..N-1], then waits for them (WAITALL_COUNT requests). */
static void send_and_waitall(int phase, const int* peer, int base, MPI_Request* req) {
  for (int k = 0; k < N; ++k) {
    req[k] = MPI_REQUEST_NULL;
    if (peer[k] >= 0) MPI_Isend(sbuf[phase][k], COUNT(k), MPI_DOUBLE, peer[k], base + k, MPI_COMM_WORLD, &req[k]);
  }
  MPI_Waitall(WAITALL_COUNT, req, MPI_STATUSES_IGNORE);
}
static void wait_recvs(MPI_Request* req) {
  for (int k = 0; k < N; ++k)
    if (req[N + k] != MPI_REQUEST_NULL) MPI_Wait(&req[N + k], MPI_STATUS_IGNORE);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int side = 4, x = rank % side, y = rank / side;
  int peer[N], k = 0;
  for (int dy = -1; dy <= 1; ++dy)
    for (int dx = -1; dx <= 1; ++dx) {
      if (dx == 0 && dy == 0) continue;
      const int nx = x + dx, ny = y + dy;
      peer[k++] = (nx < 0 || ny < 0 || nx >= side || ny >= side) ? -1 : ny * side + nx;
    }
  for (int it = 0; it < 5; ++it) {
    MPI_Request a[2 * N], b[2 * N];
    post_recvs(1, peer, 30, b);
    smpi_execute_flops(5e4 * (1 + (rank * 5 + it) % 3));
    send_and_waitall(1, peer, 30, b);
    post_recvs(0, peer, 10, a);
    smpi_execute_flops(1e5 * (1 + (rank * 7 + it) % 5));
    send_and_waitall(0, peer, 10, a);
    smpi_execute_flops(2e5 * (1 + (rank * 3) % 4));
    wait_recvs(a);
    smpi_execute_flops(1e5);
    wait_recvs(b);
    MPI_Allreduce(MPI_IN_PLACE, sbuf[0][0], 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  }
  printf("rank %d ends at %.17g\n", rank, MPI_Wtime());
  MPI_Finalize();
  return 0;
}
