// waitlab::app — report.html: one self-contained page per run or analysis.
//
// Promise: write_report(dir) reads what a run (`waitlab run`, `waitlab replay`) or an analysis
// (`waitlab analyze`) left in `dir` — summary.json (either schema; an analysis has a trace
// instead of a scenario), the tables of the analyses (their entries' tables, analysis/registry)
// when present, and every *.png — and writes dir/report.html atomically: the scenario (or
// trace), the key figures, each analysis's section (its entry's), the pictures embedded as
// base64 data URIs and the first rows of every table, largest seconds first. The page needs
// nothing else: no external script, font, style sheet or picture, nothing fetched; all text
// is HTML-escaped; it holds no date and no absolute path, so the same files give the same
// page. A small inline script marks the body when it has loaded: data-loaded="yes",
// data-errors = the number of window 'error' events (a picture that failed to load counts),
// data-heatmap="shown" when the idle-wave heat map (<img id="heatmap">) has a size.
// Pictures get the ids their analysis gives them (heatmap, amplitude, selfsync: the idle-wave
// pictures); any other picture an id made from its file name. The HTML pieces every page uses
// (escaping, base64, readable times) are analysis/output/html.hpp's.
//
// Throws InputError when dir/summary.json is missing or not JSON, or report.html cannot be
// written; a missing table or picture only leaves its part out.
#pragma once

#include <string>

namespace waitlab::app {

// Writes RUN_DIR/report.html and returns its path.
std::string write_report(const std::string& run_dir);

class OutputDir;
// Writes DIR/report.html and returns its path, or "" after saying on standard error why it
// could not: the report is a view of the results, never a reason to fail a command (but for a
// full disk or a file size limit, WriteError, which fails the command and changes nothing).
// With `staged`, DIR is its staging directory, and the message names the output directory.
std::string try_write_report(const std::string& dir, const OutputDir* staged = nullptr);

}  // namespace waitlab::app
