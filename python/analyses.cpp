// waitlab Python module — the registry's analyses on a trace the module read (analyses.hpp).
#include "python/analyses.hpp"

#include <pybind11/stl.h>

#include <map>
#include <nlohmann/json.hpp>

#include "analysis/registry/registry.hpp"
#include "analysis/timeresolved/output.hpp"
#include "analysis/trace/clock.hpp"
#include "app/analyze.hpp"
#include "app/waitlab_child.hpp"
#include "models/spec.hpp"
#include "util/error.hpp"

namespace py = pybind11;

namespace waitlab::python {

namespace {

bool flag(const std::string& name, const std::string& value) {
  if (value == "true") return true;
  if (value == "false") return false;
  throw InputError("--" + name + ": expected true or false, got '" + value + "'");
}

// The command line's AnalyzeArgs from the options as Python names them.
app::AnalyzeArgs analyze_args(const TraceData& data, const std::vector<std::string>& names,
                              const std::map<std::string, std::string>& options) {
  app::AnalyzeArgs a;
  a.trace = data.path;
  a.analyses = names;
  for (const auto& [key, value] : options) {
    std::string cli = key;
    for (char& c : cli)
      if (c == '_') c = '-';
    if (key == "clock_correction") a.clock_correction = value;
    else if (key == "alltoallv_nxn") a.alltoallv_nxn = flag(cli, value);
    else if (key == "windows") a.windows = value;
    else if (key == "convention") a.convention = value;
    else if (key == "ideal") a.ideal = value;
    else if (key == "time_range") a.cut.time_range = value;
    else if (key == "region") a.cut.region = value;
    else if (key == "iterations") a.cut.iterations = value;
    else {
      const std::string best = models::did_you_mean(key, analyze_option_names());
      std::string allowed;
      for (const auto& n : analyze_option_names()) allowed += (allowed.empty() ? "" : ", ") + n;
      throw InputError("analyze: unknown option '" + key + "'" + (best.empty() ? "" : "; did you mean '" + best + "'?") +
                       " (allowed: " + allowed + ")");
    }
    if (value.empty()) throw InputError("--" + cli + ": empty value");
  }
  return a;
}

}  // namespace

const std::vector<std::string>& analyze_option_names() {
  static const std::vector<std::string> names = {"clock_correction", "alltoallv_nxn", "convention", "ideal",
                                                 "windows",          "time_range",    "region",     "iterations"};
  return names;
}

py::dict run_analyses(const TraceData& data, const std::vector<std::string>& names, const std::string& dir,
                      const std::map<std::string, std::string>& options) {
  const app::AnalyzeArgs args = analyze_args(data, names, options);
  std::vector<std::string> ran;
  std::map<std::string, std::vector<std::string>> files;
  std::string summary, clock;
  {
    py::gil_scoped_release nogil;
    // The steps of app::analyze_command, on a copy of the trace as the module read it.
    app::AnalyzeOptions o = app::analyze_options(args);
    app::ReadTrace rt;
    rt.trace = data.trace;
    rt.ranks = rt.trace.ranks();
    rt.threads = rt.trace.threads.size();
    rt.events = rt.trace.event_count();
    rt.skipped = data.skipped;
    rt.warnings = data.warnings;
    app::apply_convention(o, args, rt.trace.origin);
    rt.clock_report = trace::correct_clocks(rt.trace, o.clock);
    if (o.sel.has("timeresolved")) analysis::check_window_count(rt.trace, o.tri);
    app::AnalysisReport report = app::run_analyses(rt.trace, o.sel, std::nullopt, o.tri);
    // The SMPI replay needs SimGrid's engine, once per process: a child waitlab runs it.
    app::add_smpi_estimate(report, rt, args, [](const app::ReadTrace&, const app::AnalyzeArgs& a,
                                                const analysis::TimeResolvedResult& measured) {
      return app::smpi_ideal_by_child(a, measured);
    });
    const output::Context context = report.context();
    for (const output::Entry* e : report.ran) {
      ran.push_back(e->name);
      files[e->name] = e->write(dir, context, report.results.find(e->name));
    }
    summary = app::analyses_json(report).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    const auto& c = rt.clock_report;
    const nlohmann::ordered_json cj = {{"mode", args.clock_correction},
                                       {"method", c.method},
                                       {"reason", c.reason},
                                       {"violations_before", c.violations_before},
                                       {"violations_after", c.violations_after},
                                       {"events_moved", c.events_moved}};
    clock = cj.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  }
  py::dict d;
  d["ran"] = ran;
  d["summary"] = summary;
  d["clock"] = clock;
  d["files"] = files;
  return d;
}

}  // namespace waitlab::python
