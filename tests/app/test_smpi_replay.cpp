// Replay fidelity against SimGrid itself: small MPI programs compiled with smpicc and traced
// with `smpirun -trace-ti` on 16 ranks; `waitlab replay` of such a trace under SMPI's default
// semantics must end at the simulated time `smpirun -replay` reaches on the same platform, and
// the TI trace waitlab writes of its own replay must replay under `smpirun -replay` to the same
// time. With collective algorithms chosen per collective (`--cfg=smpi/alltoall:pair` when
// tracing and replaying, run.collective_algorithms in waitlab) and with the v-collectives'
// uneven counts, the end times agree to 1e-6 relative (smpirun's clock read to 15 decimals).
// A LULESH-like MPI_Waitall over sends only, which SimGrid's replayer cannot replay, ends at the
// traced run's own time (1e-6 relative). And the algorithm table of sim::collective_algorithms()
// is the one SimGrid itself prints.
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

#include "sim/engine.hpp"
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
           "  <cluster id=\"c\" prefix=\"node-\" suffix=\"\" radical=\"0-255\" speed=\"1Gf\" bw=\"10GBps\" "
           "lat=\"1us\" loopback_bw=\"50GBps\" loopback_lat=\"0.1us\"/>\n</platform>\n";
    std::ofstream hosts(dir_ / "hosts");
    for (int i = 0; i < 256; ++i) hosts << "node-" << i << "\n";
  }
  // Runs `cmd` in the test directory; returns its exit status, output in `out`.
  int sh(const std::string& cmd, std::string& out) const {
    const std::string full = "cd '" + dir_.string() + "' && " + cmd + " > out.txt 2>&1";
    const int status = std::system(full.c_str());
    out = slurp(dir_ / "out.txt");
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  // `smpirun -replay` of an index on `ranks` nodes of the 256-node platform (`cfg`: more options, such as
  // --cfg=smpi/alltoall:pair): the simulated time at its end. SMPI prints it with 6 digits;
  // the log line's clock, formatted with 15 decimals, has them all.
  double smpi_replay(const std::string& index, const std::string& cfg = "", int ranks = 16) const {
    std::string out;
    const int rc = sh("smpirun -np " + std::to_string(ranks) + " -platform platform.xml -hostfile hosts -replay '" + index +
                          "' --cfg=smpi/display-timing:yes --cfg=smpi/host-speed:1Gf " + cfg +
                          " '--log=smpi_utils.fmt:[%.15r]%e%m%n'",
                      out);
    EXPECT_EQ(rc, 0) << out;
    std::smatch m;
    const std::regex re("\\[([0-9.eE+-]+)\\] Simulated time: ");
    if (!std::regex_search(out, m, re)) {
      ADD_FAILURE() << "no simulated time in smpirun's output:\n" << out;
      return -1;
    }
    return std::stod(m[1]);
  }
  // `waitlab replay` under smpi-default semantics (`sets`: more --set options); its
  // summary.json (simulated_time_s, replay_notes, run).
  nlohmann::json waitlab_summary(const std::string& trace, const std::string& out_dir,
                                 const std::string& sets = "") const {
    std::string out;
    const int rc = sh(std::string("'") + WAITLAB_BINARY + "' replay '" + trace +
                          "' --platform platform.xml --set run.semantics=smpi-default " + sets +
                          " --no-progress --out '" + out_dir + "'",
                      out);
    EXPECT_EQ(rc, 0) << out;
    return nlohmann::json::parse(slurp(dir_ / out_dir / "summary.json"));
  }
  double waitlab_replay(const std::string& trace, const std::string& out_dir, const std::string& sets = "") const {
    return waitlab_summary(trace, out_dir, sets)["simulated_time_s"].get<double>();
  }
  // tests/data/ti/collectives.c, compiled to ./coll; `what` traced into `name`.ti (`cfg`: more
  // options for the traced run).
  void trace_collectives(const std::string& what, const std::string& name, const std::string& cfg = "") const {
    std::string out;
    if (!fs::exists(dir_ / "coll")) {
      ASSERT_EQ(sh("smpicc -O1 '" + std::string(WAITLAB_SOURCE_DIR) + "/tests/data/ti/collectives.c' -o coll", out), 0)
          << out;
    }
    ASSERT_EQ(sh("smpirun -np 16 -platform platform.xml -hostfile hosts -trace-ti --cfg=tracing/filename:" + name +
                     ".ti --cfg=smpi/host-speed:1Gf " + cfg + " ./coll " + what,
                 out),
              0)
        << out;
  }
};

double relative(double a, double b) {
  return std::abs(a - b) / std::abs(b);
}

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

// sim::collective_algorithms() is SimGrid's own table: smpirun, asked for an algorithm it does
// not know, aborts listing the valid ones, and they are the table's, in its order.
TEST_F(SmpiReplay, AlgorithmTableIsSimGrids) {
  std::string out;
  ASSERT_EQ(sh("smpicc -O1 '" + std::string(WAITLAB_SOURCE_DIR) + "/tests/data/ti/collectives.c' -o coll", out), 0)
      << out;
  for (const auto& c : sim::collective_algorithms()) {
    SCOPED_TRACE(c.collective);
    EXPECT_NE(sh("smpirun -np 2 -platform platform.xml -hostfile hosts --cfg=smpi/" + c.collective +
                     ":no_such_algorithm ./coll alltoall",
                 out),
              0);
    std::smatch m;
    const std::regex re("Collective '" + c.collective + "' has no algorithm 'no_such_algorithm'! Valid algorithms: "
                        "([^\\n]*)\\.");
    ASSERT_TRUE(std::regex_search(out, m, re)) << out;
    std::string ours;
    for (const auto& a : c.algorithms) ours += (ours.empty() ? "" : ", ") + a;
    EXPECT_EQ(ours, m[1].str());
  }
}

// A trace recorded with SMPI's pairwise alltoall replays to smpirun -replay's end with the same
// choice (run.collective_algorithms.alltoall=pair, on top of smpi-default's selector), and the
// default algorithm is measurably elsewhere.
TEST_F(SmpiReplay, AlltoallWithPairEndsWhereSmpirunReplayEnds) {
  trace_collectives("alltoall", "a2a", "--cfg=smpi/alltoall:pair");
  const double smpi = smpi_replay("a2a.ti", "--cfg=smpi/alltoall:pair");
  ASSERT_GT(smpi, 0);
  const auto j = waitlab_summary("a2a.ti", "pair", "--set run.collective_algorithms.alltoall=pair");
  const double ours = j["simulated_time_s"].get<double>();
  EXPECT_LT(relative(ours, smpi), 1e-6) << "waitlab " << ours << " s, smpirun -replay " << smpi << " s";
  EXPECT_EQ(j["run"]["collective_algorithms"]["alltoall"], "pair");
  EXPECT_EQ(j["run"]["collective_algorithms"]["bcast"], "default");
  EXPECT_NE(j["replay_notes"].dump().find("SimGrid's default collective selector; alltoall=pair), as"),
            std::string::npos)
      << j["replay_notes"].dump();
  // Without the choice: SimGrid's default alltoall, on both sides, another end.
  const double smpi_default = smpi_replay("a2a.ti");
  const double ours_default = waitlab_replay("a2a.ti", "default");
  EXPECT_LT(relative(ours_default, smpi_default), 1e-6) << ours_default << " vs " << smpi_default;
  EXPECT_GT(relative(ours_default, smpi), 0.01) << "the algorithm makes no difference: " << ours_default;
}

// MPI_Alltoallv with uneven counts (rank i sends ((i * j) % 7 + 1) KiB to rank j) replays with
// every count: no approximation note, smpirun -replay's end (default algorithm and pair).
TEST_F(SmpiReplay, UnevenAlltoallvEndsWhereSmpirunReplayEnds) {
  trace_collectives("alltoallv", "a2av");
  const double smpi = smpi_replay("a2av.ti");
  ASSERT_GT(smpi, 0);
  const auto j = waitlab_summary("a2av.ti", "replay");
  const double ours = j["simulated_time_s"].get<double>();
  EXPECT_LT(relative(ours, smpi), 1e-6) << "waitlab " << ours << " s, smpirun -replay " << smpi << " s";
  // Nothing approximated: the notes are TI's communicator assumption and the protocol.
  ASSERT_EQ(j["replay_notes"].size(), 2u) << j["replay_notes"].dump();
  EXPECT_EQ(j["replay_notes"][0], "48 × collectives assumed on MPI_COMM_WORLD (TI records no communicator)");
  EXPECT_EQ(j["replay_notes"][1],
            "protocol: SMPI's defaults (run.semantics=smpi-default: sends below 65536 B detached, SimGrid's default "
            "collective selector), as `smpirun -trace-ti` records without --cfg options; a recording made with "
            "others replays as recorded with them given here too: run.eager_threshold for "
            "smpi/send-is-detached-thresh, run.collective_algorithms.X=Y for smpi/X:Y");
  // Under waitlab's own protocol the note says so, and how to match the recording.
  std::string out;
  ASSERT_EQ(sh(std::string("'") + WAITLAB_BINARY + "' replay a2av.ti --platform platform.xml --no-progress --out own",
               out),
            0)
      << out;
  EXPECT_NE(out.find("replay note     protocol: waitlab's (run.semantics=waitlab: sends below 65536 B eager; "
                     "collectives 'fast': "),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("), not SMPI's defaults, with which `smpirun -trace-ti` recorded; to replay as recorded: --set "
                     "run.semantics=smpi-default, and the recording's --cfg settings as run.eager_threshold "
                     "(smpi/send-is-detached-thresh) and run.collective_algorithms.X=Y (smpi/X:Y)\n"),
            std::string::npos)
      << out;
  const double smpi_pair = smpi_replay("a2av.ti", "--cfg=smpi/alltoallv:pair");
  const double ours_pair = waitlab_replay("a2av.ti", "pair", "--set run.collective_algorithms.alltoallv=pair");
  EXPECT_LT(relative(ours_pair, smpi_pair), 1e-6) << ours_pair << " vs " << smpi_pair;
  EXPECT_GT(relative(ours_pair, ours), 0.01);
}

// MPI_Gatherv, MPI_Allgatherv, MPI_Scatterv and MPI_Reduce_scatter with uneven blocks likewise;
// and waitlab's simulated trace of them, whose totals give the counts back, written as TI,
// replays under smpirun -replay to the same end.
TEST_F(SmpiReplay, OtherVCollectivesEndWhereSmpirunReplayEnds) {
  trace_collectives("vcoll", "vc");
  const double smpi = smpi_replay("vc.ti");
  ASSERT_GT(smpi, 0);
  const auto j = waitlab_summary("vc.ti", "replay");
  const double ours = j["simulated_time_s"].get<double>();
  EXPECT_LT(relative(ours, smpi), 1e-6) << "waitlab " << ours << " s, smpirun -replay " << smpi << " s";
  // Nothing approximated: the notes are TI's communicator assumption, the iterations, the protocol.
  ASSERT_EQ(j["replay_notes"].size(), 3u) << j["replay_notes"].dump();
  EXPECT_EQ(j["replay_notes"][2].get<std::string>().rfind("protocol: SMPI's defaults", 0), 0u);
  EXPECT_EQ(j["replay_notes"][0], "64 × collectives assumed on MPI_COMM_WORLD (TI records no communicator)");
  EXPECT_EQ(j["replay_notes"][1].get<std::string>().rfind("iterations: no repeating pattern", 0), 0u);
  std::string out;
  ASSERT_EQ(sh(std::string("'") + WAITLAB_BINARY + "' convert replay/trace.wlt ours.ti", out), 0) << out;
  const double again = smpi_replay("ours.ti");
  EXPECT_LT(relative(again, smpi), 1e-6) << "smpirun -replay of waitlab's TI " << again << " s, of SMPI's " << smpi;
}

// A TI `compute 0` (smpi_execute_flops(0)) is an execution of no flops in SMPI's replay and in
// the traced run: it ends after the other ranks' calls of the same instant. A Sweep3D-like
// wavefront of blocking 3840-byte sends with no compute in its blocks (bench/apps/sweep3d.c,
// 64 ranks, one iteration) ends where smpirun -replay ends; skipping the executions, as
// waitlab did, ended 1.9e-3 late.
TEST_F(SmpiReplay, ComputeOfNoFlopsIsAnExecutionAsInSmpi) {
  std::string out;
  ASSERT_EQ(sh("smpicc -O1 '" + std::string(WAITLAB_SOURCE_DIR) + "/bench/apps/sweep3d.c' -o sweep3d", out), 0)
      << out;
  ASSERT_EQ(sh("smpirun -np 64 -platform platform.xml -hostfile hosts -trace-ti --cfg=tracing/filename:sw.ti "
               "--cfg=smpi/host-speed:1Gf --cfg=smpi/simulate-computation:no ./sweep3d 1 16 100 10 3 0",
               out),
            0)
      << out;
  const std::string index = slurp(dir_ / "sw.ti");
  const std::string first = slurp(dir_ / index.substr(0, index.find('\n')));
  EXPECT_NE(first.find(" compute 0\n"), std::string::npos);
  const double smpi = smpi_replay("sw.ti", "", 64);
  ASSERT_GT(smpi, 0);
  const double ours = waitlab_replay("sw.ti", "replay");
  EXPECT_LT(relative(ours, smpi), 1e-9) << "waitlab " << ours << " s, smpirun -replay " << smpi << " s";
}

// Under SMPI's semantics a TI trace's flops are executed, as SMPI's replay executes them, not
// slept: the same Sweep3D-like wavefront with compute in its blocks, on 256 ranks, ends where
// smpirun -replay ends; with sleeps of the same durations it ended 1.3e-4 late (SimGrid orders
// an instant's events by their exact dates, which differ in the last bits).
TEST_F(SmpiReplay, FlopsAreExecutedAsInSmpi) {
  std::string out;
  ASSERT_EQ(sh("smpicc -O1 '" + std::string(WAITLAB_SOURCE_DIR) + "/bench/apps/sweep3d.c' -o sweep3d", out), 0)
      << out;
  ASSERT_EQ(sh("smpirun -np 256 -platform platform.xml -hostfile hosts -trace-ti --cfg=tracing/filename:sw.ti "
               "--cfg=smpi/host-speed:1Gf --cfg=smpi/simulate-computation:no ./sweep3d 1 16 20 10 6",
               out),
            0)
      << out;
  const double smpi = smpi_replay("sw.ti", "", 256);
  ASSERT_GT(smpi, 0);
  const double ours = waitlab_replay("sw.ti", "replay");
  EXPECT_LT(relative(ours, smpi), 1e-9) << "waitlab " << ours << " s, smpirun -replay " << smpi << " s";
}

}  // namespace
}  // namespace waitlab::app
