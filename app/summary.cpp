#include "app/summary.hpp"
#include "analysis/registry/registry.hpp"
#include "analysis/output/json_text.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>

#include "util/error.hpp"
#include "app/version.hpp"
#include "models/spec.hpp"

namespace waitlab::app {

namespace {

using nlohmann::ordered_json;

const char* semantics_name(sim::Semantics s) {
  return s == sim::Semantics::Waitlab ? "waitlab" : "smpi-default";
}

// Option values in SI base units; integer quantities as JSON integers.
ordered_json option_json(const models::Options& opts, const models::Spec* spec) {
  ordered_json j = ordered_json::object();
  // In the spec's order (as `waitlab describe` lists them), then anything the spec does not know.
  std::vector<std::pair<std::string, const models::OptionValue*>> ordered;
  if (spec)
    for (const auto& o : spec->options) {
      const auto it = opts.values().find(o.name);
      if (it != opts.values().end()) ordered.emplace_back(o.name, &it->second);
    }
  for (const auto& [name, value] : opts.values())
    if (!spec || !spec->option(name)) ordered.emplace_back(name, &value);
  for (const auto& [name, value_ptr] : ordered) {
    const models::OptionValue& value = *value_ptr;
    const models::OptionSpec* o = spec ? spec->option(name) : nullptr;
    if (const double* d = std::get_if<double>(&value)) {
      const bool integral = o && o->type == models::OptionType::Quantity &&
                            o->quantity == units::Quantity::Integer && std::isfinite(*d) &&
                            std::floor(*d) == *d && std::fabs(*d) < 0x1p53;
      if (integral)
        j[name] = static_cast<std::int64_t>(*d);
      else
        j[name] = *d;
    } else if (const auto* s = std::get_if<std::string>(&value)) {
      j[name] = *s;
    } else if (const bool* b = std::get_if<bool>(&value)) {
      j[name] = *b;
    } else if (const auto* l = std::get_if<std::vector<std::int64_t>>(&value)) {
      j[name] = *l;
    }
  }
  return j;
}

const models::Spec* spec_of(models::SpecKind kind, const std::string& type) {
  if (kind == models::SpecKind::Workload) {
    const auto* w = models::find_workload(type);
    return w ? &w->spec : nullptr;
  }
  if (kind == models::SpecKind::Perturbation) {
    const auto* p = models::find_perturbation(type);
    return p ? &p->spec : nullptr;
  }
  return models::Registry::instance().find(kind, type);
}

ordered_json model_json(models::SpecKind kind, const scenarios::ModelConfig& m) {
  return ordered_json{{"type", m.type}, {"options", option_json(m.options, spec_of(kind, m.type))}};
}

void add_figures(ordered_json& j, const Figures& f) {
  j["simulated_time_s"] = f.simulated_time;
  j["wall_time_s"] = f.wall_time;
  j["mpi_operations"] = f.mpi_operations;
  j["events"] = f.events;
  j["compute_intervals"] = f.compute_intervals;
  j["nominal_compute_s"] = f.nominal_compute;
  ordered_json inj;
  inj["total_s"] = f.injected_total();
  ordered_json by_cause = ordered_json::object();
  for (std::size_t c = 0; c < trace::kCauseCount; ++c) {
    const auto& cf = f.injected[c];
    ordered_json cj;
    cj["total_s"] = cf.total;
    cj["intervals"] = cf.intervals;
    cj["ranks"] = cf.ranks;
    cj["per_rank"] = ordered_json{
        {"max_s", cf.max_rank},
        {"max_rank", cf.max_rank_id == trace::kNoRank ? ordered_json(nullptr) : ordered_json(cf.max_rank_id)},
        {"mean_s", cf.mean_rank}};
    by_cause[std::string(trace::cause_name(static_cast<trace::Cause>(c)))] = cj;
  }
  inj["by_cause"] = by_cause;
  j["injected"] = inj;
}

// The collective set the engine ran with: under smpi-default semantics it is SimGrid's
// default selector whatever run.collectives says. The engine records its choice in the
// trace; the scenario's setting is only the fallback for a trace without attributes.
std::string collectives_used(const scenarios::Scenario& s, const Outcome& o) {
  const std::string used = o.result.trace.attribute("collectives");
  return used.empty() ? s.run.collectives : used;
}

// The algorithm every choosable collective ran with (sim::effective_collective_algorithms):
// the preset's (SimGrid's default selector under smpi-default), run.collective_algorithms on
// top, "default" where neither says.
ordered_json collective_algorithms_used(const scenarios::Scenario& s) {
  ordered_json j = ordered_json::object();
  for (const auto& [coll, algo] : sim::effective_collective_algorithms(scenarios::run_options(s))) j[coll] = algo;
  return j;
}

// The scenario's attributes of a recorded trace (sim::RunOptions::attributes).
std::vector<trace::Attribute> annotations(const scenarios::Scenario& s, bool baseline) {
  std::string perturbations;
  for (const auto& p : s.perturbations) perturbations += (perturbations.empty() ? "" : ",") + p.type;
  std::vector<trace::Attribute> a = {
      {"scenario.name", s.name},
      {"scenario.file", std::filesystem::path(s.file).filename().string()},
      {"scenario.platform", s.platform.type},
      {"scenario.workload", s.workload.type},
      {"scenario.perturbations", baseline ? "" : perturbations},
      {"scenario.seed", std::to_string(s.run.seed)},
      {"scenario.baseline", baseline ? "true" : "false"},
      {"generator", std::string("waitlab ") + kVersion},
  };
  // The engine describes an XML platform by the path it opened, which the loader resolved
  // against the scenario file's directory as the user spelled it (relative or absolute), so
  // it depends on the working directory. The trace records the path as written instead: two
  // runs of one scenario give the same bytes from anywhere.
  if (s.platform.type == "xml" && s.platform.options.has("file"))
    a.push_back({"platform", "xml: " + s.platform.options.string("file")});
  return a;
}

bool close(double a, double b) {
  return std::fabs(a - b) <= std::max(1e-15, 1e-9 * std::max(std::fabs(a), std::fabs(b)));
}

void compare_node(const nlohmann::json& e, const nlohmann::json& a, const std::string& path,
                  std::vector<std::string>& out) {
  const std::string name = path.empty() ? "(top)" : path;
  if (e.is_object()) {
    if (!a.is_object()) {
      out.push_back(name + ": expected an object, got " + output::json_text(a, -1));
      return;
    }
    for (const auto& [k, v] : e.items()) {
      const std::string p = path.empty() ? k : path + "." + k;
      if (!a.contains(k))
        out.push_back(p + ": missing (expected " + output::json_text(v, -1) + ")");
      else
        compare_node(v, a.at(k), p, out);
    }
    for (const auto& [k, v] : a.items())
      if (!e.contains(k))
        out.push_back((path.empty() ? k : path + "." + k) + ": not expected (got " + output::json_text(v, -1) + ")");
    return;
  }
  if (e.is_number_float() || (e.is_number() && a.is_number_float())) {
    if (!a.is_number() || !close(e.get<double>(), a.get<double>()))
      out.push_back(name + ": expected " + output::json_text(e, -1) + ", got " + output::json_text(a, -1));
    return;
  }
  if (e != a) out.push_back(name + ": expected " + output::json_text(e, -1) + ", got " + output::json_text(a, -1));
}

}  // namespace

double Figures::injected_total() const {
  double s = 0;
  for (const auto& c : injected) s += c.total;
  return s;
}

Figures figures(const trace::RecordTotals& s, const sim::RunStats& stats) {
  Figures f;
  f.simulated_time = stats.simulated_time;
  f.mpi_operations = stats.mpi_operations;
  f.events = stats.events;  // recorded or not (sim::RunOptions::record_events)
  f.compute_intervals = s.compute_intervals;
  f.nominal_compute = s.nominal_compute;
  if (std::isfinite(s.first_init) && std::isfinite(s.last_finalize))
    f.wall_time = s.last_finalize - s.first_init;
  else  // no MPI_Init or MPI_Finalize: the span of the events (Trace::begin_time(), end_time())
    f.wall_time = (std::isfinite(s.last_event) ? s.last_event : 0.0) -
                  (std::isfinite(s.first_event) ? s.first_event : 0.0);
  for (std::size_t k = 0; k < trace::kCauseCount; ++k) {
    auto& cf = f.injected[k];
    cf.intervals = s.injected_intervals[k];
    const auto& per_rank = s.injected_by_rank[k];
    for (std::size_t r = 0; r < per_rank.size(); ++r) {
      const double v = per_rank[r];
      cf.total += v;
      if (v > 0) ++cf.ranks;
      if (v > cf.max_rank) {
        cf.max_rank = v;
        cf.max_rank_id = static_cast<trace::Rank>(r);
      }
    }
    cf.mean_rank = per_rank.empty() ? 0.0 : cf.total / static_cast<double>(per_rank.size());
  }
  return f;
}

Figures figures(const trace::Trace& t, const sim::RunStats& stats) {
  return figures(trace::totals(t), stats);
}

Outcome simulate_scenario(const scenarios::Scenario& s, bool progress,
                          std::unique_ptr<models::Workload> workload, bool events, const TraceFiles& files) {
  const auto t0 = std::chrono::steady_clock::now();
  Outcome o;
  scenarios::Run run = scenarios::prepare(s, std::move(workload), &o.replay_notes);
  run.options.progress = progress;
  run.options.record_events = events;
  o.ranks = run.workload->ranks();
  o.iterations = run.workload->iterations();
  sim::RunOptions options = run.options;
  options.return_trace = files.keep;
  options.attributes = annotations(s, false);
  options.trace_file = files.run;
  o.result = sim::simulate(run.platform, *run.workload, run.perturbations, options);
  o.fig = figures(o.result.stats.totals, o.result.stats);
  if (s.run.baseline) {
    const models::Perturbations none;
    options.attributes = annotations(s, true);
    options.trace_file = files.baseline;
    o.baseline = sim::simulate(run.platform, *run.workload, none, options);
    o.base_fig = figures(o.baseline->stats.totals, o.baseline->stats);
  }
  if (!s.run.footprint.empty()) {
    // The run's platform, workload and engine options with the twin's perturbations, made as
    // the run's are (the same seed: the same noise); its trace comes back for the analysis.
    const scenarios::Scenario twin_s = scenarios::footprint_twin(s);
    const models::Perturbations twin_perturbations = scenarios::make_perturbations(twin_s, run);
    sim::RunOptions twin_options = run.options;
    twin_options.record_events = true;
    twin_options.return_trace = true;
    twin_options.trace_file = files.twin;
    twin_options.progress = false;
    twin_options.attributes = annotations(twin_s, false);
    o.twin = sim::simulate(run.platform, *run.workload, twin_perturbations, twin_options);
  }
  const auto analyses = analysis::select_analyses(s.outputs.analyses);
  if (std::find(analyses.begin(), analyses.end(), "timeresolved") != analyses.end()) {
    sim::RunOptions ideal = run.options;  // its trace comes back: it is the analysis' reference
    ideal.network = sim::NetworkChange{true, 1, 1};
    ideal.minprofile = false;
    o.ideal = sim::simulate(run.platform, *run.workload, run.perturbations, ideal);
  }
  o.host_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return o;
}

nlohmann::ordered_json summary_json(const scenarios::Scenario& s, const Outcome& o) {
  ordered_json j;
  j["schema"] = "waitlab.summary";
  j["schema_version"] = kSummarySchemaVersion;
  j["generator"] = std::string("waitlab ") + kVersion;
  j["scenario"] = ordered_json{{"name", s.name},
                               {"description", s.description},
                               {"file", std::filesystem::path(s.file).filename().string()},
                               {"overrides", s.overrides}};
  // A what-if variant's run says which variant it is and what the variant changed.
  if (!s.variant.empty()) {
    std::vector<std::string> changes;
    for (const auto& v : s.variants)
      if (v.name == s.variant) changes = v.changes;
    j["scenario"]["variant"] = s.variant;
    j["scenario"]["changes"] = changes;
  }
  j["ranks"] = o.ranks;
  j["iterations"] = o.iterations;
  j["platform"] = model_json(models::SpecKind::Platform, s.platform);
  j["workload"] = model_json(models::SpecKind::Workload, s.workload);
  if (s.workload.type == models::kTraceWorkload) j["replay_notes"] = o.replay_notes;
  j["smpi_errors"] = ordered_json{{"count", o.result.stats.smpi_errors}, {"first", o.result.stats.smpi_first_error}};
  ordered_json perts = ordered_json::array();
  for (const auto& p : s.perturbations) perts.push_back(model_json(models::SpecKind::Perturbation, p));
  j["perturbations"] = perts;
  j["run"] = ordered_json{{"seed", s.run.seed},
                          {"eager_threshold_bytes", s.run.eager_threshold},
                          {"collectives", collectives_used(s, o)},
                          {"collective_algorithms", collective_algorithms_used(s)},
                          {"semantics", semantics_name(s.run.semantics)},
                          {"baseline", s.run.baseline},
                          {"footprint", s.run.footprint},
                          {"timing_precision_s", s.run.timing_precision}};
  add_figures(j, o.fig);
  if (o.base_fig) {
    ordered_json b;
    b["simulated_time_s"] = o.base_fig->simulated_time;
    b["wall_time_s"] = o.base_fig->wall_time;
    b["mpi_operations"] = o.base_fig->mpi_operations;
    b["events"] = o.base_fig->events;
    b["simulated_time_difference_s"] = o.fig.simulated_time - o.base_fig->simulated_time;
    b["wall_time_difference_s"] = o.fig.wall_time - o.base_fig->wall_time;
    j["baseline"] = b;
  } else {
    j["baseline"] = nullptr;
  }
  return j;
}

nlohmann::ordered_json expected_json(const scenarios::Scenario& s, const Outcome& o) {
  ordered_json j;
  j["schema"] = "waitlab.expected";
  j["schema_version"] = kExpectedSchemaVersion;
  j["scenario"] = s.name;
  j["ranks"] = o.ranks;
  j["iterations"] = o.iterations;
  j["simulated_time_s"] = o.fig.simulated_time;
  j["wall_time_s"] = o.fig.wall_time;
  j["mpi_operations"] = o.fig.mpi_operations;
  j["events"] = o.fig.events;
  j["compute_intervals"] = o.fig.compute_intervals;
  ordered_json inj;
  for (std::size_t c = 0; c < trace::kCauseCount; ++c)
    inj[std::string(trace::cause_name(static_cast<trace::Cause>(c)))] = o.fig.injected[c].total;
  j["injected_s"] = inj;
  if (o.base_fig) j["baseline_simulated_time_s"] = o.base_fig->simulated_time;
  return j;
}

std::vector<std::string> compare_expected(const nlohmann::json& expected, const nlohmann::json& actual) {
  std::vector<std::string> out;
  compare_node(expected, actual, "", out);
  return out;
}

}  // namespace waitlab::app
