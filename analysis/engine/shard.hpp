// waitlab::engine — what one process of the engine replays: its shard of the trace.
//
// Promise: a Shard holds the trace's definitions (by reference: they must outlive it) and its
// global attributes, origin, declared span, counter kinds and whether it carries ground truth, the number of locations L, the
// contiguous range of locations it owns and those locations themselves (from owned.first), with
// their ranks' further threads (by rank, thread). Shard::of cuts one from a whole Trace (a copy of
// its share); Shard::whole is the one shard of a one-process run, a view of the trace without a
// copy (the trace must outlive it); the per-location readers come later (plan §6.7). After match_shard (shard_matching.hpp) its
// `matching` holds the owned locations' calls and call paths after every event — indexed by
// global location, empty for the locations it does not own — on the global call-path tree, and
// the messages an owned location sends or receives.
#pragma once

#include <span>
#include <vector>

#include "analysis/engine/partition.hpp"
#include "analysis/trace/match.hpp"
#include "analysis/trace/trace.hpp"
#include "analysis/trace/trace_part.hpp"

namespace waitlab::engine {

struct Shard {
  const trace::Definitions& defs;
  Location ranks = 0;  // L, the trace's locations (ranks)
  Partition partition;  // of all locations over the processes
  LocationRange owned;
  std::span<const trace::Location> locations;  // the owned ranks' MPI threads, from owned.first
  std::span<const trace::Location> threads;    // the owned ranks' further threads, by (rank, thread)
  std::vector<trace::Attribute> attributes;
  trace::Origin origin = trace::Origin::Simulated;
  trace::Time span_begin = 0;
  trace::Time span_end = -1;
  std::uint8_t counters = 0;
  bool has_truth = false;  // the trace carries ground truth (its locations' `truth`)
  trace::Matching matching;
  bool matched = false;  // match_shard ran (the clock correction's does): run_analyses_sharded matches no more

  // The shard of `process` under `partition` (whose locations must be the trace's ranks;
  // throws std::invalid_argument otherwise).
  static Shard of(const trace::Trace& trace, const Partition& partition, int process);
  // Every location of `trace`, by reference.
  static Shard whole(const trace::Trace& trace);
  // The shard of `process` from what it read of the trace (trace::read_trace_part over its range
  // of `partition`, which must be the part's ranks; std::invalid_argument otherwise), by
  // reference: the part must outlive the shard.
  static Shard of_part(const trace::TracePart& part, const Partition& partition, int process);
  Shard(Shard&&) = default;
  Shard(const Shard&) = delete;
  // The location `l` (owned; throws std::out_of_range otherwise).
  const trace::Location& location(Location l) const;
  // The time of event `event` of the owned location `l`.
  trace::Time time(Location l, std::uint32_t event) const { return location(l).events[event].time; }

 private:
  Shard(const trace::Definitions& defs_, const Partition& partition_, LocationRange owned_);
  std::vector<trace::Location> held_locations_, held_threads_;  // what `of` copied
};

// Events per location of a whole trace (what Partition::balanced takes).
std::vector<std::uint64_t> event_counts(const trace::Trace& trace);

}  // namespace waitlab::engine
