#include "sim/thread_cputime.hpp"

#include <dlfcn.h>
#include <time.h>

#include <cerrno>

namespace {

// One simulation runs on one OS thread (SimGrid's actors are user-level contexts), so a
// plain flag suffices; it is only ever set in the simulation process.
bool skip_thread_cputime = false;

using ClockGettime = int (*)(clockid_t, timespec*);

ClockGettime libc_clock_gettime() {
  static const ClockGettime real = reinterpret_cast<ClockGettime>(dlsym(RTLD_NEXT, "clock_gettime"));
  return real;
}

}  // namespace

extern "C" int clock_gettime(clockid_t id, timespec* ts) {
  if (skip_thread_cputime && id == CLOCK_THREAD_CPUTIME_ID) {
    ts->tv_sec = 0;
    ts->tv_nsec = 0;
    return 0;
  }
  const ClockGettime real = libc_clock_gettime();
  if (real == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  return real(id, ts);
}

namespace waitlab::sim::detail {

SkipThreadCpuTime::SkipThreadCpuTime() {
  (void)libc_clock_gettime();  // resolve before the flag is set
  skip_thread_cputime = true;
}

SkipThreadCpuTime::~SkipThreadCpuTime() {
  skip_thread_cputime = false;
}

}  // namespace waitlab::sim::detail
