// `--set` overrides (overrides.hpp): a dotted path walked into the scenario's tree, the value
// set at its end. Each override names itself in its messages ("--set k=v", or a variant's
// `set` entry with its position).
#include "scenarios/overrides.hpp"

#include <algorithm>
#include <charconv>
#include <string_view>
#include <vector>

#include "util/error.hpp"

namespace waitlab::scenarios::detail {

namespace {

struct PathStep {
  std::string key;  // map key; empty for a pure index step
  long index = -1;  // list index, or -1
};

std::vector<PathStep> parse_path(const std::string& path, const std::string& where) {
  std::vector<PathStep> steps;
  std::size_t i = 0;
  const auto bad = [&](const std::string& why) {
    throw InputError(where + ": " + why +
                     " (expected a key such as workload.iterations or perturbations[0].duration)");
  };
  while (i <= path.size()) {
    PathStep s;
    while (i < path.size() && path[i] != '.' && path[i] != '[') s.key += path[i++];
    if (s.key.empty()) bad("empty key name");
    steps.push_back(s);
    while (i < path.size() && path[i] == '[') {
      const std::size_t close = path.find(']', i);
      if (close == std::string::npos) bad("missing ']'");
      const std::string num = path.substr(i + 1, close - i - 1);
      long idx = -1;
      const auto [end, ec] = std::from_chars(num.data(), num.data() + num.size(), idx);
      if (num.empty() || ec != std::errc() || end != num.data() + num.size() || idx < 0)
        bad("list index '" + num + "' is not a whole number >= 0");
      steps.push_back(PathStep{"", idx});
      i = close + 1;
    }
    if (i == path.size()) break;
    if (path[i] != '.') bad("unexpected '" + std::string(1, path[i]) + "'");
    ++i;
  }
  return steps;
}

std::string trim_copy(std::string_view s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}

// One step of the path into a section: its entry `key` (made if missing; a missing section
// becomes one).
Tree* key_step(Tree* node, const std::string& key, const std::string& where, std::string& walked) {
  if (node->kind == Tree::Kind::Null) node->kind = Tree::Kind::Map;
  if (node->kind != Tree::Kind::Map)
    throw InputError(where + ": '" + walked + "' is " + kind_name(node->kind) + ", not a section with keys");
  Entry* e = node->find(key);
  if (!e) {
    node->entries.push_back(Entry{key, where, Tree{}});
    e = &node->entries.back();
    e->value.where = where;
  }
  walked += (walked.empty() ? "" : ".") + key;
  return &e->value;
}

// One step of the path into a list: its entry `index` (the list's length appends one).
Tree* index_step(Tree* node, long index, const std::string& where, std::string& walked) {
  if (node->kind == Tree::Kind::Null) node->kind = Tree::Kind::Seq;
  if (node->kind != Tree::Kind::Seq)
    throw InputError(where + ": '" + walked + "' is " + kind_name(node->kind) + ", not a list");
  const auto n = static_cast<long>(node->items.size());
  if (index > n)
    throw InputError(where + ": '" + walked + "' has " + std::to_string(n) + " entries; index " +
                     std::to_string(index) + " is past the end (use [" + std::to_string(n) +
                     "] to append one)");
  if (index == n) {
    node->items.push_back(Tree{});
    node->items.back().where = where;
  }
  walked += "[" + std::to_string(index) + "]";
  return &node->items[static_cast<std::size_t>(index)];
}

// The end of the path: `value` replaces what is there (`walked` names it).
void set_value(Tree* child, const std::string& value, const std::string& where, const std::string& walked) {
  // A list of values may be replaced whole by one value (`center=4,4`,
  // `analyses=waitstate,delay`): every list option also reads a comma-separated value.
  const bool values = child->kind == Tree::Kind::Seq &&
                      std::all_of(child->items.begin(), child->items.end(),
                                  [](const Tree& i) { return i.kind == Tree::Kind::Scalar; });
  if (child->kind == Tree::Kind::Map || (child->kind == Tree::Kind::Seq && !values))
    throw InputError(where + ": '" + walked + "' is " + kind_name(child->kind) +
                     "; set one of its keys instead (e.g. " + walked +
                     (child->kind == Tree::Kind::Seq ? "[0]" : ".KEY") + "=...)");
  child->items.clear();
  child->where = where;
  child->from_set = true;
  // A list written as YAML writes it inline, `[waitstate, delay]`: a list of values
  // (`[]` is the empty list). Anything else is one value.
  const std::string inner = trim_copy(value);
  if (inner.size() >= 2 && inner.front() == '[' && inner.back() == ']') {
    child->kind = Tree::Kind::Seq;
    child->text.clear();
    const std::string body = inner.substr(1, inner.size() - 2);
    if (!trim_copy(body).empty()) {
      for (std::size_t p = 0; p <= body.size();) {
        std::size_t q = body.find(',', p);
        if (q == std::string::npos) q = body.size();
        const std::string item = trim_copy(body.substr(p, q - p));
        if (item.empty() || item.find_first_of("[]{}") != std::string::npos)
          throw InputError(where + ": '" + value + "' is not a list of values (write [a, b, c])");
        Tree t;
        t.kind = Tree::Kind::Scalar;
        t.text = item;
        t.where = where;
        t.from_set = true;
        child->items.push_back(std::move(t));
        p = q + 1;
      }
    }
  } else {
    child->kind = Tree::Kind::Scalar;
    child->text = value;
  }
}

}  // namespace

void apply_override(Tree& root, const std::string& assignment, std::string where) {
  if (where.empty()) where = "--set " + assignment;
  const auto eq = assignment.find('=');
  if (eq == std::string::npos) throw InputError(where + ": expected key=value (e.g. workload.iterations=10)");
  const std::string path = assignment.substr(0, eq);
  const std::string value = assignment.substr(eq + 1);
  check_text(assignment, where, "the override");
  const auto steps = parse_path(path, where);
  Tree* node = &root;
  std::string walked;
  for (std::size_t k = 0; k < steps.size(); ++k) {
    const PathStep& s = steps[k];
    const bool last = k + 1 == steps.size();
    const bool next_is_index = !last && steps[k + 1].index >= 0;
    const Tree::Kind want = last ? Tree::Kind::Scalar : (next_is_index ? Tree::Kind::Seq : Tree::Kind::Map);
    Tree* child =
        s.index < 0 ? key_step(node, s.key, where, walked) : index_step(node, s.index, where, walked);
    if (last) {
      set_value(child, value, where, walked);
    } else if (child->kind == Tree::Kind::Scalar) {
      throw InputError(
          where + ": '" + walked + "' is a value, not " +
          (want == Tree::Kind::Seq ? std::string("a list") : std::string("a section with keys")));
    }
    node = child;
  }
}

}  // namespace waitlab::scenarios::detail
