// waitlab::analysis — what the idle-wave analysis reads of each rank, on the replay engine
// (issue 32, plan §6.5: idle waves are global by nature).
//
// Promise: summarize() — called by every process with its shard, the shard's matching and wait
// states — computes for every rank the shard owns a compact RankSummary (its iteration starts,
// its idle periods, its iterations' lengths and time outside and inside MPI, the first call of
// each iteration, the sides its receives come from, the ranks it receives from, whether a send
// of it completed before its receive was posted, its injected delays, its first and last event
// times) and gathers them to process 0 in rank order: memory ∝ ranks × iterations + idle
// periods + communication partners, not events. Each summary is a function of its rank's data
// (and of the trace: the region whose Enters mark the iterations is chosen on process 0 from
// every rank's counts and broadcast; a message's receive post comes from the receiver in one
// exchange round), so process 0's summaries are the same for every partition and delivery
// order, and are what the serial analysis read from the whole trace.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/engine/shard.hpp"
#include "analysis/engine/transport.hpp"
#include "analysis/idlewave/period.hpp"
#include "analysis/trace/match.hpp"

namespace waitlab::analysis::idle {

// An injected one-off delay of a compute interval (ground truth), longer than the resolution.
struct InjectedDelay {
  std::int32_t iteration = -1;
  Time start = 0, end = 0;
  double delay = 0;
};

struct RankSummary {
  std::vector<Time> starts;        // its iteration starts (ground truth, or the Enters of the iteration region)
  std::vector<IdlePeriod> periods;  // from its wait states, in their order (usual: 0)
  // Iterations 1 .. n − 2 (n ≥ 3 starts): length, time outside MPI, time in MPI (not Init/Finalize).
  std::vector<double> period_of, exec_of, comm_of;
  std::vector<std::uint32_t> first_call;  // per iteration start: the first call entered at or after it
  std::vector<Rank> senders;              // the other ranks that send it messages, ascending
  std::vector<InjectedDelay> delays;      // by start
  std::uint8_t sides = 0;                 // its receive-completing calls receive from: 1 lower, 2 higher ranks
  std::uint64_t receiving_calls = 0;      // its calls that complete a receive from another rank
  std::uint64_t one_sided_calls = 0;      // of those, the calls receiving from one side only
  bool eager = false;                     // a message it sent left the send call before its receive was posted
  bool has_events = false;
  Time first_time = 0, last_time = 0;     // its first and last event's times
};

struct Summaries {
  bool has_truth = false;
  bool iterations_from_truth = false;
  std::vector<RankSummary> of;  // one per rank on process 0; empty elsewhere
  std::size_t ranks() const { return of.size(); }
};

Summaries summarize(const engine::Shard& shard, const trace::Matching& matching, const WaitStateResult& waits,
                    engine::Transport& transport);

// Helpers the analysis shares with the summaries.
bool is_idle_pattern(Pattern p);  // the patterns whose waiting is an idle period
double median(std::vector<double> v);  // 0 if empty; the mean of the middle two if even
// The iteration (index into `starts`) holding `time`; −1 before the first.
std::int32_t iteration_at(const std::vector<Time>& starts, Time time);
// Signed rank distance from `from` to `to`, the shorter way round on a ring of P ranks when
// the direct distance exceeds half the ranks.
int offset(Rank from, Rank to, std::size_t P);

}  // namespace waitlab::analysis::idle
