// waitlab::analysis — the counterfactual footprint of a perturbation (issue 34; ALGORITHMS.md §7,
// "The footprint of a delay"; docs/analyses.md, "Counterfactual footprint").
//
// Promise: footprint(run, twin, ...) is a pure function of two traces of the same program: the
// run and its twin — the same scenario, seed and noise without one perturbation (a simulator's
// ground truth: only it can run the same execution twice). Every rank makes the same events in
// both, in the same order (it checks that, event by event; a perturbation that changes what the
// program does, e.g. the order in which wildcard receives match, has no footprint and is an
// InputError naming the rank and the event). From the pairs it measures
//   - the shift of each event: its time in the run − its time in the twin (how far the
//     perturbation moved that point of the rank's timeline);
//   - per rank, over its events up to its MPI_Finalize Enter (after it the rank only waits for
//     the last one, and every rank leaves with the run's end): the largest shift (the peak, and
//     when), the shift at that Enter (or at its last event without one), and the largest idle period of the rank in the run and in the twin (the idle
//     periods of the idle-wave analysis: with noise, the twin's is the background a wave decays to);
//   - the shift matrix: rank × time bins of the run's time, each cell the shift of the rank's last
//     event before the bin's end (0 before its first; from the MPI_Finalize Enter on, that
//     Enter's) — the idle-period matrix's bins, so that the two pictures lie side by side;
//   - where a single rank was delayed (the source): per signed distance from it, the farthest rank
//     each way whose peak shift is at least 50 %, 10 %, 5 % and 1 % of the injected time, next to
//     how far the idle-wave tracker followed the wave (its fronts' reach): a wave that "decayed"
//     can still have shifted every rank it spread over;
//   - at the end of the run: how much of the injected time reached it (the run's wall time −
//     the twin's, MPI_Init to MPI_Finalize) and how much the ranks' slack absorbed (the rest).
// What was removed comes from the two traces' ground truth: the causes (imbalance, noise, delay)
// the run has and the twin has none of, and, when the twin keeps some delays, the delays it lacks
// rank by rank. The injected time is theirs. Noise the twin keeps is not counted even where the
// totals differ: a rank whose timeline moved meets the same noise process at other points of its
// computation (that difference is part of the footprint, not its cause). The source is the one
// rank the removed delays lengthened, if there is exactly one. Traces without ground truth (not
// simulated) are an InputError.
// Nothing here prints or reads files.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/idlewave/idlewave.hpp"
#include "analysis/trace/trace.hpp"

namespace waitlab::analysis {

// The fractions of the injected time whose reach is reported.
inline constexpr std::array<double, 4> kFootprintLevels = {0.5, 0.1, 0.05, 0.01};

struct FootprintRank {
  Rank rank = 0;
  int offset = 0;                // rank − source (0 without a source)
  double peak_shift = 0;         // s, the shift of largest magnitude up to the MPI_Finalize Enter
  Time peak_time = 0;            // the run's time of that event
  double end_shift = 0;          // s, at the Enter of MPI_Finalize (else the rank's last event)
  double largest_idle = 0;       // s, the rank's largest idle period in the run
  double twin_largest_idle = 0;  // and in the twin
};

// Farthest distance each way with a peak shift ≥ level × injected (0: none beyond the source).
struct FootprintReach {
  double level = 0;
  int down = 0;
  int up = 0;
};

// Rank × time bins of the run's time: each cell the rank's shift, s.
struct ShiftMatrix {
  Time t0 = 0;
  double bin = 0;
  std::size_t bins = 0;
  std::size_t ranks = 0;
  std::vector<float> shift;  // row-major [rank][bin]
  double at(std::size_t rank, std::size_t bin_index) const { return shift[rank * bins + bin_index]; }
};

struct FootprintResult {
  std::vector<std::string> removed;  // the causes removed: "delay", "noise", "imbalance"
  Rank source = trace::kNoRank;      // the one rank the removed delays lengthened, if one
  double injected = 0;               // s the removed causes added to the run
  double run_wall = 0, twin_wall = 0;
  double reached_end = 0;  // run_wall − twin_wall
  double absorbed = 0;     // injected − reached_end
  std::vector<FootprintRank> ranks;
  std::vector<FootprintReach> reach;  // one per kFootprintLevels (with a source)
  int wave_down = 0, wave_up = 0;     // the idle-wave tracker's reach of the source's wave
  std::uint64_t events = 0;           // event pairs compared
  ShiftMatrix shift;  // on the bins of the run's idle-period matrix
  double reached_fraction() const { return injected > 0 ? reached_end / injected : 0.0; }
};

// `run_idle` and `twin_idle`: the idle-wave analysis of each trace (its idle periods; the run's
// matrix gives the bins, its waves the tracker's reach).
FootprintResult footprint(const trace::Trace& run, const trace::Trace& twin, const IdleWaveResult& run_idle,
                          const IdleWaveResult& twin_idle);

}  // namespace waitlab::analysis
