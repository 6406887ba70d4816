// waitlab::trace — OTF2 archives (FORMATS.md §1): writing a Trace for Vampir and Scalasca,
// and reading MPI traces back.
//
// Promise: write_otf2(trace, dir) writes `dir/traces.otf2` (+ `traces.def`, `traces/`) with
// the conventions Scalasca relies on: MPI regions named MPI_* with canonical name = name,
// source file "MPI", paradigm MPI and their OTF2 roles; one process location group and one
// CPU-thread location per rank; the COMM_LOCATIONS group before the communicator groups;
// every event record of ALGORITHMS.md §1 as Score-P writes it (MpiSend/MpiRecv,
// MpiIsend/MpiIsendComplete, MpiIrecvRequest/MpiIrecv, MpiCollectiveBegin/End with the
// root's rank in the communicator and the byte counts). Time is written in nanoseconds
// (timer resolution 1e9 ticks/s, the trace's earliest event at the global offset). The
// archive is written under `dir.tmp` and renamed to `dir` when complete (an existing `dir`
// is replaced); an OTF2 failure throws InputError naming the directory and OTF2's reason.
// read_otf2(anchor) reads an archive's MPI events into a Trace: one rank per process
// location group (its lowest location; further locations, e.g. threads, are skipped and
// counted), regions (MPI ones — source file "MPI" or paradigm MPI — get their MpiOp from the
// canonical name), communicators with their members mapped to world ranks (the one holding
// every rank first, as MPI_COMM_WORLD), Enter/Leave and the MPI point-to-point and
// collective records; time = (ticks − global offset) / timer resolution. OTF2 does not hold
// the operation of a CollectiveBegin (taken from its CollectiveEnd) nor the peer, tag and
// size of an Irecv request or the size of an Isend completion: those fields read as 0 /
// kNoRank; the `op` of non-collective records is the enclosing MPI call's, as the engine
// records it. A missing or corrupt archive throws InputError naming the file and OTF2's reason.
// Only this file includes OTF2's headers.
#pragma once

#include <cstdint>
#include <string>

#include "analysis/trace/trace.hpp"

namespace waitlab::trace {

inline constexpr double kOtf2TicksPerSecond = 1e9;

void write_otf2(const Trace& trace, const std::string& dir);

struct Otf2ReadStats {
  std::uint64_t skipped_locations = 0;  // locations beyond the first of a process
};
Trace read_otf2(const std::string& anchor, Otf2ReadStats* stats = nullptr);

}  // namespace waitlab::trace
