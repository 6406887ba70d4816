// What-if variants (variants.hpp, docs/whatif.md): the `variants` section checked, a variant
// chosen by name, its tree edits, and its changes to the read scenario.
#include "scenarios/variants.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>

#include "models/replay.hpp"
#include "scenarios/messages.hpp"
#include "scenarios/overrides.hpp"
#include "scenarios/sections.hpp"
#include "util/error.hpp"

namespace waitlab::scenarios::detail {

namespace {

const std::vector<std::string> kVariantKeys = {"name",      "description", "remove", "set",
                                               "platform",  "rebalance",   "scale",  "network"};
const std::vector<std::string> kCauseSelectors = {"all", "imbalance", "delay", "noise"};

double parse_factor(const Tree& v, const std::string& what) {
  double x = 0;
  const char* first = v.text.data();
  const char* last = first + v.text.size();
  const auto [end, ec] = std::from_chars(first, last, x);
  if (v.text.empty() || ec != std::errc() || end != last || !std::isfinite(x) || x <= 0)
    throw InputError(v.where + ": " + what + ": expected a factor > 0 (a plain number such as 2 or 0.5), got '" +
                     v.text + "'");
  return x;
}

std::string factor_text(double f) {
  std::ostringstream o;
  o << f;
  return o.str();
}

}  // namespace

std::vector<std::size_t> select_perturbations(const Scenario& s, const std::string& sel, const std::string& where,
                                              const std::string& what) {
  std::vector<std::size_t> hits;
  std::string index_text = sel;
  if (sel.rfind("perturbations[", 0) == 0 && sel.back() == ']') index_text = sel.substr(14, sel.size() - 15);
  std::size_t index = 0;
  const auto [end, ec] = std::from_chars(index_text.data(), index_text.data() + index_text.size(), index);
  const bool is_index = !index_text.empty() && ec == std::errc() && end == index_text.data() + index_text.size();
  for (std::size_t i = 0; i < s.perturbations.size(); ++i) {
    const std::string& type = s.perturbations[i].type;
    const auto* entry = models::find_perturbation(type);
    const std::string cause = entry ? std::string(trace::cause_name(entry->cause)) : "";
    if ((is_index && i == index) || (!is_index && (sel == "all" || sel == type || sel == cause))) hits.push_back(i);
  }
  if (hits.empty()) {
    std::vector<std::string> known = kCauseSelectors;
    std::string have;
    for (std::size_t i = 0; i < s.perturbations.size(); ++i) {
      have += (have.empty() ? "" : ", ") + std::to_string(i) + ": " + s.perturbations[i].type;
      known.push_back(s.perturbations[i].type);
    }
    const bool known_word = is_index || std::find(known.begin(), known.end(), sel) != known.end() ||
                            models::find_perturbation(sel) != nullptr;
    throw InputError(where + ": " + what + ": '" + sel + "' matches no perturbation of the scenario" +
                     (known_word ? std::string() : hint(sel, known)) + " (perturbations: " +
                     (have.empty() ? std::string("none") : have) +
                     "; name a cause — imbalance, delay, noise, all —, a type or an index)");
  }
  return hits;
}

namespace {

// Removes the perturbations the variant names: a cause (imbalance, delay, noise, all), a
// perturbation type, or an index into the list (2 or perturbations[2]).
void remove_perturbations(Scenario& s, VariantSpec& v) {
  const Entry* e = v.node.find("remove");
  if (!e) return;
  std::vector<char> drop(s.perturbations.size(), 0);
  for (const Tree* t : scalar_items(*e, v.what + ".remove", "[delay, noise]")) {
    for (std::size_t i : select_perturbations(s, t->text, t->where, v.what + ".remove")) drop[i] = 1;
    v.info.changes.push_back("remove " + t->text);
  }
  std::vector<ModelConfig> kept;
  for (std::size_t i = 0; i < s.perturbations.size(); ++i)
    if (!drop[i]) kept.push_back(std::move(s.perturbations[i]));
  s.perturbations = std::move(kept);
}

// `rebalance`: a region, or a list of them, each to the mean (the default) or the minimum.
void rebalance_change(const Entry* e, VariantSpec& v, Change& c) {
  std::vector<const Tree*> maps;
  if (e->value.kind == Tree::Kind::Map) {
    maps.push_back(&e->value);
  } else if (e->value.kind == Tree::Kind::Seq) {
    for (const auto& i : e->value.items) maps.push_back(&i);
  } else if (e->value.kind == Tree::Kind::Scalar) {
    maps.push_back(&e->value);  // `rebalance: fixup` = to the mean
  } else {
    throw InputError(e->where + ": " + v.what + ".rebalance: expected {region: NAME, to: mean|min}");
  }
  for (const Tree* m : maps) {
    models::RegionRebalance b;
    if (m->kind == Tree::Kind::Scalar) {
      b.region = m->text;
    } else if (m->kind == Tree::Kind::Map) {
      check_keys(*m, {"region", "to"}, v.what + ".rebalance");
      const Entry* r = m->find("region");
      if (!r) throw InputError(m->where + ": " + v.what + ".rebalance: missing 'region'");
      b.region = scalar(*r, v.what + ".rebalance.region");
      if (const Entry* to = m->find("to")) {
        const std::string& t = scalar(*to, v.what + ".rebalance.to");
        if (t == "min")
          b.target = models::RegionRebalance::Target::Min;
        else if (t != "mean")
          throw InputError(to->value.where + ": " + v.what + ".rebalance.to: '" + t + "'" +
                           hint(t, {"mean", "min"}) + " (allowed: mean, min)");
      }
    } else {
      throw InputError(m->where + ": " + v.what + ".rebalance: expected {region: NAME, to: mean|min}, got " +
                       kind_name(m->kind));
    }
    if (b.region.empty()) throw InputError(m->where + ": " + v.what + ".rebalance: empty region name");
    c.workload.rebalance.push_back(b);
    v.info.changes.push_back("rebalance " + b.region + " to the " +
                             (b.target == models::RegionRebalance::Target::Min ? "minimum" : "mean"));
  }
}

// `network`: ideal, or factors on the bandwidth and the latency.
void network_change(const Entry* e, VariantSpec& v, Change& c) {
  const std::string what = v.what + ".network";
  if (e->value.kind == Tree::Kind::Scalar) {
    if (e->value.text != "ideal")
      throw InputError(e->value.where + ": " + what + ": '" + e->value.text +
                       "' (expected ideal, or {bandwidth: FACTOR, latency: FACTOR})");
    c.network.ideal = true;
  } else if (e->value.kind == Tree::Kind::Map) {
    check_keys(e->value, {"ideal", "bandwidth", "latency"}, what);
    if (const Entry* i = e->value.find("ideal")) c.network.ideal = parse_bool(*i, what + ".ideal");
    if (const Entry* b = e->value.find("bandwidth"))
      c.network.bandwidth_scale = parse_factor(b->value, what + ".bandwidth");
    if (const Entry* l = e->value.find("latency")) c.network.latency_scale = parse_factor(l->value, what + ".latency");
  } else {
    throw InputError(e->where + ": " + what + ": expected ideal, or {bandwidth: FACTOR, latency: FACTOR}");
  }
  if (c.network.ideal)
    v.info.changes.push_back("network ideal");
  if (c.network.bandwidth_scale != 1)
    v.info.changes.push_back("network bandwidth x" + factor_text(c.network.bandwidth_scale));
  if (c.network.latency_scale != 1)
    v.info.changes.push_back("network latency x" + factor_text(c.network.latency_scale));
}

// The variant's changes beyond the scenario's keys.
Change variant_change(VariantSpec& v) {
  Change c;
  c.where = v.info.where;
  const Tree& item = v.node;
  if (const Entry* e = item.find("rebalance")) rebalance_change(e, v, c);
  if (const Entry* e = item.find("scale")) {
    for (const Tree* t : scalar_items(*e, v.what + ".scale", "[solve=0.5, \"fixup@0-15=2\"]")) {
      c.workload.scales.push_back(models::parse_compute_scale(t->text, t->where + ": " + v.what + ".scale"));
      v.info.changes.push_back("scale compute " + t->text);
    }
  }
  if (const Entry* e = item.find("network")) network_change(e, v, c);
  return c;
}

}  // namespace

void add_variant_texts(Tree& root, const std::vector<std::string>& texts) {
  for (const auto& text : texts) {
    Tree v = parse_tree(text, "--variant");
    Entry* list = root.find("variants");
    if (!list) {
      root.entries.push_back(Entry{"variants", "--variant", Tree{}});
      list = &root.entries.back();
      list->value.kind = Tree::Kind::Seq;
      list->value.where = "--variant";
    }
    if (list->value.kind == Tree::Kind::Null) list->value.kind = Tree::Kind::Seq;
    if (list->value.kind == Tree::Kind::Seq) list->value.items.push_back(std::move(v));
  }
}

std::vector<VariantSpec> variants_section(const Tree& root) {
  std::vector<VariantSpec> out;
  const Entry* e = root.find("variants");
  if (!e || e->value.kind == Tree::Kind::Null) return out;  // `variants:` with nothing under it
  if (e->value.kind != Tree::Kind::Seq)
    throw InputError(e->where + ": variants: expected a list (each entry starts with '- name: ...'), got " +
                     kind_name(e->value.kind));
  for (std::size_t i = 0; i < e->value.items.size(); ++i) {
    const Tree& item = e->value.items[i];
    VariantSpec v;
    v.what = "variants[" + std::to_string(i) + "]";
    v.node = item;
    v.info.where = item.where;
    if (item.kind != Tree::Kind::Map)
      throw InputError(item.where + ": " + v.what + ": expected a mapping (name: ..., remove: ..., ...), got " +
                       kind_name(item.kind));
    check_keys(item, kVariantKeys, v.what);
    const Entry* name = item.find("name");
    if (!name) throw InputError(item.where + ": " + v.what + ": missing 'name'");
    v.info.name = scalar(*name, v.what + ".name");
    if (!valid_name(v.info.name) || v.info.name == "baseline")
      throw InputError(name->value.where + ": " + v.what + ".name: '" + v.info.name +
                       "' is not a valid variant name (letters, digits, '_', '-', '.'; not 'baseline')");
    for (const auto& other : out)
      if (other.info.name == v.info.name)
        throw InputError(name->value.where + ": " + v.what + ".name: '" + v.info.name + "' is also the name of " +
                         other.what + " (" + other.info.where + ")");
    if (const Entry* d = item.find("description")) v.info.description = scalar(*d, v.what + ".description");
    if (item.entries.size() == 1 + (item.find("description") ? 1u : 0u))
      throw InputError(item.where + ": " + v.what + " ('" + v.info.name +
                       "') changes nothing (give remove, set, platform, rebalance, scale or network)");
    out.push_back(std::move(v));
  }
  return out;
}

VariantSpec& find_variant(std::vector<VariantSpec>& variants, const std::string& name,
                          const std::string& file) {
  std::vector<std::string> names;
  VariantSpec* chosen = nullptr;
  for (auto& v : variants) {
    names.push_back(v.info.name);
    if (v.info.name == name) chosen = &v;
  }
  if (!chosen)
    throw InputError(file + ": no variant '" + name + "'" + hint(name, names) +
                     (names.empty() ? std::string(" (the scenario has no variants)")
                                    : " (variants: " + join(names) + ")"));
  return *chosen;
}

void apply_variant_tree(Tree& root, VariantSpec& v) {
  const Tree& item = v.node;
  if (const Entry* p = item.find("platform")) {
    if (p->value.kind != Tree::Kind::Map)
      throw InputError(p->where + ": " + v.what +
                       ".platform: expected a platform section (type: cluster, ...), got " +
                       kind_name(p->value.kind));
    const Entry* type = p->value.find("type");
    v.info.changes.push_back("platform " +
                             (type && type->value.kind == Tree::Kind::Scalar ? type->value.text : "?"));
    Tree copy = p->value;
    set_entry(root, "platform", std::move(copy), p->where);
  }
  if (const Entry* e = item.find("set")) {
    for (const Tree* t : scalar_items(*e, v.what + ".set", "[workload.iterations=10, run.collectives=mpi]")) {
      apply_override(root, t->text, t->where + ": " + v.what + ".set '" + t->text + "'");
      v.info.changes.push_back("set " + t->text);
    }
  }
}

void apply_variant(Scenario& s, VariantSpec& v) {
  remove_perturbations(s, v);
  s.change = variant_change(v);
  s.variant = v.info.name;
  if (v.info.changes.empty())
    throw InputError(v.info.where + ": " + v.what + " ('" + v.info.name +
                     "') changes nothing (its lists are empty, or network says ideal: false)");
  if (s.change.network.ideal &&
      (s.change.network.bandwidth_scale != 1 || s.change.network.latency_scale != 1))
    throw InputError(v.info.where + ": " + v.what +
                     ".network: ideal and a bandwidth or latency factor exclude each other");
}

}  // namespace waitlab::scenarios::detail

namespace waitlab::scenarios {

Scenario footprint_twin(const Scenario& s) {
  std::vector<char> drop(s.perturbations.size(), 0);
  for (std::size_t k = 0; k < s.run.footprint.size(); ++k)
    for (std::size_t i : detail::select_perturbations(s, s.run.footprint[k], s.run.footprint_where[k], "run.footprint"))
      drop[i] = 1;
  Scenario twin = s;
  twin.perturbations.clear();
  for (std::size_t i = 0; i < s.perturbations.size(); ++i)
    if (!drop[i]) twin.perturbations.push_back(s.perturbations[i]);
  twin.run.baseline = false;
  twin.run.footprint.clear();
  twin.run.footprint_where.clear();
  return twin;
}

}  // namespace waitlab::scenarios
