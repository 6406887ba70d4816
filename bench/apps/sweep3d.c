/* sweep3d.c — mimics the communication of Sweep3D (LANL's discrete-ordinates neutron
 * transport benchmark, the ASCI Sweep3D 2.2 `sweep.f`). The I x J x K grid is decomposed over
 * a 2D process grid px x py (K is not decomposed). Each iteration sweeps the 8 octants; an
 * octant is a pipelined wavefront starting at one corner of the process grid (two octants per
 * corner, differing in the K direction). For every angle block (mmo = 6 / mmi) and every K
 * block (kt / mk) a rank:
 *   MPI_Recv the I-inflow  (jt*mk*mmi doubles) from its upstream neighbour in x, if any,
 *   MPI_Recv the J-inflow  (it*mk*mmi doubles) from its upstream neighbour in y, if any,
 *   computes the block (it*jt*mk*mmi cell-angles),
 *   MPI_Send the I-outflow downstream in x, MPI_Send the J-outflow downstream in y
 * — blocking calls, as Sweep3D's snd_real / rcv_real are. After the sweep a flux update and
 * the convergence test, a global max of the flux error: MPI_Allreduce of one double.
 *
 * Compute is injected with smpi_execute_flops() (traced as `compute N` records under
 * --cfg=smpi/simulate-computation:no).
 *
 * usage: sweep3d [ITERATIONS=4] [IT_JT=16] [KT=100] [MK=10] [MMI=3] [FLOPS_PER_CELL_ANGLE=30]
 *   IT_JT: local cells per rank in I and J; KT cells in K, in blocks of MK planes; MMI angles
 *   per block (of 6 per octant). Defaults: messages of 16*10*3*8 = 3840 B. */
#include <mpi.h>
#include <smpi/smpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int iters = argc > 1 ? atoi(argv[1]) : 4;
  const int itjt = argc > 2 ? atoi(argv[2]) : 16;
  const int kt = argc > 3 ? atoi(argv[3]) : 100;
  const int mk = argc > 4 ? atoi(argv[4]) : 10;
  const int mmi = argc > 5 ? atoi(argv[5]) : 3;
  const double fpca = argc > 6 ? atof(argv[6]) : 30;
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int px = 1; /* the most square px x py = size */
  for (int d = 1; d * d <= size; ++d)
    if (size % d == 0) px = d;
  const int py = size / px, x = rank % px, y = rank / px;
  const int mmo = 6 / mmi, kb = kt / mk, ew_len = itjt * mk * mmi, ns_len = itjt * mk * mmi;
  double* ew = malloc(sizeof(double) * ew_len);
  double* ns = malloc(sizeof(double) * ns_len);
  for (int i = 0; i < ew_len; ++i) ew[i] = ns[i] = 0;
  const double block_flops = fpca * itjt * itjt * mk * mmi;

  for (int it = 0; it < iters; ++it) {
    smpi_execute_flops(10.0 * itjt * itjt * kt); /* source term: scattering + fixed source */
    for (int oct = 0; oct < 8; ++oct) {
      /* Octants 0-1 start at corner (-,-), 2-3 at (+,-), 4-5 at (-,+), 6-7 at (+,+). */
      const int idir = (oct / 2) % 2 ? -1 : 1, jdir = oct / 4 ? -1 : 1;
      const int up_x = x - idir, down_x = x + idir, up_y = y - jdir, down_y = y + jdir;
      const int has_up_x = up_x >= 0 && up_x < px, has_down_x = down_x >= 0 && down_x < px;
      const int has_up_y = up_y >= 0 && up_y < py, has_down_y = down_y >= 0 && down_y < py;
      for (int mo = 0; mo < mmo; ++mo)
        for (int kk = 0; kk < kb; ++kk) {
          if (has_up_x) MPI_Recv(ew, ew_len, MPI_DOUBLE, y * px + up_x, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          if (has_up_y) MPI_Recv(ns, ns_len, MPI_DOUBLE, up_y * px + x, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          smpi_execute_flops(block_flops); /* the diagonal sweep over the block's cells */
          if (has_down_x) MPI_Send(ew, ew_len, MPI_DOUBLE, y * px + down_x, 1, MPI_COMM_WORLD);
          if (has_down_y) MPI_Send(ns, ns_len, MPI_DOUBLE, down_y * px + x, 2, MPI_COMM_WORLD);
        }
    }
    smpi_execute_flops(5.0 * itjt * itjt * kt); /* flux update and local error */
    double err = 1.0 / (it + 1), gmax;
    MPI_Allreduce(&err, &gmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  }
  if (rank == 0)
    printf("sweep3d: %d ranks (%d x %d), %d iterations, %d-byte messages, %d blocks per octant\n", size, px, py, iters,
           (int)(ew_len * sizeof(double)), mmo * kb);
  free(ew);
  free(ns);
  MPI_Finalize();
  return 0;
}
