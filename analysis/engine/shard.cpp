#include "analysis/engine/shard.hpp"

#include <stdexcept>

namespace waitlab::engine {

Shard::Shard(const trace::Definitions& defs_, const Partition& partition_, LocationRange owned_)
    : defs(defs_), ranks(partition_.locations()), partition(partition_), owned(owned_) {}

namespace {

template <typename T>
void copy_globals(const T& from, Shard& to) {
  to.attributes = from.attributes;
  to.origin = from.origin;
  to.span_begin = from.span_begin;
  to.span_end = from.span_end;
  to.counters = from.counters;
  to.has_truth = from.has_truth;
}

}  // namespace

Shard Shard::of(const trace::Trace& trace, const Partition& partition, int process) {
  if (static_cast<std::size_t>(partition.locations()) != trace.ranks())
    throw std::invalid_argument("engine: the partition's locations are not the trace's ranks");
  Shard s(trace.defs, partition, partition.range(process));
  copy_globals(trace, s);
  s.held_locations_.assign(trace.locations.begin() + s.owned.first, trace.locations.begin() + s.owned.last);
  for (const trace::Location& t : trace.threads)
    if (s.owned.holds(t.rank)) s.held_threads_.push_back(t);
  s.locations = s.held_locations_;
  s.threads = s.held_threads_;
  return s;
}

Shard Shard::whole(const trace::Trace& trace) {
  Shard s(trace.defs, Partition::balanced(event_counts(trace), 1), {});
  copy_globals(trace, s);
  s.owned = s.partition.range(0);
  s.locations = trace.locations;
  s.threads = trace.threads;
  return s;
}

Shard Shard::of_part(const trace::TracePart& part, const Partition& partition, int process) {
  const LocationRange owned = partition.range(process);
  if (static_cast<std::size_t>(partition.locations()) != part.ranks || owned.first != part.first ||
      owned.last != part.last())
    throw std::invalid_argument("engine: the part read is not the partition's range of this process");
  Shard s(part.defs, partition, owned);
  copy_globals(part, s);
  s.locations = part.locations;
  s.threads = part.threads;
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
