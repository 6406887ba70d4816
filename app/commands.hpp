// waitlab::app — the `waitlab` command line: run, replay, convert, analyze, check, validate,
// list, describe.
//
// Promise: every command is a function that tests can call (analyze: app/analyze.hpp,
// validate: app/validate.hpp); main() only parses the arguments, calls one, and turns
// exceptions into exit codes: 0 success, 1 internal failure, 2 bad input (InputError, bad
// arguments), 3 `check` or `validate --expected` found figures that differ from the
// checked-in ones. Errors are one line "waitlab: error: ..." on `err`. Outputs
// are written atomically; nothing host-dependent goes into summary.json (docs/cli.md).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "scenarios/scenario.hpp"

namespace waitlab::app {

int main(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

// `waitlab convert IN OUT`: between .wlt, OTF2, Paraver and TI; prints what was written and,
// one line each, what the target cannot hold (also returned). `speed` (flop/s) converts
// compute seconds to TI's flops and back.
std::vector<std::string> convert_command(const std::string& in, const std::string& out_path, double speed,
                                         std::ostream& out);

// `waitlab list`: every registered spec by kind, and the collective sets.
void list_command(std::ostream& out);
// `waitlab plot DIR`: the pictures of the analyses whose results are in DIR drawn again, and
// report.html rewritten, put in place together.
void plot_command(const std::string& dir, std::ostream& out);
// `waitlab describe NAME`: one spec with its options, units and defaults. Throws InputError
// ("unknown name ...; did you mean ...") for an unknown name.
void describe_command(const std::string& name, std::ostream& out);

// `waitlab check [--update] SCENARIO...`: simulate and compare the key figures with
// <scenario dir>/expected/<name>.json (docs/cli.md). With update, rewrite that file.
struct CheckResult {
  std::string scenario;                  // scenario name
  std::string expected_file;             // path of the expected figures
  std::vector<std::string> differences;  // empty = matches
  bool missing = false;                  // no expected file (and not updating)
  bool updated = false;
};
CheckResult check_scenario(const std::string& path, bool update, const std::vector<std::string>& sets = {});
std::string expected_path(const std::string& scenario_path, const std::string& scenario_name);

}  // namespace waitlab::app
