// waitlab::app — what the command lines of waitlab (app/cli.cpp) and waitlab-mpi
// (app/mpi_analyze.cpp) share: the one error line, the checks of the arguments, the mapping of a
// failure to its exit code, and the options of `analyze`.
//
// Promise: print_error writes "waitlab: error: <one line>" (text::one_line, cut after a few KB)
// and returns `code`. failure_of(exception) is what a command's failure means to the user: bad
// input (InputError, out of memory) is exit 2 with its message, anything else an internal
// failure, exit 1. refuse_empty_values makes every option and argument that takes a value
// refuse an empty one. non_utf8_argument names the first argument that is not UTF-8 ("" if
// none). add_analyze_options declares `analyze`'s argument and options on its subcommand,
// add_cut_options the options that cut a run (analyze, pop).
#pragma once

#include <CLI/CLI.hpp>
#include <exception>
#include <ostream>
#include <string>

#include "app/analyze.hpp"

namespace waitlab::app {

int print_error(std::ostream& err, const std::string& what, int code);

struct Failure {
  int code = 0;  // 2: bad input; 1: internal failure
  std::string message;
  bool everywhere = false;  // an AgreedInputError: every process of waitlab-mpi failed so, at one point
};
Failure failure_of(const std::exception_ptr& e);

void refuse_empty_values(CLI::App& cli);

std::string non_utf8_argument(int argc, const char* const* argv);

void add_analyze_options(CLI::App& analyze, AnalyzeArgs& args);
// --time-range, --region, --iterations: the cut of the POP metrics (analysis/timeresolved/cut.hpp),
// on `analyze` (the timeresolved analysis) and `pop`; `what` names what they cut.
void add_cut_options(CLI::App& app, CutArgs& args, const std::string& what);

}  // namespace waitlab::app
