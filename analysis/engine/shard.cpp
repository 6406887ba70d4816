#include "analysis/engine/shard.hpp"

#include <stdexcept>

namespace waitlab::engine {

Shard Shard::of(const trace::Trace& trace, const Partition& partition, int process) {
  if (static_cast<std::size_t>(partition.locations()) != trace.ranks())
    throw std::invalid_argument("engine: the partition's locations are not the trace's ranks");
  const LocationRange owned = partition.range(process);
  Shard s{trace.defs, partition.locations(), partition, owned, {}, {}, trace.attributes, trace.origin,
          trace.span_begin, trace.span_end, trace.counters, {}};
  s.locations.assign(trace.locations.begin() + owned.first, trace.locations.begin() + owned.last);
  for (const trace::Location& t : trace.threads)
    if (owned.holds(t.rank)) s.threads.push_back(t);
  return s;
}

const trace::Location& Shard::location(Location l) const {
  if (!owned.holds(l)) throw std::out_of_range("engine: a location this shard does not own");
  return locations[static_cast<std::size_t>(l - owned.first)];
}

std::vector<std::uint64_t> event_counts(const trace::Trace& trace) {
  std::vector<std::uint64_t> counts;
  counts.reserve(trace.ranks());
  for (const trace::Location& l : trace.locations) counts.push_back(l.events.size());
  return counts;
}

}  // namespace waitlab::engine
