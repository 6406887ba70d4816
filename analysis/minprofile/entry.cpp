// The minimum-duration estimator as waitlab presents it: its registry entry
// (analysis/output/entry.hpp) — summary.json's analyses.minprofile, minprofile.csv and
// minprofile.json, the terminal's lines and the report's table.
//
// Its option is the simulator's own estimate of the run (sim::RunOptions::minprofile, fed
// online during the simulation with what a PMPI profiler sees): given, it is the result (shared,
// not copied), equal to the estimate from the trace (tests/sim/test_minprofile_online.cpp); else
// the estimate is computed from the trace. The result's type: minprofile::Shared.
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "analysis/minprofile/estimator.hpp"
#include "analysis/minprofile/minprofile.hpp"
#include "analysis/output/entry.hpp"

namespace waitlab::analysis {

namespace {

using output::Json;

Json summary(const output::Context&, const std::any& result) {
  // The call paths of minprofile.json, without its header.
  const auto full = Json::parse(minprofile::to_json(*std::any_cast<const minprofile::Shared&>(result), ""));
  return {{"variants", full["variants"]}, {"call_paths", full["call_paths"]}};
}

std::vector<std::string> write(const std::string& dir, const output::Context&, const std::any* result) {
  const auto* m = result ? std::any_cast<const minprofile::Shared&>(*result).get() : nullptr;
  const std::string csv = m ? minprofile::to_csv(*m) : "";
  const std::string json = m ? minprofile::to_json(*m, "waitlab") : "";
  std::vector<std::string> written;
  output::write_table(dir, "minprofile.csv", m != nullptr, [&](std::ostream& os) { os << csv; }, written);
  output::write_table(dir, "minprofile.json", m != nullptr, [&](std::ostream& os) { os << json; }, written);
  return written;
}

void print(const output::Context&, const std::any& result, std::ostream& out) {
  const auto& m = *std::any_cast<const minprofile::Shared&>(result);
  const auto pct = [](double f) { return fmt::format("{:.2f} %", 100 * f); };
  auto totals = m.totals();
  std::stable_sort(totals.begin(), totals.end(), [](const auto& a, const auto& b) { return a.waiting[0] > b.waiting[0]; });
  double all = 0;
  for (const auto& t : totals) all += t.waiting[0];
  out << fmt::format("wait estimate   {} of {} ranks × {:.6g} s (minimum-duration estimator, paper variant)\n",
                     pct(m.ranks > 0 && m.wall_time > 0 ? all / (static_cast<double>(m.ranks) * m.wall_time) : 0),
                     m.ranks, m.wall_time);
  for (std::size_t i = 0; i < totals.size() && i < 5 && totals[i].waiting[0] > 0; ++i)
    out << fmt::format("  {:<44} {:>12.6g} s {:>8}  {}\n", m.paths[totals[i].path], totals[i].waiting[0],
                       pct(m.ratio(totals[i], minprofile::Variant::Paper)), minprofile::pattern_name(totals[i].pattern));
}

}  // namespace

const output::Entry& minprofile_entry() {
  static const output::Entry entry = [] {
    output::Entry e;
    e.name = "minprofile";
    e.description =
        "The minimum-duration wait-state estimator (paper 000): everything an MPI call lasts beyond the minimum of "
        "its category (function, log2 message size; local for point-to-point, global for collectives) counts as "
        "waiting, per call path × pattern × rank, with the variants per_peer, p5 and exclude_tested (minprofile.csv, "
        "minprofile.json). In `run` it is fed online during the simulation with what a PMPI profiler sees; in "
        "`analyze` it runs on the trace.";
    e.run = [](const output::Context& c) -> std::any {
      if (const auto* online = c.options.get<minprofile::Shared>("minprofile")) return *online;
      return minprofile::Shared(std::make_shared<minprofile::Result>(minprofile_estimate(c.trace, c.matching)));
    };
    e.run_sharded = [](const output::ShardContext& c) -> std::any {
      if (const auto* online = c.options.get<minprofile::Shared>("minprofile")) return *online;
      return minprofile::Shared(
          std::make_shared<minprofile::Result>(minprofile_estimate(c.shard, c.matching, c.transport)));
    };  // process 0's result is the whole one: no gather
    e.summary = summary;
    e.write = write;
    e.print = print;
    e.tables = {{"minprofile.csv", "Minimum-duration estimate", {"wait_paper_s"},
                 "largest estimated waiting (paper variant) first"}};
    return e;
  }();
  return entry;
}

}  // namespace waitlab::analysis
