// SkipThreadCpuTime: the thread's CPU time reads as 0 inside the scope, every other clock
// and every read outside it are the C library's.
// wallclock-ok-file: tests the clock interposition itself; it asserts which clock reads zero,
// never how long anything took.
#include <gtest/gtest.h>
#include <time.h>

#include "sim/thread_cputime.hpp"

namespace {

double seconds(clockid_t id) {
  timespec ts{};
  EXPECT_EQ(clock_gettime(id, &ts), 0);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

void burn_cpu() {
  volatile double x = 0;
  for (int i = 0; i < 2000000; ++i) x = x + 1.0;
}

}  // namespace

TEST(SkipThreadCpuTime, OnlyTheThreadCpuClockAndOnlyInsideTheScope) {
  burn_cpu();
  EXPECT_GT(seconds(CLOCK_THREAD_CPUTIME_ID), 0.0);
  {
    const waitlab::sim::detail::SkipThreadCpuTime skip;
    burn_cpu();
    EXPECT_EQ(seconds(CLOCK_THREAD_CPUTIME_ID), 0.0);
    EXPECT_GT(seconds(CLOCK_MONOTONIC), 0.0);
    EXPECT_GT(seconds(CLOCK_PROCESS_CPUTIME_ID), 0.0);
    EXPECT_GT(seconds(CLOCK_REALTIME), 1.6e9);  // after 2020
  }
  EXPECT_GT(seconds(CLOCK_THREAD_CPUTIME_ID), 0.0);
}
