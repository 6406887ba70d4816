// The tree a scenario is read into (yaml_tree.hpp): the one user of yaml-cpp. The document is
// parsed by yaml-cpp and copied node by node into a Tree that keeps every node's
// "file:line:col"; the copy is where the limits of docs/scenarios.md ("Limits") are held: size,
// UTF-8, node count (every use of an alias counted), nesting, recursive aliases, duplicate keys,
// one document.
#include "scenarios/yaml_tree.hpp"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "models/spec.hpp"
#include "util/text.hpp"
#include "scenarios/messages.hpp"
#include "util/error.hpp"

namespace waitlab::scenarios::detail {

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

namespace {

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

}  // namespace

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

namespace {

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

}  // namespace

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
    throw InputError(root.where + ": expected a scenario (sections: " + join(top_level_keys()) + "), got " +
                     kind_name(root.kind));
  if (root.kind == Tree::Kind::Null) root.kind = Tree::Kind::Map;
  return root;
}

Tree parse_tree(const std::string& text, const std::string& file) {
  YamlWork work;
  return parse_tree(text, file, work);
}

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

}  // namespace waitlab::scenarios::detail

namespace waitlab::scenarios {

void read_yaml_tree(const std::string& text, const std::string& file, YamlWork& work) {
  detail::parse_tree(text, file, work);
}

}  // namespace waitlab::scenarios
