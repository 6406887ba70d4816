// Replay fidelity against SimGrid itself: a small MPI program compiled with smpicc and traced
// with `smpirun -trace-ti` on 16 ranks; `waitlab replay` of that trace under SMPI's default
// semantics must end at the simulated time `smpirun -replay` reaches on the same platform
// (within 0.1 %), and the TI trace waitlab writes of its own replay must replay under
// `smpirun -replay` to the same time. A LULESH-like MPI_Waitall over sends only, which SimGrid's
// replayer cannot replay, ends at the traced run's own time (1e-6 relative).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>

#include "tests/temp_dir.hpp"

namespace waitlab::app {
namespace {

namespace fs = std::filesystem;

using test::slurp;

class SmpiReplay : public test::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    std::ofstream(dir_ / "platform.xml")
        << "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
           "<platform version=\"4.1\">\n"
           "  <cluster id=\"c\" prefix=\"node-\" suffix=\"\" radical=\"0-15\" speed=\"1Gf\" bw=\"10GBps\" "
           "lat=\"1us\" loopback_bw=\"50GBps\" loopback_lat=\"0.1us\"/>\n</platform>\n";
    std::ofstream hosts(dir_ / "hosts");
    for (int i = 0; i < 16; ++i) hosts << "node-" << i << "\n";
  }
  // Runs `cmd` in the test directory; returns its exit status, output in `out`.
  int sh(const std::string& cmd, std::string& out) const {
    const std::string full = "cd '" + dir_.string() + "' && " + cmd + " > out.txt 2>&1";
    const int status = std::system(full.c_str());
    out = slurp(dir_ / "out.txt");
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  // `smpirun -replay` of an index on the 16-node platform: the simulated time it prints.
  double smpi_replay(const std::string& index) const {
    std::string out;
    const int rc = sh("smpirun -np 16 -platform platform.xml -hostfile hosts -replay '" + index +
                          "' --cfg=smpi/display-timing:yes --cfg=smpi/host-speed:1Gf",
                      out);
    EXPECT_EQ(rc, 0) << out;
    std::smatch m;
    const std::regex re("Simulated time: ([0-9.eE+-]+) seconds");
    if (!std::regex_search(out, m, re)) {
      ADD_FAILURE() << "no simulated time in smpirun's output:\n" << out;
      return -1;
    }
    return std::stod(m[1]);
  }
  double waitlab_replay(const std::string& trace, const std::string& out_dir) const {
    std::string out;
    const int rc = sh(std::string("'") + WAITLAB_BINARY + "' replay '" + trace +
                          "' --platform platform.xml --set run.semantics=smpi-default --no-progress --out '" +
                          out_dir + "'",
                      out);
    EXPECT_EQ(rc, 0) << out;
    const auto j = nlohmann::json::parse(slurp(dir_ / out_dir / "summary.json"));
    return j["simulated_time_s"].get<double>();
  }
};

TEST_F(SmpiReplay, RingAndAllreduceEndWhereSmpirunReplayEnds) {
  std::string out;
  ASSERT_EQ(sh("smpicc -O1 '" + std::string(WAITLAB_SOURCE_DIR) + "/tests/data/ti/ring_allreduce.c' -o ring", out), 0)
      << out;
  ASSERT_EQ(sh("smpirun -np 16 -platform platform.xml -hostfile hosts -trace-ti --cfg=tracing/filename:ring.ti "
               "--cfg=smpi/host-speed:1Gf ./ring",
               out),
            0)
      << out;
  const double smpi = smpi_replay("ring.ti");
  ASSERT_GT(smpi, 0);
  const double ours = waitlab_replay("ring.ti", "replay");
  EXPECT_LT(std::abs(ours - smpi) / smpi, 1e-3) << "waitlab " << ours << " s, smpirun -replay " << smpi << " s";

  // waitlab's TI writer: its trace of the replay replays under SMPI to the same end.
  ASSERT_EQ(sh(std::string("'") + WAITLAB_BINARY + "' convert replay/trace.wlt ours.ti", out), 0) << out;
  const double again = smpi_replay("ours.ti");
  EXPECT_LT(std::abs(again - smpi) / smpi, 1e-3) << "smpirun -replay of waitlab's TI " << again << " s, of SMPI's "
                                                 << smpi << " s";
}

// LULESH's MPI_Waitall over its sends while its receives are pending (tests/data/ti/
// lulesh_waitall.c: two exchange phases on a 4x4 grid, boundary ranks passing null requests).
// The TI trace records `waitall 8` and, after it, one `wait SRC DST TAG` per receive. SimGrid's
// own replayer completes every request in a waitall and then aborts on the first of those
// waits ("action wait not preceded by any irecv or isend"), so the reference is the traced
// run's own end time; the variant whose waitall takes the receives too (-DWAITALL_ALL) shows
// that reference to be the one `smpirun -replay` reaches where it can replay.
TEST_F(SmpiReplay, LuleshWaitallOverSendsEndsAtTheTracedRunsTime) {
  const std::string src = std::string(WAITLAB_SOURCE_DIR) + "/tests/data/ti/lulesh_waitall.c";
  // Traces `prog`; returns the latest end time the ranks print.
  const auto traced = [&](const std::string& prog) {
    std::string out;
    EXPECT_EQ(sh("smpirun -np 16 -platform platform.xml -hostfile hosts -trace-ti --cfg=tracing/filename:" + prog +
                     ".ti --cfg=smpi/host-speed:1Gf --cfg=smpi/simulate-computation:no --cfg=smpi/wtime:0 ./" + prog,
                 out),
              0)
        << out;
    double end = -1;
    const std::regex re("rank [0-9]+ ends at ([0-9.eE+-]+)");
    for (auto it = std::sregex_iterator(out.begin(), out.end(), re); it != std::sregex_iterator(); ++it)
      end = std::max(end, std::stod((*it)[1]));
    EXPECT_GT(end, 0) << out;
    return end;
  };
  std::string out;
  ASSERT_EQ(sh("smpicc -O1 '" + src + "' -o lulesh && smpicc -O1 -DWAITALL_ALL '" + src + "' -o lulesh_all", out), 0)
      << out;

  const double ran = traced("lulesh");
  const std::string index = slurp(dir_ / "lulesh.ti");
  const std::string rank0 = slurp(dir_ / index.substr(0, index.find('\n')));  // rank 0: 3 neighbours of 8
  EXPECT_NE(rank0.find("0 waitall 8\n0 compute 200000\n0 wait 1 0 13\n0 wait 4 0 11\n0 wait 5 0 10\n"),
            std::string::npos)
      << rank0;
  const double ours = waitlab_replay("lulesh.ti", "replay");
  EXPECT_LT(std::abs(ours - ran) / ran, 1e-6) << "waitlab " << ours << " s, the traced run " << ran << " s";
  const auto j = nlohmann::json::parse(slurp(dir_ / "replay" / "summary.json"));
  EXPECT_NE(j["replay_notes"].dump().find("160 × waitall records completing only the outstanding requests no later "
                                          "wait record names"),
            std::string::npos)
      << j["replay_notes"].dump();
  EXPECT_NE(sh("smpirun -np 16 -platform platform.xml -hostfile hosts -replay lulesh.ti --cfg=smpi/host-speed:1Gf",
               out),
            0);
  EXPECT_NE(out.find("action wait not preceded by any irecv or isend"), std::string::npos) << out;

  const double ran_all = traced("lulesh_all");
  const double smpi_all = smpi_replay("lulesh_all.ti");
  EXPECT_LT(std::abs(smpi_all - ran_all) / ran_all, 1e-5)  // smpirun prints 6 digits
      << "smpirun -replay " << smpi_all << " s, the run " << ran_all << " s";
  const double ours_all = waitlab_replay("lulesh_all.ti", "replay_all");
  EXPECT_LT(std::abs(ours_all - ran_all) / ran_all, 1e-6) << "waitlab " << ours_all << " s, the run " << ran_all;
  // Completing every request at the waitall, as before, ends where the all-variant ends: 3 % late.
  EXPECT_GT(ran_all, ran * 1.01);
}

}  // namespace
}  // namespace waitlab::app
