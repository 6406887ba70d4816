// Internal to scenarios/ (not a public header): a scenario's sections read out of its tree
// (yaml_tree.hpp), once the overrides and a variant's tree edits are applied.
//
// Promise: read_sections() fills a Scenario's name, description, platform, workload,
// perturbations, run and outputs, each model section validated against its registered spec
// (models::make_options), or throws InputError naming the position and, for a name it does
// not know, the closest known one. Combinations (more ranks than cores) are not checked here:
// they surface when the models are built (prepare.hpp).
#pragma once

#include <string>

#include "scenarios/scenario.hpp"
#include "scenarios/yaml_tree.hpp"

namespace waitlab::scenarios::detail {

// A name that serves as a directory name: [A-Za-z0-9_.-]+, not "." or "..".
bool valid_name(const std::string& n);

// `text` with every character a name may not hold replaced by '_'.
std::string name_chars(std::string text);

// Everything of the scenario but its variants, into `s` (whose `file` names the scenario in
// messages and gives the default name).
void read_sections(const Tree& root, Scenario& s);

}  // namespace waitlab::scenarios::detail
