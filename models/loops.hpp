// waitlab::models — the iterations of a replayed trace, from the loop structure of its calls.
//
// Promise: find_loop() looks for the period of a replayed trace's main loop in its actions
// and split_iterations() numbers the compute actions by it, for traces that name no
// iteration region (every TI trace: TI has no regions). A "step" of a rank is one compute
// interval and the actions up to the next one (the last interval, followed by the program's
// end, is no step); its signature hashes those actions' kinds,
// peers, roots, sizes and regions (not the compute amounts, which vary, nor the tags, which
// codes often number by iteration). The period is
// the smallest number of steps k after which the signatures repeat: for k = 1..kMaxPeriod the
// share of steps i with sig[i] = sig[i + k] in a window of at most kWindow steps from the
// middle of the rank's steps, on up to kSampleRanks ranks spread over the trace (boundary
// ranks of a stencil or sweep make other calls but repeat with the same period). A rank's
// period is the smallest k whose share is at least kAccept and within kTolerance of the best
// share of any k; the trace's is the most common period of the sampled ranks (ties: the
// smallest), if they have at least kMinRepeats repetitions; the number of iterations N is the
// most compute intervals of an agreeing rank over the period. Each rank's compute intervals are
// then split into N iterations of equal length: intervals / N on that rank (a heat code: 1,
// every interval; Sweep3D: the blocks of the eight octant sweeps; a corner rank of a sweep
// has fewer, where two blocks meet with no call between them and the trace has one interval
// for both). A rank whose intervals do not divide by N (set-up before the loop) puts the rest
// in its last iteration; split_iterations() counts these ranks. When no period is found the
// caller keeps one iteration per compute interval and says so. Cost: at most
// kSampleRanks × kWindow × kMaxPeriod signature comparisons plus one pass over the actions.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "models/action.hpp"

namespace waitlab::models {

struct Loop {
  int period = 0;       // steps per iteration of the agreeing sampled ranks; 0: no loop found
  int iterations = 0;   // N: the most compute intervals of an agreeing rank / period
  int ranks_sampled = 0;
  int ranks_agreeing = 0;  // sampled ranks with this period
  double share = 0;        // the agreeing ranks' lowest share of repeating steps at this period
};

inline constexpr int kMaxPeriod = 2048;
inline constexpr int kWindow = 20000;
inline constexpr int kSampleRanks = 8;
inline constexpr int kMinRepeats = 3;
inline constexpr double kAccept = 0.9;
inline constexpr double kTolerance = 0.02;

// `rank(r)` gives rank r's actions (only the sampled ranks' are asked for).
Loop find_loop(int ranks, const std::function<std::vector<Action>(int)>& rank);
Loop find_loop(const std::vector<std::vector<Action>>& actions);

// The iterations of every rank's compute intervals: rank r's k-th compute action belongs to
// iteration min(k / per_rank[r], iterations − 1), per_rank[r] = max(1, intervals[r] / iterations).
struct IterationSplit {
  std::vector<std::int32_t> per_rank;
  int iterations = 0;  // the iterations some rank has (≤ the `iterations` asked for)
  int uneven = 0;      // ranks whose intervals do not divide evenly
};
IterationSplit split_iterations(const std::vector<std::size_t>& intervals, int iterations);

}  // namespace waitlab::models
