// waitlab::analysis — wait states with Scalasca 2.6 semantics (ALGORITHMS.md §2).
//
// Promise: wait_states(trace, matching) is a pure function that finds every wait-state
// instance of the patterns below, attributes it to the call path of the MPI call on the
// waiting rank, and names the rank and call that caused it (the delaying side of the
// synchronisation point; none for the completion patterns). Values are clamped at 0, and
// values below 1 ps (the rounding of the clock arithmetic) count as 0.
//
// Deliberate choices, documented in docs/analyses.md:
//  - A multi-wait call (MPI_Waitall) carries at most one point-to-point wait state: the
//    largest Late Sender instance among the receives it completes (Scalasca's rule), or,
//    when larger, the largest Late Receiver instance among its sends, so that a call never
//    waits longer than it lasts.
//  - Late Sender, wrong order is a subset of Late Sender (as in Scalasca's metric tree):
//    the table lists it beside Late Sender, and totals and ratios count it once.
//  - MPI_Init and MPI_Finalize are barriers on MPI_COMM_WORLD, with Enter/Leave times.
//  - MPI_Alltoallv is no N×N synchronisation (Scalasca's rule: ranks that exchange no data
//    need not wait for each other), unless WaitStateOptions::alltoallv_nxn.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "analysis/engine/shard.hpp"
#include "analysis/engine/transport.hpp"
#include "analysis/trace/match.hpp"
#include "analysis/trace/trace.hpp"

namespace waitlab::analysis {

using trace::CallPathId;
using trace::Rank;
using trace::Time;

enum class Pattern : std::uint8_t {
  LateSender = 0,
  LateSenderWrongOrderSameSource,       // subset of LateSender
  LateSenderWrongOrderDifferentSource,  // subset of LateSender
  LateReceiver,
  WaitAtBarrier,
  BarrierCompletion,
  WaitAtNxN,
  NxNCompletion,
  LateBroadcast,
  EarlyReduce,
  EarlyScan,
  WaitAtInit,      // waitlab's own: Wait at Finalize's rule at MPI_Init (Scalasca 2.6 has none)
  WaitAtFinalize,
  InitCompletion,  // Scalasca's "MPI Initialization Completion": Barrier Completion's rule at MPI_Init
  Count_
};
inline constexpr std::size_t kPatternCount = static_cast<std::size_t>(Pattern::Count_);

// Time differences below a picosecond are the rounding of the clock arithmetic: no waiting,
// no delay (wait states and delay-cost profiles use the same resolution).
inline constexpr double kTimeResolution = 1e-12;

std::string_view pattern_name(Pattern p);   // "late_sender": CSV and JSON keys
std::string_view pattern_title(Pattern p);  // "Late Sender": for people
bool is_subset_pattern(Pattern p);          // the wrong-order refinements of Late Sender
// Patterns whose instances are synchronisation points with a delaying rank (the delay
// analysis and the critical path follow them); completion patterns have none.
bool has_cause(Pattern p);

// One wait-state instance.
struct WaitState {
  Rank rank = 0;
  std::uint32_t call = 0;  // index into Matching::calls[rank]
  Pattern pattern = Pattern::LateSender;
  double seconds = 0;
  Rank cause_rank = trace::kNoRank;  // the delaying rank (kNoRank for completion patterns)
  std::uint32_t cause_call = 0;      // its call at the synchronisation point
};

// One row of the [pattern × call path × rank] table.
struct WaitEntry {
  Pattern pattern = Pattern::LateSender;
  CallPathId path = 0;
  Rank rank = 0;
  double seconds = 0;
  std::uint64_t count = 0;
};

// The order of the table: (pattern, path, rank).
inline bool wait_table_order(const WaitEntry& a, const WaitEntry& b) {
  return std::tie(a.pattern, a.path, a.rank) < std::tie(b.pattern, b.path, b.rank);
}

struct WaitStateOptions {
  // Count MPI_Alltoallv as N×N (Wait at N×N, N×N Completion), as waitlab did before it
  // followed Scalasca, which ignores it (docs/analyses.md has the measured effect).
  bool alltoallv_nxn = false;
};
// An N×N collective by Scalasca's classes (and the options): Wait at N×N's operations.
bool is_nxn_collective(trace::MpiOp op, const WaitStateOptions& options);

struct WaitStateResult {
  WaitStateOptions options;          // those it was found with
  std::vector<WaitState> instances;  // value > 0 only, sorted by (rank, call, pattern)
  std::vector<std::size_t> rank_first;  // instances of rank r: [rank_first[r], rank_first[r+1])
  std::vector<WaitEntry> table;      // sorted by (pattern, path, rank)
  std::array<double, kPatternCount> total{};
  std::array<std::uint64_t, kPatternCount> count{};
  std::array<double, kPatternCount> max{};  // largest single instance
  double wall_time = 0;       // latest event − earliest event, s
  std::size_t ranks = 0;
  double total_waiting = 0;   // every pattern, subsets counted once
  double wait_ratio = 0;      // total_waiting / (wall_time × ranks)
  double ratio(Pattern p) const;
  // Index range in `instances` of the wait states of (rank, call): [first, second).
  std::pair<std::size_t, std::size_t> of_call(Rank r, std::uint32_t call) const;
};

// The wait states of a trace: the replay engine's run below with one process holding every rank.
WaitStateResult wait_states(const trace::Trace& trace, const trace::Matching& matching,
                            const WaitStateOptions& options = {});

// The replay engine's run (issue 32), called by every process with its shard and the shard's
// matching (engine::match_shard): a forward exchange carries each message's partner times to the
// side that waits (partners.hpp), collective instances combine their members' begins and ends
// exactly, and every owned rank's instances are found locally by the rules above. The result holds
// the owned ranks' instances (rank_first spans every rank; the others' ranges are empty) and their
// table rows; wall_time, the totals, counts, maxima and ratios are those of the whole trace, the
// serial bits for any number of processes (folded in rank order).
WaitStateResult wait_states(const engine::Shard& shard, const trace::Matching& matching, engine::Transport& transport,
                            const WaitStateOptions& options = {});

}  // namespace waitlab::analysis
