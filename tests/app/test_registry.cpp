// The registry of the analyses (analysis/registry): selecting by name, the order everything
// follows, and docs/analyses.md held to it.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "analysis/registry/registry.hpp"
#include "analysis/timeresolved/output.hpp"

namespace waitlab::analysis {
namespace {

std::vector<std::string> registry_names() {
  std::vector<std::string> names;
  for (const auto* e : analyses()) names.push_back(e->name);
  return names;
}

TEST(Registry, EveryAnalysisOnceWithWhatItNeedsBeforeIt) {
  const auto names = registry_names();
  EXPECT_EQ(names, (std::vector<std::string>{"waitstate", "delay", "critpath", "minprofile", "idlewave", "timeresolved",
                                             "footprint"}));
  for (std::size_t i = 0; i < names.size(); ++i) {
    const auto* e = find_analysis(names[i]);
    ASSERT_NE(e, nullptr);
    EXPECT_TRUE(e->run && e->summary && e->write && e->print) << names[i];
    EXPECT_FALSE(e->description.empty()) << names[i];
    for (const auto& need : e->needs) {
      const auto at = std::find(names.begin(), names.end(), need);
      ASSERT_NE(at, names.end()) << names[i] << " needs an unknown analysis " << need;
      EXPECT_LT(static_cast<std::size_t>(at - names.begin()), i) << names[i] << " is listed before " << need;
    }
  }
  EXPECT_EQ(find_analysis("nope"), nullptr);
}

TEST(Registry, SelectionAddsTheNeedsAndKeepsTheRegistrysOrder) {
  EXPECT_EQ(select_analyses({"idlewave"}), (std::vector<std::string>{"waitstate", "idlewave"}));
  EXPECT_EQ(select_analyses({"timeresolved, delay"}), (std::vector<std::string>{"waitstate", "delay", "timeresolved"}));
  EXPECT_EQ(select_analyses({"minprofile", "critpath"}), (std::vector<std::string>{"waitstate", "critpath", "minprofile"}));
  // `all`: every analysis but the footprint, which needs a twin only `waitlab run` makes.
  EXPECT_EQ(select_analyses({"all"}), (std::vector<std::string>{"waitstate", "delay", "critpath", "minprofile",
                                                                 "idlewave", "timeresolved"}));
  EXPECT_EQ(select_analyses({"footprint"}), (std::vector<std::string>{"waitstate", "idlewave", "footprint"}));
  EXPECT_TRUE(select_analyses({}).empty());
  try {
    (void)select_analyses({"delya"});
    FAIL() << "an unknown name was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "unknown analysis 'delya'; did you mean 'delay'? (allowed: waitstate, delay, critpath, minprofile, "
              "idlewave, timeresolved, footprint, all)");
  }
  EXPECT_THROW((void)select_analyses({"waitstate,,delay"}), std::invalid_argument);
}

// run_analyses runs what a selected analysis needs even when the caller did not name it.
TEST(Registry, RunningAnAnalysisRunsWhatItNeeds) {
  trace::Trace t;  // an empty trace: every analysis runs on it
  const AnalysisRun r = run_analyses(t, {"delay"});
  EXPECT_EQ(r.names(), (std::vector<std::string>{"waitstate", "delay"}));
  EXPECT_TRUE(r.has("waitstate") && r.has("delay"));
  EXPECT_FALSE(r.has("critpath"));
  EXPECT_THROW((void)run_analyses(t, {"nope"}), std::invalid_argument);
}

// Without options every analysis runs with its defaults (the time-resolved analysis: 50 equal
// windows, a Lamport replay, waitlab's conventions).
TEST(Registry, AnAnalysisWithoutOptionsRunsWithItsDefaults) {
  trace::Trace t;
  const AnalysisRun r = run_analyses(t, {"timeresolved"});
  const auto* tr = r.results.get<TimeResolvedRun>("timeresolved");
  ASSERT_NE(tr, nullptr);
  EXPECT_EQ(tr->result.windows.size(), 50u);
  EXPECT_EQ(tr->note, "");
}

// docs/analyses.md has one section per analysis, "## Title (`name`)", in the registry's order,
// and its Tables section names every table the report shows.
TEST(Docs, AnalysesAreTheRegistrysInItsOrder) {
  std::ifstream in(std::string(WAITLAB_SOURCE_DIR) + "/docs/analyses.md");
  std::stringstream doc;
  doc << in.rdbuf();
  const std::string text = doc.str();
  ASSERT_FALSE(text.empty());
  std::vector<std::string> sections;
  const std::regex heading(R"(\n## [^\n]*\(`([a-z]+)`\)\n)");
  for (std::sregex_iterator it(text.begin(), text.end(), heading), end; it != end; ++it) sections.push_back((*it)[1]);
  EXPECT_EQ(sections, registry_names());
  const auto tables = text.find("\n## Tables\n");
  ASSERT_NE(tables, std::string::npos);
  for (const auto* e : analyses())
    for (const auto& t : e->tables)
      EXPECT_NE(text.find(std::string("`") + t.file + "`", tables), std::string::npos)
          << "docs/analyses.md's Tables section does not name " << t.file << " (" << e->name << ")";
}

}  // namespace
}  // namespace waitlab::analysis
