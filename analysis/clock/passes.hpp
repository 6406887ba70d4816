// waitlab::clock — the passes of clock correction on one shard (internal to analysis/clock;
// docs/clock-correction.md).
//
// Promise: every function here is called by every process, also those owning no location, and
// gives each process the serial result for its owned ranks (the times of their events, bit for
// bit) and the serial totals on every process (integer sums, exact maxima): count_violations the
// violations of the clock condition, fit_linear and apply_linear the linear correction,
// forward_replay the logical clocks' visit in happened-before order on the engine's causal
// forward replay (linear.cpp, forward.cpp),
// clamp and clc the two logical clocks (clc.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "analysis/clock/graph.hpp"
#include "analysis/trace/clock.hpp"

namespace waitlab::clock {

// The time of an owned rank's event.
using TimeOf = std::function<Time(Rank rank, std::uint32_t event)>;

// The violations of the clock condition at the times `time` gives, over all processes.
std::uint64_t count_violations(const engine::Shard& shard, const Graph& g, engine::Transport& transport,
                               double lmin, const TimeOf& time);

// One rank's linear map: t' = I0 + (t − Ir)·b from two points, or t + d from one.
struct Affine {
  enum Kind : std::uint8_t { kIdentity, kTwoPoint, kOffset };
  Kind kind = kIdentity;
  double i0 = 0, ir = 0, b = 1, d = 0;
  Time operator()(Time t) const {
    switch (kind) {
      case kTwoPoint:
        return i0 + (t - ir) * b;
      case kOffset:
        return t + d;
      case kIdentity:
        break;
    }
    return t;
  }
};

// The linear correction's maps of the owned ranks (from owned.first), from the Leave times of
// MPI_Init and MPI_Finalize on each and on rank 0; measures max_offset and max_drift (over all
// processes); changes nothing.
std::vector<Affine> fit_linear(const engine::Shard& shard, engine::Transport& transport,
                               trace::ClockReport& rep);
// Applies them to the owned ranks' events and ground-truth intervals; ranks_linear over all processes.
void apply_linear(const Owned& owned, const std::vector<Affine>& maps, engine::Transport& transport,
                  trace::ClockReport& rep);

// What a logical clock does at each event, visited in happened-before order: the new time from the
// old one and c, the constraint's bound + l_min (−∞ if none).
class Rule {
 public:
  virtual ~Rule() = default;
  virtual Time place(Rank r, std::uint32_t event, Time old, Time c) = 0;
};

// Visits every owned event in an order consistent with happened-before across all ranks
// (engine::CausalReplay), setting its time to rule.place(…): an event with a constraint waits
// until the events it depends on have their final time. A dependency cycle (only a corrupt
// matching makes one) is broken, when every unfinished rank waits, at the lowest such rank's
// blocked event, without the constraints not ready: returns their number over all processes.
std::uint64_t forward_replay(const engine::Shard& shard, const Owned& owned, const Graph& g, double lmin,
                             Rule& rule, engine::Transport& transport);

// The clamping and the controlled logical clock (docs/clock-correction.md), on the owned ranks;
// the report's events_moved, max_shift and constraints_dropped over all processes.
void clamp(const engine::Shard& shard, const Owned& owned, const Graph& g, double lmin,
           engine::Transport& transport, trace::ClockReport& rep);
void clc(const engine::Shard& shard, const Owned& owned, const Graph& g, double lmin,
         engine::Transport& transport, trace::ClockReport& rep);

}  // namespace waitlab::clock
