// What-if variants and sweeps (docs/whatif.md): a rebalanced region keeps its total work; the
// variants' changes reach the simulation (removed causes inject nothing, an ideal network is
// faster, a scaled rank computes less); bad variants are errors naming file:line:col; a study
// gives byte-identical outputs one job at a time, two at a time, as shares merged, and under
// `mpirun -np 2 waitlab-mpi`.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "util/error.hpp"
#include "app/summary.hpp"
#include "scenarios/scenario.hpp"
#include "tests/temp_dir.hpp"

namespace waitlab {
namespace {

namespace fs = std::filesystem;
using test::slurp;

const std::string kSource = WAITLAB_SOURCE_DIR;
const std::string kHotspot = kSource + "/scenarios/whatif/halo2d_hotspot.yaml";

// A small hot-spot halo with two regions' worth of variants, fast enough for every test.
const std::string kSmall = R"(name: small
platform: {type: cluster, nodes: 4, cores: 4}
workload: {type: halo2d, ranks: 16, px: 4, py: 4, iterations: 8, compute: 1ms, bytes: 4KiB}
perturbations:
  - {type: imbalance_hotspot, center: [1, 1], radius: 1, factor: 2}
  - {type: delay, rank: 3, iteration: 2, duration: 3ms}
  - {type: periodic_noise, frequency: 1kHz, duration: 20us}
run: {seed: 2}
variants:
  - {name: balanced, rebalance: {region: compute, to: mean}}
  - {name: at_min, rebalance: {region: compute, to: min}}
  - {name: no_delay, remove: delay}
  - {name: quiet, remove: [noise, imbalance]}
  - {name: ideal, network: ideal}
  - {name: rank5_fast, scale: ["compute@5=0.5"]}
  - {name: bigger, set: [workload.iterations=10]}
  - {name: flat, platform: {type: cluster, nodes: 2, cores: 8}}
)";

struct RegionWork {
  double total = 0;
  std::vector<double> per_rank;
};

// Σ (nominal + injected imbalance) of the compute in region `name`, from the ground truth.
RegionWork region_work(const trace::Trace& t, const std::string& name) {
  RegionWork w;
  w.per_rank.assign(t.locations.size(), 0.0);
  for (std::size_t r = 0; r < t.locations.size(); ++r)
    for (const auto& c : t.locations[r].truth)
      if (t.defs.regions[c.region].name == name) {
        const double v = c.nominal + c.injected[static_cast<std::size_t>(trace::Cause::Imbalance)];
        w.per_rank[r] += v;
        w.total += v;
      }
  return w;
}

// The variant's region holds the baseline's total work, every rank the mean (to 1e-9);
// returns the baseline's work.
RegionWork expect_rebalanced_to_mean(const trace::Trace& base, const trace::Trace& balanced) {
  const RegionWork b = region_work(base, "compute");
  const RegionWork v = region_work(balanced, "compute");
  EXPECT_GT(b.total, 0);
  EXPECT_NEAR(v.total / b.total, 1.0, 1e-9);
  const double mean = b.total / static_cast<double>(b.per_rank.size());
  for (double w : v.per_rank) EXPECT_NEAR(w / mean, 1.0, 1e-9);
  return b;
}

class WhatIf : public test::TempDirTest {
 protected:
  app::Outcome simulate(const std::string& file, const std::string& variant) const {
    const auto s = scenarios::load_scenario(file, {}, {variant, {}});
    return app::simulate_scenario(s, false);
  }
  struct Result {
    int code = 0;
    std::string out, err;
  };
  Result run(const std::string& command) const {
    const auto out = dir_ / "stdout.txt", err = dir_ / "stderr.txt";
    const int status = std::system((command + " >'" + out.string() + "' 2>'" + err.string() + "'").c_str());
    return Result{WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
  }
  Result waitlab(const std::string& args) const { return run(std::string("'") + WAITLAB_BINARY + "' " + args); }
};

TEST_F(WhatIf, RebalancingKeepsTheRegionsTotalWork) {
  const std::string file = write("small.yaml", kSmall);
  const auto base = simulate(file, "");
  const auto bal = simulate(file, "balanced");
  // The hot spot (factor 2 on 9 of 16 ranks) is gone: every rank does the mean.
  ASSERT_EQ(base.result.trace.locations.size(), 16u);
  const RegionWork b = expect_rebalanced_to_mean(base.result.trace, bal.result.trace);
  const auto [lo, hi] = std::minmax_element(b.per_rank.begin(), b.per_rank.end());
  EXPECT_NEAR(*hi / *lo, 2.0, 1e-9);  // the baseline really was imbalanced
  // To the minimum: every rank does what the fastest did.
  const RegionWork m = region_work(simulate(file, "at_min").result.trace, "compute");
  for (double w : m.per_rank) EXPECT_NEAR(w / *lo, 1.0, 1e-9);
  // Balancing removes the hot spot's waiting: the run is shorter.
  EXPECT_LT(bal.fig.wall_time, base.fig.wall_time);
  // Delays and noise are not the region's work: they stay.
  EXPECT_DOUBLE_EQ(bal.fig.injected[static_cast<std::size_t>(trace::Cause::Delay)].total, 3e-3);
  EXPECT_GT(bal.fig.injected[static_cast<std::size_t>(trace::Cause::Noise)].total, 0);
}

TEST_F(WhatIf, EachChangeReachesTheSimulation) {
  const std::string file = write("small.yaml", kSmall);
  const auto base = simulate(file, "");
  const auto delay = static_cast<std::size_t>(trace::Cause::Delay);
  const auto noise = static_cast<std::size_t>(trace::Cause::Noise);
  const auto imbalance = static_cast<std::size_t>(trace::Cause::Imbalance);
  EXPECT_DOUBLE_EQ(base.fig.injected[delay].total, 3e-3);

  const auto no_delay = simulate(file, "no_delay");
  EXPECT_EQ(no_delay.fig.injected[delay].total, 0);
  EXPECT_GT(no_delay.fig.injected[noise].total, 0);
  const auto quiet = simulate(file, "quiet");
  EXPECT_EQ(quiet.fig.injected[noise].total, 0);
  EXPECT_EQ(quiet.fig.injected[imbalance].total, 0);
  EXPECT_DOUBLE_EQ(quiet.fig.injected[delay].total, 3e-3);

  // The same events, faster on an ideal network; the compute is the same.
  const auto ideal = simulate(file, "ideal");
  EXPECT_EQ(ideal.fig.events, base.fig.events);
  EXPECT_DOUBLE_EQ(ideal.fig.nominal_compute, base.fig.nominal_compute);
  EXPECT_LT(ideal.fig.wall_time, base.fig.wall_time);

  // Rank 5 computes half its nominal time; nobody else changes.
  const auto fast = simulate(file, "rank5_fast");
  double base5 = 0, fast5 = 0;
  for (const auto& c : base.result.trace.locations[5].truth) base5 += c.nominal;
  for (const auto& c : fast.result.trace.locations[5].truth) fast5 += c.nominal;
  EXPECT_NEAR(fast5, base5 / 2, 1e-12);
  EXPECT_NEAR(fast.fig.nominal_compute, base.fig.nominal_compute - base5 / 2, 1e-12);

  EXPECT_EQ(simulate(file, "bigger").iterations, 10);
  const auto flat = scenarios::load_scenario(file, {}, {"flat", {}});
  EXPECT_EQ(flat.platform.options.number("nodes"), 2);
  EXPECT_EQ(flat.variant, "flat");
}

// A measured run is a trace: replayed, its regions can be rebalanced as a synthetic
// workload's; `whatif RUN_DIR` finds the run's scenario and overrides.
TEST_F(WhatIf, ReplayedTraceAndRunDirectory) {
  const std::string file = write("small.yaml", kSmall);
  const auto run = waitlab("run '" + file + "' --set workload.iterations=6 --no-progress --out '" +
                           (dir_ / "measured").string() + "'");
  ASSERT_EQ(run.code, 0) << run.err;
  const std::string replay = write("replay.yaml", R"(platform: {type: cluster, nodes: 4, cores: 4}
workload: {trace: measured/trace.wlt}
variants:
  - {name: balanced, rebalance: compute}
)");
  const auto base = simulate(replay, "");
  const auto bal = simulate(replay, "balanced");
  ASSERT_EQ(base.result.trace.locations.size(), 16u);
  (void)expect_rebalanced_to_mean(base.result.trace, bal.result.trace);
  EXPECT_LT(bal.fig.wall_time, base.fig.wall_time);

  // whatif on the run directory: the scenario file and --set of that run, plus a variant.
  const auto w = waitlab("whatif '" + (dir_ / "measured").string() +
                         "' --only no_delay --variant '{name: ideal2, network: ideal}' --only ideal2 --out '" +
                         (dir_ / "wi").string() + "'");
  ASSERT_EQ(w.code, 0) << w.out << w.err;
  const auto j = nlohmann::json::parse(slurp(dir_ / "wi" / "whatif.json"));
  ASSERT_EQ(j["runs"].size(), 3u);
  const auto measured = nlohmann::json::parse(slurp(dir_ / "measured" / "summary.json"));
  EXPECT_DOUBLE_EQ(j["runs"][0]["figures"]["wall_time_s"].get<double>(), measured["wall_time_s"].get<double>());
  EXPECT_EQ(j["runs"][1]["name"], "no_delay");
  EXPECT_EQ(j["runs"][2]["changes"][0], "network ideal");
  // A variant of a replayed trace is checked before anything runs.
  const auto typo = waitlab("whatif '" + replay + "' --variant '{name: typo, rebalance: nosuch}' --out '" +
                            (dir_ / "wi2").string() + "'");
  EXPECT_EQ(typo.code, 2);
  EXPECT_NE(typo.err.find("--variant:1:1: workload 'trace.wlt' has no region 'nosuch' (its regions: compute, exchange, main)"), std::string::npos) << typo.err;
  EXPECT_FALSE(fs::exists(dir_ / "wi2" / "baseline"));
  // A variant's own run directory is not a scenario to vary.
  const auto variant_dir = waitlab("whatif '" + (dir_ / "wi" / "ideal2").string() + "'");
  EXPECT_EQ(variant_dir.code, 2);
  EXPECT_NE(variant_dir.err.find("the run of variant 'ideal2' of a study"), std::string::npos) << variant_dir.err;
  // A directory that is not a run.
  const auto bad = waitlab("whatif '" + dir_.string() + "'");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("not a run directory (no summary.json and host.json) and not a scenario file"),
            std::string::npos)
      << bad.err;
}

TEST_F(WhatIf, BadVariantsNameFileLineAndColumn) {
  const auto error = [&](const std::string& variants, const std::string& variant = "") {
    const std::string text = R"(platform: {type: cluster, nodes: 4, cores: 4}
workload: {type: halo2d, ranks: 16, px: 4, py: 4, iterations: 2}
perturbations:
  - {type: delay, rank: 3, iteration: 1, duration: 3ms}
variants:
)" + variants;
    const std::string file = write("bad.yaml", text);
    try {
      (void)scenarios::load_scenario(file, {}, {variant, {}});
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string f = (dir_ / "bad.yaml").string();
  EXPECT_EQ(error("  - {name: a, remov: delay}\n"),
            f + ":6:15: unknown key 'remov' in variants[0]; did you mean 'remove'? (allowed: name, description, "
                "remove, set, platform, rebalance, scale, network)");
  EXPECT_EQ(error("  - {name: a, remove: noise}\n", "a"),
            f + ":6:23: variants[0].remove: 'noise' matches no perturbation of the scenario (perturbations: 0: "
                "delay; name a cause — imbalance, delay, noise, all —, a type or an index)");
  EXPECT_EQ(error("  - {name: a, network: {bandwidth: fast}}\n", "a"),
            f + ":6:36: variants[0].network.bandwidth: expected a factor > 0 (a plain number such as 2 or 0.5), got "
                "'fast'");
  EXPECT_EQ(error("  - {name: a, rebalance: {region: fixup}}\n", "a"),
            f + ":6:5: workload 'halo2d' has no region 'fixup' (its regions: compute, exchange)");
  EXPECT_EQ(error("  - {name: a, set: [workload.iteratons=3]}\n", "a"),
            f + ":6:21: variants[0].set 'workload.iteratons=3': unknown option 'iteratons' for workload 'halo2d'; "
                "did you mean 'iterations'?");
  EXPECT_EQ(error("  - {name: a, remove: []}\n", "a"),
            f + ":6:5: variants[0] ('a') changes nothing (its lists are empty, or network says ideal: false)");
  EXPECT_EQ(error("  - {name: a, network: {ideal: true, latency: 2}}\n", "a"),
            f + ":6:5: variants[0].network: ideal and a bandwidth or latency factor exclude each other");
  EXPECT_EQ(error("  - {name: a}\n"),
            f + ":6:5: variants[0] ('a') changes nothing (give remove, set, platform, rebalance, scale or network)");
  EXPECT_EQ(error("  - {name: a, remove: delay}\n  - {name: a, remove: 0}\n"),
            f + ":7:12: variants[1].name: 'a' is also the name of variants[0] (" + f + ":6:5)");
  EXPECT_EQ(error("  - {name: a, remove: delay}\n", "b"), f + ": no variant 'b'; did you mean 'a'? (variants: a)");
  // The command line: exit code 2, the message on standard error.
  const auto r = waitlab("whatif '" + f + "' --variant '{name: x, network: fast}' --out '" + (dir_ / "o").string() +
                         "'");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("variants[1].network: 'fast' (expected ideal, or {bandwidth: FACTOR, latency: FACTOR})"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "o" / "whatif.csv"));
}

TEST_F(WhatIf, StudyOutputsDoNotDependOnHowTheJobsRan) {
  const std::string file = write("small.yaml", kSmall);
  const std::string only = " --only balanced,no_delay,ideal,rank5_fast";
  const auto one = waitlab("whatif '" + file + "'" + only + " -j 1 --out '" + (dir_ / "one").string() + "'");
  ASSERT_EQ(one.code, 0) << one.out << one.err;
  const auto two = waitlab("whatif '" + file + "'" + only + " -j 2 --out '" + (dir_ / "two").string() + "'");
  ASSERT_EQ(two.code, 0) << two.out << two.err;
  for (const char* f : {"whatif.csv", "whatif.json", "whatif.html"})
    EXPECT_EQ(slurp(dir_ / "one" / f), slurp(dir_ / "two" / f)) << f;
  // The baseline row is the scenario's own run.
  const auto j = nlohmann::json::parse(slurp(dir_ / "one" / "whatif.json"));
  ASSERT_EQ(j["runs"].size(), 5u);
  const auto base = simulate(file, "");
  EXPECT_EQ(j["runs"][0]["name"], "baseline");
  EXPECT_DOUBLE_EQ(j["runs"][0]["figures"]["wall_time_s"].get<double>(), base.fig.wall_time);
  EXPECT_EQ(j["runs"][1]["changes"][0], "rebalance compute to the mean");
  EXPECT_LT(j["runs"][3]["figures"]["wall_time_s"].get<double>(), base.fig.wall_time);  // ideal
  EXPECT_TRUE(fs::exists(dir_ / "one" / "balanced" / "report.html"));

  // Shares written as records and merged give the same files again.
  const std::string common = "whatif '" + file + "'" + only + " --out '" + (dir_ / "shares").string() + "'";
  ASSERT_EQ(waitlab(common + " --share 0/2 --records '" + (dir_ / "r0").string() + "'").code, 0);
  ASSERT_EQ(waitlab(common + " --share 1/2 --records '" + (dir_ / "r1").string() + "'").code, 0);
  const auto merged =
      waitlab(common + " --merge '" + (dir_ / "r1").string() + "' --merge '" + (dir_ / "r0").string() + "'");
  ASSERT_EQ(merged.code, 0) << merged.err;
  EXPECT_EQ(slurp(dir_ / "one" / "whatif.csv"), slurp(dir_ / "shares" / "whatif.csv"));
  EXPECT_EQ(slurp(dir_ / "one" / "whatif.json"), slurp(dir_ / "shares" / "whatif.json"));
  // A record file that lacks a share is an error, not a short table.
  const auto half = waitlab(common + " --merge '" + (dir_ / "r0").string() + "'");
  EXPECT_EQ(half.code, 2);
  EXPECT_NE(half.err.find("the records hold 3 of the study's 5 jobs"), std::string::npos) << half.err;
  // Records of another study, a share without records, a merge with a share: errors.
  const auto other = waitlab("whatif '" + file + "' --only balanced,no_delay,ideal,bigger --out '" +
                             (dir_ / "shares").string() + "' --merge '" + (dir_ / "r1").string() + "' --merge '" +
                             (dir_ / "r0").string() + "'");
  EXPECT_EQ(other.code, 2);
  EXPECT_NE(other.err.find("the record of job 4 ('rank5_fast') is not of this study (expected 'bigger')"),
            std::string::npos)
      << other.err;
  EXPECT_EQ(waitlab(common + " --share 0/2").code, 2);
  EXPECT_EQ(waitlab(common + " --share 0/2 --records x --merge y").code, 2);
  write("bad_record", "{\"job\": 0, \"figures\": {}}\n");
  const auto bad = waitlab(common + " --merge '" + (dir_ / "bad_record").string() + "'");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("bad_record:1: not a study record (no name)"), std::string::npos) << bad.err;
}

TEST_F(WhatIf, SweepUnderMpirunEqualsTheSequentialSweep) {
  const std::string file = write("small.yaml", kSmall);
  const std::string grid =
      " --grid 'perturbations[1].duration=1ms,2ms,4ms,8ms' --grid 'perturbations[2].frequency=1kHz,2kHz'";
  const auto seq = waitlab("sweep '" + file + "'" + grid + " --out '" + (dir_ / "seq").string() + "'");
  ASSERT_EQ(seq.code, 0) << seq.out << seq.err;
  const std::string csv = slurp(dir_ / "seq" / "sweep.csv");
  // 8 grid points, first key slowest; a longer delay never makes the run shorter.
  std::vector<std::string> lines;
  for (std::size_t p = 0, q; (q = csv.find('\n', p)) != std::string::npos; p = q + 1) lines.push_back(csv.substr(p, q - p));
  ASSERT_EQ(lines.size(), 9u);
  EXPECT_EQ(lines[0].substr(0, 69), "job,name,perturbations[1].duration,perturbations[2].frequency,wall_ti");
  EXPECT_EQ(lines[1].substr(0, 25), "0,point_0000,1ms,1kHz,0.0");
  EXPECT_EQ(lines[8].substr(0, 25), "7,point_0007,8ms,2kHz,0.0");
  const auto j = nlohmann::json::parse(slurp(dir_ / "seq" / "sweep.json"));
  for (std::size_t i = 2; i < 8; i += 2)
    EXPECT_GE(j["runs"][i]["figures"]["wall_time_s"].get<double>(),
              j["runs"][i - 2]["figures"]["wall_time_s"].get<double>());

  // The same sweep on two MPI ranks (each runs its share, rank 0 merges).
  const std::string mpi_runner = (fs::path(WAITLAB_BINARY).parent_path() / "waitlab-mpi").string();
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  const auto mpi = run("mpirun --oversubscribe -np 2 '" + mpi_runner + "' sweep '" + file + "'" + grid + " --out '" +
                       (dir_ / "mpi").string() + "'");
  ASSERT_EQ(mpi.code, 0) << mpi.out << mpi.err;
  EXPECT_EQ(slurp(dir_ / "mpi" / "sweep.csv"), csv);
  EXPECT_EQ(slurp(dir_ / "mpi" / "sweep.json"), slurp(dir_ / "seq" / "sweep.json"));
  // Every point ran (rank 0 the even ones, rank 1 the odd ones; merged records of both).
  for (int i = 0; i < 8; ++i)
    EXPECT_TRUE(fs::exists(dir_ / "mpi" / ("point_000" + std::to_string(i)) / "summary.json")) << i;
}

}  // namespace
}  // namespace waitlab
