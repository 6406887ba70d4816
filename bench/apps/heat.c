/* heat.c — mimics a 1D explicit heat-equation code (the classic "heat1d" MPI teaching code):
 * the rod is split into P equal slabs, one per rank; every time step each rank updates its
 * slab (compute), then exchanges one 8-byte boundary value with each neighbour through
 * MPI_Sendrecv — first shifting right (send to the right, receive from the left), then
 * shifting left. Such codes pass MPI_PROC_NULL for the end ranks' missing neighbour, but
 * SimGrid 3.32's TI tracing drops an MPI_Sendrecv with a MPI_PROC_NULL side entirely (the
 * trace of rank 0 would have no send, and its replay deadlocks), so the end ranks call the
 * half that remains: MPI_Send or MPI_Recv. Both shifts use tag 0: a TI `sendRecv` record
 * carries no tag and replays with tag 0, so the end ranks' send/recv must use 0 too.
 *
 * Compute is not executed: smpi_execute_flops() injects it, so `smpirun -trace-ti` with
 * --cfg=smpi/simulate-computation:no records deterministic `compute N` records.
 *
 * usage: heat [ITERATIONS=150] [FLOPS_PER_STEP=1e6] */
#include <mpi.h>
#include <smpi/smpi.h>
#include <stdio.h>
#include <stdlib.h>

/* One shift: send `out` to `to`, receive `in` from `from` (either may be MPI_PROC_NULL). */
static void shift(double* out, int to, double* in, int from, int tag) {
  if (to != MPI_PROC_NULL && from != MPI_PROC_NULL)
    MPI_Sendrecv(out, 1, MPI_DOUBLE, to, tag, in, 1, MPI_DOUBLE, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  else if (to != MPI_PROC_NULL)
    MPI_Send(out, 1, MPI_DOUBLE, to, tag, MPI_COMM_WORLD);
  else if (from != MPI_PROC_NULL)
    MPI_Recv(in, 1, MPI_DOUBLE, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int iters = argc > 1 ? atoi(argv[1]) : 150;
  const double flops = argc > 2 ? atof(argv[2]) : 1e6;
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
  const int right = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
  double u_first = rank, u_last = rank, ghost_left = 0, ghost_right = 0;

  for (int it = 0; it < iters; ++it) {
    /* Update the interior of the slab: u_i += alpha * (u_{i-1} - 2 u_i + u_{i+1}). */
    smpi_execute_flops(flops);
    /* Halo exchange: my last value goes right, the left neighbour's last value comes in. */
    shift(&u_last, right, &ghost_left, left, 0);
    /* My first value goes left, the right neighbour's first value comes in. */
    shift(&u_first, left, &ghost_right, right, 0);
    u_first += 1e-3 * ghost_left;
    u_last += 1e-3 * ghost_right;
  }
  if (rank == 0) printf("heat: %d ranks, %d iterations, %g flops per step\n", size, iters, flops);
  MPI_Finalize();
  return 0;
}
