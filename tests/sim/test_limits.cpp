// What a simulation needs of the host (sim/resources.hpp): the estimate counts the events the
// engine records, a run that clearly cannot fit is refused with the estimate, the limit and
// the fix, one that comes close gets a warning, and the running simulation warns when its
// memory approaches what was available.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdlib>

#include "util/error.hpp"
#include "sim/recording.hpp"
#include "sim/resources.hpp"
#include "sim/simulation.hpp"
#include "sim_util.hpp"

namespace waitlab::sim::test {
namespace {

constexpr std::uint64_t MiB = 1ull << 20;
constexpr std::uint64_t GiB = 1ull << 30;

// WAITLAB_MEMORY_CHECK set for one scope.
class MemoryCheckMode {
 public:
  explicit MemoryCheckMode(const char* value) {
    if (const char* old = std::getenv("WAITLAB_MEMORY_CHECK")) old_ = old;
    if (value != nullptr)
      setenv("WAITLAB_MEMORY_CHECK", value, 1);
    else
      unsetenv("WAITLAB_MEMORY_CHECK");
  }
  ~MemoryCheckMode() {
    if (old_.empty())
      unsetenv("WAITLAB_MEMORY_CHECK");
    else
      setenv("WAITLAB_MEMORY_CHECK", old_.c_str(), 1);
  }

 private:
  std::string old_;
};

std::size_t truths(const trace::Trace& t) {
  std::size_t n = 0;
  for (const auto& l : t.locations) n += l.truth.size();
  return n;
}

TEST(MemoryEstimate, CountsExactlyTheEventsTheEngineRecords) {
  // Every kind of action, on 4 ranks (all of them sampled).
  Action sr = p2p(ActionKind::Sendrecv, 1, 8, 3);
  sr.peer2 = 1;
  sr.bytes2 = 8;
  sr.tag2 = 3;
  Action sr1 = sr;
  sr1.peer = sr1.peer2 = 0;
  Action enter;
  enter.kind = ActionKind::Enter;
  Action leave;
  leave.kind = ActionKind::Leave;
  ListWorkload w({{enter, compute(1e-3), p2p(ActionKind::Isend, 1, 8, 1, 0), p2p(ActionKind::Irecv, 1, 8, 2, 1),
                   waitall(), sr, p2p(ActionKind::Send, 1, 1 << 20, 4), coll(ActionKind::Allreduce, 8), leave},
                  {compute(2e-3), p2p(ActionKind::Irecv, 0, 8, 1, 0), wait(0), p2p(ActionKind::Send, 0, 8, 2), sr1,
                   p2p(ActionKind::Recv, 0, 1 << 20, 4), coll(ActionKind::Allreduce, 8)},
                  {coll(ActionKind::Allreduce, 8), compute(1e-3)},
                  {coll(ActionKind::Allreduce, 8)}});
  const auto limits = read_host_limits();
  const MemoryNeed need = estimate_memory(w, options(), limits);
  const RunResult r = simulate(cluster(4), w, {}, options());
  EXPECT_EQ(need.events, static_cast<double>(r.trace.event_count()));
  EXPECT_EQ(need.truths, static_cast<double>(truths(r.trace)));
  EXPECT_EQ(need.ranks, 4);
  EXPECT_FALSE(need.heap_stacks);
  // A run that records only MPI_Init's and MPI_Finalize's events (RunOptions::record_events).
  auto lean = options();
  lean.record_events = false;
  const MemoryNeed lean_need = estimate_memory(w, lean, limits);
  const RunResult lr = simulate(cluster(4), w, {}, lean);
  EXPECT_EQ(lean_need.events, static_cast<double>(lr.trace.event_count()));
  EXPECT_EQ(lean_need.events, 16.0);
  EXPECT_EQ(lean_need.truths, need.truths);
}

TEST(MemoryEstimate, CountsEveryRankAndSamplesBeyondTheBudget) {
  for (const char* type : {"heat1d", "halo2d", "allreduce_loop"}) {
    const auto w = workload(type, {{"ranks", "256"}, {"iterations", "3"}});
    const RunResult r = simulate(cluster(256), *w, {}, options());
    const double events = static_cast<double>(r.trace.event_count());
    const MemoryNeed all = estimate_memory(*w, options(), read_host_limits());
    EXPECT_EQ(all.events, events) << type;
    EXPECT_EQ(all.truths, static_cast<double>(truths(r.trace))) << type;
    // Beyond the budget (here about 50 of the 256 ranks): the ranks counted, scattered over
    // the grid, stand for all of them.
    const MemoryNeed some = estimate_memory(*w, options(), read_host_limits(), 1000);
    EXPECT_NEAR(some.events, events, events * 0.05) << type;
    if (std::string(type) == "halo2d") {
      EXPECT_NE(some.events, events);  // a sample: its boundary ranks differ
    }
  }
}

// A collective's buffers are counted (issue 29, item 4): an alltoall of 16 ranks x 1 GiB was
// killed by the address-space limit instead of refused. (2.5 + P/2) x W, W the widest buffer:
// the bound measured on SimGrid's default algorithms (sim/resources.cpp collective_bytes).
TEST(MemoryEstimate, CountsTheLargestCollectivesBuffers) {
  const auto limits = read_host_limits();
  const auto alltoall = workload("alltoall_loop", {{"ranks", "16"}, {"iterations", "2"}, {"bytes", "64MiB"}});
  const MemoryNeed need = estimate_memory(*alltoall, options(), limits);
  EXPECT_EQ(need.collective_bytes, 21ull * GiB / 2);  // (2.5 + 8) x 16 x 64 MiB
  EXPECT_EQ(need.collective, "alltoall on 16 ranks, buffers of 1.0 GiB");
  const MemoryNeed without = memory_need(16, need.events, need.truths, need.heap_stacks, need.held);
  EXPECT_EQ(need.resident, without.resident + need.collective_bytes);
  EXPECT_EQ(need.address_space, without.address_space + need.collective_bytes);
  EXPECT_NE(need.breakdown().find(" + 10.5 GiB for the largest collective (alltoall on 16 ranks, buffers of 1.0 GiB)"),
            std::string::npos)
      << need.breakdown();
  // An allreduce's widest buffer is its message: (2.5 + 2) x 1 MiB on 4 ranks.
  const auto allreduce = workload("allreduce_loop", {{"ranks", "4"}, {"iterations", "2"}, {"bytes", "1MiB"}});
  EXPECT_EQ(estimate_memory(*allreduce, options(), limits).collective_bytes, 9 * MiB / 2);
  // Point-to-point only: nothing.
  const auto heat = workload("heat1d", {{"ranks", "4"}, {"iterations", "2"}});
  EXPECT_EQ(estimate_memory(*heat, options(), limits).collective_bytes, 0u);
  // 16 x 1 GiB: 168 GiB, refused before the run.
  const auto big = workload("alltoall_loop", {{"ranks", "16"}, {"iterations", "2"}, {"bytes", "1GiB"}});
  const MemoryNeed big_need = estimate_memory(*big, options(), limits);
  EXPECT_EQ(big_need.collective_bytes, 168 * GiB);
  HostLimits small = limits;
  small.address_space = 8 * GiB;
  MemoryCheckMode refuse(nullptr);
  try {
    check_memory(big_need, small);
    ADD_FAILURE() << "not refused";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("168.0 GiB for the largest collective (alltoall on 16 ranks, buffers of "
                                         "16.0 GiB)) but the address-space limit (ulimit -v) is 8.0 GiB"),
              std::string::npos)
        << e.what();
  }
}

// The estimate's work does not grow with the iterations (issue 29, item 5): a rank's stream
// is counted up to rank_budget actions and the rest extrapolated from its iterations, which
// for a synthetic workload are all alike, so the figure is the exact one. Work is counted in
// actions drawn (MemoryNeed::actions), never in time.
TEST(MemoryEstimate, WorkDoesNotGrowWithIterations) {
  const auto limits = read_host_limits();
  const auto estimate = [&](const char* type, const std::string& ranks, std::int64_t iterations) {
    const auto w = workload(type, {{"ranks", ranks}, {"iterations", std::to_string(iterations)}});
    return estimate_memory(*w, options(), limits);
  };
  constexpr std::int64_t kMany = std::int64_t{1} << 30;  // the most iterations a workload may have
  for (const char* type : {"heat1d", "halo2d", "sweep2d", "allreduce_loop"}) {
    // One and two iterations, counted in full: e(N) = e(1) + (N − 1) × (e(2) − e(1)).
    const MemoryNeed one = estimate(type, "4", 1);
    const MemoryNeed two = estimate(type, "4", 2);
    EXPECT_EQ(two.actions, 2 * one.actions) << type;  // counted action by action
    const double events = two.events - one.events, truths = two.truths - one.truths;
    const MemoryNeed many = estimate(type, "4", kMany);
    EXPECT_EQ(many.events, one.events + static_cast<double>(kMany - 1) * events) << type;
    EXPECT_EQ(many.truths, one.truths + static_cast<double>(kMany - 1) * truths) << type;
    // Each of the 4 ranks stops after kRankActionBudget actions (and the one beyond it), for
    // 2^25 iterations as for 2^30.
    EXPECT_EQ(many.actions, 4 * (kRankActionBudget + 1)) << type;
    EXPECT_EQ(estimate(type, "4", kMany >> 5).actions, many.actions) << type;
  }
  // The issue's case: 2 ranks × 2^30 iterations of heat1d, 10 events an iteration per rank
  // (Enter/Leave of compute and exchange, one MPI_Send and one MPI_Recv of 3 events each).
  const MemoryNeed issue = estimate("heat1d", "2", kMany);
  EXPECT_EQ(issue.events, 2 * (4 + 10 * static_cast<double>(kMany)));
  EXPECT_EQ(issue.truths, 2 * static_cast<double>(kMany));
  EXPECT_EQ(issue.actions, 2 * (kRankActionBudget + 1));
  // Extrapolated at a small rank budget: the same figures as counted in full, on every rank of a
  // grid whose boundary ranks make fewer calls.
  const auto w = workload("halo2d", {{"ranks", "16"}, {"iterations", "40"}});
  const MemoryNeed full = estimate_memory(*w, options(), limits);
  const MemoryNeed capped = estimate_memory(*w, options(), limits, 50'000'000, 100);
  EXPECT_EQ(capped.events, full.events);
  EXPECT_EQ(capped.truths, full.truths);
  EXPECT_LT(capped.actions, full.actions / 3);
}

// A stream without iteration numbers beyond the rank budget is scaled by the share of it
// consumed (ActionStream::done()).
TEST(MemoryEstimate, AStreamWithoutIterationsIsScaledByItsProgress) {
  std::vector<Action> actions;
  for (int i = 0; i < 1000; ++i) {
    actions.push_back(compute(1e-3));
    actions.push_back(coll(ActionKind::Allreduce, 8));
  }
  ListWorkload w({actions, actions});
  const auto limits = read_host_limits();
  const MemoryNeed full = estimate_memory(w, options(), limits);
  EXPECT_EQ(full.events, 2 * (4 + 4000.0));
  EXPECT_EQ(full.truths, 2000.0);
  EXPECT_EQ(full.actions, 4000u);
  const MemoryNeed capped = estimate_memory(w, options(), limits, 50'000'000, 500);
  // 500 actions counted, the 501st drawn: 501 / 2000 of the stream consumed.
  EXPECT_EQ(capped.actions, 2 * 501u);
  EXPECT_NEAR(capped.events, full.events, full.events * 0.01);
  EXPECT_NEAR(capped.truths, full.truths, full.truths * 0.01);
}

TEST(MemoryEstimate, FormulaAndWhatItSays) {
  // The calibrated figures (docs/engine.md §8): 65,536 ranks × 10 iterations of heat1d.
  const MemoryNeed m = memory_need(65536, 10747784, 655360, true);
  const double recorded = (10747784.0 * 40 + 655360.0 * 56) * kGrowth;
  EXPECT_EQ(m.resident, kBaseBytes + 65536 * kRankBytes + static_cast<std::uint64_t>(recorded));
  EXPECT_EQ(m.address_space, m.resident + 65536 * kStackBytes);  // heap stacks: no guard pages
  EXPECT_EQ(human_bytes(m.resident), "1.8 GiB");                // measured: 1.83 GiB peak
  EXPECT_EQ(m.breakdown(),
            "65536 ranks × 19 KiB + 10.7 million events × 40 B and 655360 compute intervals × 56 B as recorded");
  // A trace nobody reads back (sim::RunOptions::return_trace false): the simulation process
  // holds its record buffers only, at most Recording::kBufferBytes.
  const MemoryNeed on_disk = memory_need(65536, 10747784, 655360, true, false);
  EXPECT_EQ(on_disk.resident, kBaseBytes + 65536 * kRankBytes + Recording::kBufferBytes);
  EXPECT_EQ(on_disk.result_bytes, m.result_bytes);
  EXPECT_EQ(on_disk.breakdown(),
            "65536 ranks × 19 KiB + 16 MiB of buffers for 10.7 million events and 655360 compute intervals "
            "recorded to disk");
  const MemoryNeed small = memory_need(4, 100, 10, false, false);
  EXPECT_EQ(small.resident, kBaseBytes + 4 * kRankBytes + 100 * 40 + 10 * 56);
  const MemoryNeed guarded = memory_need(1024, 0, 0, false);
  EXPECT_EQ(guarded.address_space, guarded.resident + 1024 * (kStackBytes + 4096));
  EXPECT_EQ(human_bytes(512), "512 B");
  EXPECT_EQ(human_bytes(20 << 10), "20 KiB");
  EXPECT_EQ(human_bytes(652 * MiB), "652 MiB");
}

TEST(MemoryCheck, RefusesWhatClearlyCannotFitAndWarnsWhenClose) {
  const MemoryCheckMode mode(nullptr);
  HostLimits h;
  h.mem_available = 1 * GiB;
  const MemoryNeed big = memory_need(65536, 10747784, 655360, true);  // 1.8 GiB
  try {
    check_memory(big, h);
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "this simulation of 65536 ranks needs about 1.8 GiB of memory (65536 ranks × 19 KiB + 10.7 million "
              "events × 40 B and 655360 compute intervals × 56 B as recorded), but only 1.0 GiB are available "
              "(MemAvailable): simulate fewer ranks or iterations, or free memory (WAITLAB_MEMORY_CHECK=warn runs "
              "it anyway)");
  }
  // Swap counts as room (slow, but the run can finish); close to the limit: a warning.
  h.swap_free = 1 * GiB;
  EXPECT_EQ(check_memory(big, h),
            "this simulation of 65536 ranks needs about 1.8 GiB of memory (65536 ranks × 19 KiB + 10.7 million events "
            "× 40 B and 655360 compute intervals × 56 B as recorded), close to the 1.0 GiB available (MemAvailable): "
            "it may swap or be killed by the out-of-memory killer");
  h.swap_free = 0;
  h.mem_available = 2 * GiB;
  EXPECT_NE(check_memory(big, h), "");  // 1.8 of 2 GiB: above 80 %
  h.mem_available = 3 * GiB;
  EXPECT_EQ(check_memory(big, h), "");
  // A cgroup's limit is the smaller room.
  h.cgroup_free = 1 * GiB;
  EXPECT_THROW(check_memory(big, h), InputError);
  h.cgroup_free = 0;
  // Unknown memory (no /proc/meminfo): nothing to compare with.
  EXPECT_EQ(check_memory(big, HostLimits{}), "");
}

TEST(MemoryCheck, AddressSpaceDataAndCommitLimits) {
  const MemoryCheckMode mode(nullptr);
  const MemoryNeed need = memory_need(1024, 0, 0, false);  // 8 GiB of stacks
  HostLimits h;
  h.address_space = 4 * GiB;
  h.self_vsz = 100 * MiB;
  try {
    check_memory(need, h);
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "this simulation of 1024 ranks needs about 8.1 GiB of address space (8 MiB of stack per rank) but the "
              "address-space limit (ulimit -v) is 4.0 GiB: raise it (ulimit -v unlimited) or simulate fewer ranks "
              "or iterations (WAITLAB_MEMORY_CHECK=warn runs it anyway)");
  }
  h = HostLimits{};
  h.data = 4 * GiB;
  EXPECT_THROW(check_memory(need, h), InputError);
  h = HostLimits{};
  h.commit_free = 4 * GiB;  // vm.overcommit_memory=2
  try {
    check_memory(need, h);
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("with vm.overcommit_memory=2 only 4.0 GiB can still be committed"),
              std::string::npos)
        << e.what();
  }
  // WAITLAB_MEMORY_CHECK=warn: the first problem as a warning; =off: nothing.
  {
    const MemoryCheckMode warn("warn");
    EXPECT_EQ(check_memory(need, h).rfind("this simulation of 1024 ranks commits about", 0), 0u);
  }
  {
    const MemoryCheckMode off("off");
    EXPECT_EQ(check_memory(need, h), "");
  }
}

TEST(MemoryCheck, TheResultFileMustFitInTmpdirAndUnderTheFileSizeLimit) {
  const MemoryCheckMode mode(nullptr);
  const MemoryNeed need = memory_need(4096, 6568784, 409600, false);  // heat1d 4096 × 100
  EXPECT_EQ(need.result_bytes, 6568784ull * 40 + 409600ull * 56);   // 272 MiB
  HostLimits h;
  h.temp_dir = "/small";
  h.temp_free = 100 * MiB;
  try {
    check_memory(need, h);
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "this simulation of 4096 ranks writes its trace of about 272 MiB (6.6 million events) into /small "
              "(TMPDIR), which has 100 MiB free: set TMPDIR to a directory with more room, or simulate fewer ranks "
              "or iterations (WAITLAB_MEMORY_CHECK=warn runs it anyway)");
  }
  h.temp_free = 1 * GiB;
  EXPECT_EQ(check_memory(need, h), "");
  h.file_size = 64 * MiB;
  try {
    check_memory(need, h);
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "this simulation of 4096 ranks writes its trace of about 272 MiB (6.6 million events) into one file, "
              "but the file-size limit (ulimit -f) is 64 MiB: raise it (ulimit -f unlimited) or simulate fewer "
              "ranks or iterations (WAITLAB_MEMORY_CHECK=warn runs it anyway)");
  }
}

TEST(MemoryCheck, ReadsThisHost) {
  const HostLimits h = read_host_limits();
  EXPECT_GT(h.mem_available, 0u);
  EXPECT_GT(h.max_map_count, 0);
  EXPECT_GT(h.self_rss, 0u);
  EXPECT_GE(h.self_vsz, h.self_rss);
  EXPECT_GT(h.memory_limit(), 0u);
  EXPECT_LE(h.memory_limit(), h.mem_available);
  EXPECT_FALSE(h.temp_dir.empty());
  EXPECT_GT(h.temp_free, 0u);
}

TEST(MemoryWatch, WarnsAt90PercentOfWhatWasAvailable) {
  MemoryWatch w;
  w.base = 30 * MiB;
  w.estimate = 500 * MiB;
  w.limit = 1 * GiB;
  EXPECT_EQ(detail::memory_warning(30 * MiB + 900 * MiB, w), "");
  EXPECT_EQ(detail::memory_warning(30 * MiB + 950 * MiB, w),
            "the simulation has grown to 950 MiB of memory, 90 % of the 1.0 GiB available when it started "
            "(estimated need: 500 MiB); it may swap or be killed by the out-of-memory killer");
  w.limit = 0;  // unknown: never
  EXPECT_EQ(detail::memory_warning(100 * GiB, w), "");
}

// A run refused before it starts: the error comes from the parent, nothing is forked.
TEST(MemoryCheck, ARunThatCannotFitIsRefusedBeforeItStarts) {
  const MemoryCheckMode mode(nullptr);
  auto o = options();
  ListWorkload w(std::vector<std::vector<Action>>(16));
  struct rlimit old = {};
  ASSERT_EQ(getrlimit(RLIMIT_AS, &old), 0);
  // 16 ranks need 128 MiB of stacks beyond what this process maps already.
  struct rlimit low = old;
  low.rlim_cur = virtual_bytes() + 64 * MiB;
  ASSERT_EQ(setrlimit(RLIMIT_AS, &low), 0);
  std::string error;
  try {
    simulate(cluster(16), w, {}, o);
  } catch (const InputError& e) {
    error = e.what();
  } catch (const std::exception& e) {
    error = std::string("not an InputError: ") + e.what();
  }
  setrlimit(RLIMIT_AS, &old);
  EXPECT_EQ(error.rfind("this simulation of 16 ranks needs about ", 0), 0u) << error;
  EXPECT_NE(error.find(" of address space (8 MiB of stack per rank) but the address-space limit (ulimit -v) is "),
            std::string::npos)
      << error;
}

}  // namespace
}  // namespace waitlab::sim::test
