// The counterfactual footprint of a perturbation (analysis/footprint; issue 34, point 4): a
// noise-free idle wave shifts every rank it reaches by the delay, exactly, and the whole delay
// reaches the end of the run; the command line's run.footprint / --footprint, its outputs and its
// errors. The three noise levels are in tests/idlewave/test_footprint_noise.cpp (label idlewave).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/footprint/footprint.hpp"
#include "analysis/trace/csv.hpp"
#include "analysis/waitstate/waitstate.hpp"
#include "app/analyze.hpp"
#include "app/commands.hpp"
#include "app/summary.hpp"
#include "nlohmann/json.hpp"
#include "scenarios/scenario.hpp"
#include "tests/temp_dir.hpp"
#include "util/error.hpp"

namespace waitlab {
namespace {

namespace fs = std::filesystem;
const std::string kSource = WAITLAB_SOURCE_DIR;
const std::string kSingleDelay = kSource + "/scenarios/teaching/single_delay.yaml";

// 64 ranks, rank 32 delayed by 20 ms in iteration 5 of 80: the wave reaches both ends of the
// chain (32 ranks down, 31 up, one rank per 1 ms iteration) long before the run ends.
const std::vector<std::string> kSmall = {"workload.ranks=64",          "platform.nodes=64",
                                         "workload.iterations=80",     "perturbations[0].rank=32",
                                         "perturbations[0].iteration=5", "run.footprint=delay"};

analysis::IdleWaveResult idle_of(const trace::Trace& t) {
  const auto m = trace::Matching::build(t);
  return analysis::idle_waves(t, m, analysis::wait_states(t, m));
}

struct Twins {
  app::Outcome o;
  analysis::IdleWaveResult run_idle, twin_idle;
  analysis::FootprintResult f;
};

Twins simulate_twins(const std::vector<std::string>& sets) {
  Twins t;
  t.o = app::simulate_scenario(scenarios::load_scenario(kSingleDelay, sets), false);
  t.run_idle = idle_of(t.o.result.trace);
  t.twin_idle = idle_of(t.o.twin->trace);
  t.f = analysis::footprint(t.o.result.trace, t.o.twin->trace, t.run_idle, t.twin_idle);
  return t;
}

TEST(Footprint, NoiseFreeWaveShiftsEveryRankItReachedByTheDelayExactly) {
  const Twins t = simulate_twins(kSmall);
  const auto& f = t.f;
  ASSERT_TRUE(t.o.twin.has_value());
  EXPECT_EQ(f.removed, std::vector<std::string>{"delay"});
  EXPECT_EQ(f.source, 32);
  EXPECT_DOUBLE_EQ(f.injected, 0.02);
  // The whole delay reaches the end of the run: nothing absorbs it without noise or imbalance.
  EXPECT_NEAR(f.reached_end, 0.02, 1e-12);
  EXPECT_NEAR(f.absorbed, 0.0, 1e-12);
  EXPECT_NEAR(f.reached_fraction(), 1.0, 1e-9);
  EXPECT_EQ(f.events, t.o.result.trace.event_count());
  ASSERT_EQ(f.ranks.size(), 64u);
  for (const auto& r : f.ranks) {
    SCOPED_TRACE("rank " + std::to_string(r.rank));
    EXPECT_EQ(r.offset, r.rank - 32);
    // Every rank is shifted by the delay once the wave has passed it, and by no more.
    EXPECT_NEAR(r.peak_shift, 0.02, 1e-12);
    EXPECT_NEAR(r.end_shift, 0.02, 1e-12);
    // The twin is the noise-free run without the delay: no idle period inside the chain; the two
    // ends, which exchange with one neighbour only, wait a few µs for it in the whole run.
    if (r.rank == 0 || r.rank == 63)
      EXPECT_LT(r.twin_largest_idle, 1e-5);
    else
      EXPECT_EQ(r.twin_largest_idle, 0.0);
  }
  // The wave reaches every rank: every level reaches both ends, as far as the tracker followed it.
  ASSERT_EQ(f.reach.size(), analysis::kFootprintLevels.size());
  for (const auto& x : f.reach) {
    EXPECT_EQ(x.down, 32);
    EXPECT_EQ(x.up, 31);
  }
  EXPECT_EQ(f.wave_down, 32);
  EXPECT_EQ(f.wave_up, 31);
  // The shift matrix: each row 0 until the wave arrives (to a ns: the chain's ends drift by
  // fractions of a ns against the twin), then the delay; the matrix's bins are one undisturbed
  // iteration long.
  const auto& m = f.shift;
  ASSERT_EQ(m.ranks, 64u);
  ASSERT_GT(m.bins, 80u);
  std::vector<std::size_t> arrival(64, m.bins);
  for (std::size_t r = 0; r < 64; ++r) {
    for (std::size_t b = 0; b < m.bins; ++b) {
      const double v = m.at(r, b);
      if (arrival[r] == m.bins && v > 0.01) arrival[r] = b;
      EXPECT_NEAR(v, arrival[r] != m.bins ? 0.02 : 0.0, 1e-9) << "rank " << r << " bin " << b;
    }
    ASSERT_LT(arrival[r], m.bins) << "rank " << r;
  }
  // The source's neighbours are shifted in the bin the source is: their receive from it ends when
  // its delayed computation does; from there on one rank per iteration.
  for (int d = 1; d <= 31; ++d) {
    const std::size_t expected = arrival[32] + static_cast<std::size_t>(d - 1);
    EXPECT_EQ(arrival[static_cast<std::size_t>(32 + d)], expected) << d;
    EXPECT_EQ(arrival[static_cast<std::size_t>(32 - d)], expected) << d;
  }
  EXPECT_EQ(arrival[0], arrival[32] + 31);
}

TEST(Footprint, TwinKeepsTheSeedAndTheNoise) {
  // Removing only the delay keeps the noise: before the wave arrives, a rank far from the source
  // runs exactly as in its twin (its first events are not shifted at all).
  const Twins t = simulate_twins({"workload.ranks=64", "platform.nodes=64", "workload.iterations=60",
                                  "perturbations[0].rank=32", "perturbations[0].iteration=20",
                                  "perturbations[1].type=random_noise", "perturbations[1].rate=1kHz",
                                  "perturbations[1].duration=100us",
                                  "run.footprint=delay"});
  EXPECT_EQ(t.f.removed, std::vector<std::string>{"delay"});
  EXPECT_EQ(t.f.source, 32);
  const auto& a = t.o.result.trace.locations[0].events;
  const auto& b = t.o.twin->trace.locations[0].events;
  ASSERT_EQ(a.size(), b.size());
  // Rank 0 is 32 iterations from the source, delayed in iteration 20: its first 20 iterations
  // are untouched, to the bit.
  for (std::size_t i = 0; i < a.size() / 4; ++i) EXPECT_EQ(a[i].time, b[i].time) << "event " << i;
  EXPECT_GT(t.twin_idle.total_idle, 0.0);  // the twin has noise: its ranks wait for each other
  EXPECT_GT(t.f.injected, 0.0);
  EXPECT_NEAR(t.f.reached_end + t.f.absorbed, t.f.injected, 1e-15);
}

TEST(Footprint, TracesThatAreNotTwinsAreRefused) {
  const Twins t = simulate_twins({"workload.ranks=8", "platform.nodes=8", "workload.iterations=10",
                                  "perturbations[0].rank=4", "perturbations[0].iteration=2", "run.footprint=delay"});
  // An event missing on one rank: the programs differ.
  trace::Trace other = t.o.twin->trace;
  other.locations[3].events.pop_back();
  try {
    (void)analysis::footprint(t.o.result.trace, other, t.run_idle, t.twin_idle);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 3 has"), std::string::npos) << e.what();
  }
  // A different event at the same position.
  other = t.o.twin->trace;
  std::swap(other.locations[5].events[3], other.locations[5].events[4]);
  try {
    (void)analysis::footprint(t.o.result.trace, other, t.run_idle, t.twin_idle);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 5, event 3"), std::string::npos) << e.what();
  }
  // The run against itself: nothing was removed.
  try {
    (void)analysis::footprint(t.o.result.trace, t.o.result.trace, t.run_idle, t.run_idle);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("lacks nothing"), std::string::npos) << e.what();
  }
  // A trace without ground truth (measured).
  other = t.o.twin->trace;
  other.has_truth = false;
  EXPECT_THROW((void)analysis::footprint(t.o.result.trace, other, t.run_idle, t.twin_idle), InputError);
}

TEST(Footprint, ASelectorThatMatchesNoPerturbationIsSaidWhereItIsWritten) {
  try {
    (void)scenarios::load_scenario(kSingleDelay, {"run.footprint=noise"});
    FAIL() << "no error";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("--set run.footprint=noise"), std::string::npos) << m;
    EXPECT_NE(m.find("run.footprint: 'noise' matches no perturbation of the scenario (perturbations: 0: delay"),
              std::string::npos)
        << m;
  }
  // The twin goes without what the selectors name, nothing else.
  const auto s = scenarios::load_scenario(
      kSingleDelay, {"perturbations[1].type=random_noise", "perturbations[1].rate=1kHz",
                                  "perturbations[1].duration=100us", "run.footprint=0"});
  const auto twin = scenarios::footprint_twin(s);
  ASSERT_EQ(twin.perturbations.size(), 1u);
  EXPECT_EQ(twin.perturbations[0].type, "random_noise");
  EXPECT_TRUE(twin.run.footprint.empty());
  EXPECT_EQ(twin.run.seed, s.run.seed);
}

class FootprintCli : public test::TempDirTest {};

TEST_F(FootprintCli, RunWritesTheFootprintBesideTheIdleWaves) {
  std::ostringstream out, err;
  std::vector<std::string> args = {"waitlab", "run", kSingleDelay, "--out", (dir_ / "r").string(), "--footprint",
                                   "delay", "--no-progress", "--set", "outputs.trace=true"};
  for (const auto& s : kSmall)
    if (s.rfind("run.footprint", 0) != 0) args.insert(args.end(), {"--set", s});
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  ASSERT_EQ(app::main(static_cast<int>(argv.size()), argv.data(), out, err), 0) << err.str();
  EXPECT_NE(out.str().find("footprint       without delay (rank 32): 0.02 s injected, 0.02 s reached the end of the run "
                           "(100.0 %), "),
            std::string::npos)
      << out.str();
  const auto j = nlohmann::json::parse(test::slurp(dir_ / "r" / "summary.json"));
  EXPECT_EQ(j["run"]["footprint"], nlohmann::json::array({"delay"}));
  const auto& fp = j["analyses"]["footprint"];
  EXPECT_EQ(fp["source_rank"], 32);
  EXPECT_NEAR(fp["reached_end_s"].get<double>(), 0.02, 1e-12);
  EXPECT_EQ(fp["reach"][0]["down"], 32);
  EXPECT_EQ(fp["idle_wave_reach"]["up"], 31);
  // footprint.csv: one row per rank, the source's offset 0 and its shift the delay.
  std::istringstream csv(test::slurp(dir_ / "r" / "footprint.csv"));
  std::string line;
  std::getline(csv, line);
  EXPECT_EQ(line, "rank,offset,peak_shift_s,peak_time_s,end_shift_s,largest_idle_s,twin_largest_idle_s");
  int rows = 0;
  while (std::getline(csv, line)) {
    const auto f = trace::csv_split(line);
    EXPECT_EQ(std::stoi(f[1]), std::stoi(f[0]) - 32);
    EXPECT_NEAR(std::stod(f[4]), 0.02, 1e-12);
    ++rows;
  }
  EXPECT_EQ(rows, 64);
  // footprint_shift.npy: the idle matrix's shape.
  const std::string npy = test::slurp(dir_ / "r" / "footprint_shift.npy");
  const std::string idle = test::slurp(dir_ / "r" / "idle_matrix.npy");
  EXPECT_EQ(npy.size(), idle.size());
  EXPECT_EQ(npy.substr(0, 80), idle.substr(0, 80));  // the same header: float32, the same shape
  EXPECT_TRUE(fs::exists(dir_ / "r" / "report.html"));
  EXPECT_NE(test::slurp(dir_ / "r" / "report.html").find("Counterfactual footprint"), std::string::npos);

  // The twin's trace is written beside the run's; `analyze --twin` on the two finds the same
  // footprint as the run did, to the bit.
  ASSERT_TRUE(fs::exists(dir_ / "r" / "twin.wlt"));
  const std::string trace = (dir_ / "r" / "trace.wlt").string(), twin = (dir_ / "r" / "twin.wlt").string(),
                    a = (dir_ / "a").string();
  const char* analyze[] = {"waitlab", "analyze", trace.c_str(), "--twin", twin.c_str(), "-a", "idlewave", "-o", a.c_str()};
  std::ostringstream aout, aerr;
  ASSERT_EQ(app::main(9, analyze, aout, aerr), 0) << aerr.str();
  const auto ja = nlohmann::json::parse(test::slurp(dir_ / "a" / "summary.json"));
  EXPECT_EQ(ja["analyses"]["ran"], nlohmann::json::array({"waitstate", "idlewave", "footprint"}));
  EXPECT_EQ(ja["analyses"]["footprint"], fp);
  EXPECT_EQ(test::slurp(dir_ / "a" / "footprint.csv"), test::slurp(dir_ / "r" / "footprint.csv"));
  // -a footprint without --twin: said before the trace is read.
  const char* no_twin[] = {"waitlab", "analyze", trace.c_str(), "-a", "footprint", "-o", a.c_str()};
  std::ostringstream nout, nerr;
  EXPECT_EQ(app::main(7, no_twin, nout, nerr), 2);
  EXPECT_NE(nerr.str().find("--analyses: footprint compares the trace with its twin"), std::string::npos) << nerr.str();
}

TEST_F(FootprintCli, FootprintWithoutATwinIsABadScenario) {
  std::ostringstream out, err;
  const std::string o = (dir_ / "r").string();
  const char* argv[] = {"waitlab", "run", kSingleDelay.c_str(), "--out", o.c_str(), "--set",
                        "outputs.analyses=[footprint]", "--set", "workload.ranks=8", "--set", "platform.nodes=8",
                        "--set", "perturbations[0].rank=4"};
  EXPECT_EQ(app::main(13, argv, out, err), 2);
  EXPECT_NE(err.str().find("outputs.analyses: footprint compares the run with its twin"), std::string::npos)
      << err.str();
  EXPECT_FALSE(fs::exists(dir_ / "r"));
  // `all` does not select it: nothing else makes a twin.
  const auto sel = app::parse_analyses({"all"}, "test");
  EXPECT_FALSE(sel.has("footprint"));
  EXPECT_TRUE(sel.has("idlewave"));
}

}  // namespace
}  // namespace waitlab
