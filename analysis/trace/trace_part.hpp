// waitlab::trace — reading a trace per location (plan §6.7): each process of the replay engine
// reads only a contiguous range of ranks of a trace, with everything global (definitions,
// attributes, origin, declared span, counter kinds): a TracePart.
//
// Promise: read_trace_part(path, first, last) (trace_io.hpp) holds what read_trace(path)
// holds except that `locations` are only ranks [first, last) (locations[i] is rank first + i)
// and `threads` only those ranks' further threads; every value in it equals the whole
// trace's. The checks that concern one location (values, nesting, peers < L, times,
// checksums) are made for the owned ones, with the serial reader's messages for the same
// defect; definitions are checked by every part. .wlt: the other locations' arrays are seeked
// over, not read (only their counts are), and each owned checksum is verified on its own (a
// damaged byte in another location's arrays is its owner's error, no other part's); OTF2:
// only the owned locations' local definitions and event files are opened (otf2.hpp: two
// values that depend on the events read); Paraver: one pass over the .prv that keeps only the
// owned tasks' records and the communication records they send or receive (paraver.hpp,
// read_paraver_part): the other tasks' event records go through the reader's first pass as
// they are read, for the regions they define and the collective roots they flag, and what
// stays of them is each one's open MPI call, the order its calls met their operations and per
// collective instance the root; every record is checked by every part (they define the
// regions), so a malformed .prv fails every part with the serial reader's message. A TI trace
// is refused as read_trace refuses it. first ≤ last ≤ L, or std::invalid_argument.
// location_event_counts(path) (trace_io.hpp) gives, for every rank of the trace, the weight
// Partition::balanced takes, without keeping the events (a weight only balances: no result
// depends on it): .wlt the events the whole trace has per rank (from the counts alone); OTF2
// the event records the definitions announce per rank's location (records the reader skips or
// converts included); Paraver the records naming the task (a state or event record of one of
// its threads, a communication record it sends or receives), counted in the one pass.
// TracePart::event_counts is the same list. to_trace(part) of the part [0, L) is read_trace's
// Trace: the serial readers of .wlt, OTF2 and Paraver are their part readers over every rank.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/trace/trace.hpp"

namespace waitlab::trace {

struct TracePart {
  Definitions defs;
  std::vector<Location> locations;  // ranks [first, first + locations.size())
  std::vector<Location> threads;    // the owned ranks' further threads, by (rank, thread)
  std::vector<Attribute> attributes;
  bool has_truth = false;
  Origin origin = Origin::Simulated;
  Time span_begin = 0;
  Time span_end = -1;
  std::uint8_t counters = 0;
  std::size_t ranks = 0;  // L, the ranks of the whole trace
  Rank first = 0;
  std::vector<std::uint64_t> event_counts;  // per rank, all L weights (location_event_counts)

  Rank last() const { return first + static_cast<Rank>(locations.size()); }
  bool operator==(const TracePart&) const = default;
};

// The part a reader read: `read`'s definitions, global values, locations (ranks from
// `first` on) and threads, of a trace of `ranks` ranks with these event counts.
TracePart make_part(Trace&& read, std::size_t ranks, Rank first, std::vector<std::uint64_t> event_counts);
// The whole trace of a part that owns every rank (std::invalid_argument otherwise).
Trace to_trace(TracePart&& part);
// The part [first, last) of a whole trace, its event_counts the events of every rank: what
// read_trace_part gives for a .wlt file of `t` (std::invalid_argument unless first ≤ last ≤ L).
TracePart part_of(const Trace& t, Rank first, Rank last);

// location_event_counts and read_trace_part: trace_io.hpp.

}  // namespace waitlab::trace
