#include "app/report.hpp"

#include "app/output_dir.hpp"
#include "app/json_text.hpp"
#include "app/inputs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <tuple>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/delay/delay.hpp"
#include "analysis/trace/atomic_file.hpp"
#include "analysis/trace/csv.hpp"
#include "util/error.hpp"
#include "analysis/waitstate/waitstate.hpp"
#include "models/spec.hpp"
#include "models/units.hpp"

namespace waitlab::app {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;  // keys in file order

namespace {

constexpr std::size_t kTableRows = 20;  // rows of each CSV table shown
const char* const kDash = "—";

// ---- text ----

std::string esc(std::string_view s) { return html_escape(s); }

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw InputError(p.string() + ": cannot read");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// 1234567 -> "1,234,567".
std::string grouped(std::uint64_t n) {
  const std::string digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string secs(double v) { return readable_seconds(v); }

std::string percent(double fraction) {
  return std::isfinite(fraction) ? fmt::format("{:.2f} %", 100 * fraction) : kDash;
}

// The exact value (shortest form that reads back to the same double).
std::string exact(double v) {
  return fmt::format("{}", v);
}

// ---- summary.json ----

// The value at `keys`, or nullptr if any of them is missing or the value is null.
const Json* at(const Json& j, std::initializer_list<const char*> keys) {
  const Json* p = &j;
  for (const char* k : keys) {
    if (!p->is_object()) return nullptr;
    const auto it = p->find(k);
    if (it == p->end()) return nullptr;
    p = &*it;
  }
  return p->is_null() ? nullptr : p;
}

std::optional<double> number(const Json* v) {
  if (v != nullptr && v->is_number()) return v->get<double>();
  return std::nullopt;
}
std::optional<double> number(const Json& j, std::initializer_list<const char*> keys) {
  return number(at(j, keys));
}
std::string text(const Json& j, std::initializer_list<const char*> keys) {
  const Json* v = at(j, keys);
  return v != nullptr && v->is_string() ? v->get<std::string>() : "";
}

// Any JSON value as plain text (not escaped).
std::string plain(const Json& v) {
  if (v.is_null()) return kDash;
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  if (v.is_number_unsigned()) return grouped(v.get<std::uint64_t>());
  if (v.is_number_integer()) {
    const auto n = v.get<std::int64_t>();
    return n < 0 ? "-" + grouped(static_cast<std::uint64_t>(-n)) : grouped(static_cast<std::uint64_t>(n));
  }
  if (v.is_number_float()) return fmt::format("{:.6g}", v.get<double>());
  if (v.is_string()) return v.get<std::string>();
  if (v.is_array()) {
    std::string s;
    for (const auto& e : v) s += (s.empty() ? "" : ", ") + plain(e);
    return s.empty() ? "[]" : s;
  }
  return json_text(v, -1);
}
std::string plain(const Json* v) {
  return v != nullptr ? plain(*v) : kDash;
}
std::string time_of(const Json* v) {
  const auto n = number(v);
  return n ? secs(*n) : kDash;
}

std::string pattern_title(const std::string& name) {
  for (std::size_t p = 0; p < analysis::kPatternCount; ++p) {
    const auto pat = static_cast<analysis::Pattern>(p);
    if (analysis::pattern_name(pat) == name) return std::string(analysis::pattern_title(pat));
  }
  return name;
}

std::string delay_kind_title(const std::string& name) {
  static const std::pair<const char*, const char*> kTitles[] = {
      {"late_sender", "Late Sender"}, {"late_receiver", "Late Receiver"}, {"barrier", "Barrier"},
      {"n_to_n", "N × N"},            {"1_to_n", "1 × N"},                {"n_to_1", "N × 1"}};
  for (const auto& [n, t] : kTitles)
    if (name == n) return t;
  return name;
}

// A model option's value in the units a scenario would use ("1Gf", "10GBps", "5ms").
std::string option_text(const models::Spec* spec, const std::string& key, const Json& v) {
  if (spec != nullptr && v.is_number()) {
    const auto* o = spec->option(key);
    if (o != nullptr && o->type == models::OptionType::Quantity) {
      try {
        return units::format(v.get<double>(), o->quantity);
      } catch (const std::exception&) {
      }
    }
  }
  return plain(v);
}

std::string options_html(models::SpecKind kind, const std::string& type, const Json* options) {
  if (options == nullptr || !options->is_object() || options->empty()) return "";
  const models::Spec* spec = models::Registry::instance().find(kind, type);
  std::string h = "<ul class=\"opts\">";
  for (const auto& [key, value] : options->items())
    h += fmt::format("<li><span class=\"k\">{}</span> {}</li>", esc(key), esc(option_text(spec, key, value)));
  return h + "</ul>";
}

// ---- HTML pieces ----

std::string kv_row(std::string_view label, const std::string& html) {
  return fmt::format("<tr><th scope=\"row\">{}</th><td>{}</td></tr>\n", esc(label), html);
}

std::string card(std::string_view label, const std::string& value, const std::string& more = "") {
  return fmt::format("<div class=\"card\"><div class=\"label\">{}</div><div class=\"value\">{}</div>{}</div>\n",
                     esc(label), esc(value), more.empty() ? "" : "<div class=\"more\">" + esc(more) + "</div>");
}

// A table cell with a time, its exact value on hover.
std::string time_cell(std::optional<double> v, std::string_view cls = "num") {
  if (!v) return fmt::format("<td class=\"{}\">{}</td>", cls, kDash);
  return fmt::format("<td class=\"{}\" title=\"{} s\">{}</td>", cls, exact(*v), esc(secs(*v)));
}
std::string num_cell(const std::string& s) {
  return "<td class=\"num\">" + esc(s) + "</td>";
}

// ---- CSV ----

struct Csv {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::size_t column(std::string_view name) const {
    for (std::size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return i;
    return header.size();
  }
};

std::optional<Csv> read_csv(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::nullopt;
  Csv c;
  std::string line;
  bool first = true;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    auto fields = trace::csv_split(line);
    if (first) {
      c.header = std::move(fields);
      first = false;
    } else {
      fields.resize(c.header.size());
      c.rows.push_back(std::move(fields));
    }
  }
  if (first) return std::nullopt;
  return c;
}

std::optional<double> parse_double(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  return v;
}

struct TableSpec {
  const char* file;
  const char* title;
  std::vector<const char*> sort_by;  // descending by the sum of these columns
  const char* sort_note;
};

std::string column_title(const std::string& c) {
  if (c == "seconds") return "seconds";
  std::string t = c;
  if (t.size() > 2 && t.compare(t.size() - 2, 2, "_s") == 0) t.resize(t.size() - 2);
  std::replace(t.begin(), t.end(), '_', ' ');
  return t;
}

bool time_column(const std::string& c) {
  return c == "seconds" || (c.size() > 2 && c.compare(c.size() - 2, 2, "_s") == 0);
}

std::string csv_table_html(const fs::path& dir, const TableSpec& spec) {
  const auto csv = read_csv(dir / spec.file);
  if (!csv) return "";
  std::vector<std::size_t> keys;
  for (const char* k : spec.sort_by)
    if (const auto i = csv->column(k); i < csv->header.size()) keys.push_back(i);
  std::vector<std::pair<double, const std::vector<std::string>*>> rows;
  for (const auto& r : csv->rows) {
    double key = 0;
    for (const auto i : keys) key += parse_double(r[i]).value_or(0);
    rows.emplace_back(key, &r);
  }
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  const std::size_t shown = std::min(rows.size(), kTableRows);

  std::string h = fmt::format("<h3 id=\"table-{}\">{} <code class=\"file\">{}</code></h3>\n", esc(fs::path(spec.file).stem().string()),
                              esc(spec.title), esc(spec.file));
  h += fmt::format("<p class=\"note\">{} {} rows{}, {}.</p>\n",
                   rows.size() > shown ? fmt::format("The top {} of", shown) : std::string("All"),
                   grouped(rows.size()), rows.size() > shown ? " in the CSV" : "", spec.sort_note);
  h += "<div class=\"scroll\"><table class=\"data\"><thead><tr>";
  for (const auto& c : csv->header)
    h += fmt::format("<th{}>{}</th>", time_column(c) || c == "rank" || c == "instances" || c == "calls" ? " class=\"num\"" : "",
                     esc(column_title(c)));
  h += "</tr></thead>\n<tbody>\n";
  for (std::size_t i = 0; i < shown; ++i) {
    const auto& r = *rows[i].second;
    h += "<tr>";
    for (std::size_t c = 0; c < csv->header.size(); ++c) {
      const std::string& name = csv->header[c];
      const std::string& v = r[c];
      if (time_column(name)) {
        h += v.empty() ? fmt::format("<td class=\"num\">{}</td>", kDash) : time_cell(parse_double(v));
      } else if (name == "rank" || name == "instances" || name == "calls") {
        h += num_cell(v);
      } else if (name == "pattern") {
        h += "<td>" + esc(pattern_title(v)) + "</td>";
      } else if (name == "kind") {
        h += "<td>" + esc(delay_kind_title(v)) + "</td>";
      } else {
        h += "<td><code>" + esc(v) + "</code></td>";
      }
    }
    h += "</tr>\n";
  }
  h += "</tbody></table></div>\n";
  return h;
}

// ---- pictures ----

struct Picture {
  std::string file;
  std::string id;
  std::string title;
  std::string caption;
  bool idlewave = false;
};

std::string id_from_name(const std::string& stem) {
  std::string id;
  for (const char c : stem)
    id += (std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_') ? c : '-';
  if (id.empty() || std::isalpha(static_cast<unsigned char>(id[0])) == 0) id = "img-" + id;
  return id;
}

std::vector<Picture> find_pictures(const fs::path& dir) {
  struct Known {
    const char* stem;
    const char* id;
    const char* title;
    const char* caption;
  };
  static const Known kKnown[] = {
      {"idlewave_heatmap", "heatmap", "Idle-period heat map",
       "The fraction of each time bin (one iteration long) that every rank spent idle, with the fitted wave fronts "
       "dashed and each delayed computation as a bar starred at its start, where its wave starts: an idle wave is a "
       "diagonal band leaving its source, its slope the wave's speed. Ranks and bins that share a pixel show the "
       "largest of their idle fractions, so that a narrow wave stays visible."},
      {"idlewave_amplitude", "amplitude", "Amplitude of the idle waves",
       "The idle period at the front of every wave against the distance from its source: a flat line is a wave "
       "that travels without decaying; its slope is the decay per rank."},
      {"idlewave_selfsync", "selfsync", "Self-synchronisation",
       "The idle periods of the ranks next to the slow group over six iterations of the second half of the run: "
       "the fast ranks wait by the same amount, at a phase that shifts from rank to rank."},
      {"timeresolved", "", "Efficiency over time",
       "Parallel efficiency (filled), load balance, serialisation and transfer efficiency of every window, and the "
       "cumulative parallel efficiency (dashed), which ends at the whole run's value (dotted)."},
      {"validation", "", "The estimator against the truth",
       "The minimum-duration estimator's wait ratio per call path against the trace-based truth (waitlab "
       "validate)."},
  };
  std::vector<fs::path> files;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".png" && it->is_regular_file(ec)) files.push_back(it->path());
  std::sort(files.begin(), files.end());

  std::vector<Picture> pics;
  std::set<std::string> used = {"heatmap", "amplitude", "selfsync"};
  for (const auto& f : files) {
    Picture p;
    p.file = f.filename().string();
    const std::string stem = f.stem().string();
    for (const auto& k : kKnown)
      if (stem == k.stem) {
        p.id = k.id;
        p.title = k.title;
        p.caption = k.caption;
        p.idlewave = *k.id != '\0';
      }
    if (p.id.empty()) {
      std::string id = id_from_name(stem);
      for (int n = 2; used.count(id) > 0; ++n) id = id_from_name(stem) + "-" + std::to_string(n);
      p.id = id;
      used.insert(id);
    }
    if (p.title.empty()) p.title = stem;
    pics.push_back(std::move(p));
  }
  // The idle-wave pictures in the order they are read: heat map, amplitude, self-synchronisation.
  const auto rank = [](const Picture& p) {
    return p.id == "heatmap" ? 0 : p.id == "amplitude" ? 1 : p.id == "selfsync" ? 2 : 3;
  };
  std::stable_sort(pics.begin(), pics.end(), [&](const Picture& a, const Picture& b) { return rank(a) < rank(b); });
  return pics;
}

// A picture is embedded up to this size (waitlab draws a few hundred KB); a larger one is linked
// beside the report instead, so that a stray 1 GB PNG cannot make the report take gigabytes.
constexpr std::uintmax_t kMaxEmbeddedPicture = std::uintmax_t{32} << 20;

std::string figure_html(const fs::path& dir, const Picture& p) {
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(dir / p.file, ec);
  if (!ec && size > kMaxEmbeddedPicture)
    return fmt::format(
        "<figure><img id=\"{}\" src=\"{}\" alt=\"{}\"><figcaption><strong>{}.</strong> {} <code class=\"file\">{}"
        "</code> ({} MB: linked, not embedded; the report shows it only beside that file)</figcaption></figure>\n",
        esc(p.id), esc(p.file), esc(p.title), esc(p.title), esc(p.caption), esc(p.file), size >> 20);
  std::string data;
  try {
    data = read_file(dir / p.file);
  } catch (const InputError&) {
    return fmt::format("<p class=\"note\">{}: cannot be read.</p>\n", esc(p.file));
  }
  return fmt::format(
      "<figure><img id=\"{}\" src=\"data:image/png;base64,{}\" alt=\"{}\">"
      "<figcaption><strong>{}.</strong> {} <code class=\"file\">{}</code></figcaption></figure>\n",
      esc(p.id), base64(data), esc(p.title), esc(p.title), esc(p.caption), esc(p.file));
}

// ---- sections ----

constexpr const char* kCss = R"css(
:root{--fg:#1c2333;--muted:#5d6678;--line:#dde2ea;--panel:#f5f7fa;--head:#1f2a44;--accent:#2a5db0}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--fg);background:#fff}
.wrap{max-width:1200px;margin:0 auto;padding:0 28px}
header{background:var(--head);color:#fff;padding:26px 0 18px}
header h1{margin:0;font-size:28px;font-weight:650}
header .sub{margin:4px 0 0;color:#c5cfe3}
header .desc{margin:10px 0 0;max-width:920px;color:#e9eef8}
nav{margin-top:16px;display:flex;flex-wrap:wrap;gap:6px}
nav a{color:#fff;text-decoration:none;font-size:13px;padding:2px 11px;border:1px solid rgba(255,255,255,.35);border-radius:12px}
nav a:hover{background:rgba(255,255,255,.12)}
section{padding:6px 0 20px;border-bottom:1px solid var(--line)}
h2{font-size:21px;margin:24px 0 10px}
h3{font-size:16px;margin:20px 0 6px;color:#2c3547}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(215px,1fr));gap:12px;margin:8px 0 14px}
.card{background:var(--panel);border:1px solid var(--line);border-radius:8px;padding:11px 14px}
.card .label{font-size:12px;text-transform:uppercase;letter-spacing:.05em;color:var(--muted)}
.card .value{font-size:22px;font-weight:620;font-variant-numeric:tabular-nums;margin-top:1px}
.card .more{font-size:13px;color:var(--muted)}
table{border-collapse:collapse;margin:6px 0 6px;font-size:14px}
th,td{padding:5px 11px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
thead th{background:var(--panel);font-weight:600;border-bottom:2px solid var(--line);white-space:nowrap}
tbody tr:nth-child(even){background:#fafbfd}
.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
table.kv th{font-weight:600;color:#2c3547;width:180px;white-space:nowrap}
table.kv tr:nth-child(even){background:none}
.opts{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:4px 6px}
.opts li{background:var(--panel);border:1px solid var(--line);border-radius:4px;padding:0 7px;font-size:13px}
.opts .k{color:var(--muted)}
code{font:13px/1.4 ui-monospace,"SF Mono",Menlo,Consolas,"DejaVu Sans Mono",monospace}
code.file{color:var(--muted);font-size:12px}
.note{color:var(--muted);font-size:13px;margin:4px 0 10px;max-width:920px}
figure{margin:16px 0 24px}
figure img{display:block;max-width:100%;height:auto;border:1px solid var(--line);border-radius:6px}
figcaption{font-size:14px;color:#3a4356;margin-top:7px;max-width:920px}
.scroll{overflow-x:auto}
table.wide{font-size:13px}
table.wide th,table.wide td{padding:5px 7px}
table.wide thead th{white-space:normal;vertical-align:bottom}
footer{color:var(--muted);font-size:12px;padding:16px 0 40px}
)css";

// Marks the body for a reader without eyes (tests, headless browsers): loaded, how many
// 'error' events (a picture that fails to load fires one, caught on the way down), and
// whether the heat map has a size.
constexpr const char* kScript = R"js(
(function () {
  var errors = 0;
  function mark() { if (document.body) document.body.dataset.errors = String(errors); }
  window.addEventListener('error', function () { errors += 1; mark(); }, true);
  window.addEventListener('load', function () {
    var b = document.body;
    mark();
    var h = document.getElementById('heatmap');
    if (h && h.complete && h.naturalWidth > 0) b.dataset.heatmap = 'shown';
    b.dataset.loaded = 'yes';
  });
})();
)js";

struct Page {
  std::string nav;
  std::string body;
  void section(const char* id, const char* title, const std::string& content) {
    nav += fmt::format("<a href=\"#{}\">{}</a>", id, esc(title));
    body += fmt::format("<section id=\"{}\">\n<h2>{}</h2>\n{}</section>\n", id, esc(title), content);
  }
};

std::string scenario_html(const Json& s) {
  std::string h = "<table class=\"kv\">\n";
  if (const std::string name = text(s, {"scenario", "name"}); !name.empty()) h += kv_row("Name", esc(name));
  if (const std::string d = text(s, {"scenario", "description"}); !d.empty()) h += kv_row("Description", esc(d));
  if (const std::string f = text(s, {"scenario", "file"}); !f.empty()) h += kv_row("File", "<code>" + esc(f) + "</code>");
  if (const Json* o = at(s, {"scenario", "overrides"}); o != nullptr && o->is_array() && !o->empty()) {
    std::string list;
    for (const auto& e : *o) list += "<code>--set " + esc(plain(e)) + "</code> ";
    h += kv_row("Overrides", list);
  }
  h += kv_row("Ranks", esc(plain(at(s, {"ranks"}))));
  h += kv_row("Iterations", esc(plain(at(s, {"iterations"}))));
  const auto model = [&](const char* key, models::SpecKind kind, const char* label) {
    const std::string type = text(s, {key, "type"});
    if (type.empty()) return;
    h += kv_row(label, "<strong>" + esc(type) + "</strong> " + options_html(kind, type, at(s, {key, "options"})));
  };
  model("platform", models::SpecKind::Platform, "Platform");
  model("workload", models::SpecKind::Workload, "Workload");
  if (const Json* p = at(s, {"perturbations"}); p != nullptr && p->is_array()) {
    std::string list;
    for (const auto& e : *p) {
      const std::string type = text(e, {"type"});
      list += "<div><strong>" + esc(type) + "</strong> " +
              options_html(models::SpecKind::Perturbation, type, at(e, {"options"})) + "</div>";
    }
    h += kv_row("Perturbations", list.empty() ? "none" : list);
  }
  if (const Json* r = at(s, {"run"}); r != nullptr && r->is_object()) {
    std::string list = "<ul class=\"opts\">";
    for (const auto& [key, value] : r->items()) {
      std::string v = plain(value);
      if (key == "eager_threshold_bytes" && value.is_number()) v = units::format(value.get<double>(), units::Quantity::Bytes);
      if (key == "timing_precision_s" && value.is_number())
        v = value.get<double>() == 0 ? "default" : units::format(value.get<double>(), units::Quantity::Duration);
      list += fmt::format("<li><span class=\"k\">{}</span> {}</li>", esc(key), esc(v));
    }
    h += kv_row("Run", list + "</ul>");
  }
  if (const Json* n = at(s, {"replay_notes"}); n != nullptr && n->is_array() && !n->empty()) {
    std::string list;
    for (const auto& e : *n) list += "<div>" + esc(plain(e)) + "</div>";
    h += kv_row("Replay notes", list);
  }
  return h + "</table>\n";
}

std::string trace_html(const Json& s) {
  std::string h = "<table class=\"kv\">\n";
  h += kv_row("File", "<code>" + esc(plain(at(s, {"trace", "file"}))) + "</code>");
  if (const std::string name = text(s, {"trace", "name"}); !name.empty()) h += kv_row("Name", esc(name));
  h += kv_row("Ranks", esc(plain(at(s, {"trace", "ranks"}))));
  if (const Json* th = at(s, {"trace", "threads"}); th != nullptr && plain(*th) != plain(at(s, {"trace", "ranks"})))
    h += kv_row("Threads", esc(plain(*th)));
  if (const std::string o = text(s, {"trace", "origin"}); !o.empty()) h += kv_row("Measured by", esc(o));
  h += kv_row("Events", esc(plain(at(s, {"trace", "events"}))));
  if (const Json* sk = at(s, {"trace", "skipped"}); sk != nullptr && sk->is_array() && !sk->empty()) {
    std::string list;
    for (const auto& e : *sk)
      list += fmt::format("{}{} × {}", list.empty() ? "" : "; ", esc(plain(at(e, {"count"}))), esc(text(e, {"kind"})));
    h += kv_row("Not used", list);
  }
  if (const Json* w = at(s, {"trace", "warnings"}); w != nullptr && w->is_array())
    for (const auto& e : *w) h += kv_row("Warning", "<strong>" + esc(e.is_string() ? e.get<std::string>() : plain(e)) + "</strong>");
  if (const Json* c = at(s, {"clock_correction"}); c != nullptr) {
    h += kv_row("Clock correction",
                fmt::format("mode <code>{}</code>, method <code>{}</code> ({}): {} violations before, {} after; {} "
                            "events moved (largest shift {})",
                            esc(plain(at(*c, {"mode"}))), esc(plain(at(*c, {"method"}))), esc(plain(at(*c, {"reason"}))),
                            esc(plain(at(*c, {"violations_before"}))), esc(plain(at(*c, {"violations_after"}))),
                            esc(plain(at(*c, {"events_moved"}))), esc(time_of(at(*c, {"max_shift_s"})))));
  }
  return h + "</table>\n";
}

std::string figures_html(const Json& s, bool is_run) {
  std::string h = "<div class=\"cards\">\n";
  const Json* a = at(s, {"analyses"});
  const auto wall = is_run ? number(s, {"wall_time_s"}) : (a ? number(*a, {"waitstate", "wall_time_s"}) : std::nullopt);
  if (wall) h += card("Wall time", secs(*wall), is_run ? "simulated, MPI_Init to MPI_Finalize" : "first to last event");
  const Json* ranks = is_run ? at(s, {"ranks"}) : at(s, {"trace", "ranks"});
  if (ranks != nullptr)
    h += card("Ranks", plain(*ranks), is_run ? plain(at(s, {"iterations"})) + " iterations" : "");
  if (is_run) {
    if (const Json* ops = at(s, {"mpi_operations"}))
      h += card("MPI operations", plain(*ops), plain(at(s, {"events"})) + " events");
    if (const auto inj = number(s, {"injected", "total_s"})) {
      std::string more;
      if (const Json* by = at(s, {"injected", "by_cause"}); by != nullptr && by->is_object())
        for (const auto& [cause, v] : by->items())
          if (const auto t = number(v, {"total_s"}); t && *t > 0) more += (more.empty() ? "" : ", ") + cause + " " + secs(*t);
      h += card("Injected", secs(*inj), more.empty() ? "nothing" : more);
    }
    if (const auto diff = number(s, {"baseline", "wall_time_difference_s"})) {
      const auto base = number(s, {"baseline", "wall_time_s"});
      h += card("Baseline difference", (*diff >= 0 ? "+" : "") + secs(*diff),
                base ? fmt::format("{} unperturbed ({:+.2f} %)", secs(*base), *base > 0 ? 100 * *diff / *base : 0.0)
                     : "");
    }
  }
  if (a != nullptr) {
    if (const auto w = number(*a, {"waitstate", "total_waiting_s"}))
      h += card("Waiting", secs(*w), "wait ratio " + percent(number(*a, {"waitstate", "wait_ratio"}).value_or(NAN)));
    if (const auto st = number(*a, {"delay", "short_term_s"}))
      h += card("Delay costs", secs(*st + number(*a, {"delay", "long_term_s"}).value_or(0)),
                secs(*st) + " short-term + " + time_of(at(*a, {"delay", "long_term_s"})) + " long-term");
    if (const auto len = number(*a, {"critpath", "length_s"})) {
      const auto imb = number(*a, {"critpath", "impact", "critical_imbalance_s"});
      const auto p = number(ranks);
      h += card("Critical path", secs(*len),
                imb && p && *p > 0 && *len > 0 ? "imbalance " + percent(*imb / (*p * *len)) + " of ranks × length" : "");
    }
  }
  h += "</div>\n";

  if (const Json* by = at(s, {"injected", "by_cause"}); is_run && by != nullptr && by->is_object()) {
    h += "<h3>Injected time by cause</h3>\n<p class=\"note\">Ground truth: what the perturbation models added to "
         "the compute intervals. Slack can absorb it, waiting ranks can spread it; the baseline difference "
         "measures what it cost.</p>\n";
    h += "<table class=\"data\"><thead><tr><th>cause</th><th class=\"num\">total</th><th class=\"num\">intervals</th>"
         "<th class=\"num\">ranks</th><th class=\"num\">largest per rank</th><th class=\"num\">on rank</th></tr></thead>"
         "<tbody>\n";
    for (const auto& [cause, v] : by->items())
      h += fmt::format("<tr><td>{}</td>{}{}{}{}{}</tr>\n", esc(cause), time_cell(number(v, {"total_s"})),
                       num_cell(plain(at(v, {"intervals"}))), num_cell(plain(at(v, {"ranks"}))),
                       time_cell(number(v, {"per_rank", "max_s"})), num_cell(plain(at(v, {"per_rank", "max_rank"}))));
    h += "</tbody></table>\n";
  }
  if (const Json* b = at(s, {"baseline"}); is_run && b != nullptr && b->is_object()) {
    h += "<h3>Against the unperturbed baseline</h3>\n<table class=\"data\"><thead><tr><th></th><th class=\"num\">"
         "this run</th><th class=\"num\">baseline</th><th class=\"num\">difference</th></tr></thead><tbody>\n";
    for (const auto& [label, key, diff] : {std::tuple{"wall time", "wall_time_s", "wall_time_difference_s"},
                                           std::tuple{"simulated time", "simulated_time_s", "simulated_time_difference_s"}})
      h += fmt::format("<tr><td>{}</td>{}{}{}</tr>\n", label, time_cell(number(s, {key})), time_cell(number(*b, {key})),
                       time_cell(number(*b, {diff})));
    h += fmt::format("<tr><td>MPI operations</td>{}{}<td></td></tr>\n", num_cell(plain(at(s, {"mpi_operations"}))),
                     num_cell(plain(at(*b, {"mpi_operations"}))));
    h += "</tbody></table>\n";
  }
  return h;
}

std::string waitstate_html(const Json& w) {
  std::string h = fmt::format(
      "<p>{} waiting over {} ranks × {} wall time: a wait ratio of <strong>{}</strong>.</p>\n",
      esc(time_of(at(w, {"total_waiting_s"}))), esc(plain(at(w, {"ranks"}))), esc(time_of(at(w, {"wall_time_s"}))),
      esc(percent(number(w, {"wait_ratio"}).value_or(NAN))));
  std::vector<std::pair<std::string, const Json*>> rows;
  std::size_t quiet = 0;
  if (const Json* p = at(w, {"patterns"}); p != nullptr && p->is_object())
    for (const auto& [name, v] : p->items()) {
      if (number(v, {"total_s"}).value_or(0) > 0 || number(v, {"instances"}).value_or(0) > 0)
        rows.emplace_back(name, &v);
      else
        ++quiet;
    }
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return number(*a.second, {"total_s"}).value_or(0) > number(*b.second, {"total_s"}).value_or(0);
  });
  if (rows.empty()) return h + "<p>No rank waited.</p>\n";
  h += "<table class=\"data\" id=\"waitstate-patterns\"><thead><tr><th>pattern</th><th class=\"num\">total</th>"
       "<th class=\"num\">wait ratio</th><th class=\"num\">instances</th><th class=\"num\">largest instance</th>"
       "</tr></thead><tbody>\n";
  for (const auto& [name, v] : rows) {
    const auto total = number(*v, {"total_s"});
    h += fmt::format("<tr id=\"pattern-{}\" data-seconds=\"{}\"><th scope=\"row\">{}</th>{}{}{}{}</tr>\n", esc(name),
                     total ? exact(*total) : "", esc(pattern_title(name)), time_cell(total, "num total"),
                     num_cell(percent(number(*v, {"ratio"}).value_or(NAN))), num_cell(plain(at(*v, {"instances"}))),
                     time_cell(number(*v, {"max_s"})));
  }
  h += "</tbody></table>\n";
  h += fmt::format("<p class=\"note\">The wrong-order rows are part of Late Sender (the totals count them once); "
                   "{} other patterns did not occur. Formulas: docs/analyses.md.</p>\n",
                   quiet);
  return h;
}

std::string delay_html(const Json& d) {
  std::string h = "<div class=\"cards\">\n";
  h += card("Short-term", time_of(at(d, {"short_term_s"})), "the delays' direct effect");
  h += card("Long-term", time_of(at(d, {"long_term_s"})), "waiting they caused further on");
  h += card("Without a cause", time_of(at(d, {"unattributed_s"})), "in the trace");
  h += card("Synchronisation points", plain(at(d, {"synchronisation_points"})),
            time_of(at(d, {"waiting_s"})) + " waiting");
  h += "</div>\n";
  if (const Json* top = at(d, {"top"}); top != nullptr && top->is_array() && !top->empty()) {
    h += "<h3>Largest delay costs</h3>\n<p class=\"note\">Where the time others waited was lost: rank and call path "
         "of the delay, largest total first.</p>\n";
    h += "<table class=\"data\"><thead><tr><th class=\"num\">rank</th><th>call path</th><th>kind</th>"
         "<th class=\"num\">short-term</th><th class=\"num\">long-term</th><th class=\"num\">total</th></tr></thead>"
         "<tbody>\n";
    for (const auto& e : *top) {
      const auto st = number(e, {"short_term_s"});
      const auto lt = number(e, {"long_term_s"});
      h += fmt::format("<tr>{}<td><code>{}</code></td><td>{}</td>{}{}{}</tr>\n", num_cell(plain(at(e, {"rank"}))),
                       esc(text(e, {"call_path"})), esc(delay_kind_title(text(e, {"kind"}))), time_cell(st), time_cell(lt),
                       time_cell(st.value_or(0) + lt.value_or(0)));
    }
    h += "</tbody></table>\n";
  }
  if (const Json* k = at(d, {"by_kind"}); k != nullptr && k->is_object()) {
    std::string rows;
    for (const auto& [kind, v] : k->items()) {
      const auto st = number(v, {"short_term_s"});
      const auto lt = number(v, {"long_term_s"});
      if (st.value_or(0) + lt.value_or(0) > 0)
        rows += fmt::format("<tr><td>{}</td>{}{}</tr>\n", esc(delay_kind_title(kind)), time_cell(st), time_cell(lt));
    }
    if (!rows.empty())
      h += "<h3>By kind</h3>\n<table class=\"data\"><thead><tr><th>kind</th><th class=\"num\">short-term</th>"
           "<th class=\"num\">long-term</th></tr></thead><tbody>\n" + rows + "</tbody></table>\n";
  }
  if (const Json* ws = at(d, {"wait_states"}); ws != nullptr)
    h += fmt::format("<p class=\"note\">The wait states with a cause: {} direct, {} indirect (caused by the delaying "
                     "rank's own waiting); {} propagating, {} terminal.</p>\n",
                     esc(time_of(at(*ws, {"direct_s"}))), esc(time_of(at(*ws, {"indirect_s"}))),
                     esc(time_of(at(*ws, {"propagating_s"}))), esc(time_of(at(*ws, {"terminal_s"}))));
  return h;
}

std::string critpath_html(const Json& c, std::optional<double> ranks) {
  std::string h = "<div class=\"cards\">\n";
  h += card("Length", time_of(at(c, {"length_s"})),
            fmt::format("{} segments, {} rank changes", plain(at(c, {"segments"})), plain(at(c, {"rank_changes"}))));
  const auto act = number(c, {"impact", "critical_path_activities_s"});
  const auto imb = number(c, {"impact", "critical_imbalance_s"});
  const auto non = number(c, {"impact", "non_critical_path_activities_s"});
  const auto len = number(c, {"length_s"});
  const double alloc = ranks && len ? *ranks * *len : 0;
  const auto share = [&](std::optional<double> v) {
    return v && alloc > 0 ? percent(*v / alloc) + " of ranks × length" : std::string("rank-seconds");
  };
  if (act) h += card("Critical-path activities", fmt::format("{:.5g} rank-s", *act), share(act));
  if (imb) h += card("Critical imbalance", fmt::format("{:.5g} rank-s", *imb), share(imb));
  if (non) h += card("Off the path", fmt::format("{:.5g} rank-s", *non), share(non));
  h += "</div>\n";
  if (const Json* complete = at(c, {"complete"}); complete != nullptr && complete->is_boolean() && !complete->get<bool>())
    h += "<p class=\"note\"><strong>The walk stopped early</strong>: the trace is inconsistent.</p>\n";
  if (const Json* top = at(c, {"top_imbalance"}); top != nullptr && top->is_array() && !top->empty()) {
    h += "<h3>Imbalance on the critical path</h3>\n<p class=\"note\">Call paths whose time on the path exceeds "
         "their average over the ranks, largest first.</p>\n";
    h += "<table class=\"data\"><thead><tr><th>call path</th><th class=\"num\">on the path</th><th class=\"num\">"
         "average</th><th class=\"num\">imbalance</th></tr></thead><tbody>\n";
    for (const auto& e : *top)
      h += fmt::format("<tr><td><code>{}</code></td>{}{}{}</tr>\n", esc(text(e, {"call_path"})),
                       time_cell(number(e, {"on_path_s"})), time_cell(number(e, {"average_s"})),
                       time_cell(number(e, {"imbalance_s"})));
    h += "</tbody></table>\n";
  }
  return h;
}

std::string fixed(const Json* v, const char* spec) {
  const auto n = number(v);
  return n ? fmt::format(fmt::runtime(spec), *n) : kDash;
}

// What the idle-wave fronts' distances count (distance_metric): ranks on a chain, hops on a
// grid or graph. {singular, plural}.
std::pair<std::string, std::string> distance_units(const Json& iw) {
  if (text(iw, {"distance_metric"}) == "hops") return {"hop", "hops"};
  return {"rank", "ranks"};
}

// v rounded to a multiple of `resolution`; never −0.
double round_to(double v, double resolution) {
  if (!std::isfinite(v) || !(resolution > 0)) return v;
  return std::round(v / resolution) * resolution + 0.0;
}

// Why the idle-wave model uses its σ and d, from the exchange the analysis found in the trace
// (analysis/idlewave/idlewave.hpp: σ = 2 for a bidirectional exchange in one-sided phases under
// rendezvous, else 1; d the largest rank distance of a message).
std::string sigma_reason(const Json& iw) {
  const auto flag = [&](const char* k) {
    const Json* v = at(iw, {k});
    return v != nullptr && v->is_boolean() && v->get<bool>();
  };
  const Json* sv = at(iw, {"sigma"});
  const Json* dv = at(iw, {"distance"});
  const Json* si = at(iw, {"sigma_inferred"});
  const Json* di = at(iw, {"distance_inferred"});
  std::string h;
  if (sv != nullptr && sv->is_number()) {
    const int sigma = static_cast<int>(sv->get<double>());
    h = fmt::format("σ = {}", sigma);
    const int expected = flag("phased") && !flag("eager") ? 2 : 1;
    if (si != nullptr && si->is_boolean() && !si->get<bool>())
      h += ": given in the options.";
    else if (sigma != expected)
      h += ": inferred from the trace.";
    else if (!flag("bidirectional"))
      h += ": ranks receive from one side only; a wait moves on by one neighbour per iteration.";
    else if (!flag("phased"))
      h += ": ranks exchange with both sides at once (not in one-sided phases); a wait moves on by one "
           "neighbour per iteration.";
    else if (flag("eager"))
      h += ": ranks exchange with one side, then the other, but sends complete before their receive is posted "
           "(eager); a wait moves on by one neighbour per iteration.";
    else
      h += ": ranks exchange with one side, then the other, and every send waits for its receiver "
           "(rendezvous); a wait moves on by two neighbours per iteration.";
  }
  const auto [unit, units] = distance_units(iw);
  if (dv != nullptr && dv->is_number()) {
    h += fmt::format("{}d = {}", h.empty() ? "" : " ", plain(*dv));
    if (di != nullptr && di->is_boolean() && !di->get<bool>()) {
      h += ": given in the options.";
    } else if (unit == "hop") {
      std::string grid;
      if (const Json* g = at(iw, {"grid"}); g != nullptr && g->is_array() && !g->empty())
        for (const auto& n : *g) grid += (grid.empty() ? "" : "×") + plain(n);
      const Json* periodic = at(iw, {"periodic"});
      h += grid.empty() ? ": a message goes one hop on the communication graph; distances count hops."
                        : fmt::format(": a message goes one hop on the {}D grid {}{}; distances count hops (the "
                                      "Manhattan distance on the grid).",
                                      at(iw, {"grid"})->size(), grid,
                                      periodic != nullptr && periodic->is_boolean() && periodic->get<bool>()
                                          ? " (periodic)"
                                          : "");
    } else {
      h += ": the largest rank distance of a message.";
    }
  }
  if (const auto sg = number(sv), d = number(dv); sg && d)
    h += fmt::format(" A wave moves σ·d = {:g} {} per iteration.", *sg * *d, *sg * *d == 1 ? unit : units);
  return h;
}

// Rank ranges [first, last] as text: "16–31, 48–63, …, 1008–1023 (32 ranges)"; a single rank
// without a dash. `shown`: the ranges written out before the ellipsis (the last is always).
std::string rank_ranges(const std::vector<std::pair<std::int64_t, std::int64_t>>& ranges, std::size_t shown = 6) {
  const auto one = [](const std::pair<std::int64_t, std::int64_t>& r) {
    return r.first == r.second ? std::to_string(r.first) : fmt::format("{}–{}", r.first, r.second);
  };
  std::string s;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    if (ranges.size() > shown + 1 && i == shown) {
      s += ", …, " + one(ranges.back()) + fmt::format(" ({} ranges)", ranges.size());
      break;
    }
    s += (i == 0 ? "" : ", ") + one(ranges[i]);
  }
  return s;
}

// The slow group's ranks: from self_sync.slow_rank_ranges ([[first, last], ...]) when the
// analysis wrote them; else one range when first_slow_rank..last_slow_rank holds exactly
// slow_ranks ranks; else the count and the span, which is not one block.
std::string slow_ranks_text(const Json& ss) {
  const Json* n = at(ss, {"slow_ranks"});
  std::string v = plain(n);
  if (const Json* rr = at(ss, {"slow_rank_ranges"}); rr != nullptr && rr->is_array() && !rr->empty()) {
    std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
    for (const auto& r : *rr)
      if (r.is_array() && r.size() == 2 && r[0].is_number_integer() && r[1].is_number_integer())
        ranges.emplace_back(r[0].get<std::int64_t>(), r[1].get<std::int64_t>());
    if (ranges.size() == rr->size())
      return v + (ranges.size() == 1 && ranges[0].first == ranges[0].second ? " (rank " : " (ranks ") +
             rank_ranges(ranges) + ")";
  }
  const auto first = number(ss, {"first_slow_rank"}), last = number(ss, {"last_slow_rank"});
  const auto count = number(n);
  if (!first || !last || *first < 0) return v;
  if (count && *last - *first + 1 == *count)
    return v + (*first == *last ? fmt::format(" (rank {})", *first) : fmt::format(" (ranks {}–{})", *first, *last));
  return v + fmt::format(" (not one block: the first is rank {}, the last rank {})", *first, *last);
}

// Where a front stops, with the wave it met when the analysis names it (met_wave, from 0).
std::string stop_text(const Json& f) {
  std::string s = plain(at(f, {"stop"}));
  if (const auto m = number(f, {"met_wave"}); m && *m >= 0)
    s += s == "met" ? fmt::format(" (wave {:g} goes on)", *m) : fmt::format(" (wave {:g} ended against it)", *m);
  return s;
}

std::string idlewave_html(const Json* iw, const fs::path& dir, const std::vector<Picture>& pics) {
  std::string h;
  if (iw != nullptr) {
    h += "<div class=\"cards\">\n";
    const auto [unit, units] = distance_units(*iw);
    if (const Json* it = at(*iw, {"iteration_s"})) {
      // T_iter: T_exec + T_comm, or the period measured as run (under noise, longer).
      const auto ti = number(it), te = number(*iw, {"t_exec_s"}), tc = number(*iw, {"t_comm_s"});
      const bool sum = ti && te && tc && std::fabs(*ti - (*te + *tc)) <= 1e-9 * std::fabs(*ti);
      h += card("Iteration T_iter", time_of(it),
                fmt::format("{}T_exec {}{} T_comm {}", sum ? "" : "as run; ", time_of(at(*iw, {"t_exec_s"})),
                            sum ? " +" : ",", time_of(at(*iw, {"t_comm_s"}))));
    }
    const Json* pipeline_flag = at(*iw, {"pipeline"});
    const bool pipeline = pipeline_flag != nullptr && pipeline_flag->is_boolean() && pipeline_flag->get<bool>();
    const std::string why = sigma_reason(*iw);
    if (!pipeline && (at(*iw, {"sigma"}) != nullptr || at(*iw, {"distance"}) != nullptr))
      h += card(units + " per iteration", fmt::format("σ {} · d {}", plain(at(*iw, {"sigma"})), plain(at(*iw, {"distance"}))),
                "the model's σ and d, from the exchange in the trace (below)");
    auto model = number(*iw, {"predicted_ranks_per_s"});
    if (!model) {
      const auto s = number(*iw, {"sigma"}), d = number(*iw, {"distance"}), it = number(*iw, {"iteration_s"});
      if (s && d && it && *it > 0) model = *s * *d / *it;
    }
    // No iteration measured, no model (not "0 ranks/s").
    if (model && *model > 0) h += card("Model speed", fmt::format("{:.5g} {}/s", *model, units), "σ·d / T_iter");
    if (const Json* idle = at(*iw, {"idle_total_s"}))
      h += card("Idle time", time_of(idle), plain(at(*iw, {"idle_periods"})) + " idle periods");
    h += "</div>\n";
    if (!why.empty() && !pipeline) h += "<p class=\"note\" id=\"idlewave-model\">" + esc(why) + "</p>\n";
    if (pipeline)
      h += "<p class=\"note\" id=\"idlewave-pipeline\">A wavefront pipeline (sweeps): every rank usually waits for "
           "its upstream neighbours, and a delay is carried by the sweeps within its own iteration, one block step "
           "per hop, to every rank. The model σ·d / T_iter does not apply; the fronts are followed on the extra idle "
           "time over each rank's usual wait, and their speeds (per grid axis) are the pipeline's pace.</p>\n";
    const double resolution = number(*iw, {"timer_resolution_s"}).value_or(analysis::kTimeResolution);

    const Json* waves = at(*iw, {"waves"});
    if (waves != nullptr && waves->is_array() && !waves->empty()) {
      // Waves numbered from 0, as in idlewave_fronts.csv and on the terminal; each at the start
      // of its delayed computation (onset_s) when summary.json has it, where the wave starts.
      const bool onsets = std::all_of(waves->begin(), waves->end(), [](const Json& w) { return number(w, {"onset_s"}).has_value(); });
      h += fmt::format(
          "<h3>Waves</h3>\n<div class=\"scroll\"><table class=\"data wide\" id=\"idlewave-waves\"><thead><tr>"
          "<th class=\"num\">wave</th><th class=\"num\">source rank</th><th class=\"num\">{2}</th>"
          "<th class=\"num\">iteration</th><th class=\"num\">delay</th><th>front</th><th class=\"num\">reach "
          "(ranks)</th><th class=\"num\">speed ({1}/s)</th><th class=\"num\">{1} per iteration</th><th class=\"num\">"
          "fit R²</th><th class=\"num\">model ({1}/s)</th><th class=\"num\">measured / model</th>"
          "<th class=\"num\">decay per {0}</th><th>stops</th></tr></thead><tbody>\n",
          unit, units, onsets ? "starts at" : "delay ends at");
      std::size_t n = 0;
      for (const auto& w : *waves) {
        ++n;
        const Json* fronts = at(w, {"fronts"});
        const std::size_t count = fronts != nullptr && fronts->is_array() ? fronts->size() : 0;
        const Json* injected = at(w, {"injected"});
        std::string delay = time_of(at(w, {"delay_s"}));
        if (injected != nullptr && injected->is_boolean()) delay += injected->get<bool>() ? " injected" : " idle";
        const std::string span = count > 1 ? fmt::format(" rowspan=\"{}\"", count) : "";
        const std::string wave_cells =
            fmt::format("<td class=\"num\"{0}>{1}</td><td class=\"num\"{0}>{2}</td><td class=\"num\"{0}>{3}</td>"
                        "<td class=\"num\"{0}>{4}</td><td class=\"num\"{0}>{5}</td>",
                        span, n - 1, esc(plain(at(w, {"source_rank"}))), esc(time_of(at(w, {onsets ? "onset_s" : "source_time_s"}))),
                        esc(plain(at(w, {"source_iteration"}))), esc(delay));
        if (count == 0) {
          h += "<tr>" + wave_cells + "<td colspan=\"9\">no front measured</td></tr>\n";
          continue;
        }
        for (std::size_t i = 0; i < count; ++i) {
          const Json& f = (*fronts)[i];
          // Rounded to the time resolution: a wave that does not decay shows 0, not rounding noise.
          // The exact value on hover.
          // A front over fewer than two ranks has no speed, fit or decay (dashes, not zeros).
          // In a pipeline a side in rank order (down, up) mixes quadrants that different sweeps
          // carry: no one speed (the axes have theirs).
          const Json* side_name = at(f, {"direction"});
          const bool side = side_name != nullptr && side_name->is_string() && (*side_name == "down" || *side_name == "up");
          const bool measured = number(f, {"reach_ranks"}).value_or(2) >= 2 && !(pipeline && side);
          const auto measure = [&](const char* key, const char* spec) {
            return num_cell(measured ? fixed(at(f, {key}), spec) : kDash);
          };
          const auto decay = measured ? number(f, {"decay_s_per_rank"}) : std::nullopt;
          const std::string decay_cell =
              decay ? fmt::format("<td class=\"num\" title=\"{} s\">{}</td>", exact(*decay),
                                  esc(secs(round_to(*decay, resolution))))
                    : num_cell(kDash);
          h += fmt::format("<tr>{}<td>{}</td>{}{}{}{}{}{}{}<td>{}</td></tr>\n", i == 0 ? wave_cells : "",
                           esc(plain(at(f, {"direction"}))), num_cell(plain(at(f, {"reach_ranks"}))),
                           measure("speed_ranks_per_s", "{:.5g}"), measure("speed_ranks_per_iteration", "{:.4g}"),
                           measure("fit_r2", "{:.4f}"),
                           pipeline ? num_cell(kDash) : num_cell(fixed(at(f, {"predicted_ranks_per_s"}), "{:.5g}")),
                           pipeline ? num_cell(kDash) : measure("measured_over_predicted", "{:.3f}"),
                           decay_cell, esc(stop_text(f)));
        }
      }
      h += "</tbody></table></div>\n";
    } else {
      h += "<p>No idle wave was found.</p>\n";
    }

    if (const Json* ss = at(*iw, {"self_sync"}); ss != nullptr && ss->is_object()) {
      h += "<h3>Self-synchronisation</h3>\n";
      const Json* group = at(*ss, {"slow_group"});
      if (group != nullptr && group->is_boolean() && !group->get<bool>()) {
        h += "<p class=\"note\">No slow group of ranks was found: nothing to self-synchronise to.</p>\n";
      } else {
        h += "<table class=\"kv\">\n";
        if (const Json* d = at(*ss, {"detected"})) h += kv_row("Detected", esc(plain(*d)));
        if (at(*ss, {"slow_ranks"}) != nullptr) h += kv_row("Slow ranks", esc(slow_ranks_text(*ss)));
        if (at(*ss, {"t_slow_s"}) != nullptr || at(*ss, {"t_fast_s"}) != nullptr)
          h += kv_row("Compute per iteration", esc(fmt::format("{} slow, {} fast", time_of(at(*ss, {"t_slow_s"})),
                                                               time_of(at(*ss, {"t_fast_s"})))));
        if (at(*ss, {"fast_idle_per_iteration_s"}) != nullptr || at(*ss, {"expected_idle_s"}) != nullptr)
          h += kv_row("Fast ranks idle per iteration",
                      esc(fmt::format("{} (expected {})", time_of(at(*ss, {"fast_idle_per_iteration_s"})),
                                      time_of(at(*ss, {"expected_idle_s"})))));
        if (const Json* ps = at(*ss, {"phase_spread_s"})) h += kv_row("Phase spread", esc(time_of(ps)));
        if (const Json* fr = at(*ss, {"front_ranks_per_iteration"}))
          h += kv_row("Front", esc(fixed(fr, "{:.4g}") + " ranks per iteration"));
        h += "</table>\n";
      }
    }
  } else {
    h += "<p class=\"note\">summary.json has no idle-wave analysis; these pictures may be left from an earlier "
         "run.</p>\n";
  }
  for (const auto& p : pics)
    if (p.idlewave) h += figure_html(dir, p);
  return h;
}

constexpr const char* kTimeresolvedPng = "timeresolved.png";

// Time-resolved efficiency: the whole-run POP metrics, the window of lowest parallel
// efficiency, the picture, and the windows of lowest parallel efficiency from timeresolved.csv.
std::string timeresolved_html(const Json* tr, const fs::path& dir, const std::vector<Picture>& pics) {
  std::string h;
  if (tr != nullptr) {
    const auto pc = [&](std::initializer_list<const char*> k) { return percent(number(*tr, k).value_or(NAN)); };
    const std::string src = text(*tr, {"source"});
    const std::string source = src == "ideal_network" ? "re-simulated on an ideal network"
                               : src == "smpi_replay" ? "SMPI replay on an ideal network"
                                                      : "Lamport replay of the trace";
    h += "<div class=\"cards\">\n";
    h += card("Parallel efficiency", pc({"parallel_efficiency"}), "= load balance × communication efficiency");
    h += card("Load balance", pc({"load_balance"}), "mean / max useful time");
    h += card("Communication efficiency", pc({"communication_efficiency"}),
              "serialisation " + pc({"serialisation_efficiency"}) + " × transfer " + pc({"transfer_efficiency"}));
    h += card("Ideal runtime", time_of(at(*tr, {"ideal_s"})), "of " + time_of(at(*tr, {"elapsed_s"})) + "; " + source);
    if (const Json* lw = at(*tr, {"lowest_window"}))
      h += card("Lowest window", percent(number(*lw, {"parallel_efficiency"}).value_or(NAN)),
                fmt::format("parallel efficiency in {} – {}", time_of(at(*lw, {"start_s"})), time_of(at(*lw, {"end_s"}))));
    h += "</div>\n";
    if (const Json* cv = at(*tr, {"convention"}))
      h += fmt::format("<p class=\"note\" id=\"conventions\"><strong>Conventions: {}</strong> — span: {}; useful time: {}; "
                       "{} units averaged (docs/analyses.md, <code>--convention</code>).</p>\n",
                       esc(text(*cv, {"name"})), esc(text(*cv, {"span"})), esc(text(*cv, {"useful"})),
                       esc(plain(at(*cv, {"units"}))));
    if (const Json* est = at(*tr, {"ideal_estimates"}); est != nullptr && est->is_array() && !est->empty()) {
      h += "<table class=\"data\" id=\"ideal-estimates\"><thead><tr><th>ideal-network estimate</th><th class=\"num\">"
           "T_ideal</th><th class=\"num\">SerE</th><th class=\"num\">TrfE</th></tr></thead><tbody>\n";
      for (const auto& e : *est) {
        const std::string esrc = text(e, {"source"});
        const std::string title = esrc == "lamport" ? "Lamport replay of the trace"
                                  : esrc == "smpi_replay" ? "SMPI replay on an ideal network (Dimemas' way)"
                                                         : "re-simulated on an ideal network";
        h += "<tr><td>" + esc(title) + "</td>" + time_cell(number(e, {"ideal_s"})) +
             num_cell(percent(number(e, {"serialisation_efficiency"}).value_or(NAN))) +
             num_cell(percent(number(e, {"transfer_efficiency"}).value_or(NAN))) + "</tr>\n";
      }
      h += "</tbody></table>\n";
    }
    if (const Json* c = at(*tr, {"counters"}); c != nullptr && !c->is_null())
      h += fmt::format("<p class=\"note\">Hardware counters over useful time: IPC {}, {} instructions, {} GHz.</p>\n",
                       esc(plain(at(*c, {"ipc"}))), esc(plain(at(*c, {"useful_instructions"}))),
                       number(*c, {"frequency_hz"}) ? fmt::format("{:.3f}", *number(*c, {"frequency_hz"}) / 1e9) : "—");
    if (const Json* ws = at(*tr, {"warnings"}); ws != nullptr && ws->is_array())
      for (const auto& w : *ws) h += "<p class=\"note\"><strong>Warning:</strong> " + esc(w.get<std::string>()) + "</p>\n";
    h += fmt::format("<p class=\"note\">{} windows ({}); per window the same metrics as for the whole run (docs/analyses.md). "
                     "A dip the whole-run numbers hide shows here.</p>\n",
                     plain(at(*tr, {"windows", "count"})), esc(text(*tr, {"windows", "spec"})));
    if (const std::string note = text(*tr, {"note"}); !note.empty()) h += "<p class=\"note\">" + esc(note) + "</p>\n";
  }
  for (const auto& p : pics)
    if (p.file == kTimeresolvedPng) h += figure_html(dir, p);
  if (const auto csv = read_csv(dir / "timeresolved.csv")) {
    const std::vector<const char*> cols = {"window", "start_s", "end_s", "pe", "lb", "comm_e", "ser_e", "trf_e", "cum_pe"};
    std::vector<std::size_t> idx;
    for (const char* c : cols) idx.push_back(csv->column(c));
    if (std::all_of(idx.begin(), idx.end(), [&](std::size_t i) { return i < csv->header.size(); })) {
      std::vector<const std::vector<std::string>*> rows;
      for (const auto& r : csv->rows) rows.push_back(&r);
      std::stable_sort(rows.begin(), rows.end(), [&](const auto* a, const auto* b) {
        return parse_double((*a)[idx[3]]).value_or(0) < parse_double((*b)[idx[3]]).value_or(0);
      });
      const std::size_t shown = std::min(rows.size(), kTableRows);
      h += "<h3 id=\"table-timeresolved\">Windows of lowest parallel efficiency <code class=\"file\">timeresolved.csv"
           "</code></h3>\n";
      h += fmt::format("<p class=\"note\">{} of {} windows, lowest parallel efficiency first.</p>\n", shown, rows.size());
      h += "<div class=\"scroll\"><table class=\"data\" id=\"timeresolved-windows\"><thead><tr><th class=\"num\">window"
           "</th><th class=\"num\">start</th><th class=\"num\">end</th><th class=\"num\">PE</th><th class=\"num\">LB</th>"
           "<th class=\"num\">CommE</th><th class=\"num\">SerE</th><th class=\"num\">TrfE</th><th class=\"num\">"
           "cumulative PE</th></tr></thead>\n<tbody>\n";
      for (std::size_t i = 0; i < shown; ++i) {
        const auto& r = *rows[i];
        h += "<tr>" + num_cell(r[idx[0]]) + time_cell(parse_double(r[idx[1]])) + time_cell(parse_double(r[idx[2]]));
        for (std::size_t c = 3; c < idx.size(); ++c) h += num_cell(percent(parse_double(r[idx[c]]).value_or(NAN)));
        h += "</tr>\n";
      }
      h += "</tbody></table></div>\n";
    }
  }
  return h;
}

// POP's traffic-light colour of an efficiency or scalability (a fraction): red at 50 % and below,
// yellow at 75 %, green at 100 % and above, linear in between ("#rrggbb"; grey if not finite).
std::string pop_colour(double v) {
  // POP's traffic-light scale: red at 50 % and below, yellow at 75 %, green from 100 % (a
  // super-linear factor stays green).
  if (!std::isfinite(v)) return "#eeeeee";
  const double x = std::clamp((v - 0.5) / 0.5, 0.0, 1.0);
  double r, g, b;
  if (x < 0.5) {  // red (230,124,115) -> yellow (255,214,102)
    const double k = x / 0.5;
    r = 230 + k * (255 - 230), g = 124 + k * (214 - 124), b = 115 + k * (102 - 115);
  } else {  // yellow -> green (87,187,138)
    const double k = (x - 0.5) / 0.5;
    r = 255 + k * (87 - 255), g = 214 + k * (187 - 214), b = 102 + k * (138 - 102);
  }
  return fmt::format("#{:02x}{:02x}{:02x}", static_cast<int>(std::lround(r)), static_cast<int>(std::lround(g)),
                     static_cast<int>(std::lround(b)));
}

// `waitlab pop`: the model factors (rows) of every run (columns), each cell coloured by POP's
// traffic-light scale, and the picture.
std::string pop_html(const Json& pop, const fs::path& dir, const std::vector<Picture>& pics) {
  static const std::pair<const char*, const char*> kRows[] = {
      {"global_efficiency", "Global efficiency"},
      {"parallel_efficiency", "&nbsp;&nbsp;Parallel efficiency"},
      {"load_balance", "&nbsp;&nbsp;&nbsp;&nbsp;Load balance"},
      {"communication_efficiency", "&nbsp;&nbsp;&nbsp;&nbsp;Communication efficiency"},
      {"serialisation_efficiency", "&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;Serialisation efficiency"},
      {"transfer_efficiency", "&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;Transfer efficiency"},
      {"computation_scalability", "&nbsp;&nbsp;Computation scalability"},
      {"ipc_scalability", "&nbsp;&nbsp;&nbsp;&nbsp;IPC scalability"},
      {"instruction_scalability", "&nbsp;&nbsp;&nbsp;&nbsp;Instruction scalability"},
      {"frequency_scalability", "&nbsp;&nbsp;&nbsp;&nbsp;Frequency scalability"},
  };
  static const std::pair<const char*, const char*> kPlain[] = {
      {"speedup", "Speed-up"}, {"ipc", "Average IPC"}, {"frequency_ghz", "Average frequency (GHz)"},
      {"elapsed_s", "Runtime (s)"}};
  const Json* runs = at(pop, {"runs"});
  if (runs == nullptr || !runs->is_array()) return "<p>pop.json holds no runs.</p>\n";
  std::string h = fmt::format("<p class=\"note\">{} scaling; reference run <strong>{}</strong> (the fewest units). "
                              "Efficiencies multiply down the tree: global = parallel × computation scalability, "
                              "parallel = load balance × communication, communication = serialisation × transfer. "
                              "Colours: POP's scale, red at 50 % and below, yellow at 75 %, green at 100 %.</p>\n",
                              esc(text(pop, {"scaling"})), esc(text(pop, {"reference"})));
  h += "<div class=\"scroll\"><table class=\"data\" id=\"pop-table\"><thead><tr><th>factor</th>";
  for (const auto& r : *runs)
    h += fmt::format("<th class=\"num\">{}<br><span class=\"note\">{} ranks, {} units</span></th>", esc(text(r, {"run"})),
                     esc(plain(at(r, {"ranks"}))), esc(plain(at(r, {"units"}))));
  h += "</tr></thead><tbody>\n";
  for (const auto& [key, title] : kRows) {
    h += std::string("<tr><th>") + title + "</th>";
    for (const auto& r : *runs) {
      const auto v = number(r, {key});
      h += fmt::format("<td class=\"num\" style=\"background:{}\">{}</td>", pop_colour(v.value_or(NAN)),
                       v ? percent(*v) : std::string(kDash));
    }
    h += "</tr>\n";
  }
  for (const auto& [key, title] : kPlain) {
    h += std::string("<tr><th>") + title + "</th>";
    for (const auto& r : *runs) {
      const auto v = number(r, {key});
      h += "<td class=\"num\">" + (v ? fmt::format("{:.4g}", *v) : std::string(kDash)) + "</td>";
    }
    h += "</tr>\n";
  }
  h += "</tbody></table></div>\n";
  for (const auto& r : *runs) {
    h += fmt::format("<p class=\"note\"><strong>{}</strong>: {} conventions — span: {}; useful: {}; ideal: {}.</p>\n",
                     esc(text(r, {"run"})), esc(text(r, {"convention", "name"})), esc(text(r, {"convention", "span"})),
                     esc(text(r, {"convention", "useful"})), esc(text(r, {"ideal"})));
    if (const Json* ws = at(r, {"warnings"}); ws != nullptr && ws->is_array())
      for (const auto& w : *ws) h += "<p class=\"note\"><strong>Warning:</strong> " + esc(w.get<std::string>()) + "</p>\n";
  }
  for (const auto& p : pics)
    if (p.file == "pop.png") h += figure_html(dir, p);
  return h;
}

}  // namespace

std::string write_report(const std::string& run_dir) {
  const fs::path dir(run_dir);
  const fs::path summary_path = dir / "summary.json";
  if (!fs::exists(summary_path))
    throw InputError(summary_path.string() + ": not found (a report needs the outputs of waitlab run or analyze)");
  Inputs().add(summary_path.string(), "the input");  // a FIFO is refused before it is opened
  Json s;
  try {
    s = Json::parse(read_file(summary_path));
  } catch (const Json::parse_error& e) {
    throw InputError(summary_path.string() + ": not valid JSON: " + e.what());
  }
  if (!s.is_object()) throw InputError(summary_path.string() + ": not a waitlab summary");
  const bool is_pop = text(s, {"schema"}) == "waitlab.pop";
  const bool is_run = !is_pop && (at(s, {"scenario"}) != nullptr || text(s, {"schema"}) == "waitlab.summary");
  const Json* a = at(s, {"analyses"});
  const auto pics = find_pictures(dir);

  std::string title = is_run ? text(s, {"scenario", "name"}) : text(s, {"trace", "name"});
  if (title.empty()) title = is_run ? dir.filename().string() : text(s, {"trace", "file"});
  if (title.empty()) title = "waitlab";

  std::string sub;
  if (is_run) {
    sub = fmt::format("{}, {} ranks × {} iterations on a {} platform", text(s, {"workload", "type"}),
                      plain(at(s, {"ranks"})), plain(at(s, {"iterations"})), text(s, {"platform", "type"}));
  } else {
    sub = fmt::format("analysis of {}: {} ranks, {} events", text(s, {"trace", "file"}), plain(at(s, {"trace", "ranks"})),
                      plain(at(s, {"trace", "events"})));
  }

  Page page;
  std::string tables;
  if (is_pop) {
    const Json* pop = at(s, {"pop"});
    title = "POP model factors";
    sub = fmt::format("{} scaling study of {} runs", pop ? text(*pop, {"scaling"}) : std::string(),
                      pop && at(*pop, {"runs"}) ? at(*pop, {"runs"})->size() : 0);
    page.section("sec-pop", "POP model factors", pop ? pop_html(*pop, dir, pics) : "<p>No pop object.</p>\n");
  } else {
  page.section("sec-scenario", is_run ? "Scenario" : "Trace", is_run ? scenario_html(s) : trace_html(s));
  page.section("sec-figures", "Key figures", figures_html(s, is_run));
  if (a == nullptr) {
    page.section("sec-analyses", "Analyses",
                 "<p>No analyses ran: name them in <code>outputs.analyses</code> (docs/scenarios.md), or run "
                 "<code>waitlab analyze DIR/trace.wlt</code>.</p>\n");
  } else {
    if (const Json* w = at(*a, {"waitstate"})) page.section("sec-waitstates", "Wait states", waitstate_html(*w));
    if (const Json* d = at(*a, {"delay"})) page.section("sec-delay", "Delay costs", delay_html(*d));
    if (const Json* c = at(*a, {"critpath"}))
      page.section("sec-critpath", "Critical path",
                   critpath_html(*c, number(is_run ? at(s, {"ranks"}) : at(s, {"trace", "ranks"}))));
  }
  const Json* iw = a != nullptr ? at(*a, {"idlewave"}) : nullptr;
  const bool iw_pics = std::any_of(pics.begin(), pics.end(), [](const Picture& p) { return p.idlewave; });
  if (iw != nullptr || iw_pics) page.section("sec-idlewave", "Idle waves", idlewave_html(iw, dir, pics));
  const Json* tr = a != nullptr ? at(*a, {"timeresolved"}) : nullptr;
  if (tr != nullptr || fs::exists(dir / "timeresolved.csv"))
    page.section("sec-timeresolved", "Efficiency over time", timeresolved_html(tr, dir, pics));
  std::string others;
  for (const auto& p : pics)
    if (!p.idlewave && p.file != kTimeresolvedPng) others += figure_html(dir, p);
  if (!others.empty()) page.section("sec-pictures", "Pictures", others);

  static const TableSpec kTables[] = {
      {"waitstates.csv", "Wait states", {"seconds"}, "largest seconds first"},
      {"delay.csv", "Delay costs", {"short_term_s", "long_term_s"}, "largest short- plus long-term cost first"},
      {"critical_path_profile.csv", "Critical-path profile", {"on_path_s"}, "longest on the path first"},
      {"minprofile.csv", "Minimum-duration estimate", {"wait_paper_s"}, "largest estimated waiting (paper variant) first"},
  };
  for (const auto& t : kTables) tables += csv_table_html(dir, t);
  if (!tables.empty())
    page.section("sec-tables", "Tables",
                 "<p class=\"note\">The first rows of each table in this directory; columns as in docs/analyses.md, "
                 "times rounded (hover for the exact value).</p>\n" + tables);
  }

  std::string html;
  html.reserve(page.body.size() + 8192);
  html += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  html += fmt::format("<title>{} — waitlab report</title>\n", esc(title));
  html += fmt::format("<style>{}</style>\n<script>{}</script>\n</head>\n<body>\n", kCss, kScript);
  html += "<header><div class=\"wrap\">\n";
  html += fmt::format("<h1>{}</h1>\n<p class=\"sub\">{}</p>\n", esc(title), esc(sub));
  if (const std::string d = text(s, {"scenario", "description"}); !d.empty())
    html += fmt::format("<p class=\"desc\">{}</p>\n", esc(d));
  html += "<nav>" + page.nav + "</nav>\n</div></header>\n<main class=\"wrap\">\n" + page.body + "</main>\n";
  html += fmt::format("<footer class=\"wrap\">Written by {} from summary.json{} in this directory. Every time is "
                      "simulated time unless the trace was measured.</footer>\n</body>\n</html>\n",
                      esc(text(s, {"generator"}).empty() ? "waitlab" : text(s, {"generator"})),
                      tables.empty() && pics.empty() ? "" : ", the tables and pictures");

  const std::string out = (dir / "report.html").string();
  trace::write_file_atomic(out, html);
  return out;
}

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string base64(std::string_view in) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  const auto byte = [&](std::size_t i) { return static_cast<std::uint32_t>(static_cast<unsigned char>(in[i])); };
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const std::uint32_t n = (byte(i) << 16) | (byte(i + 1) << 8) | byte(i + 2);
    for (int shift = 18; shift >= 0; shift -= 6) out += kAlphabet[(n >> shift) & 63u];
  }
  if (const std::size_t rest = in.size() - i; rest > 0) {
    const std::uint32_t n = (byte(i) << 16) | (rest == 2 ? byte(i + 1) << 8 : 0u);
    out += kAlphabet[(n >> 18) & 63u];
    out += kAlphabet[(n >> 12) & 63u];
    out += rest == 2 ? kAlphabet[(n >> 6) & 63u] : '=';
    out += '=';
  }
  return out;
}

// A time as people read it: "150.16 ms", "3.4 s", "812.5 ns".
std::string readable_seconds(double v) {
  if (!std::isfinite(v)) return kDash;
  // The unit of the value as shown (5 digits): 0.99999999 ms is "1 ms", not "1000 µs".
  const double a = std::fabs(std::stod(fmt::format("{:.5g}", v)));
  if (a == 0) return "0 s";
  if (a >= 1) return fmt::format("{:.5g} s", v);
  if (a >= 1e-3) return fmt::format("{:.5g} ms", v * 1e3);
  if (a >= 1e-6) return fmt::format("{:.5g} µs", v * 1e6);
  return fmt::format("{:.5g} ns", v * 1e9);
}

// Writes DIR/report.html (app/report.hpp) and returns its path, or "" after saying on standard
// error why it could not: the report is a view of the results, never a reason to fail a command.
// With `staged`, DIR is its staging directory, and the message names the output directory.
std::string try_write_report(const std::string& dir, const OutputDir* staged) {
  try {
    return write_report(dir);
  } catch (const WriteError&) {
    throw;  // a full disk or a file size limit: the command fails, changing nothing
  } catch (const std::exception& e) {
    std::cerr << "waitlab: report.html was not written: " << (staged ? staged->final_text(e.what()) : e.what())
              << "\n";
    std::error_code ec;
    fs::remove(fs::path(dir) / "report.html", ec);  // an old one would describe another run
    return "";
  }
}

}  // namespace waitlab::app
