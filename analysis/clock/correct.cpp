// correct_clocks of correct.hpp, and trace::correct_clocks (analysis/trace/clock.hpp) on it.
#include "analysis/clock/correct.hpp"

#include <algorithm>
#include <string>

#include "analysis/clock/passes.hpp"
#include "analysis/engine/serial_transport.hpp"
#include "analysis/engine/shard_matching.hpp"

namespace waitlab::clock {

namespace {

using trace::ClockOptions;
using trace::ClockReport;

// Auto: nothing without violations; the linear map only if it lowers their number (the trace
// names no host per location: only the violations can show separate clocks, and a map that adds
// some — an MPI_Finalize that does not synchronise gives a false drift — is harm); the clc for what
// is left. Returns whether the map was applied; `clc` whether the clc is to run.
bool decide_auto(const engine::Shard& shard, const Owned& owned, const Graph& g, engine::Transport& transport,
                 double lmin, ClockReport& rep, bool& clc) {
  clc = false;
  if (rep.violations_before == 0) {
    rep.reason = "no violation: nothing to correct";
    return false;
  }
  const std::vector<Affine> maps = fit_linear(shard, transport, rep);
  rep.violations_after_linear = count_violations(shard, g, transport, lmin, [&](Rank r, std::uint32_t e) {
    return maps[static_cast<std::size_t>(r - owned.range.first)](owned.events(r)[e].time);
  });
  const std::uint64_t before = rep.violations_before, after = rep.violations_after_linear;
  const bool linear = after < before;
  rep.reason = "the linear map " +
               std::string(linear           ? "lowers"
                           : after > before ? "would raise"
                                            : "would leave") +
               " violations " + std::to_string(before) + " → " + std::to_string(after) +
               (linear ? ": applied" : ": not applied");
  if (linear) {
    apply_linear(owned, maps, transport, rep);
    rep.violations_after = after;
  }
  clc = rep.violations_after > 0;
  if (clc) rep.reason += "; clc for the " + std::to_string(rep.violations_after) + " left";
  return linear;
}

// The corrected members' begin and end times in the shard's matching.
void refresh_members(engine::Shard& shard, const Owned& owned) {
  for (trace::CollMember& mem : shard.matching.members) {
    mem.begin = owned.events(mem.rank)[mem.begin_event].time;
    mem.end = owned.events(mem.rank)[mem.end_event].time;
  }
}

}  // namespace

ClockReport correct_clocks(engine::Shard& shard, engine::Transport& transport, const ClockOptions& options) {
  using M = ClockOptions::Mode;
  ClockReport rep;
  const double lmin = options.min_latency;
  engine::match_shard(shard, transport);
  const Owned owned(shard);
  const Graph g = build_graph(shard, owned, transport);
  const TimeOf now = [&](Rank r, std::uint32_t e) { return owned.events(r)[e].time; };
  rep.violations_before = count_violations(shard, g, transport, lmin, now);
  rep.violations_after_linear = rep.violations_before;
  rep.violations_after = rep.violations_before;
  const M mode = options.mode;
  bool linear = false, clamped = false, logical = false;
  if (mode == M::Auto) {
    linear = decide_auto(shard, owned, g, transport, lmin, rep, logical);
    if (rep.violations_before == 0) return rep;
  } else {
    linear = mode == M::Linear || mode == M::LinearAndClamp;
    clamped = mode == M::Clamp || mode == M::LinearAndClamp;
    logical = mode == M::Clc;
    rep.reason = std::string("mode ") + trace::clock_mode_name(mode);
    if (linear) {
      apply_linear(owned, fit_linear(shard, transport, rep), transport, rep);
      rep.violations_after_linear = count_violations(shard, g, transport, lmin, now);
      rep.violations_after = rep.violations_after_linear;
    }
  }
  if (linear) rep.method = "linear";
  if (clamped) {
    clamp(shard, owned, g, lmin, transport, rep);
    rep.method = linear ? "linear+clamp" : "clamp";
  }
  if (logical) {
    // Mode clc is Scalasca's, with its 1 µs. Auto's keeps min_latency: with 1 µs it would also
    // push every consistent message faster than that (intra-node, shared memory), and the
    // pushes add up along chains (59 µs on the demo scenario's trace for three 0.5 µs
    // violations, 0.56 µs with l_min = 0).
    const double l = mode == M::Clc ? std::max(lmin, options.clc_latency) : lmin;
    clc(shard, owned, g, l, transport, rep);
    rep.method = linear ? "linear+clc" : "clc";
  }
  if (clamped || logical) rep.violations_after = count_violations(shard, g, transport, lmin, now);
  refresh_members(shard, owned);
  return rep;
}

}  // namespace waitlab::clock

namespace waitlab::trace {

ClockReport correct_clocks(Trace& trace, const ClockOptions& options) {
  engine::SerialTransport transport;
  engine::Shard shard = engine::Shard::whole(trace);
  return clock::correct_clocks(shard, transport, options);
}

}  // namespace waitlab::trace
