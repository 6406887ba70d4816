// waitlab::app — `waitlab run SCENARIO` and `waitlab replay TRACE`: simulate, analyse and
// write the outputs of a run (summary.json, trace.wlt, host.json, the analyses' tables,
// report.html), all put in place together (app/output_dir.hpp). Also what a study's jobs run
// (app/jobs.hpp).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "scenarios/scenario.hpp"

namespace waitlab::app {

struct RunArgs {
  std::string scenario;           // path of the YAML file
  std::string out_dir;            // "" = the scenario's outputs.dir
  std::vector<std::string> sets;  // --set key=value, in order
  bool progress = true;           // false: --no-progress
};
// Simulates the scenario and writes DIR/trace.wlt (unless outputs.trace is false),
// DIR/baseline.wlt (if run.baseline and traces are on), DIR/host.json and, last,
// DIR/summary.json; an old summary.json is removed before anything is written, so one is
// only ever found beside the files of its own run. Prints a short human summary to `out`.
// Throws InputError for bad input and for outputs that cannot be written.
void run_command(const RunArgs& args, std::ostream& out);

// Simulates a loaded scenario (e.g. one variant of it) and writes the outputs of a run into
// `out_dir` ("" = its outputs.dir), as run_command does. Throws InputError.
void run_scenario(const scenarios::Scenario& s, const std::string& out_dir, bool progress, std::ostream& out);

// `waitlab replay TRACE`: simulates a trace as a workload (models/replay.hpp) on the given
// platform (scenarios::ReplayRequest) and writes the outputs of a run.
struct ReplayArgs {
  std::string trace;
  std::string platform;
  std::string scenario;
  std::vector<std::string> compute_scales;
  std::string iterations_from;
  std::string speed;
  std::vector<std::string> sets;
  std::string out_dir;
  bool progress = true;
};
void replay_command(const ReplayArgs& args, std::ostream& out);

}  // namespace waitlab::app
