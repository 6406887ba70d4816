// waitlab::app — the idle-wave analysis as data and pictures.
//
// Promise: idlewave_json() is the `analyses.idlewave` object of summary.json (also written
// alone as idlewave.json); write_idlewave_files() writes beside it the front points
// (idlewave_fronts.csv), the idle-period matrix as a NumPy array (idle_matrix.npy: float32
// seconds idle, shape ranks × bins, row-major; numpy.load reads it) and, when a slow group
// was found, the idle periods of the ranks next to it (idlewave_selfsync.csv); with a null
// result it removes those files. draw_idlewave() draws the pictures from those files
// (app/plots/idlewave.py: idlewave_heatmap, idlewave_amplitude, idlewave_selfsync, as PNG
// and SVG) and returns "" or why it could not. docs/analyses.md describes every field.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "analysis/idlewave/idlewave.hpp"

namespace waitlab::app {

nlohmann::ordered_json idlewave_json(const analysis::IdleWaveResult& r);
std::vector<std::string> write_idlewave_files(const std::string& dir, const analysis::IdleWaveResult* r);
std::string draw_idlewave(const std::string& dir);
void print_idlewave_summary(const analysis::IdleWaveResult& r, std::ostream& out);

// The pictures draw_idlewave() makes (base names, without .png/.svg).
inline constexpr const char* kIdlewavePictures[] = {"idlewave_heatmap", "idlewave_amplitude", "idlewave_selfsync"};

}  // namespace waitlab::app
