// waitlab::app — Inputs::add_scenario (app/inputs.hpp): a scenario's files among the inputs. Apart
// from app/inputs.cpp because it needs the scenario loader, which the analyze library
// (wl_analyze: `waitlab-mpi analyze`, without SimGrid) does not link.
#include <filesystem>
#include <string>
#include <system_error>

#include "app/inputs.hpp"
#include "scenarios/scenario.hpp"

namespace waitlab::app {

namespace fs = std::filesystem;

void Inputs::add_scenario(const scenarios::Scenario& s) {
  if (!s.file.empty()) add(s.file, "the input");
  const fs::path base = fs::path(s.file).parent_path();
  const auto beside = [&](const std::string& p) {
    const fs::path f(p);
    return (f.is_relative() && !s.file.empty() ? base / f : f).string();
  };
  if (s.platform.type == "xml" && s.platform.options.has("file")) {
    const std::string f = s.platform.options.string("file");
    if (!f.empty()) add(beside(f), "the input");
  }
  if (s.workload.type == "trace" && s.workload.options.has("trace")) {
    const std::string t = s.workload.options.string("trace");
    std::error_code ec;
    if (!t.empty() && fs::exists(beside(t), ec)) add_trace(beside(t));
  }
}

}  // namespace waitlab::app
