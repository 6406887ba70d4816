// waitlab::app — traces in and out by file name: the native .wlt file and OTF2 archives.
//
// Promise: read_trace(path) reads `X.wlt` (native) or an OTF2 archive, given as its anchor
// file (`.../traces.otf2`) or as the archive's directory; anything else is an InputError
// that names the path and the formats understood. write_trace(trace, path) writes `X.wlt`,
// or an OTF2 archive in the directory `path` (anchor `path/traces.otf2`) for any other
// name, and returns what the target format cannot hold (one line each; empty if nothing).
#pragma once

#include <string>
#include <vector>

#include "analysis/trace/trace.hpp"

namespace waitlab::app {

enum class TraceFormat { Wlt, Otf2 };

TraceFormat format_of_input(const std::string& path);   // throws InputError for unknown inputs
TraceFormat format_of_output(const std::string& path);  // .wlt -> Wlt, anything else -> Otf2

trace::Trace read_trace(const std::string& path);
std::vector<std::string> write_trace(const trace::Trace& trace, const std::string& path);

}  // namespace waitlab::app
