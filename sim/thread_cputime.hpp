// waitlab::sim (internal) — SMPI's per-call benchmark timer without system calls.
//
// Every MPI call in SMPI starts and stops a timer of the calling thread's CPU time
// (smpi_bench_end/begin: clock_gettime(CLOCK_THREAD_CPUTIME_ID), a real system call each,
// 8-12 % of a run's host time). With smpi/simulate-computation:no — always set by this
// engine — SMPI never uses what that timer measured. This file defines clock_gettime for
// the whole program: while a SkipThreadCpuTime object lives, requests for the thread's CPU
// time are answered with 0 at once; every other clock, and every request outside that
// scope, goes to the C library. Simulated time cannot depend on it (the test suite checks
// exact timestamps), only the host time of the run.
#pragma once

namespace waitlab::sim::detail {

class SkipThreadCpuTime {
 public:
  SkipThreadCpuTime();
  ~SkipThreadCpuTime();
  SkipThreadCpuTime(const SkipThreadCpuTime&) = delete;
  SkipThreadCpuTime& operator=(const SkipThreadCpuTime&) = delete;
};

}  // namespace waitlab::sim::detail
