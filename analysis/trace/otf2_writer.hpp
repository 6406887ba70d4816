// waitlab::trace — writing a Trace as an OTF2 archive (FORMATS.md §1) for Vampir and Scalasca.
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
// Only this file and its reader include OTF2's headers.
#pragma once

#include <string>

#include "analysis/trace/trace.hpp"

namespace waitlab::trace {

inline constexpr double kOtf2TicksPerSecond = 1e9;

void write_otf2(const Trace& trace, const std::string& dir);

}  // namespace waitlab::trace
