// Key figures from a hand-made trace: wall time from MPI_Init/MPI_Finalize, injected time
// per cause with its per-rank summary, and the summary.json layout (nothing host-dependent,
// the collective set actually used, XML platform paths as written).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "util/error.hpp"
#include "analysis/trace/wlt.hpp"
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
  stats.events = 19;  // the engine's count, recorded or not: the trace may hold fewer (12 here)
  stats.host_seconds = 987654.25;  // must not show up anywhere deterministic
  const Figures f = figures(three_ranks(), stats);
  EXPECT_EQ(f.simulated_time, 4.5);
  EXPECT_EQ(f.wall_time, 4.0 - 0.25);
  EXPECT_EQ(f.mpi_operations, 17u);
  EXPECT_EQ(f.events, 19u);
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
  o.result.stats.host_seconds = 987654.25;  // sentinels: digits no figure of this run contains
  o.fig = figures(o.result.trace, o.result.stats);
  o.base_fig = o.fig;
  o.base_fig->simulated_time = 3.5;
  o.host_seconds = 876543.75;
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
  EXPECT_EQ(text.find("987654"), std::string::npos) << text;
  EXPECT_EQ(text.find("876543"), std::string::npos) << text;
  EXPECT_EQ(text.find("/some/dir"), std::string::npos) << text;
  // Top-level keys in the documented order.
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{
                      "schema", "schema_version", "generator", "scenario", "ranks", "iterations", "platform",
                      "workload", "smpi_errors", "perturbations", "run", "simulated_time_s", "wall_time_s",
                      "mpi_operations",
                      "events", "compute_intervals", "nominal_compute_s", "injected", "baseline"}));
}

// run.collectives reports the set the engine used: under smpi-default semantics that is
// SimGrid's default selector, whatever the scenario asks for.
TEST(Summary, CollectivesActuallyUsed) {
  const std::string text =
      "name: c\nplatform: {type: cluster, nodes: 4}\n"
      "workload: {type: allreduce_loop, ranks: 4, iterations: 2}\n";
  const auto used = [&](const std::vector<std::string>& sets) {
    const auto s = scenarios::parse_scenario(text, "c.yaml", sets);
    const Outcome o = simulate_scenario(s, false);
    EXPECT_EQ(o.result.trace.attribute("collectives"), summary_json(s, o)["run"]["collectives"]);
    return summary_json(s, o)["run"]["collectives"].get<std::string>();
  };
  EXPECT_EQ(used({}), "fast");
  EXPECT_EQ(used({"run.collectives=mpi"}), "mpi");
  EXPECT_EQ(used({"run.semantics=smpi-default"}), "default");
  EXPECT_EQ(used({"run.semantics=smpi-default", "run.collectives=mpi"}), "default");
}

// run.collective_algorithms names the algorithm of every choosable collective: the preset's,
// the scenario's choices on top, "default" (SimGrid's selector) where neither says; the
// trace's collective_algorithms attribute says the same.
TEST(Summary, CollectiveAlgorithmsActuallyUsed) {
  const std::string text =
      "name: c\nplatform: {type: cluster, nodes: 4}\n"
      "workload: {type: alltoall_loop, ranks: 4, iterations: 2}\n"
      "run: {collective_algorithms: {alltoall: pair}}\n";
  const auto used = [&](const std::vector<std::string>& sets) {
    const auto s = scenarios::parse_scenario(text, "c.yaml", sets);
    const Outcome o = simulate_scenario(s, false);
    const auto j = summary_json(s, o)["run"]["collective_algorithms"];
    std::string attr;
    for (const auto& [k, v] : j.items()) attr += (attr.empty() ? "" : ",") + k + "=" + v.get<std::string>();
    EXPECT_EQ(o.result.trace.attribute("collective_algorithms"), attr);
    return j;
  };
  auto j = used({});
  EXPECT_EQ(j.size(), 11u);
  EXPECT_EQ(j["alltoall"], "pair");
  EXPECT_EQ(j["bcast"], "binomial_tree");
  EXPECT_EQ(j["alltoallv"], "default");
  j = used({"run.semantics=smpi-default", "run.collective_algorithms.alltoallv=ring"});
  EXPECT_EQ(j["alltoall"], "pair");
  EXPECT_EQ(j["alltoallv"], "ring");
  EXPECT_EQ(j["bcast"], "default");
}

// An XML platform's path is recorded as written, not as resolved for opening: the trace
// must not depend on how the scenario file was named (relative, absolute, with "./").
TEST(Summary, XmlPlatformPathAsWritten) {
  namespace fs = std::filesystem;
  const auto dir = fs::temp_directory_path() / ("wl_xmlpath_" + std::to_string(::getpid()));
  fs::create_directories(dir / "platforms");
  std::ofstream(dir / "platforms" / "p.xml") << R"(<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="z" routing="Full">
    <host id="h0" speed="1Gf"/>
    <host id="h1" speed="1Gf"/>
    <link id="l" bandwidth="1GBps" latency="1us"/>
    <route src="h0" dst="h1"><link_ctn id="l"/></route>
  </zone>
</platform>)";
  std::ofstream(dir / "s.yaml") << "platform: {type: xml, file: platforms/p.xml}\n"
                                   "workload: {type: heat1d, ranks: 2, iterations: 2}\n";
  const auto trace_of = [](const std::string& path) {
    const auto s = scenarios::load_scenario(path);
    const Outcome o = simulate_scenario(s, false);
    EXPECT_EQ(o.result.trace.attribute("platform"), "xml: platforms/p.xml") << path;
    EXPECT_EQ(summary_json(s, o)["platform"]["options"]["file"], "platforms/p.xml") << path;
    std::ostringstream out(std::ios::binary);
    trace::write_wlt(o.result.trace, out);
    return out.str();
  };
  const std::string a = trace_of((dir / "s.yaml").string());
  const std::string b = trace_of((dir / "." / "s.yaml").string());
  EXPECT_TRUE(a == b) << "the trace depends on how the scenario path was spelled";
  fs::remove_all(dir);
}

}  // namespace
}  // namespace waitlab::app
