// waitlab Python module — a Trace's tables as columns (docs/python.md).
//
// Promise: each function turns one table of a trace into NumPy arrays, one contiguous array per
// column, filled in C++ without the GIL and handed to Python without a copy; the pure-Python
// package (python/waitlab/__init__.py) makes the pandas DataFrames of them. Names are given
// as category codes with their categories, never as a string per row. Rows of `events` are
// the locations' events in the order of the Trace (ranks, then their further threads; each
// location's events in time order); a message names its two events by their row there.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <pybind11/pybind11.h>

#include "analysis/trace/formats.hpp"
#include "analysis/trace/match.hpp"
#include "analysis/trace/trace.hpp"

namespace waitlab::python {

// A trace read once, and its matching built on first use (only `.messages` needs it).
struct TraceData {
  std::string path;
  trace::Trace trace;
  trace::SkippedKinds skipped;
  std::vector<std::string> warnings;

  const trace::Matching& matching();

 private:
  std::unique_ptr<trace::Matching> matching_;
};

// Text from a trace file as a Python str: bytes that are not UTF-8 (a .pcf's names) are shown
// as U+FFFD, not refused.
pybind11::str text(std::string_view s);

// Every table is a dict {column: ndarray} plus, for a categorical column "X", the list of its
// categories under "X categories" (its array holds the codes).
pybind11::dict event_columns(const TraceData& data);
pybind11::dict message_columns(TraceData& data);
pybind11::dict region_columns(const TraceData& data);
pybind11::dict location_columns(const TraceData& data);

}  // namespace waitlab::python
