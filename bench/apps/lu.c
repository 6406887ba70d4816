/* lu.c — mimics the communication of NPB LU (the SSOR solver of NPB 3.x MPI, class C:
 * a 162^3 grid) on a 2D process grid xdim x ydim (power of two, ydim >= xdim as NPB's
 * `proc_grid`), each rank owning an nx x ny column of all nz planes. One SSOR iteration:
 *   lower sweep, k = 2 .. nz-1 (jacld + blts): exchange_1(iex=0): MPI_Irecv + MPI_Wait of
 *     5*nx doubles from the north, then MPI_Irecv + MPI_Wait of 5*ny from the west; compute;
 *     exchange_1(iex=2): MPI_Send to the south and to the east — a pipelined wavefront;
 *   upper sweep, k = nz-1 .. 2 (jacu + buts): the same from the south and east, sending north
 *     and west;
 *   the update of u; every INORM iterations l2norm: MPI_Allreduce of 5 doubles (sum);
 *   rhs: exchange_3: with the north/south neighbours then the east/west ones, each direction
 *     MPI_Irecv, MPI_Send to the opposite neighbour, MPI_Wait (10*nx*nz and 10*ny*nz doubles
 *     — two ghost planes of 5 variables), then the flux computation. (North/south neighbours
 *     share nx, east/west ones ny.)
 * NPB's receives use MPI_ANY_SOURCE; here they name the neighbour (a TI trace records the
 * source the program gave). Compute is injected with smpi_execute_flops() (traced as
 * `compute N` records under --cfg=smpi/simulate-computation:no).
 *
 * usage: lu [ITERATIONS=1] [N=64] [INORM=2] [FLOPS_PER_POINT=100]
 *   N: the global grid is N^3 (class C: 162; nz = N, nx = N / xdim, ny = N / ydim). */
#include <mpi.h>
#include <smpi/smpi.h>
#include <stdio.h>
#include <stdlib.h>

static int north, south, west, east; /* -1: none (a boundary), as NPB's neighbour table */
static int nx, ny, nz;
static double *dum, *buf, *buf1;

static void exchange_1(int iex) { /* one k-plane of the wavefront */
  if (iex == 0 || iex == 1) {     /* receive from upstream: north + west, or south + east */
    const int a = iex == 0 ? north : south, b = iex == 0 ? west : east;
    MPI_Request r;
    if (a != -1) {
      MPI_Irecv(dum, 5 * nx, MPI_DOUBLE, a, iex == 0 ? 3 : 4, MPI_COMM_WORLD, &r);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    if (b != -1) {
      MPI_Irecv(dum, 5 * ny, MPI_DOUBLE, b, iex == 0 ? 5 : 6, MPI_COMM_WORLD, &r);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
  } else { /* send downstream: south + east, or north + west */
    const int a = iex == 2 ? south : north, b = iex == 2 ? east : west;
    if (a != -1) MPI_Send(dum, 5 * nx, MPI_DOUBLE, a, iex == 2 ? 3 : 4, MPI_COMM_WORLD);
    if (b != -1) MPI_Send(dum, 5 * ny, MPI_DOUBLE, b, iex == 2 ? 5 : 6, MPI_COMM_WORLD);
  }
}

/* One direction of exchange_3: receive from `from` what `to`'s opposite sends, and back. */
static void exchange_3_pair(int first, int second, int len, int tag1, int tag2) {
  MPI_Request r;
  if (first != -1) MPI_Irecv(buf1, len, MPI_DOUBLE, first, tag1, MPI_COMM_WORLD, &r);
  if (second != -1) MPI_Send(buf, len, MPI_DOUBLE, second, tag1, MPI_COMM_WORLD);
  if (first != -1) MPI_Wait(&r, MPI_STATUS_IGNORE);
  if (second != -1) MPI_Irecv(buf1, len, MPI_DOUBLE, second, tag2, MPI_COMM_WORLD, &r);
  if (first != -1) MPI_Send(buf, len, MPI_DOUBLE, first, tag2, MPI_COMM_WORLD);
  if (second != -1) MPI_Wait(&r, MPI_STATUS_IGNORE);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int iters = argc > 1 ? atoi(argv[1]) : 1;
  const int n = argc > 2 ? atoi(argv[2]) : 64;
  const int inorm = argc > 3 ? atoi(argv[3]) : 2;
  const double fpp = argc > 4 ? atof(argv[4]) : 100;
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int xdim = 1; /* NPB proc_grid: xdim = 2^(floor(log2(P) / 2)), ydim = P / xdim */
  while (xdim * xdim * 4 <= size) xdim *= 2;
  const int ydim = size / xdim;
  if (xdim * ydim != size) {
    if (rank == 0) fprintf(stderr, "lu: the number of ranks must be a power of two\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const int row = rank / xdim, col = rank % xdim;
  north = row > 0 ? rank - xdim : -1;
  south = row < ydim - 1 ? rank + xdim : -1;
  west = col > 0 ? rank - 1 : -1;
  east = col < xdim - 1 ? rank + 1 : -1;
  nx = n / xdim + (col < n % xdim);
  ny = n / ydim + (row < n % ydim);
  nz = n;
  const int big = 10 * (nx > ny ? nx : ny) * nz;
  dum = calloc(5 * (nx > ny ? nx : ny), sizeof(double));
  buf = calloc(big, sizeof(double));
  buf1 = calloc(big, sizeof(double));
  const double plane = fpp * nx * ny; /* jacld/blts (or jacu/buts) on one k-plane */

  for (int it = 1; it <= iters; ++it) {
    smpi_execute_flops(0.1 * plane * nz); /* rsd = dt * rsd */
    for (int k = 1; k < nz - 1; ++k) {    /* lower triangular sweep */
      smpi_execute_flops(0.5 * plane);    /* jacld */
      exchange_1(0);
      smpi_execute_flops(0.5 * plane); /* blts */
      exchange_1(2);
    }
    for (int k = nz - 2; k >= 1; --k) { /* upper triangular sweep */
      smpi_execute_flops(0.5 * plane);  /* jacu */
      exchange_1(1);
      smpi_execute_flops(0.5 * plane); /* buts */
      exchange_1(3);
    }
    smpi_execute_flops(0.1 * plane * nz); /* u = u + tmp * rsd */
    if (it % inorm == 0 || it == iters) { /* l2norm of the residual */
      double sum[5] = {0}, gsum[5];
      smpi_execute_flops(0.05 * plane * nz);
      MPI_Allreduce(sum, gsum, 5, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    /* rhs: exchange_3(u, 0), then the fluxes in xi, eta, zeta */
    exchange_3_pair(north, south, 10 * nx * nz, 1, 2);
    exchange_3_pair(west, east, 10 * ny * nz, 3, 4);
    smpi_execute_flops(1.0 * plane * nz);
  }
  if (rank == 0)
    printf("lu: %d ranks (%d x %d), %d iterations, %d^3 grid (%d x %d x %d per rank)\n", size, xdim, ydim, iters, n,
           nx, ny, nz);
  free(dum);
  free(buf);
  free(buf1);
  MPI_Finalize();
  return 0;
}
