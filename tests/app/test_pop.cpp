// Measured traces at their tools' word: `waitlab analyze` and `waitlab pop` on the real Extrae
// traces in tests/data/extrae against BSC's definitions computed straight from the trace text by an
// independent oracle (tests/tools/bsc_pop_reference.py), the SMPI ideal-network replay, a trace
// without MPI, `-a timeresolved` alone and `analyze --help`.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/temp_dir.hpp"

namespace waitlab::app {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kSource = WAITLAB_SOURCE_DIR;
const std::string kExtrae = kSource + "/tests/data/extrae/";

struct Result {
  int code = -1;
  std::string out, err;
};

class Pop : public test::TempDirTest {
 protected:
  Result waitlab(const std::string& args) const {
    const auto out = dir_ / "stdout.txt", err = dir_ / "stderr.txt";
    const std::string cmd = std::string("'") + WAITLAB_BINARY + "' " + args + " >'" + out.string() + "' 2>'" +
                            err.string() + "'";
    const int status = std::system(cmd.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, test::slurp(out), test::slurp(err)};
  }
  // BSC's metrics of a trace by the oracle.
  static json oracle(const std::string& trace) {
    const std::string cmd = "python3 '" + kSource + "/tests/tools/bsc_pop_reference.py' '" + trace + "'";
    FILE* p = ::popen(cmd.c_str(), "r");
    EXPECT_NE(p, nullptr);
    std::string text;
    char buf[4096];
    while (p && std::fgets(buf, sizeof buf, p)) text += buf;
    if (p) {
      EXPECT_EQ(::pclose(p), 0);
    }
    return json::parse(text);
  }
  static double sum(const json& a) {
    double s = 0;
    for (const auto& v : a) s += v.get<double>();
    return s;
  }
};

void expect_rel(double got, double want, double rel, const char* what) {
  EXPECT_LE(std::fabs(got - want), rel * std::fabs(want)) << what << ": " << got << " vs " << want;
}

// Whole-run LB, CommE and PE with BSC's conventions equal BSC's definitions to 1e-6 relative, on
// both EPOCH traces (gzipped, as Extrae and pypop ship them); the output says which conventions.
TEST_F(Pop, AnalyzeEqualsBscDefinitionsOnExtraeTraces) {
  for (const char* name : {"epoch_1proc", "epoch_2proc"}) {
    const std::string trace = kExtrae + name + ".prv.gz";
    const json want = oracle(trace);
    const fs::path out = dir_ / name;
    const Result r = waitlab("analyze '" + trace + "' -a timeresolved --ideal lamport -o '" + out.string() + "'");
    ASSERT_EQ(r.code, 0) << r.err;
    const json s = json::parse(test::slurp(out / "summary.json"));
    EXPECT_EQ(s["trace"]["origin"], "extrae");
    const json& tr = s["analyses"]["timeresolved"];
    EXPECT_EQ(tr["convention"]["name"], "bsc");
    EXPECT_EQ(tr["convention"]["units"], want["units"]);
    EXPECT_TRUE(tr["mpi"].get<bool>());
    for (const char* k : {"load_balance", "communication_efficiency", "parallel_efficiency"})
      expect_rel(tr[k].get<double>(), want[k].get<double>(), 1e-6, k);
    expect_rel(tr["elapsed_s"].get<double>(), want["elapsed_s"].get<double>(), 1e-9, "T");
    // PAPI counters over useful stretches, as the oracle sums them.
    expect_rel(tr["counters"]["useful_instructions"].get<double>(), sum(want["useful_instructions"]), 1e-9, "INS");
    expect_rel(tr["counters"]["useful_cycles"].get<double>(), sum(want["useful_cycles"]), 1e-9, "CYC");
    EXPECT_NE(r.out.find("conventions     bsc"), std::string::npos) << r.out;
    // Only the analysis asked for ran.
    EXPECT_TRUE(s["analyses"]["waitstate"].is_null());
    EXPECT_EQ(s["analyses"]["ran"], json({"timeresolved"}));
    EXPECT_FALSE(fs::exists(out / "waitstates.csv"));
    EXPECT_EQ(r.out.find("wait states"), std::string::npos) << r.out;
    // The report says which conventions.
    const std::string html = test::slurp(out / "report.html");
    EXPECT_NE(html.find("Conventions: bsc"), std::string::npos);
  }
}

// Another convention on the same trace is an option, and changes the numbers the documented way:
// waitlab's span (MPI_Init exit to MPI_Finalize entry) is shorter than the whole trace.
TEST_F(Pop, ConventionOptionSelectsAnother) {
  const std::string trace = kExtrae + "epoch_2proc.prv.gz";
  const Result b = waitlab("analyze '" + trace + "' -a timeresolved --ideal lamport -o '" + (dir_ / "b").string() + "'");
  const Result w = waitlab("analyze '" + trace + "' -a timeresolved --ideal lamport --convention waitlab -o '" +
                           (dir_ / "w").string() + "'");
  ASSERT_EQ(b.code, 0) << b.err;
  ASSERT_EQ(w.code, 0) << w.err;
  const json tb = json::parse(test::slurp(dir_ / "b" / "summary.json"))["analyses"]["timeresolved"];
  const json tw = json::parse(test::slurp(dir_ / "w" / "summary.json"))["analyses"]["timeresolved"];
  EXPECT_EQ(tw["convention"]["name"], "waitlab");
  EXPECT_LT(tw["elapsed_s"].get<double>(), tb["elapsed_s"].get<double>());
  const Result bad = waitlab("analyze '" + trace + "' --convention cube -o '" + (dir_ / "x").string() + "'");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--convention: unknown convention 'cube'"), std::string::npos) << bad.err;
}

// The SMPI engine replays the measured trace on an ideal network next to the Lamport estimate;
// both are reported, CommE = SerE × TrfE for each, and T_ideal is at most T.
TEST_F(Pop, SmpiIdealReplayNextToLamport) {
  const std::string trace = kExtrae + "epoch_2proc.prv.gz";
  const Result r = waitlab("analyze '" + trace + "' -a timeresolved -o '" + dir_.string() + "/a'");
  ASSERT_EQ(r.code, 0) << r.err;
  const json tr = json::parse(test::slurp(dir_ / "a" / "summary.json"))["analyses"]["timeresolved"];
  ASSERT_EQ(tr["ideal_estimates"].size(), 2u) << tr.dump(2);
  EXPECT_EQ(tr["ideal_estimates"][0]["source"], "lamport");
  EXPECT_EQ(tr["ideal_estimates"][1]["source"], "smpi_replay");
  const double comm = tr["communication_efficiency"].get<double>();
  for (const auto& e : tr["ideal_estimates"]) {
    EXPECT_NEAR(e["serialisation_efficiency"].get<double>() * e["transfer_efficiency"].get<double>(), comm, 1e-12);
    EXPECT_LE(e["ideal_s"].get<double>(), tr["elapsed_s"].get<double>() * (1 + 1e-12));
    EXPECT_GE(e["ideal_s"].get<double>(), tr["useful_max_s"].get<double>() * (1 - 1e-12));
  }
  EXPECT_NE(r.out.find("SMPI replay on an ideal network"), std::string::npos) << r.out;
}

// A trace without MPI calls analyses as such, with a warning: LB over the two OpenMP threads as the
// oracle computes it, not "PE 0 %".
TEST_F(Pop, TraceWithoutMpiAnalysesWithAWarning) {
  const std::string trace = kExtrae + "omp2.prv.gz";
  const json want = oracle(trace);
  const Result r = waitlab("analyze '" + trace + "' -a timeresolved -o '" + dir_.string() + "/a'");
  ASSERT_EQ(r.code, 0) << r.err;
  const json s = json::parse(test::slurp(dir_ / "a" / "summary.json"));
  const json& tr = s["analyses"]["timeresolved"];
  EXPECT_FALSE(tr["mpi"].get<bool>());
  EXPECT_EQ(tr["convention"]["units"], 2);
  EXPECT_EQ(s["trace"]["threads"], 2);
  ASSERT_FALSE(tr["warnings"].empty());
  EXPECT_NE(r.out.find("warning         the trace has no MPI calls"), std::string::npos) << r.out;
  for (const char* k : {"load_balance", "communication_efficiency", "parallel_efficiency"})
    expect_rel(tr[k].get<double>(), want[k].get<double>(), 1e-6, k);
}

// `waitlab pop` on the 1- and 2-rank EPOCH runs: the model factors by their definitions from the
// oracle's useful times and counters; the multiplicative tree holds; CSV, JSON, picture, report.
TEST_F(Pop, StrongScalingFactorsOfTheEpochSeries) {
  const std::string one = kExtrae + "epoch_1proc.prv.gz", two = kExtrae + "epoch_2proc.prv.gz";
  const json w1 = oracle(one), w2 = oracle(two);
  // Given in the wrong order on purpose: the reference is the run with the fewest units.
  const Result r = waitlab("pop '" + two + "' '" + one + "' -o '" + (dir_ / "pop").string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const json p = json::parse(test::slurp(dir_ / "pop" / "pop.json"));
  EXPECT_EQ(p["scaling"], "strong");
  EXPECT_EQ(p["reference"], "epoch_1proc");
  ASSERT_EQ(p["runs"].size(), 2u);
  const json& a = p["runs"][0];
  const json& b = p["runs"][1];
  EXPECT_EQ(a["units"], 1);
  EXPECT_EQ(b["units"], 2);
  expect_rel(b["parallel_efficiency"].get<double>(), w2["parallel_efficiency"].get<double>(), 1e-6, "PE");
  expect_rel(b["load_balance"].get<double>(), w2["load_balance"].get<double>(), 1e-6, "LB");
  const double comp = sum(w1["useful_s"]) / sum(w2["useful_s"]);
  expect_rel(b["computation_scalability"].get<double>(), comp, 1e-6, "computation scalability");
  const double ipc1 = sum(w1["useful_instructions"]) / sum(w1["useful_cycles"]);
  const double ipc2 = sum(w2["useful_instructions"]) / sum(w2["useful_cycles"]);
  expect_rel(b["ipc_scalability"].get<double>(), ipc2 / ipc1, 1e-6, "IPC scalability");
  expect_rel(b["instruction_scalability"].get<double>(),
             sum(w1["useful_instructions"]) / sum(w2["useful_instructions"]), 1e-6, "instruction scalability");
  expect_rel(b["computation_scalability"].get<double>(),
             b["ipc_scalability"].get<double>() * b["instruction_scalability"].get<double>() *
                 b["frequency_scalability"].get<double>(),
             1e-9, "comp = IPC × instr × freq");
  expect_rel(b["global_efficiency"].get<double>(),
             b["parallel_efficiency"].get<double>() * b["computation_scalability"].get<double>(), 1e-12, "global");
  expect_rel(b["speedup"].get<double>(), w1["elapsed_s"].get<double>() / w2["elapsed_s"].get<double>(), 1e-9, "speed-up");
  EXPECT_DOUBLE_EQ(a["computation_scalability"].get<double>(), 1.0);
  const std::string csv = test::slurp(dir_ / "pop" / "pop.csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')).rfind("run,origin,convention,ranks,units,global_efficiency,", 0), 0u) << csv;
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 3);
  EXPECT_TRUE(fs::exists(dir_ / "pop" / "pop.png"));
  const std::string html = test::slurp(dir_ / "pop" / "report.html");
  EXPECT_NE(html.find("id=\"pop-table\""), std::string::npos);
  EXPECT_NE(html.find("background:#"), std::string::npos);
  EXPECT_NE(r.out.find("Parallel efficiency"), std::string::npos) << r.out;
  // Same inputs, same files.
  const Result again = waitlab("pop '" + one + "' '" + two + "' -o '" + (dir_ / "pop2").string() + "'");
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(test::slurp(dir_ / "pop2" / "pop.csv"), csv);
  // Bad input: exit 2 naming it.
  const Result bad = waitlab("pop '" + (dir_ / "nothing.prv").string() + "' -o '" + (dir_ / "x").string() + "'");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("nothing.prv"), std::string::npos) << bad.err;
}

// Simulated runs are a scaling study too: the demo heat code at 16 and 32 ranks (20 iterations
// of 1 ms compute per rank, one 20 ms delay) as run directories, weak scaling. Useful time by
// construction: ΣU = P·20 ms + 20 ms, so computation scalability = (16·0.02 + 0.02)·2 /
// (32·0.02 + 0.02) = 0.68/0.66; no counters, so their factors are absent (null, "—").
TEST_F(Pop, SimulatedRunDirectoriesWeakScaling) {
  const std::string demo = kSource + "/scenarios/demo.yaml";
  for (const char* n : {"16", "32"}) {
    const Result r = waitlab("run '" + demo + "' --no-progress -o '" + (dir_ / ("r" + std::string(n))).string() +
                             "' --set workload.ranks=" + n +
                             " --set workload.iterations=20 --set perturbations[0].rank=8 --set outputs.analyses=waitstate");
    ASSERT_EQ(r.code, 0) << r.err;
  }
  const Result r = waitlab("pop '" + (dir_ / "r32").string() + "' '" + (dir_ / "r16").string() + "' --scaling weak -o '" +
                           (dir_ / "pop").string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const json p = json::parse(test::slurp(dir_ / "pop" / "pop.json"));
  ASSERT_EQ(p["runs"].size(), 2u);
  EXPECT_EQ(p["reference"], "r16");
  EXPECT_EQ(p["runs"][0]["convention"]["name"], "waitlab");
  EXPECT_NEAR(p["runs"][0]["useful_s"].get<double>(), 0.34, 1e-9);
  EXPECT_NEAR(p["runs"][1]["useful_s"].get<double>(), 0.66, 1e-9);
  EXPECT_NEAR(p["runs"][1]["computation_scalability"].get<double>(), 0.68 / 0.66, 1e-9);
  EXPECT_TRUE(p["runs"][1]["ipc_scalability"].is_null());
  EXPECT_TRUE(p["runs"][1]["ipc"].is_null());
  const std::string csv = test::slurp(dir_ / "pop" / "pop.csv");
  EXPECT_NE(csv.find("r32,simulated,waitlab,32,32,"), std::string::npos) << csv;
}

// `analyze --help` names every analysis.
TEST_F(Pop, AnalyzeHelpListsEveryAnalysis) {
  const Result r = waitlab("analyze --help");
  ASSERT_EQ(r.code, 0);
  for (const char* a : {"waitstate", "delay", "critpath", "minprofile", "idlewave", "timeresolved", "--convention",
                        "--ideal"})
    EXPECT_NE(r.out.find(a), std::string::npos) << a << " missing in\n" << r.out;
}

}  // namespace
}  // namespace waitlab::app
