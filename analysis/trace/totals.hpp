// waitlab::trace — the totals a simulated run's summary reports, from its records.
//
// Promise: RecordTotals gathers, location by location in rank order, what summary.json's
// figures need of a trace — the earliest MPI_Init Enter, the latest MPI_Finalize Leave, the
// first and last event times, the compute intervals and the time each cause injected into
// them per rank — with the same additions in the same order whether the records are held in
// a Trace (totals()) or pass by in blocks as a simulation writes them to a file (add_events,
// add_truth): the two give bit-identical figures.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "analysis/trace/trace.hpp"

namespace waitlab::trace {

struct RecordTotals {
  Time first_init = std::numeric_limits<Time>::infinity();      // earliest MPI_Init Enter
  Time last_finalize = -std::numeric_limits<Time>::infinity();  // latest MPI_Finalize Leave
  Time first_event = std::numeric_limits<Time>::infinity();
  Time last_event = -std::numeric_limits<Time>::infinity();
  std::uint64_t compute_intervals = 0;
  double nominal_compute = 0;                                     // s, summed rank by rank
  std::array<std::uint64_t, kCauseCount> injected_intervals{};    // intervals a cause lengthened
  std::array<std::vector<double>, kCauseCount> injected_by_rank;  // s per rank, by cause

  RecordTotals() = default;
  explicit RecordTotals(std::size_t ranks);
  // A block of events of any location (any order of blocks).
  void add_events(const Event* e, std::size_t n);
  // A block of rank r's truth records: ranks in increasing order, each one's blocks in order.
  void add_truth(std::size_t r, const ComputeTruth* t, std::size_t n);
  bool operator==(const RecordTotals&) const = default;
};

// The totals of a Trace's locations (its threads have no ground truth).
RecordTotals totals(const Trace& t);

}  // namespace waitlab::trace
