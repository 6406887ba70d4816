// waitlab::trace — the native binary trace file (.wlt).
//
// Promise: write_wlt/read_wlt round-trip a Trace exactly (bit-identical doubles,
// definitions, attributes, ground truth, worker threads, state intervals, counter samples,
// OpenMP intervals, origin, declared span and counters bits). The file starts with a versioned header
// (magic "WLTRACE\0", format version, byte-order mark) that read_wlt checks; files of the
// previous versions (2: no checksums; 1: nor threads, states, counters, origin, span) still
// read, with the defaults for what they do not hold. Version 3 files carry crc32 checksums
// (zlib) of the header, the definitions, every block of 16384 records and every location, so
// any change to the bytes after writing — a single flipped bit anywhere — is an InputError
// naming the file, the byte offset and what the damaged bytes hold (rank, record range). A
// truncated or corrupt file of any version is rejected with an InputError naming the file and
// the byte offset (and the rank/thread and record when inside a location's arrays), and so is
// a file whose values, references or orders do not hold: non-finite or negative times, events
// going back in time on a location, regions nested deeper than kMaxRegionDepth, a Leave naming
// another region than the one open on its location, peers and communicator members that are no rank of the
// file, unknown event kinds, MPI ops, origins or flags, location i not rank i, an event or
// truth record naming an undefined region or communicator, no MPI_COMM_WORLD, truth records
// without the truth flag or out of order, a thread of no rank or numbered < 1 or out of
// (rank, thread) order, state intervals overlapping or out of order, counter samples out of
// order, OpenMP intervals of an unknown kind, out of order or overlapping one of their kind: a Trace from read_wlt can be indexed without checks and has only finite times.
// Reading allocates no more than the file holds (counts are never trusted). Writing goes to a
// temporary name that is renamed when complete (analysis/trace/atomic_file.hpp), so no
// half-written file is ever left under the final name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "analysis/trace/trace.hpp"
#include "analysis/trace/trace_part.hpp"

namespace waitlab::trace {

// 3 (no OpenMP intervals), 2 (nor checksums) and 1 (nor threads, states, counters, origin, span) still read
inline constexpr std::uint32_t kWltVersion = 4;

void write_wlt(const Trace& t, std::ostream& out);
void write_wlt(const Trace& t, const std::string& path);  // atomic: path.tmp, then rename

// The records of one location given block by block (a simulation's records, kept on disk):
// the counts, then read_events(block, n) and read_truth(block, n) fill the next n records, in
// order, until the counts are reached.
struct LocationSource {
  std::uint64_t events = 0;
  std::uint64_t truth = 0;
  std::function<void(Event*, std::size_t)> read_events;
  std::function<void(ComputeTruth*, std::size_t)> read_truth;
};
// Writes `head` (definitions, attributes, truth flag, origin, span, counters bits; its own
// locations and threads are not written) with `ranks` locations whose records come from
// location(r), called once per rank in order; no threads, state intervals or counter samples.
// The bytes are those write_wlt(t, out) writes for the same trace held in memory.
void write_wlt(const Trace& head, std::size_t ranks, const std::function<LocationSource(Rank)>& location,
               std::ostream& out);

// `name` is used in error messages.
Trace read_wlt(std::istream& in, const std::string& name);
Trace read_wlt(const std::string& path);

// The ranks [first, last) of a .wlt file and their threads (trace_part.hpp): the other
// locations' arrays are seeked over (their counts read), every checksum of the owned ones is
// verified on its own (seeded with the crc32 residue: a damaged byte elsewhere is not this
// part's error), and the owned locations' values are checked as read_wlt checks them, with its
// messages. A location seeked over that runs past the end of the file is reported as read_wlt
// reports the file. read_wlt is this reading with every location owned. `in` must be seekable.
TracePart read_wlt_part(std::istream& in, const std::string& name, Rank first, Rank last);
TracePart read_wlt_part(const std::string& path, Rank first, Rank last);
// The events of every rank, from the counts alone (read_wlt_part(path, 0, 0).event_counts).
std::vector<std::uint64_t> wlt_event_counts(const std::string& path);

}  // namespace waitlab::trace
