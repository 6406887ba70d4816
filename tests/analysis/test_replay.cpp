// Replaying traces (models/replay.hpp): a simulated trace written as OTF2 and replayed on the
// same platform ends every rank where the original did; a trace and its TI export replay the
// same calls; compute scales. Sub-communicators: test_replay_comms.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "analysis/critpath/critpath.hpp"
#include "analysis/delay/delay.hpp"
#include "util/error.hpp"
#include "analysis/trace/otf2.hpp"
#include "analysis/trace/ti.hpp"
#include "analysis/trace/trace_io.hpp"
#include "models/loops.hpp"
#include "models/replay.hpp"
#include "scenarios/scenario.hpp"
#include "sim/engine.hpp"
#include "tests/temp_dir.hpp"
#include "trace_builder.hpp"

namespace waitlab::analysis {
namespace {

namespace fs = std::filesystem;
using models::Action;
using models::ActionKind;
using test::TraceBuilder;
using trace::EventKind;
using trace::MpiOp;

using Replay = ::waitlab::test::TempDirTest;

// A hot spot and random noise in a non-blocking 2D halo exchange on a two-level fat tree.
const char* kHalo = R"(
platform: {type: hierarchical, sockets: 2, cores: 4, topology: fat_tree, topo_parameters: "2;4,2;1,2;1,2"}
workload: {type: halo2d, ranks: 64, px: 8, py: 8, iterations: 20, compute: 1ms, bytes: 16KiB}
perturbations:
  - {type: imbalance_hotspot, center: [4, 4], radius: 2, factor: 1.5}
  - {type: random_noise, interval: 2ms, duration: 50us, distribution: fixed}
run: {seed: 7}
)";

std::vector<double> end_times(const trace::Trace& t) {
  std::vector<double> v;
  for (const auto& l : t.locations) v.push_back(l.events.empty() ? 0.0 : l.events.back().time);
  return v;
}

TEST_F(Replay, OwnOtf2TraceReproducesEveryRankEndTime) {
  const auto s = scenarios::parse_scenario(kHalo, "halo.yaml");
  auto run = scenarios::prepare(s);
  const auto original = sim::simulate(run.platform, *run.workload, run.perturbations, run.options).trace;

  const std::string archive = (dir_ / "otf2").string();
  trace::write_otf2(original, archive);
  const trace::Trace read = trace::read_otf2(archive + "/traces.otf2");
  models::ReplayReport report;
  const auto workload = models::replay_trace(read, "halo", {}, &report);
  EXPECT_TRUE(report.notes.empty()) << report.notes.front();
  EXPECT_EQ(workload->ranks(), 64);
  const models::Perturbations none;
  const auto replayed = sim::simulate(run.platform, *workload, none, run.options).trace;

  const auto a = end_times(original);
  const auto b = end_times(replayed);
  ASSERT_EQ(a.size(), b.size());
  double worst = 0;
  for (std::size_t r = 0; r < a.size(); ++r) worst = std::max(worst, std::abs(b[r] - a[r]) / a[r]);
  EXPECT_LT(worst, 0.01);  // the issue's bound; measured: equal to the OTF2 timer's nanosecond
  EXPECT_LT(worst, 1e-6) << "worst relative difference of a rank's end time " << worst;
  // The compute the replay executed is the compute the original recorded (perturbations
  // included), per rank to the nanosecond of the OTF2 clock.
  for (std::size_t r = 0; r < a.size(); r += 9) {
    double ca = 0, cb = 0;
    for (const auto& c : original.locations[r].truth) ca += c.end - c.start;
    for (const auto& c : replayed.locations[r].truth) cb += c.nominal;
    EXPECT_NEAR(ca, cb, 1e-9 * static_cast<double>(original.locations[r].truth.size()) * 2) << "rank " << r;
  }
}

// A heat1d run (scenario text) simulated: its trace and the trace replayed as a workload.
struct SimulatedHeat {
  trace::Trace trace;
  std::unique_ptr<models::Workload> replay;
  scenarios::Run run;
};
SimulatedHeat simulate_heat(const std::string& scenario) {
  SimulatedHeat h;
  h.run = scenarios::prepare(scenarios::parse_scenario(scenario, "heat.yaml"));
  h.trace = sim::simulate(h.run.platform, *h.run.workload, h.run.perturbations, h.run.options).trace;
  h.replay = models::replay_trace(h.trace, "heat", {});
  return h;
}

// The same calls whichever way they come: trace -> actions, and trace -> TI file -> actions.
TEST_F(Replay, TraceAndItsTiExportReplayTheSameCalls) {
  const SimulatedHeat heat = simulate_heat(
      "platform: {type: cluster, nodes: 16, cores: 1}\n"
      "workload: {type: heat1d, ranks: 16, iterations: 6, mode: nonblocking, distance: 2}\n"
      "perturbations: [{type: delay, rank: 5, iteration: 2, duration: 3ms}]\n");
  const auto& from_trace = heat.replay;
  std::vector<std::string> lost;
  const double speed = 2e9;
  const trace::TiTrace ti = models::ti_from_workload(*from_trace, speed, &lost);
  ASSERT_EQ(lost.size(), 2u);
  EXPECT_NE(lost[0].find("region entries and exits: TI has no regions"), std::string::npos);
  const std::string index = (dir_ / "heat.ti").string();
  EXPECT_TRUE(trace::write_ti(ti, index).empty());
  const auto from_ti = models::replay_ti(trace::read_ti(index), "heat", {});
  ASSERT_EQ(from_ti->ranks(), 16);
  std::size_t calls = 0;
  for (trace::Rank r = 0; r < 16; ++r) {
    std::vector<Action> a, b;
    Action x;
    for (auto st = from_trace->stream(r); st->next(x);)
      if (x.kind != ActionKind::Enter && x.kind != ActionKind::Leave) a.push_back(x);
    for (auto st = from_ti->stream(r); st->next(x);)
      if (x.kind != ActionKind::Enter && x.kind != ActionKind::Leave) b.push_back(x);
    ASSERT_EQ(a.size(), b.size()) << "rank " << r;
    for (std::size_t i = 0; i < a.size(); ++i) {
      ASSERT_EQ(a[i].kind, b[i].kind) << "rank " << r << " action " << i;
      if (a[i].kind == ActionKind::Compute) {
        EXPECT_FALSE(a[i].flops);
        EXPECT_TRUE(b[i].flops);
        EXPECT_NEAR(b[i].amount / speed, a[i].amount, 1e-15 + 1e-15 * a[i].amount);
        continue;
      }
      ++calls;
      EXPECT_EQ(a[i].peer, b[i].peer);
      EXPECT_EQ(a[i].tag, b[i].tag);
      EXPECT_EQ(a[i].bytes, b[i].bytes);
      EXPECT_EQ(a[i].request, b[i].request);
    }
  }
  EXPECT_EQ(calls, 16u * 6u * 9u - 2u * 6u * (1 + 2 + 2 + 1));  // Irecv+Isend per neighbour, one Waitall
  // The rank with the delay computes 3 ms more in iteration 2: the replay carries it as compute.
  double delayed = 0;
  Action x;
  for (auto st = from_trace->stream(5); st->next(x);)
    if (x.kind == ActionKind::Compute && x.iteration == 2) delayed = x.amount;
  EXPECT_NEAR(delayed, 1e-3 + 3e-3, 1e-12);
}

// A replayed TI trace keeps its computation in a region (`main`, TI has none): the critical
// path's profile sums to the path's length, and the delay analysis finds a cause inside the
// trace for the waiting (before, compute outside every region was on no call path: the
// profile summed to a fraction of the run and 18–65 % of the waiting had no cause).
TEST_F(Replay, ReplayedTiKeepsItsComputationOnTheCallPaths) {
  const SimulatedHeat heat = simulate_heat(
      "platform: {type: cluster, nodes: 8, cores: 1}\n"
      "workload: {type: heat1d, ranks: 8, iterations: 8, mode: blocking}\n"
      "perturbations: [{type: delay, rank: 3, iteration: 2, duration: 2ms}]\n");
  const auto& t = heat.trace;
  const auto& run = heat.run;
  std::vector<std::string> lost;
  const trace::TiTrace ti = models::ti_from_workload(*heat.replay, 1e9, &lost);
  const std::string index = (dir_ / "heat.ti").string();
  ASSERT_TRUE(trace::write_ti(ti, index).empty());
  const auto workload = models::replay_ti(trace::read_ti(index), "heat", {});
  const auto replayed = sim::simulate(run.platform, *workload, {}, run.options).trace;
  for (const auto* tr : {&t, &replayed}) {
    const auto m = trace::Matching::build(*tr);
    const auto w = analysis::wait_states(*tr, m);
    const auto cp = analysis::critical_path(*tr, m, w);
    double on_path = 0;
    for (const auto& c : cp.profile) on_path += c.on_path;
    EXPECT_NEAR(on_path, cp.length, 1e-9 * cp.length);
    EXPECT_GT(cp.length, 8 * 1e-3);
    const auto d = analysis::delay_costs(*tr, m, w);
    ASSERT_GT(d.sync_waiting, 0.0);
    EXPECT_LT(d.unattributed, 0.002 * (d.short_term + d.long_term + d.unattributed));
  }
}

// A TI trace names no iterations: they come from the loop structure of the calls. A sweep
// (four corner sweeps of four blocks per iteration: 16 compute intervals, the calls of
// consecutive blocks alike; corner rank 3 has 15, two of its blocks meeting with no call
// between them, where one sweep ends at its corner and the next starts there) and a heat code (one interval per iteration) replay with the iterations of
// the workload that made them: each iteration holds exactly that iteration's computation.
TEST_F(Replay, TiIterationsFollowTheLoopOfTheCalls) {
  struct Case {
    std::string workload;
    int period;
  };
  for (const Case& c : {Case{"{type: sweep2d, ranks: 16, iterations: 6, blocks: 4}", 16},
                        Case{"{type: heat1d, ranks: 16, iterations: 6, mode: nonblocking}", 1}}) {
    SCOPED_TRACE(c.workload);
    const SimulatedHeat run = simulate_heat("platform: {type: cluster, nodes: 16, cores: 1}\nworkload: " + c.workload +
                                            "\n");
    const std::string index = (dir_ / "loop.ti").string();
    const double speed = 1e9;
    ASSERT_TRUE(trace::write_ti(models::ti_from_workload(*run.replay, speed), index).empty());
    models::ReplayReport rep;
    const auto from_ti = models::replay_ti(trace::read_ti(index), "loop", {}, &rep);
    EXPECT_EQ(from_ti->iterations(), 6);
    std::vector<std::vector<Action>> all(16);
    Action x;
    for (trace::Rank r = 0; r < 16; ++r)
      for (auto st = from_ti->stream(r); st->next(x);) all[static_cast<std::size_t>(r)].push_back(x);
    const models::Loop loop = models::find_loop(all);
    EXPECT_EQ(loop.period, c.period);
    EXPECT_EQ(loop.iterations, 6);
    EXPECT_EQ(loop.ranks_sampled, 8);
    EXPECT_EQ(loop.ranks_agreeing, 8);  // ranks 0, 2, ..., 12 and 15 (rank 3 is not sampled)
    std::size_t rank3 = 0;
    for (const Action& a : all[3]) rank3 += a.kind == ActionKind::Compute;
    EXPECT_EQ(rank3, c.period > 1 ? 90u : 6u);
    if (c.period > 1) {
      ASSERT_EQ(rep.notes.size(), 1u);
      EXPECT_EQ(rep.notes[0], "iterations: the calls repeat every 16 compute interval(s) (8 of 8 sampled ranks): 6 "
                              "iterations, each rank's compute intervals split evenly among them");
    } else {
      EXPECT_TRUE(rep.notes.empty()) << rep.notes[0];
    }
    // Iteration by iteration, each rank's compute is the workload's.
    for (trace::Rank r = 0; r < 16; ++r) {
      std::vector<double> want(6, 0.0), got(6, 0.0);
      for (auto st = run.run.workload->stream(r); st->next(x);)
        if (x.kind == ActionKind::Compute) want.at(static_cast<std::size_t>(x.iteration)) += x.amount * speed;
      for (const Action& a : all[static_cast<std::size_t>(r)])
        if (a.kind == ActionKind::Compute) got.at(static_cast<std::size_t>(a.iteration)) += a.amount;
      for (std::size_t i = 0; i < 6; ++i) EXPECT_NEAR(got[i], want[i], 1e-6 * want[i]) << "rank " << r << " iteration " << i;
    }
  }
}

// MPI_Sendrecv with an MPI_PROC_NULL peer: Extrae records only the half that moves a message (or
// none): the call is replayed as that message (a send on rank 0, the receive on rank 1) or
// without communication; with free_mpi_without_op (the ideal run) MPI_Comm_rank takes no time.
TEST_F(Replay, SendrecvWithProcNullPeersIsItsOneMessage) {
  TraceBuilder b(2, 1e-6);
  for (trace::Rank r = 0; r < 2; ++r) b.call(r, MpiOp::Init, 0, 10);
  b.enter(0, 12, "MPI_Comm_rank").leave(0, 14, "MPI_Comm_rank");
  b.send(0, 20, 30, 1, 5, MpiOp::Sendrecv);  // its receive from MPI_PROC_NULL: no record
  b.call(1, MpiOp::Sendrecv, 20, 30);        // its send to MPI_PROC_NULL: no record; the receive below
  for (trace::Rank r = 0; r < 2; ++r) b.call(r, MpiOp::Sendrecv, 40, 45).call(r, MpiOp::Finalize, 50, 60);
  trace::Trace t = b.trace();
  t.defs.regions[static_cast<std::size_t>(t.defs.find_region("MPI_Comm_rank"))].file = "MPI";
  auto& ev1 = t.locations[1].events;  // Init Enter, Leave, Sendrecv Enter, Leave, ...
  ev1.insert(ev1.begin() + 3, trace::make_event(28e-6, EventKind::Recv, MpiOp::None, trace::kCommWorld, 0, 5, 8));
  for (const bool ideal : {false, true}) {
    models::ReplayOptions o;
    o.free_mpi_without_op = ideal;
    models::ReplayReport rep;
    const auto w = models::replay_trace(t, "t", o, &rep);
    ASSERT_GE(rep.notes.size(), 2u);
    EXPECT_EQ(rep.notes[0],
              "2 × MPI_Sendrecv calls with one communication record (the other peer MPI_PROC_NULL) replayed as their one "
              "message (MPI_Send or MPI_Recv)");
    EXPECT_EQ(rep.notes[1],
              "2 × MPI_Sendrecv calls without a communication record (both peers MPI_PROC_NULL) replayed without "
              "communication");
    std::vector<std::string> got[2];
    Action x;
    for (trace::Rank r = 0; r < 2; ++r)
      for (auto st = w->stream(r); st->next(x);) {
        if (x.kind == ActionKind::Send || x.kind == ActionKind::Recv || x.kind == ActionKind::Sendrecv)
          got[r].push_back(std::string(x.kind == ActionKind::Send ? "send" : x.kind == ActionKind::Recv ? "recv" : "sendrecv") +
                           " " + std::to_string(x.peer) + " tag " + std::to_string(x.tag));
      }
    EXPECT_EQ(got[0], std::vector<std::string>{"send 1 tag 5"});
    EXPECT_EQ(got[1], std::vector<std::string>{"recv 0 tag 5"});
    // Rank 0 before its MPI_Sendrecv: 10 µs, of which MPI_Comm_rank's 2 µs only when not ideal.
    double before = 0;
    for (auto st = w->stream(0); st->next(x);) {
      if (x.kind == ActionKind::Send) break;
      if (x.kind == ActionKind::Compute) before += x.amount;
    }
    EXPECT_NEAR(before, ideal ? 8e-6 : 10e-6, 1e-12) << ideal;
  }
}

TEST_F(Replay, ComputeScalesByRegionAndRank) {
  TraceBuilder b(2, 1e-6);
  for (trace::Rank r = 0; r < 2; ++r) {
    b.call(r, MpiOp::Init, 0, 10);
    b.enter(r, 10, "solve").leave(r, 110, "solve");  // 100 us of solve
    b.enter(r, 110, "io").leave(r, 130, "io");       // 20 us of io
    b.call(r, MpiOp::Barrier, 130, 140);
    b.call(r, MpiOp::Finalize, 150, 160);             // 10 us of compute outside regions
  }
  // (The barrier has no CollEnd record in this hand-made trace: it is skipped, with a note.)
  models::ReplayOptions o;
  o.scales.push_back(models::parse_compute_scale("solve=0.5", "test"));
  o.scales.push_back(models::parse_compute_scale("@1=3", "test"));
  models::ReplayReport rep;
  const auto w = models::replay_trace(b.trace(), "t", o, &rep);
  ASSERT_EQ(rep.notes.size(), 2u);
  EXPECT_EQ(rep.notes[0], "2 × MPI_Barrier calls without their communication record skipped");
  // Three different steps per rank repeat nothing: no loop, one iteration per interval.
  EXPECT_EQ(rep.notes[1],
            "iterations: no repeating pattern of calls found (on 2 sampled ranks): each compute interval is taken as "
            "an iteration; analyses that need iterations (idlewave) may not find the program's");
  std::vector<std::pair<std::string, double>> got;
  Action x;
  for (trace::Rank r = 0; r < 2; ++r)
    for (auto st = w->stream(r); st->next(x);)
      if (x.kind == ActionKind::Compute)
        got.emplace_back(std::to_string(r) + ":" + w->definitions().regions[x.region].name, x.amount);
  ASSERT_EQ(got.size(), 6u);
  const std::vector<std::pair<std::string, double>> want = {
      {"0:solve", 50e-6}, {"0:io", 20e-6}, {"0:main", 10e-6}, {"1:solve", 150e-6}, {"1:io", 60e-6}, {"1:main", 30e-6}};
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].first, want[i].first);
    EXPECT_NEAR(got[i].second, want[i].second, 1e-15);
  }
  EXPECT_EQ(w->iterations(), 3);  // three compute intervals per rank
  // The 10 us outside every region run inside `main`, which encloses each rank's whole stream:
  // Enter main first, Leave main last, the trace's own regions nested inside.
  for (trace::Rank r = 0; r < 2; ++r) {
    std::vector<Action> all;
    for (auto st = w->stream(r); st->next(x);) all.push_back(x);
    ASSERT_GE(all.size(), 2u);
    EXPECT_EQ(all.front().kind, ActionKind::Enter);
    EXPECT_EQ(all.back().kind, ActionKind::Leave);
    EXPECT_EQ(w->definitions().regions[all.front().region].name, "main");
    EXPECT_EQ(all.back().region, all.front().region);
    EXPECT_EQ(all[1].kind, ActionKind::Enter);
    EXPECT_EQ(w->definitions().regions[all[1].region].name, "solve");
  }

  for (const char* bad : {"", "solve=", "=2", "x=-1", "@3-1=2", "@a=2", "2x"}) {
    try {
      (void)models::parse_compute_scale(bad, "--compute-scale");
      ADD_FAILURE() << bad;
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("--compute-scale: compute scale '" + std::string(bad) + "'", 0), 0u)
          << e.what();
    }
  }
}

// replay_ti_file() reads one rank at a time and converts exactly as replay_ti() of the whole
// trace: the same actions on every rank, the same notes (ANY_SOURCE receives resolved over all
// ranks, waitAny, Issend), and the same errors naming file and line.
TEST_F(Replay, TiFileReadRankByRankConvertsAsTheWholeTrace) {
  const auto same = [](const std::string& path) -> std::vector<std::string> {
    models::ReplayReport a_rep, b_rep;
    const auto a = models::replay_ti(trace::read_ti(path), "t", {}, &a_rep);
    const auto b = models::replay_ti_file(path, "t", {}, &b_rep);
    EXPECT_EQ(a_rep.notes, b_rep.notes);
    EXPECT_EQ(a_rep.actions, b_rep.actions);
    EXPECT_EQ(a->iterations(), b->iterations());
    if (a->ranks() != b->ranks()) {
      ADD_FAILURE() << a->ranks() << " ranks and " << b->ranks();
      return a_rep.notes;
    }
    for (trace::Rank r = 0; r < a->ranks(); ++r) {
      auto sa = a->stream(r);
      auto sb = b->stream(r);
      Action x, y;
      std::size_t k = 0;
      for (bool more = sa->next(x); more; more = sa->next(x), ++k) {
        if (!sb->next(y)) {
          ADD_FAILURE() << "rank " << r << " ends at action " << k;
          break;
        }
        EXPECT_TRUE(x.kind == y.kind && x.peer == y.peer && x.tag == y.tag && x.bytes == y.bytes &&
                    x.request == y.request && x.amount == y.amount && x.iteration == y.iteration &&
                    x.in_waitall == y.in_waitall && x.root == y.root)
            << "rank " << r << " action " << k;
      }
      EXPECT_FALSE(sb->next(y)) << "rank " << r;
    }
    return a_rep.notes;
  };
  const auto notes = same(std::string(WAITLAB_SOURCE_DIR) + "/tests/data/ti/smpi_calls.ti");
  std::string all;
  for (const auto& n : notes) all += n + "\n";
  EXPECT_NE(all.find("6 × MPI_ANY_SOURCE receives given the source of a send left over"), std::string::npos) << all;

  // Errors that need every rank, with rank files.
  int traces = 0;
  const auto error = [&](const std::vector<std::string>& ranks) {
    const fs::path dir = dir_ / ("e" + std::to_string(traces++));
    fs::create_directories(dir);
    std::ofstream index(dir / "t.ti");
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      std::ofstream(dir / ("r" + std::to_string(r))) << ranks[r];
      index << "r" << r << "\n";
    }
    index.close();
    std::string whole, by_rank;
    try {
      (void)models::replay_ti(trace::read_ti((dir / "t.ti").string()), "t", {});
    } catch (const InputError& e) {
      whole = e.what();
    }
    try {
      (void)models::replay_ti_file((dir / "t.ti").string(), "t", {});
    } catch (const InputError& e) {
      by_rank = e.what();
    }
    EXPECT_EQ(whole, by_rank);
    return by_rank.substr(by_rank.find("/r") + 1);
  };
  EXPECT_EQ(error({"0 allreduce 8 0\n0 barrier\n", "1 allreduce 8 0\n1 bcast 8 0\n"}),
            "r1:2 (rank 1): collective 1 is 'bcast' here but 'barrier' on rank 0 (" +
                (dir_ / "e0" / "r0").string() + ":2 (rank 0))");
  EXPECT_EQ(error({"0 allreduce 8 0\n", "1 allreduce 8 0\n1 barrier\n"}),
            "r0:1 (rank 0): rank 0 calls 1 collectives, other ranks 2 (every collective of a TI trace is on "
            "MPI_COMM_WORLD)");
  EXPECT_EQ(error({"0 send 1 3 8\n", "1 recv -333 3 8\n1 recv -333 3 8\n"}),
            "r1:2 (rank 1): a receive from MPI_ANY_SOURCE (-333) with tag 3 that no send to rank 1 is left for");
}

// What SMPI writes, including what its own replayer cannot replay, runs to the end.
TEST_F(Replay, SmpiTraceWithWaitanyAnySourceAndVCollectivesRuns) {
  models::ReplayReport rep;
  const auto w = models::replay_ti(trace::read_ti(std::string(WAITLAB_SOURCE_DIR) + "/tests/data/ti/smpi_calls.ti"),
                                   "calls", {}, &rep);
  std::string notes;
  for (const auto& n : rep.notes) notes += n + "\n";
  EXPECT_NE(notes.find("6 × MPI_ANY_SOURCE receives given the source of a send left over"), std::string::npos) << notes;
  EXPECT_NE(notes.find("4 × waitAny/waitsome records replayed as MPI_Wait on the oldest"), std::string::npos) << notes;
  EXPECT_EQ(notes.find("gatherv"), std::string::npos) << notes;  // the v-collectives replay exactly
  EXPECT_EQ(notes.find("alltoallv"), std::string::npos) << notes;
  EXPECT_EQ(notes.find("reducescatter"), std::string::npos) << notes;
  EXPECT_NE(notes.find("4 × MPI_Issend replayed as MPI_Isend"), std::string::npos) << notes;
  const auto s = scenarios::parse_scenario("platform: {type: cluster, nodes: 4, cores: 1}\n"
                                           "workload: {type: heat1d, ranks: 4}\n",
                                           "c.yaml");
  auto run = scenarios::prepare(s);
  const auto t = sim::simulate(run.platform, *w, models::Perturbations{}, run.options).trace;
  const auto m = trace::Matching::build(t);
  EXPECT_EQ(m.unmatched.total(), 0u);
  // Every rank: 26 calls of the program (27 on ranks 0 and 2, which Ssend instead of receiving).
  std::size_t calls = 0;
  for (const auto& c : m.calls) calls += c.size();
  EXPECT_GT(calls, 4u * 20u);
  // The v-collectives with the sizes of their records (in bytes: counts of MPI_INT, 4 bytes).
  // Rank r gathers/allgathers r + 1 ints; the root (0) receives 1, 2, 3 and 4 of them.
  const auto end = [&](trace::Rank r, MpiOp op) {
    for (const auto& e : t.locations[static_cast<std::size_t>(r)].events)
      if (e.kind == EventKind::CollEnd && e.op == op) return std::make_pair(e.bytes, e.aux);
    return std::make_pair(~std::uint64_t{0}, ~std::uint64_t{0});
  };
  EXPECT_EQ(end(0, MpiOp::Gatherv), std::make_pair(std::uint64_t{4}, std::uint64_t{40}));
  EXPECT_EQ(end(2, MpiOp::Gatherv), std::make_pair(std::uint64_t{12}, std::uint64_t{0}));
  EXPECT_EQ(end(0, MpiOp::Scatterv), std::make_pair(std::uint64_t{40}, std::uint64_t{4}));
  EXPECT_EQ(end(3, MpiOp::Scatterv), std::make_pair(std::uint64_t{0}, std::uint64_t{16}));
  EXPECT_EQ(end(1, MpiOp::Allgatherv), std::make_pair(std::uint64_t{8}, std::uint64_t{40}));
  EXPECT_EQ(end(2, MpiOp::Alltoallv), std::make_pair(std::uint64_t{32}, std::uint64_t{32}));
  EXPECT_EQ(end(3, MpiOp::ReduceScatter), std::make_pair(std::uint64_t{40}, std::uint64_t{16}));

  // The simulated (timed) trace holds only each call's totals, but all members' totals are the
  // counts: its replay calls the same v-collectives with the same sizes (the alltoallv's pairs
  // in proportion to the totals: uniform here, so exact too).
  models::ReplayReport again;
  const auto w2 = models::replay_trace(t, "again", {}, &again);
  std::string notes2;
  for (const auto& n : again.notes) notes2 += n + "\n";
  EXPECT_EQ(notes2.find("gatherv"), std::string::npos) << notes2;
  EXPECT_EQ(notes2.find("Reduce_scatter"), std::string::npos) << notes2;
  EXPECT_NE(notes2.find("4 × MPI_Alltoallv calls replayed with per-pair sizes in proportion"), std::string::npos)
      << notes2;
  const auto t2 = sim::simulate(run.platform, *w2, models::Perturbations{}, run.options).trace;
  for (trace::Rank r = 0; r < 4; ++r)
    for (const MpiOp op : {MpiOp::Gatherv, MpiOp::Scatterv, MpiOp::Allgatherv, MpiOp::Alltoallv, MpiOp::ReduceScatter}) {
      SCOPED_TRACE(std::string(trace::mpi_name(op)) + " on rank " + std::to_string(r));
      const auto first = end(r, op);
      int found = 0;
      for (const auto& e : t2.locations[static_cast<std::size_t>(r)].events)
        if (e.kind == EventKind::CollEnd && e.op == op) {
          ++found;
          EXPECT_EQ(e.bytes, first.first);
          EXPECT_EQ(e.aux, first.second);
        }
      EXPECT_EQ(found, 1);
    }
}

}  // namespace
}  // namespace waitlab::analysis
