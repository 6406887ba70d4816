// waitlab::app — `waitlab` run as a child by waitlab-mpi, which does not link SimGrid (SMPI's MPI
// symbols would clash with Open MPI's): a study's share of the jobs (app/mpi_runner.cpp) and the
// SMPI ideal-network replay of `analyze` (app/ideal_replay.hpp).
//
// Promise: smpi_ideal_by_child(args, measured) runs `waitlab smpi-ideal` (the waitlab binary
// beside this program, or $WAITLAB_BIN; a command `waitlab --help` does not list) on args.trace
// with args.clock_correction and the four figures of `measured` the replay uses, and returns the
// SmpiIdealRun it computed — every double to the bit (hexadecimal floating point on the way) —
// or one whose `why` says that the child could not run or failed. The child reads the whole
// trace and corrects its clocks as `waitlab analyze` does. smpi_ideal_record and
// parse_smpi_ideal_record are the two ends of what travels; measured_arguments and
// parse_measured those of the figures.
#pragma once

#include <string>
#include <vector>

#include "analysis/timeresolved/timeresolved.hpp"
#include "app/analyze.hpp"
#include "app/ideal_replay.hpp"

namespace waitlab::app {

SmpiIdealRun smpi_ideal_by_child(const AnalyzeArgs& args, const analysis::TimeResolvedResult& measured);

std::string smpi_ideal_record(const SmpiIdealRun& run);
SmpiIdealRun parse_smpi_ideal_record(const std::string& text);  // InputError if it is none
std::string measured_arguments(const analysis::TimeResolvedResult& measured);
analysis::TimeResolvedResult parse_measured(const std::string& text);  // InputError if it is none

// The waitlab binary beside this program (or $WAITLAB_BIN), and running a program to its end:
// its exit code, 1 if it could not start (`why` says why) or did not exit.
std::string waitlab_binary();
int spawn_and_wait(const std::vector<std::string>& args, std::string* why = nullptr);

}  // namespace waitlab::app
