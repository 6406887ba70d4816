// Internal to scenarios/ (not a public header): the tree a scenario is read into. yaml-cpp is
// used only to parse (yaml_tree.cpp is its one user): the document is copied into this small
// tree that keeps every node's "file:line:col", so that `--set` overrides and variants can edit
// it (their values then name the `--set`) and every later check can name the position of what
// it rejects.
//
// Promise: parse_tree() reads a scenario text within the limits of docs/scenarios.md ("Limits":
// size, UTF-8, nodes, nesting, recursive aliases, duplicate keys, one document) or throws
// InputError naming the position; the readers below take a value out of the tree or throw
// InputError naming the entry, with what was expected.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "scenarios/scenario.hpp"

namespace waitlab::scenarios::detail {

// ---- the position-keeping tree ----

struct Entry;

struct Tree {
  enum class Kind { Null, Scalar, Map, Seq };
  Kind kind = Kind::Null;
  std::string text;            // Scalar
  std::vector<Entry> entries;  // Map, in document order
  std::vector<Tree> items;     // Seq
  std::string where;           // "file:line:col" or "--set k=v"
  bool from_set = false;       // the value was given by a --set override

  const Entry* find(std::string_view key) const;
  Entry* find(std::string_view key);
};

struct Entry {
  std::string key;
  std::string where;  // position of the key
  Tree value;
};

// What a node is, for messages ("a list", "a mapping (key: value lines)").
std::string kind_name(Tree::Kind k);

// ---- reading a scenario ----

// The text of a scenario file (at most one byte more than a scenario may hold). Throws
// InputError for a missing file, a directory (naming a scenario inside it) or an unreadable one.
std::string read_scenario_text(const std::string& path);

// The tree of a scenario text: a mapping (an empty text is an empty one). `work` counts what
// the reading did (scenario.hpp, YamlWork).
Tree parse_tree(const std::string& text, const std::string& file, YamlWork& work);
Tree parse_tree(const std::string& text, const std::string& file);

// A scalar must be UTF-8 (scenario strings go into JSON outputs) without NUL bytes (they
// end a path or a name early); throws InputError naming `where` and `what` ("the value").
void check_text(const std::string& text, const std::string& where, const char* what);

// ---- building and editing ----

Tree scalar_tree(const std::string& text, const std::string& where);

// Sets `key` of `map` to `value` (replacing an entry of that key, else appending one).
void set_entry(Tree& map, const std::string& key, Tree value, const std::string& where);

// ---- reading values; `what` names the key in messages ("run.seed") ----

const std::string& scalar(const Entry& e, const std::string& what);

// The same words as a model's bool option (models::parse_bool), so that `baseline: True`
// and `periodic: True` mean the same.
bool parse_bool(const Entry& e, const std::string& what);

// Throws for a key of `map` not in `allowed`, with a hint.
void check_keys(const Tree& map, const std::vector<std::string>& allowed, const std::string& what);

// The entry's mapping; `example` shows one in the message otherwise.
const Tree& expect_map(const Entry& e, const std::string& what, const std::string& example);

// A value that may be one scalar or a list of scalars.
std::vector<const Tree*> scalar_items(const Entry& e, const std::string& what, const std::string& example);

}  // namespace waitlab::scenarios::detail
