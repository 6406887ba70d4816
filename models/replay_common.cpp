// What the converters of models/replay.hpp share, out of line (replay_common.hpp): a replay's
// last step, which numbers the iterations by the loop structure of the calls when no iteration
// region names them.
#include "models/replay_common.hpp"

#include "models/loops.hpp"

namespace waitlab::models::detail {

namespace {

// Without an iteration region, iterations follow the loop structure of the calls
// (models/loops.hpp); the replay notes say what was found. The sampled ranks' actions are
// read back from the workload's tapes.
void loop_iterations(ReplayWorkload& w, ReplayReport* report) {
  const Loop loop = find_loop(w.ranks(), [&](int r) {
    std::vector<Action> out;
    out.reserve(w.tape(r).size());
    Action a;
    for (auto s = w.stream(r); s->next(a);) out.push_back(a);
    return out;
  });
  if (loop.period == 0) {
    if (report)
      report->notes.push_back("iterations: no repeating pattern of calls found (on " +
                              std::to_string(loop.ranks_sampled) +
                              " sampled ranks): each compute interval is taken as an iteration; analyses "
                              "that need iterations (idlewave) may not find the program's");
    return;
  }
  std::vector<std::size_t> intervals;
  for (Rank r = 0; r < w.ranks(); ++r) intervals.push_back(w.tape(r).computes());
  IterationSplit split = split_iterations(intervals, loop.iterations);
  if (report && (loop.period > 1 || split.uneven > 0))
    report->notes.push_back("iterations: the calls repeat every " + std::to_string(loop.period) +
                            " compute interval(s) (" + std::to_string(loop.ranks_agreeing) + " of " +
                            std::to_string(loop.ranks_sampled) + " sampled ranks): " +
                            std::to_string(split.iterations) +
                            " iterations, each rank's compute intervals split evenly among them" +
                            (split.uneven > 0 ? " (" + std::to_string(split.uneven) +
                                                    " rank(s) with intervals left over, put in their last iteration)"
                                              : std::string()));
  w.split_iterations(std::move(split.per_rank), split.iterations);
}

}  // namespace

std::unique_ptr<Workload> finish(std::unique_ptr<ReplayWorkload> w, const ReplayOptions& o, ReplayReport* report,
                                 std::uint64_t actions) {
  if (report) report->actions = actions;
  if (o.iteration_region.empty()) loop_iterations(*w, report);
  return w;
}

}  // namespace waitlab::models::detail
