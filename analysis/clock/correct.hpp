// waitlab::clock — clock-skew correction on the replay engine (docs/clock-correction.md, issue 32).
//
// Promise: correct_clocks — called by every process of a run, also those owning no location —
// matches the shard (match_shard) and corrects the times of its owned locations' events (and
// ground-truth intervals) in place, exactly as trace::correct_clocks (analysis/trace/clock.hpp)
// corrects them on the whole trace, and returns the same ClockReport on every process: bit for
// bit, for every mode, any number of processes and any delivery order (rules D1–D7 of
// docs/plans/issue-32-replay-engine.md). trace::correct_clocks is this function run on one
// process (Shard::whole, SerialTransport): one implementation. The locations the shard views are
// changed, so they must not be const objects (a Shard::of copy, or Shard::whole/Shard::of_part of
// a trace or part the caller may change). Afterwards shard.matching is the matching of the
// corrected shard (matching does not depend on times; the members' begin and end times are the
// corrected ones).
#pragma once

#include "analysis/engine/shard.hpp"
#include "analysis/engine/transport.hpp"
#include "analysis/trace/clock.hpp"

namespace waitlab::clock {

trace::ClockReport correct_clocks(engine::Shard& shard, engine::Transport& transport,
                                  const trace::ClockOptions& options = {});

}  // namespace waitlab::clock
