// waitlab::analysis — root-cause delay costs (paper 002, Algorithm 1; ALGORITHMS.md §3).
//
// Promise: delay_costs(trace, matching, waits) replays the synchronisation points (the
// wait-state instances that have a delaying rank) backwards in time, with Scalasca 2.6's
// rules (docs/analyses.md, *Delay costs*). At each point S, where rank r waits w and rank d
// delayed it, the synchronisation interval I_S starts when the first of the two left its call
// of their previous synchronisation of any kind (a message or 1-to-N/N-to-1 collective at
// which one waited for the other, an N-to-N collective in which some rank waited) and ends
// at each rank's call of S. Both ranks' processing-time profiles over I_S give
// Δ[c] = max(p_d[c] − p_r[c], 0); with scale = min(w / (ΣΔ + W_d), 1) (Scalasca's cap) and
// s = scale / w, d's call paths get short-term costs w·s·Δ[c] under S's kind and long-term
// costs γ_long[k]·s·Δ[c] under the kind k of the wait they finally cause; each wait state x
// of d inside I_S gets γ_long[x] += (w·[kind(S)] + γ_long)·s·x. Waiting without a cause
// inside the trace (ΣΔ + W_d = 0, or the part of a wait longer than its causes) is reported
// as unattributed. Invariant: short + long + unattributed = the waiting time of all
// synchronisation points.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <tuple>
#include <vector>

#include "analysis/engine/shard.hpp"
#include "analysis/engine/transport.hpp"
#include "analysis/trace/match.hpp"
#include "analysis/waitstate/waitstate.hpp"

namespace waitlab::analysis {

// The kinds of synchronisation Scalasca's delay metrics distinguish.
enum class DelayKind : std::uint8_t { LateSender = 0, LateReceiver, Barrier, NxN, OneToN, NToOne, Count_ };
inline constexpr std::size_t kDelayKindCount = static_cast<std::size_t>(DelayKind::Count_);
std::string_view delay_kind_name(DelayKind k);  // "late_sender", "barrier", "n_to_n", "1_to_n", "n_to_1"
// The kind of a wait-state pattern that has a cause (Early Scan counts as n-to-n; Wait at
// Init/Finalize as barrier, for the synchronisation they are, though no cost is charged for
// them: docs/analyses.md).
DelayKind delay_kind(Pattern p);

// Delay costs of one [kind × call path × rank] cell.
struct DelayEntry {
  DelayKind kind = DelayKind::LateSender;
  CallPathId path = 0;
  Rank rank = 0;
  double short_term = 0;
  double long_term = 0;
};

// How one wait-state instance is classified.
struct WaitClass {
  double direct = 0;       // caused by extra work of the delaying rank
  double indirect = 0;     // caused by the delaying rank's own waiting (propagated)
  double propagating = 0;  // the part of this wait that causes later wait states
  double terminal = 0;     // seconds − propagating
  double gamma_long = 0;   // long-term cost this wait carries (what it caused downstream)
};

// The order of the cost table: (kind, path, rank).
inline bool cost_table_order(const DelayEntry& a, const DelayEntry& b) {
  return std::tie(a.kind, a.path, a.rank) < std::tie(b.kind, b.path, b.rank);
}

struct DelayResult {
  std::vector<DelayEntry> table;      // sorted by (kind, path, rank)
  std::vector<WaitClass> classes;     // parallel to WaitStateResult::instances
  std::array<double, kDelayKindCount> short_total{};
  std::array<double, kDelayKindCount> long_total{};
  double short_term = 0;              // all kinds
  double long_term = 0;
  double unattributed = 0;            // waiting at points whose cause is not in the trace
  double sync_waiting = 0;            // waiting time of all synchronisation points
  double direct = 0, indirect = 0, propagating = 0, terminal = 0;  // over all instances with a cause
  std::uint64_t sync_points = 0;
  // What Scalasca 2.6 would report differently on this trace, by its two defects that waitlab
  // does not copy (docs/analyses.md, "Differences from Scalasca 2.6"):
  //  - the long-term waiting its CalculateScales/addCosts leaves out at collectives: for each
  //    wait x of a collective's delaying rank that lies between two of the points at which it
  //    last synchronised with the waiters (or after the last), (w + γ)·s·x of the latest such
  //    point's waiters — exactly what waitlab passes on there and scout does not;
  //  - the sender's time at stake in its Late Receiver completion: per Late Receiver wait whose
  //    sender left its call after the receiver left its own, that difference — processing that
  //    scout drops from the sender's next interval, when that wait starts one (an upper bound).
  double scalasca_collective_long_term_lost = 0;
  double scalasca_late_receiver_at_stake = 0;
};

// The delay costs of a trace: the replay engine's run below with one process holding every rank.
DelayResult delay_costs(const trace::Trace& trace, const trace::Matching& matching, const WaitStateResult& waits);

// The replay engine's run (issue 32), called by every process with its shard, the shard's
// matching and its wait states (the sharded wait_states): each synchronisation point's waiting
// side computes the interval and its profile, the delaying side the scale and the costs, γ_long
// flows backwards in the serial order (replay.hpp). `classes` covers the shard's instances, the
// table its delaying ranks' rows; every total is the whole trace's, the serial bits for any
// number of processes.
DelayResult delay_costs(const engine::Shard& shard, const trace::Matching& matching, const WaitStateResult& waits,
                        engine::Transport& transport);

}  // namespace waitlab::analysis
