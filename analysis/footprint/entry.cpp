// The counterfactual footprint as waitlab presents it: its registry entry (analysis/output/entry.hpp)
// — summary.json's analyses.footprint, footprint.csv and footprint_shift.npy (output.cpp), the
// terminal's lines, the report's section and its two pictures. Its option is the twin's trace
// (FootprintInput): `waitlab run` with run.footprint simulates the twin, `waitlab analyze
// --twin TRACE` reads it. It is not part of `all`: nothing else makes a twin.
#include "analysis/footprint/footprint.hpp"
#include "analysis/footprint/output.hpp"
#include "analysis/idlewave/idlewave.hpp"
#include "analysis/output/entry.hpp"
#include "analysis/waitstate/waitstate.hpp"
#include "util/error.hpp"

namespace waitlab::analysis {

namespace {

const FootprintInput& input_of(const output::Values& options) {
  const FootprintInput* in = options.get<FootprintInput>("footprint");
  if (in == nullptr || in->twin == nullptr)
    throw InputError(
        "footprint: it compares the run with its twin, the same scenario without one perturbation; "
        "give `run.footprint: <perturbation>` to `waitlab run` (or --footprint), or --twin TRACE to "
        "`waitlab analyze`");
  return *in;
}

}  // namespace

const output::Entry& footprint_entry() {
  static const output::Entry entry = [] {
    output::Entry e;
    e.name = "footprint";
    e.description =
        "The counterfactual footprint of a perturbation: the run against its twin without it (same seed, "
        "same noise): per rank and time how far the perturbation shifted the rank's timeline, next to the idle "
        "periods; per distance from the source the peak shift and the largest idle period in both (decay and "
        "dispersion apart); how much of the injected time reached the end of the run and how much was absorbed "
        "(footprint.csv, footprint_shift.npy; pictures footprint_*.png/.svg). Needs the twin: `waitlab run` with "
        "run.footprint, or `waitlab analyze --twin`. Implies idlewave; not in `all`.";
    e.needs = {"idlewave"};
    e.in_all = false;
    e.check = [](const trace::Trace&, const output::Values& options) { input_of(options); };
    e.run = [](const output::Context& c) -> std::any {
      const FootprintInput& in = input_of(c.options);
      const trace::Trace& twin = *in.twin;
      const trace::Matching matching = trace::Matching::build(twin);
      const WaitStateResult waits = wait_states(twin, matching);
      const IdleWaveResult twin_idle = idle_waves(twin, matching, waits);
      return footprint(c.trace, twin, c.result<IdleWaveResult>("idlewave"), twin_idle);
    };
    e.summary = [](const output::Context&, const std::any& result) {
      return footprint_json(std::any_cast<const FootprintResult&>(result));
    };
    e.write = [](const std::string& dir, const output::Context&, const std::any* result) {
      return write_footprint_files(dir, result ? &std::any_cast<const FootprintResult&>(*result) : nullptr);
    };
    e.print = [](const output::Context&, const std::any& result, std::ostream& out) {
      print_footprint_summary(std::any_cast<const FootprintResult&>(result), out);
    };
    e.section_id = "sec-footprint";
    e.section_title = "Counterfactual footprint";
    e.section_html = footprint_report_html;
    e.tables = {{"footprint.csv", "Footprint per rank", {"peak_shift_s"}, "largest shift first"}};
    e.plot_script = "footprint";
    e.plot_input = "footprint.json";
    e.not_drawn = "the footprint pictures were not drawn";
    e.pictures = {
        {"footprint_heatmap", "fp-heatmap", "Shift beside the idle periods",
         "Left: how far the perturbation shifted each rank's timeline (its time in this run minus its time in the "
         "twin) over the run's time; right: the idle-period heat map of the same bins. The shift stays where the "
         "idle band has faded: the wave dispersed into many small waits rather than being absorbed."},
        {"footprint_distance", "fp-distance", "Shift and largest idle period by distance from the source",
         "Per rank, by signed distance from the source: the peak shift, and the largest idle period in the run and "
         "in the twin (the noise background). Where the idle curve meets the background the wave has decayed; "
         "where the shift stays high it has dispersed."},
    };
    return e;
  }();
  return entry;
}

}  // namespace waitlab::analysis
