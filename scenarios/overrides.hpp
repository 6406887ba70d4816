// Internal to scenarios/ (not a public header): `--set key=value` overrides, applied to a
// scenario's tree (yaml_tree.hpp) before anything of it is checked, so that an overridden value
// is checked exactly like a written one and its errors name the `--set`.
//
// Promise: apply_override() walks a dotted path with list indices ("workload.iterations",
// "perturbations[0].duration"), making the sections and entries it names (an index equal to a
// list's length appends an entry), and sets the value there: one value, or a list of values
// written as YAML writes it inline ("[waitstate, delay]"). A path into a value, a past-the-end
// index or a whole section as its target throws InputError naming the override.
#pragma once

#include <string>

#include "scenarios/yaml_tree.hpp"

namespace waitlab::scenarios::detail {

// `where` names the override in messages ("--set k=v" by default; a variant's `set` entries
// name their own position).
void apply_override(Tree& root, const std::string& assignment, std::string where = "");

}  // namespace waitlab::scenarios::detail
