// waitlab Python module — the registry's analyses on a trace the module read (analyses.hpp).
#include "python/analyses.hpp"

#include <pybind11/stl.h>

#include <map>
#include <stdexcept>

#include "analysis/output/html.hpp"
#include "analysis/registry/registry.hpp"
#include "util/error.hpp"

namespace py = pybind11;

namespace waitlab::python {

py::dict run_analyses(const TraceData& data, const std::vector<std::string>& names, const std::string& dir) {
  std::vector<std::string> selected;
  try {
    selected = analysis::select_analyses(names);
  } catch (const std::invalid_argument& e) {
    throw InputError(std::string("analyses: ") + e.what());
  }
  std::vector<std::string> ran;
  std::map<std::string, std::vector<std::string>> files;
  output::Json summary = output::Json::object();
  {
    py::gil_scoped_release nogil;
    const analysis::AnalysisRun run = analysis::run_analyses(data.trace, selected);
    const output::Context context = run.context(data.trace);
    for (const output::Entry* e : run.ran) {
      const std::any& result = *run.results.find(e->name);
      ran.push_back(e->name);
      summary[e->name] = e->summary(context, result);
      files[e->name] = e->write(dir, context, &result);
    }
  }
  py::dict d;
  d["ran"] = ran;
  d["summary"] = summary.dump(-1, ' ', false, output::Json::error_handler_t::replace);
  d["files"] = files;
  return d;
}

}  // namespace waitlab::python
