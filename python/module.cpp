// waitlab Python module — the compiled extension `waitlab._waitlab` (docs/python.md).
//
// Promise: the same C++ as the command line, no copy of it: read_trace() is
// analysis/trace/trace_io.hpp's reader for every format (the GIL released while it reads), and
// a waitlab::InputError (bad input: the message names the file and the position) arrives in
// Python as waitlab.InputError, a ValueError, with the same message. The tables come as
// columns (frames.hpp), the analyses' results as the registry's files (analyses.hpp), a
// scenario's check as the loader's (scenarios.hpp; runs themselves are child processes, which
// the package starts); the package python/waitlab/__init__.py makes DataFrames of them.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "analysis/registry/registry.hpp"
#include "analysis/trace/trace_io.hpp"
#include "python/analyses.hpp"
#include "python/frames.hpp"
#include "python/scenarios.hpp"
#include "util/error.hpp"

namespace py = pybind11;
using waitlab::python::TraceData;

namespace {

std::unique_ptr<TraceData> read_trace_data(const std::string& path) {
  auto data = std::make_unique<TraceData>();
  data->path = path;
  py::gil_scoped_release nogil;
  data->trace = waitlab::trace::read_trace(path, &data->skipped, &data->warnings);
  return data;
}

py::object declared_span(const TraceData& d) {
  if (!d.trace.has_declared_span()) return py::none();
  return py::make_tuple(d.trace.span_begin, d.trace.span_end);
}

py::dict trace_attributes(const TraceData& d) {
  py::dict a;
  for (const auto& [key, value] : d.trace.attributes) a[waitlab::python::text(key)] = waitlab::python::text(value);
  return a;
}

}  // namespace

PYBIND11_MODULE(_waitlab, m) {
  m.doc() = "waitlab's C++ trace readers and tables (use the package `waitlab`, not this module)";
  py::register_exception<waitlab::InputError>(m, "InputError", PyExc_ValueError);

  py::class_<TraceData>(m, "TraceData", "A trace read by waitlab's C++ reader")
      .def_readonly("path", &TraceData::path)
      .def_property_readonly("ranks", [](const TraceData& d) { return d.trace.locations.size(); })
      .def_property_readonly("threads", [](const TraceData& d) { return d.trace.threads.size(); })
      .def_property_readonly("origin", [](const TraceData& d) { return std::string(waitlab::trace::origin_name(d.trace.origin)); })
      .def_property_readonly("has_truth", [](const TraceData& d) { return d.trace.has_truth; })
      .def_property_readonly("span", &declared_span)
      .def_property_readonly("attributes", &trace_attributes)
      .def_readonly("skipped", &TraceData::skipped)
      .def_readonly("warnings", &TraceData::warnings)
      .def("event_columns", &waitlab::python::event_columns)
      .def("message_columns", &waitlab::python::message_columns)
      .def("region_columns", &waitlab::python::region_columns)
      .def("location_columns", &waitlab::python::location_columns)
      .def("run_analyses", &waitlab::python::run_analyses, py::arg("names"), py::arg("dir"), py::arg("options"));

  m.def("analysis_names", [] {
    std::vector<std::string> names;
    for (const auto* e : waitlab::analysis::analyses()) names.push_back(e->name);
    return names;
  }, "The registry's analyses, in the order they run");
  m.def("analyze_option_names", &waitlab::python::analyze_option_names,
        "The options of analyze(), as `waitlab analyze` names them (without --, _ for -)");
  m.def("check_scenario", &waitlab::python::check_scenario, py::arg("file"), py::arg("text"), py::arg("sets"),
        py::arg("variants"),
        "Loads and checks a scenario (a file, or a text named `file`) with --set overrides and extra variants, "
        "as the command line does before it simulates; raises InputError");
  m.def("read_trace", &read_trace_data, py::arg("path"),
        "Reads a trace (.wlt, OTF2, Paraver .prv/.prv.gz); raises InputError on bad input");
}
