#include "models/workload.hpp"

#include "util/error.hpp"

namespace waitlab::models {

namespace {

// `trace` is a workload whose actions come from a file: its spec lives here with the others
// (so that scenarios are checked against it and `waitlab describe trace` shows it), but only
// the scenario loader, which reads trace files, builds it (models/replay.hpp).
Spec make_trace_workload_spec() {
  return make_spec(SpecKind::Workload, kTraceWorkload,
                    "Replays a measured or simulated trace: a .wlt file, an OTF2 archive (anchor or directory), a "
                    "Paraver .prv file or an SMPI time-independent trace (index or single file). The time between "
                    "MPI calls becomes compute in its region, MPI calls become the same calls. Shorthand: "
                    "`workload: {trace: PATH}`. A relative path is relative to the scenario file.",
                    {text_option("trace", "the trace file to replay", false),
                     text_option("compute_scale",
                                 "compute scales, comma-separated: FACTOR, REGION=FACTOR, @RANKS=FACTOR or "
                                 "REGION@RANKS=FACTOR (RANKS is N or N-M); the factors that apply multiply",
                                 true),
                     text_option("iterations_from",
                                 "the region whose n-th entry starts iteration n (default: every compute interval "
                                 "is one iteration)",
                                 true),
                     quantity_option("speed", units::Quantity::Speed, "",
                                     "if set, compute in seconds becomes flops at this speed, executed at the "
                                     "host's speed (a what-if for faster or slower cores)",
                                     true)});
}

}  // namespace

const Spec& trace_workload_spec() {
  static const Spec spec = make_trace_workload_spec();
  return spec;
}

std::vector<int> grid_coords(const std::vector<int>& grid, int rank) {
  std::vector<int> c(grid.size());
  for (std::size_t i = grid.size(); i-- > 0;) {
    c[i] = rank % grid[i];
    rank /= grid[i];
  }
  return c;
}

int grid_rank(const std::vector<int>& grid, const std::vector<int>& coords) {
  int r = 0;
  for (std::size_t i = 0; i < grid.size(); ++i) r = r * grid[i] + coords[i];
  return r;
}

}  // namespace waitlab::models
