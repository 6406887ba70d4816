// waitlab::analysis — the critical path's backward walk as a token between the engine's
// processes (issue 32, plan §4.3).
//
// Promise: walk_path — called by every process, also those owning no rank — walks back from the
// given event of `end_rank` by the rules of critpath.hpp (ALGORITHMS.md §4: at a wait state with a
// cause, jump to the cause rank when the waiting ended, else take the activity after each event),
// with every process's own data only: the process owning the current rank walks it; a wait state
// with a cause needs the Enter of the cause call, which the cause rank's owner has, so the token
// goes there with the waiting call's events up to the walk's (their times and call paths); that
// process walks on through them, deciding the jump at each, lands in its own call when it jumps,
// and sends the token back only if the walk leaves the waiting call without a jump (one parcel
// per jump, two per waiting call passed without one). The path's last segment travels
// with the token (so segments merge across a jump as in one process, whoever emits them); a
// finished segment stays where it was emitted, numbered in emission order, and all are gathered in
// path order at the end. Whoever ends the walk tells every other process. The path — segments,
// start, end, jumps, completeness — is the same bits on every process as on one, whatever the
// partition and the order in which parcels arrive (only one parcel of the walk is ever in flight).
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/engine/shard.hpp"
#include "analysis/engine/transport.hpp"
#include "analysis/trace/match.hpp"
#include "analysis/waitstate/waitstate.hpp"

namespace waitlab::analysis {

// A stretch of the critical path: one rank in one call path from start to end.
struct PathSegment {
  Rank rank = 0;
  CallPathId path = 0;
  Time start = 0;
  Time end = 0;
};

inline constexpr engine::Channel kCriticalPathChannel = 0xFE30;

// Where the path begins and ends, and at which wait states it may jump (critpath.hpp's promise):
// Waitlab — from the end rank's last event to the first event of the rank reached, jumping at
// every wait state with a cause; Scalasca — from the Enter of the end rank's MPI_Finalize to the
// Enter of MPI_Init of the rank reached, no jump at Wait at Init/Finalize or Early Scan.
enum class PathBounds : std::uint8_t { Waitlab = 0, Scalasca };

struct WalkedPath {
  std::vector<PathSegment> segments;  // in time order
  Time start = 0, end = 0;
  std::uint64_t jumps = 0;
  bool complete = true;
};

inline constexpr std::uint32_t kNoCall = 0xFFFFFFFF;

// The walk starts at `end_rank`'s last event or, under Scalasca's bounds, at the Enter of its
// call `end_call` (its MPI_Finalize; kNoCall: none, the last event); `budget` bounds its steps
// (the serial walk's: events + 2·instances + 16 of the trace).
WalkedPath walk_path(const engine::Shard& shard, const trace::Matching& m, const WaitStateResult& w,
                     engine::Transport& transport, Rank end_rank, std::uint32_t end_call, std::uint64_t budget,
                     PathBounds bounds);

}  // namespace waitlab::analysis
