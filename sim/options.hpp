// waitlab::sim — what a simulation is asked to do and what it gives back: RunOptions (the
// semantics, the network change, the collective algorithms, what to record), RunStats and
// RunResult. A header of its own so that the engine's parts (sim/engine, sim/simulation,
// sim/resources, sim/collectives) share the types without including each other.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/minprofile/estimator.hpp"
#include "analysis/trace/totals.hpp"
#include "analysis/trace/trace.hpp"

namespace waitlab::sim {

enum class Semantics { Waitlab, SmpiDefault };

// A change to every link of the platform, applied after it is built (XML platforms too):
// `ideal` = zero latency and (effectively) infinite bandwidth; the scales multiply every
// link's bandwidth and latency (what-if variants, time-resolved metrics' ideal network).
struct NetworkChange {
  bool ideal = false;
  double bandwidth_scale = 1;
  double latency_scale = 1;
  bool empty() const { return !ideal && bandwidth_scale == 1 && latency_scale == 1; }
};

// What a user chooses of a run (a scenario's `run` section, docs/scenarios.md): the one type from
// the scenario to the engine, each default written here only. The scenario loader checks each
// value where it is written (its message names the YAML line); simulate() checks them for a
// program that calls the engine directly; both with the rules below.
struct RunSettings {
  std::uint64_t seed = 0;
  double eager_threshold = 64 * 1024.0;     // bytes; sends strictly below it are eager
  double timing_precision = 0;             // SimGrid's surf/precision, s; 0 = SimGrid's default (1e-9 s)
  std::string collectives = "fast";         // a preset from collective_sets(): "fast", "mpi" or "default"
  // Per-collective choices on top of the preset (and on top of SimGrid's default selector under
  // SmpiDefault semantics): collective (a name of collective_algorithms()) -> SimGrid algorithm;
  // a later entry for the same collective wins. simulate() refuses an unknown name (InputError).
  std::vector<std::pair<std::string, std::string>> collective_algorithms;
  Semantics semantics = Semantics::Waitlab;
};

// The rules of the settings' values.
inline bool valid_eager_threshold(double bytes) { return std::isfinite(bytes) && bytes >= 0; }
// A precision a user gives (0, SimGrid's default, is not written): above 0 and at most 1 µs.
inline bool valid_timing_precision(double s) { return std::isfinite(s) && s > 0 && s <= 1e-6; }

struct RunOptions : RunSettings {
  std::string name = "run";                 // instance name, recorded in trace attributes
  // Copy message payloads under Waitlab semantics too (SMPI's copy; SmpiDefault always copies).
  // The engine also copies when a chosen algorithm needs the data it sends (payload_free()).
  bool copy_payloads = false;
  bool progress = false;                    // print progress (simulated time, % done, time left) to stderr
  // The kernel's limit of memory mappings per process (0: read /proc/sys/vm/max_map_count).
  // Above about half of it in ranks, the actors' stacks go in the heap without guard pages
  // (docs/engine.md §8); tests set a small value to take that path with few ranks.
  long max_map_count = 0;
  // The online minimum-duration estimator (analysis/minprofile): fed at every MPI call's exit
  // with what a PMPI wrapper sees (durations, no trace); MPI_Wait/MPI_Waitall first test
  // their requests (no simulated time: smpi/test is 0) for the exclude_tested variant.
  bool minprofile = false;
  double minprofile_percentile = 5;         // the percentile variant's Q
  NetworkChange network;  // applied to every link of the platform after it is built, XML platforms included
  // false: the trace keeps only MPI_Init's and MPI_Finalize's Enter and Leave events (and the
  // compute intervals' ground truth); every other event is counted (RunStats::events), not
  // stored — for runs whose trace nobody reads (no trace output, no analysis): the memory
  // and time of recording and passing back tens of bytes per event are saved.
  bool record_events = true;
  // Attributes set on the recorded trace before it is written (one of the engine's own of the
  // same key is replaced, in place).
  std::vector<trace::Attribute> attributes;
  // Where the simulation process writes the trace (.wlt, from records it keeps on disk while
  // it runs, sim/recording.hpp); "" = a temporary file.
  std::string trace_file;
  // Whether RunResult::trace holds the whole trace, read back from that file; false: only its
  // attributes and truth flag (RunStats::totals has what the summary needs). Without
  // trace_file and return_trace no trace is written at all.
  bool return_trace = true;
  // The memory the simulation process's record buffers take over all ranks (0: Recording::
  // kBufferBytes); tests make it tiny so that every few records go to disk.
  std::size_t record_buffer_bytes = 0;
};

struct RunStats {
  double simulated_time = 0;        // SimGrid clock at the end of the run, s
  std::uint64_t mpi_operations = 0; // MPI calls executed by all ranks (excl. Init/Finalize)
  std::uint64_t events = 0;         // events of the run, recorded or not (RunOptions::record_events)
  trace::RecordTotals totals;       // of the recorded trace (analysis/trace/totals.hpp)
  double host_seconds = 0;          // host wall-clock time of the simulation (not deterministic)
  // Host-dependent too: the simulation process's peak resident memory (getrusage), what
  // simulate() estimated it before starting it (sim/resources.hpp), and the part of it the
  // process shared with its parent from the start (the parent's resident memory at the fork).
  std::uint64_t peak_rss_bytes = 0;
  std::uint64_t estimated_rss_bytes = 0;
  std::uint64_t base_rss_bytes = 0;
  // MPI errors SMPI reported without failing the run (MPI_ERR_TRUNCATE: a message longer
  // than the receive posted for it), and the first as SimGrid wrote it.
  std::uint64_t smpi_errors = 0;
  std::string smpi_first_error;
};

struct RunResult {
  trace::Trace trace;
  RunStats stats;
  std::optional<minprofile::Result> estimate;  // with RunOptions::minprofile
};

}  // namespace waitlab::sim
