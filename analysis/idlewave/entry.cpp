// The idle-wave analysis as waitlab presents it: its registry entry (analysis/output/entry.hpp)
// — summary.json's analyses.idlewave, idlewave.json, idlewave_fronts.csv, idle_matrix.npy and
// idlewave_selfsync.csv (output.cpp), the terminal's lines, the report's section
// (report.cpp) and its three pictures.
#include "analysis/idlewave/idlewave.hpp"
#include "analysis/idlewave/output.hpp"
#include "analysis/output/entry.hpp"

namespace waitlab::analysis {

const output::Entry& idlewave_entry() {
  static const output::Entry entry = [] {
    output::Entry e;
    e.name = "idlewave";
    e.description =
        "Idle waves (paper 003, ALGORITHMS.md §7): idle periods per rank, the idle-period matrix (rank × time), one "
        "wave per injected delay (or per largest idle period) with its fronts in both directions — speed in ranks/s "
        "and ranks/iteration, amplitude decay, where they stop — against the model σ·d/(T_exec + T_comm), and "
        "self-synchronisation behind a slow group (idlewave.json, idlewave_fronts.csv, idle_matrix.npy; pictures "
        "idlewave_*.png/.svg). Implies waitstate.";
    e.needs = {"waitstate"};
    e.run = [](const output::Context& c) -> std::any {
      return idle_waves(c.trace, c.matching, c.result<WaitStateResult>("waitstate"));
    };
    e.run_sharded = [](const output::ShardContext& c) -> std::any {
      return idle_waves(c.shard, c.matching, c.result<WaitStateResult>("waitstate"), c.transport);
    };  // process 0's result is the whole one: no gather
    e.summary = [](const output::Context&, const std::any& result) {
      return idlewave_json(std::any_cast<const IdleWaveResult&>(result));
    };
    e.write = [](const std::string& dir, const output::Context&, const std::any* result) {
      return write_idlewave_files(dir, result ? &std::any_cast<const IdleWaveResult&>(*result) : nullptr);
    };
    e.print = [](const output::Context&, const std::any& result, std::ostream& out) {
      print_idlewave_summary(std::any_cast<const IdleWaveResult&>(result), out);
    };
    e.section_id = "sec-idlewave";
    e.section_title = "Idle waves";
    e.section_html = idlewave_report_html;
    e.shown_without_summary = [](const output::ReportContext& rc) {
      for (const auto& p : rc.pictures)
        if (p.owner == "idlewave") return true;
      return false;
    };
    e.plot_script = "idlewave";
    e.plot_input = "idlewave.json";
    e.not_drawn = "the idle-wave pictures were not drawn";
    e.pictures = {
        {"idlewave_heatmap", "heatmap", "Idle-period heat map",
         "The fraction of each time bin (one iteration long) that every rank spent idle, with the fitted wave fronts "
         "dashed and each delayed computation as a bar starred at its start, where its wave starts: an idle wave is "
         "a diagonal band leaving its source, its slope the wave's speed. Ranks and bins that share a pixel show the "
         "largest of their idle fractions, so that a narrow wave stays visible."},
        {"idlewave_amplitude", "amplitude", "Amplitude of the idle waves",
         "The idle period at the front of every wave against the distance from its source: a flat line is a wave "
         "that travels without decaying; its slope is the decay per rank."},
        {"idlewave_selfsync", "selfsync", "Self-synchronisation",
         "The idle periods of the ranks next to the slow group over six iterations of the second half of the run: "
         "the fast ranks wait by the same amount, at a phase that shifts from rank to rank."},
    };
    return e;
  }();
  return entry;
}

}  // namespace waitlab::analysis
