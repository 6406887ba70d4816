// waitlab::trace — OTF2 archives (FORMATS.md §1): writing a Trace for Vampir and Scalasca,
// and reading MPI traces back.
//
// Promise: write_otf2(trace, dir) writes `dir/traces.otf2` (+ `traces.def`, `traces/`) with
// the conventions Scalasca relies on: MPI regions named MPI_* with canonical name = name,
// source file "MPI", paradigm MPI and their OTF2 roles (regions with op None and file "MPI",
// e.g. MPI_Comm_split read from Score-P, too, with role FUNCTION; user regions with paradigm
// USER and their source file); one process location group and one CPU-thread location per
// rank, one more CPU-thread location in its rank's group per worker thread (Trace::threads);
// the COMM_LOCATIONS group before the communicator groups (a communicator without
// members, MPI_COMM_SELF, as a COMM_SELF group); counter samples as Metric records of
// PAPI_TOT_INS/PAPI_TOT_CYC accumulated from the start (as Score-P writes them); the origin
// and declared span as archive properties (WAITLAB::ORIGIN, WAITLAB::SPAN_BEGIN/END);
// every event record of ALGORITHMS.md §1 as Score-P writes it (MpiSend/MpiRecv,
// MpiIsend/MpiIsendComplete, MpiIrecvRequest/MpiIrecv, MpiCollectiveBegin/End with the
// root's rank in the communicator and the byte counts). Time is written in nanoseconds
// (timer resolution 1e9 ticks/s, the trace's earliest event at the global offset). The
// archive is written under `dir.tmp` and renamed to `dir` when complete (an existing `dir`
// is replaced); an OTF2 failure throws InputError naming the directory and OTF2's reason.
// The same trace gives a byte-identical archive: the trace identifier that OTF2 makes up at
// random is replaced by one made from the archive's content (crc32 of the definitions, crc32
// of the events; docs/formats.md).
// read_otf2(anchor) reads the MPI part of an archive — one written here or by Score-P — into a
// Trace:
//   - ranks: rank i is the location at index i of the MPI COMM_LOCATIONS group (Score-P: the
//     master thread of process i); without that group, one rank per process location group in
//     id order, carried by its lowest CPU-thread location. The other CPU-thread locations of a
//     rank's group (OpenMP/Pthread workers) are its Trace::threads, numbered 1, 2, ... in id
//     order; every other location (metric locations, ...) is not read and is counted in
//     skipped_locations;
//   - origin: an archive not created by waitlab is Score-P's (Origin::ScoreP) and declares the
//     span [0, trace length / resolution] of its ClockProperties; waitlab's own archives read
//     back with the origin and span of their properties (simulated: none);
//   - counters: Metric records of PAPI_TOT_INS / PAPI_TOT_CYC members (accumulated values as
//     differences to the location's previous value, relative ones as they are) become
//     CounterSamples of their location, and Trace::counters says which were found;
//   - overhead: measurement-system regions (Score-P's TRACE BUFFER FLUSH), BufferFlush records
//     and measurement switched off (MeasurementOnOff) become StateInterval{kStateOverhead} on
//     their location, merged where they overlap;
//   - time = (ticks − global offset) / timer resolution (ClockProperties, any resolution),
//     after the clock offsets and id mapping tables of the local definitions, which OTF2 applies;
//   - regions: MPI functions (source file "MPI" or paradigm MPI) keep their name and file "MPI"
//     and get their MpiOp from the canonical name, with the variants the event model folds
//     (MPI_Init_thread -> Init; Bsend/Rsend -> Send; Ibsend/Irsend/Issend, Start/Startall ->
//     Isend; Mrecv -> Recv; Imrecv -> Irecv; Sendrecv_replace -> Sendrecv; Test/Testany/Waitany
//     -> Wait; Testall/Testsome/Waitsome -> Waitall; the v/w collectives and
//     Reduce_scatter_block -> their base operation); other MPI functions (MPI_Comm_split,
//     MPI_Comm_rank, MPI_Wtime, MPI_Iallreduce, ...) stay regions with op None and file "MPI".
//     Regions of paradigm USER, COMPILER or UNKNOWN are user regions; Enter/Leave of regions of
//     other paradigms (OpenMP constructs, Pthread, CUDA, ...) are skipped (measurement system:
//     overhead, above);
//   - communicators: the MPI groups only (not thread teams). COMM_GROUP members are ranks, so
//     sub-communicators (MPI_Comm_split, communicators derived from another) keep their members
//     as world ranks; MPI_COMM_SELF (a COMM_SELF group) is a communicator with no members
//     (every rank alone: its point-to-point peer 0 is the rank itself). The first communicator
//     holding every rank in order is MPI_COMM_WORLD (id 0; made up if the archive has none);
//   - records: Enter/Leave, MpiSend/MpiRecv, MpiIsend/MpiIsendComplete, MpiIrecvRequest/MpiIrecv,
//     MpiCollectiveBegin/End with peers and the root mapped from communicator ranks to world
//     ranks (OTF2_UNDEFINED_UINT32, what write_otf2 writes for none, reads as none; a rank the
//     communicator does not have, or whose member is no rank of the archive, is an InputError
//     naming the record). A cancelled request (MpiRequestCancelled) drops its MpiIsend/MpiIrecvRequest, so it
//     never becomes an unmatched message. Skipped, never a failure, and counted by kind in
//     skipped_records: every record of other paradigms (OpenMP, threads, I/O, RMA, other
//     metrics, parameters, calling contexts, program begin/end, communicator create/destroy,
//     ...), MpiRequestTest, non-blocking collectives, collectives the event model has
//     no operation for (communicator/window creation), collectives on MPI_COMM_SELF, and
//     point-to-point records on inter-communicators.
// OTF2 does not hold the operation of a CollectiveBegin (taken from its CollectiveEnd) nor the
// peer, tag and size of an Irecv request or the size of an Isend completion: those fields read
// as 0 / kNoRank; the `op` of non-collective records is the enclosing MPI call's, as the engine
// records it. A missing or corrupt archive (anchor, global or local definitions, a truncated
// event file, a location with another number of records than its definition announces)
// throws InputError naming the archive, the rank and file, and OTF2's reason; so do a timer
// resolution of 0, a record before the global offset (a negative time) or before the
// location's previous record (time going backwards), naming the record's index, and regions
// nested deeper than kMaxRegionDepth: every time read is finite, ≥ 0 and in order. Before
// libotf2 reads a file, otf2_check.hpp walks it: a count that its bytes cannot hold (the
// anchor's properties, a mapping table's ids, a Group's members, a ProgramBegin's arguments, an
// attribute list's entries), which libotf2 would allocate for unchecked, a record running
// past its chunk or the file, or bytes after the file's end-of-file record (which libotf2 never
// reads), is an InputError naming the file and the byte, in bounded time and memory (one
// chunk, at most 16 MiB).
// Only otf2_write.cpp, otf2_read.cpp, otf2_common.hpp and otf2_check.cpp (and the tests that
// write archives with the OTF2 API) include OTF2's headers.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analysis/trace/trace.hpp"
#include "analysis/trace/trace_part.hpp"

namespace waitlab::trace {

inline constexpr double kOtf2TicksPerSecond = 1e9;

void write_otf2(const Trace& trace, const std::string& dir);
// What write_otf2 cannot hold of `trace`, one line per kind with its count (empty if
// nothing): ground truth, attributes, the details of MPI_Irecv posts, state intervals,
// counter samples of a trace without counters bits, thread numbers that are not 1, 2, ...
std::vector<std::string> otf2_losses(const Trace& trace);

struct Otf2ReadStats {
  std::uint64_t skipped_locations = 0;  // locations not read (metric locations, GPU streams, ...)
  std::uint64_t thread_locations = 0;   // worker-thread locations read into Trace::threads
  std::uint64_t timer_resolution = 0;   // ticks per second (ClockProperties)
  std::uint64_t global_offset = 0;      // the tick that reads as time 0
  std::uint64_t trace_length = 0;       // ticks
  std::uint64_t records = 0;            // event records read on the rank locations
  // Records left out, by OTF2 record name, with the reason in parentheses where the name is not
  // enough: "Metric", "ThreadFork", "Enter (OPENMP)", "MpiCollectiveEnd (CREATE_HANDLE)",
  // "MpiIrecvRequest (cancelled)", ... records − their sum = the events of the Trace.
  std::map<std::string, std::uint64_t> skipped_records;
  // Records that became counter samples or overhead state intervals rather than events, by
  // the same names: "Metric", "BufferFlush", "MeasurementOnOff", "Enter (MEASUREMENT_SYSTEM)",
  // "Leave (MEASUREMENT_SYSTEM)". records = events of locations and threads + skipped + these.
  std::map<std::string, std::uint64_t> converted_records;
};
Trace read_otf2(const std::string& anchor, Otf2ReadStats* stats = nullptr);
// The ranks [first, last) and their threads (trace_part.hpp): only their locations are
// selected, so only their local definitions and event files are opened; the checks and
// messages are read_otf2's for them (read_otf2 is this reading with every rank). Two values
// depend on the events read: `counters` holds the kinds of the samples the part's locations
// hold (the whole trace's is the union over the parts), and a region read_otf2 makes up for a
// ProgramBegin that names no program region (not in Score-P's archives) is defined by the
// parts whose locations have one, in their order of appearance. `stats` counts what the part
// read. otf2_record_counts: the records the global definitions announce for every rank's
// location (the event files are not opened).
TracePart read_otf2_part(const std::string& anchor, Rank first, Rank last, Otf2ReadStats* stats = nullptr);
std::vector<std::uint64_t> otf2_record_counts(const std::string& anchor);

}  // namespace waitlab::trace
