// waitlab::analysis — what the idle-wave analysis reads of each rank, on the replay engine
// (issue 32, plan §6.5: idle waves are global by nature).
//
// Promise: summarize() — called by every process with its shard, the shard's matching and wait
// states — computes for every rank the shard owns a compact RankSummary (its iteration starts,
// its idle periods with their usual idle, its mean time outside MPI per iteration, the sides its
// receives come from, the ranks it receives from, whether a send of it completed before its
// receive was posted, its injected delays, its first and last event times) and gathers them to
// process 0 in rank order: memory on process 0 ∝ ranks × iterations (8 bytes each) + idle
// periods + communication partners, not events. What is per (rank, iteration) beyond the
// starts stays with the rank's owner: the medians of the iterations' lengths and times outside
// and inside MPI are exact order statistics over every process (engine::median), and what a
// rank usually idles and its mean compute per iteration are functions of its own data. Each summary is a function of its rank's data
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
  // From its wait states, sorted by start (stable), each with its usual idle (IdlePeriod::usual):
  // the median over the rank's iterations of the idle at the same position in the iteration.
  // On the owner only: process 0 gets every rank's in Summaries::periods.
  std::vector<IdlePeriod> periods;
  std::vector<std::uint32_t> calls;  // on the owner: each period's call (index into Matching::calls[rank])
  double usual_idle = 0;          // the sum of its usual idle over the positions (with starts)
  // Its mean time outside MPI per iteration (iterations 1 .. n − 2, the middle 80 %), if it has
  // at least 3 such iterations.
  double exec_mean = 0;
  bool has_exec_mean = false;
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
  // Medians over every rank's iterations 1 .. n − 2 (n ≥ 3 starts), on every process: the
  // iteration's length, its time outside MPI and in MPI (not Init/Finalize).
  double period_median = 0, exec_median = 0, comm_median = 0;
  std::vector<RankSummary> of;  // one per rank on process 0; empty elsewhere
  // Process 0: every rank's idle periods, by rank, each rank's by start — decoded straight into
  // one list (the result's, moved: never held twice).
  std::vector<IdlePeriod> periods;
  std::size_t ranks() const { return of.size(); }
};

Summaries summarize(const engine::Shard& shard, const trace::Matching& matching, const WaitStateResult& waits,
                    engine::Transport& transport);

// Helpers the analysis shares with the summaries.
bool is_idle_pattern(Pattern p);  // the patterns whose waiting is an idle period
double median(std::vector<double> v);  // 0 if empty; the mean of the middle two if even
// The mean of the middle 80 % (0 if empty): a one-off delay or a rare long detour does not make
// a rank slow.
double trimmed_mean(std::vector<double> v);
// The length of iteration k (1 ≤ k ≤ starts.size() − 2): from its start to the next.
inline double iteration_length(const std::vector<Time>& starts, std::size_t k) { return starts[k + 1] - starts[k]; }
// The iteration (index into `starts`) holding `time`; −1 before the first.
std::int32_t iteration_at(const std::vector<Time>& starts, Time time);
// Signed rank distance from `from` to `to`, the shorter way round on a ring of P ranks when
// the direct distance exceeds half the ranks.
int offset(Rank from, Rank to, std::size_t P);

}  // namespace waitlab::analysis::idle
