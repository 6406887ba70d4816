// waitlab::trace — clock-skew correction for measured traces (docs/clock-correction.md).
//
// Promise: correct_clocks(trace) makes a measured trace obey the clock condition — no
// receive completes before its send started, no synchronising collective ends on a rank
// before the other members began it (MPI_Finalize is none: it need not synchronise) — by
// two corrections, applied in place:
//   - linear: per rank, an affine map t' = a_r + b_r·t that puts the rank's Leave of
//     MPI_Init and of MPI_Finalize on rank 0's (offset and constant drift);
//   - clamp: the forward part of Scalasca's controlled logical clock: events are visited in
//     happened-before order and an event that violates the condition moves forward to
//     constraint + min_latency; later events on its rank move by the same amount.
// It counts the violations before and after, and reports what each correction changed. A
// trace without violations under Mode::Auto comes out bit-identical. Messages and
// collective instances are the ones Matching::build finds; what does not match constrains
// nothing. Pure: no output, no files, no exceptions on a malformed trace. Linear in the
// number of events (after the matcher).
#pragma once

#include <cstdint>
#include <string>

#include "analysis/trace/trace.hpp"

namespace waitlab::trace {

struct ClockOptions {
  enum class Mode {
    Auto,            // count violations; none: change nothing; else linear, then clamp if needed
    None,            // count only
    Linear,          // the affine map only
    Clamp,           // the controlled logical clock only
    LinearAndClamp,  // both, always
  };
  Mode mode = Mode::Auto;
  double min_latency = 0;  // l_min, s: least time from a send (or a begin) to what it enables
};

struct ClockReport {
  // Violations of the clock condition: matched messages whose receive-completing event
  // (Recv, IrecvComplete) is earlier than the send event (Send, IsendStart) + l_min, and
  // collective ends (CollEnd; Leave of MPI_Init) earlier than the latest begin they
  // depend on + l_min (docs/clock-correction.md lists the dependency of each operation).
  std::uint64_t violations_before = 0;
  std::uint64_t violations_after_linear = 0;  // == violations_before if linear did not run
  std::uint64_t violations_after = 0;         // 0 after clamping (unless constraints_dropped)
  std::uint64_t ranks_linear = 0;             // ranks whose timeline the linear correction changed
  std::uint64_t events_moved = 0;             // events the clamping moved
  double max_offset = 0;                      // largest |offset| of a rank's clock to rank 0's at MPI_Init, s
  double max_drift = 0;                       // largest |rate − 1| of a rank's clock relative to rank 0's
  double max_shift = 0;                       // largest forward shift the clamping applied, s
  // Happened-before constraints the clamping had to ignore to break a dependency cycle
  // (only an inconsistent matching has one); 0 for a sound trace.
  std::uint64_t constraints_dropped = 0;
  std::string method = "none";  // "none" | "linear" | "clamp" | "linear+clamp": what ran
};

// Parses "auto", "none", "linear", "clamp", "linear+clamp"; returns false for anything else.
bool parse_clock_mode(const std::string& text, ClockOptions::Mode& mode);
// The inverse: "auto", "none", ...
const char* clock_mode_name(ClockOptions::Mode mode);

// Corrects the trace's timestamps in place (events, and ground-truth intervals if any).
ClockReport correct_clocks(Trace& trace, const ClockOptions& options = {});

}  // namespace waitlab::trace
