// Scenario loading: a valid scenario gives exactly the values written (SI units, defaults
// filled in), and every kind of bad input is rejected with the file:line:col (1-based) of
// the culprit and a hint.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "util/error.hpp"
#include "scenarios/scenario.hpp"

namespace waitlab::scenarios {
namespace {

// Line numbers below refer to this text.
std::string base_scenario() {
  return "name: t\n"                   // 1
         "description: a test\n"       // 2
         "platform:\n"                 // 3
         "  type: cluster\n"           // 4
         "  nodes: 4\n"                // 5
         "  cores: 2\n"                // 6
         "workload:\n"                 // 7
         "  type: heat1d\n"            // 8
         "  ranks: 8\n"                // 9
         "  iterations: 3\n"           // 10
         "  compute: 250us\n"          // 11
         "perturbations:\n"            // 12
         "  - type: delay\n"           // 13
         "    rank: 2\n"               // 14
         "    iteration: 1\n"          // 15
         "    duration: 1ms\n"         // 16
         "run:\n"                      // 17
         "  seed: 7\n"                 // 18
         "  eager_threshold: 8KiB\n";  // 19
}

// `text` with the first occurrence of `from` replaced by `to` (which must occur).
std::string replace(std::string text, const std::string& from, const std::string& to) {
  const auto pos = text.find(from);
  if (pos == std::string::npos) throw std::logic_error("test bug: '" + from + "' not in the scenario");
  return text.replace(pos, from.size(), to);
}

std::string error_of(const std::string& text, const std::vector<std::string>& overrides = {}) {
  try {
    parse_scenario(text, "t.yaml", overrides);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Scenario, ValidScenarioValues) {
  const Scenario s = parse_scenario(base_scenario(), "dir/t.yaml");
  EXPECT_EQ(s.name, "t");
  EXPECT_EQ(s.file, "dir/t.yaml");
  EXPECT_EQ(s.description, "a test");
  EXPECT_EQ(s.platform.type, "cluster");
  EXPECT_EQ(s.workload.type, "heat1d");
  EXPECT_EQ(s.workload.where, "dir/t.yaml:7:1");
  EXPECT_EQ(s.workload.options.integer("ranks"), 8);
  EXPECT_EQ(s.workload.options.integer("iterations"), 3);
  EXPECT_EQ(s.workload.options.number("compute"), 250e-6);
  EXPECT_EQ(s.workload.options.number("bytes"), 8.0);        // default "8B"
  EXPECT_EQ(s.workload.options.string("mode"), "blocking");  // default
  ASSERT_EQ(s.perturbations.size(), 1u);
  EXPECT_EQ(s.perturbations[0].type, "delay");
  EXPECT_EQ(s.perturbations[0].where, "dir/t.yaml:13:5");
  EXPECT_EQ(s.perturbations[0].options.integer("rank"), 2);
  EXPECT_EQ(s.perturbations[0].options.number("duration"), 1e-3);
  EXPECT_EQ(s.run.seed, 7u);
  EXPECT_EQ(s.run.eager_threshold, 8192.0);
  EXPECT_EQ(s.run.collectives, "fast");
  EXPECT_EQ(s.run.semantics, sim::Semantics::Waitlab);
  EXPECT_FALSE(s.run.baseline);
  EXPECT_EQ(s.outputs.dir, "out/t");
  EXPECT_TRUE(s.outputs.trace);
  EXPECT_TRUE(s.outputs.progress);
}

TEST(Scenario, MinimalScenarioTakesDefaults) {
  const Scenario s =
      parse_scenario("platform: {type: cluster, nodes: 2}\nworkload: {type: bcast_reduce, ranks: 2}\n",
                     "some/where/min-1.yaml");
  EXPECT_EQ(s.name, "min-1");  // the file name without .yaml
  EXPECT_EQ(s.description, "");
  EXPECT_TRUE(s.perturbations.empty());
  EXPECT_EQ(s.run.seed, 0u);
  EXPECT_EQ(s.run.eager_threshold, 65536.0);
  EXPECT_EQ(s.outputs.dir, "out/min-1");
  EXPECT_EQ(s.workload.options.integer("iterations"), 100);
}

TEST(Scenario, PrepareBuildsTheRun) {
  const Scenario s = parse_scenario(base_scenario(), "t.yaml");
  const scenarios::Run r = prepare(s);
  EXPECT_EQ(r.workload->ranks(), 8);
  EXPECT_EQ(r.workload->iterations(), 3);
  EXPECT_EQ(r.placement.size(), 8u);
  EXPECT_EQ(r.perturbations.models().size(), 1u);
  EXPECT_EQ(r.options.name, "t");
  EXPECT_EQ(r.options.seed, 7u);
  EXPECT_EQ(r.options.eager_threshold, 8192.0);
  EXPECT_EQ(r.options.collectives, "fast");
  EXPECT_FALSE(r.options.progress);
}

// ---- one test per kind of bad input ----

TEST(ScenarioErrors, YamlSyntax) {
  // yaml-cpp reports where it noticed the error: after the unclosed '[' of line 9.
  EXPECT_EQ(error_of(replace(base_scenario(), "  ranks: 8", "  ranks: [8")),
            "t.yaml:10:13: YAML syntax error: end of sequence flow not found");
  EXPECT_EQ(error_of(replace(base_scenario(), "  ranks: 8", "  ranks: 8\n ranks: 9")),
            "t.yaml:10:2: YAML syntax error: end of map not found");
}

TEST(ScenarioErrors, TabIndentationIsASyntaxError) {
  EXPECT_EQ(error_of(replace(base_scenario(), "  ranks: 8", "\tranks: 8")),
            "t.yaml:9:1: YAML syntax error: illegal tab when looking for indentation");
}

TEST(ScenarioErrors, UnknownSection) {
  EXPECT_EQ(error_of(replace(base_scenario(), "run:", "rnu:")),
            "t.yaml:17:1: unknown section 'rnu'; did you mean 'run'? (sections: name, description, platform, "
            "workload, perturbations, run, outputs, variants)");
}

TEST(ScenarioErrors, UnknownWorkloadOption) {
  EXPECT_EQ(error_of(replace(base_scenario(), "  iterations: 3", "  iteratons: 3")),
            "t.yaml:10:3: unknown option 'iteratons' for workload 'heat1d'; did you mean 'iterations'?");
}

TEST(ScenarioErrors, UnknownPerturbationOptionWithoutCloseName) {
  const std::string msg = error_of(replace(base_scenario(), "    rank: 2", "    victim: 2"));
  EXPECT_EQ(
      msg.rfind("t.yaml:14:5: unknown option 'victim' for perturbation 'delay' (options: rank, iteration, ",
                0),
      0u)
      << msg;
}

TEST(ScenarioErrors, UnknownRunKey) {
  EXPECT_EQ(error_of(replace(base_scenario(), "  seed: 7", "  sed: 7")),
            "t.yaml:18:3: unknown key 'sed' in run; did you mean 'seed'? (allowed: seed, eager_threshold, "
            "collectives, collective_algorithms, semantics, baseline, timing_precision, footprint)");
}

TEST(ScenarioErrors, UnknownAnalysis) {
  EXPECT_EQ(error_of(base_scenario() + "outputs:\n  analyses: [waitstate, dealy]\n"),
            "t.yaml:21:25: outputs.analyses: unknown analysis 'dealy'; did you mean 'delay'? (allowed: waitstate, "
            "delay, critpath, minprofile, idlewave, timeresolved, footprint, all)");
  EXPECT_EQ(error_of(base_scenario() + "outputs:\n  analyses: {delay: 1}\n"),
            "t.yaml:21:3: outputs.analyses: expected a list of analyses (e.g. [waitstate, delay, critpath]), got a "
            "mapping (key: value lines)");
  // Accepted forms, normalised: a list, a comma-separated value, `all`; delay implies waitstate.
  const auto analyses = [](const std::string& v) {
    return parse_scenario(base_scenario() + "outputs:\n  analyses: " + v + "\n", "t.yaml").outputs.analyses;
  };
  EXPECT_EQ(analyses("[critpath, delay]"), (std::vector<std::string>{"waitstate", "delay", "critpath"}));
  EXPECT_EQ(analyses("delay"), (std::vector<std::string>{"waitstate", "delay"}));
  EXPECT_EQ(analyses("all"), (std::vector<std::string>{"waitstate", "delay", "critpath", "minprofile", "idlewave",
                                                       "timeresolved"}));
  // outputs.windows: the time-resolved analysis' windows, checked where they are written.
  EXPECT_EQ(parse_scenario(base_scenario() + "outputs:\n  analyses: timeresolved\n  windows: 10ms\n", "t.yaml")
                .outputs.windows,
            "10ms");
  // Without the timeresolved analysis they would change nothing (issue 19).
  EXPECT_EQ(error_of(base_scenario() + "outputs:\n  analyses: waitstate\n  windows: 10ms\n"),
            "t.yaml:22:12: outputs.windows: only for the timeresolved analysis, which outputs.analyses does not select "
            "(add timeresolved to outputs.analyses)");
  EXPECT_EQ(error_of(base_scenario() + "outputs:\n  windows: often\n"),
            "t.yaml:21:12: outputs.windows: expected a number of equal windows (e.g. 50), a window length with its "
            "unit (e.g. 10ms) or adaptive[:N]; got 'often' ('often' is not a duration (use s, ms, us, ns))");
  EXPECT_EQ(analyses("[]"), std::vector<std::string>{});
}

TEST(ScenarioErrors, UnknownOutputsKey) {
  EXPECT_EQ(error_of(base_scenario() + "outputs:\n  directory: x\n"),
            "t.yaml:21:3: unknown key 'directory' in outputs (allowed: dir, trace, progress, analyses, windows)");
}

TEST(ScenarioErrors, UnknownWorkloadType) {
  EXPECT_EQ(
      error_of(replace(base_scenario(), "  type: heat1d", "  type: heat1")),
      "t.yaml:8:9: unknown workload 'heat1'; did you mean 'heat1d'? (workloads: heat1d, halo2d, halo3d, "
      "sweep2d, allreduce_loop, bcast_reduce, alltoall_loop, trace)");
}

TEST(ScenarioErrors, UnknownPerturbationType) {
  const std::string msg = error_of(replace(base_scenario(), "  - type: delay", "  - type: dealy"));
  EXPECT_EQ(
      msg.rfind("t.yaml:13:11: unknown perturbation 'dealy'; did you mean 'delay'? (perturbations: ", 0), 0u)
      << msg;
}

TEST(ScenarioErrors, BadUnit) {
  EXPECT_EQ(error_of(replace(base_scenario(), "  compute: 250us", "  compute: 250 parsecs")),
            "t.yaml:11:3: option 'compute' of workload 'heat1d': '250 parsecs' is not a duration (use s, ms, "
            "us, ns)");
}

TEST(ScenarioErrors, MissingUnit) {
  const std::string msg = error_of(replace(base_scenario(), "    duration: 1ms", "    duration: 1"));
  EXPECT_EQ(
      msg,
      "t.yaml:16:5: option 'duration' of perturbation 'delay': '1' is not a duration (use s, ms, us, ns)");
}

TEST(ScenarioErrors, BadUnitInRunSection) {
  const std::string msg =
      error_of(replace(base_scenario(), "  eager_threshold: 8KiB", "  eager_threshold: 8 kilo"));
  EXPECT_EQ(msg.rfind("t.yaml:19:20: run.eager_threshold: '8 kilo' is not ", 0), 0u) << msg;
  EXPECT_NE(msg.find("KiB"), std::string::npos) << msg;  // the allowed units
}

TEST(ScenarioErrors, MissingSection) {
  EXPECT_EQ(error_of("platform: {type: cluster}\n"),
            "t.yaml: missing section 'workload' (e.g. workload: {type: heat1d, ranks: 64})");
  EXPECT_EQ(error_of("workload: {type: heat1d, ranks: 2}\n"),
            "t.yaml: missing section 'platform' (e.g. platform: {type: cluster, nodes: 64})");
}

TEST(ScenarioErrors, EmptyFile) {
  EXPECT_EQ(error_of(""), "t.yaml: missing section 'platform' (e.g. platform: {type: cluster, nodes: 64})");
}

TEST(ScenarioErrors, MissingType) {
  const std::string msg = error_of(replace(base_scenario(), "  type: heat1d\n", ""));
  EXPECT_EQ(msg.rfind("t.yaml:7:1: workload: missing 'type' (one of: heat1d, halo2d, ", 0), 0u) << msg;
}

TEST(ScenarioErrors, MissingRequiredOption) {
  EXPECT_EQ(error_of(replace(base_scenario(), "    duration: 1ms\n", "")),
            "t.yaml:13:5: perturbation 'delay' needs option 'duration' (the extra compute time)");
}

TEST(ScenarioErrors, SectionOfTheWrongShape) {
  EXPECT_EQ(error_of(replace(base_scenario(), "run:\n  seed: 7\n  eager_threshold: 8KiB\n", "run: fast\n")),
            "t.yaml:17:1: run: expected a mapping (seed: 1, eager_threshold: 64KiB, ...), got a value");
  EXPECT_EQ(
      error_of("platform: {type: cluster, nodes: 2}\nworkload: {type: heat1d, ranks: 2}\nperturbations: "
               "{type: delay}\n"),
      "t.yaml:3:1: perturbations: expected a list (each entry starts with '- type: ...'), got a mapping "
      "(key: value lines)");
}

TEST(ScenarioErrors, DuplicateKey) {
  EXPECT_EQ(error_of(replace(base_scenario(), "  iterations: 3", "  iterations: 3\n  ranks: 4")),
            "t.yaml:11:3: duplicate key 'ranks' (first given at t.yaml:9:3)");
}

TEST(ScenarioErrors, EmptyValue) {
  EXPECT_EQ(error_of(replace(base_scenario(), "  iterations: 3", "  iterations:")),
            "t.yaml:10:3: option 'iterations' of workload 'heat1d': expected a value, got nothing");
}

TEST(ScenarioErrors, NegativeDuration) {
  EXPECT_EQ(
      error_of(replace(base_scenario(), "    duration: 1ms", "    duration: -5ms")),
      "t.yaml:16:5: option 'duration' of perturbation 'delay': '-5ms' is impossible: a duration cannot be "
      "negative");
}

TEST(ScenarioErrors, MoreRanksThanCores) {
  EXPECT_EQ(error_of(replace(base_scenario(), "  ranks: 8", "  ranks: 9")),
            "t.yaml:9:3: platform has 8 cores but the workload needs 9 ranks (add nodes or cores, or lower "
            "workload.ranks)");
}

TEST(ScenarioErrors, WorkloadRejectsValuePointsAtOption) {
  // heat1d's own range check ("between 1 and ...") names the option; the loader points at its line.
  const std::string msg = error_of(replace(base_scenario(), "  iterations: 3", "  iterations: 0"));
  EXPECT_EQ(msg.rfind("t.yaml:10:3: option 'iterations' of workload heat1d: must be between 1 and ", 0), 0u)
      << msg;
}

TEST(ScenarioErrors, PerturbationOfMissingRank) {
  const std::string msg = error_of(replace(base_scenario(), "    rank: 2", "    rank: 8"));
  EXPECT_EQ(msg.rfind("t.yaml:14:5: option 'rank' of perturbation delay: ", 0), 0u) << msg;
}

TEST(ScenarioErrors, BadChoice) {
  EXPECT_EQ(
      error_of(replace(base_scenario(), "  iterations: 3", "  iterations: 3\n  mode: blockin")),
      "t.yaml:11:3: option 'mode' of workload 'heat1d': 'blockin' is not one of blocking, nonblocking, two_phase; "
      "did you mean 'blocking'?");
}

TEST(ScenarioErrors, BadRunValues) {
  EXPECT_EQ(error_of(replace(base_scenario(), "  seed: 7", "  seed: -1")),
            "t.yaml:18:9: run.seed: expected a whole number between 0 and 2^64-1, got '-1'");
  EXPECT_EQ(error_of(base_scenario() + "  semantics: smpi\n"),
            "t.yaml:20:14: run.semantics: unknown semantics 'smpi' (allowed: waitlab, smpi-default)");
  EXPECT_EQ(error_of(base_scenario() + "  collectives: mpj\n"),
            "t.yaml:20:16: run.collectives: unknown collective set 'mpj'; did you mean 'mpi'? (sets: fast, "
            "mpi, default)");
  EXPECT_EQ(error_of(base_scenario() + "  collective_algorithms: {alltoall: pair, bcast: nosuch}\n"),
            "t.yaml:20:50: run.collective_algorithms: collective 'bcast' has no algorithm 'nosuch' (SimGrid 3.32's "
            "algorithms for bcast: default, arrival_pattern_aware, arrival_pattern_aware_wait, arrival_scatter, "
            "binomial_tree, flattree, flattree_pipeline, NTSB, NTSL, NTSL_Isend, scatter_LR_allgather, "
            "scatter_rdb_allgather, SMP_binary, SMP_binomial, SMP_linear, ompi, ompi_split_bintree, ompi_pipeline, "
            "mpich, mvapich2, mvapich2_inter_node, mvapich2_intra_node, mvapich2_knomial_intra_node, impi, "
            "automatic)");
  EXPECT_EQ(error_of(base_scenario() + "  collective_algorithms:\n    scan: pair\n"),
            "t.yaml:21:5: run.collective_algorithms: unknown collective 'scan' (collectives "
            "whose algorithm SMPI lets one choose: gather, allgather, allgatherv, allreduce, alltoall, alltoallv, "
            "bcast, reduce, reduce_scatter, scatter, barrier)");
  EXPECT_EQ(error_of(base_scenario() + "  collective_algorithms: {reduce: arrival_pattern_aware}\n")
                .rfind("t.yaml:20:35: run.collective_algorithms: collective 'reduce': waitlab cannot run SimGrid's "
                       "algorithm 'arrival_pattern_aware': it receives from MPI_ANY_SOURCE",
                       0),
            0u);
  EXPECT_EQ(error_of(base_scenario() + "  baseline: maybe\n"),
            "t.yaml:20:13: run.baseline: 'maybe' is not a boolean (use true or false)");
}

// One set of words for booleans everywhere: scenario keys (run, outputs) and model options.
TEST(Scenario, BooleansMeanTheSameInEverySection) {
  for (const auto& [word, value] : std::vector<std::pair<std::string, bool>>{{"true", true},
                                                                             {"True", true},
                                                                             {"TRUE", true},
                                                                             {"yes", true},
                                                                             {"On", true},
                                                                             {"false", false},
                                                                             {"False", false},
                                                                             {"no", false},
                                                                             {"OFF", false}}) {
    // Written in the file ...
    const std::string text = replace(replace(base_scenario(), "  compute: 250us\n",
                                             "  compute: 250us\n  periodic: " + word + "\n"),
                                     "  seed: 7\n", "  seed: 7\n  baseline: " + word + "\n") +
                             "outputs: {trace: " + word + ", progress: " + word + "}\n";
    const Scenario s = parse_scenario(text, "t.yaml");
    EXPECT_EQ(s.workload.options.boolean("periodic"), value) << word;
    EXPECT_EQ(s.run.baseline, value) << word;
    EXPECT_EQ(s.outputs.trace, value) << word;
    EXPECT_EQ(s.outputs.progress, value) << word;
    // ... and given with --set.
    const Scenario o = parse_scenario(base_scenario(), "t.yaml",
                                      {"workload.periodic=" + word, "run.baseline=" + word,
                                       "outputs.trace=" + word, "outputs.progress=" + word});
    EXPECT_EQ(o.workload.options.boolean("periodic"), value) << word;
    EXPECT_EQ(o.run.baseline, value) << word;
    EXPECT_EQ(o.outputs.trace, value) << word;
    EXPECT_EQ(o.outputs.progress, value) << word;
  }
  // Anything else is refused everywhere, with the same words.
  for (const std::string word : {"maybe", "1", "0", "y", "truee"}) {
    const std::string tail = ": '" + word + "' is not a boolean (use true or false)";
    EXPECT_EQ(error_of(base_scenario(), {"run.baseline=" + word}),
              "--set run.baseline=" + word + ": run.baseline" + tail);
    EXPECT_EQ(error_of(base_scenario(), {"outputs.trace=" + word}),
              "--set outputs.trace=" + word + ": outputs.trace" + tail);
    EXPECT_EQ(error_of(base_scenario(), {"workload.periodic=" + word}),
              "--set workload.periodic=" + word + ": option 'periodic' of workload 'heat1d'" + tail);
  }
}

TEST(ScenarioErrors, BadName) {
  EXPECT_EQ(error_of(replace(base_scenario(), "name: t", "name: a/b")),
            "t.yaml:1:7: name: 'a/b' is not a valid scenario name (letters, digits, '_', '-', '.'; used as a "
            "directory name)");
}

TEST(ScenarioErrors, NotAScenario) {
  EXPECT_EQ(
      error_of("- a\n- b\n"),
      "t.yaml:1:1: expected a scenario (sections: name, description, platform, workload, perturbations, "
      "run, outputs, variants), got a list");
}

TEST(ScenarioErrors, MissingPlatformFile) {
  EXPECT_EQ(
      error_of(replace(base_scenario(), "  type: cluster\n  nodes: 4\n  cores: 2\n",
                       "  type: xml\n  file: nowhere.xml\n")),
      "t.yaml:5:3: option 'file' of platform 'xml': no such file nowhere.xml (a relative path is relative to "
      "the scenario file)");
}

TEST(Scenario, XmlPlatformPathIsRelativeToTheScenarioFile) {
  const auto dir = std::filesystem::temp_directory_path() / ("wl_xml_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "platforms");
  std::ofstream(dir / "platforms" / "p.xml") << "<?xml version='1.0'?>\n";
  std::ofstream(dir / "s.yaml") << "platform: {type: xml, file: platforms/p.xml}\n"
                                   "workload: {type: heat1d, ranks: 2}\n";
  const Scenario s = load_scenario((dir / "s.yaml").string());
  EXPECT_EQ(prepare(s).platform.xml_file, (dir / "platforms" / "p.xml").string());
  std::filesystem::remove_all(dir);
}

TEST(ScenarioErrors, PlatformRejectsValue) {
  EXPECT_EQ(error_of(replace(base_scenario(), "  nodes: 4", "  nodes: 0")),
            "t.yaml:5:3: option 'nodes' of platform cluster: must be a whole number between 1 and "
            "2147483647, got 0");
}

TEST(ScenarioErrors, DirectoryIsNotAScenario) {
  const auto dir = std::filesystem::temp_directory_path() / ("wl_dir_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "sub");
  const auto error = [](const std::filesystem::path& p) {
    try {
      load_scenario(p.string());
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(error(dir), dir.string() + ": is a directory, not a scenario file (give a YAML file)");
  std::ofstream(dir / "z.yaml") << base_scenario();
  std::ofstream(dir / "m.yaml") << base_scenario();
  std::ofstream(dir / "a.txt") << "not a scenario";
  EXPECT_EQ(error(dir), dir.string() + ": is a directory, not a scenario file; did you mean " +
                            (dir / "m.yaml").string() + "?");
  // A link to a scenario file is a scenario file; a link to a directory is a directory.
  std::filesystem::create_symlink(dir / "m.yaml", dir / "link.yaml");
  EXPECT_EQ(load_scenario((dir / "link.yaml").string()).name, "t");
  std::filesystem::create_directory_symlink(dir / "sub", dir / "dirlink");
  EXPECT_EQ(error(dir / "dirlink"),
            (dir / "dirlink").string() + ": is a directory, not a scenario file (give a YAML file)");
  EXPECT_EQ(error("/dev/null"), "/dev/null: not a regular file (a scenario is a YAML file)");
  std::filesystem::remove_all(dir);
}

TEST(ScenarioErrors, MissingFile) {
  try {
    load_scenario("/nonexistent/x.yaml");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "/nonexistent/x.yaml: no such scenario file");
  }
}

}  // namespace
}  // namespace waitlab::scenarios
