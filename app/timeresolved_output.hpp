// waitlab::app — the time-resolved efficiency analysis as data and a picture.
//
// Promise: timeresolved_json() is the `analyses.timeresolved` object of summary.json (also
// written alone as timeresolved.json, deterministic); write_timeresolved_files() writes it and
// timeresolved.csv (one row per window, per-window and cumulative metrics, SI units) into a
// directory, or removes them with a null result; draw_timeresolved() draws timeresolved.png
// and .svg from those files (app/plots/timeresolved.py) and returns "" or why it could not.
// docs/analyses.md describes every column and field.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "analysis/timeresolved/timeresolved.hpp"

namespace waitlab::app {

// `note`: why the reference is not the one asked for ("" if it is); `warnings`: what a reader of
// the numbers must know (no MPI calls, an ideal estimate that could not be made).
nlohmann::ordered_json timeresolved_json(const analysis::TimeResolvedResult& r, const std::string& note,
                                         const std::vector<std::string>& warnings = {});
std::vector<std::string> write_timeresolved_files(const std::string& dir, const analysis::TimeResolvedResult* r,
                                                  const std::string& note, const std::vector<std::string>& warnings = {});
std::string draw_timeresolved(const std::string& dir);
void print_timeresolved_summary(const analysis::TimeResolvedResult& r, const std::string& note,
                                const std::vector<std::string>& warnings, std::ostream& out);
// The `convention` object: name, span, useful time, units.
nlohmann::ordered_json convention_json(const analysis::TimeResolvedResult& r);
// "the ideal-network run", "Lamport replay", "SMPI replay on an ideal network".
std::string estimate_title(const std::string& source);

inline constexpr const char* kTimeresolvedPicture = "timeresolved";

}  // namespace waitlab::app
