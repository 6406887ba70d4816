// The registry on the replay engine (analysis/registry: run_analyses_sharded, issue 32): on every
// number of processes and delivery order, process 0's run gives, for every analysis that runs on
// the engine, the same summary.json section and the same files, byte for byte, as run_analyses on
// the whole trace — made from a trace that holds no events (what a process of waitlab-mpi holds:
// the definitions), so the outputs need nothing but the gathered results — also with
// time-resolved options (another convention and window rule). Every analysis of the registry
// runs on the engine.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "../analysis/trace_builder.hpp"
#include "analysis/engine/shard.hpp"
#include "analysis/registry/registry.hpp"
#include "analysis/timeresolved/output.hpp"
#include "analysis/trace/trace_io.hpp"
#include "processes.hpp"
#include "random_trace.hpp"

namespace waitlab::engine {
namespace {

namespace fs = std::filesystem;

// Every output of the run's analyses: "<name>.summary" → its summary.json section, and each file
// it writes → the file's bytes.
std::map<std::string, std::string> outputs(const analysis::AnalysisRun& run, const trace::Trace& head,
                                           const fs::path& dir) {
  fs::create_directories(dir);
  std::map<std::string, std::string> out;
  const output::Context context = run.context(head);
  for (const auto* e : run.ran) {
    const std::any& result = *run.results.find(e->name);
    out[e->name + ".summary"] = e->summary(context, result).dump();
    std::ostringstream printed;
    e->print(context, result, printed);
    out[e->name + ".print"] = printed.str();
    for (const std::string& file : e->write(dir.string(), context, &result)) {
      std::ifstream in(file, std::ios::binary);
      std::ostringstream bytes;
      bytes << in.rdbuf();
      out[fs::path(file).filename().string()] = bytes.str();
    }
  }
  out["matching"] = std::to_string(run.messages) + " messages, " + std::to_string(run.matching.collectives.size()) +
                    " instances, " + std::to_string(run.matching.unmatched.total()) + " unmatched, " +
                    std::to_string(run.path_names.size()) + " call paths";
  return out;
}

trace::Trace head_of(const trace::Trace& tr) {
  trace::Trace head;
  head.defs = tr.defs;
  head.attributes = tr.attributes;
  head.origin = tr.origin;
  return head;
}

const std::vector<std::string> kEngineAnalyses = {"waitstate", "delay",    "critpath",
                                                   "minprofile", "idlewave", "timeresolved"};

void expect_outputs_as_serial(const trace::Trace& tr, const std::string& name, const output::Values& options = {}) {
  const fs::path root = fs::temp_directory_path() / ("waitlab-shard-registry-" + std::to_string(::getpid()));
  const analysis::AnalysisRun serial = analysis::run_analyses(tr, kEngineAnalyses, options);
  const auto expected = outputs(serial, tr, root / "serial");
  ASSERT_EQ(serial.ran.size(), kEngineAnalyses.size());
  const trace::Trace head = head_of(tr);
  const auto counts = event_counts(tr);
  on_every_world([&](Transport& t, const std::string& where) {
    Shard shard = Shard::of(tr, Partition::balanced(counts, t.size()), t.self());
    const analysis::AnalysisRun run = analysis::run_analyses_sharded(shard, t, kEngineAnalyses, options);
    if (t.self() != 0) return;
    const auto got = outputs(run, head, root / "sharded");
    ASSERT_EQ(got.size(), expected.size()) << name << ", " << where;
    for (const auto& [key, bytes] : expected) EXPECT_EQ(got.at(key), bytes) << name << ", " << where << ": " << key;
  });
  fs::remove_all(root);
}

TEST(ShardRegistry, ProcessZerosOutputsAreTheSerialOnesByteForByte) {
  for (std::uint64_t seed : {3u, 99u}) expect_outputs_as_serial(random_trace(7, seed), "random " + std::to_string(seed));
  expect_outputs_as_serial(analysis::test::fixture_b().trace(), "Fixture B");
  const fs::path data = fs::path(WAITLAB_SOURCE_DIR) / "tests/data/scorep";
  expect_outputs_as_serial(trace::read_trace((data / "npb-is.W.16" / "traces.otf2").string()), "npb-is.W.16");
  output::Values options;  // time-resolved: Scalasca's convention, adaptive windows
  options.set("timeresolved", analysis::TimeResolvedInput{{analysis::WindowRule::Adaptive, 0, 40}, nullptr,
                                                          analysis::Convention::Scalasca});
  expect_outputs_as_serial(random_trace(7, 5), "random 5, Scalasca's convention", options);
  expect_outputs_as_serial(trace::read_trace((data / "npb-mg.W.16" / "traces.otf2").string()),
                           "npb-mg.W.16, Scalasca's convention", options);
}

// Every analysis of `all` runs on the engine. The footprint is not in `all`: it compares a run
// with its twin, which only `waitlab run` simulates, in one process (docs/analyses.md).
TEST(ShardRegistry, EveryAnalysisRunsOnTheEngine) {
  std::size_t in_all = 0;
  for (const auto* e : analysis::analyses()) {
    EXPECT_EQ(static_cast<bool>(e->run_sharded), e->in_all) << e->name;
    in_all += e->in_all ? 1 : 0;
  }
  EXPECT_EQ(in_all, analysis::analyses().size() - 1);
  const trace::Trace tr = random_trace(3, 1);
  SerialTransport t;
  Shard shard = Shard::whole(tr);
  EXPECT_EQ(analysis::run_analyses_sharded(shard, t, analysis::select_analyses({"all"})).ran.size(), in_all);
  EXPECT_THROW((void)analysis::run_analyses_sharded(shard, t, {"footprint"}), std::invalid_argument);
}

}  // namespace
}  // namespace waitlab::engine
