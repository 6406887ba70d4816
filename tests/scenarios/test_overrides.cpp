// `--set key=value` overrides: they change exactly the named value, are validated like a
// written value, and errors about them name the --set.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "util/error.hpp"
#include "scenarios/scenario.hpp"

namespace waitlab::scenarios {
namespace {

const char* kText =
    "platform: {type: cluster, nodes: 4, cores: 2}\n"
    "workload:\n"
    "  type: heat1d\n"
    "  ranks: 8\n"
    "  iterations: 3\n"
    "perturbations:\n"
    "  - {type: delay, rank: 2, iteration: 1, duration: 1ms}\n";

Scenario load(const std::vector<std::string>& sets) {
  return parse_scenario(kText, "o.yaml", sets);
}

std::string error_of(const std::vector<std::string>& sets) {
  try {
    load(sets);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Overrides, ChangeWorkloadRunAndPerturbationValues) {
  const Scenario s = load({"workload.iterations=10", "run.seed=3", "perturbations[0].duration=5ms",
                           "run.eager_threshold=0B", "run.semantics=smpi-default", "outputs.trace=false"});
  EXPECT_EQ(s.workload.options.integer("iterations"), 10);
  EXPECT_EQ(s.workload.options.integer("ranks"), 8);  // untouched
  EXPECT_EQ(s.run.seed, 3u);
  EXPECT_EQ(s.perturbations[0].options.number("duration"), 5e-3);
  EXPECT_EQ(s.perturbations[0].options.integer("rank"), 2);  // untouched
  EXPECT_EQ(s.run.eager_threshold, 0.0);
  EXPECT_EQ(s.run.semantics, sim::Semantics::SmpiDefault);
  EXPECT_FALSE(s.outputs.trace);
  EXPECT_EQ(s.overrides.size(), 6u);
}

TEST(Overrides, LaterOverrideWins) {
  EXPECT_EQ(load({"run.seed=3", "run.seed=4"}).run.seed, 4u);
}

TEST(Overrides, NameChangesDefaultOutputDir) {
  const Scenario s = load({"name=other"});
  EXPECT_EQ(s.name, "other");
  EXPECT_EQ(s.outputs.dir, "out/other");
}

TEST(Overrides, AppendPerturbation) {
  const Scenario s = load({"perturbations[1].type=periodic_noise", "perturbations[1].frequency=1kHz",
                           "perturbations[1].duration=10us"});
  ASSERT_EQ(s.perturbations.size(), 2u);
  EXPECT_EQ(s.perturbations[1].type, "periodic_noise");
  EXPECT_EQ(s.perturbations[1].options.number("frequency"), 1000.0);
  EXPECT_EQ(s.perturbations[1].where, "--set perturbations[1].type=periodic_noise");
}

TEST(Overrides, ValueMayContainEquals) {
  // Only the first '=' separates key and value.
  EXPECT_EQ(load({"name=a", "run.collectives=mpi"}).run.collectives, "mpi");
  EXPECT_EQ(
      error_of({"run.collectives=a=b"}),
      "--set run.collectives=a=b: run.collectives: unknown collective set 'a=b' (sets: fast, mpi, default)");
}

TEST(Overrides, NestedKeysChooseOneCollectiveAlgorithm) {
  const Scenario s = load({"run.collective_algorithms.alltoall=pair", "run.collective_algorithms.allreduce=rdb",
                           "run.collective_algorithms.alltoall=ring"});
  EXPECT_EQ(s.run.collective_algorithms,
            (std::vector<std::pair<std::string, std::string>>{{"alltoall", "ring"}, {"allreduce", "rdb"}}));
  EXPECT_EQ(error_of({"run.collective_algorithms.alltoall=pairs"}),
            "--set run.collective_algorithms.alltoall=pairs: run.collective_algorithms: collective 'alltoall' has no "
            "algorithm 'pairs'; did you mean 'pair'? (SimGrid 3.32's algorithms for alltoall: default, 2dmesh, "
            "3dmesh, basic_linear, bruck, pair, pair_rma, pair_light_barrier, pair_mpi_barrier, pair_one_barrier, "
            "rdb, ring, ring_light_barrier, ring_mpi_barrier, ring_one_barrier, mvapich2, mvapich2_scatter_dest, "
            "ompi, mpich, impi, automatic)");
  EXPECT_EQ(error_of({"run.collective_algorithms.alltoal=pair"})
                .rfind("--set run.collective_algorithms.alltoal=pair: run.collective_algorithms: unknown collective "
                       "'alltoal'; did you mean 'alltoall'?",
                       0),
            0u);
  EXPECT_EQ(error_of({"run.collective_algorithms=pair"}),
            "--set run.collective_algorithms=pair: run.collective_algorithms: expected a mapping (alltoall: pair, "
            "allreduce: rdb), got a value");
}

TEST(Overrides, Errors) {
  EXPECT_EQ(error_of({"workload.iterations"}),
            "--set workload.iterations: expected key=value (e.g. workload.iterations=10)");
  EXPECT_EQ(error_of({"workload.iteratons=10"}),
            "--set workload.iteratons=10: unknown option 'iteratons' for workload 'heat1d'; did you mean "
            "'iterations'?");
  EXPECT_EQ(error_of({"workload.iterations=ten"})
                .rfind("--set workload.iterations=ten: option 'iterations' of workload "
                       "'heat1d': 'ten' is not ",
                       0),
            0u);
  EXPECT_EQ(error_of({"perturbations[3].rank=1"}),
            "--set perturbations[3].rank=1: 'perturbations' has 1 entries; index 3 is past the end (use [1] "
            "to append "
            "one)");
  EXPECT_EQ(
      error_of({"workload=heat1d"}),
      "--set workload=heat1d: 'workload' is a mapping (key: value lines); set one of its keys instead (e.g. "
      "workload.KEY=...)");
  EXPECT_EQ(error_of({"workload.ranks.x=1"}),
            "--set workload.ranks.x=1: 'workload.ranks' is a value, not a section with keys");
  EXPECT_EQ(error_of({"workload[0]=1"}),
            "--set workload[0]=1: 'workload' is a mapping (key: value lines), not a list");
  EXPECT_EQ(error_of({"runn.seed=1"}),
            "--set runn.seed=1: unknown section 'runn'; did you mean 'run'? (sections: name, description, "
            "platform, "
            "workload, perturbations, run, outputs, variants)");
  EXPECT_EQ(
      error_of({"perturbations[x].rank=1"}),
      "--set perturbations[x].rank=1: list index 'x' is not a whole number >= 0 (expected a key such as "
      "workload.iterations or perturbations[0].duration)");
  EXPECT_EQ(error_of({"run..seed=1"}),
            "--set run..seed=1: empty key name (expected a key such as workload.iterations or "
            "perturbations[0].duration)");
  // An appended perturbation without a type.
  EXPECT_EQ(error_of({"perturbations[1].rank=1"})
                .rfind("--set perturbations[1].rank=1: perturbation: missing 'type'", 0),
            0u);
  // Impossible after the override: more ranks than cores, pointing at the --set.
  EXPECT_EQ(error_of({"workload.ranks=9"}).rfind("--set workload.ranks=9: ", 0), 0u);
}

}  // namespace
}  // namespace waitlab::scenarios

namespace waitlab::scenarios {
namespace {

// A list of values can be replaced whole by one comma-separated value; a list of sections cannot.
TEST(Overrides, ListOfValuesReplacedByOneValue) {
  const std::string text = std::string(kText) + "  - {type: imbalance_hotspot, center: [1], radius: 1}\n" +
                           "outputs: {analyses: [waitstate]}\n";
  const Scenario s = parse_scenario(text, "o.yaml", {"perturbations[1].center=3", "outputs.analyses=delay,critpath"});
  EXPECT_EQ(s.perturbations[1].options.int_list("center"), (std::vector<std::int64_t>{3}));
  EXPECT_EQ(s.outputs.analyses, (std::vector<std::string>{"waitstate", "delay", "critpath"}));
  EXPECT_EQ(error_of({"perturbations=delay"}),
            "--set perturbations=delay: 'perturbations' is a list; set one of its keys instead (e.g. "
            "perturbations[0]=...)");
}

// ... or written as YAML writes a list inline, as the docs show lists: `[delay, critpath]`.
TEST(Overrides, ListWrittenInline) {
  const std::string text = std::string(kText) + "  - {type: imbalance_hotspot, center: [1], radius: 1}\n" +
                           "outputs: {analyses: [waitstate]}\n";
  const Scenario s =
      parse_scenario(text, "o.yaml", {"perturbations[1].center=[2]", "outputs.analyses=[ delay , critpath ]"});
  EXPECT_EQ(s.perturbations[1].options.int_list("center"), (std::vector<std::int64_t>{2}));
  EXPECT_EQ(s.outputs.analyses, (std::vector<std::string>{"waitstate", "delay", "critpath"}));
  EXPECT_TRUE(parse_scenario(text, "o.yaml", {"outputs.analyses=[]"}).outputs.analyses.empty());
  EXPECT_EQ(error_of({"outputs.analyses=[waitstate,,delay]"}),
            "--set outputs.analyses=[waitstate,,delay]: '[waitstate,,delay]' is not a list of values (write [a, b, c])");
  EXPECT_EQ(error_of({"outputs.analyses=[dealy]"}).rfind("--set outputs.analyses=[dealy]: ", 0), 0u);
}

}  // namespace
}  // namespace waitlab::scenarios
