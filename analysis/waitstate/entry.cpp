// The wait-state analysis as waitlab presents it: its registry entry (analysis/output/entry.hpp)
// — summary.json's analyses.waitstate, waitstates.csv, the terminal's lines, the report's
// section and card.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "analysis/engine/fold.hpp"
#include "analysis/output/entry.hpp"
#include "analysis/trace/csv.hpp"
#include "analysis/waitstate/waitstate.hpp"

namespace waitlab::analysis {

namespace {

using output::Json;
using namespace output;  // the report's pieces

const char* const kCsv = "waitstates.csv";

// "late_sender" -> "Late Sender"; an unknown name as it is.
std::string title_of(const std::string& name) {
  for (std::size_t p = 0; p < kPatternCount; ++p) {
    const auto pat = static_cast<Pattern>(p);
    if (pattern_name(pat) == name) return std::string(pattern_title(pat));
  }
  return name;
}

Json summary(const output::Context& c, const std::any& result) {
  const auto& w = std::any_cast<const WaitStateResult&>(result);
  Json patterns;
  for (std::size_t p = 0; p < kPatternCount; ++p) {
    const auto pat = static_cast<Pattern>(p);
    patterns[std::string(pattern_name(pat))] = {
        {"total_s", w.total[p]}, {"instances", w.count[p]}, {"max_s", w.max[p]}, {"ratio", w.ratio(pat)}};
  }
  return {{"wall_time_s", w.wall_time},
          {"ranks", w.ranks},
          {"total_waiting_s", w.total_waiting},
          {"wait_ratio", w.wait_ratio},
          {"alltoallv_nxn", c.option<WaitStateOptions>("waitstate", {}).alltoallv_nxn},
          {"patterns", patterns}};
}

std::vector<std::string> write(const std::string& dir, const output::Context& c, const std::any* result) {
  const auto* w = result ? &std::any_cast<const WaitStateResult&>(*result) : nullptr;
  std::vector<std::string> written;
  write_table(dir, kCsv, w != nullptr, [&](std::ostream& os) {
    os << "pattern,call_path,rank,seconds,instances\n";
    for (const auto& e : w->table)
      os << pattern_name(e.pattern) << ',' << trace::csv_field(c.path_names[e.path]) << ',' << e.rank << ','
         << exact(e.seconds) << ',' << e.count << '\n';
  }, written);
  return written;
}

void print(const output::Context&, const std::any& result, std::ostream& out) {
  const auto& w = std::any_cast<const WaitStateResult&>(result);
  const auto pct = [](double f) { return fmt::format("{:.2f} %", 100 * f); };
  out << fmt::format("wait states     {} of {} ranks × {:.6g} s waiting ({:.6g} s)\n", pct(w.wait_ratio), w.ranks,
                     w.wall_time, w.total_waiting);
  std::vector<std::size_t> order;
  for (std::size_t p = 0; p < kPatternCount; ++p)
    if (w.total[p] > 0) order.push_back(p);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return w.total[a] > w.total[b]; });
  for (std::size_t i = 0; i < order.size() && i < 5; ++i) {
    const auto p = static_cast<Pattern>(order[i]);
    out << fmt::format("  {:<44} {:>12.6g} s {:>8}  {} instances\n", pattern_title(p), w.total[order[i]],
                       pct(w.ratio(p)), w.count[order[i]]);
  }
}

std::string section_html(const Json& w) {
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
                     total ? exact(*total) : "", esc(title_of(name)), time_cell(total, "num total"),
                     num_cell(percent(number(*v, {"ratio"}).value_or(NAN))), num_cell(plain(at(*v, {"instances"}))),
                     time_cell(number(*v, {"max_s"})));
  }
  h += "</tbody></table>\n";
  h += fmt::format("<p class=\"note\">The wrong-order rows are part of Late Sender (the totals count them once); "
                   "{} other patterns did not occur. Formulas: docs/analyses.md.</p>\n",
                   quiet);
  return h;
}


std::string cards(const Json& w, const output::ReportContext&) {
  const auto total = number(w, {"total_waiting_s"});
  if (!total) return "";
  return card("Waiting", secs(*total), "wait ratio " + percent(number(w, {"wait_ratio"}).value_or(NAN)));
}

}  // namespace

const output::Entry& waitstate_entry() {
  static const output::Entry entry = [] {
    output::Entry e;
    e.name = "waitstate";
    e.description =
        "Wait states with Scalasca 2.6 semantics: Late Sender (and wrong order), Late Receiver, Wait at Barrier, "
        "Barrier Completion, Wait at NxN, NxN Completion, Late Broadcast, Early Reduce, Early Scan, Wait at "
        "Init/Finalize, per pattern × call path × rank (waitstates.csv).";
    e.run = [](const output::Context& c) -> std::any {
      return wait_states(c.trace, c.matching, c.option<WaitStateOptions>("waitstate", {}));
    };
    e.run_sharded = [](const output::ShardContext& c) -> std::any {
      return wait_states(c.shard, c.matching, c.transport, c.option<WaitStateOptions>("waitstate", {}));
    };
    e.gather = [](std::any shard_result, engine::Transport& transport) -> std::any {
      auto r = std::any_cast<WaitStateResult>(std::move(shard_result));
      r.table = engine::gather_rows(transport, r.table, wait_table_order);  // the other totals are global
      return r;
    };
    e.summary = summary;
    e.write = write;
    e.print = print;
    e.section_id = "sec-waitstates";
    e.section_title = "Wait states";
    e.section_html = [](const Json* w, const output::ReportContext&) { return section_html(*w); };
    e.cards = cards;
    e.tables = {{kCsv, "Wait states", {"seconds"}, "largest seconds first"}};
    e.column_labels = {{"pattern", title_of}};
    return e;
  }();
  return entry;
}

}  // namespace waitlab::analysis
