// waitlab Python module — the registry's analyses on a trace the module read (docs/python.md).
//
// Promise: run_analyses() is `waitlab analyze TRACE -a NAMES [options]` without its output
// directory: the options are the command line's (kAnalyzeOptions, by their long names without
// the dashes and with `_` for `-`: windows, clock_correction, ...), made into the command's
// AnalyzeArgs and checked by the same app::analyze_options() (so a bad value is the same
// InputError, naming the option as `--windows: ...`); the trace's clocks are corrected on a copy
// as the command corrects them (the Trace the module holds is left as read); the convention, the
// critical path's bounds, the window count check and the SMPI ideal-network estimate (by a child
// `waitlab smpi-ideal`, $WAITLAB_BIN) are the command's. Each analysis that ran writes its files
// (its CSV tables, byte for byte the command line's; no pictures) into `dir`. Returns {"ran":
// [names], "summary": summary.json's "analyses" object as JSON text, "clock": summary.json's
// "clock_correction" as JSON text, "files": {name: [paths written]}}. An unknown option is an
// InputError naming the allowed ones; an unknown analysis one with the registry's "did you mean".
#pragma once

#include <map>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>

#include "python/frames.hpp"

namespace waitlab::python {

// The options run_analyses takes, in the order `waitlab analyze --help` lists them.
const std::vector<std::string>& analyze_option_names();

pybind11::dict run_analyses(const TraceData& data, const std::vector<std::string>& names, const std::string& dir,
                            const std::map<std::string, std::string>& options);

}  // namespace waitlab::python
