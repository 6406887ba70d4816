// waitlab::trace — clock-skew correction for measured traces (docs/clock-correction.md).
//
// Promise: correct_clocks(trace) makes a measured trace obey the clock condition — no
// receive completes before its send started, no synchronising collective ends on a rank
// before the members it depends on began it (MPI_Finalize is none: it need not
// synchronise; MPI_Alltoallv and members that move no bytes are none either, as in
// Scalasca) — by corrections applied in place:
//   - linear: per rank, an affine map t' = a_r + b_r·t that puts the rank's Leave of
//     MPI_Init and of MPI_Finalize on rank 0's (offset and constant drift);
//   - clc: Scalasca's controlled logical clock (Becker et al. 2009, as Scalasca 2.6 runs
//     it): a forward pass in happened-before order that moves a violating event to
//     constraint + l_min and keeps every local interval to at least γ = 0.99999 of what it
//     was, then a backward pass that spreads each jump over the events before it, as far as
//     the earlier sends' slack allows;
//   - clamp: the forward pass with a constant shift per rank and no backward pass (waitlab's
//     first correction, kept as a mode).
// Mode::Auto corrects only a trace with violations, applies the linear map only if it lowers
// their number (the trace names no host per location, so only the violations can show that
// the ranks had separate clocks) and repairs what is left with the clc, keeping min_latency
// rather than Scalasca's 1 µs (a few violations must not push every faster message too): a
// correction that would add violations is never applied, and a trace without violations
// comes out bit-identical. It counts the violations before and after, and reports what ran
// and why.
// Messages and collective instances are the ones Matching::build finds; what does not match
// constrains nothing. Pure: no output, no files, no exceptions on a malformed trace.
#pragma once

#include <cstdint>
#include <string>

#include "analysis/trace/trace.hpp"

namespace waitlab::trace {

struct ClockOptions {
  enum class Mode {
    Auto,            // none if no violation; linear only if it lowers them; then clc if any are left
    None,            // count only
    Linear,          // the affine map only
    Clamp,           // the forward logical clock with constant shifts only
    LinearAndClamp,  // both, always
    Clc,             // Scalasca's controlled logical clock only (forward and backward pass)
  };
  Mode mode = Mode::Auto;
  // l_min, s: least time from a send (or a begin) to what it enables. Violations are counted
  // against it, and the clamping and Auto's clc keep it.
  double min_latency = 0;
  // Mode::Clc's l_min, s: Scalasca's 1 µs for every message and collective; it keeps
  // max(min_latency, clc_latency).
  double clc_latency = 1e-6;
};

struct ClockReport {
  // Violations of the clock condition: matched messages whose receive-completing event
  // (Recv, IrecvComplete) is earlier than the send event (Send, IsendStart) + l_min, and
  // collective ends (CollEnd; Leave of MPI_Init) earlier than the latest begin they
  // depend on + l_min (docs/clock-correction.md lists the dependency of each operation).
  std::uint64_t violations_before = 0;
  // After the linear map: measured also when Auto computed the map and rejected it;
  // == violations_before if no map was computed.
  std::uint64_t violations_after_linear = 0;
  std::uint64_t violations_after = 0;  // 0 after clc or clamp (unless constraints_dropped)
  std::uint64_t ranks_linear = 0;      // ranks whose timeline the linear correction changed
  std::uint64_t events_moved = 0;      // events the logical clock (clc, clamp) gave a new time
  double max_offset = 0;               // largest |offset| of a rank's clock to rank 0's at MPI_Init, s
  double max_drift = 0;                // largest |rate − 1| of a rank's clock relative to rank 0's
  // Largest |t' − t| over all events that the logical clock (clc, clamp) applied, s: t the
  // time it was given (after the linear map, if that ran), t' the time it left.
  double max_shift = 0;
  // Happened-before constraints the logical clock had to ignore to break a dependency cycle
  // (only an inconsistent matching has one); 0 for a sound trace.
  std::uint64_t constraints_dropped = 0;
  // What ran: "none" | "linear" | "clc" | "linear+clc" | "clamp" | "linear+clamp".
  std::string method = "none";
  // Why: the mode asked for it, or Auto's evidence ("the linear map would raise violations
  // 23 → 2696: not applied; clc for the 23 left").
  std::string reason;
};

// Parses "auto", "none", "linear", "clamp", "linear+clamp", "clc"; returns false for anything else.
bool parse_clock_mode(const std::string& text, ClockOptions::Mode& mode);
// The inverse: "auto", "none", ...
const char* clock_mode_name(ClockOptions::Mode mode);

// Corrects the trace's timestamps in place (events, and ground-truth intervals if any). Defined in
// analysis/clock (library wl_clock, which its callers link): the replay engine's clock correction
// (analysis/clock/correct.hpp) run on one process — one implementation for the serial run and the
// run over MPI. This layer holds only the options, the report and the declaration.
ClockReport correct_clocks(Trace& trace, const ClockOptions& options = {});

}  // namespace waitlab::trace
