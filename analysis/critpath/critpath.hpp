// waitlab::analysis — the critical path and its indicators (papers 001/002; ALGORITHMS.md §4).
//
// Promise: critical_path(trace, matching, waits) follows the longest path without wait
// states backwards from the end: it starts on the rank that enters MPI_Finalize last (or,
// without MPI_Finalize, the rank whose last event is latest) and, whenever the current
// activity is a wait state with a cause, jumps to the delaying rank at the moment the
// waiting ended (the sender entering its send, the last rank entering the barrier, ...).
// Its bounds (CriticalPathOptions::bounds) are waitlab's — from that rank's last event back
// to the first event of the rank the walk reaches, jumping at every wait state with a cause —
// or Scalasca 2.6's (scout's CriticalPath.pattern) — from the Enter of that last MPI_Finalize
// back to the Enter of MPI_Init on the rank the walk reaches, with no jump at Wait at Init,
// Wait at Finalize or Early Scan (scout has none there); a rank without MPI_Init/MPI_Finalize
// falls back to waitlab's bound on that side.
// It returns the path as segments (rank, call path, start, end), the critical-path profile
// (seconds per call path on the path: its sum is end − start of the path, the wall time
// when all ranks start together, as MPI_Init makes them), the critical-path imbalance per
// call path, max(0, cp(c) − avg_p processing_p(c)), and the performance-impact split of
// the allocation P × T:
//   critical-path activities = Σ_c P·min(cp(c), avg(c)),
//   critical imbalance impact = Σ_c P·max(0, cp(c) − avg(c))   (these two sum to P·T'),
//   non-critical-path activities = Σ_c P·max(0, avg(c) − cp(c)) (processing off the path),
// with avg(c) = Σ_p (time_p(c) − waiting_p(c)) / P and T' the path's length.
//
// It runs on the replay engine (issue 32; plan §4.3): every process calls it with its shard, and
// the walk is a token passed between them — the process owning the current rank walks it back
// with its own data, and a wait with a cause asks the cause rank's owner, which knows when its
// call began, to decide the jump (and land in its call) or to send the token back. The result is
// the serial one to the bit on every process, for any number of processes and delivery order.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/critpath/walk.hpp"  // PathSegment, and the walk on the engine
#include "analysis/engine/shard.hpp"
#include "analysis/engine/transport.hpp"
#include "analysis/trace/match.hpp"
#include "analysis/waitstate/waitstate.hpp"

namespace waitlab::analysis {

// PathBounds (walk.hpp): where the path begins and ends, at which wait states it may jump.
std::string_view path_bounds_name(PathBounds b);  // "waitlab", "scalasca"
std::string path_bounds_text(PathBounds b);       // one line for people

struct CriticalPathOptions {
  PathBounds bounds = PathBounds::Waitlab;
};

struct CallPathImpact {
  CallPathId path = 0;
  double on_path = 0;        // cp(c), s
  double time = 0;           // Σ_p time_p(c) (exclusive), s
  double waiting = 0;        // Σ_p waiting_p(c), s
  double average = 0;        // (time − waiting) / P, s
  double imbalance = 0;      // max(0, cp(c) − average), s
};

struct CriticalPathResult {
  std::vector<PathSegment> segments;    // in time order
  std::vector<CallPathImpact> profile;  // every call path with time, sorted by path id
  Time start = 0, end = 0;              // of the path
  double length = 0;                    // end − start = Σ segments
  std::size_t ranks = 0;
  double critical_activities = 0;       // the performance-impact split, rank-seconds
  double critical_imbalance = 0;
  double noncritical_activities = 0;
  std::uint64_t jumps = 0;              // rank changes along the path
  bool complete = true;                 // false if the walk had to stop early (inconsistent trace)
  PathBounds bounds = PathBounds::Waitlab;
};

// The critical path of a trace: the replay engine's run below with one process holding every rank.
CriticalPathResult critical_path(const trace::Trace& trace, const trace::Matching& matching,
                                 const WaitStateResult& waits, const CriticalPathOptions& options = {});

// The replay engine's run, called by every process with its shard, the shard's matching
// (engine::match_shard) and the shard's wait states (the sharded wait_states). Where the path ends
// is combined exactly (the last MPI_Finalize's member that began last, first such in communicator
// order; else the lowest rank whose last event is latest); the walk travels as a token; the
// segments are gathered in path order and given to every process; time and waiting per call path
// are folds along the ranks in rank order (time: ranks then events; waiting: instances by rank,
// call, pattern). Every field of the result is the serial one's bits, on every process.
CriticalPathResult critical_path(const engine::Shard& shard, const trace::Matching& matching,
                                 const WaitStateResult& waits, engine::Transport& transport,
                                 const CriticalPathOptions& options = {});

}  // namespace waitlab::analysis
