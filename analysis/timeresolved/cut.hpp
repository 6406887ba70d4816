// waitlab::analysis — a cut: the part of a run the POP metrics are computed on, as modelfactors
// users cut a trace to a region of interest or a range of iterations before they compute the
// factors (issue 33, point 9). `waitlab pop` and `waitlab analyze -a timeresolved` take one.
//
// Promise:
//   - parse_time_range("1.5s:2s"), parse_region("solve"), parse_iterations("solve:3-7") read what
//     users write (durations with their unit: s, ms, us, ns; a side left empty is open:
//     "2s:" is from 2 s to the end) and throw InputError naming the option otherwise.
//   - resolve_cut() turns the spec into time on a trace (every process of the replay engine gets
//     the same pieces; the one-process run is the serial one):
//       time range  [A, B) as given, in the trace's own time (a Paraver trace's starts at 0);
//       region R    the time in which some rank or thread is inside an instance of R: the union
//                   over every rank and thread of its outermost instances (Enter of a region
//                   named R to its matching Leave; a recursive call is inside its caller's
//                   instance; an instance left open ends at the location's last event). A name
//                   no region has but an OpenMP construct's kind ("parallel region", "parallel
//                   function", "task": trace::omp_kind_name) stands for those intervals
//                   (Location::omp);
//       iterations  with a region, R:F-L: per rank or thread the F-th to the L-th of its
//                   outermost instances of R (1-based, both included), and the cut is one piece
//                   [min Enter of the F-th, max Leave of the L-th] over the ranks and threads
//                   that have an L-th instance; without a region, F-L: the simulated workload's
//                   iterations F to L (0-based, as scenarios count them, from the trace's ground
//                   truth): from the earliest start of a computation of iteration F to the
//                   latest end of one of iteration L (L at most the workload's last iteration).
//     InputError when nothing matches: no region of that name (the regions named), no
//     instance, fewer than L instances on every location, no ground truth, or F > L.
//   - The time-resolved analysis clips a cut to the run's span (clip_cut) and computes on its
//     pieces only: T = their total length, each unit's useful time and its counter samples
//     clipped to them, T_ideal = Σ_k I(b_k) − I(a_k). Windows lie on the cut's own time axis
//     (the pieces laid end to end). A cut that leaves nothing of the span is an InputError.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "analysis/trace/trace.hpp"
#include "analysis/engine/fwd.hpp"

namespace waitlab::analysis {

enum class CutKind : std::uint8_t { None = 0, TimeRange, Region, Iterations };
std::string_view cut_kind_name(CutKind k);  // "none", "time_range", "region", "iterations"

// What the user asked for.
struct CutSpec {
  CutKind kind = CutKind::None;
  std::string option;  // the option that gave it ("--time-range"), for errors
  std::string text;    // its value as written ("1.5s:2s", "solve:3-7")
  trace::Time from = 0, to = 0;       // TimeRange: [from, to) (±∞ when open)
  std::string region;                 // Region, Iterations (empty: the workload's iterations)
  std::uint64_t first = 0, last = 0;  // Iterations: first to last, both included
  bool any() const { return kind != CutKind::None; }
};

CutSpec parse_time_range(const std::string& text, const std::string& option = "--time-range");
CutSpec parse_region(const std::string& text, const std::string& option = "--region");
CutSpec parse_iterations(const std::string& text, const std::string& option = "--iterations");
// The one cut of three options (each "" if not given): InputError if more than one is.
CutSpec parse_cut(const std::string& time_range, const std::string& region, const std::string& iterations);

using Piece = std::pair<trace::Time, trace::Time>;  // [first, second)

// The spec on a trace: its pieces, ordered and disjoint; no pieces and kind None: the whole run.
struct Cut {
  CutSpec spec;
  std::vector<Piece> pieces;
  std::uint64_t instances = 0;  // Region, Iterations: the region instances the pieces hold
  std::uint64_t locations = 0;  // Region, Iterations: the ranks and threads that have them
  bool any() const { return spec.kind != CutKind::None; }
};

Cut resolve_cut(const trace::Trace& trace, const CutSpec& spec);
Cut resolve_cut(const engine::Shard& shard, const CutSpec& spec, engine::Transport& transport);

// The pieces of `cut` inside [t0, t1] (pieces of zero length dropped); InputError naming the spec
// when none is left.
std::vector<Piece> clip_cut(const Cut& cut, trace::Time t0, trace::Time t1);
double cut_length(const std::vector<Piece>& pieces);

// One line for people: "region solve: 40 instances on 4 ranks and threads, 10 pieces, 1.2 s".
std::string cut_text(const Cut& cut);

}  // namespace waitlab::analysis
