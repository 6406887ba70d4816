// waitlab::sim (internal) — one simulation run inside the calling process.
//
// Promise: run_here() builds SimGrid's engine and the platform, runs one MPI instance whose
// ranks execute their action streams through the MPI API, and returns the trace's definitions
// and attributes (RunResult::trace, without locations) while the ranks' records go to a
// Recording (sim/recording.hpp), which writes them as the trace's locations.
// SimGrid 3.32 supports this once per process (simulate() calls it in a forked child).
// Throws InputError for bad input (bad actions, a deadlock, a platform SimGrid rejects) and
// std::runtime_error for internal failures. Progress lines go to `progress_fd` (-1: none).
#pragma once

#include <functional>

#include "models/perturbation.hpp"
#include "models/platform.hpp"
#include "models/workload.hpp"
#include "sim/options.hpp"
#include "sim/recording.hpp"
#include "sim/resources.hpp"
#include "sim/smpi_config.hpp"

namespace waitlab::sim::detail {

// `phase` is told "platform" before the platform is built and "run" after, so that a crash
// inside SimGrid (which aborts on some malformed platform files) can be blamed on the input.
// `watch`: the memory this process may use; a warning goes to `progress_fd` when the run
// comes near it (with or without progress lines), and progress lines show the resident memory.
RunResult run_here(const models::PlatformDesc& platform, const models::Workload& workload,
                   const models::Perturbations& perturbations, const RunOptions& options, int progress_fd,
                   Recording& recording, const std::function<void(const char*)>& phase = {},
                   const MemoryWatch& watch = {});

// One progress report: "simulated 0.050000 s, 25.0 % done, about 30 s left, 0/4096 ranks
// finished, 10.0 s wall, 652 MiB memory". `fraction` is how far the ranks got through their
// action streams (their mean, 0..1; negative: unknown, no percentage); the time left is the
// wall time so far scaled by (1 − fraction)/fraction, given once 0.5 % are done and 1 s has
// passed. `resident`: the simulation process's resident memory in bytes (0: not shown).
std::string progress_text(double simulated, double fraction, int finished, int ranks, double wall, bool final,
                          std::uint64_t resident = 0);

// The warning when the simulation process's resident memory (beyond what it shares with its
// parent) passes 90 % of the memory that was available when it started; "" below that.
std::string memory_warning(std::uint64_t resident, const MemoryWatch& watch);

}  // namespace waitlab::sim::detail
