// Every scenario in scenarios/ is also a regression test: simulating it must reproduce the
// key figures checked in as scenarios/expected/<name>.json (counts exactly, times to 1e-9
// relative). Regenerate after an intended change: `waitlab check --update scenarios/*.yaml`.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "app/commands.hpp"
#include "app/summary.hpp"
#include "scenarios/scenario.hpp"

namespace waitlab::app {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> scenario_files() {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(fs::path(WAITLAB_SOURCE_DIR) / "scenarios"))
    if (e.path().extension() == ".yaml") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

class ScenarioRegression : public ::testing::TestWithParam<std::string> {};

TEST_P(ScenarioRegression, MatchesExpectedFigures) {
  const CheckResult r = check_scenario(GetParam(), false);
  ASSERT_FALSE(r.missing) << "no expected figures at " << r.expected_file << "; run: waitlab check --update "
                          << GetParam();
  std::string diff;
  for (const auto& d : r.differences) diff += "\n  " + d;
  EXPECT_TRUE(r.differences.empty()) << r.scenario << " differs from " << r.expected_file << ":" << diff;
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = fs::path(info.param).stem().string();
  for (auto& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Scenarios, ScenarioRegression, ::testing::ValuesIn(scenario_files()), test_name);

TEST(ScenarioFiles, OnePerWorkloadAndTheDemo) {
  std::vector<std::string> workloads;
  for (const auto& f : scenario_files()) workloads.push_back(scenarios::load_scenario(f).workload.type);
  for (const auto& w : models::workloads())
    EXPECT_NE(std::find(workloads.begin(), workloads.end(), w.spec.name), workloads.end())
        << "no scenario in scenarios/ uses workload " << w.spec.name;
  const auto files = scenario_files();
  EXPECT_NE(std::find(files.begin(), files.end(), std::string(WAITLAB_SOURCE_DIR) + "/scenarios/demo.yaml"),
            files.end());
}

TEST(ScenarioFiles, ExpectedFilesBelongToScenarios) {
  // A stale expected file (scenario renamed or removed) would silently test nothing.
  std::vector<std::string> names;
  for (const auto& f : scenario_files()) names.push_back(scenarios::load_scenario(f).name);
  for (const auto& e : fs::directory_iterator(fs::path(WAITLAB_SOURCE_DIR) / "scenarios" / "expected"))
    EXPECT_NE(std::find(names.begin(), names.end(), e.path().stem().string()), names.end())
        << e.path() << " matches no scenario";
}

// The comparison itself: exact counts, 1e-9 relative times, missing and extra keys.
TEST(CompareExpected, Tolerances) {
  const auto e = nlohmann::json::parse(R"({"t": 1.0, "n": 5, "inj": {"delay": 0.02}})");
  EXPECT_TRUE(
      compare_expected(e, nlohmann::json::parse(R"({"t": 1.0000000005, "n": 5, "inj": {"delay": 0.02}})"))
          .empty());
  EXPECT_EQ(
      compare_expected(e, nlohmann::json::parse(R"({"t": 1.000000002, "n": 5, "inj": {"delay": 0.02}})")),
      std::vector<std::string>{"t: expected 1.0, got 1.000000002"});
  EXPECT_EQ(compare_expected(e, nlohmann::json::parse(R"({"t": 1.0, "n": 6, "inj": {"delay": 0.02}})")),
            std::vector<std::string>{"n: expected 5, got 6"});
  EXPECT_EQ(compare_expected(e, nlohmann::json::parse(R"({"t": 1.0, "n": 5, "inj": {}, "x": 1})")),
            (std::vector<std::string>{"inj.delay: missing (expected 0.02)", "x: not expected (got 1)"}));
  // Zero stays zero: 1e-15 s absolute.
  const auto z = nlohmann::json::parse(R"({"t": 0.0})");
  EXPECT_TRUE(compare_expected(z, nlohmann::json::parse(R"({"t": 1e-16})")).empty());
  EXPECT_FALSE(compare_expected(z, nlohmann::json::parse(R"({"t": 1e-12})")).empty());
}

}  // namespace
}  // namespace waitlab::app
