// waitlab::scenarios — YAML scenarios: what to simulate, checked before anything runs.
//
// Promise: load_scenario() reads a scenario file (sections name, description, platform,
// workload, perturbations, run, outputs; docs/scenarios.md), applies `--set key=value`
// overrides, and validates everything against the registered model specs before a single
// rank is simulated: unknown keys at every level, bad units, missing sections or options,
// and impossible values (more ranks than cores, negative durations) throw InputError naming
// "file:line:col" (1-based) or the offending `--set`, with a hint ("did you mean
// 'iterations'?", "allowed units: s, ms, us, ns"). A loaded Scenario is plain data;
// prepare() turns it into the objects sim::simulate() takes. This is the only module that
// includes yaml-cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/perturbation.hpp"
#include "models/platform.hpp"
#include "models/whatif.hpp"
#include "models/spec.hpp"
#include "models/workload.hpp"
#include "sim/engine.hpp"

namespace waitlab::scenarios {

// One model instance as written: its registered type and its validated options.
struct ModelConfig {
  std::string type;
  models::Options options;                // SI units, defaults filled in
  std::vector<models::UserOption> given;  // the options as written, with their positions
  std::string where;                      // "file:line:col" of the section (or "--set ..."), for later errors
};

// The `run` section: the engine's settings (sim::RunSettings, given to the engine as they are)
// and whether to simulate the baseline too.
struct RunConfig : sim::RunSettings {
  bool baseline = false;  // also simulate the unperturbed counterfactual
  // The counterfactual footprint (docs/scenarios.md, run.footprint): the perturbations its twin
  // goes without — causes (imbalance, delay, noise, all), types or indices, as a variant's
  // `remove` names them; empty: no twin.
  std::vector<std::string> footprint;
  std::vector<std::string> footprint_where;  // "file:line:col" of each selector
};

struct OutputConfig {
  std::string dir;       // default "out/<name>", relative to the working directory
  bool trace = true;     // write trace.wlt
  bool progress = true;  // show progress when stderr is a terminal
  // Analyses run on the simulated trace (waitstate, delay, critpath, minprofile; minprofile
  // also switches on the simulator's online estimator, RunOptions::minprofile).
  std::vector<std::string> analyses;
  // Windows of the timeresolved analysis (analysis/timeresolved/windows.hpp: "50", "10ms", "adaptive[:N]");
  // "" = the default, 50 equal windows.
  std::string windows;
};

// What a what-if variant changes beyond the scenario's own keys; prepare() applies it.
struct Change {
  models::WorkloadChange workload;  // compute scales, rebalanced regions (models/whatif.hpp)
  sim::NetworkChange network;       // ideal network, scaled bandwidth/latency
  std::string where;                // "file:line:col" of the variant, for errors
  bool empty() const { return workload.empty() && network.empty(); }
};

// A variant as the `variants` section declares it (docs/whatif.md).
struct VariantInfo {
  std::string name;
  std::string description;
  std::string where;                 // "file:line:col" of its entry (or "--variant ...")
  std::vector<std::string> changes;  // one line per change, for reports ("remove delay", "network ideal")
};

struct Scenario {
  std::string name;         // [A-Za-z0-9_.-]+; default: the file name without .yaml
  std::string description;  // free text, may be empty
  std::string file;         // the path as given to load_scenario
  ModelConfig platform;
  ModelConfig workload;
  std::vector<ModelConfig> perturbations;  // in file order; applied by cause order (see models)
  RunConfig run;
  OutputConfig outputs;
  std::vector<std::string> overrides;  // the --set strings applied, in order
  std::vector<VariantInfo> variants;   // the `variants` section (and --variant texts), in order
  std::string variant;                 // the variant applied to this scenario; "" = as written
  Change change;                       // the applied variant's changes beyond its overrides
};

// Which variant of a scenario to load, and variants given on the command line (each a YAML
// mapping, e.g. "{name: ideal, network: ideal}", appended to the file's `variants`).
struct VariantChoice {
  std::string name;                 // "" = the scenario as written
  std::vector<std::string> extra;   // YAML texts
};

// Reads and validates `path`. `overrides` are "key=value" strings: a dotted path with list
// indices, e.g. "workload.iterations=10", "run.seed=3", "perturbations[0].duration=5ms",
// "perturbations[1].type=delay" (an index equal to the list length appends an entry).
// Throws InputError.
// `variant` selects one of the scenario's variants: its overrides, removed perturbations and
// platform are applied to the scenario before it is checked, its other changes go to
// Scenario::change (docs/whatif.md); an unknown name throws InputError with a hint.
Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides = {},
                       const VariantChoice& variant = {});

// As load_scenario, from text; `file` names the text in messages and is recorded as the
// scenario's file (its stem is the default name).
Scenario parse_scenario(const std::string& text, const std::string& file,
                        const std::vector<std::string>& overrides = {}, const VariantChoice& variant = {});

// The work of turning a scenario text into its tree, counted in steps that do not depend on
// the host's speed or load: nodes made (every use of an alias counted), keys looked up for
// duplicates, ancestors compared for recursive aliases. Tests bound it against the text's size,
// so that a quadratic check or an alias expansion fails on any machine, not only on a slow one.
struct YamlWork {
  std::size_t nodes = 0;
  std::size_t key_lookups = 0;
  std::size_t ancestor_checks = 0;
  std::size_t steps() const { return nodes + key_lookups + ancestor_checks; }
};

// Reads `text` as parse_scenario() does up to its tree (the limits on size, UTF-8, nodes,
// nesting, recursive aliases, duplicate keys), adding the work done to `work` as it goes, so
// that it is counted also when an InputError is thrown. Nothing of the scenario's meaning is
// checked.
void read_yaml_tree(const std::string& text, const std::string& file, YamlWork& work);

// `waitlab replay`: a scenario whose workload replays `trace` (ranks = its rank count). The
// platform is `platform` (an XML file, or a platform type whose options come by --set
// platform.KEY=VALUE), else the platform of `scenario`, else a flat cluster of one core per
// rank. Perturbations, run and outputs come from `scenario` (if given) and the overrides.
struct ReplayRequest {
  std::string trace;
  int ranks = 1;
  std::string platform;
  std::string scenario;
  std::vector<std::string> compute_scales;
  std::string iterations_from;
  std::string speed;
  std::vector<std::string> overrides;
};
Scenario replay_scenario(const ReplayRequest& request);

// Everything sim::simulate() needs, built from a Scenario.
struct Run {
  models::PlatformDesc platform;
  std::vector<models::Slot> placement;  // rank -> node/socket/core
  std::unique_ptr<models::Workload> workload;
  models::Perturbations perturbations;
  sim::RunOptions options;
};

// Builds the platform, workload (lazy streams), perturbations and run options, with the
// scenario's Change applied (models::change_workload, RunOptions::network). The
// perturbations see the workload's grid, the placement and the seed. Throws InputError for
// values that are only impossible in combination (more ranks than the platform has cores).
// A `trace` workload is read from its file (load_trace_workload) unless `workload` already
// holds it (the replay command reads the trace before it builds the scenario); the notes of
// its conversion go to `replay_notes` when given.
// The twin of run.footprint: `s` without the perturbations run.footprint selects — the same
// seed, so the same noise —, with neither a baseline nor a footprint of its own. Throws
// InputError at the selector that matches no perturbation.
Scenario footprint_twin(const Scenario& s);

Run prepare(const Scenario& s, std::unique_ptr<models::Workload> workload = nullptr,
            std::vector<std::string>* replay_notes = nullptr);

// The perturbations of `s` on the prepared run `r` (its workload, placement; `s`'s seed), as
// prepare() makes them: for a twin (footprint_twin) that runs the same workload.
models::Perturbations make_perturbations(const Scenario& s, const Run& r);

// The engine's options as the scenario's `run` section sets them (prepare() adds the rest).
sim::RunOptions run_options(const Scenario& s);

// Reads the trace of a `trace` workload section (a relative path is relative to
// `scenario_file`'s directory; "" = the working directory) and turns it into a workload
// (models/replay.hpp). Notes on what was approximated go to `notes`.
std::unique_ptr<models::Workload> load_trace_workload(const ModelConfig& workload, const std::string& scenario_file,
                                                      std::vector<std::string>* notes = nullptr);

// The scenario's section and key names (for hints and `waitlab describe`).
const std::vector<std::string>& top_level_keys();
const std::vector<std::string>& run_keys();
const std::vector<std::string>& output_keys();

}  // namespace waitlab::scenarios
