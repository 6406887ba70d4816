// The preparation (scenario.hpp, prepare()): a loaded scenario turned into the objects
// sim::simulate() takes, the platform, the workload (a `trace` workload read from its file),
// the placement, the perturbations and the engine's options, with a variant's changes applied.
// A model's InputError is pointed at the option the user wrote.
#include "scenarios/prepare.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>

#include "analysis/trace/ti.hpp"
#include "analysis/trace/trace_io.hpp"
#include "models/replay.hpp"
#include "util/units.hpp"
#include "scenarios/messages.hpp"
#include "util/error.hpp"

namespace waitlab::scenarios {

namespace {

using detail::hint;
using detail::join;

// A model factory's InputError names the section position and the option; point at the
// option's own line when the user wrote it.
[[noreturn]] void rethrow_at_option(const InputError& e, const ModelConfig& m) {
  std::string msg = e.what();
  const std::string prefix = m.where + ": ";
  if (msg.rfind(prefix, 0) == 0) {
    const auto q = msg.find("option '");
    if (q != std::string::npos) {
      const auto start = q + 8;
      const auto end = msg.find('\'', start);
      const std::string opt = msg.substr(start, end == std::string::npos ? 0 : end - start);
      for (const auto& g : m.given)
        if (g.key == opt) throw InputError(g.where + ": " + msg.substr(prefix.size()));
    }
  }
  throw InputError(msg);
}

// Where an option of a section was written (its own position if given, else the section's).
std::string option_where(const ModelConfig& m, std::string_view key) {
  for (const auto& g : m.given)
    if (g.key == key) return g.where;
  return m.where;
}

// The compute scales of a `trace` workload section as written, one per entry.
std::vector<std::string> scale_texts(const ModelConfig& w) {
  std::vector<std::string> out;
  if (!w.options.has("compute_scale")) return out;
  const std::string& text = w.options.string("compute_scale");
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = text.find(',', start);
    const std::string part = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (part.empty())
      throw InputError(option_where(w, "compute_scale") + ": compute scale '" + text +
                       "': an empty entry (write FACTOR, REGION=FACTOR, @RANKS=FACTOR or REGION@RANKS=FACTOR, "
                       "comma-separated)");
    out.push_back(part);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

// The options of a `trace` workload section, checked.
models::ReplayOptions trace_options(const ModelConfig& w) {
  models::ReplayOptions o;
  for (const auto& part : scale_texts(w))
    o.scales.push_back(models::parse_compute_scale(part, option_where(w, "compute_scale")));
  if (w.options.has("iterations_from")) {
    o.iteration_region = w.options.string("iterations_from");
    if (o.iteration_region.empty())
      throw InputError(option_where(w, "iterations_from") +
                       ": option 'iterations_from' of workload trace: expected a region name, got ''");
  }
  if (w.options.has("speed")) {
    o.speed = w.options.number("speed");
    if (!(o.speed >= 1) || !std::isfinite(o.speed))
      throw InputError(option_where(w, "speed") + ": option 'speed' of workload trace: must be at least 1f (one flop "
                       "per second), got " + units::format(o.speed, units::Quantity::Speed));
  }
  return o;
}

// What the options of a `trace` section name must be in the trace: the regions of the compute
// scales and of iterations_from, the ranks of the compute scales. Checked once the trace is
// read, before anything runs; an option that names nothing would change nothing, silently.
void check_trace_options(const ModelConfig& w, const models::ReplayOptions& o, const models::Workload& workload,
                         const std::string& trace_name) {
  std::vector<std::string> regions;
  for (const auto& r : workload.definitions().regions)
    if (r.op == trace::MpiOp::None) regions.push_back(r.name);
  const auto known = [&](const std::string& name) {
    return std::find(regions.begin(), regions.end(), name) != regions.end();
  };
  const std::string listed = " (its regions: " + (regions.empty() ? std::string("none") : join(regions)) + ")";
  const std::vector<std::string> texts = scale_texts(w);
  for (std::size_t i = 0; i < o.scales.size() && i < texts.size(); ++i) {
    const auto& sc = o.scales[i];
    const std::string at = option_where(w, "compute_scale") + ": compute scale '" + texts[i] + "': ";
    if (!sc.region.empty() && !known(sc.region))
      throw InputError(at + "the trace " + trace_name + " has no region '" + sc.region + "'" +
                       hint(sc.region, regions) + listed);
    if (sc.last >= workload.ranks())
      throw InputError(at + "rank " + std::to_string(sc.last) + " does not exist (the trace " + trace_name +
                       " has ranks 0.." + std::to_string(workload.ranks() - 1) + ")");
  }
  if (!o.iteration_region.empty() && !known(o.iteration_region))
    throw InputError(option_where(w, "iterations_from") + ": option 'iterations_from' of workload trace: the trace " +
                     trace_name + " has no region '" + o.iteration_region + "'" + hint(o.iteration_region, regions) +
                     listed);
}

// The trace file of a `trace` section: a relative path is relative to the scenario file.
std::string trace_path(const ModelConfig& w, const std::string& scenario_file) {
  const std::filesystem::path p(w.options.string("trace"));
  std::string path = p.string();
  if (p.is_relative() && !scenario_file.empty()) path = (std::filesystem::path(scenario_file).parent_path() / p).string();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw InputError(option_where(w, "trace") + ": option 'trace' of workload trace: no such file " + path +
                     " (a relative path is relative to the scenario file)");
  if (!std::filesystem::is_regular_file(path, ec) && !std::filesystem::is_directory(path, ec))
    throw InputError(option_where(w, "trace") + ": option 'trace' of workload trace: " + path +
                     " is not a regular file (a FIFO, a device or a socket): waitlab reads only files");
  return path;
}

// What a TI trace was recorded with is not in it: SMPI's defaults unless smpirun was given
// --cfg settings. One line saying what the replay assumes and how to match the recording.
std::string ti_protocol_note(const Scenario& s) {
  std::string chosen;
  for (const auto& [coll, algo] : sim::effective_collective_algorithms(run_options(s)))
    if (algo != "default") chosen += (chosen.empty() ? "" : ", ") + coll + "=" + algo;
  std::ostringstream eager;
  eager.precision(17);
  eager << s.run.eager_threshold;
  const bool smpi = s.run.semantics == sim::Semantics::SmpiDefault;
  std::string note = "protocol: ";
  if (smpi)
    note += "SMPI's defaults (run.semantics=smpi-default: sends below " + eager.str() +
            " B detached, SimGrid's default collective selector" + (chosen.empty() ? "" : "; " + chosen) +
            "), as `smpirun -trace-ti` records without --cfg options; a recording made with others replays as "
            "recorded with them given here too: run.eager_threshold for smpi/send-is-detached-thresh, "
            "run.collective_algorithms.X=Y for smpi/X:Y";
  else
    note += "waitlab's (run.semantics=waitlab: sends below " + eager.str() + " B eager; collectives '" +
            s.run.collectives + "': " + chosen +
            "), not SMPI's defaults, with which `smpirun -trace-ti` recorded; to replay as recorded: --set "
            "run.semantics=smpi-default, and the recording's --cfg settings as run.eager_threshold "
            "(smpi/send-is-detached-thresh) and run.collective_algorithms.X=Y (smpi/X:Y)";
  return note;
}

}  // namespace

std::unique_ptr<models::Workload> load_trace_workload(const ModelConfig& w, const std::string& scenario_file,
                                                      std::vector<std::string>* notes) {
  const models::ReplayOptions o = trace_options(w);
  const std::string path = trace_path(w, scenario_file);
  models::ReplayReport report;
  std::unique_ptr<models::Workload> workload;
  const std::string name = std::filesystem::path(path).filename().string();
  const trace::FormatDescriptor& format = trace::descriptor(trace::format_of_input(path));
  // A trace without timestamps (TI) gives its compute in flops already, replayed at the
  // platform's core speed: a speed for converting seconds would change nothing.
  if (!format.timestamps && o.speed > 0)
    throw InputError(option_where(w, "speed") + ": option 'speed' of workload trace: the " + std::string(format.name) +
                     " trace " + name +
                     " gives its compute in flops already (replayed at the platform's core speed, "
                     "platform.speed); speed converts the seconds of OTF2, Paraver and .wlt traces");
  if (!format.timestamps)
    workload = models::replay_ti_file(path, name, o, &report);
  else
    workload = models::replay_trace(trace::read_trace(path), name, o, &report);
  check_trace_options(w, o, *workload, name);
  if (notes) *notes = std::move(report.notes);
  return workload;
}

sim::RunOptions run_options(const Scenario& s) {
  sim::RunOptions o;
  static_cast<sim::RunSettings&>(o) = s.run;  // the settings as the scenario gives them
  o.name = s.name;
  return o;
}

Run prepare(const Scenario& s, std::unique_ptr<models::Workload> workload, std::vector<std::string>* replay_notes) {
  Run r;
  try {
    r.platform = models::make_platform(s.platform.type, s.platform.options);
  } catch (const InputError& e) {
    rethrow_at_option(e, s.platform);
  }
  if (r.platform.kind == models::PlatformKind::Xml && !r.platform.xml_file.empty()) {
    // A platform file is part of the scenario: a relative path is relative to the scenario file.
    // The resolved path is for opening only; what the run records (trace attributes,
    // summary.json) is the path as written (app/summary.cpp), so that it does not depend on
    // the working directory.
    const std::filesystem::path xml(r.platform.xml_file);
    if (xml.is_relative()) r.platform.xml_file = (std::filesystem::path(s.file).parent_path() / xml).string();
    std::error_code ec;
    if (!std::filesystem::is_regular_file(r.platform.xml_file, ec)) {
      std::string where = s.platform.where;
      for (const auto& g : s.platform.given)
        if (g.key == "file") where = g.where;
      throw InputError(where + ": option 'file' of platform 'xml': no such file " + r.platform.xml_file +
                       " (a relative path is relative to the scenario file)");
    }
  }
  if (workload) {
    r.workload = std::move(workload);
  } else if (s.workload.type == models::kTraceWorkload) {
    r.workload = load_trace_workload(s.workload, s.file, replay_notes);
  } else {
    try {
      r.workload = models::make_workload(s.workload.type, s.workload.options);
    } catch (const InputError& e) {
      rethrow_at_option(e, s.workload);
    }
  }
  if (replay_notes != nullptr && s.workload.type == models::kTraceWorkload &&
      !trace::descriptor(trace::format_of_input(trace_path(s.workload, s.file))).timestamps)
    replay_notes->push_back(ti_protocol_note(s));
  try {
    r.placement = models::place(r.platform, r.workload->ranks());
  } catch (const InputError& e) {
    // Point at the rank count if the user wrote one, else at the workload section.
    std::string where = s.workload.where;
    for (const auto& g : s.workload.given)
      if (g.key == "ranks") where = g.where;
    throw InputError(where + ": " + e.what());
  }
  r.perturbations = make_perturbations(s, r);
  r.options = run_options(s);
  r.options.minprofile =
      std::find(s.outputs.analyses.begin(), s.outputs.analyses.end(), "minprofile") != s.outputs.analyses.end();
  r.options.network = s.change.network;
  r.workload = models::change_workload(std::move(r.workload), s.change.workload, r.perturbations, r.platform.speed,
                                       s.change.where);
  return r;
}

models::Perturbations make_perturbations(const Scenario& s, const Run& r) {
  models::ModelContext ctx;
  ctx.ranks = r.workload->ranks();
  ctx.iterations = r.workload->iterations();
  ctx.grid = r.workload->grid();
  ctx.placement = r.placement;
  ctx.regions = &r.workload->definitions();
  ctx.seed = s.run.seed;
  models::Perturbations out;
  for (const auto& p : s.perturbations) {
    try {
      out.add(models::make_perturbation(p.type, p.options, ctx));
    } catch (const InputError& e) {
      rethrow_at_option(e, p);
    }
  }
  return out;
}

namespace detail {

void check_models(const Scenario& s, bool read_trace) {
  if (read_trace) {
    (void)prepare(s);
    return;
  }
  (void)trace_options(s.workload);
  const std::string path = trace_path(s.workload, s.file);
  (void)trace::format_of_input(path);
  try {
    (void)models::make_platform(s.platform.type, s.platform.options);
  } catch (const InputError& e) {
    rethrow_at_option(e, s.platform);
  }
}

}  // namespace detail

}  // namespace waitlab::scenarios
