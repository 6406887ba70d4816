// A scenario's sections (sections.hpp): the key names of each, the model sections (platform,
// workload, perturbations) checked against the registered specs, `run` and `outputs`.
#include "scenarios/sections.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>

#include "models/spec.hpp"
#include "util/units.hpp"
#include "scenarios/messages.hpp"
#include "analysis/registry/registry.hpp"
#include "analysis/timeresolved/windows.hpp"
#include "util/error.hpp"

namespace waitlab::scenarios {

namespace {

const std::vector<std::string> kTopKeys = {"name", "description", "platform", "workload",
                                           "perturbations", "run", "outputs", "variants"};
const std::vector<std::string> kRunKeys = {"seed",      "eager_threshold", "collectives", "collective_algorithms",
                                           "semantics", "baseline",        "timing_precision",
                                           "footprint"};
const std::vector<std::string> kOutputKeys = {"dir", "trace", "progress", "analyses", "windows"};
const std::vector<std::string> kSemantics = {"waitlab", "smpi-default"};

}  // namespace

const std::vector<std::string>& top_level_keys() {
  return kTopKeys;
}
const std::vector<std::string>& run_keys() {
  return kRunKeys;
}
const std::vector<std::string>& output_keys() {
  return kOutputKeys;
}

namespace detail {

namespace {

struct Kind {
  const char* what;    // "platform"
  const char* plural;  // "platforms"
};

// A model section: `type: NAME` plus that model's options.
ModelConfig model_section(const Tree& block, const std::string& block_where, const Kind& kind,
                          const std::vector<const models::Spec*>& specs) {
  std::vector<std::string> names;
  for (const auto* s : specs) names.push_back(s->name);
  const Entry* type = block.find("type");
  if (!type)
    throw InputError(block_where + ": " + kind.what + ": missing 'type' (one of: " + join(names) + ")");
  const std::string& name = scalar(*type, std::string(kind.what) + " type");
  const models::Spec* spec = nullptr;
  for (const auto* s : specs)
    if (s->name == name) spec = s;
  if (!spec)
    throw InputError(type->value.where + ": unknown " + kind.what + " '" + name + "'" + hint(name, names) +
                     " (" + kind.plural + ": " + join(names) + ")");
  std::vector<models::UserOption> given;
  for (const auto& e : block.entries) {
    if (e.key == "type") continue;
    std::string text;
    switch (e.value.kind) {
      case Tree::Kind::Scalar:
        text = e.value.text;
        break;
      case Tree::Kind::Seq: {
        std::vector<std::string> parts;
        for (const auto& item : e.value.items) {
          if (item.kind != Tree::Kind::Scalar)
            throw InputError(item.where + ": option '" + e.key + "' of " + kind.what + " '" + name +
                             "': expected a list of values");
          parts.push_back(item.text);
        }
        text = join(parts, ",");
        break;
      }
      default:
        throw InputError(e.where + ": option '" + e.key + "' of " + kind.what + " '" + name +
                         "': expected a value, got " + kind_name(e.value.kind));
    }
    const auto* opt = spec->option(e.key);
    // A list written as "[1, 2]" on the command line means the same as a YAML list.
    if (opt && opt->type == models::OptionType::IntList && text.size() >= 2 && text.front() == '[' &&
        text.back() == ']')
      text = text.substr(1, text.size() - 2);
    // Errors about a value name its key's line, or the --set that gave the value.
    given.push_back(models::UserOption{e.key, text, e.value.from_set ? e.value.where : e.where});
  }
  ModelConfig m;
  m.type = name;
  m.where = block_where;
  m.given = given;
  m.options = models::make_options(*spec, given, block_where, block_where);
  return m;
}

std::uint64_t parse_seed(const Entry& e) {
  const std::string& v = scalar(e, "run.seed");
  std::uint64_t seed = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), seed);
  if (v.empty() || ec != std::errc() || end != v.data() + v.size())
    throw InputError(e.value.where + ": run.seed: expected a whole number between 0 and 2^64-1, got '" + v +
                     "'");
  return seed;
}

RunConfig run_section(const Entry& sec) {
  const Tree& t = expect_map(sec, "run", "seed: 1, eager_threshold: 64KiB, ...");
  check_keys(t, kRunKeys, "run");
  RunConfig r;
  if (const Entry* e = t.find("seed")) r.seed = parse_seed(*e);
  if (const Entry* e = t.find("eager_threshold")) {
    const std::string& v = scalar(*e, "run.eager_threshold");
    try {
      r.eager_threshold = units::parse_bytes(v);
    } catch (const units::UnitError& err) {
      throw InputError(e->value.where + ": run.eager_threshold: " + err.what());
    }
    if (!sim::valid_eager_threshold(r.eager_threshold))
      throw InputError(e->value.where + ": run.eager_threshold: must be a size >= 0B, got '" + v + "'");
  }
  if (const Entry* e = t.find("timing_precision")) {
    const std::string& v = scalar(*e, "run.timing_precision");
    try {
      r.timing_precision = units::parse_duration(v);
    } catch (const units::UnitError& err) {
      throw InputError(e->value.where + ": run.timing_precision: " + err.what());
    }
    if (!sim::valid_timing_precision(r.timing_precision))
      throw InputError(e->value.where + ": run.timing_precision: must be a duration above 0 and at most 1us, got '" +
                       v + "'");
  }
  if (const Entry* e = t.find("collectives")) {
    const std::string& v = scalar(*e, "run.collectives");
    std::vector<std::string> names;
    for (const auto& c : sim::collective_sets()) names.push_back(c.name);
    if (std::find(names.begin(), names.end(), v) == names.end())
      throw InputError(e->value.where + ": run.collectives: unknown collective set '" + v + "'" +
                       hint(v, names) + " (sets: " + join(names) + ")");
    r.collectives = v;
  }
  if (const Entry* e = t.find("collective_algorithms")) {
    // collective: algorithm, on top of the preset (docs/scenarios.md); SimGrid aborts on a name
    // it does not know, so every name is checked here, with its position.
    if (e->value.kind == Tree::Kind::Null) {
      // `collective_algorithms:` with nothing: no choice
    } else {
      const Tree& m = expect_map(*e, "run.collective_algorithms", "alltoall: pair, allreduce: rdb");
      for (const auto& c : m.entries) {
        const std::string& algo = scalar(c, "run.collective_algorithms." + c.key);
        const std::string err = sim::collective_algorithm_error(c.key, algo);
        if (!err.empty())
          throw InputError((err.rfind("unknown collective", 0) == 0 ? c.where : c.value.where) +
                           ": run.collective_algorithms: " + err);
        r.collective_algorithms.emplace_back(c.key, algo);
      }
    }
  }
  if (const Entry* e = t.find("semantics")) {
    const std::string& v = scalar(*e, "run.semantics");
    if (v == "waitlab")
      r.semantics = sim::Semantics::Waitlab;
    else if (v == "smpi-default")
      r.semantics = sim::Semantics::SmpiDefault;
    else
      throw InputError(e->value.where + ": run.semantics: unknown semantics '" + v + "'" +
                       hint(v, kSemantics) + " (allowed: " + join(kSemantics) + ")");
  }
  if (const Entry* e = t.find("baseline")) r.baseline = parse_bool(*e, "run.baseline");
  if (const Entry* e = t.find("footprint"))  // the selectors are matched once the perturbations are read
    for (const Tree* item : scalar_items(*e, "run.footprint", "delay")) {
      r.footprint.push_back(item->text);
      r.footprint_where.push_back(item->where);
    }
  return r;
}

// outputs.analyses: a list (or one comma-separated value) of analysis names (analysis::select_analyses).
std::vector<std::string> analyses_option(const Entry& e) {
  std::vector<std::string> names;
  const auto check = [&](const std::string& text, const std::string& where) {
    try {
      (void)analysis::select_analyses({text});
    } catch (const std::invalid_argument& x) {
      throw InputError(where + ": outputs.analyses: " + x.what());
    }
    names.push_back(text);
  };
  if (e.value.kind == Tree::Kind::Scalar) {
    check(e.value.text, e.value.where);
  } else if (e.value.kind == Tree::Kind::Seq) {
    for (const auto& item : e.value.items) {
      if (item.kind != Tree::Kind::Scalar)
        throw InputError(item.where + ": outputs.analyses: expected an analysis name, got " + kind_name(item.kind));
      check(item.text, item.where);
    }
  } else if (e.value.kind != Tree::Kind::Null) {
    throw InputError(e.where + ": outputs.analyses: expected a list of analyses (e.g. [waitstate, delay, critpath]), got " +
                     kind_name(e.value.kind));
  }
  return analysis::select_analyses(names);
}

OutputConfig output_section(const Entry& sec) {
  const Tree& t = expect_map(sec, "outputs", "dir: out/demo, trace: true, progress: true");
  check_keys(t, kOutputKeys, "outputs");
  OutputConfig o;
  if (const Entry* e = t.find("dir")) {
    o.dir = scalar(*e, "outputs.dir");
    if (o.dir.empty()) throw InputError(e->value.where + ": outputs.dir: expected a directory, got ''");
  }
  if (const Entry* e = t.find("trace")) o.trace = parse_bool(*e, "outputs.trace");
  if (const Entry* e = t.find("progress")) o.progress = parse_bool(*e, "outputs.progress");
  if (const Entry* e = t.find("analyses")) o.analyses = analyses_option(*e);
  if (const Entry* e = t.find("windows")) {
    o.windows = scalar(*e, "outputs.windows");
    try {
      (void)analysis::parse_windows(o.windows);
    } catch (const std::invalid_argument& x) {
      throw InputError(e->value.where + ": outputs.windows: " + x.what());
    }
    // The windows are the timeresolved analysis's: without it they would change nothing.
    if (std::find(o.analyses.begin(), o.analyses.end(), "timeresolved") == o.analyses.end())
      throw InputError(e->value.where +
                       ": outputs.windows: only for the timeresolved analysis, which outputs.analyses does not "
                       "select (add timeresolved to outputs.analyses)");
  }
  return o;
}

std::vector<const models::Spec*> specs_of(models::SpecKind k) {
  return models::Registry::instance().all(k);
}

std::vector<const models::Spec*> workload_specs() {
  std::vector<const models::Spec*> v;
  for (const auto& w : models::workloads()) v.push_back(&w.spec);
  v.push_back(&models::trace_workload_spec());
  return v;
}

std::vector<const models::Spec*> perturbation_specs() {
  std::vector<const models::Spec*> v;
  for (const auto& p : models::perturbation_models()) v.push_back(&p.spec);
  return v;
}

// The scenario's `name`, checked; without one, the file name's stem made a valid name.
std::string scenario_name(const Tree& root, const std::string& file) {
  std::string name;
  if (const Entry* e = root.find("name")) {
    name = scalar(*e, "name");
    if (!valid_name(name))
      throw InputError(
          e->value.where + ": name: '" + name +
          "' is not a valid scenario name (letters, digits, '_', '-', '.'; used as a directory name)");
  } else {
    name = name_chars(std::filesystem::path(file).stem().string());
    if (!valid_name(name)) name = "scenario";
  }
  return name;
}

ModelConfig workload_section(const Entry& workload) {
  Tree wblock = expect_map(workload, "workload", "type: heat1d, ranks: 64, ...");
  // `workload: {trace: PATH}` is short for `workload: {type: trace, trace: PATH}`.
  if (!wblock.find("type") && wblock.find("trace")) {
    Entry type{"type", wblock.find("trace")->where, Tree{}};
    type.value.kind = Tree::Kind::Scalar;
    type.value.text = models::kTraceWorkload;
    type.value.where = type.where;
    wblock.entries.insert(wblock.entries.begin(), type);
  }
  return model_section(wblock, workload.where, {"workload", "workloads"}, workload_specs());
}

std::vector<ModelConfig> perturbations_section(const Entry& e) {
  if (e.value.kind == Tree::Kind::Map || e.value.kind == Tree::Kind::Scalar)
    throw InputError(e.where +
                     ": perturbations: expected a list (each entry starts with '- type: ...'), got " +
                     kind_name(e.value.kind));
  std::vector<ModelConfig> out;
  for (std::size_t i = 0; i < e.value.items.size(); ++i) {
    const Tree& item = e.value.items[i];
    const std::string what = "perturbations[" + std::to_string(i) + "]";
    if (item.kind != Tree::Kind::Map)
      throw InputError(item.where + ": " + what + ": expected a mapping (type: delay, ...), got " +
                       kind_name(item.kind));
    out.push_back(model_section(item, item.where, {"perturbation", "perturbations"}, perturbation_specs()));
  }
  return out;
}

}  // namespace

bool valid_name(const std::string& n) {
  return !n.empty() && n != "." && n != ".." && std::all_of(n.begin(), n.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '-' || c == '.';
  });
}

std::string name_chars(std::string text) {
  for (auto& c : text)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') c = '_';
  return text;
}

void read_sections(const Tree& root, Scenario& s) {
  for (const auto& e : root.entries)
    if (std::find(kTopKeys.begin(), kTopKeys.end(), e.key) == kTopKeys.end())
      throw InputError(e.where + ": unknown section '" + e.key + "'" + hint(e.key, kTopKeys) +
                       " (sections: " + join(kTopKeys) + ")");
  s.name = scenario_name(root, s.file);
  if (const Entry* e = root.find("description")) s.description = scalar(*e, "description");

  const Entry* platform = root.find("platform");
  if (!platform)
    throw InputError(s.file + ": missing section 'platform' (e.g. platform: {type: cluster, nodes: 64})");
  const Entry* workload = root.find("workload");
  if (!workload)
    throw InputError(s.file + ": missing section 'workload' (e.g. workload: {type: heat1d, ranks: 64})");
  const Tree& pblock = expect_map(*platform, "platform", "type: cluster, nodes: 64, ...");
  s.platform =
      model_section(pblock, platform->where, {"platform", "platforms"}, specs_of(models::SpecKind::Platform));
  s.workload = workload_section(*workload);
  if (const Entry* e = root.find("perturbations")) s.perturbations = perturbations_section(*e);
  if (const Entry* e = root.find("run")) s.run = run_section(*e);
  if (const Entry* e = root.find("outputs")) s.outputs = output_section(*e);
  if (s.outputs.dir.empty()) s.outputs.dir = "out/" + s.name;
}

}  // namespace detail

}  // namespace waitlab::scenarios
