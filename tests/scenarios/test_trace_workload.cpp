// `workload: {trace: PATH}`: a scenario that replays a trace file, the path relative to the
// scenario, with its options checked like any workload's.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "util/error.hpp"
#include "models/action.hpp"
#include "scenarios/scenario.hpp"
#include "tests/temp_dir.hpp"

namespace waitlab::scenarios {
namespace {

namespace fs = std::filesystem;

class TraceWorkload : public test::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    write("traces/pp.txt", "0 init\n1 init\n0 compute 2e6\n0 send 1 3 64\n1 recv 0 3 64\n"
                           "1 compute 1e6\n0 finalize\n1 finalize\n");
  }
  std::string scenario(const std::string& text) { return write("s.yaml", text); }
};

TEST_F(TraceWorkload, ShorthandRelativePathAndOptions) {
  const auto s = load_scenario(scenario("platform: {type: cluster, nodes: 2, cores: 1}\n"
                                        "workload: {trace: traces/pp.txt, compute_scale: \"@0=0.5,2\"}\n"));
  EXPECT_EQ(s.workload.type, "trace");
  const scenarios::Run run = prepare(s);
  ASSERT_EQ(run.workload->ranks(), 2);
  models::Action a;
  auto r0 = run.workload->stream(0);
  // TI has no regions: the computation is inside `main`, which wraps the whole stream.
  ASSERT_TRUE(r0->next(a));
  EXPECT_EQ(a.kind, models::ActionKind::Enter);
  EXPECT_EQ(run.workload->definitions().regions[a.region].name, "main");
  const auto main = a.region;
  ASSERT_TRUE(r0->next(a));
  EXPECT_EQ(a.kind, models::ActionKind::Compute);
  EXPECT_EQ(a.region, main);
  EXPECT_TRUE(a.flops);
  EXPECT_DOUBLE_EQ(a.amount, 2e6 * 0.5 * 2);
  ASSERT_TRUE(r0->next(a));
  EXPECT_EQ(a.kind, models::ActionKind::Send);
  EXPECT_EQ(a.peer, 1);
  EXPECT_EQ(a.bytes, 64u);
  ASSERT_TRUE(r0->next(a));
  EXPECT_EQ(a.kind, models::ActionKind::Leave);
  EXPECT_EQ(a.region, main);
  EXPECT_FALSE(r0->next(a));
}

TEST_F(TraceWorkload, ErrorsNameTheOption) {
  const std::string f = (dir_ / "s.yaml").string();
  const auto error = [&](const std::string& text) {
    try {
      (void)load_scenario(scenario(text));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("platform: {type: cluster, nodes: 2, cores: 1}\nworkload: {trace: nope.ti}\n"),
            f + ":2:12: option 'trace' of workload trace: no such file " + (dir_ / "nope.ti").string() +
                " (a relative path is relative to the scenario file)");
  EXPECT_EQ(error("platform: {type: cluster, nodes: 2, cores: 1}\n"
                  "workload: {trace: traces/pp.txt, compute_scale: fast}\n"),
            f + ":2:34: compute scale 'fast': the factor must be a finite number >= 0 (expected FACTOR, "
                "REGION=FACTOR, @RANKS=FACTOR or REGION@RANKS=FACTOR; RANKS is N or N-M)");
  EXPECT_EQ(error("platform: {type: cluster, nodes: 2, cores: 1}\n"
                  "workload: {trace: traces/pp.txt, iterations: 3}\n")
                .rfind(f + ":2:34: unknown option 'iterations'", 0),
            0u);
  // More ranks than cores surfaces when the trace is read (prepare), before anything runs.
  const auto s = load_scenario(scenario("platform: {type: cluster, nodes: 1, cores: 1}\n"
                                        "workload: {trace: traces/pp.txt}\n"));
  try {
    (void)prepare(s);
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("2 ranks"), std::string::npos) << e.what();
  }
}

// What the options name must be in the trace (issue 19: they were accepted and did nothing):
// checked once the trace is read (prepare), before anything runs.
TEST_F(TraceWorkload, OptionsMustNameWhatTheTraceHas) {
  const std::string f = (dir_ / "s.yaml").string();
  const auto error = [&](const std::string& workload) {
    try {
      (void)prepare(load_scenario(scenario("platform: {type: cluster, nodes: 2, cores: 1}\nworkload: " + workload +
                                           "\n")));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("{trace: traces/pp.txt, compute_scale: \"@70=2\"}"),
            f + ":2:34: compute scale '@70=2': rank 70 does not exist (the trace pp.txt has ranks 0..1)");
  EXPECT_EQ(error("{trace: traces/pp.txt, compute_scale: \"2,@0-2=2\"}"),
            f + ":2:34: compute scale '@0-2=2': rank 2 does not exist (the trace pp.txt has ranks 0..1)");
  EXPECT_EQ(error("{trace: traces/pp.txt, compute_scale: mian=0.5}"),
            f + ":2:34: compute scale 'mian=0.5': the trace pp.txt has no region 'mian'; did you mean 'main'? (its "
                "regions: main)");
  EXPECT_EQ(error("{trace: traces/pp.txt, compute_scale: \"2,,3\"}"),
            f + ":2:34: compute scale '2,,3': an empty entry (write FACTOR, REGION=FACTOR, @RANKS=FACTOR or "
                "REGION@RANKS=FACTOR, comma-separated)");
  EXPECT_EQ(error("{trace: traces/pp.txt, iterations_from: timestep}"),
            f + ":2:34: option 'iterations_from' of workload trace: the trace pp.txt has no region 'timestep' (its "
                "regions: main)");
  EXPECT_EQ(error("{trace: traces/pp.txt, speed: 0.5f}"),
            f + ":2:34: option 'speed' of workload trace: must be at least 1f (one flop per second), got 0.5f");
  EXPECT_EQ(error("{trace: traces/pp.txt, speed: 2Gf}"),
            f + ":2:34: option 'speed' of workload trace: the TI trace pp.txt gives its compute in flops already "
                "(replayed at the platform's core speed, platform.speed); speed converts the seconds of OTF2, "
                "Paraver and .wlt traces");
  EXPECT_EQ(error("{trace: traces/pp.txt, compute_scale: \"main@1=2\", iterations_from: main}"), "no error");
  // A delay in an iteration the replay does not have (each compute interval is one: 0 only).
  EXPECT_EQ(error("{trace: traces/pp.txt}\nperturbations: [{type: delay, rank: 0, iteration: 5, duration: 1ms}]"),
            f + ":3:40: option 'iteration' of perturbation delay: iteration 5 does not exist (the workload has "
                "iterations 0..0)");
}

}  // namespace
}  // namespace waitlab::scenarios
