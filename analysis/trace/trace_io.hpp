// waitlab::trace — trace files in and out by name: the native .wlt file, OTF2 archives,
// Paraver .prv traces and SimGrid time-independent (TI) traces, each described by one entry of
// the format table (analysis/trace/formats.hpp); nothing here names a particular format.
//
// Promise: format_of_input(path) names the format of an existing trace: `X.wlt` (native),
// an OTF2 archive given as its anchor file (`.../traces.otf2`) or as the archive's
// directory, `X.prv` or `X.prv.gz` (Paraver, plain or gzip-compressed, with X.pcf and X.row
// beside it when present), and any other
// regular file is taken for a TI trace (an index of rank files or a single trace file; its
// reader says so if it is not one). format_of_output(path): `.wlt`, `.prv`, `.ti`/`.txt`
// (a TI index, rank files in "<path>_files/"), anything else an OTF2 archive directory.
// read_trace() reads the timed formats (wlt, OTF2, Paraver) into a Trace; a TI trace has no
// times, and read_trace() refuses it with an InputError that says what to do instead
// (replay it, or convert it with logical times). write_trace() writes the timed formats and
// returns what the target cannot hold (one line each; empty if nothing). Everything is
// written atomically (temporary names renamed when complete).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/trace/formats.hpp"
#include "analysis/trace/trace.hpp"

namespace waitlab::trace {

TraceFormat format_of_input(const std::string& path);  // throws InputError for a missing path
TraceFormat format_of_output(const std::string& path);

// Every file and directory a reader of the input trace `path` opens: the trace itself, an
// OTF2 archive's anchor, directory and every file under it, a Paraver trace's .pcf and .row
// when present, a TI index and the rank files it lists. Nothing but a TI index is read. For
// the commands' check that no output is, holds or lies inside an input (app/inputs.hpp).
// Throws InputError as format_of_input() (and as read_ti() for a TI index).
std::vector<std::string> input_files(const std::string& path);

// The format's reader (FormatDescriptor::read): `skipped` gets what it left out of the trace
// (SkippedKinds, formats.hpp), `warnings` what it found suspect but read, one line each: a
// Paraver trace whose records stop well before its declared end (paraver_ends_early()).
// The format's writer (FormatDescriptor::write) returns what the output cannot hold.
Trace read_trace(const std::string& path, SkippedKinds* skipped = nullptr,
                 std::vector<std::string>* warnings = nullptr);
std::vector<std::string> write_trace(const Trace& trace, const std::string& path);

// Reading per location (trace_part.hpp; FormatDescriptor::read_part and event_counts): the
// ranks [first, last) of the trace and their threads, and every rank's weight for
// Partition::balanced (per format: trace_part.hpp; .wlt the events, OTF2 the event records
// announced, Paraver the records naming the task). A format without them (TI) is refused as
// read_trace refuses it. merge_skipped(path, parts) makes of the `skipped` of each part of a
// partition (in rank order) what read_trace's `skipped` is; `warnings` are the whole trace's
// in every part.
TracePart read_trace_part(const std::string& path, Rank first, Rank last, SkippedKinds* skipped = nullptr,
                          std::vector<std::string>* warnings = nullptr);
SkippedKinds merge_skipped(const std::string& path, const std::vector<SkippedKinds>& parts);
std::vector<std::uint64_t> location_event_counts(const std::string& path);

}  // namespace waitlab::trace
