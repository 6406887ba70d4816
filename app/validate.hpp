// waitlab::app — `waitlab validate`: the minimum-duration estimator against ground truth.
//
// Promise: validate() simulates each scenario once with the online estimator on (what a PMPI
// profiler would see, RunOptions::minprofile), computes the truth from the recorded trace
// (wait states, ALGORITHMS.md §2) and joins both per [call path × pattern]: truth wait ratio,
// estimate per variant, difference in percentage points and relative difference, for call
// paths whose truth is at least 0.5 % of ranks × run time (paper 000's rule; Early Reduce,
// which only the root can hold, relative to the roots' time). It writes
// DIR/validation.csv (one row per scenario × call path × pattern × variant), DIR/validation.json
// (the same plus, per scenario, the largest differences per pattern and function),
// DIR/<scenario>/{minprofile.csv, minprofile.json, waitstates.csv} and the scatter plot
// DIR/validation.{png,svg} (paper 000, Fig. 3). Everything but the picture is deterministic.
// With `expected`, validation.csv is compared with a checked-in table (numbers to 1e-9
// relative or absolute: they are percentages and ratios); with `update`, it is rewritten. docs/validation.md.
#pragma once

#include <array>
#include <iosfwd>
#include <string>
#include <vector>

#include "analysis/minprofile/estimator.hpp"

namespace waitlab::app {

struct ValidateArgs {
  std::vector<std::string> scenarios;
  std::string out_dir = "out/validation";
  std::vector<std::string> sets;   // --set, applied to every scenario
  std::string expected;            // --expected FILE: compare validation.csv with it
  bool update = false;             // --update: rewrite FILE instead
  double percentile = 5;           // the percentile variant's Q
  bool plot = true;
};

// One [scenario × call path × pattern] with truth ≥ the threshold.
struct ValidationRow {
  std::string scenario;
  std::string call_path;
  std::string function;  // the MPI function ending the call path
  minprofile::Pattern pattern = minprofile::Pattern::None;
  std::uint64_t calls = 0;
  std::size_t ranks = 0;  // ratios are relative to ranks × run time (Early Reduce: the roots)
  double truth_s = 0;
  double truth_ratio = 0;
  std::array<double, minprofile::kVariantCount> estimate_ratio{};
  std::array<bool, minprofile::kVariantCount> computed{};
  // Point-to-point rows: where the estimate's error comes from, per call of the call path.
  std::uint64_t complete_at_entry = 0;  // calls whose requests a test at entry found complete
  double mean_duration_s = 0;           // mean call duration
  double mean_truth_s = 0;              // mean trace-based waiting per call
  double mean_minimum_s = 0;            // mean over ranks of the rank's shortest call
};

inline constexpr double kValidationThreshold = 0.005;  // truth wait ratio

struct ValidateResult {
  std::vector<ValidationRow> rows;
  std::vector<std::string> differences;  // against `expected` (empty = same, or not compared)
  bool compared = false;
  std::string plot_problem;  // why no picture was drawn ("" = drawn or not asked for)
  double percentile = 5;
};

ValidateResult validate(const ValidateArgs& args, std::ostream& out);

// Differences between two validation.csv texts (keys exact, numbers to 1e-9 relative or absolute).
std::vector<std::string> compare_validation_csv(const std::string& expected, const std::string& actual);

}  // namespace waitlab::app
