// waitlab::trace — the part of a trace (trace_part.hpp): made from the locations a reader read,
// cut from a whole trace, and a whole trace made from the part that holds every rank. The
// readers per format are reached through trace_io.hpp (read_trace_part, location_event_counts).
#include "analysis/trace/trace_part.hpp"

#include <stdexcept>
#include <utility>

namespace waitlab::trace {

namespace {

// What a part and a whole trace hold alike: definitions, locations, threads and the global
// values, moved from `from` to `to`.
template <typename To, typename From>
void move_held(To& to, From& from) {
  to.defs = std::move(from.defs);
  to.locations = std::move(from.locations);
  to.threads = std::move(from.threads);
  to.attributes = std::move(from.attributes);
  to.has_truth = from.has_truth;
  to.origin = from.origin;
  to.span_begin = from.span_begin;
  to.span_end = from.span_end;
  to.counters = from.counters;
}

}  // namespace

TracePart make_part(Trace&& read, std::size_t ranks, Rank first, std::vector<std::uint64_t> event_counts) {
  TracePart p;
  move_held(p, read);
  p.ranks = ranks;
  p.first = first;
  p.event_counts = std::move(event_counts);
  return p;
}

Trace to_trace(TracePart&& part) {
  if (part.first != 0 || part.locations.size() != part.ranks)
    throw std::invalid_argument("trace: a part that does not hold every rank is no whole trace");
  Trace t;
  move_held(t, part);
  return t;
}

TracePart part_of(const Trace& t, Rank first, Rank last) {
  if (first < 0 || last < first || static_cast<std::size_t>(last) > t.ranks())
    throw std::invalid_argument("trace: ranks [" + std::to_string(first) + ", " + std::to_string(last) +
                                ") of a trace of " + std::to_string(t.ranks()) + " ranks");
  Trace held = t;
  held.locations.erase(held.locations.begin() + last, held.locations.end());
  held.locations.erase(held.locations.begin(), held.locations.begin() + first);
  std::erase_if(held.threads, [&](const Location& l) { return l.rank < first || l.rank >= last; });
  std::vector<std::uint64_t> counts;
  for (const Location& l : t.locations) counts.push_back(l.events.size());
  return make_part(std::move(held), t.ranks(), first, std::move(counts));
}

}  // namespace waitlab::trace
