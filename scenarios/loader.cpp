// The scenario loader's entry points (scenario.hpp: load_scenario, parse_scenario,
// replay_scenario). A scenario is read into a tree that keeps every node's "file:line:col"
// (yaml_tree), `--set` overrides are applied to that tree (overrides), so that an overridden
// value is checked exactly like a written one and its errors name the `--set`; a chosen variant
// edits the tree too (variants); the tree is then validated section by section against the
// model specs (sections), the variant's other changes are applied, and the models are built
// once (prepare) so that nothing starts on a bad scenario.
#include "scenarios/scenario.hpp"

#include <algorithm>
#include <filesystem>

#include "scenarios/overrides.hpp"
#include "scenarios/prepare.hpp"
#include "scenarios/sections.hpp"
#include "scenarios/variants.hpp"
#include "scenarios/yaml_tree.hpp"
#include "util/error.hpp"

namespace waitlab::scenarios {

namespace detail {

namespace {

Scenario finish(Tree root, const std::string& file, const std::vector<std::string>& overrides,
                const VariantChoice& variant = {}) {
  for (const auto& o : overrides) apply_override(root, o);
  add_variant_texts(root, variant.extra);  // variants given on the command line join the file's
  std::vector<VariantSpec> variants = variants_section(root);
  VariantSpec* chosen = nullptr;
  if (!variant.name.empty()) {
    chosen = &find_variant(variants, variant.name, file);
    apply_variant_tree(root, *chosen);
    // A variant's platform section replaces the scenario's; the user's --set of platform keys
    // apply to it as to every run of a study.
    if (chosen->node.find("platform"))
      for (const auto& o : overrides)
        if (o.rfind("platform.", 0) == 0) apply_override(root, o);
  }

  Scenario s;
  s.file = file;
  s.overrides = overrides;
  read_sections(root, s);
  if (chosen) apply_variant(s, *chosen);
  for (const auto& v : variants) s.variants.push_back(v.info);
  if (!s.run.footprint.empty()) (void)footprint_twin(s);  // every selector names a perturbation

  // A trace workload is only checked for its options and its file here (check_models).
  // A variant of a trace workload is prepared too (the trace is read once more): its regions,
  // ranks and platform must be checked before a study starts any simulation.
  check_models(s, s.workload.type != models::kTraceWorkload ||
                      (chosen && (!s.change.empty() || chosen->node.find("platform"))));
  return s;
}

// The default name of a replay: "replay-" and the trace's file name without its extension (an
// OTF2 archive's traces.otf2: its directory's name).
std::string replay_name(const std::string& trace) {
  std::string name = std::filesystem::path(trace).filename().string();
  if (std::filesystem::path(trace).filename() == "traces.otf2")
    name = std::filesystem::path(trace).parent_path().filename().string();
  for (const std::string ext : {".wlt", ".prv", ".otf2", ".ti", ".txt"})
    if (name.size() > ext.size() && name.compare(name.size() - ext.size(), ext.size(), ext) == 0)
      name.resize(name.size() - ext.size());
  return "replay-" + name_chars(name);
}

// The `trace` workload section of a replay, from the command line's options.
Tree replay_workload(const ReplayRequest& r) {
  Tree w;
  w.kind = Tree::Kind::Map;
  w.where = "waitlab replay " + r.trace;
  set_entry(w, "type", scalar_tree(models::kTraceWorkload, w.where), w.where);
  const std::string absolute_trace = std::filesystem::absolute(r.trace).string();
  check_text(absolute_trace, w.where, "the trace's absolute path");  // it goes into summary.json
  set_entry(w, "trace", scalar_tree(absolute_trace, w.where), w.where);
  std::string scales;
  for (const auto& c : r.compute_scales) scales += (scales.empty() ? "" : ",") + c;
  if (!scales.empty())
    set_entry(w, "compute_scale", scalar_tree(scales, "--compute-scale"), "--compute-scale");
  if (!r.iterations_from.empty())
    set_entry(w, "iterations_from", scalar_tree(r.iterations_from, "--iterations-from"), "--iterations-from");
  if (!r.speed.empty()) set_entry(w, "speed", scalar_tree(r.speed, "--speed"), "--speed");
  return w;
}

// The platform of a replay: --platform (an XML file or a platform type), else the scenario's,
// else one rank per node of a flat cluster.
void replay_platform(Tree& root, const ReplayRequest& r) {
  if (!r.platform.empty()) {
    Tree p;
    p.kind = Tree::Kind::Map;
    p.where = "--platform " + r.platform;
    const bool xml = r.platform.size() > 4 && r.platform.compare(r.platform.size() - 4, 4, ".xml") == 0;
    set_entry(p, "type", scalar_tree(xml ? "xml" : r.platform, p.where), p.where);
    if (xml) {
      const std::string absolute_xml = std::filesystem::absolute(r.platform).string();
      check_text(absolute_xml, p.where, "the platform file's absolute path");
      set_entry(p, "file", scalar_tree(absolute_xml, p.where), p.where);
    }
    set_entry(root, "platform", std::move(p), p.where);
  } else if (!root.find("platform")) {
    // One rank per node of a flat cluster: the default platform's network, nothing shared.
    Tree p;
    p.kind = Tree::Kind::Map;
    p.where = "waitlab replay (default platform)";
    set_entry(p, "type", scalar_tree("cluster", p.where), p.where);
    set_entry(p, "nodes", scalar_tree(std::to_string(std::max(r.ranks, 1)), p.where), p.where);
    set_entry(p, "cores", scalar_tree("1", p.where), p.where);
    set_entry(root, "platform", std::move(p), p.where);
  }
}

}  // namespace

}  // namespace detail

Scenario replay_scenario(const ReplayRequest& r) {
  using detail::Entry;
  using detail::Tree;
  Tree root;
  root.kind = Tree::Kind::Map;
  std::string file = r.trace;
  if (!r.scenario.empty()) {
    root = detail::parse_tree(detail::read_scenario_text(r.scenario), r.scenario);
    file = r.scenario;
  }
  root.entries.erase(std::remove_if(root.entries.begin(), root.entries.end(),
                                    [](const Entry& e) { return e.key == "workload"; }),
                     root.entries.end());
  if (!root.find("name"))
    detail::set_entry(root, "name", detail::scalar_tree(detail::replay_name(r.trace), "waitlab replay"),
                      "waitlab replay");
  detail::set_entry(root, "workload", detail::replay_workload(r), "waitlab replay");
  detail::replay_platform(root, r);
  return detail::finish(std::move(root), file, r.overrides);
}

Scenario parse_scenario(const std::string& text, const std::string& file,
                        const std::vector<std::string>& overrides, const VariantChoice& variant) {
  return detail::finish(detail::parse_tree(text, file), file, overrides, variant);
}

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides,
                       const VariantChoice& variant) {
  return parse_scenario(detail::read_scenario_text(path), path, overrides, variant);
}

}  // namespace waitlab::scenarios
