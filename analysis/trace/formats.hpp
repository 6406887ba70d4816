// waitlab::trace — the trace formats, one descriptor each: how a path names the format (input
// and output), the files an output implies and how its written path is shown, whether it
// carries timestamps, its reader and writer, and what it cannot hold.
//
// Promise: formats() is the one table of the formats waitlab reads and writes (.wlt, OTF2,
// Paraver, TI), in the order their names are tried; descriptor(f) is f's entry. The commands
// (convert, analyze, replay) and the scenario loader ask a descriptor's properties and call
// its functions instead of comparing against a particular format: adding a format is one entry
// here plus its reader and writer files (docs/architecture.md, "Adding a trace format").
// A format without timestamps (TI) has no timed reader or writer: its records are SMPI's
// actions (analysis/trace/ti.hpp), replayed or converted through models/replay.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/trace/trace.hpp"
#include "analysis/trace/trace_part.hpp"

namespace waitlab::trace {

enum class TraceFormat { Wlt, Otf2, Paraver, Ti };

// What a reader left out of a trace, by kind, in a deterministic order, each count > 0: Paraver
// event types and records (ParaverReadStats::skipped), OTF2 record kinds and locations.
using SkippedKinds = std::vector<std::pair<std::string, std::uint64_t>>;

struct FormatDescriptor {
  TraceFormat id{};
  std::string_view name{};         // in messages: "wlt", "OTF2", "Paraver", "TI"
  std::string_view description{};  // one line, for help texts
  std::string_view expected{};     // how an input is named, in "expected ..." messages: "a .wlt file"

  // Inputs: a path ending with one of `input_extensions` is this format; so is a directory
  // holding `directory_anchor` (an archive given as its directory: OTF2's traces.otf2). The
  // format with `any_other_input` takes every other existing file (TI: its reader says so if
  // it is not one).
  std::vector<std::string_view> input_extensions{};
  std::string_view directory_anchor{};
  bool any_other_input = false;
  // Outputs: a path ending with one of `output_extensions`; the format with `any_other_output`
  // takes every other path (OTF2: an archive directory).
  std::vector<std::string_view> output_extensions{};
  bool any_other_output = false;

  // Whether the format holds times (TI holds the calls and the compute between them only).
  bool timestamps = true;
  // What a conversion into the format may report lost, in one line, for help texts (the
  // writer reports each loss with its count).
  std::string_view cannot_hold{};

  // Every file and directory a reader of the input `path` opens (trace_io.hpp, input_files).
  std::vector<std::string> (*input_files)(const std::string& path) = nullptr;
  // What writing `out` creates besides `out` itself (X.pcf and X.row beside X.prv, ...).
  std::vector<std::string> (*side_files)(const std::string& out) = nullptr;
  // What the user is told was written: `shown` names the output as given, `written` is where
  // it was written (OTF2: the archive's anchor under the directory; TI: the index and its
  // rank files' directory).
  std::string (*shown_path)(const std::string& shown, const std::string& written) = nullptr;

  // The timed reader; nullptr for a format that cannot be read as a timed Trace, and then
  // why_unreadable(path) is the InputError's message (what to do instead).
  Trace (*read)(const std::string& path, SkippedKinds* skipped, std::vector<std::string>* warnings) = nullptr;
  std::string (*why_unreadable)(const std::string& path) = nullptr;
  // Reading per location (trace_part.hpp): the ranks [first, last) of the trace and their
  // threads, and the weight of every rank (event_counts: .wlt the events, OTF2 the event
  // records announced, Paraver the records naming the task); nullptr for a format without
  // timed reader.
  // `skipped` gets what the part's reader left out, in a form merge_skipped takes (nullptr: the
  // parts' lists summed kind by kind, in the order they first appear); `warnings` the whole
  // trace's (each part says them alike).
  TracePart (*read_part)(const std::string& path, Rank first, Rank last, SkippedKinds* skipped,
                         std::vector<std::string>* warnings) = nullptr;
  // What `read` says left out of the whole trace, made of what read_part said for each part of
  // a partition, in the order of the ranks.
  SkippedKinds (*merge_skipped)(const std::vector<SkippedKinds>& parts) = nullptr;
  std::vector<std::uint64_t> (*event_counts)(const std::string& path) = nullptr;
  // The timed writer: writes `path` (and its side files), returns what the output cannot
  // hold (one line each; empty if nothing). nullptr for a format not written from a Trace,
  // and then "<path>: " + why_unwritable is the InputError's message.
  std::vector<std::string> (*write)(const Trace& trace, const std::string& path) = nullptr;
  std::string_view why_unwritable{};
};

const std::vector<FormatDescriptor>& formats();
const FormatDescriptor& descriptor(TraceFormat f);

}  // namespace waitlab::trace
