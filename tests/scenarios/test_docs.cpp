// docs/scenarios.md is the scenario reference: every section key and every option of every
// registered model must be documented there, with its current default.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "models/spec.hpp"
#include "scenarios/scenario.hpp"

namespace waitlab::scenarios {
namespace {

std::string reference() {
  std::ifstream in(std::string(WAITLAB_SOURCE_DIR) + "/docs/scenarios.md");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(ScenarioDocs, EveryModelOptionIsDocumented) {
  const std::string doc = reference();
  ASSERT_FALSE(doc.empty());
  for (const auto& spec : models::Registry::instance().specs()) {
    if (spec.kind == models::SpecKind::Analysis) continue;  // analyses are not scenario sections (yet)
    const auto start = doc.find("#### `" + spec.name + "`");
    ASSERT_NE(start, std::string::npos) << "docs/scenarios.md has no section for " << spec.name;
    const auto end = doc.find("\n#### ", start + 1);
    const std::string section = doc.substr(start, end == std::string::npos ? std::string::npos : end - start);
    for (const auto& o : spec.options) {
      const auto row = section.find("| `" + o.name + "` |");
      ASSERT_NE(row, std::string::npos) << spec.name << ": option " << o.name << " is not documented";
      const std::string line = section.substr(row, section.find('\n', row) - row);
      const std::string want =
          o.default_value.empty() ? (o.optional ? "optional" : "**required**") : "`" + o.default_value + "`";
      EXPECT_NE(line.find("| " + want + " |"), std::string::npos)
          << spec.name << "." << o.name << ": docs say\n"
          << line << "\nbut the default is " << want;
    }
  }
}

TEST(ScenarioDocs, EverySectionKeyIsDocumented) {
  const std::string doc = reference();
  for (const auto& k : top_level_keys()) EXPECT_NE(doc.find("`" + k + "`"), std::string::npos) << k;
  for (const auto& k : run_keys()) EXPECT_NE(doc.find("| `" + k + "` |"), std::string::npos) << "run." << k;
  for (const auto& k : output_keys())
    EXPECT_NE(doc.find("| `" + k + "` |"), std::string::npos) << "outputs." << k;
}

}  // namespace
}  // namespace waitlab::scenarios
