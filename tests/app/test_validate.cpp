// `waitlab validate`: the joined table is consistent with the per-scenario outputs it is made
// of (truth = waitstates.csv, estimate = minprofile.json), the checked-in table comparison
// finds real differences only, and bad input exits with 2.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "app/commands.hpp"
#include "app/validate.hpp"
#include "tests/temp_dir.hpp"

namespace waitlab::app {
namespace {

using test::slurp;

class Validate : public test::TempDirTest {
 protected:
  int run(std::vector<std::string> args, std::string* out_text = nullptr, std::string* err_text = nullptr) {
    args.insert(args.begin(), "waitlab");
    std::vector<const char*> argv;
    for (const auto& a : args) argv.push_back(a.c_str());
    std::ostringstream out, err;
    const int code = app::main(static_cast<int>(argv.size()), argv.data(), out, err);
    if (out_text) *out_text = out.str();
    if (err_text) *err_text = err.str();
    return code;
  }
  // Allreduce loop with 40 % random imbalance per rank: Wait at NxN in MPI_Allreduce.
  std::string scenario() {
    return write("small.yaml", R"(name: small
platform: {type: cluster, nodes: 16, cores: 4}
workload: {type: allreduce_loop, ranks: 64, iterations: 10, compute: 200us, halo: 2KiB}
perturbations:
  - {type: imbalance_uniform, amplitude: 40%}
run: {seed: 3}
)");
  }
  // Wavefront sweeps: Late Sender in MPI_Recv.
  std::string sweep() {
    return write("sweep.yaml", R"(name: sweep
platform: {type: cluster, nodes: 16, cores: 4}
workload: {type: sweep2d, px: 8, py: 8, iterations: 2}
run: {seed: 3}
)");
  }
};

TEST_F(Validate, TableJoinsTruthAndEstimateOfTheSameRun) {
  const auto out = (dir_ / "out").string();
  std::string text;
  ASSERT_EQ(run({"validate", scenario(), sweep(), "--out", out, "--no-plot"}, &text), 0) << text;
  const auto v = nlohmann::json::parse(slurp(dir_ / "out/validation.json"));
  ASSERT_EQ(v["scenarios"].size(), 2u);
  std::size_t rows_total = 0;
  for (const char* name : {"small", "sweep"}) {
    SCOPED_TRACE(name);
    const auto sdir = dir_ / "out" / name;
    // Truth per (call path, pattern) from waitstates.csv, as the table must have it.
    std::map<std::pair<std::string, std::string>, double> truth;
    std::istringstream ws(slurp(sdir / "waitstates.csv"));
    std::string line;
    std::getline(ws, line);
    while (std::getline(ws, line)) {
      std::vector<std::string> f;
      std::istringstream ls(line);
      for (std::string x; std::getline(ls, x, ',');) f.push_back(x);
      if (f[0] == "late_sender_wrong_order_same_source" || f[0] == "late_sender_wrong_order_different_source") continue;
      truth[{f[1], f[0]}] += std::stod(f[3]);
    }
    const auto mp = nlohmann::json::parse(slurp(sdir / "minprofile.json"));
    const double denom = mp["ranks"].get<double>() * mp["wall_time_s"].get<double>();
    const auto& sc = v["scenarios"][std::string(name) == "small" ? 0 : 1];
    EXPECT_EQ(sc["scenario"], name);
    const auto& rows = sc["call_paths"];
    ASSERT_GE(rows.size(), 1u);
    rows_total += rows.size();
    bool nxn = false, ls = false;
    for (const auto& r : rows) {
      const auto key = std::make_pair(r["call_path"].get<std::string>(), r["pattern"].get<std::string>());
      ASSERT_TRUE(truth.count(key)) << key.first;
      EXPECT_NEAR(r["truth_pct"].get<double>(), 100 * truth[key] / denom, 1e-9);
      EXPECT_GE(r["truth_pct"].get<double>(), 0.5);
      for (const auto& e : mp["call_paths"]) {
        if (e["call_path"] == key.first && e["pattern"] == key.second) {
          EXPECT_DOUBLE_EQ(r["estimate_pct"]["paper"].get<double>(), 100 * e["wait_ratio"]["paper"].get<double>());
        }
      }
      EXPECT_NEAR(r["diff_pp"]["paper"].get<double>(),
                  r["estimate_pct"]["paper"].get<double>() - r["truth_pct"].get<double>(), 1e-9);
      nxn = nxn || key.second == "wait_at_nxn";
      ls = ls || key.second == "late_sender";
    }
    EXPECT_EQ(nxn, std::string(name) == "small");
    EXPECT_EQ(ls, std::string(name) == "sweep");
  }
  // Every row × 4 variants in the CSV, and the terminal table names the scenarios.
  const std::string csv = slurp(dir_ / "out/validation.csv");
  EXPECT_EQ(static_cast<std::size_t>(std::count(csv.begin(), csv.end(), '\n')), 1 + 4 * rows_total);
  EXPECT_NE(text.find("small — 64 ranks"), std::string::npos);
  EXPECT_NE(text.find("sweep — 64 ranks"), std::string::npos);
}

TEST_F(Validate, ExpectedTableIsComparedAndUpdated) {
  const auto out = (dir_ / "out").string();
  const auto expected = (dir_ / "expected.csv").string();
  EXPECT_EQ(run({"validate", scenario(), "--out", out, "--no-plot", "--expected", expected, "--update"}), 0);
  std::string text;
  EXPECT_EQ(run({"validate", scenario(), "--out", out, "--no-plot", "--expected", expected}, &text), 0) << text;
  EXPECT_NE(text.find("same as"), std::string::npos);
  // A changed estimate is found and named; the run exits with 3.
  std::string csv = slurp(expected);
  const auto start = csv.find('\n') + 1;  // row 1
  const auto end = csv.find('\n', start);
  // estimate_pct is the 8th field: between the 7th and 8th comma.
  std::size_t c7 = start;
  for (int i = 0; i < 7; ++i) c7 = csv.find(',', c7) + 1;
  const std::size_t c8 = csv.find(',', c7);
  ASSERT_LT(c8, end);
  const std::string row = csv.substr(start, c7 - start) + std::to_string(std::stod(csv.substr(c7, c8 - c7)) + 0.01) +
                          csv.substr(c8, end - c8);
  csv.replace(start, end - start, row);
  write("expected.csv", csv);
  EXPECT_EQ(run({"validate", scenario(), "--out", out, "--no-plot", "--expected", expected}, &text), 3);
  EXPECT_NE(text.find("estimate_pct"), std::string::npos) << text;
}

TEST_F(Validate, CompareToleratesRoundingOnly) {
  const std::string head =
      "scenario,call_path,function,pattern,calls,truth_pct,variant,estimate_pct,diff_pp,rel_diff,"
      "complete_at_entry,mean_call_s,mean_truth_s,mean_rank_minimum_s\n";
  const std::string a = head + "s,main/MPI_Recv,MPI_Recv,late_sender,10,2.5,paper,3,0.5,0.2,4,1e-5,2e-6,1e-6\n";
  EXPECT_TRUE(compare_validation_csv(a, a).empty());
  const std::string close =
      head + "s,main/MPI_Recv,MPI_Recv,late_sender,10,2.5000000001,paper,3,0.5,0.2,4,1e-5,2e-6,1e-6\n";
  EXPECT_TRUE(compare_validation_csv(a, close).empty());
  const std::string off = head + "s,main/MPI_Recv,MPI_Recv,late_sender,10,2.5,paper,3.01,0.51,0.204,5,1e-5,2e-6,1e-6\n";
  EXPECT_EQ(compare_validation_csv(a, off).size(), 4u);
  const std::string other = head + "s,main/MPI_Wait,MPI_Wait,late_sender,10,2.5,paper,3,0.5,0.2,4,1e-5,2e-6,1e-6\n";
  EXPECT_EQ(compare_validation_csv(a, other).size(), 2u);  // one missing, one not expected
  const std::string empty_stats = head + "s,main/MPI_Recv,MPI_Recv,late_sender,10,2.5,paper,3,0.5,0.2,,,,\n";
  EXPECT_EQ(compare_validation_csv(a, empty_stats).size(), 4u);
  EXPECT_EQ(compare_validation_csv(a, head + "s,cut,short\n").size(), 2u);  // malformed: reported
}

TEST_F(Validate, BadInputExitsWith2) {
  std::string err;
  EXPECT_EQ(run({"validate", (dir_ / "none.yaml").string(), "--out", (dir_ / "o").string()}, nullptr, &err), 2);
  EXPECT_NE(err.find("none.yaml"), std::string::npos) << err;
  EXPECT_EQ(run({"validate", scenario(), "--update"}, nullptr, &err), 2);
  EXPECT_NE(err.find("--update needs --expected"), std::string::npos) << err;
  EXPECT_EQ(run({"validate", scenario(), "--out", (dir_ / "o").string(), "--no-plot", "--expected",
                 (dir_ / "missing.csv").string()},
                nullptr, &err),
            2);
  EXPECT_NE(err.find("missing.csv"), std::string::npos) << err;
}

}  // namespace
}  // namespace waitlab::app
