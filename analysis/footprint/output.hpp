// waitlab::analysis — the counterfactual footprint as data (footprint.hpp).
//
// Promise: footprint_json() is summary.json's analyses.footprint; write_footprint_files() writes
// it alone as footprint.json and beside it footprint.csv (one row per rank: its offset from the source, peak shift and when,
// shift at MPI_Finalize, largest idle period in the run and in the twin) and footprint_shift.npy
// (the shift matrix: float32 seconds, ranks × bins of the idle-period matrix, row-major), or
// removes them with a null result. docs/analyses.md, "Counterfactual footprint", describes every field.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "analysis/footprint/footprint.hpp"
#include "analysis/output/entry.hpp"

namespace waitlab::analysis {

// What the footprint analysis is given (its option): the twin's trace. Without a twin the
// analysis cannot run (InputError).
struct FootprintInput {
  const trace::Trace* twin = nullptr;
};

nlohmann::ordered_json footprint_json(const FootprintResult& f);
std::vector<std::string> write_footprint_files(const std::string& dir, const FootprintResult* f);
void print_footprint_summary(const FootprintResult& f, std::ostream& out);
std::string footprint_report_html(const output::Json* fp, const output::ReportContext& rc);

}  // namespace waitlab::analysis
