// The profiler test's scenario: what scenario.cpp does and check_profile.cpp expects.
//
// Iteration i of kIterations, on kRanks ranks (after a barrier):
//   app::shift_back   MPI_Irecv/MPI_Isend to both neighbours, MPI_Wait on each    (no delay)
//   swap_neighbours   MPI_Sendrecv around the ring                                 (no delay)
//   compute           rank r sleeps r × kComputeMs
//   main              MPI_Allreduce: rank r waits (kRanks − 1 − r) × kComputeMs
//   ring_exchange     odd i: rank 0 sleeps kLateMs first; MPI_Irecv from the left,
//                     MPI_Isend to the right, MPI_Waitall: rank 1 waits kLateMs
//   pipeline          rank 0 → 1 → 2 → 3, MPI_Recv then MPI_Send (MPI_Ssend on the last
//                     hop): odd i, ranks 2 and 3 wait kLateMs (ranks 0 and 1 are that late)
//   broadcast_params  odd i: rank 0 sleeps kRootMs; MPI_Bcast from rank 0: ranks 1–3 wait it
//   reduce_results    odd i: the last rank sleeps kRootMs; MPI_Reduce to rank 0: rank 0 waits it
//   main              MPI_Barrier
// then once: final_collectives (MPI_Gather, MPI_Scatter, MPI_Allgather, MPI_Alltoall,
// MPI_Reduce_scatter, MPI_Scan, MPI_Exscan), split_sum (MPI_Allreduce on half the ranks: not
// measured), dup_sum (MPI_Allreduce on a duplicate of MPI_COMM_WORLD: measured), and main's
// MPI_Reduce of the checksum, which rank 0 prints as "checksum <n>".
// Sleeping (not spinning) keeps the cores free for the ranks that wait; delays of tens of
// milliseconds keep the scheduler's noise small beside them (check_profile.cpp measures it).
#pragma once

namespace profiler_test {

inline constexpr int kRanks = 4;
inline constexpr int kIterations = 10;
inline constexpr int kComputeMs = 30;
inline constexpr int kLateMs = 60;
inline constexpr int kRootMs = 40;

}  // namespace profiler_test
