// waitlab Python module — a scenario checked in-process before a child `waitlab` simulates it
// (docs/python.md, "Runs").
//
// Promise: check_scenario() is what `waitlab run`, `whatif` and `sweep` do with a scenario
// before anything is simulated: scenarios::load_scenario() (or parse_scenario() for a text, which
// a dict scenario is written as) with the `--set` overrides and the extra variants, which checks
// every key, unit and model (InputError naming "file:line:col" or the `--set`). SimGrid's engine
// is never started here: it can run once per process, so the simulation itself runs in a child
// process. Returns {"name", "outputs_dir", "variants": [names]}.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>

namespace waitlab::python {

pybind11::dict check_scenario(const std::string& file, const std::optional<std::string>& text,
                              const std::vector<std::string>& sets, const std::vector<std::string>& variants);

}  // namespace waitlab::python
