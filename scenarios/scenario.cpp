// The scenario loader. yaml-cpp is used only to parse: the document is copied into a small
// tree that keeps every node's "file:line:col", `--set` overrides are applied to that tree
// (so an overridden value is checked exactly like a written one and its errors name the
// `--set`), and the tree is then validated section by section against the model specs.
#include "scenarios/scenario.hpp"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "analysis/registry/registry.hpp"
#include "util/error.hpp"
#include "analysis/trace/ti.hpp"
#include "analysis/trace/trace_io.hpp"
#include "models/replay.hpp"
#include "util/text.hpp"
#include "util/units.hpp"
#include "analysis/timeresolved/windows.hpp"

namespace waitlab::scenarios {

namespace {

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

const Entry* Tree::find(std::string_view key) const {
  for (const auto& e : entries)
    if (e.key == key) return &e;
  return nullptr;
}
Entry* Tree::find(std::string_view key) {
  for (auto& e : entries)
    if (e.key == key) return &e;
  return nullptr;
}

std::string kind_name(Tree::Kind k) {
  switch (k) {
    case Tree::Kind::Null:
      return "nothing";
    case Tree::Kind::Scalar:
      return "a value";
    case Tree::Kind::Map:
      return "a mapping (key: value lines)";
    case Tree::Kind::Seq:
      return "a list";
  }
  return "?";
}

std::string fmt_hex(unsigned char c) {
  static const char* const digits = "0123456789abcdef";
  return {digits[c >> 4], digits[c & 15]};
}

std::string position(const std::string& file, const YAML::Mark& m) {
  if (m.is_null()) return file;
  return file + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
}

// What a scenario may hold (docs/scenarios.md, "Limits"). A scenario is a few KB and a few
// hundred nodes; the limits are far above that and far below what would cost a second or a
// noticeable amount of memory. yaml-cpp keeps an alias as a second reference to the anchored
// node, so a document of a few hundred bytes can stand for billions of nodes ("billion
// laughs"), or for a node that contains itself: the copy below counts every node it makes and
// refuses a node inside itself.
constexpr std::size_t kMaxScenarioBytes = std::size_t{256} << 10;  // a scenario file, or a --variant text
constexpr std::size_t kMaxNodes = 100000;  // nodes of the copied tree, every use of an alias counted
constexpr std::size_t kMaxDepth = 64;      // nesting of mappings and lists

struct ConvertState {
  const std::string& file;
  YamlWork& work;
  std::vector<YAML::Node> path;  // the mappings and lists being copied, outermost first
};

// A scalar must be UTF-8 (scenario strings go into JSON outputs) without NUL bytes (they
// end a path or a name early); "\xHH" escapes and raw bytes are both checked here.
void check_text(const std::string& text, const std::string& where, const char* what) {
  const std::size_t bad = text::invalid_utf8(text);
  if (bad != std::string::npos)
    throw InputError(where + ": " + what + " is not valid UTF-8 (byte 0x" +
                     fmt_hex(static_cast<unsigned char>(text[bad])) + " at offset " + std::to_string(bad) +
                     "); a scenario is UTF-8 text");
  if (text.find('\0') != std::string::npos)
    throw InputError(where + ": " + what + " holds a NUL character (\\0)");
}

Tree convert(const YAML::Node& n, ConvertState& st, const std::string& fallback_where) {
  Tree t;
  t.where = n.Mark().is_null() ? fallback_where : position(st.file, n.Mark());
  if (++st.work.nodes > kMaxNodes)
    throw InputError(t.where + ": the scenario has more than " + std::to_string(kMaxNodes) +
                     " YAML nodes (values, keys, lists and mappings; every use of an alias counts, so an "
                     "alias repeated in aliases repeated ... multiplies); a scenario has a few hundred");
  switch (n.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      t.kind = Tree::Kind::Null;
      t.where = fallback_where;  // a null value has no useful mark of its own
      return t;
    case YAML::NodeType::Scalar:
      t.kind = Tree::Kind::Scalar;
      t.text = n.Scalar();
      check_text(t.text, t.where, "the value");
      return t;
    case YAML::NodeType::Sequence:
    case YAML::NodeType::Map:
      break;
  }
  for (const auto& outer : st.path)
    if (++st.work.ancestor_checks; outer.is(n))
      throw InputError(t.where + ": recursive YAML alias: the node anchored here contains an alias to itself");
  if (st.path.size() >= kMaxDepth)
    throw InputError(t.where + ": the scenario nests mappings and lists deeper than " + std::to_string(kMaxDepth) +
                     " levels");
  st.path.push_back(n);
  if (n.Type() == YAML::NodeType::Sequence) {
    t.kind = Tree::Kind::Seq;
    for (const auto& item : n) t.items.push_back(convert(item, st, t.where));
  } else {
    t.kind = Tree::Kind::Map;
    std::unordered_map<std::string, std::size_t> index;  // key -> entry: a map of 40000 keys is checked in linear time
    for (const auto& kv : n) {
      const std::string kw = kv.first.Mark().is_null() ? t.where : position(st.file, kv.first.Mark());
      if (!kv.first.IsScalar()) throw InputError(kw + ": expected a plain key name");
      const std::string key = kv.first.Scalar();
      check_text(key, kw, "the key");
      ++st.work.key_lookups;
      if (const auto [it, fresh] = index.emplace(key, t.entries.size()); !fresh)
        throw InputError(kw + ": duplicate key '" + key + "' (first given at " + t.entries[it->second].where + ")");
      ++st.work.nodes;
      t.entries.push_back(Entry{key, kw, convert(kv.second, st, kw)});
    }
  }
  st.path.pop_back();
  return t;
}

// ---- small helpers ----

std::string join(const std::vector<std::string>& v, std::string_view sep = ", ") {
  std::string s;
  for (const auto& x : v) {
    if (!s.empty()) s += sep;
    s += x;
  }
  return s;
}

std::string hint(std::string_view name, const std::vector<std::string>& candidates) {
  const std::string best = models::did_you_mean(name, candidates);
  return best.empty() ? std::string() : "; did you mean '" + best + "'?";
}

const std::string& scalar(const Entry& e, const std::string& what) {
  if (e.value.kind != Tree::Kind::Scalar)
    throw InputError(e.where + ": " + what + ": expected a value, got " + kind_name(e.value.kind));
  return e.value.text;
}

// The same words as a model's bool option (models::parse_bool), so that `baseline: True`
// and `periodic: True` mean the same.
bool parse_bool(const Entry& e, const std::string& what) {
  const std::string& v = scalar(e, what);
  try {
    return models::parse_bool(v);
  } catch (const std::invalid_argument& err) {
    throw InputError(e.value.where + ": " + what + ": " + err.what());
  }
}

void check_keys(const Tree& map, const std::vector<std::string>& allowed, const std::string& what) {
  for (const auto& e : map.entries)
    if (std::find(allowed.begin(), allowed.end(), e.key) == allowed.end())
      throw InputError(e.where + ": unknown key '" + e.key + "' in " + what + hint(e.key, allowed) +
                       " (allowed: " + join(allowed) + ")");
}

const Tree& expect_map(const Entry& e, const std::string& what, const std::string& example) {
  if (e.value.kind != Tree::Kind::Map)
    throw InputError(e.where + ": " + what + ": expected a mapping (" + example + "), got " +
                     kind_name(e.value.kind));
  return e.value;
}

// ---- sections ----

const std::vector<std::string> kTopKeys = {"name", "description", "platform", "workload",
                                           "perturbations", "run", "outputs", "variants"};
const std::vector<std::string> kRunKeys = {"seed",      "eager_threshold", "collectives", "collective_algorithms",
                                           "semantics", "baseline",        "timing_precision"};
const std::vector<std::string> kOutputKeys = {"dir", "trace", "progress", "analyses", "windows"};
const std::vector<std::string> kSemantics = {"waitlab", "smpi-default"};

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
    if (!std::isfinite(r.eager_threshold) || r.eager_threshold < 0)
      throw InputError(e->value.where + ": run.eager_threshold: must be a size >= 0B, got '" + v + "'");
  }
  if (const Entry* e = t.find("timing_precision")) {
    const std::string& v = scalar(*e, "run.timing_precision");
    try {
      r.timing_precision = units::parse_duration(v);
    } catch (const units::UnitError& err) {
      throw InputError(e->value.where + ": run.timing_precision: " + err.what());
    }
    if (!std::isfinite(r.timing_precision) || r.timing_precision <= 0 || r.timing_precision > 1e-6)
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

bool valid_name(const std::string& n) {
  return !n.empty() && n != "." && n != ".." && std::all_of(n.begin(), n.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '-' || c == '.';
  });
}

// ---- --set overrides ----

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

// `where` names the override in messages ("--set k=v" by default; a variant's `set` entries
// name their own position).
void apply_override(Tree& root, const std::string& assignment, std::string where = "") {
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
    Tree* child = nullptr;
    if (s.index < 0) {
      if (node->kind == Tree::Kind::Null) node->kind = Tree::Kind::Map;
      if (node->kind != Tree::Kind::Map)
        throw InputError(where + ": '" + walked + "' is " + kind_name(node->kind) +
                         ", not a section with keys");
      Entry* e = node->find(s.key);
      if (!e) {
        node->entries.push_back(Entry{s.key, where, Tree{}});
        e = &node->entries.back();
        e->value.where = where;
      }
      child = &e->value;
      walked += (walked.empty() ? "" : ".") + s.key;
    } else {
      if (node->kind == Tree::Kind::Null) node->kind = Tree::Kind::Seq;
      if (node->kind != Tree::Kind::Seq)
        throw InputError(where + ": '" + walked + "' is " + kind_name(node->kind) + ", not a list");
      const auto n = static_cast<long>(node->items.size());
      if (s.index > n)
        throw InputError(where + ": '" + walked + "' has " + std::to_string(n) + " entries; index " +
                         std::to_string(s.index) + " is past the end (use [" + std::to_string(n) +
                         "] to append one)");
      if (s.index == n) {
        node->items.push_back(Tree{});
        node->items.back().where = where;
      }
      child = &node->items[static_cast<std::size_t>(s.index)];
      walked += "[" + std::to_string(s.index) + "]";
    }
    if (last) {
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
    } else if (child->kind == Tree::Kind::Scalar) {
      throw InputError(
          where + ": '" + walked + "' is a value, not " +
          (want == Tree::Kind::Seq ? std::string("a list") : std::string("a section with keys")));
    }
    node = child;
  }
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

namespace {

// "file:line:col" of byte `offset` of `text` (columns count characters, as an editor does).
std::string text_position(const std::string& file, std::string_view text, std::size_t offset) {
  std::size_t line = 1, col = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      ++line;
      col = 1;
    } else if ((c & 0xc0) != 0x80) {
      ++col;
    }
  }
  return file + ":" + std::to_string(line) + ":" + std::to_string(col);
}

// The limits every scenario text meets before yaml-cpp sees it: its length (yaml-cpp needs
// about 300 bytes of memory and 1 us per byte of input: 256 KiB parse in a few tenths of a
// second) and UTF-8 throughout.
void check_scenario_text(const std::string& text, const std::string& file) {
  if (text.size() > kMaxScenarioBytes)
    throw InputError(text_position(file, text, kMaxScenarioBytes) + ": the scenario is longer than " +
                     std::to_string(kMaxScenarioBytes) + " bytes (256 KiB) here; a scenario is a few KB (give "
                     "long rank lists as ranges, e.g. 0-4095)");
  const std::size_t bad = text::invalid_utf8(text);
  if (bad != std::string::npos)
    throw InputError(text_position(file, text, bad) + ": not valid UTF-8 (byte 0x" +
                     fmt_hex(static_cast<unsigned char>(text[bad])) + "); a scenario is UTF-8 text");
}

// The events of a YAML document, dropped: a parse that builds nothing.
struct DropEvents : YAML::EventHandler {
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

Tree parse_tree(const std::string& text, const std::string& file, YamlWork& work) {
  check_scenario_text(text, file);
  YAML::Node doc;
  try {
    doc = YAML::Load(text);
    // A second document ("---") was ignored, even garbage. Whether one follows is asked of the
    // parser without parsing it (yaml-cpp builds nothing here: the first document's events are
    // dropped, and the parser only peeks at the next token), so that its content costs nothing.
    std::istringstream in(text);
    YAML::Parser parser(in);
    DropEvents drop;
    if (parser.HandleNextDocument(drop) && parser) {
      std::size_t at = text.rfind("---", 0) == 0 ? text.find("\n---") : text.find("---");
      if (at != std::string::npos && text[at] == '\n') ++at;
      throw InputError((at == std::string::npos ? file : text_position(file, text, at)) +
                       ": a second YAML document (after '---'): a scenario is one document; give variants in its "
                       "'variants' section");
    }
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp's own guard, which says "bad file".
    throw InputError(position(file, e.mark) + ": the scenario nests mappings and lists deeper than " +
                     std::to_string(kMaxDepth) + " levels");
  } catch (const YAML::Exception& e) {
    throw InputError(position(file, e.mark) + ": YAML syntax error: " + e.msg);
  }
  ConvertState st{file, work, {}};
  Tree root = convert(doc, st, file + ":1:1");
  if (root.kind != Tree::Kind::Map && root.kind != Tree::Kind::Null)
    throw InputError(root.where + ": expected a scenario (sections: " + join(kTopKeys) + "), got " +
                     kind_name(root.kind));
  if (root.kind == Tree::Kind::Null) root.kind = Tree::Kind::Map;
  return root;
}

Tree parse_tree(const std::string& text, const std::string& file) {
  YamlWork work;
  return parse_tree(text, file, work);
}

Scenario finish(Tree root, const std::string& file, const std::vector<std::string>& overrides,
               const VariantChoice& variant = {});

std::string read_scenario_text(const std::string& path);

Tree scalar_tree(const std::string& text, const std::string& where) {
  Tree t;
  t.kind = Tree::Kind::Scalar;
  t.text = text;
  t.where = where;
  return t;
}

void set_entry(Tree& map, const std::string& key, Tree value, const std::string& where) {
  if (Entry* e = map.find(key)) {
    e->value = std::move(value);
    e->where = where;
    return;
  }
  map.entries.push_back(Entry{key, where, std::move(value)});
}

// ---- what-if variants (docs/whatif.md) ----

const std::vector<std::string> kVariantKeys = {"name",      "description", "remove", "set",
                                               "platform",  "rebalance",   "scale",  "network"};
const std::vector<std::string> kCauseSelectors = {"all", "imbalance", "delay", "noise"};

// A value that may be one scalar or a list of scalars.
std::vector<const Tree*> scalar_items(const Entry& e, const std::string& what, const std::string& example) {
  std::vector<const Tree*> out;
  if (e.value.kind == Tree::Kind::Scalar) {
    out.push_back(&e.value);
  } else if (e.value.kind == Tree::Kind::Seq) {
    for (const auto& item : e.value.items) {
      if (item.kind != Tree::Kind::Scalar)
        throw InputError(item.where + ": " + what + ": expected a value (e.g. " + example + "), got " +
                         kind_name(item.kind));
      out.push_back(&item);
    }
  } else {
    throw InputError(e.where + ": " + what + ": expected a value or a list (e.g. " + example + "), got " +
                     kind_name(e.value.kind));
  }
  return out;
}

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

struct VariantSpec {
  VariantInfo info;
  Tree node;         // a copy: applying a variant edits the tree it came from
  std::string what;  // "variants[2]"
};

// Checks the `variants` section's structure and names; the values of each change are checked
// when that variant is loaded (apply_variant_tree, variant_change): `waitlab whatif` loads
// every variant before it simulates any.
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

// The variant's tree edits: another platform section, then its overrides.
void apply_variant_tree(Tree& root, VariantSpec& v) {
  const Tree& item = v.node;
  if (const Entry* p = item.find("platform")) {
    if (p->value.kind != Tree::Kind::Map)
      throw InputError(p->where + ": " + v.what + ".platform: expected a platform section (type: cluster, ...), got " +
                       kind_name(p->value.kind));
    const Entry* type = p->value.find("type");
    v.info.changes.push_back("platform " + (type && type->value.kind == Tree::Kind::Scalar ? type->value.text : "?"));
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

// Removes the perturbations the variant names: a cause (imbalance, delay, noise, all), a
// perturbation type, or an index into the list (2 or perturbations[2]).
void remove_perturbations(Scenario& s, VariantSpec& v) {
  const Entry* e = v.node.find("remove");
  if (!e) return;
  std::vector<char> drop(s.perturbations.size(), 0);
  for (const Tree* t : scalar_items(*e, v.what + ".remove", "[delay, noise]")) {
    const std::string& sel = t->text;
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
      throw InputError(t->where + ": " + v.what + ".remove: '" + sel + "' matches no perturbation of the scenario" +
                       (known_word ? std::string() : hint(sel, known)) + " (perturbations: " +
                       (have.empty() ? std::string("none") : have) +
                       "; remove a cause — imbalance, delay, noise, all —, a type or an index)");
    }
    for (std::size_t i : hits) drop[i] = 1;
    v.info.changes.push_back("remove " + sel);
  }
  std::vector<ModelConfig> kept;
  for (std::size_t i = 0; i < s.perturbations.size(); ++i)
    if (!drop[i]) kept.push_back(std::move(s.perturbations[i]));
  s.perturbations = std::move(kept);
}

// The variant's changes beyond the scenario's keys.
Change variant_change(VariantSpec& v) {
  Change c;
  c.where = v.info.where;
  const Tree& item = v.node;
  if (const Entry* e = item.find("rebalance")) {
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
  if (const Entry* e = item.find("scale")) {
    for (const Tree* t : scalar_items(*e, v.what + ".scale", "[solve=0.5, \"fixup@0-15=2\"]")) {
      c.workload.scales.push_back(models::parse_compute_scale(t->text, t->where + ": " + v.what + ".scale"));
      v.info.changes.push_back("scale compute " + t->text);
    }
  }
  if (const Entry* e = item.find("network")) {
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
  return c;
}

}  // namespace

Scenario replay_scenario(const ReplayRequest& r) {
  Tree root;
  root.kind = Tree::Kind::Map;
  std::string file = r.trace;
  if (!r.scenario.empty()) {
    root = parse_tree(read_scenario_text(r.scenario), r.scenario);
    file = r.scenario;
  }
  root.entries.erase(std::remove_if(root.entries.begin(), root.entries.end(),
                                    [](const Entry& e) { return e.key == "workload"; }),
                     root.entries.end());
  if (!root.find("name")) {
    std::string name = std::filesystem::path(r.trace).filename().string();
    if (std::filesystem::path(r.trace).filename() == "traces.otf2")
      name = std::filesystem::path(r.trace).parent_path().filename().string();
    for (const std::string ext : {".wlt", ".prv", ".otf2", ".ti", ".txt"})
      if (name.size() > ext.size() && name.compare(name.size() - ext.size(), ext.size(), ext) == 0)
        name.resize(name.size() - ext.size());
    for (auto& c : name)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') c = '_';
    set_entry(root, "name", scalar_tree("replay-" + name, "waitlab replay"), "waitlab replay");
  }
  Tree w;
  w.kind = Tree::Kind::Map;
  w.where = "waitlab replay " + r.trace;
  set_entry(w, "type", scalar_tree(models::kTraceWorkload, w.where), w.where);
  const std::string absolute_trace = std::filesystem::absolute(r.trace).string();
  check_text(absolute_trace, w.where, "the trace's absolute path");  // it goes into summary.json
  set_entry(w, "trace", scalar_tree(absolute_trace, w.where), w.where);
  std::string scales;
  for (const auto& c : r.compute_scales) scales += (scales.empty() ? "" : ",") + c;
  if (!scales.empty()) set_entry(w, "compute_scale", scalar_tree(scales, "--compute-scale"), "--compute-scale");
  if (!r.iterations_from.empty())
    set_entry(w, "iterations_from", scalar_tree(r.iterations_from, "--iterations-from"), "--iterations-from");
  if (!r.speed.empty()) set_entry(w, "speed", scalar_tree(r.speed, "--speed"), "--speed");
  set_entry(root, "workload", std::move(w), "waitlab replay");
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
  return finish(std::move(root), file, r.overrides);
}

Scenario parse_scenario(const std::string& text, const std::string& file,
                        const std::vector<std::string>& overrides, const VariantChoice& variant) {
  return finish(parse_tree(text, file), file, overrides, variant);
}

void read_yaml_tree(const std::string& text, const std::string& file, YamlWork& work) {
  parse_tree(text, file, work);
}

namespace {

Scenario finish(Tree root, const std::string& file, const std::vector<std::string>& overrides,
               const VariantChoice& variant) {
  for (const auto& o : overrides) apply_override(root, o);
  // Variants given on the command line join the file's.
  for (const auto& text : variant.extra) {
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
  std::vector<VariantSpec> variants = variants_section(root);
  VariantSpec* chosen = nullptr;
  if (!variant.name.empty()) {
    std::vector<std::string> names;
    for (auto& v : variants) {
      names.push_back(v.info.name);
      if (v.info.name == variant.name) chosen = &v;
    }
    if (!chosen)
      throw InputError(file + ": no variant '" + variant.name + "'" + hint(variant.name, names) +
                       (names.empty() ? std::string(" (the scenario has no variants)")
                                      : " (variants: " + join(names) + ")"));
    apply_variant_tree(root, *chosen);
    // A variant's platform section replaces the scenario's; the user's --set of platform keys
    // apply to it as to every run of a study.
    if (chosen->node.find("platform"))
      for (const auto& o : overrides)
        if (o.rfind("platform.", 0) == 0) apply_override(root, o);
  }

  for (const auto& e : root.entries)
    if (std::find(kTopKeys.begin(), kTopKeys.end(), e.key) == kTopKeys.end())
      throw InputError(e.where + ": unknown section '" + e.key + "'" + hint(e.key, kTopKeys) +
                       " (sections: " + join(kTopKeys) + ")");

  Scenario s;
  s.file = file;
  s.overrides = overrides;
  if (const Entry* e = root.find("name")) {
    s.name = scalar(*e, "name");
    if (!valid_name(s.name))
      throw InputError(
          e->value.where + ": name: '" + s.name +
          "' is not a valid scenario name (letters, digits, '_', '-', '.'; used as a directory name)");
  } else {
    s.name = std::filesystem::path(file).stem().string();
    for (auto& c : s.name)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') c = '_';
    if (!valid_name(s.name)) s.name = "scenario";
  }
  if (const Entry* e = root.find("description")) s.description = scalar(*e, "description");

  const Entry* platform = root.find("platform");
  if (!platform)
    throw InputError(file + ": missing section 'platform' (e.g. platform: {type: cluster, nodes: 64})");
  const Entry* workload = root.find("workload");
  if (!workload)
    throw InputError(file + ": missing section 'workload' (e.g. workload: {type: heat1d, ranks: 64})");
  const Tree& pblock = expect_map(*platform, "platform", "type: cluster, nodes: 64, ...");
  s.platform =
      model_section(pblock, platform->where, {"platform", "platforms"}, specs_of(models::SpecKind::Platform));
  Tree wblock = expect_map(*workload, "workload", "type: heat1d, ranks: 64, ...");
  // `workload: {trace: PATH}` is short for `workload: {type: trace, trace: PATH}`.
  if (!wblock.find("type") && wblock.find("trace")) {
    Entry type{"type", wblock.find("trace")->where, Tree{}};
    type.value.kind = Tree::Kind::Scalar;
    type.value.text = models::kTraceWorkload;
    type.value.where = type.where;
    wblock.entries.insert(wblock.entries.begin(), type);
  }
  s.workload = model_section(wblock, workload->where, {"workload", "workloads"}, workload_specs());

  if (const Entry* e = root.find("perturbations")) {
    if (e->value.kind == Tree::Kind::Map)
      throw InputError(e->where +
                       ": perturbations: expected a list (each entry starts with '- type: ...'), got " +
                       kind_name(e->value.kind));
    if (e->value.kind == Tree::Kind::Scalar)
      throw InputError(e->where +
                       ": perturbations: expected a list (each entry starts with '- type: ...'), got " +
                       kind_name(e->value.kind));
    for (std::size_t i = 0; i < e->value.items.size(); ++i) {
      const Tree& item = e->value.items[i];
      const std::string what = "perturbations[" + std::to_string(i) + "]";
      if (item.kind != Tree::Kind::Map)
        throw InputError(item.where + ": " + what + ": expected a mapping (type: delay, ...), got " +
                         kind_name(item.kind));
      s.perturbations.push_back(
          model_section(item, item.where, {"perturbation", "perturbations"}, perturbation_specs()));
    }
  }
  if (const Entry* e = root.find("run")) s.run = run_section(*e);
  if (const Entry* e = root.find("outputs")) s.outputs = output_section(*e);
  if (s.outputs.dir.empty()) s.outputs.dir = "out/" + s.name;
  if (chosen) {
    remove_perturbations(s, *chosen);
    s.change = variant_change(*chosen);
    s.variant = chosen->info.name;
    if (chosen->info.changes.empty())
      throw InputError(chosen->info.where + ": " + chosen->what + " ('" + chosen->info.name +
                       "') changes nothing (its lists are empty, or network says ideal: false)");
    if (s.change.network.ideal && (s.change.network.bandwidth_scale != 1 || s.change.network.latency_scale != 1))
      throw InputError(chosen->info.where + ": " + chosen->what +
                       ".network: ideal and a bandwidth or latency factor exclude each other");
  }
  for (const auto& v : variants) s.variants.push_back(v.info);

  // Impossible combinations (more ranks than cores, options a model rejects) surface when the
  // models are built; build them once now so that nothing starts on a bad scenario. A trace
  // workload is only checked for its options and its file here: reading a big trace twice
  // would double the start-up time, and prepare() reads it before anything runs.
  // A variant of a trace workload is prepared too (the trace is read once more): its regions,
  // ranks and platform must be checked before a study starts any simulation.
  if (s.workload.type != models::kTraceWorkload || (chosen && (!s.change.empty() || chosen->node.find("platform")))) {
    (void)prepare(s);
  } else {
    (void)trace_options(s.workload);
    const std::string path = trace_path(s.workload, s.file);
    (void)trace::format_of_input(path);
    try {
      (void)models::make_platform(s.platform.type, s.platform.options);
    } catch (const InputError& e) {
      rethrow_at_option(e, s.platform);
    }
  }
  return s;
}

}  // namespace

namespace {

std::string read_scenario_text(const std::string& path) {
  // A directory opens fine as a stream on Linux and reads as empty, which would end as a
  // baffling "missing section 'platform'": insist on a regular file (or a link to one).
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(st)) throw InputError(path + ": no such scenario file");
  if (std::filesystem::is_directory(st)) {
    // Point at a scenario inside it, if there is one (the first in name order).
    std::string example;
    for (const auto& e : std::filesystem::directory_iterator(path, ec))
      if (e.path().extension() == ".yaml" && (example.empty() || e.path().string() < example))
        example = e.path().string();
    throw InputError(
        path + ": is a directory, not a scenario file" +
        (example.empty() ? std::string(" (give a YAML file)") : "; did you mean " + example + "?"));
  }
  if (!std::filesystem::is_regular_file(st))
    throw InputError(path + ": not a regular file (a scenario is a YAML file)");
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw InputError(path + ": cannot read the scenario file" +
                     (errno != 0 ? std::string(": ") + std::strerror(errno) : std::string()));
  // One byte more than a scenario may hold is enough to say that it is too long (a 100 MB
  // file is not read, let alone parsed).
  std::string text(kMaxScenarioBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) throw InputError(path + ": cannot read the scenario file (read error)");
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

}  // namespace

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides,
                       const VariantChoice& variant) {
  return parse_scenario(read_scenario_text(path), path, overrides, variant);
}

std::unique_ptr<models::Workload> load_trace_workload(const ModelConfig& w, const std::string& scenario_file,
                                                      std::vector<std::string>* notes) {
  const models::ReplayOptions o = trace_options(w);
  const std::string path = trace_path(w, scenario_file);
  models::ReplayReport report;
  std::unique_ptr<models::Workload> workload;
  const std::string name = std::filesystem::path(path).filename().string();
  const bool ti = trace::format_of_input(path) == trace::TraceFormat::Ti;
  // A TI trace's compute is already flops, replayed at the platform's core speed: a speed
  // for converting seconds would change nothing.
  if (ti && o.speed > 0)
    throw InputError(option_where(w, "speed") + ": option 'speed' of workload trace: the TI trace " + name +
                     " gives its compute in flops already (replayed at the platform's core speed, "
                     "platform.speed); speed converts the seconds of OTF2, Paraver and .wlt traces");
  if (ti)
    workload = models::replay_ti_file(path, name, o, &report);
  else
    workload = models::replay_trace(trace::read_trace(path), name, o, &report);
  check_trace_options(w, o, *workload, name);
  if (notes) *notes = std::move(report.notes);
  return workload;
}

sim::RunOptions run_options(const Scenario& s) {
  sim::RunOptions o;
  o.name = s.name;
  o.seed = s.run.seed;
  o.eager_threshold = s.run.eager_threshold;
  o.timing_precision = s.run.timing_precision;
  o.collectives = s.run.collectives;
  o.collective_algorithms = s.run.collective_algorithms;
  o.semantics = s.run.semantics;
  return o;
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
      trace::format_of_input(trace_path(s.workload, s.file)) == trace::TraceFormat::Ti)
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
  models::ModelContext ctx;
  ctx.ranks = r.workload->ranks();
  ctx.iterations = r.workload->iterations();
  ctx.grid = r.workload->grid();
  ctx.placement = r.placement;
  ctx.regions = &r.workload->definitions();
  ctx.seed = s.run.seed;
  for (const auto& p : s.perturbations) {
    try {
      r.perturbations.add(models::make_perturbation(p.type, p.options, ctx));
    } catch (const InputError& e) {
      rethrow_at_option(e, p);
    }
  }
  r.options = run_options(s);
  r.options.minprofile =
      std::find(s.outputs.analyses.begin(), s.outputs.analyses.end(), "minprofile") != s.outputs.analyses.end();
  r.options.network = s.change.network;
  r.workload = models::change_workload(std::move(r.workload), s.change.workload, r.perturbations, r.platform.speed,
                                       s.change.where);
  return r;
}

}  // namespace waitlab::scenarios
