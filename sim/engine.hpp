// waitlab::sim — the SMPI engine: simulate one MPI run of N ranks executing action streams.
//
// Promise: simulate() runs SimGrid 3.32's SMPI embedded in this program (no smpirun) in a
// forked child process — SimGrid cannot run two engines in one process — and returns the
// recorded Trace with ground truth (or writes it to RunOptions::trace_file without holding it:
// the child keeps its records on disk as it runs, sim/recording.hpp). Timestamps come from the simulated
// clock only; host code costs no simulated time. Under Semantics::Waitlab sends smaller than the eager
// threshold return without waiting for their receiver (as under SMPI's defaults) while
// the simulation cost stays linear (docs/engine.md explains how); Semantics::SmpiDefault
// uses SimGrid's default settings, for cross-checking small runs.
// A deadlock ends with an InputError naming the blocked ranks and what they wait for, and so
// does a message to a rank that has already finished. Before forking, the memory the run
// needs is estimated and compared with what the host allows (sim/resources.hpp): a run that
// clearly cannot fit is refused (InputError naming the estimate, the limit and the fix), one
// that comes close gets a warning on stderr. The child dies with its parent, and a SIGINT,
// SIGTERM or SIGHUP to the parent stops both (util/signals.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "models/perturbation.hpp"
#include "models/platform.hpp"
#include "models/workload.hpp"
#include "sim/options.hpp"
#include "sim/smpi_config.hpp"

namespace waitlab::sim {

// Simulates; throws InputError on bad input (unknown XML file, too few hosts, deadlock, a
// run too large for the host) and std::runtime_error on internal failure (the child crashed).
// When the process is interrupted (util/signals.hpp) it does not return: it exits once the
// simulation process has ended.
RunResult simulate(const models::PlatformDesc& platform, const models::Workload& workload,
                   const models::Perturbations& perturbations, const RunOptions& options);

}  // namespace waitlab::sim
