// waitlab::sim — what a simulation needs of the host, and what the host allows.
//
// Promise: estimate_memory() says, before anything runs, how much memory and address space
// the simulation process will need, from what the engine knows: the ranks (SimGrid's state
// and the touched part of every actor's stack; the stacks' 8 MiB each of address space) and
// the events and compute intervals it will record (counted on the ranks' action streams, or a
// scattered sample of them for very large workloads; a rank's stream longer than a cap is
// extrapolated by its iterations, so the work is bounded whatever the iteration count).
// read_host_limits() reads what the host allows: MemAvailable and SwapFree
// (/proc/meminfo), the cgroup's memory limit, the address-space and data limits (ulimit -v,
// -d), the commit limit under vm.overcommit_memory=2, vm.max_map_count, and for the result
// file the free space of $TMPDIR and the file-size limit (ulimit -f). check_memory()
// refuses with an InputError naming the estimate, the limit and the fix when the run clearly
// cannot fit, and returns a warning when it comes close. The per-rank and per-event figures
// are measured (docs/engine.md §8). WAITLAB_MEMORY_CHECK=warn turns the refusals into
// warnings (for a host whose limits waitlab misreads); =off skips the check.
#pragma once

#include <cstdint>
#include <string>

#include "models/workload.hpp"
#include "sim/options.hpp"

namespace waitlab::sim {

// Calibration (docs/engine.md §8, the peak resident memory of the simulation process measured
// with heat1d, halo2d, sweep2d and allreduce_loop on 256 to 65,536 ranks): kBaseBytes +
// ranks × kRankBytes (SimGrid's and SMPI's state of an actor, the touched part of its stack,
// the engine's per-rank state) + kGrowth × the bytes of the events and compute intervals
// recorded (the vectors' unused capacity, allocator overhead).
inline constexpr std::uint64_t kBaseBytes = 22ull << 20;
inline constexpr std::uint64_t kRankBytes = 19ull << 10;
inline constexpr double kGrowth = 1.25;
inline constexpr std::uint64_t kStackBytes = 8ull << 20;  // SimGrid's contexts/stack-size

struct HostLimits {
  std::uint64_t mem_available = 0;  // MemAvailable (bytes; 0: unknown)
  std::uint64_t swap_free = 0;      // SwapFree
  std::uint64_t cgroup_free = 0;    // the cgroup's memory limit minus its usage (0: no limit)
  std::uint64_t address_space = 0; // RLIMIT_AS (0: unlimited)
  std::uint64_t data = 0;           // RLIMIT_DATA (0: unlimited)
  std::uint64_t commit_free = 0;    // CommitLimit − Committed_AS, under vm.overcommit_memory=2 only
  long max_map_count = 0;           // vm.max_map_count
  std::uint64_t self_rss = 0;       // this process now: shared with the child after fork
  std::uint64_t self_vsz = 0;
  // The simulation writes its result (the trace) into a temporary directory: its free space
  // (0: unknown) and the file-size limit (ulimit -f; 0: unlimited).
  std::string temp_dir;             // $TMPDIR or /tmp
  std::uint64_t temp_free = 0;
  std::uint64_t file_size = 0;
  // The memory a new process can use: the smaller of MemAvailable and the cgroup's room (0: unknown).
  std::uint64_t memory_limit() const;
};
HostLimits read_host_limits();

struct MemoryNeed {
  int ranks = 0;
  double events = 0;   // estimated events recorded
  double truths = 0;   // estimated compute intervals recorded
  bool heap_stacks = false;
  std::uint64_t resident = 0;       // peak resident memory of the simulation process
  std::uint64_t address_space = 0;  // new mappings of the child (stacks included)
  std::uint64_t result_bytes = 0;   // the trace as the child hands it over (.wlt: as recorded)
  bool held = true;                 // the trace comes back into memory (RunOptions::return_trace)
  std::uint64_t actions = 0;        // estimate_memory's work: the actions it drew from the streams
  std::uint64_t collective_bytes = 0;  // the largest collective's buffers (in resident)
  std::string collective;              // "Alltoall on 16 ranks, buffers of 16 GiB"
  std::string breakdown() const;   // "65,536 ranks × 20 KiB + 5.2 million events × 60 B + ..."
  std::string breakdown_records() const;  // breakdown() without the collective
  void add_collective(double bytes, const std::string& text);  // counts it in resident, address_space
};
// Counts the actions of every rank, up to `budget` actions (then extrapolates from the ranks
// counted), and at most `rank_budget` of one rank's: the rest of a longer stream is
// extrapolated from its complete iterations (Action::iteration; exact for the synthetic
// workloads, whose iterations are all alike) or, without them, from the share of the stream
// consumed (ActionStream::done()); a stream that tells neither is counted to its end. So about
// budget + rank_budget actions are drawn at most, whatever the iterations: 2 ranks × 2^30
// iterations cost 2 × (rank_budget + 1). MemoryNeed::actions says how many.
inline constexpr std::uint64_t kRankActionBudget = 1ull << 20;
MemoryNeed estimate_memory(const models::Workload& workload, const RunOptions& options, const HostLimits& limits,
                           std::uint64_t budget = 50'000'000, std::uint64_t rank_budget = kRankActionBudget);
// The pure part, for tests: `events` and `truths` as counted; `held`: the trace is read back
// into memory (else only the simulation's bounded record buffers count).
MemoryNeed memory_need(int ranks, double events, double truths, bool heap_stacks, bool held = true);

// Throws InputError when the run clearly cannot fit; returns a warning ("" if none).
std::string check_memory(const MemoryNeed& need, const HostLimits& limits);

// What the simulation process watches while it runs (the progress line shows its memory; a
// warning when it approaches the limit).
struct MemoryWatch {
  std::uint64_t base = 0;      // resident memory shared with the parent at the fork
  std::uint64_t estimate = 0;  // MemoryNeed::resident
  std::uint64_t limit = 0;     // HostLimits::memory_limit() at the start (0: unknown)
};

// This process's resident memory and address space (/proc/self/statm), bytes.
std::uint64_t resident_bytes();
std::uint64_t virtual_bytes();
// "1.8 GiB", "652 MiB", "20 KiB", "512 B".
std::string human_bytes(std::uint64_t bytes);

namespace detail {
// Whether the actors' stacks go without guard pages, all in the heap (one mapping), because
// two mappings per rank (stack and guard page, SimGrid's default) and kMappingHeadroom for
// everything else would exceed the kernel's vm.max_map_count (65,530 by default: 32,765
// ranks at most). docs/engine.md §8.
inline constexpr long kMappingHeadroom = 2048;
inline constexpr int kHeapStackThreshold = 32 * 1024 * 1024;  // glibc's largest mmap threshold
bool unguarded_stacks(int ranks, long max_map_count);
}  // namespace detail

}  // namespace waitlab::sim
