// waitlab::engine — what one process of the engine replays: its shard of the trace.
//
// Promise: a Shard holds the trace's definitions (by reference: they must outlive it) and its
// global attributes, origin, declared span and counter kinds, the number of locations L, the
// contiguous range of locations it owns and those locations themselves (from owned.first), with
// their ranks' further threads (by rank, thread). Shard::of cuts one from a whole Trace; the
// per-location readers come later (plan §6.7). After match_shard (shard_matching.hpp) its
// `matching` holds the owned locations' calls and call paths after every event — indexed by
// global location, empty for the locations it does not own — on the global call-path tree, and
// the messages an owned location sends or receives.
#pragma once

#include <vector>

#include "analysis/engine/partition.hpp"
#include "analysis/trace/match.hpp"
#include "analysis/trace/trace.hpp"

namespace waitlab::engine {

struct Shard {
  const trace::Definitions& defs;
  Location ranks = 0;  // L, the trace's locations (ranks)
  Partition partition;  // of all locations over the processes
  LocationRange owned;
  std::vector<trace::Location> locations;  // the owned ranks' MPI threads, from owned.first
  std::vector<trace::Location> threads;    // the owned ranks' further threads, by (rank, thread)
  std::vector<trace::Attribute> attributes;
  trace::Origin origin = trace::Origin::Simulated;
  trace::Time span_begin = 0;
  trace::Time span_end = -1;
  std::uint8_t counters = 0;
  trace::Matching matching;

  // The shard of `process` under `partition` (whose locations must be the trace's ranks;
  // throws std::invalid_argument otherwise).
  static Shard of(const trace::Trace& trace, const Partition& partition, int process);
  // The location `l` (owned; throws std::out_of_range otherwise).
  const trace::Location& location(Location l) const;
};

// Events per location of a whole trace (what Partition::balanced takes).
std::vector<std::uint64_t> event_counts(const trace::Trace& trace);

}  // namespace waitlab::engine
