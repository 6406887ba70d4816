/* ft.c — mimics the communication of NPB FT (NPB 3.x MPI `ft.f`) in its 1D layout: the
 * nx x ny x nz complex grid is split into slabs of nz/P planes, and every 3D FFT does two
 * local 1D FFT passes, one global transpose — an MPI_Alltoall of nx*ny*nz/P^2 complex numbers
 * (16 B) per pair of ranks — and the third pass. Per iteration: evolve (the exponential
 * factors, 6 flops a point), the inverse FFT, and the checksum (1024 points, then an
 * MPI_Reduce of one complex number to rank 0). Before the iterations: the initial
 * conditions, the exponential table and one forward FFT, and NPB's MPI_Bcast of the
 * parameters and MPI_Barrier around its timers.
 * The default grid is 256^3 (class A is 256 x 256 x 128, whose 1D layout stops at 128 ranks):
 * 256 ranks each send 4 KiB to every other in each of 7 transposes. NPB's FT at 256 ranks is
 * usually run with `--cfg=smpi/alltoall:pair` (bench/replay_vs_smpirun.sh does), the
 * pairwise exchange of MPI libraries for mid-size messages.
 * Compute is injected with smpi_execute_flops(): 5 N log2 N flops per 1D FFT of N points.
 *
 * usage: ft [NITER=6] [NX=256] [NY=256] [NZ=256] */
#include <math.h>
#include <mpi.h>
#include <smpi/smpi.h>
#include <stdio.h>
#include <stdlib.h>

static int nx, ny, nz, np;
static double *sendbuf, *recvbuf;

static double fft_flops(int n, double lines) { return 5.0 * n * log2((double)n) * lines; }

static void fft(void) { /* one 3D FFT over this rank's slab */
  const double local = (double)nx * ny * nz / np;
  smpi_execute_flops(fft_flops(nx, local / nx)); /* cffts1: along x */
  smpi_execute_flops(fft_flops(ny, local / ny)); /* cffts2: along y */
  smpi_execute_flops(2.0 * local);               /* transpose_x_yz: the local transpose */
  const int count = (int)((double)nx * ny * nz / np / np * 2); /* doubles: complex numbers */
  MPI_Alltoall(sendbuf, count, MPI_DOUBLE, recvbuf, count, MPI_DOUBLE, MPI_COMM_WORLD);
  smpi_execute_flops(2.0 * local);               /* transpose_finish */
  smpi_execute_flops(fft_flops(nz, local / nz)); /* cffts1: along z */
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int niter = argc > 1 ? atoi(argv[1]) : 6;
  nx = argc > 2 ? atoi(argv[2]) : 256;
  ny = argc > 3 ? atoi(argv[3]) : 256;
  nz = argc > 4 ? atoi(argv[4]) : 256;
  int me;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  if (nz % np != 0 || ny % np != 0) {
    if (me == 0) fprintf(stderr, "ft: the 1D layout needs P to divide ny and nz\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const size_t count = (size_t)nx * ny * nz / np * 2;
  sendbuf = calloc(count, sizeof(double));
  recvbuf = calloc(count, sizeof(double));
  const double local = (double)nx * ny * nz / np;

  int params[4] = {niter, nx, ny, nz};
  MPI_Bcast(params, 4, MPI_INT, 0, MPI_COMM_WORLD); /* the parameters rank 0 read */
  smpi_execute_flops(4.0 * local);                  /* compute_indexmap */
  smpi_execute_flops(10.0 * local);                 /* compute_initial_conditions */
  smpi_execute_flops(8.0 * (nx + ny + nz));         /* fft_init: the exponential table */
  fft();                                            /* the warm-up forward FFT */
  MPI_Barrier(MPI_COMM_WORLD);                      /* timer start */
  smpi_execute_flops(10.0 * local);                 /* compute_initial_conditions again */
  fft();                                            /* forward FFT */
  for (int it = 1; it <= niter; ++it) {
    smpi_execute_flops(6.0 * local); /* evolve */
    fft();                           /* inverse FFT */
    smpi_execute_flops(8.0 * 1024 / np);
    double chk[2] = {1, 1}, all[2];
    MPI_Reduce(chk, all, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD); /* checksum */
  }
  MPI_Barrier(MPI_COMM_WORLD); /* timer stop */
  if (me == 0) printf("ft: %d ranks, %d x %d x %d, %d iterations\n", np, nx, ny, nz, niter);
  free(sendbuf);
  free(recvbuf);
  MPI_Finalize();
  return 0;
}
