// The delay-cost analysis as waitlab presents it: its registry entry (analysis/output/entry.hpp)
// — summary.json's analyses.delay, delay.csv, the terminal's lines, the report's section and card.
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "analysis/delay/delay.hpp"
#include "analysis/engine/fold.hpp"
#include "analysis/output/entry.hpp"
#include "analysis/trace/csv.hpp"

namespace waitlab::analysis {

namespace {

using output::Json;
using namespace output;  // the report's pieces

const char* const kCsv = "delay.csv";

std::string kind_title(const std::string& name) {
  static const std::pair<const char*, const char*> kTitles[] = {
      {"late_sender", "Late Sender"}, {"late_receiver", "Late Receiver"}, {"barrier", "Barrier"},
      {"n_to_n", "N × N"},            {"1_to_n", "1 × N"},                {"n_to_1", "N × 1"}};
  for (const auto& [n, t] : kTitles)
    if (name == n) return t;
  return name;
}

// Delay-cost rows, largest total first (ties: kind, rank, path), at most `n`.
std::vector<const DelayEntry*> top_delay(const DelayResult& d, std::size_t n) {
  std::vector<const DelayEntry*> rows;
  for (const auto& e : d.table) rows.push_back(&e);
  std::stable_sort(rows.begin(), rows.end(), [](const auto* a, const auto* b) {
    return a->short_term + a->long_term > b->short_term + b->long_term;
  });
  if (rows.size() > n) rows.resize(n);
  return rows;
}

Json summary(const output::Context& c, const std::any& result) {
  const auto& d = std::any_cast<const DelayResult&>(result);
  Json kinds;
  for (std::size_t k = 0; k < kDelayKindCount; ++k)
    kinds[std::string(delay_kind_name(static_cast<DelayKind>(k)))] = {{"short_term_s", d.short_total[k]},
                                                                      {"long_term_s", d.long_total[k]}};
  Json top = Json::array();
  for (const auto* e : top_delay(d, kTopRows))
    top.push_back({{"rank", e->rank},
                   {"call_path", c.path_names[e->path]},
                   {"kind", delay_kind_name(e->kind)},
                   {"short_term_s", e->short_term},
                   {"long_term_s", e->long_term}});
  return {{"synchronisation_points", d.sync_points},
          {"waiting_s", d.sync_waiting},
          {"short_term_s", d.short_term},
          {"long_term_s", d.long_term},
          {"unattributed_s", d.unattributed},
          {"by_kind", kinds},
          {"wait_states",
           {{"direct_s", d.direct}, {"indirect_s", d.indirect}, {"propagating_s", d.propagating},
            {"terminal_s", d.terminal}}},
          {"scalasca_2_6_defects",
           {{"collective_long_term_lost_s", d.scalasca_collective_long_term_lost},
            {"late_receiver_completion_at_stake_s", d.scalasca_late_receiver_at_stake}}},
          {"top", top}};
}

std::vector<std::string> write(const std::string& dir, const output::Context& c, const std::any* result) {
  const auto* d = result ? &std::any_cast<const DelayResult&>(*result) : nullptr;
  std::vector<std::string> written;
  write_table(dir, kCsv, d != nullptr, [&](std::ostream& os) {
    os << "kind,call_path,rank,short_term_s,long_term_s\n";
    for (const auto& e : d->table)
      os << delay_kind_name(e.kind) << ',' << trace::csv_field(c.path_names[e.path]) << ',' << e.rank << ','
         << exact(e.short_term) << ',' << exact(e.long_term) << '\n';
  }, written);
  return written;
}

void print(const output::Context& c, const std::any& result, std::ostream& out) {
  const auto& d = std::any_cast<const DelayResult&>(result);
  out << fmt::format("delay costs     {:.6g} s short-term, {:.6g} s long-term, {:.6g} s without a cause in the trace\n",
                     d.short_term, d.long_term, d.unattributed);
  for (const auto* e : top_delay(d, 5))
    out << fmt::format("  rank {:<6} {:<36} {:>12.6g} s short {:>12.6g} s long  ({})\n", e->rank,
                       c.path_names[e->path], e->short_term, e->long_term, delay_kind_name(e->kind));
}

std::string section_html(const Json& d) {
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
                       esc(text(e, {"call_path"})), esc(kind_title(text(e, {"kind"}))), time_cell(st), time_cell(lt),
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
        rows += fmt::format("<tr><td>{}</td>{}{}</tr>\n", esc(kind_title(kind)), time_cell(st), time_cell(lt));
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


std::string cards(const Json& d, const output::ReportContext&) {
  const auto st = number(d, {"short_term_s"});
  if (!st) return "";
  return card("Delay costs", secs(*st + number(d, {"long_term_s"}).value_or(0)),
              secs(*st) + " short-term + " + time_of(at(d, {"long_term_s"})) + " long-term");
}

}  // namespace

const output::Entry& delay_entry() {
  static const output::Entry entry = [] {
    output::Entry e;
    e.name = "delay";
    e.description =
        "Root-cause delay costs (paper 002, Algorithm 1): short- and long-term costs per kind × call path × rank of "
        "the delays that caused the wait states, and every wait state classified direct or indirect, propagating or "
        "terminal (delay.csv). Implies waitstate.";
    e.needs = {"waitstate"};
    e.run = [](const output::Context& c) -> std::any {
      return delay_costs(c.trace, c.matching, c.result<WaitStateResult>("waitstate"));
    };
    e.run_sharded = [](const output::ShardContext& c) -> std::any {
      return delay_costs(c.shard, c.matching, c.result<WaitStateResult>("waitstate"), c.transport);
    };
    e.gather = [](std::any shard_result, engine::Transport& transport) -> std::any {
      auto r = std::any_cast<DelayResult>(std::move(shard_result));
      r.table = engine::gather_rows(transport, r.table, cost_table_order);  // the other totals are global
      return r;
    };
    e.summary = summary;
    e.write = write;
    e.print = print;
    e.section_id = "sec-delay";
    e.section_title = "Delay costs";
    e.section_html = [](const Json* d, const output::ReportContext&) { return section_html(*d); };
    e.cards = cards;
    e.tables = {{kCsv, "Delay costs", {"short_term_s", "long_term_s"}, "largest short- plus long-term cost first"}};
    e.column_labels = {{"kind", kind_title}};
    return e;
  }();
  return entry;
}

}  // namespace waitlab::analysis
