/* lulesh.c — mimics the communication of LULESH 2.0 (LLNL's shock-hydrodynamics proxy app,
 * `lulesh-comm.cc`) on a cube of P = n^3 ranks, each owning s^3 elements ((s+1)^3 nodes).
 * LULESH's exchanges (CommRecv / CommSend / CommSBN) are condensed into one per iteration:
 *   CommRecv: MPI_Irecv from each of the 26 neighbours — faces (s+1)^2, edges (s+1),
 *     corners 1 node, times FIELDS doubles (3: the nodal forces fx, fy, fz);
 *   compute (the element stresses and hourglass forces);
 *   CommSend: MPI_Isend to each neighbour, then MPI_Waitall(26, sendRequest) over the *sends
 *     only* — a boundary rank keeps MPI_REQUEST_NULL for a missing neighbour, so the count
 *     stays 26;
 *   compute; CommSBN: MPI_Wait on each receive in turn (skipping the null ones), then the
 *     nodal update; TimeIncrement: MPI_Allreduce(MPI_MIN) of the new dt.
 * A trace of this MPI_Waitall over sends only ends in `wait` records for receives the
 * waitall never saw, which SimGrid 3.32's own replayer cannot replay (it aborts with "action
 * wait not preceded by any irecv or isend"; see tests/data/ti/lulesh_waitall.c). Compiled
 * with -DWAITALL_ALL, the waitall takes all 52 requests and no MPI_Wait follows: a variant
 * `smpirun -replay` can replay. Compute is injected with smpi_execute_flops() (traced as
 * `compute N` records under --cfg=smpi/simulate-computation:no), slightly rank-dependent so
 * that messages arrive late.
 *
 * usage: lulesh [ITERATIONS=20] [S=30] [FIELDS=3] [FLOPS_PER_ELEMENT=1000] */
#include <mpi.h>
#include <smpi/smpi.h>
#include <stdio.h>
#include <stdlib.h>

#define NB 26

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int iters = argc > 1 ? atoi(argv[1]) : 20;
  const int s = argc > 2 ? atoi(argv[2]) : 30;
  const int fields = argc > 3 ? atoi(argv[3]) : 3;
  const double fpe = argc > 4 ? atof(argv[4]) : 1000;
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int n = 1;
  while ((n + 1) * (n + 1) * (n + 1) <= size) ++n;
  if (n * n * n != size) {
    if (rank == 0) fprintf(stderr, "lulesh: the number of ranks must be a cube\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const int x = rank % n, y = rank / n % n, z = rank / (n * n);
  /* The 26 directions in (dz, dy, dx) order: direction k and 25 - k are opposite. */
  int peer[NB], count[NB], k = 0, maxcount = 0;
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        if (dx == 0 && dy == 0 && dz == 0) continue;
        const int nx = x + dx, ny = y + dy, nz = z + dz, zeros = (dx == 0) + (dy == 0) + (dz == 0);
        const int inside = nx >= 0 && ny >= 0 && nz >= 0 && nx < n && ny < n && nz < n;
        peer[k] = inside ? (nz * n + ny) * n + nx : -1;
        count[k] = fields * (zeros == 2 ? (s + 1) * (s + 1) : zeros == 1 ? s + 1 : 1); /* face, edge, corner */
        if (count[k] > maxcount) maxcount = count[k];
        ++k;
      }
  double* sbuf = calloc((size_t)NB * maxcount, sizeof(double));
  double* rbuf = calloc((size_t)NB * maxcount, sizeof(double));
  MPI_Request req[2 * NB]; /* sends in 0..25, receives in 26..51 */
  const double elems = (double)s * s * s;

  for (int it = 0; it < iters; ++it) {
    for (k = 0; k < NB; ++k) { /* CommRecv */
      req[NB + k] = MPI_REQUEST_NULL;
      if (peer[k] >= 0)
        MPI_Irecv(rbuf + (size_t)k * maxcount, count[k], MPI_DOUBLE, peer[k], 1024 + (NB - 1 - k), MPI_COMM_WORLD,
                  &req[NB + k]);
    }
    smpi_execute_flops(fpe * elems * (1.0 + 0.05 * ((rank * 7 + it) % 4))); /* stresses, hourglass */
    for (k = 0; k < NB; ++k) { /* CommSend */
      req[k] = MPI_REQUEST_NULL;
      if (peer[k] >= 0)
        MPI_Isend(sbuf + (size_t)k * maxcount, count[k], MPI_DOUBLE, peer[k], 1024 + k, MPI_COMM_WORLD, &req[k]);
    }
#ifdef WAITALL_ALL
    MPI_Waitall(2 * NB, req, MPI_STATUSES_IGNORE);
    smpi_execute_flops(0.1 * fpe * elems);
#else
    MPI_Waitall(NB, req, MPI_STATUSES_IGNORE);
    smpi_execute_flops(0.1 * fpe * elems); /* work between CommSend and CommSBN */
    for (k = 0; k < NB; ++k) /* CommSBN */
      if (req[NB + k] != MPI_REQUEST_NULL) MPI_Wait(&req[NB + k], MPI_STATUS_IGNORE);
#endif
    smpi_execute_flops(0.5 * fpe * elems); /* nodal accelerations, velocities, positions */
    double dt = 1e-3 * (1 + rank % 3), gdt;
    MPI_Allreduce(&dt, &gdt, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  }
  if (rank == 0)
    printf("lulesh: %d ranks (%d^3), %d iterations, s = %d, face/edge/corner messages %d/%d/%d doubles\n", size, n,
           iters, s, fields * (s + 1) * (s + 1), fields * (s + 1), fields);
  free(sbuf);
  free(rbuf);
  MPI_Finalize();
  return 0;
}
