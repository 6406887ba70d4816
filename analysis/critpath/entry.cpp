// The critical-path analysis as waitlab presents it: its registry entry
// (analysis/output/entry.hpp) — summary.json's analyses.critpath, critical_path.csv and
// critical_path_profile.csv, the terminal's lines, the report's section and card.
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "analysis/critpath/critpath.hpp"
#include "analysis/output/entry.hpp"
#include "analysis/trace/csv.hpp"

namespace waitlab::analysis {

namespace {

using output::Json;
using namespace output;  // the report's pieces

const char* const kPathCsv = "critical_path.csv";
const char* const kProfileCsv = "critical_path_profile.csv";

// Call paths by critical-path imbalance, largest first, at most `n` (only those with some).
std::vector<const CallPathImpact*> top_imbalance(const CriticalPathResult& c, std::size_t n) {
  std::vector<const CallPathImpact*> rows;
  for (const auto& p : c.profile)
    if (p.imbalance > 0) rows.push_back(&p);
  std::stable_sort(rows.begin(), rows.end(), [](const auto* a, const auto* b) { return a->imbalance > b->imbalance; });
  if (rows.size() > n) rows.resize(n);
  return rows;
}

Json summary(const output::Context& ctx, const std::any& result) {
  const auto& c = std::any_cast<const CriticalPathResult&>(result);
  Json top = Json::array();
  for (const auto* p : top_imbalance(c, kTopRows))
    top.push_back({{"call_path", ctx.path_names[p->path]},
                   {"on_path_s", p->on_path},
                   {"average_s", p->average},
                   {"imbalance_s", p->imbalance}});
  return {{"bounds", {{"name", path_bounds_name(c.bounds)}, {"text", path_bounds_text(c.bounds)}}},
          {"start_s", c.start},
          {"end_s", c.end},
          {"length_s", c.length},
          {"segments", c.segments.size()},
          {"rank_changes", c.jumps},
          {"complete", c.complete},
          {"impact",
           {{"critical_path_activities_s", c.critical_activities},
            {"critical_imbalance_s", c.critical_imbalance},
            {"non_critical_path_activities_s", c.noncritical_activities}}},
          {"top_imbalance", top}};
}

std::vector<std::string> write(const std::string& dir, const output::Context& ctx, const std::any* result) {
  const auto* c = result ? &std::any_cast<const CriticalPathResult&>(*result) : nullptr;
  const auto& names = ctx.path_names;
  std::vector<std::string> written;
  write_table(dir, kPathCsv, c != nullptr, [&](std::ostream& os) {
    os << "rank,call_path,start_s,end_s\n";
    for (const auto& s : c->segments)
      os << s.rank << ',' << trace::csv_field(names[s.path]) << ',' << exact(s.start) << ',' << exact(s.end) << '\n';
  }, written);
  write_table(dir, kProfileCsv, c != nullptr, [&](std::ostream& os) {
    os << "call_path,on_path_s,time_s,waiting_s,average_s,imbalance_s\n";
    for (const auto& p : c->profile)
      if (p.time > 0 || p.on_path > 0)
        os << trace::csv_field(names[p.path]) << ',' << exact(p.on_path) << ',' << exact(p.time) << ','
           << exact(p.waiting) << ',' << exact(p.average) << ',' << exact(p.imbalance) << '\n';
  }, written);
  return written;
}

void print(const output::Context& ctx, const std::any& result, std::ostream& out) {
  const auto& c = std::any_cast<const CriticalPathResult&>(result);
  out << fmt::format("critical path   {:.6g} s, {} segments, {} rank changes; imbalance impact {:.6g} rank-s\n",
                     c.length, c.segments.size(), c.jumps, c.critical_imbalance);
  out << fmt::format("  {}\n", path_bounds_text(c.bounds));
  for (const auto* p : top_imbalance(c, 5))
    out << fmt::format("  {:<44} imbalance {:>10.6g} s (on path {:.6g} s, average {:.6g} s)\n", ctx.path_names[p->path],
                       p->imbalance, p->on_path, p->average);
}

std::string section_html(const Json& c, std::optional<double> ranks) {
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
  if (const Json* bounds = at(c, {"bounds", "text"}); bounds != nullptr && bounds->is_string())
    h += "<p class=\"note\">" + esc(bounds->get<std::string>()) + ".</p>\n";
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


std::string cards(const Json& c, const output::ReportContext& rc) {
  const auto len = number(c, {"length_s"});
  if (!len) return "";
  const auto imb = number(c, {"impact", "critical_imbalance_s"});
  const auto p = rc.ranks();
  return card("Critical path", secs(*len),
              imb && p && *p > 0 && *len > 0 ? "imbalance " + percent(*imb / (*p * *len)) + " of ranks × length" : "");
}

}  // namespace

const output::Entry& critpath_entry() {
  static const output::Entry entry = [] {
    output::Entry e;
    e.name = "critpath";
    e.description =
        "The critical path (critical_path.csv), its profile and imbalance per call path "
        "(critical_path_profile.csv), and the performance-impact split. Implies waitstate.";
    e.needs = {"waitstate"};
    e.run = [](const output::Context& c) -> std::any {
      return critical_path(c.trace, c.matching, c.result<WaitStateResult>("waitstate"),
                           c.option<CriticalPathOptions>("critpath", {}));
    };
    e.run_sharded = [](const output::ShardContext& c) -> std::any {
      return critical_path(c.shard, c.matching, c.result<WaitStateResult>("waitstate"), c.transport,
                           c.option<CriticalPathOptions>("critpath", {}));
    };
    e.summary = summary;
    e.write = write;
    e.print = print;
    e.section_id = "sec-critpath";
    e.section_title = "Critical path";
    e.section_html = [](const Json* c, const output::ReportContext& rc) { return section_html(*c, rc.ranks()); };
    e.cards = cards;
    e.tables = {{kProfileCsv, "Critical-path profile", {"on_path_s"}, "longest on the path first"}};
    return e;
  }();
  return entry;
}

}  // namespace waitlab::analysis
