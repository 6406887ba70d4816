// docs/scenarios.md is the scenario reference: every section key and every option of every
// registered model must be documented there, with its current default; the error examples
// in it, README.md and docs/cli.md must be what waitlab prints.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "util/error.hpp"
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

std::string read(const std::string& relative) {
  std::ifstream in(std::string(WAITLAB_SOURCE_DIR) + "/" + relative);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto pos = text.find(from);
  if (pos == std::string::npos) throw std::logic_error("'" + from + "' is not in the text");
  return text.replace(pos, from.size(), to);
}

// The error line printed for `text` read as `file`.
std::string error_line(const std::string& text, const std::string& file) {
  try {
    parse_scenario(text, file);
  } catch (const InputError& e) {
    return std::string("waitlab: error: ") + e.what();
  }
  return "(no error)";
}

// The error examples in the docs are what waitlab prints for the mistakes they describe.
TEST(ScenarioDocs, ErrorExamplesAreTrue) {
  const std::string doc = reference();
  const auto start = doc.find("```yaml\n");
  ASSERT_NE(start, std::string::npos);
  const std::string example = doc.substr(start + 8, doc.find("```", start + 8) - start - 8);
  EXPECT_EQ(error_line(example, "demo.yaml"), "(no error)");
  for (const auto& [from, to] :
       std::vector<std::pair<std::string, std::string>>{{"  iterations: 100", "  iteratons: 100"},
                                                        {"duration: 20ms", "duration: 20"},
                                                        {"ranks: 1024", "ranks: 2048"}}) {
    const std::string line = error_line(replaced(example, from, to), "demo.yaml");
    EXPECT_NE(doc.find("  " + line + "\n"), std::string::npos) << "docs/scenarios.md lacks\n" << line;
  }
  // README.md and docs/cli.md: `iterations` misspelt in scenarios/demo.yaml.
  const std::string line = error_line(replaced(read("scenarios/demo.yaml"), "  iterations:", "  iteratons:"),
                                      "scenarios/demo.yaml");
  EXPECT_NE(read("README.md").find("\n" + line + "\n"), std::string::npos) << "README.md lacks\n" << line;
  EXPECT_NE(read("docs/cli.md").find("\n" + line + "\n"), std::string::npos) << "docs/cli.md lacks\n" << line;
}

}  // namespace
}  // namespace waitlab::scenarios
