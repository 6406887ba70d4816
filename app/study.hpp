// waitlab::app — studies of many runs: `waitlab whatif` (named variants side by side with the
// baseline) and `waitlab sweep` (a grid of --set values), sequential, in parallel processes,
// or spread over the ranks of an MPI job (`waitlab-mpi`, app/mpi_runner.cpp).
//
// Promise: a study is a list of jobs (scenario + directory, app/jobs.hpp). Each finished job
// becomes one *record* — a JSON object read back from the job's summary.json and
// critical_path_profile.csv: its name, parameters, key figures (runtime, waiting by pattern,
// delay costs, critical path), top delay costs and critical-path profile. The study's
// outputs are made from the records alone, in job order, so they are byte-identical whether
// the jobs ran one by one, `--jobs N` at once, or on the ranks of an MPI job (each rank runs
// its share with --share R/N and writes its records with --records FILE; rank 0 merges them
// with --merge FILE...). whatif writes whatif.csv, whatif.json, whatif.html (+ whatif.png/.svg);
// sweep writes sweep.csv, sweep.json (+ sweep.png/.svg). docs/whatif.md.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace waitlab::app {

struct StudyArgs {
  std::vector<std::string> sets;      // --set, for the baseline and every variant / grid point
  std::string out_dir;                // "" = out/<scenario>/whatif or out/<scenario>/sweep
  int jobs = 1;                       // processes at once
  std::string share;                  // "R/N": run only this share of the jobs
  std::string records;                // write this share's records here (and nothing else)
  std::vector<std::string> merge;     // record files: run nothing, make the outputs from them
};

// `waitlab whatif SCENARIO_OR_RUN_DIR [--variant YAML]... [--only NAME,...]`
struct WhatifArgs : StudyArgs {
  std::string target;                 // a scenario file, or a run directory (its host.json names the scenario)
  std::vector<std::string> variants;  // extra variants, YAML mappings
  std::vector<std::string> only;      // run only these variants (and the baseline)
};
// Returns the exit code: 0, or 2/1 when a job failed (bad input / internal).
int whatif_command(const WhatifArgs& args, std::ostream& out);

// `waitlab sweep SCENARIO --grid KEY=V1,V2,... [--grid ...]`: the Cartesian product, first
// key slowest.
struct SweepArgs : StudyArgs {
  std::string scenario;
  std::vector<std::string> grid;      // "perturbations[0].duration=1ms,5ms,10ms"
};
int sweep_command(const SweepArgs& args, std::ostream& out);

}  // namespace waitlab::app
