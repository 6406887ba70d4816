// Key figures from a hand-made trace: wall time from MPI_Init/MPI_Finalize, injected time
// per cause with its per-rank summary, and the summary.json layout (nothing host-dependent).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "analysis/trace/error.hpp"
#include "app/summary.hpp"
#include "scenarios/scenario.hpp"

namespace waitlab::app {
namespace {

trace::Event at(double t, trace::EventKind k, trace::MpiOp op) {
  trace::Event e;
  e.time = t;
  e.kind = k;
  e.op = op;
  return e;
}

trace::ComputeTruth truth(double nominal, double imbalance, double noise, double delay) {
  trace::ComputeTruth c;
  c.nominal = nominal;
  c.injected = {imbalance, noise, delay};
  return c;
}

// Three ranks: Init enters at 0.5, 0.25, 1.0; Finalize leaves at 3.0, 4.0, 3.5.
trace::Trace three_ranks() {
  trace::Trace t;
  const double init[] = {0.5, 0.25, 1.0};
  const double fin[] = {3.0, 4.0, 3.5};
  for (int r = 0; r < 3; ++r) {
    trace::Location l;
    l.rank = r;
    l.events.push_back(at(init[r], trace::EventKind::Enter, trace::MpiOp::Init));
    l.events.push_back(at(init[r] + 0.1, trace::EventKind::Leave, trace::MpiOp::Init));
    l.events.push_back(at(fin[r] - 0.1, trace::EventKind::Enter, trace::MpiOp::Finalize));
    l.events.push_back(at(fin[r], trace::EventKind::Leave, trace::MpiOp::Finalize));
    t.locations.push_back(l);
  }
  // rank 0: imbalance 0.25 + 0.25; rank 1: imbalance 0.5, noise 0.125; rank 2: delay 1.
  t.locations[0].truth = {truth(1, 0.25, 0, 0), truth(1, 0.25, 0, 0)};
  t.locations[1].truth = {truth(2, 0.5, 0.125, 0)};
  t.locations[2].truth = {truth(0.5, 0, 0, 1), truth(0.5, 0, 0, 0)};
  t.has_truth = true;
  return t;
}

TEST(Figures, FromHandMadeTrace) {
  sim::RunStats stats;
  stats.simulated_time = 4.5;
  stats.mpi_operations = 17;
  stats.host_seconds = 123;  // must not show up anywhere deterministic
  const Figures f = figures(three_ranks(), stats);
  EXPECT_EQ(f.simulated_time, 4.5);
  EXPECT_EQ(f.wall_time, 4.0 - 0.25);
  EXPECT_EQ(f.mpi_operations, 17u);
  EXPECT_EQ(f.events, 12u);
  EXPECT_EQ(f.compute_intervals, 5u);
  EXPECT_EQ(f.nominal_compute, 5.0);
  const auto& imb = f.injected[0];
  EXPECT_EQ(imb.total, 1.0);
  EXPECT_EQ(imb.intervals, 3u);
  EXPECT_EQ(imb.ranks, 2u);
  EXPECT_EQ(imb.max_rank, 0.5);
  EXPECT_EQ(imb.max_rank_id, 0);  // ranks 0 and 1 tie at 0.5: the lowest rank
  EXPECT_EQ(imb.mean_rank, 1.0 / 3);
  const auto& noise = f.injected[1];
  EXPECT_EQ(noise.total, 0.125);
  EXPECT_EQ(noise.max_rank_id, 1);
  const auto& delay = f.injected[2];
  EXPECT_EQ(delay.total, 1.0);
  EXPECT_EQ(delay.intervals, 1u);
  EXPECT_EQ(delay.ranks, 1u);
  EXPECT_EQ(delay.max_rank_id, 2);
  EXPECT_EQ(f.injected_total(), 2.125);
}

TEST(Figures, NoInjectionMeansNoMaxRank) {
  trace::Trace t = three_ranks();
  for (auto& l : t.locations) l.truth.clear();
  const Figures f = figures(t, {});
  for (const auto& c : f.injected) {
    EXPECT_EQ(c.total, 0.0);
    EXPECT_EQ(c.max_rank_id, trace::kNoRank);
  }
}

TEST(Summary, LayoutAndNoHostFigures) {
  const auto s = scenarios::parse_scenario(
      "name: s\nplatform: {type: cluster, nodes: 3}\nworkload: {type: bcast_reduce, ranks: 3, iterations: "
      "2}\n"
      "perturbations:\n  - {type: delay, rank: 2, iteration: 0, duration: 1s}\nrun: {seed: 9, baseline: "
      "true}\n",
      "/some/dir/s.yaml", {"run.seed=9"});
  Outcome o;
  o.ranks = 3;
  o.iterations = 2;
  o.result.trace = three_ranks();
  o.result.stats.simulated_time = 4.5;
  o.result.stats.host_seconds = 123;
  o.fig = figures(o.result.trace, o.result.stats);
  o.base_fig = o.fig;
  o.base_fig->simulated_time = 3.5;
  o.host_seconds = 456;
  const auto j = summary_json(s, o);
  EXPECT_EQ(j["scenario"]["file"], "s.yaml");  // no directory: it would depend on the caller
  EXPECT_EQ(j["scenario"]["overrides"], nlohmann::json::array({"run.seed=9"}));
  EXPECT_EQ(j["run"]["seed"], 9);
  EXPECT_EQ(j["workload"]["options"]["ranks"], 3);  // integers stay integers
  EXPECT_EQ(j["perturbations"][0]["options"]["duration"], 1.0);
  EXPECT_EQ(j["injected"]["by_cause"]["imbalance"]["per_rank"]["max_rank"], 0);
  EXPECT_TRUE(j["injected"]["by_cause"]["noise"]["per_rank"]["max_rank"] == 1);
  EXPECT_EQ(j["baseline"]["simulated_time_difference_s"], 1.0);
  const std::string text = j.dump();
  EXPECT_EQ(text.find("123"), std::string::npos) << text;
  EXPECT_EQ(text.find("456"), std::string::npos) << text;
  EXPECT_EQ(text.find("/some/dir"), std::string::npos) << text;
  // Top-level keys in the documented order.
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{
                      "schema", "schema_version", "generator", "scenario", "ranks", "iterations", "platform",
                      "workload", "perturbations", "run", "simulated_time_s", "wall_time_s", "mpi_operations",
                      "events", "compute_intervals", "nominal_compute_s", "injected", "baseline"}));
}

TEST(WriteFileAtomic, WritesWholeFileOrThrows) {
  const auto dir = std::filesystem::temp_directory_path() / ("wl_atomic_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "x.json").string();
  write_file_atomic(path, "first");
  write_file_atomic(path, "second");
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  EXPECT_EQ(s.str(), "second");
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  std::filesystem::remove_all(dir);
  EXPECT_THROW(write_file_atomic((dir / "missing" / "x.json").string(), "x"), InputError);
}

}  // namespace
}  // namespace waitlab::app
