// `waitlab replay` of traces with row and column communicators (tests/analysis/grid_trace.hpp):
// exit 0, and summary.json shows the replay on the trace's groups — the run's end, Wait at NxN
// of the two column ranks that waited, its delay cost on the two ranks that caused it.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "analysis/trace/otf2.hpp"
#include "analysis/trace/wlt.hpp"
#include "tests/analysis/grid_trace.hpp"
#include "tests/temp_dir.hpp"

namespace waitlab::app {
namespace {

using ReplayCommsCli = test::TempDirTest;

TEST_F(ReplayCommsCli, Otf2AndParaverTracesReplayOnTheirCommunicators) {
  trace::write_otf2(test::grid::row_column_trace(), (dir_ / "grid").string());
  const std::string prv = std::string(WAITLAB_SOURCE_DIR) + "/tests/data/grid2x2_comms.prv";
  for (const std::string& input : {(dir_ / "grid").string(), prv}) {
    SCOPED_TRACE(input);
    const std::string out = (dir_ / "out").string();
    std::filesystem::remove_all(out);
    const std::string cmd = std::string("'") + WAITLAB_BINARY + "' replay '" + input +
                            "' --platform cluster --set platform.nodes=4 --set platform.bandwidth=1GBps"
                            " --set platform.latency=1us --set 'outputs.analyses=[waitstate, delay]'"
                            " --no-progress --out '" +
                            out + "' > '" + (dir_ / "log").string() + "' 2>&1";
    const int status = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0) << test::slurp(dir_ / "log");

    const auto j = nlohmann::json::parse(test::slurp(dir_ / "out" / "summary.json"));
    // 1100 µs + 5T = 1120.2945 µs (grid_trace.hpp); on MPI_COMM_WORLD the rows would wait.
    EXPECT_NEAR(j["simulated_time_s"].get<double>(), test::grid::expected().finalize_enter, 1e-12);
    for (const auto& n : j["replay_notes"])
      EXPECT_EQ(n.get<std::string>().find("communicator"), std::string::npos);
    const auto& a = j["analyses"];
    // Init, Finalize, two row allreduces, two column allreduces and two column bcasts.
    EXPECT_EQ(a["matching"]["collective_instances"], 8);
    EXPECT_EQ(a["matching"]["unmatched"]["collective_calls"], 0);
    const auto& nxn = a["waitstate"]["patterns"]["wait_at_nxn"];
    EXPECT_EQ(nxn["instances"], 2);  // ranks 2 and 3 on their columns; none on the rows
    EXPECT_NEAR(nxn["total_s"].get<double>(), 2 * test::grid::kColumnWait, 1e-12);
    EXPECT_NEAR(nxn["max_s"].get<double>(), test::grid::kColumnWait, 1e-12);
    // Caused by rank 0 resp. 1, the other member of each column (900 µs of extra compute each).
    const auto& top = a["delay"]["top"];
    ASSERT_EQ(top.size(), 2u);
    for (std::size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(top[i]["rank"], static_cast<int>(i));
      EXPECT_EQ(top[i]["kind"], "n_to_n");
      EXPECT_NEAR(top[i]["short_term_s"].get<double>(), test::grid::kColumnWait, 1e-12);
    }
    // The replay's trace holds the trace's groups.
    const trace::Trace t = trace::read_wlt((dir_ / "out" / "trace.wlt").string());
    ASSERT_EQ(t.defs.comms.size(), 5u);
    EXPECT_EQ(t.defs.comms[test::grid::kRow1].members, (std::vector<trace::Rank>{2, 3}));
    EXPECT_EQ(t.defs.comms[test::grid::kCol1].members, (std::vector<trace::Rank>{1, 3}));
  }
}

}  // namespace
}  // namespace waitlab::app
