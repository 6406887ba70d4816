/* cg.c — mimics the communication of NPB CG (NPB 3.x MPI `cg.f`, class A: na = 14000,
 * nonzer = 11, 15 outer iterations of 25 CG steps). The matrix is distributed over a 2D grid
 * of npcols x nprows ranks (P a power of two; npcols = nprows, or npcols = 2 nprows). NPB CG
 * has no MPI_Allreduce in its solver: every reduction is log2(npcols) exchange steps with
 * partner ranks of the same process row, each MPI_Irecv + MPI_Send + MPI_Wait. Per CG step:
 *   q = A.p (local sparse product), then the row sum of q: for i = l2npcols .. 1 an exchange
 *     with reduce_exch_proc(i) (send_len doubles out, lastrow-firstrow+1 in), adding up;
 *   the "transpose" exchange with exch_proc (MPI_Irecv + MPI_Send + MPI_Wait);
 *   d = p.q: the local sum, then for i = 1 .. l2npcols an 8-byte exchange with the partner;
 *   z, r updates; rho = r.r: the same 8-byte exchanges; p update.
 * After the 25 steps conj_grad computes the residual norm (one more product, row sum,
 * transpose, dot), and the outer loop the two norms of z (16-byte exchanges).
 * Compute is injected with smpi_execute_flops() (traced as `compute N` records under
 * --cfg=smpi/simulate-computation:no): 2 flops per local non-zero and per vector entry.
 *
 * usage: cg [NITER=15] [NA=14000] [CGITMAX=25] [NONZER=11] */
#include <mpi.h>
#include <smpi/smpi.h>
#include <stdio.h>
#include <stdlib.h>

static int l2npcols, exch_proc, send_len, recv_len, exch_recv_len;
static int reduce_exch_proc[32];
static double *w, *q;

static void row_sum(void) { /* the q = A.p reduction over the process row */
  for (int i = l2npcols; i >= 1; --i) {
    MPI_Request r;
    MPI_Irecv(q, recv_len, MPI_DOUBLE, reduce_exch_proc[i], i, MPI_COMM_WORLD, &r);
    MPI_Send(w, send_len, MPI_DOUBLE, reduce_exch_proc[i], i, MPI_COMM_WORLD);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    smpi_execute_flops(recv_len); /* w = w + q */
  }
}
static void transpose(void) { /* exchange with the transpose processor */
  if (l2npcols == 0) return;
  MPI_Request r;
  MPI_Irecv(q, exch_recv_len, MPI_DOUBLE, exch_proc, 1, MPI_COMM_WORLD, &r);
  MPI_Send(w, send_len, MPI_DOUBLE, exch_proc, 1, MPI_COMM_WORLD);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
}
static void dot_sum(int count) { /* the sum of `count` local dot products over the row */
  double sum[2] = {1, 1}, in[2];
  for (int i = 1; i <= l2npcols; ++i) {
    MPI_Request r;
    MPI_Irecv(in, count, MPI_DOUBLE, reduce_exch_proc[i], i, MPI_COMM_WORLD, &r);
    MPI_Send(sum, count, MPI_DOUBLE, reduce_exch_proc[i], i, MPI_COMM_WORLD);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int niter = argc > 1 ? atoi(argv[1]) : 15;
  const int na = argc > 2 ? atoi(argv[2]) : 14000;
  const int cgitmax = argc > 3 ? atoi(argv[3]) : 25;
  const int nonzer = argc > 4 ? atoi(argv[4]) : 11;
  int me, nprocs;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  /* setup_proc_info: npcols = nprows, or npcols = 2 nprows for an odd log2(P) */
  int log2p = 0;
  while ((1 << log2p) < nprocs) ++log2p;
  if ((1 << log2p) != nprocs) {
    if (me == 0) fprintf(stderr, "cg: the number of ranks must be a power of two\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const int npcols = 1 << ((log2p + 1) / 2), nprows = nprocs / npcols;
  for (l2npcols = 0; (1 << l2npcols) < npcols; ++l2npcols) {}
  const int proc_row = me / npcols, proc_col = me % npcols;
  /* setup_submatrix_info: this rank's row block and the exchange partners */
  const int nrows = na / nprows, ncols = na / npcols;
  recv_len = nrows;
  if (npcols == nprows) {
    send_len = nrows;
    exch_proc = (me % nprows) * nprows + me / nprows;
  } else {
    send_len = me % 2 == 0 ? (nrows + 1) / 2 : nrows / 2;
    exch_proc = 2 * (((me / 2) % nprows) * nprows + me / 2 / nprows) + me % 2;
  }
  exch_recv_len = ncols;
  for (int i = 1, div = npcols; i <= l2npcols; ++i, div /= 2)
    reduce_exch_proc[i] = proc_row * npcols + (proc_col + div / 2) % div + proc_col / div * div;
  w = calloc(nrows > ncols ? nrows : ncols, sizeof(double));
  q = calloc(nrows > ncols ? nrows : ncols, sizeof(double));
  const double nnz = (double)na * (nonzer + 1) * (nonzer + 1) / nprocs; /* local non-zeros */

  for (int it = 1; it <= niter; ++it) {
    /* conj_grad */
    smpi_execute_flops(2.0 * ncols); /* q = z = 0, r = p = x, rho = r.r (local) */
    dot_sum(1);
    for (int cgit = 1; cgit <= cgitmax; ++cgit) {
      smpi_execute_flops(2 * nnz); /* w = A.p */
      row_sum();
      transpose();
      smpi_execute_flops(2.0 * ncols); /* d = p.q (local) */
      dot_sum(1);
      smpi_execute_flops(4.0 * ncols); /* z = z + alpha p, r = r - alpha q; rho = r.r */
      dot_sum(1);
      smpi_execute_flops(2.0 * ncols); /* p = r + beta p */
    }
    smpi_execute_flops(2 * nnz); /* r = A.z: the residual norm */
    row_sum();
    transpose();
    smpi_execute_flops(2.0 * ncols);
    dot_sum(1);
    /* main loop: zeta from norm_temp1 = x.z and norm_temp2 = z.z, then x = z / ||z|| */
    smpi_execute_flops(4.0 * ncols);
    dot_sum(2);
    smpi_execute_flops(1.0 * ncols);
  }
  if (me == 0)
    printf("cg: %d ranks (%d cols x %d rows), %d iterations of %d CG steps, na = %d\n", nprocs, npcols, nprows, niter,
           cgitmax, na);
  free(w);
  free(q);
  MPI_Finalize();
  return 0;
}
