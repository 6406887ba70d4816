// waitlab::analysis — the idle-wave analysis as data and pictures.
//
// Promise: idlewave_json() is the `analyses.idlewave` object of summary.json (also written
// alone as idlewave.json); write_idlewave_files() writes beside it the front points
// (idlewave_fronts.csv), the idle-period matrix as a NumPy array (idle_matrix.npy: float32
// seconds idle, shape ranks × bins, row-major; numpy.load reads it) and, when a slow group
// was found, the idle periods of the ranks next to it (idlewave_selfsync.csv); with a null
// result it removes those files; the pictures are drawn from those files (the entry's
// pictures, analysis/idlewave/entry.cpp). report_html() is the report's section on the idle
// waves. docs/analyses.md describes every field.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "analysis/output/entry.hpp"
#include "analysis/idlewave/idlewave.hpp"

namespace waitlab::analysis {

nlohmann::ordered_json idlewave_json(const analysis::IdleWaveResult& r);
std::vector<std::string> write_idlewave_files(const std::string& dir, const analysis::IdleWaveResult* r);
void print_idlewave_summary(const analysis::IdleWaveResult& r, std::ostream& out);

// The report's section on the idle waves (null `iw`: summary.json has none, pictures were left).
std::string idlewave_report_html(const output::Json* iw, const output::ReportContext& rc);

}  // namespace waitlab::analysis
