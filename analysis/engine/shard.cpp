#include "analysis/engine/shard.hpp"

#include <stdexcept>

namespace waitlab::engine {

Shard::Shard(const trace::Trace& trace, const Partition& partition_, LocationRange owned_)
    : defs(trace.defs),
      ranks(partition_.locations()),
      partition(partition_),
      owned(owned_),
      attributes(trace.attributes),
      origin(trace.origin),
      span_begin(trace.span_begin),
      span_end(trace.span_end),
      counters(trace.counters) {}

Shard Shard::of(const trace::Trace& trace, const Partition& partition, int process) {
  if (static_cast<std::size_t>(partition.locations()) != trace.ranks())
    throw std::invalid_argument("engine: the partition's locations are not the trace's ranks");
  Shard s(trace, partition, partition.range(process));
  s.held_locations_.assign(trace.locations.begin() + s.owned.first, trace.locations.begin() + s.owned.last);
  for (const trace::Location& t : trace.threads)
    if (s.owned.holds(t.rank)) s.held_threads_.push_back(t);
  s.locations = s.held_locations_;
  s.threads = s.held_threads_;
  return s;
}

Shard Shard::whole(const trace::Trace& trace) {
  Shard s(trace, Partition::balanced(event_counts(trace), 1), {});
  s.owned = s.partition.range(0);
  s.locations = trace.locations;
  s.threads = trace.threads;
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
