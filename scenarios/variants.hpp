// Internal to scenarios/ (not a public header): what-if variants (docs/whatif.md), read from
// the scenario's `variants` section and the `--variant` texts, and applied to the scenario.
//
// Promise: a variant is applied in two halves. Its tree edits (another platform section, its
// `set` overrides) go into the tree before the sections are read, so that they are checked as
// written values; its other changes (removed perturbations, rebalanced regions, compute scales,
// network) are applied to the read Scenario (Scenario::change). Every error names the variant
// ("variants[2]") and its position.
#pragma once

#include <string>
#include <vector>

#include "scenarios/scenario.hpp"
#include "scenarios/yaml_tree.hpp"

namespace waitlab::scenarios::detail {

struct VariantSpec {
  VariantInfo info;
  Tree node;         // a copy: applying a variant edits the tree it came from
  std::string what;  // "variants[2]"
};

// The indices of the perturbations `sel` names — a cause (imbalance, delay, noise, all), a
// perturbation type, or an index (2 or perturbations[2]) — for a variant's `remove` and for
// run.footprint; throws InputError "<where>: <what>: '<sel>' matches no perturbation ...".
std::vector<std::size_t> select_perturbations(const Scenario& s, const std::string& sel, const std::string& where,
                                              const std::string& what);

// Appends the variants given on the command line (each a YAML mapping) to the tree's `variants`.
void add_variant_texts(Tree& root, const std::vector<std::string>& texts);

// Checks the `variants` section's structure and names; the values of each change are checked
// when that variant is loaded (apply_variant_tree, apply_variant): `waitlab whatif` loads
// every variant before it simulates any.
std::vector<VariantSpec> variants_section(const Tree& root);

// The variant called `name`; throws InputError naming `file` with a hint otherwise.
VariantSpec& find_variant(std::vector<VariantSpec>& variants, const std::string& name, const std::string& file);

// The variant's tree edits: another platform section, then its overrides.
void apply_variant_tree(Tree& root, VariantSpec& v);

// The variant's changes to the read scenario: its removed perturbations, Scenario::change and
// Scenario::variant; throws InputError for a variant that changes nothing or contradicts itself.
void apply_variant(Scenario& s, VariantSpec& v);

}  // namespace waitlab::scenarios::detail
