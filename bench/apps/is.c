/* is.c — mimics the communication of NPB IS (NPB 3.x MPI `is.c`, class A: 2^23 keys in
 * [0, 2^19), 1024 buckets, 10 ranked iterations after an untimed one). Every iteration ranks
 * the keys: the local bucket counts, an MPI_Allreduce of the 1024 bucket sizes, the split of
 * the buckets over the ranks, an MPI_Alltoall of how many keys go to each rank, and an
 * MPI_Alltoallv of the keys themselves with those uneven counts; then the local ranking.
 * The full verification at the end sends one key to the next rank (MPI_Irecv + MPI_Send +
 * MPI_Wait) and reduces the error count to rank 0.
 * NPB's keys follow a bell-shaped distribution and its bucket split gives every rank about
 * the same number of keys, while what one rank sends to another varies: here each count is
 * keys/P^2 times a deterministic factor in [0.5, 1.5) drawn per (sender, receiver, iteration),
 * and the receivers learn their counts by the MPI_Alltoall, as in NPB.
 * NPB's IS at 256 ranks is usually run with `--cfg=smpi/alltoall:pair
 * --cfg=smpi/alltoallv:pair` (bench/replay_vs_smpirun.sh does).
 * Compute is injected with smpi_execute_flops(): a few flops per local key per pass.
 *
 * usage: is [NITER=10] [LOG2_KEYS=23] */
#include <mpi.h>
#include <smpi/smpi.h>
#include <stdio.h>
#include <stdlib.h>

#define NUM_BUCKETS 1024

/* A deterministic factor in [0.5, 1.5) per (sender, receiver, iteration). */
static double jitter(int from, int to, int it) {
  unsigned long long x = (unsigned long long)from * 2654435761ull ^ (unsigned long long)to * 40503ull ^
                         (unsigned long long)it * 97ull;
  x ^= x >> 13;
  x *= 0x9E3779B97F4A7C15ull;
  x ^= x >> 29;
  return 0.5 + (double)(x % 1000003ull) / 1000003.0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int niter = argc > 1 ? atoi(argv[1]) : 10;
  const int log2_keys = argc > 2 ? atoi(argv[2]) : 23;
  int me, np;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  const long keys = (1L << log2_keys) / np; /* this rank's keys */
  int* key_buff1 = calloc((size_t)(2 * keys + np), sizeof(int));
  int* key_buff2 = calloc((size_t)(2 * keys + np), sizeof(int));
  int* send_count = calloc((size_t)np, sizeof(int));
  int* recv_count = calloc((size_t)np, sizeof(int));
  int* send_displ = calloc((size_t)np, sizeof(int));
  int* recv_displ = calloc((size_t)np, sizeof(int));
  int bucket_size[NUM_BUCKETS] = {0}, bucket_totals[NUM_BUCKETS];

  smpi_execute_flops(20.0 * keys); /* create_seq: four random numbers a key */
  for (int it = 0; it <= niter; ++it) { /* iteration 0: the untimed one */
    smpi_execute_flops(4.0 * keys);     /* the bucket of every key, the bucket sizes */
    MPI_Allreduce(bucket_size, bucket_totals, NUM_BUCKETS, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    smpi_execute_flops(2.0 * NUM_BUCKETS); /* the buckets' split over the ranks */
    for (int j = 0; j < np; ++j) send_count[j] = (int)(keys / np * jitter(me, j, it));
    smpi_execute_flops(2.0 * keys); /* the keys into their destinations' order */
    MPI_Alltoall(send_count, 1, MPI_INT, recv_count, 1, MPI_INT, MPI_COMM_WORLD);
    for (int j = 1; j < np; ++j) {
      send_displ[j] = send_displ[j - 1] + send_count[j - 1];
      recv_displ[j] = recv_displ[j - 1] + recv_count[j - 1];
    }
    MPI_Alltoallv(key_buff1, send_count, send_displ, MPI_INT, key_buff2, recv_count, recv_displ, MPI_INT,
                  MPI_COMM_WORLD);
    const int got = recv_displ[np - 1] + recv_count[np - 1];
    smpi_execute_flops(3.0 * got); /* the ranks of the received keys */
  }
  /* full_verify */
  smpi_execute_flops(4.0 * keys);
  int k = 0, last = 0;
  MPI_Request r;
  if (me > 0) MPI_Irecv(&k, 1, MPI_INT, me - 1, 1000, MPI_COMM_WORLD, &r);
  if (me < np - 1) MPI_Send(&last, 1, MPI_INT, me + 1, 1000, MPI_COMM_WORLD);
  if (me > 0) MPI_Wait(&r, MPI_STATUS_IGNORE);
  long errors = 0, total = 0;
  MPI_Reduce(&errors, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (me == 0) printf("is: %d ranks, 2^%d keys, %d iterations\n", np, log2_keys, niter);
  free(key_buff1);
  free(key_buff2);
  free(send_count);
  free(recv_count);
  free(send_displ);
  free(recv_displ);
  MPI_Finalize();
  return 0;
}
