// libwaitlab-profiler — the minimum-duration wait-state profiler of paper 000 for real MPI.
//
// Promise: linked into an MPI application (before the MPI library) or preloaded
// (`mpirun -x LD_PRELOAD=.../libwaitlab-profiler.so ./app`), the library intercepts the MPI
// calls of the C bindings through PMPI and, in MPI_Finalize, writes minprofile.csv and
// minprofile.json — the format `waitlab run` writes for a simulated run, with source
// "libwaitlab-profiler" — into $WAITLAB_PROFILER_OUT (default: the working directory of
// rank 0). Each rank keeps one minprofile::RankProfile (accumulators per category, no
// trace); the only communication the library adds is in MPI_Finalize: one
// MPI_Allreduce(MPI_MIN) of the collective minima and one gather of the per-rank rows.
//
//   call path   the call site: "<function that called MPI>/MPI_Xxx", the function found with
//               dladdr from the wrapper's return address (C++ names demangled), else
//               "<module>+0x<offset of the call>/MPI_Xxx". dladdr sees exported symbols
//               only: link executables with -rdynamic (CMake: ENABLE_EXPORTS) to get names.
//   variants    paper, per_peer and exclude_tested (the percentile needs the histograms of
//               all ranks: its column stays empty). exclude_tested calls MPI_Test/MPI_Testall
//               at the entry of MPI_Wait/MPI_Waitall, as the paper did; WAITLAB_PROFILER_TEST=0
//               turns that test (and the variant) off.
//   collectives measured only on communicators with as many ranks as MPI_COMM_WORLD: only
//               those compare with the minimum over all ranks.
//   threads     under MPI_THREAD_MULTIPLE only the thread that initialised MPI is measured.
// docs/profiler.md is the user's guide. One process is one rank, so the state is one object
// per process (wrappers.cpp): PMPI wrappers have nowhere else to keep it.
#pragma once

#include <mpi.h>
#include <pthread.h>

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/minprofile/calls.hpp"
#include "analysis/minprofile/estimator.hpp"
#include "analysis/trace/trace.hpp"
#include "profiler/flat_map.hpp"

namespace waitlab::profiler {

// Seconds on the monotonic clock.
double now();

// What MPI_Isend / MPI_Irecv started, remembered until a call completes the request.
struct Request {
  enum class Kind : std::uint8_t { Unknown, Send, Receive };
  Kind kind = Kind::Unknown;
  std::int32_t peer = 0;    // destination (sends; a receive's source comes from its status)
  std::uint64_t bytes = 0;  // bytes sent
};

// One rank's part of the result, gathered on rank 0: its MPI_Init-to-MPI_Finalize span and
// its rows, on call paths numbered by `paths`.
struct RankReport {
  double span = 0;
  std::vector<std::string> paths;
  std::vector<minprofile::RankRow> rows;
};

class Profiler {
 public:
  // MPI_Init or MPI_Init_thread succeeded; `begin`: the time of its entry.
  void start(double begin, int thread_level);
  bool active() const { return active_; }
  // Whether this thread's calls are measured now.
  bool recording() const { return active_ && (!multiple_ || pthread_equal(pthread_self(), owner_) != 0); }
  bool test_at_entry() const { return test_; }
  int world_rank() const { return rank_; }
  int world_size() const { return size_; }

  // One measured call: begin(), the MPI call, its leave time, its facts, end() if it succeeded.
  void begin(trace::MpiOp op, const void* caller) {
    site_ = site(caller, op);
    facts_.begin(op, now());
  }
  minprofile::CallFacts& facts() { return facts_; }
  void end(double leave) { profile_.add(facts_.finish(site_, leave)); }

  // Requests started by MPI_Isend / MPI_Irecv.
  // Overwrites: a handle MPI reuses replaces what a completion the profiler did not see left
  // behind (a request completed by another thread under MPI_THREAD_MULTIPLE).
  void remember(MPI_Request r, const Request& info) { *requests_.insert(key(r), info).first = info; }
  Request take(MPI_Request r) {
    Request info;
    requests_.erase(key(r), &info);
    return info;
  }
  void forget(MPI_Request r) { requests_.erase(key(r)); }
  // Whether a completion call must tell the profiler which requests it freed.
  bool tracking() const { return !requests_.empty() && recording(); }

  // Scratch arrays of MPI_Waitall and the other completion calls, kept between calls.
  MPI_Status* statuses(std::size_t n);
  Request* pending(std::size_t n);
  MPI_Request* saved(const MPI_Request* reqs, std::size_t n);

  // MPI_Finalize: stops recording, reduces the minima, gathers the rows on rank 0, which
  // writes the two files. Collective over MPI_COMM_WORLD.
  void finish();

 private:
  struct Site {
    const void* caller;
    trace::MpiOp op;
  };
  static std::uint64_t key(MPI_Request r);
  std::uint32_t site(const void* caller, trace::MpiOp op);
  RankReport report(double span, const minprofile::GlobalMinima& g) const;

  bool active_ = false, multiple_ = false, test_ = true;
  pthread_t owner_{};
  int rank_ = 0, size_ = 1;
  double begin_ = 0;
  minprofile::RankProfile profile_;
  minprofile::CallFacts facts_;
  std::uint32_t site_ = 0;
  FlatMap<std::uint32_t> site_ids_;  // (caller, op) -> index into sites_
  std::vector<Site> sites_;
  FlatMap<Request> requests_;
  std::vector<MPI_Status> statuses_;
  std::vector<Request> pending_;
  std::vector<MPI_Request> saved_;
};

}  // namespace waitlab::profiler
