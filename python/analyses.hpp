// waitlab Python module — the registry's analyses on a trace the module read (docs/python.md).
//
// Promise: run_analyses() runs analysis/registry's run_analyses() on the trace, with each
// analysis's default options (what `waitlab analyze TRACE -a NAMES` runs), and has each analysis
// that ran write its files (its CSV tables: the command line's, byte for byte) into `dir`; it
// returns {"ran": [names], "summary": summary.json's analyses.<name> sections as JSON text,
// "files": {name: [paths written]}}. An unknown analysis name is an InputError with the
// registry's "did you mean".
#pragma once

#include <string>
#include <vector>

#include <pybind11/pybind11.h>

#include "python/frames.hpp"

namespace waitlab::python {

pybind11::dict run_analyses(const TraceData& data, const std::vector<std::string>& names, const std::string& dir);

}  // namespace waitlab::python
