// waitlab::analysis — idle waves (ALGORITHMS.md §7; paper 003 and the analytic model of
// Afzal et al.).
//
// Promise: idle_waves(trace, matching, waits) is a pure function that
//   - collects the idle periods of every rank: the time it waits for data, i.e. the Late
//     Sender waiting of receive-completing calls and the waiting in collectives (Wait at
//     NxN, Wait at Barrier, Late Broadcast, Early Reduce, Early Scan; not MPI_Init and
//     MPI_Finalize), and, under rendezvous, the time a send waits for a late receiver (Late
//     Receiver: the rank cannot go on either), each as an interval [start, start + seconds]
//     of simulated or measured time;
//   - bins them into the idle-period matrix (rank × time bins; seconds idle per cell);
//   - finds the iterations of each rank (from the ground truth, or from the user region
//     entered once per iteration) and measures T_exec (time outside MPI) and T_comm (time in
//     MPI), medians over ranks and iterations, and the period as run: the mean length of the
//     iterations no wave passed (without each source's delayed iteration and those holding
//     an idle period of a wave's size);
//   - infers the communication topology from the point-to-point messages: a 1D chain (every
//     rank exchanges with every rank up to d away: distances in ranks, d ranks), a Cartesian
//     grid (neighbour rank offsets ±1, ±nx, ±nx·ny, every message one step along one axis:
//     distances in hops, the Manhattan distance) or another graph (distances in hops);
//   - tracks one idle wave per injected one-off delay (ground truth; a simulated trace without
//     one has no wave), or, on a measured trace, per idle period that stands out (at least
//     half the largest and 10 × the mean idle time per rank and iteration), earliest first,
//     that no wave found before explains: it floods outwards from the source over the
//     communication graph (a chain: rank by rank), each rank at the next distance taking,
//     among its idle periods in the iteration of the earliest front point next to it or the
//     next, starting between half a period before and three periods plus that point's
//     amplitude after it, the largest that continues the front's amplitude (at most 1.25 ×
//     that amplitude + 5 × the median idle time per rank and iteration) and is at least
//     `threshold` × the source's delay and 5 × that median;
//     waves are flooded together, earliest first, so that where two meet the one whose
//     amplitude continues claims the ranks and the other stops there (`met`, naming the
//     survivor);
//   - in a wavefront pipeline (IdleWaveResult::pipeline: a rank's usual idle at each point of
//     its iterations is a quarter of the period or more) does the above on each period's
//     extra idle over the usual, with front points at the periods' ends (when the ranks go
//     on) in the iteration they go on in; no model there (predicted 0), no at_once;
//   - reports fronts: down and up in rank order (on a chain, the two directions) and, on a
//     grid, per axis and sign (the ranks on the axis through the source); per front the speed
//     in distance units per second and per iteration by least squares with R², the amplitude
//     per rank and its decay (seconds lost per distance unit, the negated slope, rounded to
//     the time resolution), `at_once` when every rank it reached idled in the same iteration,
//     and where it stops: the end of the chain, decay below the threshold, another wave, the
//     end of the trace;
//   - compares each front's speed with the model v = σ·d/T_iter, T_iter the measured period,
//     σ and d inferred from the trace (d: the largest rank distance of a message on a chain,
//     1 hop otherwise; σ = 2 for a bidirectional exchange in one-sided phases under
//     rendezvous, i.e. when no send ever completed before its receive was posted; else 1)
//     unless given in the options;
//   - detects self-synchronisation: a slow group (per-rank mean compute per iteration split
//     at its largest relative gap, if that gap exceeds `slow_gap`), the fast ranks' idle
//     time per iteration in the second half of the run over the baseline (the slow ranks'
//     own idle time per iteration: what every rank waits without the slow group) against
//     T_slow − T_fast, the phase of each fast rank's idle periods, and the speed of the
//     synchronisation front.
// Nothing here prints or reads files.
//
// On the replay engine (issue 32) the analysis is global by nature: every process summarises the
// ranks it owns (summary.hpp: iteration starts, idle periods with what the rank usually idles,
// its mean compute per iteration, message partners and sides, injected delays — not their
// events; the medians of T_exec, T_comm and the iteration are exact order statistics over the
// processes), process 0 gathers the summaries in rank order and runs the steps above on them.
// Process 0 gets the whole result, the serial one to the bit; the other processes an empty
// IdleWaveResult (the outputs are written on process 0).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "analysis/engine/shard.hpp"
#include "analysis/engine/transport.hpp"
#include "analysis/idlewave/period.hpp"
#include "analysis/trace/match.hpp"
#include "analysis/trace/trace.hpp"
#include "analysis/waitstate/waitstate.hpp"

namespace waitlab::analysis {

struct IdleWaveOptions {
  double bin_seconds = 0;    // width of a matrix column; 0 = one undisturbed iteration
  int max_bins = 1000;       // automatic width never makes more columns than this
  double threshold = 0.05;   // a front reaches a rank whose idle period is ≥ this × the source's delay
                             // (and ≥ 5 × the median idle per rank and iteration: noise is no front)
  int sigma = 0;             // 0 = inferred from the trace
  int distance = 0;          // 0 = inferred from the trace
  int max_waves = 16;        // waves followed at most: the largest injected delays, or the
                             // first idle periods that stand out
  double slow_gap = 0.03;    // relative gap in per-rank compute that separates a slow group
};

enum class FrontStop : std::uint8_t { Boundary = 0, Decayed, Met, EndOfTrace };
// How distances are counted: rank offsets on a 1D chain, hops on the communication graph.
enum class DistanceMetric : std::uint8_t { Ranks = 0, Hops };
std::string_view distance_metric_name(DistanceMetric m);  // "ranks", "hops"
std::string_view front_stop_name(FrontStop s);  // "boundary", "decayed", "met", "end_of_trace"

struct FrontPoint {
  Rank rank = 0;
  int distance = 0;             // from the source: |rank offset| on a chain, else hops
  Time time = 0;                // start of the idle period
  std::int32_t iteration = -1;  // of the idle period
  double amplitude = 0;         // its length, s
};

// A line fitted by least squares, y = intercept + slope·x, with its coefficient of determination.
struct LineFit {
  double slope = 0;
  double intercept = 0;
  double r2 = 0;  // 1 for a perfect fit (also when every y is equal)
  std::size_t points = 0;
};

// A front's decay is reported as 0 when it changes the amplitude by less than this fraction of
// the front's median amplitude over the distances it reached (a noise-free wave is tilted by
// fractions of a ns per rank where boundary ranks exchange with one neighbour only).
inline constexpr double kNegligibleDecay = 1e-3;

struct Front {
  int direction = 1;  // +1: towards higher ranks ("up"), −1: towards lower ranks ("down")
  int axis = -1;      // −1: every rank on that side in rank order; 0, 1, 2: the ranks on grid
                      // axis x, y, z (MPI_Cart order, z varies fastest) through the source
  std::vector<FrontPoint> points;  // by (distance, rank)
  LineFit by_time;       // distance over time: slope = distance units (ranks or hops) per second
  LineFit by_iteration;  // distance over iterations since the source: slope = units per iteration
                         // (without the last iteration of a front cut short by the chain's end)
  LineFit amplitude;     // amplitude over distance: −slope = decay, s per rank
  double decay_s_per_rank = 0;
  double predicted_ranks_per_s = 0;
  double measured_over_predicted = 0;
  // Every rank it reached idled in the same iteration: nothing travelled, a collective (or a
  // barrier-like exchange) made them wait at once; speeds are 0 then, not infinite.
  bool at_once = false;
  FrontStop stop = FrontStop::Boundary;
  Rank stop_rank = trace::kNoRank;  // last rank reached (the source if none)
  // The wave this front met: with stop == Met, the survivor that took the ranks beyond; else
  // a wave that ended against this front (−1: none). Index into IdleWaveResult::waves.
  int met_wave = -1;
  int reach() const { return static_cast<int>(points.size()); }
};

struct Wave {
  Rank source_rank = 0;
  Time source_time = 0;  // when the delayed computation ended (injected) or the idle period ended
  Time onset = 0;        // where the fronts start looking: the delayed computation's start, or
                         // the start of the idle period the wave was found by
  std::int32_t source_iteration = -1;
  double delay = 0;      // injected delay, or the length of the largest idle period
  bool injected = false;
  Front down;  // direction −1: the ranks below the source
  Front up;    // direction +1: the ranks above it
  std::vector<Front> axes;  // on a grid: per axis −, + (x−, x+, y−, ...); empty otherwise
  std::size_t reached = 0;  // ranks reached in all (down and up)
};

struct SelfSync {
  bool slow_group = false;  // a slow group was found
  bool detected = false;    // and the fast ranks idle about T_slow − T_fast per iteration
  std::vector<Rank> slow_ranks;
  double t_slow = 0, t_fast = 0;       // mean compute per iteration of each group, s
  double expected_idle = 0;            // T_slow − T_fast
  double fast_idle_per_iteration = 0;  // measured over the baseline, second half of the run
  double fast_idle_raw_per_iteration = 0;   // measured, baseline included
  double baseline_idle_per_iteration = 0;   // the slow ranks' own median idle per iteration
  // Per rank (every rank; 0 for slow ranks): mean offset of the rank's longest idle period in
  // an iteration from the earliest start of that iteration over all ranks, second half, s.
  std::vector<double> phase;
  double phase_spread = 0;             // max − min of the fast ranks' phases
  double neighbour_phase_shift = 0;    // median |phase difference| of neighbouring fast ranks
  LineFit front;                       // distance to the nearest slow rank over the iteration it synchronised
};

struct IdleMatrix {
  Time t0 = 0;
  double bin = 0;
  std::size_t bins = 0;
  std::size_t ranks = 0;
  std::vector<float> idle;  // seconds idle, row-major [rank][bin]
  double at(std::size_t rank, std::size_t bin_index) const { return idle[rank * bins + bin_index]; }
};

struct IdleWaveResult {
  std::vector<IdlePeriod> periods;  // sorted by (rank, start)
  double total_idle = 0;
  IdleMatrix matrix;
  std::int32_t iterations = 0;      // most iterations found on a rank
  bool iterations_from_truth = false;
  double iteration_s = 0;  // the measured period: median iteration length as run
  double t_exec_s = 0, t_comm_s = 0;
  DistanceMetric metric = DistanceMetric::Ranks;
  std::vector<int> grid;   // extents of the inferred process grid (MPI_Cart order), empty if none
  bool periodic = false;   // some message goes the short way round a ring or a grid axis
  int distance = 0, sigma = 1;  // d in the metric's units
  double predicted_per_s = 0;   // σ·d/iteration_s (0 without an iteration)
  bool distance_inferred = true, sigma_inferred = true;
  bool eager = true;            // some send completed before its receive was posted (exchanges
                                // completed all at once never show it; their σ is 1 either way)
  bool phased = false;          // receives completed in one-sided phases
  bool bidirectional = false;   // ranks receive from both sides
  // A wavefront pipeline (sweep2d): on a graph, the ranks' usual idle (IdlePeriod::usual)
  // is at least a quarter of the period — they wait at the same points of every iteration
  // while the sweeps fill and drain. A delay is carried by the sweeps within its own
  // iteration at the pipeline's pace (one block step per hop), not one hop per iteration:
  // the model σ·d/T_iter does not apply (predicted_per_s = 0), and the fronts follow the
  // extra idle (period − usual) and the time the ranks go on (the periods' ends).
  bool pipeline = false;
  double threshold_s = 0;       // the smallest idle period the fronts of the largest wave follow
  std::vector<Wave> waves;
  std::size_t waves_left_out = 0;  // injected delays beyond max_waves (the smallest), not followed
  SelfSync self_sync;
};

// The idle waves of a trace: the replay engine's run below with one process holding every rank.
IdleWaveResult idle_waves(const trace::Trace& trace, const trace::Matching& matching,
                          const WaitStateResult& waits, const IdleWaveOptions& options = {});

// The replay engine's run, called by every process with its shard, the shard's matching
// (engine::match_shard) and its wait states (wait_states on the shard). Process 0 gets the
// whole result; every other process an empty one.
IdleWaveResult idle_waves(const engine::Shard& shard, const trace::Matching& matching, const WaitStateResult& waits,
                          engine::Transport& transport, const IdleWaveOptions& options = {});

// Least-squares line through (x[i], y[i]).
LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace waitlab::analysis
