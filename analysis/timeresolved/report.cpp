// The report's section on the time-resolved efficiency (report.html): the whole-run POP
// metrics, the window of lowest parallel efficiency, the picture, and the windows of lowest
// parallel efficiency from timeresolved.csv.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "analysis/timeresolved/output.hpp"

namespace waitlab::analysis {

using output::Json;
using namespace output;  // the report's pieces

// Time-resolved efficiency: the whole-run POP metrics, the window of lowest parallel
// efficiency, the picture, and the windows of lowest parallel efficiency from timeresolved.csv.
std::string timeresolved_report_html(const output::Json* tr, const output::ReportContext& rc) {
  const auto& dir = rc.dir;
  const auto& pics = rc.pictures;
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
    if (const Json* hy = at(*tr, {"hybrid"}); hy != nullptr && !hy->is_null()) {
      const auto p = [&](std::initializer_list<const char*> k) { return percent(number(*hy, k).value_or(NAN)); };
      h += fmt::format("<p class=\"note\" id=\"hybrid\"><strong>Hybrid MPI+OpenMP:</strong> parallel efficiency {} = MPI "
                       "{} (load balance {} × communication {}) × OpenMP {} (load balance {} × communication {})",
                       p({"parallel_efficiency"}), p({"mpi", "parallel_efficiency"}), p({"mpi", "load_balance"}),
                       p({"mpi", "communication_efficiency"}), p({"openmp", "parallel_efficiency"}),
                       p({"openmp", "load_balance"}), p({"openmp", "communication_efficiency"}));
      if (at(*hy, {"openmp_split"}) != nullptr)
        h += fmt::format("; OpenMP {} = serialisation {} × load balance {} × scheduling {} (DLB TALP's split)",
                         p({"openmp", "parallel_efficiency"}), p({"openmp_split", "serialisation_efficiency"}),
                         p({"openmp_split", "load_balance"}), p({"openmp_split", "scheduling_efficiency"}));
      h += " (docs/analyses.md, \"Hybrid MPI+OpenMP factors\").</p>\n";
    }
    if (const Json* cut = at(*tr, {"cut"}); cut != nullptr && !cut->is_null()) {
      const Json run = number(*cut, {"run_end_s"}).value_or(NAN) - number(*cut, {"run_start_s"}).value_or(NAN);
      h += fmt::format("<p class=\"note\" id=\"cut\"><strong>Cut: {}</strong> — {} of the run's {}; every figure here is of "
                       "the cut (docs/analyses.md, <code>{}</code>).</p>\n",
                       esc(text(*cut, {"text"})), percent(number(*cut, {"fraction_of_run"}).value_or(NAN)),
                       time_of(&run), esc(text(*cut, {"option"})));
    }
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
    if (p.owner == "timeresolved") h += figure_html(dir, p);
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


}  // namespace waitlab::analysis
