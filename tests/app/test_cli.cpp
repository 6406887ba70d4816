// The waitlab executable end to end: determinism of `run` on the demo, exit codes and
// one-line errors, `list` and `describe`, outputs written whole.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/trace/trace.hpp"
#include "analysis/trace/wlt.hpp"
#include "app/commands.hpp"
#include "models/perturbation.hpp"
#include "models/workload.hpp"

namespace waitlab::app {
namespace {

namespace fs = std::filesystem;

struct Result {
  int code = -1;
  std::string out;
  std::string err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A scratch directory per test, removed at the end.
class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("waitlab_cli_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs the waitlab binary with `args` (already shell-quoted where needed).
  Result waitlab(const std::string& args) const {
    const auto out = dir_ / "stdout.txt";
    const auto err = dir_ / "stderr.txt";
    const std::string cmd =
        std::string("'") + WAITLAB_BINARY + "' " + args + " >'" + out.string() + "' 2>'" + err.string() + "'";
    const int status = std::system(cmd.c_str());
    Result r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
  }

  fs::path write(const std::string& name, const std::string& text) const {
    std::ofstream(dir_ / name) << text;
    return dir_ / name;
  }

  fs::path dir_;
};

const std::string kSource = WAITLAB_SOURCE_DIR;

TEST_F(Cli, DemoRunsAreByteIdentical) {
  const std::string demo = kSource + "/scenarios/demo.yaml";
  const Result a = waitlab("run '" + demo + "' --no-progress --out '" + (dir_ / "a").string() + "'");
  ASSERT_EQ(a.code, 0) << a.err;
  const Result b = waitlab("run '" + demo + "' --no-progress --out '" + (dir_ / "b").string() + "'");
  ASSERT_EQ(b.code, 0) << b.err;
  const std::string sa = slurp(dir_ / "a" / "summary.json");
  const std::string ta = slurp(dir_ / "a" / "trace.wlt");
  ASSERT_FALSE(sa.empty());
  ASSERT_GT(ta.size(), 1000u);
  EXPECT_TRUE(sa == slurp(dir_ / "b" / "summary.json")) << "summary.json differs between two runs";
  EXPECT_TRUE(ta == slurp(dir_ / "b" / "trace.wlt")) << "trace.wlt differs between two runs";
  // So do the idle-wave files, their pictures and the report.
  for (const char* f : {"idlewave.json", "idle_matrix.npy", "idlewave_fronts.csv", "idlewave_heatmap.png",
                        "idlewave_heatmap.svg", "idlewave_amplitude.png", "report.html"}) {
    const std::string fa = slurp(dir_ / "a" / f);
    EXPECT_FALSE(fa.empty()) << f;
    EXPECT_TRUE(fa == slurp(dir_ / "b" / f)) << f << " differs between two runs";
  }

  // The summary describes the demo; the trace is whole and has every rank.
  const auto j = nlohmann::json::parse(sa);
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["scenario"]["name"], "demo");
  EXPECT_EQ(j["ranks"], 1024);
  EXPECT_EQ(j["workload"]["type"], "heat1d");
  // One delay of 20 ms on rank 512 and nothing else: the ground truth says exactly that.
  const auto& delay = j["injected"]["by_cause"]["delay"];
  EXPECT_EQ(delay["total_s"].get<double>(), 0.02);
  EXPECT_EQ(delay["intervals"], 1);
  EXPECT_EQ(delay["ranks"], 1);
  EXPECT_EQ(delay["per_rank"]["max_rank"], 512);
  EXPECT_EQ(delay["per_rank"]["max_s"].get<double>(), 0.02);
  EXPECT_EQ(delay["per_rank"]["mean_s"].get<double>(), 0.02 / 1024);
  EXPECT_EQ(j["injected"]["total_s"].get<double>(), 0.02);
  for (const char* cause : {"imbalance", "noise"}) {
    EXPECT_EQ(j["injected"]["by_cause"][cause]["total_s"].get<double>(), 0.0) << cause;
    EXPECT_TRUE(j["injected"]["by_cause"][cause]["per_rank"]["max_rank"].is_null()) << cause;
  }
  // Every rank computes once per iteration: 1024 × 100 intervals of 1 ms nominal.
  EXPECT_EQ(j["compute_intervals"], 1024 * 100);
  EXPECT_EQ(j["run"]["collectives"], "fast");
  const trace::Trace t = trace::read_wlt((dir_ / "a" / "trace.wlt").string());
  EXPECT_EQ(t.ranks(), 1024u);
  EXPECT_EQ(t.event_count(), j["events"].get<std::uint64_t>());
  EXPECT_EQ(t.attribute("scenario.name"), "demo");
  // Nothing half-written is left behind; the terminal says where the results are.
  for (const auto& e : fs::directory_iterator(dir_ / "a"))
    EXPECT_NE(e.path().extension(), ".tmp") << e.path();
  EXPECT_NE(a.out.find((dir_ / "a" / "summary.json").string()), std::string::npos) << a.out;
  EXPECT_TRUE(fs::exists(dir_ / "a" / "host.json"));
}

TEST_F(Cli, BadScenarioExitsWith2AndOneLine) {
  const auto f = write("bad.yaml",
                       "platform: {type: cluster, nodes: 2}\n"
                       "workload:\n"
                       "  type: heat1d\n"
                       "  ranks: 2\n"
                       "  iteratons: 5\n");
  const Result r = waitlab("run '" + f.string() + "' --out '" + (dir_ / "o").string() + "'");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "waitlab: error: " + f.string() +
                ":5:3: unknown option 'iteratons' for workload 'heat1d'; did you mean 'iterations'?\n");
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(fs::exists(dir_ / "o" / "summary.json"));
}

// A small scenario whose run takes well under a second.
const char* kSmall =
    "name: small\n"
    "platform: {type: cluster, nodes: 2, cores: 2}\n"
    "workload: {type: heat1d, ranks: 4, iterations: 3}\n"
    "run: {baseline: true}\n";

TEST_F(Cli, FailedTraceWriteChangesNothing) {
  const auto f = write("small.yaml", kSmall);
  const std::string out = (dir_ / "o").string();
  Result r = waitlab("run '" + f.string() + "' --no-progress --out '" + out + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_TRUE(fs::exists(dir_ / "o" / "summary.json"));
  // Now trace.wlt cannot be replaced (a non-empty directory is in the way): the run fails
  // before it changes anything, and the earlier run's files stay as they were, together
  // (tests/app/test_outputs_safety.cpp has the other late failures).
  fs::remove(dir_ / "o" / "trace.wlt");
  fs::create_directories(dir_ / "o" / "trace.wlt" / "blocker");
  const std::string summary = slurp(dir_ / "o" / "summary.json");
  r = waitlab("run '" + f.string() + "' --no-progress --out '" + out + "'");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "waitlab: error: cannot write " + out +
                       "/trace.wlt: a directory of that name is in the way (nothing was changed)\n");
  EXPECT_EQ(slurp(dir_ / "o" / "summary.json"), summary);
  EXPECT_TRUE(fs::exists(dir_ / "o" / "trace.wlt" / "blocker"));
  for (const auto& e : fs::directory_iterator(dir_ / "o"))
    EXPECT_NE(e.path().extension(), ".tmp") << e.path();
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().filename().string().find(".o.waitlab-"), std::string::npos) << e.path();
  // Once the way is clear, a run writes everything again.
  fs::remove_all(dir_ / "o" / "trace.wlt");
  r = waitlab("run '" + f.string() + "' --no-progress --out '" + out + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* name : {"summary.json", "trace.wlt", "baseline.wlt", "host.json"})
    EXPECT_TRUE(fs::exists(dir_ / "o" / name)) << name;
}

// Without analyses the simulation processes write trace.wlt and baseline.wlt into place and
// nothing reads them back (sim::RunOptions::trace_file); with analyses the trace comes back
// for them. Either way the files and the summary's figures are the same, byte for byte.
TEST_F(Cli, TracesWrittenInPlaceAreThoseTheAnalysesRead) {
  const auto f = write("small.yaml", kSmall);
  const std::string plain = (dir_ / "plain").string();
  const std::string analysed = (dir_ / "analysed").string();
  Result r = waitlab("run '" + f.string() + "' --no-progress --out '" + plain + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  r = waitlab("run '" + f.string() + "' --no-progress --set outputs.analyses=waitstate,delay --out '" +
              analysed + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* name : {"trace.wlt", "baseline.wlt"}) {
    const std::string bytes = slurp(dir_ / "plain" / name);
    EXPECT_GT(bytes.size(), 1000u) << name;
    EXPECT_EQ(bytes, slurp(dir_ / "analysed" / name)) << name;
  }
  auto a = nlohmann::json::parse(slurp(dir_ / "plain" / "summary.json"));
  auto b = nlohmann::json::parse(slurp(dir_ / "analysed" / "summary.json"));
  a.erase("analyses");
  b.erase("analyses");
  a["scenario"].erase("overrides");
  b["scenario"].erase("overrides");
  EXPECT_EQ(a, b);
  // The figures are those of the trace on disk.
  const trace::Trace t = trace::read_wlt((dir_ / "plain" / "trace.wlt").string());
  EXPECT_EQ(a["events"].get<std::size_t>(), t.event_count());
  EXPECT_EQ(t.attribute("scenario.name"), "small");
  EXPECT_EQ(trace::read_wlt((dir_ / "plain" / "baseline.wlt").string()).attribute("scenario.baseline"),
            "true");
}

TEST_F(Cli, StaleTracesAreRemoved) {
  const auto f = write("small.yaml", kSmall);
  const std::string out = (dir_ / "o").string();
  ASSERT_EQ(waitlab("run '" + f.string() + "' --no-progress --out '" + out + "'").code, 0);
  ASSERT_TRUE(fs::exists(dir_ / "o" / "baseline.wlt"));
  Result r = waitlab("run '" + f.string() + "' --no-progress --set run.baseline=false --out '" + out + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir_ / "o" / "trace.wlt"));
  EXPECT_FALSE(fs::exists(dir_ / "o" / "baseline.wlt"));
  r = waitlab("run '" + f.string() + "' --no-progress --set outputs.trace=false --out '" + out + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "o" / "trace.wlt"));
  EXPECT_TRUE(fs::exists(dir_ / "o" / "summary.json"));
}

TEST_F(Cli, DirectoryAsScenario) {
  fs::create_directories(dir_ / "scen");
  Result r = waitlab("run '" + (dir_ / "scen").string() + "'");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "waitlab: error: " + (dir_ / "scen").string() +
                       ": is a directory, not a scenario file (give a YAML file)\n");
  write("scen/b.yaml", kSmall);
  write("scen/a.yaml", kSmall);
  r = waitlab("run '" + (dir_ / "scen").string() + "'");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "waitlab: error: " + (dir_ / "scen").string() +
                       ": is a directory, not a scenario file; did you mean " +
                       (dir_ / "scen" / "a.yaml").string() + "?\n");
}

TEST_F(Cli, BadOverrideExitsWith2) {
  const Result r = waitlab("run '" + kSource + "/scenarios/demo.yaml' --set workload.ranks=-3 --out '" +
                           (dir_ / "o").string() + "'");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err.rfind("waitlab: error: --set workload.ranks=-3: option 'ranks' of workload ", 0), 0u)
      << r.err;
}

TEST_F(Cli, MissingScenarioFile) {
  const Result r = waitlab("run '" + (dir_ / "none.yaml").string() + "'");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "waitlab: error: " + (dir_ / "none.yaml").string() + ": no such scenario file\n");
}

TEST_F(Cli, UsageErrorsExitWith2) {
  Result r = waitlab("frobnicate");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err.rfind("waitlab: error: ", 0), 0u) << r.err;
  r = waitlab("run");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("scenario is required"), std::string::npos) << r.err;
  r = waitlab("");
  EXPECT_EQ(r.code, 2);
}

TEST_F(Cli, HelpAndVersion) {
  Result r = waitlab("--version");
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "waitlab 0.1.0\n");
  r = waitlab("--help");
  EXPECT_EQ(r.code, 0);
  for (const char* cmd : {"run", "check", "list", "describe"})
    EXPECT_NE(r.out.find(cmd), std::string::npos) << cmd;
  r = waitlab("run --help");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("--set"), std::string::npos) << r.out;
}

TEST_F(Cli, DescribeHeat1d) {
  const Result r = waitlab("describe heat1d");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("heat1d (workload)\n", 0), 0u) << r.out;
  for (const char* opt :
       {"  ranks: whole number, required", "  iterations: whole number, default 100", "  compute: duration [",
        "default 1ms", "  bytes: ", "  mode: one of blocking | nonblocking"})
    EXPECT_NE(r.out.find(opt), std::string::npos) << "missing '" << opt << "' in:\n" << r.out;
}

TEST_F(Cli, DescribeUnknownName) {
  const Result r = waitlab("describe heat1");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(
      r.err,
      "waitlab: error: unknown name 'heat1'; did you mean 'heat1d'? (`waitlab list` shows every name)\n");
}

TEST_F(Cli, ListShowsEveryModel) {
  const Result r = waitlab("list");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const auto& w : models::workloads())
    EXPECT_NE(r.out.find("\n  " + w.spec.name + " "), std::string::npos) << w.spec.name;
  for (const auto& p : models::perturbation_models())
    EXPECT_NE(r.out.find("\n  " + p.spec.name + " "), std::string::npos) << p.spec.name;
  for (const char* s : {"platforms:", "workloads:", "perturbations:", "analyses:", "collective sets", "  cluster ",
                        "  fast ", "  waitstate ", "  delay ", "  critpath "})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
}

TEST_F(Cli, CheckUpdatesComparesAndReportsDifferences) {
  // A copy of a small example scenario, so that its expected figures can be tampered with.
  fs::copy_file(kSource + "/scenarios/alltoall_loop.yaml", dir_ / "a2a.yaml");
  const std::string scen = (dir_ / "a2a.yaml").string();
  Result r = waitlab("check '" + scen + "' --set workload.iterations=3");
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.out, "alltoall_loop: no expected figures at " +
                       (dir_ / "expected" / "alltoall_loop.json").string() + " (run with --update)\n");
  r = waitlab("check --update '" + scen + "' --set workload.iterations=3");
  ASSERT_EQ(r.code, 0) << r.err;
  r = waitlab("check '" + scen + "' --set workload.iterations=3");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "alltoall_loop: ok\n");
  // Same scenario, different figures.
  r = waitlab("check '" + scen + "' --set workload.iterations=4");
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.out.find("alltoall_loop: DIFFERS from "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  iterations: expected 3, got 4\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  mpi_operations: expected 192, got 256\n"), std::string::npos) << r.out;
}

// In-process: the same entry point main() uses, with captured streams.
TEST(CliInProcess, DescribeWritesToGivenStream) {
  std::ostringstream out, err;
  const char* argv[] = {"waitlab", "describe", "delay"};
  EXPECT_EQ(main(3, argv, out, err), 0);
  EXPECT_EQ(out.str().rfind("delay (perturbation)\n", 0), 0u) << out.str();
  EXPECT_EQ(err.str(), "");
}


// `waitlab run` with analyses and `waitlab analyze` on the trace it wrote agree exactly —
// the minimum-duration estimate too, online in the run and offline in analyze; the tables
// have their documented headers; two analyses of one trace are byte-identical.
TEST_F(Cli, AnalyzeAgreesWithRunAndIsDeterministic) {
  const std::string demo = kSource + "/scenarios/demo.yaml";
  const std::string sets =
      " --set workload.ranks=64 --set workload.iterations=20 --set perturbations[0].rank=32"
      " --set outputs.analyses=waitstate,delay,critpath,minprofile,idlewave,timeresolved";
  const Result run = waitlab("run '" + demo + "' --no-progress --out '" + (dir_ / "run").string() + "'" + sets);
  ASSERT_EQ(run.code, 0) << run.err;
  for (const char* line :
       {"wait states     ", "delay costs     ", "critical path   ", "wait estimate   ", "idle waves      ",
        "efficiency      "})
    EXPECT_NE(run.out.find(line), std::string::npos) << line << " missing in\n" << run.out;
  const std::string trace = (dir_ / "run" / "trace.wlt").string();
  const Result a = waitlab("analyze '" + trace + "' --out '" + (dir_ / "a").string() + "'");
  ASSERT_EQ(a.code, 0) << a.err;
  const Result b = waitlab("analyze '" + trace + "' -o '" + (dir_ / "b").string() + "' -a all");
  ASSERT_EQ(b.code, 0) << b.err;
  const auto run_summary = nlohmann::json::parse(slurp(dir_ / "run" / "summary.json"));
  const auto an = nlohmann::json::parse(slurp(dir_ / "a" / "summary.json"));
  EXPECT_EQ(an["schema"], "waitlab.analysis");
  EXPECT_EQ(an["trace"]["ranks"], 64);
  // The time-resolved metrics take their ideal times from an ideal-network run in `run`, from
  // the Lamport replay in `analyze`: on this heat code (eager 8 B messages, a 20 ms delay) the two
  // give the same T_ideal (the longest compute chain, 40 ms) to rounding; the rest is identical.
  auto an_tr = an["analyses"]["timeresolved"], run_tr = run_summary["analyses"]["timeresolved"];
  EXPECT_EQ(run_tr["source"], "ideal_network");
  EXPECT_EQ(an_tr["source"], "lamport");
  EXPECT_EQ(run_tr["note"], "");
  EXPECT_NEAR(run_tr["ideal_s"].get<double>(), 0.04, 1e-12);
  EXPECT_NEAR(an_tr["ideal_s"].get<double>(), 0.04, 1e-12);
  for (const char* k : {"ideal_s", "ideal_unclamped_s", "serialisation_efficiency", "transfer_efficiency"}) {
    EXPECT_NEAR(an_tr[k].get<double>(), run_tr[k].get<double>(), 1e-12) << k;
    an_tr.erase(k);
    run_tr.erase(k);
  }
  an_tr.erase("source");
  run_tr.erase("source");
  an_tr.erase("ideal_estimates");  // the same two estimates as above, by source
  run_tr.erase("ideal_estimates");
  an_tr["lowest_window"].erase("serialisation_efficiency");
  run_tr["lowest_window"].erase("serialisation_efficiency");
  an_tr["lowest_window"].erase("transfer_efficiency");
  run_tr["lowest_window"].erase("transfer_efficiency");
  EXPECT_EQ(an_tr, run_tr);
  EXPECT_EQ(an_tr["windows"]["count"], 50);  // the default
  EXPECT_NEAR(an_tr["parallel_efficiency"].get<double>(),
              an_tr["load_balance"].get<double>() * an_tr["communication_efficiency"].get<double>(), 1e-12);
  auto an_rest = an["analyses"], run_rest = run_summary["analyses"];
  an_rest.erase("timeresolved");
  run_rest.erase("timeresolved");
  EXPECT_EQ(an_rest, run_rest);
  EXPECT_EQ(an["analyses"]["ran"],
            nlohmann::json({"waitstate", "delay", "critpath", "minprofile", "idlewave", "timeresolved"}));
  EXPECT_EQ(slurp(dir_ / "a" / "minprofile.csv"), slurp(dir_ / "run" / "minprofile.csv"));
  EXPECT_EQ(an["analyses"]["minprofile"]["variants"],
            nlohmann::json({"paper", "per_peer", "p5", "exclude_tested"}));
  // The 20 ms delay on rank 32: its neighbours wait 20 ms each, the cost sits on rank 32.
  EXPECT_EQ(an["analyses"]["delay"]["top"][0]["rank"], 32);
  EXPECT_NEAR(an["analyses"]["delay"]["top"][0]["short_term_s"].get<double>(), 0.04, 2e-5);
  EXPECT_EQ(an["analyses"]["matching"]["unmatched"]["sends"], 0);
  const std::map<std::string, std::string> headers = {
      {"waitstates.csv", "pattern,call_path,rank,seconds,instances"},
      {"delay.csv", "kind,call_path,rank,short_term_s,long_term_s"},
      {"critical_path.csv", "rank,call_path,start_s,end_s"},
      {"critical_path_profile.csv", "call_path,on_path_s,time_s,waiting_s,average_s,imbalance_s"},
      {"minprofile.csv",
       "call_path,pattern,rank,calls,time_s,wait_paper_s,wait_per_peer_s,wait_p5_s,wait_exclude_tested_s"},
      {"idlewave_fronts.csv", "wave,source_rank,direction,rank,distance,time_s,iteration,amplitude_s"},
      {"idlewave.json", "{"}};
  const std::string tr_header =
      "window,start_s,end_s,events,useful_max_s,useful_mean_s,ideal_s,ideal_end_s,lb,comm_e,ser_e,trf_e,pe,"
      "cum_useful_max_s,cum_useful_mean_s,cum_ideal_s,cum_lb,cum_comm_e,cum_ser_e,cum_trf_e,cum_pe";
  for (const char* f : {"timeresolved.csv", "timeresolved.json", "timeresolved.png", "timeresolved.svg"}) {
    const std::string text = slurp(dir_ / "a" / f);
    EXPECT_FALSE(text.empty()) << f;
    EXPECT_TRUE(text == slurp(dir_ / "b" / f)) << f << " differs between two analyses";
    if (std::string(f) == "timeresolved.csv") {
      EXPECT_EQ(text.substr(0, text.find('\n')), tr_header);
      EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 51);  // header + 50 windows
      const std::string run_text = slurp(dir_ / "run" / f);
      EXPECT_EQ(run_text.substr(0, run_text.find('\n')), tr_header);
    }
  }
  // Fixed and adaptive windows; a bad rule is one error line and exit code 2.
  const Result fixed = waitlab("analyze '" + trace + "' -a timeresolved --windows 4ms -o '" + (dir_ / "w").string() + "'");
  ASSERT_EQ(fixed.code, 0) << fixed.err;
  const auto fj = nlohmann::json::parse(slurp(dir_ / "w" / "timeresolved.json"));
  EXPECT_EQ(fj["windows"]["rule"], "fixed");
  EXPECT_EQ(fj["windows"]["count"], 11);  // 40.16 ms in windows of 4 ms
  EXPECT_EQ(fj["parallel_efficiency"], an["analyses"]["timeresolved"]["parallel_efficiency"]);
  const Result adaptive =
      waitlab("analyze '" + trace + "' -a timeresolved --windows adaptive:200 -o '" + (dir_ / "w").string() + "'");
  ASSERT_EQ(adaptive.code, 0) << adaptive.err;
  const auto aj = nlohmann::json::parse(slurp(dir_ / "w" / "timeresolved.json"));
  EXPECT_EQ(aj["windows"]["rule"], "adaptive");
  EXPECT_EQ(aj["windows"]["min_events_per_rank"], 8);  // ⌈√64⌉
  EXPECT_LT(aj["windows"]["count"].get<int>(), 200);
  const Result bad = waitlab("analyze '" + trace + "' -a timeresolved --windows 10parsecs -o '" + (dir_ / "w").string() + "'");
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err.rfind("waitlab: error: --windows: expected a number of equal windows", 0), 0u) << bad.err;
  EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
  for (const auto& [file, header] : headers) {
    const std::string text = slurp(dir_ / "a" / file);
    EXPECT_EQ(text.substr(0, text.find('\n')), header) << file;
    EXPECT_GT(std::count(text.begin(), text.end(), '\n'), 1) << file;
    EXPECT_EQ(text, slurp(dir_ / "b" / file)) << file;
    EXPECT_EQ(text, slurp(dir_ / "run" / file)) << file;
  }
  EXPECT_EQ(slurp(dir_ / "a" / "summary.json"), slurp(dir_ / "b" / "summary.json"));
  // The idle-period matrix: NumPy 1.0 format, float32, ranks × bins, the bins of summary.json.
  const std::string npy = slurp(dir_ / "a" / "idle_matrix.npy");
  ASSERT_GT(npy.size(), 10u);
  EXPECT_EQ(npy.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  const std::size_t header = static_cast<unsigned char>(npy[8]) + 256u * static_cast<unsigned char>(npy[9]);
  EXPECT_EQ((10 + header) % 64, 0u);
  const auto& mx = an["analyses"]["idlewave"]["matrix"];
  EXPECT_EQ(npy.substr(10, header).rfind("{'descr': '<f4', 'fortran_order': False, 'shape': (64, " +
                                             std::to_string(mx["bins"].get<int>()) + "), }", 0),
            0u);
  EXPECT_EQ(npy.size(), 10 + header + 64 * mx["bins"].get<std::size_t>() * 4);
  EXPECT_EQ(npy, slurp(dir_ / "run" / "idle_matrix.npy"));

  // Only the wait states: the other tables are not written (and old ones are removed).
  const Result w = waitlab("analyze '" + trace + "' --out '" + (dir_ / "a").string() + "' --analyses waitstate");
  ASSERT_EQ(w.code, 0) << w.err;
  EXPECT_TRUE(fs::exists(dir_ / "a" / "waitstates.csv"));
  EXPECT_FALSE(fs::exists(dir_ / "a" / "delay.csv"));
  EXPECT_FALSE(fs::exists(dir_ / "a" / "critical_path.csv"));
  EXPECT_FALSE(fs::exists(dir_ / "a" / "minprofile.csv"));
  const auto only = nlohmann::json::parse(slurp(dir_ / "a" / "summary.json"));
  EXPECT_TRUE(only["analyses"]["delay"].is_null());
  EXPECT_EQ(only["analyses"]["waitstate"], an["analyses"]["waitstate"]);
}

TEST_F(Cli, AnalyzeBadInputExitsWith2AndOneLine) {
  const auto one_line = [](const Result& r) { return std::count(r.err.begin(), r.err.end(), '\n') == 1; };
  const Result missing = waitlab("analyze '" + (dir_ / "none.wlt").string() + "'");
  EXPECT_EQ(missing.code, 2);
  EXPECT_TRUE(one_line(missing)) << missing.err;
  EXPECT_NE(missing.err.find("none.wlt"), std::string::npos) << missing.err;
  const Result garbage = waitlab("analyze '" + write("bad.wlt", "WLTRACE but not really").string() + "'");
  EXPECT_EQ(garbage.code, 2);
  EXPECT_TRUE(one_line(garbage)) << garbage.err;
  EXPECT_NE(garbage.err.find("bad.wlt"), std::string::npos) << garbage.err;
  const Result unknown = waitlab("analyze '" + (dir_ / "none.wlt").string() + "' --analyses delay,critpat");
  EXPECT_EQ(unknown.code, 2);
  EXPECT_EQ(unknown.err,
            "waitlab: error: --analyses: unknown analysis 'critpat'; did you mean 'critpath'? (allowed: waitstate, "
            "delay, critpath, minprofile, idlewave, timeresolved, footprint, all)\n");
  EXPECT_FALSE(fs::exists(dir_ / "analysis"));
}

// A Score-P trace is analysed by Scalasca's conventions, the critical path's bounds included
// (issue 33); --convention waitlab gives waitlab's. Lengths in ticks of 1/2095197216 s
// (ScorepTraces.CriticalPathBoundsOfScalascaAndOfWaitlab works them from otf2-print).
TEST_F(Cli, AnalyzeScorePTraceTakesScalascasCriticalPathBounds) {
  const std::string trace = kSource + "/tests/data/scorep/ping-pong-otf2/traces.otf2";
  const Result s = waitlab("analyze '" + trace + "' -a critpath --clock-correction none -o '" + (dir_ / "s").string() + "'");
  const Result w = waitlab("analyze '" + trace + "' -a critpath --clock-correction none --convention waitlab -o '" +
                           (dir_ / "w").string() + "'");
  ASSERT_EQ(s.code, 0) << s.err;
  ASSERT_EQ(w.code, 0) << w.err;
  const auto cp = [&](const char* sub) {
    return nlohmann::json::parse(slurp(dir_ / sub / "summary.json"))["analyses"]["critpath"];
  };
  EXPECT_EQ(cp("s")["bounds"]["name"], "scalasca");
  EXPECT_NEAR(cp("s")["length_s"].get<double>(), 417969632 / 2095197216.0, 1e-12);
  EXPECT_EQ(cp("w")["bounds"]["name"], "waitlab");
  EXPECT_NEAR(cp("w")["length_s"].get<double>(), 417565951 / 2095197216.0, 1e-12);
  EXPECT_NE(s.out.find("Scalasca's bounds: from the MPI_Init Enter to the last MPI_Finalize Enter"), std::string::npos)
      << s.out;
}


// .wlt -> OTF2 -> .wlt keeps every event to the nanosecond, says what OTF2 cannot hold, and
// `analyze` reads the OTF2 archive to the same wait states.
TEST_F(Cli, ConvertToOtf2AndBack) {
  const std::string demo = kSource + "/scenarios/demo.yaml";
  const Result run = waitlab("run '" + demo + "' --no-progress --out '" + (dir_ / "run").string() +
                             "' --set workload.ranks=32 --set workload.iterations=12 --set perturbations[0].rank=8");
  ASSERT_EQ(run.code, 0) << run.err;
  const std::string wlt = (dir_ / "run" / "trace.wlt").string();
  const std::string otf2 = (dir_ / "otf2").string();
  const Result to = waitlab("convert '" + wlt + "' '" + otf2 + "'");
  ASSERT_EQ(to.code, 0) << to.err;
  EXPECT_NE(to.out.find("wrote " + otf2 + "/traces.otf2 (OTF2, 32 ranks"), std::string::npos) << to.out;
  EXPECT_NE(to.out.find("not in the output: the ground truth of 384 compute intervals"), std::string::npos) << to.out;
  const Result back = waitlab("convert '" + otf2 + "/traces.otf2' '" + (dir_ / "back.wlt").string() + "'");
  ASSERT_EQ(back.code, 0) << back.err;
  const trace::Trace a = trace::read_wlt(wlt);
  const trace::Trace b = trace::read_wlt((dir_ / "back.wlt").string());
  ASSERT_EQ(a.event_count(), b.event_count());
  EXPECT_FALSE(b.has_truth);
  for (std::size_t r = 0; r < a.ranks(); ++r)
    for (std::size_t i = 0; i < a.locations[r].events.size(); ++i) {
      EXPECT_NEAR(a.locations[r].events[i].time, b.locations[r].events[i].time, 0.5e-9);
      EXPECT_EQ(a.locations[r].events[i].kind, b.locations[r].events[i].kind);
    }
  const Result aw = waitlab("analyze '" + wlt + "' -a waitstate --out '" + (dir_ / "aw").string() + "'");
  const Result ao = waitlab("analyze '" + otf2 + "' -a waitstate --out '" + (dir_ / "ao").string() + "'");
  ASSERT_EQ(aw.code, 0) << aw.err;
  ASSERT_EQ(ao.code, 0) << ao.err;
  const auto jw = nlohmann::json::parse(slurp(dir_ / "aw" / "summary.json"));
  const auto jo = nlohmann::json::parse(slurp(dir_ / "ao" / "summary.json"));
  EXPECT_EQ(jw["analyses"]["waitstate"]["patterns"]["late_sender"]["instances"],
            jo["analyses"]["waitstate"]["patterns"]["late_sender"]["instances"]);
  EXPECT_NEAR(jw["analyses"]["waitstate"]["total_waiting_s"].get<double>(),
              jo["analyses"]["waitstate"]["total_waiting_s"].get<double>(), 1e-6);

  const Result bad = waitlab("convert '" + write("t.prv", "#Paraver").string() + "' x.wlt");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("t.prv:1: bad Paraver header"), std::string::npos) << bad.err;
  EXPECT_FALSE(fs::exists("x.wlt"));
}

// `waitlab replay`: a run's own trace replayed on the run's platform ends where the run ended;
// compute scales and perturbations apply as in a scenario; summary.json says it was a replay.
TEST_F(Cli, ReplayReproducesARunAndAppliesScalesAndPerturbations) {
  const std::string scenario = write("heat.yaml",
                                     "platform: {type: cluster, nodes: 4, cores: 4}\n"
                                     "workload: {type: heat1d, ranks: 16, iterations: 20}\n")
                                   .string();
  const Result run = waitlab("run '" + scenario + "' --no-progress --out '" + (dir_ / "run").string() + "'");
  ASSERT_EQ(run.code, 0) << run.err;
  const std::string wlt = (dir_ / "run" / "trace.wlt").string();
  const auto base = nlohmann::json::parse(slurp(dir_ / "run" / "summary.json"))["simulated_time_s"].get<double>();

  const Result same = waitlab("replay '" + wlt + "' --scenario '" + scenario + "' --no-progress --out '" +
                              (dir_ / "same").string() + "'");
  ASSERT_EQ(same.code, 0) << same.err;
  const auto j = nlohmann::json::parse(slurp(dir_ / "same" / "summary.json"));
  EXPECT_NEAR(j["simulated_time_s"].get<double>(), base, 1e-12);
  EXPECT_EQ(j["workload"]["type"], "trace");
  EXPECT_EQ(j["replay_notes"].size(), 0u);
  EXPECT_EQ(j["ranks"], 16);
  // Without a trace written (and no analysis) the events are not recorded: the same summary.
  const Result lean = waitlab("replay '" + wlt + "' --scenario '" + scenario + "' --set outputs.trace=false" +
                              " --no-progress --out '" + (dir_ / "lean").string() + "'");
  ASSERT_EQ(lean.code, 0) << lean.err;
  auto l = nlohmann::json::parse(slurp(dir_ / "lean" / "summary.json"));
  EXPECT_FALSE(fs::exists(dir_ / "lean" / "trace.wlt"));
  EXPECT_EQ(l["scenario"]["overrides"], nlohmann::json::parse(R"(["outputs.trace=false"])"));
  l["scenario"]["overrides"] = j["scenario"]["overrides"];
  EXPECT_EQ(l, j);  // events, times and operations included

  // Half the compute in region `compute`: 20 iterations of 1 ms become 0.5 ms each.
  const Result half = waitlab("replay '" + wlt + "' --scenario '" + scenario +
                              "' --compute-scale compute=0.5 --no-progress --out '" + (dir_ / "half").string() + "'");
  ASSERT_EQ(half.code, 0) << half.err;
  const auto h = nlohmann::json::parse(slurp(dir_ / "half" / "summary.json"))["simulated_time_s"].get<double>();
  EXPECT_NEAR(base - h, 20 * 0.5e-3, 1e-9);

  // A delay of 5 ms on rank 3 in its 4th compute interval (iteration 3), on the default platform.
  const Result delayed = waitlab("replay '" + wlt + "' --no-progress --out '" + (dir_ / "delayed").string() +
                                 "' --set perturbations[0].type=delay --set perturbations[0].rank=3"
                                 " --set perturbations[0].iteration=3 --set perturbations[0].duration=5ms");
  ASSERT_EQ(delayed.code, 0) << delayed.err;
  const auto d = nlohmann::json::parse(slurp(dir_ / "delayed" / "summary.json"));
  EXPECT_EQ(d["platform"]["type"], "cluster");
  EXPECT_NEAR(d["injected"]["by_cause"]["delay"]["total_s"].get<double>(), 5e-3, 1e-15);
  EXPECT_NE(delayed.out.find("scenario        replay-trace"), std::string::npos) << delayed.out;

  const Result bad = waitlab("replay '" + wlt + "' --compute-scale compute=-1 --out '" + (dir_ / "bad").string() + "'");
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err, "waitlab: error: --compute-scale: compute scale 'compute=-1': the factor must be a finite number "
                     ">= 0 (expected FACTOR, REGION=FACTOR, @RANKS=FACTOR or REGION@RANKS=FACTOR; RANKS is N or N-M)\n");
  EXPECT_FALSE(fs::exists(dir_ / "bad"));
}

// convert between every pair the formats allow, saying what each target cannot hold; bad
// input of each reader is exit code 2 with one line naming the file and the position.
TEST_F(Cli, ConvertTiAndParaverAndTheirBadInput) {
  const std::string smpi = kSource + "/tests/data/ti/smpi_calls.ti";
  const Result ti2otf = waitlab("convert '" + smpi + "' '" + (dir_ / "calls").string() + "'");
  ASSERT_EQ(ti2otf.code, 0) << ti2otf.err;
  EXPECT_NE(ti2otf.out.find("(OTF2, 4 ranks, 215 TI records"), std::string::npos) << ti2otf.out;
  EXPECT_NE(ti2otf.out.find("not in the output: times: TI has none; the output's are logical"), std::string::npos)
      << ti2otf.out;
  EXPECT_NE(ti2otf.out.find("approximated: 8 × scan/exscan replayed as MPI_Allreduce"), std::string::npos)
      << ti2otf.out;
  EXPECT_EQ(ti2otf.out.find("gatherv"), std::string::npos) << ti2otf.out;  // v-collectives are exact

  const std::string scenario = write("h.yaml",
                                     "platform: {type: cluster, nodes: 8, cores: 1}\n"
                                     "workload: {type: halo2d, ranks: 8, px: 4, py: 2, iterations: 5}\n")
                                   .string();
  ASSERT_EQ(waitlab("run '" + scenario + "' --no-progress --out '" + (dir_ / "run").string() + "'").code, 0);
  const std::string wlt = (dir_ / "run" / "trace.wlt").string();
  const Result to_prv = waitlab("convert '" + wlt + "' '" + (dir_ / "h.prv").string() + "'");
  ASSERT_EQ(to_prv.code, 0) << to_prv.err;
  EXPECT_TRUE(fs::exists(dir_ / "h.pcf"));
  EXPECT_TRUE(fs::exists(dir_ / "h.row"));
  const Result back = waitlab("convert '" + (dir_ / "h.prv").string() + "' '" + (dir_ / "back.wlt").string() + "'");
  ASSERT_EQ(back.code, 0) << back.err;
  // Simulated trace -> Paraver -> read back: the same events at the same times (to 1 ns).
  const trace::Trace a = trace::read_wlt(wlt);
  const trace::Trace b = trace::read_wlt((dir_ / "back.wlt").string());
  ASSERT_EQ(a.ranks(), b.ranks());
  ASSERT_EQ(a.event_count(), b.event_count());
  for (std::size_t r = 0; r < a.ranks(); ++r)
    for (std::size_t i = 0; i < a.locations[r].events.size(); ++i) {
      const auto& x = a.locations[r].events[i];
      const auto& y = b.locations[r].events[i];
      EXPECT_NEAR(x.time, y.time, 0.5e-9);
      EXPECT_EQ(x.kind, y.kind);
      EXPECT_EQ(x.peer, y.peer);
      EXPECT_EQ(x.tag, y.tag);
      EXPECT_EQ(x.bytes, y.bytes);
      if (x.kind == trace::EventKind::Enter || x.kind == trace::EventKind::Leave)
        EXPECT_EQ(a.defs.regions[x.ref].name, b.defs.regions[y.ref].name) << "rank " << r << " event " << i;
      else
        EXPECT_EQ(x.ref, y.ref) << "rank " << r << " event " << i;
    }
  const Result to_ti = waitlab("convert '" + (dir_ / "h.prv").string() + "' '" + (dir_ / "h.ti").string() + "'");
  ASSERT_EQ(to_ti.code, 0) << to_ti.err;
  EXPECT_NE(to_ti.out.find("not in the output: timestamps and MPI call durations"), std::string::npos) << to_ti.out;
  EXPECT_TRUE(fs::exists(dir_ / "h.ti_files" / "rank-7.txt"));

  const auto one_line = [](const Result& r) { return std::count(r.err.begin(), r.err.end(), '\n') == 1; };
  const std::string bad_ti = write("bad.ti", "0 init\n0 compute 100\n0 jump 3\n").string();
  const Result ti = waitlab("convert '" + bad_ti + "' '" + (dir_ / "x.wlt").string() + "'");
  EXPECT_EQ(ti.code, 2);
  EXPECT_TRUE(one_line(ti)) << ti.err;
  EXPECT_EQ(ti.err.rfind("waitlab: error: " + bad_ti + ":3: unknown action 'jump'", 0), 0u) << ti.err;
  const std::string bad_prv = write("bad.prv", "#Paraver (01/01/26 at 00:00):100_ns:0:1:2(1:1,1:1),0\n1:1:1:9:1:0:10:1\n").string();
  const Result prv = waitlab("analyze '" + bad_prv + "' --out '" + (dir_ / "a").string() + "'");
  EXPECT_EQ(prv.code, 2);
  EXPECT_TRUE(one_line(prv)) << prv.err;
  EXPECT_EQ(prv.err.rfind("waitlab: error: " + bad_prv + ":2:", 0), 0u) << prv.err;
  const Result ti_analyze = waitlab("analyze '" + smpi + "'");
  EXPECT_EQ(ti_analyze.code, 2);
  EXPECT_NE(ti_analyze.err.find("has no times: replay it"), std::string::npos) << ti_analyze.err;
  EXPECT_FALSE(fs::exists(dir_ / "x.wlt"));
  EXPECT_FALSE(fs::exists(dir_ / "a"));
}

// analyze corrects clock skew before analysing (docs/clock-correction.md) and says so; a
// simulated trace has none and stays as it is.
TEST_F(Cli, AnalyzeCorrectsClockSkewAndReportsIt) {
  const std::string scenario = write("heat.yaml",
                                     "platform: {type: cluster, nodes: 8, cores: 1}\n"
                                     "workload: {type: heat1d, ranks: 8, iterations: 10}\n")
                                   .string();
  ASSERT_EQ(waitlab("run '" + scenario + "' --no-progress --out '" + (dir_ / "run").string() + "'").code, 0);
  const std::string wlt = (dir_ / "run" / "trace.wlt").string();
  const Result clean = waitlab("analyze '" + wlt + "' --out '" + (dir_ / "clean").string() + "'");
  ASSERT_EQ(clean.code, 0) << clean.err;
  const auto c = nlohmann::json::parse(slurp(dir_ / "clean" / "summary.json"))["clock_correction"];
  EXPECT_EQ(c["method"], "none");
  EXPECT_EQ(c["violations_before"], 0);
  EXPECT_EQ(clean.out.find("clock skew"), std::string::npos);

  // Rank 3's clock 2 ms ahead: its receives now end before their sends start.
  trace::Trace t = trace::read_wlt(wlt);
  for (auto& e : t.locations[3].events) e.time += 2e-3;
  t.locations[3].truth.clear();
  t.has_truth = false;
  for (auto& l : t.locations) l.truth.clear();
  const std::string skewed = (dir_ / "skewed.wlt").string();
  trace::write_wlt(t, skewed);
  const Result fixed = waitlab("analyze '" + skewed + "' --out '" + (dir_ / "fixed").string() + "'");
  ASSERT_EQ(fixed.code, 0) << fixed.err;
  const auto f = nlohmann::json::parse(slurp(dir_ / "fixed" / "summary.json"));
  EXPECT_GT(f["clock_correction"]["violations_before"].get<int>(), 0);
  EXPECT_EQ(f["clock_correction"]["violations_after"], 0);
  EXPECT_EQ(f["clock_correction"]["method"].get<std::string>().rfind("linear", 0), 0u);
  EXPECT_NEAR(f["clock_correction"]["max_offset_s"].get<double>(), 2e-3, 1e-9);
  EXPECT_NE(fixed.out.find("clock skew      "), std::string::npos) << fixed.out;
  // Why auto applied the linear map: it lowered the violations (a rank's clock 2 ms ahead).
  const std::string reason = f["clock_correction"]["reason"].get<std::string>();
  EXPECT_EQ(reason.rfind("the linear map lowers violations ", 0), 0u) << reason;
  EXPECT_NE(fixed.out.find(reason), std::string::npos) << fixed.out;
  // Corrected, the wait states are close to the unskewed trace's: not equal, because the
  // linear correction takes the drift from MPI_Finalize, which the simulated ranks do not
  // leave together (measured: 0.56 % more waiting).
  const double clean_total = nlohmann::json::parse(slurp(dir_ / "clean" / "summary.json"))["analyses"]["waitstate"]
                                                  ["total_waiting_s"]
                                                      .get<double>();
  EXPECT_NEAR(f["analyses"]["waitstate"]["total_waiting_s"].get<double>(), clean_total, 0.01 * clean_total);

  const Result none = waitlab("analyze '" + skewed + "' --clock-correction none --out '" + (dir_ / "raw").string() + "'");
  ASSERT_EQ(none.code, 0) << none.err;
  EXPECT_EQ(nlohmann::json::parse(slurp(dir_ / "raw" / "summary.json"))["clock_correction"]["method"], "none");
  const Result bad = waitlab("analyze '" + skewed + "' --clock-correction sometimes");
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err, "waitlab: error: --clock-correction: unknown mode 'sometimes' (allowed: auto, none, linear, clc, "
                     "clamp, linear+clamp)\n");
}

// ---- hostile input and options that would do nothing (issue 19) ----

TEST_F(Cli, UnknownCommandIsAnErrorEvenWithHelp) {
  // Was "A subcommand is required", and `nosuch --help` printed the main help with exit 0.
  for (const char* args : {"nosuch", "nosuch --help", "nosuch x.yaml", "--help nosuch"}) {
    const Result r = waitlab(args);
    EXPECT_EQ(r.code, 2) << args;
    EXPECT_EQ(r.err, "waitlab: error: unknown command 'nosuch' (see waitlab --help)\n") << args;
    EXPECT_EQ(r.out, "") << args;
  }
  const Result r = waitlab("rn x.yaml");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "waitlab: error: unknown command 'rn'; did you mean 'run'?\n");
  EXPECT_EQ(waitlab("run --help").code, 0);
}

TEST_F(Cli, ErrorsAreOnePrintableLine) {
  const auto f = write("small.yaml", kSmall);
  // Control characters from the input are escaped, never printed.
  Result r = waitlab("run '" + f.string() + "' --set 'wo\nrk\x01.x=1'");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "waitlab: error: --set wo\\nrk\\x01.x=1: unknown section 'wo\\nrk\\x01' (sections: name, description, "
            "platform, workload, perturbations, run, outputs, variants)\n");
  const auto k = write("k.yaml", "platform: {type: cluster, nodes: 2}\nworkload: {type: heat1d, ranks: 2}\n"
                                 "\"bad\\nkey\\x07\\x9f\": 1\n");
  r = waitlab("run '" + k.string() + "'");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "waitlab: error: " + k.string() +
                       ":3:1: unknown section 'bad\\nkey\\x07\\xc2\\x9f' (sections: name, description, platform, "
                       "workload, perturbations, run, outputs, variants)\n");
  // Bytes of a binary file that are not UTF-8.
  const auto prv = write("b.prv", "#Paraver (01/01/2024 at 00:00):1000_ns:1(2):1:1(2:1)\n\x9f\xff\n");
  r = waitlab("analyze '" + prv.string() + "' --out '" + (dir_ / "a").string() + "'");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("'\\x9f\\xff'"), std::string::npos) << r.err;
  // An absurdly long message is cut.
  r = waitlab("run '" + f.string() + "' --set run.collectives=" + std::string(10000, 'x'));
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err.size(), std::string("waitlab: error: ").size() + 4096 + std::string("... (15997 more bytes)\n").size());
  EXPECT_EQ(r.err.substr(r.err.size() - 23), "... (15997 more bytes)\n");
}

TEST_F(Cli, ArgumentsMustBeUtf8AndNotEmpty) {
  const auto f = write("small.yaml", kSmall);
  // A path that cannot go into summary.json (JSON is UTF-8) gave exit 1 after the simulation.
  Result r = waitlab("run '" + f.string() + "' --out '" + (dir_ / "o\xff").string() + "'");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "waitlab: error: argument 4 '" + (dir_ / "o").string() +
                       "\\xff' is not valid UTF-8 (byte 0xff at offset " + std::to_string((dir_ / "o").string().size()) +
                       "): waitlab writes paths and names into UTF-8 JSON files; rename the file or directory\n");
  EXPECT_FALSE(fs::exists(dir_ / "o\xff"));
  // '' is not "the default": --out '' ran into the scenario's outputs.dir.
  r = waitlab("run '" + f.string() + "' --out ''");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "waitlab: error: --out: must not be empty (see waitlab --help)\n");
  // Nor may the working directory's name be, for the commands that record absolute paths.
  const fs::path weird = dir_ / "d\xff";
  fs::create_directories(weird);
  std::ofstream(weird / "small.yaml") << kSmall;
  const std::string cmd = "cd '" + weird.string() + "' && '" + WAITLAB_BINARY + "' run small.yaml --no-progress >'" +
                          (dir_ / "out.txt").string() + "' 2>'" + (dir_ / "err.txt").string() + "'";
  const int status = std::system(cmd.c_str());
  EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 2);
  EXPECT_EQ(slurp(dir_ / "err.txt"), "waitlab: error: the working directory '" + dir_.string() +
                                         "/d\\xff' is not valid UTF-8 (byte 0xff at offset " +
                                         std::to_string(dir_.string().size() + 2) +
                                         "): waitlab records absolute paths in its JSON outputs, which are UTF-8; run "
                                         "it from another directory\n");
  EXPECT_FALSE(fs::exists(weird / "out"));
  for (const char* args : {"run ''", "analyze ''", "replay x.wlt --scenario ''", "validate x.yaml --expected ''",
                                  "whatif x.yaml --only ''", "sweep x.yaml --grid ''", "convert a.wlt ''",
                                  "describe ''", "pop x.prv --scaling ''"}) {
    r = waitlab(args);
    EXPECT_EQ(r.code, 2) << args;
    EXPECT_NE(r.err.find(": must not be empty (see waitlab --help)\n"), std::string::npos) << args << ": " << r.err;
  }
}

TEST_F(Cli, InvalidUtf8InTheScenarioKeepsTheOutputsOfTheLastRun) {
  const auto f = write("small.yaml", kSmall);
  const std::string out = (dir_ / "o").string();
  ASSERT_EQ(waitlab("run '" + f.string() + "' --no-progress --out '" + out + "'").code, 0);
  const std::string summary = slurp(dir_ / "o" / "summary.json");
  const std::string report = slurp(dir_ / "o" / "report.html");
  ASSERT_FALSE(summary.empty());
  ASSERT_FALSE(report.empty());
  // Was exit 1 from nlohmann::json's dump after simulating, with summary.json and report.html gone.
  const auto bad = write("bad.yaml", std::string("description: caf\xe9\n") + kSmall);
  const Result r = waitlab("run '" + bad.string() + "' --no-progress --out '" + out + "'");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "waitlab: error: " + bad.string() + ":1:17: not valid UTF-8 (byte 0xe9); a scenario is UTF-8 text\n");
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(slurp(dir_ / "o" / "summary.json") == summary);
  EXPECT_TRUE(slurp(dir_ / "o" / "report.html") == report);
}

TEST_F(Cli, HostileScenariosFailFastWithExit2) {
  // A recursive alias crashed (SIGSEGV); an alias bomb hung beyond 12 GB.
  Result r = waitlab("run '" + write("self.yaml", "a: &a [*a]\n").string() + "'");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "waitlab: error: " + (dir_ / "self.yaml").string() +
                       ":1:4: recursive YAML alias: the node anchored here contains an alias to itself\n");
  std::string bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 12; ++i) {
    bomb += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) bomb += (k ? ", *a" : "*a") + std::to_string(i - 1);
    bomb += "]\n";
  }
  // The work of the refusal is bounded in HostileScenario.AliasBombIsRefusedWithBoundedWork;
  // here the command says it in one line.
  r = waitlab("run '" + write("bomb.yaml", bomb).string() + "'");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("bomb.yaml:1:22: the scenario has more than 100000 YAML nodes"), std::string::npos) << r.err;
  // 10^9 ranks: refused before anything is allocated.
  r = waitlab("run '" + write("small.yaml", kSmall).string() + "' --set workload.ranks=1000000000");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "waitlab: error: --set workload.ranks=1000000000: option 'ranks' of workload heat1d: must be at most "
            "1048576 (waitlab's limit on ranks), got 1000000000\n");
}

// Options that were accepted with exit 0 and changed nothing, and a window length that ended in
// exit 1: each is one line and exit 2, found before anything is simulated or written.
TEST_F(Cli, OptionsThatWouldDoNothingAreErrors) {
  const auto f = write("small.yaml", kSmall);
  const std::string run_dir = (dir_ / "run").string();
  ASSERT_EQ(waitlab("run '" + f.string() + "' --no-progress --out '" + run_dir + "'").code, 0);
  const std::string trace = (dir_ / "run" / "trace.wlt").string();
  const std::string ana = " --out '" + (dir_ / "a").string() + "'";
  const std::map<std::string, std::string> cases = {
      {"analyze '" + trace + "'" + ana + " --windows 1ns",
       "--windows: windows of 1ns would be 3.024e+06 windows over the trace's 0.00302421 s; at most 1000000 (give "
       "a longer window, or a number of windows such as 50)"},
      {"analyze '" + trace + "'" + ana + " -a waitstate --windows 10ms",
       "--windows: only for the timeresolved analysis, which --analyses does not select (waitstate)"},
      {"analyze '" + trace + "'" + ana + " -a delay --ideal smpi",
       "--ideal: only for the timeresolved analysis, which --analyses does not select (waitstate,delay)"},
      {"analyze '" + trace + "'" + ana + " -a delay --convention scalasca",
       "--convention: only for the timeresolved analysis and the critical path, which --analyses does not select "
       "(waitstate,delay)"},
      {"analyze '" + trace + "'" + ana + " -a waitstate,",
       "--analyses: 'waitstate,' has an empty analysis name (write e.g. waitstate,delay; [] for none)"},
      {"replay '" + trace + "' --out '" + (dir_ / "r").string() + "' --iterations-from timestep",
       "--iterations-from: option 'iterations_from' of workload trace: the trace trace.wlt has no region 'timestep' "
       "(its regions: compute, exchange, main)"},
      {"replay '" + trace + "' --out '" + (dir_ / "r").string() + "' --compute-scale foo=0.5",
       "--compute-scale: compute scale 'foo=0.5': the trace trace.wlt has no region 'foo' (its regions: compute, "
       "exchange, main)"},
      {"replay '" + trace + "' --out '" + (dir_ / "r").string() + "' --compute-scale @70=2",
       "--compute-scale: compute scale '@70=2': rank 70 does not exist (the trace trace.wlt has ranks 0..3)"},
      {"run '" + f.string() + "' --set perturbations[0].type=delay --set perturbations[0].rank=1 --set "
       "perturbations[0].iteration=99999 --set perturbations[0].duration=1ms",
       "--set perturbations[0].iteration=99999: option 'iteration' of perturbation delay: iteration 99999 does not "
       "exist (the workload has iterations 0..2)"},
      {"validate '" + f.string() + "' --jobs 2",
       "--jobs: only with --counterfactual (validate simulates its scenarios one after the other)"},
      {"validate '" + f.string() + "' --counterfactual --no-plot", "--no-plot: --counterfactual draws no picture"},
      {"convert '" + trace + "' '" + (dir_ / "t.prv").string() + "' --speed 2Gf",
       "--speed: only for conversions from or to a TI trace (" + trace + " -> " + (dir_ / "t.prv").string() +
           " keeps the times)"},
      {"sweep '" + f.string() + "' --grid 'workload.iterations=1,,2'",
       "--grid workload.iterations=1,,2: '1,,2' has an empty entry (write NAME,NAME,...)"},
      {"whatif '" + f.string() + "' --variant '{name: v, network: ideal}' --only v,",
       "--only: 'v,' has an empty entry (write NAME,NAME,...)"},
      {"whatif '" + f.string() + "' --variant '{name: v, network: ideal}' --only v,v",
       "--only: the variant 'v' is named twice"},
      {"sweep '" + f.string() + "' --grid 'workload.iterations=1,2,1'",
       "--grid workload.iterations=1,2,1: the value '1' is given twice"},
      {"sweep '" + f.string() + "' --set workload.iterations=5 --grid 'workload.iterations=1,2'",
       "--set workload.iterations=5: 'workload.iterations' is swept by --grid workload.iterations=1,2, which "
       "overrides it at every grid point"},
  };
  for (const auto& [args, message] : cases) {
    const Result r = waitlab(args);
    EXPECT_EQ(r.code, 2) << args;
    EXPECT_EQ(r.err, "waitlab: error: " + message + "\n") << args;
  }
  EXPECT_FALSE(fs::exists(dir_ / "a"));
  EXPECT_FALSE(fs::exists(dir_ / "r"));
  EXPECT_FALSE(fs::exists(dir_ / "t.prv"));
  // A run's windows are counted once its span is known: after simulating, before any output.
  const Result r = waitlab("run '" + f.string() + "' --no-progress --out '" + (dir_ / "w").string() +
                           "' --set outputs.analyses=timeresolved --set outputs.windows=1ns");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err.rfind("waitlab: error: outputs.windows: windows of 1ns would be ", 0), 0u) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "w" / "summary.json"));
}

}  // namespace
}  // namespace waitlab::app
