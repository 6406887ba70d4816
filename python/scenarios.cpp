// waitlab Python module — a scenario checked in-process (scenarios.hpp).
#include "python/scenarios.hpp"

#include <pybind11/stl.h>

#include "scenarios/scenario.hpp"

namespace py = pybind11;

namespace waitlab::python {

py::dict check_scenario(const std::string& file, const std::optional<std::string>& text,
                        const std::vector<std::string>& sets, const std::vector<std::string>& variants) {
  scenarios::Scenario s;
  {
    py::gil_scoped_release nogil;
    const scenarios::VariantChoice choice{"", variants};
    s = text ? scenarios::parse_scenario(*text, file, sets, choice) : scenarios::load_scenario(file, sets, choice);
  }
  std::vector<std::string> names;
  for (const auto& v : s.variants) names.push_back(v.name);
  py::dict d;
  d["name"] = s.name;
  d["outputs_dir"] = s.outputs.dir;
  d["variants"] = names;
  return d;
}

}  // namespace waitlab::python
