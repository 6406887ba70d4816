#include "app/report.hpp"

#include "app/output_dir.hpp"
#include "analysis/output/json_text.hpp"
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

#include "analysis/registry/registry.hpp"
#include "analysis/trace/atomic_file.hpp"
#include "analysis/trace/csv.hpp"
#include "util/error.hpp"
#include "models/spec.hpp"
#include "util/units.hpp"

namespace waitlab::app {

namespace fs = std::filesystem;
using output::Json;
using output::Picture;
using namespace output;  // the report's pieces (analysis/output/html.hpp)

namespace {

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

// ---- pictures ----

std::string id_from_name(const std::string& stem) {
  std::string id;
  for (const char c : stem)
    id += (std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_') ? c : '-';
  if (id.empty() || std::isalpha(static_cast<unsigned char>(id[0])) == 0) id = "img-" + id;
  return id;
}

// The pictures of DIR: those an analysis draws (its entry's ids, titles and captions; shown in
// its section, a fixed id in the entry's order first) and any other PNG (the Pictures section,
// e.g. `waitlab validate`'s).
std::vector<Picture> find_pictures(const fs::path& dir) {
  struct Known {
    output::PictureSpec spec;
    std::string owner;  // "" for a picture no analysis draws
    int order;          // in its analysis's list
  };
  std::vector<Known> known;
  for (const auto* a : analysis::analyses())
    for (std::size_t i = 0; i < a->pictures.size(); ++i) known.push_back({a->pictures[i], a->name, static_cast<int>(i)});
  known.push_back({{"validation", "", "The estimator against the truth",
                    "The minimum-duration estimator's wait ratio per call path against the trace-based truth "
                    "(waitlab validate)."},
                   "",
                   0});
  std::vector<fs::path> files;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".png" && it->is_regular_file(ec)) files.push_back(it->path());
  std::sort(files.begin(), files.end());

  std::vector<std::pair<int, Picture>> pics;  // (rank, picture)
  std::set<std::string> used;
  for (const auto& k : known)
    if (*k.spec.id != '\0') used.insert(k.spec.id);
  constexpr int kUnordered = 1 << 20;
  for (const auto& f : files) {
    Picture p;
    int rank = kUnordered;
    p.file = f.filename().string();
    const std::string stem = f.stem().string();
    for (const auto& k : known)
      if (stem == k.spec.stem) {
        p.id = k.spec.id;
        p.title = k.spec.title;
        p.caption = k.spec.caption;
        p.owner = k.owner;
        if (!p.id.empty()) rank = k.order;
      }
    if (p.id.empty()) {
      std::string id = id_from_name(stem);
      for (int n = 2; used.count(id) > 0; ++n) id = id_from_name(stem) + "-" + std::to_string(n);
      p.id = id;
      used.insert(id);
    }
    if (p.title.empty()) p.title = stem;
    pics.emplace_back(rank, std::move(p));
  }
  std::stable_sort(pics.begin(), pics.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Picture> out;
  for (auto& [rank, p] : pics) out.push_back(std::move(p));
  return out;
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

std::string figures_html(const Json& s, bool is_run, const fs::path& dir, const std::vector<Picture>& pics) {
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
    const ReportContext rc{s, is_run, dir, pics};
    for (const auto* e : analysis::analyses())
      if (const Json* section = at(*a, {e->name.c_str()}); section != nullptr && e->cards) h += e->cards(*section, rc);
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
  // pop.json's rows, in its order, under modelfactors' names: efficiencies coloured (indented as
  // their tree), the others in modelfactors' units; the hybrid rows only when a run has them.
  if (const Json* rows = at(pop, {"rows"}); rows != nullptr && rows->is_array())
    for (const auto& row : *rows) {
      const std::string key = text(row, {"key"}), unit = text(row, {"unit"});
      const bool any = std::any_of(runs->begin(), runs->end(), [&](const Json& r) { return number(r, {key.c_str()}).has_value(); });
      if (row.value("hybrid", false) && !any) continue;
      std::string indent;
      for (int i = 0; i < row.value("indent", 0); ++i) indent += "&nbsp;&nbsp;";
      h += "<tr><th>" + indent + esc(text(row, {"modelfactors"})) + "</th>";
      for (const auto& r : *runs) {
        const auto v = number(r, {key.c_str()});
        if (unit == "fraction")
          h += fmt::format("<td class=\"num\" style=\"background:{}\">{}</td>", pop_colour(v.value_or(NAN)),
                           v ? percent(*v) : std::string(kDash));
        else
          h += "<td class=\"num\">" +
               (!v ? std::string(kDash) : unit == "us" || unit == "count" ? fmt::format("{:.2f}", *v) : fmt::format("{:.4g}", *v)) +
               "</td>";
      }
      h += "</tr>\n";
    }
  h += "</tbody></table></div>\n";
  for (const auto& r : *runs) {
    h += fmt::format("<p class=\"note\"><strong>{}</strong>: {} conventions — span: {}; useful: {}; ideal: {}.</p>\n",
                     esc(text(r, {"run"})), esc(text(r, {"convention", "name"})), esc(text(r, {"convention", "span"})),
                     esc(text(r, {"convention", "useful"})), esc(text(r, {"ideal"})));
    if (const Json* cut = at(r, {"cut"}))
      h += "<p class=\"note\"><strong>Cut:</strong> " + esc(text(*cut, {"text"})) + " — the run's factors are of it.</p>\n";
    if (const Json* ws = at(r, {"warnings"}); ws != nullptr && ws->is_array())
      for (const auto& w : *ws) h += "<p class=\"note\"><strong>Warning:</strong> " + esc(w.get<std::string>()) + "</p>\n";
  }
  for (const auto& p : pics)
    if (p.file == "pop.png" || p.file == "pop_speedup.png") h += figure_html(dir, p);
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
  page.section("sec-figures", "Key figures", figures_html(s, is_run, dir, pics));
  if (a == nullptr)
    page.section("sec-analyses", "Analyses",
                 "<p>No analyses ran: name them in <code>outputs.analyses</code> (docs/scenarios.md), or run "
                 "<code>waitlab analyze DIR/trace.wlt</code>.</p>\n");
  // Each analysis's section, from its analyses.<name> (or, for some, from what it left in DIR),
  // then the pictures no analysis shows, then every analysis's tables.
  const ReportContext rc{s, is_run, dir, pics};
  std::vector<ColumnLabel> labels;
  for (const auto* e : analysis::analyses()) {
    for (const auto& l : e->column_labels) labels.push_back(l);
    if (!e->section_html) continue;
    const Json* section = a != nullptr ? at(*a, {e->name.c_str()}) : nullptr;
    if (section != nullptr || (e->shown_without_summary && e->shown_without_summary(rc)))
      page.section(e->section_id, e->section_title, e->section_html(section, rc));
  }
  std::string others;
  for (const auto& p : pics)
    if (p.owner.empty()) others += figure_html(dir, p);
  if (!others.empty()) page.section("sec-pictures", "Pictures", others);
  for (const auto* e : analysis::analyses())
    for (const auto& t : e->tables) tables += csv_table_html(dir, t, labels);
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
