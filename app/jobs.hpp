// waitlab::app — running many simulations: the variants of `waitlab whatif`, the grid points
// of `waitlab sweep`.
//
// Promise: run_jobs() runs every job as a `waitlab run` of its scenario into its own
// directory, each in its own process (forked; the simulation forks once more for SimGrid),
// at most `parallel` at a time, and returns how each ended. A job's terminal summary goes
// to DIR/run.log (host-dependent: host seconds, paths), its error (bad input, exit 2;
// internal failure, exit 1) to the outcome. The jobs die with this process, and a SIGINT or
// SIGTERM to it is passed on to them; it exits (util::exit_interrupted) once they stopped.
// The jobs' outputs are the same whatever `parallel` is: each is a deterministic run.
// Shares split a job list among cooperating processes (mpirun: rank r of n runs the jobs
// i with i mod n = r).
#pragma once

#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "app/inputs.hpp"
#include "scenarios/scenario.hpp"

namespace waitlab::app {

struct Job {
  std::string name;  // shown on the terminal
  scenarios::Scenario scenario;
  std::string dir;   // where its outputs go
  std::string shown_dir;  // the name of `dir` on the terminal and in messages ("" = dir): its
                          // place once the study's outputs are committed (app/output_dir.hpp)
};

// What the jobs read: their scenarios and the files those name (app/inputs.hpp).
Inputs inputs_of(const std::vector<Job>& jobs);

struct JobOutcome {
  int exit_code = 0;   // 0 done, 2 bad input, 1 internal failure
  std::string error;   // the job's error message (one line), if any
};

// A job of a study (whatif, sweep, counterfactual): the scenario with the analyses studies
// compare (waitstate, delay, critpath) added to its own, no progress, outputs in `dir`, and
// no run.baseline — a study compares its runs with each other, and the unperturbed run of a
// changed workload (a region rebalanced without the imbalance it was balanced against)
// would compare nothing.
Job study_job(std::string name, scenarios::Scenario s, std::string dir);

// `parallel` >= 1. Prints one line per finished job to `out`.
std::vector<JobOutcome> run_jobs(const std::vector<Job>& jobs, int parallel, std::ostream& out);

// A finished job's table (one of the CSVs a run writes) as rows of column -> text, and one
// number of a row; a missing file, column or number throws InputError naming the file.
using TableRow = std::map<std::string, std::string>;
std::vector<TableRow> read_table(const std::string& path);
double table_number(const TableRow& row, const std::string& column, const std::string& path);

// "R/N" (0 <= R < N): this process's share of a job list. Throws InputError naming `option`.
struct Share {
  int index = 0;
  int count = 1;
  bool mine(std::size_t job) const { return static_cast<int>(job % static_cast<std::size_t>(count)) == index; }
};
Share parse_share(const std::string& text, const std::string& option);

}  // namespace waitlab::app
