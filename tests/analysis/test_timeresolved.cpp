// Time-resolved efficiency metrics (ALGORITHMS.md §6) on hand-built traces whose answer is
// known exactly: Fixture D (built and read from its Paraver form), a lock-step ring with a
// communication stall in one stretch of time (paper 004's synthetic benchmark), the adaptive
// windows' √P rule, and the Lamport replay's rules. Then the conventions (waitlab, bsc,
// scalasca): each definitional choice on a trace of its own, with numbers computed by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "analysis/timeresolved/timeresolved.hpp"
#include "analysis/trace/paraver.hpp"
#include "trace_builder.hpp"

namespace waitlab::analysis {
namespace {

using test::TraceBuilder;
using trace::MpiOp;
using trace::Rank;

const std::string kData = WAITLAB_SOURCE_DIR "/tests/data/";

TimeResolvedResult run_lamport(const trace::Trace& t, const WindowOptions& w = {}) {
  const auto m = trace::Matching::build(t);
  return time_resolved(t, lamport_reference(t, m), w);
}

void expect_invariants(const Efficiency& e) {
  EXPECT_NEAR(e.pe, e.lb * e.comm_e, 1e-12);
  EXPECT_NEAR(e.comm_e, e.ser_e * e.trf_e, 1e-12);
}

void expect_invariants(const TimeResolvedResult& r) {
  expect_invariants(r.eff);
  for (const auto& w : r.windows) {
    SCOPED_TRACE(w.start);
    expect_invariants(w.eff);
    expect_invariants(w.cum);
  }
  ASSERT_FALSE(r.windows.empty());
  // The last window's cumulative values are the whole run's; PE adds up over windows.
  const auto& last = r.windows.back().cum;
  EXPECT_EQ(last.pe, r.eff.pe);
  EXPECT_EQ(last.lb, r.eff.lb);
  EXPECT_EQ(last.comm_e, r.eff.comm_e);
  EXPECT_EQ(last.ser_e, r.eff.ser_e);
  EXPECT_EQ(last.trf_e, r.eff.trf_e);
  double pe_time = 0;
  for (const auto& w : r.windows) pe_time += w.eff.pe * (w.end - w.start);
  EXPECT_NEAR(pe_time, r.eff.pe * r.elapsed, 1e-12);
  // The unclamped window ideals telescope to T_ideal.
  EXPECT_DOUBLE_EQ(r.windows.back().ideal_end, r.ideal_unclamped);
}

// Fixture D in seconds; rank 0 is the spec's rank 1 (the sender).
trace::Trace fixture_d() {
  TraceBuilder b(2, 1.0);
  b.enter(0, 0, "main").send(0, 0.5, 0.51, 1, 7).leave(0, 0.6, "main");
  b.enter(1, 0, "main").recv(1, 0.2, 0.52, 0.52, 0, 7).leave(1, 0.62, "main");
  trace::Trace t = b.trace();
  for (auto& l : t.locations)
    for (auto& e : l.events)
      if (e.kind == trace::EventKind::Send || e.kind == trace::EventKind::Recv) e.bytes = 1 << 20;
  return t;
}

void expect_fixture_d(const TimeResolvedResult& r) {
  EXPECT_NEAR(r.elapsed, 0.62, 1e-12);
  ASSERT_EQ(r.useful.size(), 2u);
  EXPECT_NEAR(r.useful[0], 0.59, 1e-12);
  EXPECT_NEAR(r.useful[1], 0.30, 1e-12);
  EXPECT_NEAR(r.ideal, 0.600, 1e-12);
  EXPECT_NEAR(100 * r.eff.lb, 75.42, 0.005);
  EXPECT_NEAR(100 * r.eff.comm_e, 95.16, 0.005);
  EXPECT_NEAR(100 * r.eff.ser_e, 98.33, 0.005);
  EXPECT_NEAR(100 * r.eff.trf_e, 96.77, 0.005);
  EXPECT_NEAR(100 * r.eff.pe, 71.77, 0.005);
  // Exactly: LB = 0.445/0.59, CommE = 0.59/0.62, SerE = 0.59/0.6, TrfE = 0.6/0.62.
  EXPECT_NEAR(r.eff.lb, 0.445 / 0.59, 1e-12);
  EXPECT_NEAR(r.eff.ser_e, 0.59 / 0.6, 1e-12);
  EXPECT_NEAR(r.eff.trf_e, 0.6 / 0.62, 1e-12);
  EXPECT_EQ(r.source, "lamport");
  EXPECT_EQ(r.relaxed_sends, 0u);
  EXPECT_EQ(r.unresolved, 0u);
  expect_invariants(r);
}

TEST(TimeResolved, FixtureDBuilt) {
  const auto t = fixture_d();
  const auto m = trace::Matching::build(t);
  ASSERT_EQ(m.messages.size(), 1u);
  const auto ref = lamport_reference(t, m);
  // The 1 MiB send completes when the receive is posted (0.2 s): at once, 0.5 s; the receive
  // completes when the send is posted.
  EXPECT_DOUBLE_EQ(ref.times[0][3], 0.5);   // Leave MPI_Send
  EXPECT_DOUBLE_EQ(ref.times[0][4], 0.59);  // Leave main
  EXPECT_DOUBLE_EQ(ref.times[1][2], 0.5);   // Recv
  EXPECT_DOUBLE_EQ(ref.times[1][4], 0.6);   // Leave main
  expect_fixture_d(time_resolved(t, ref, {WindowRule::Count, 0, 1}));
  expect_fixture_d(time_resolved(t, ref, {WindowRule::Count, 0, 7}));
  expect_fixture_d(time_resolved(t, ref, {WindowRule::Fixed, 0.1, 0}));
}

TEST(TimeResolved, FixtureDFromParaver) {
  const trace::Trace t = trace::read_paraver(kData + "fixture_d.prv");
  const auto r = run_lamport(t, {WindowRule::Count, 0, 2});
  expect_fixture_d(r);
  // Two windows of 0.31 s: in the first both compute until 0.2 s, rank 0 until 0.31 s.
  ASSERT_EQ(r.windows.size(), 2u);
  const auto& w0 = r.windows[0];
  EXPECT_NEAR(w0.end, 0.31, 1e-12);
  EXPECT_NEAR(w0.useful_max, 0.31, 1e-12);
  EXPECT_NEAR(w0.useful_mean, (0.31 + 0.2) / 2, 1e-12);
  EXPECT_NEAR(w0.eff.comm_e, 1.0, 1e-12);
  EXPECT_NEAR(w0.eff.pe, 0.51 / 0.62, 1e-12);
  // I(0.31) = max(ideal_0(0.31), ideal_1(0.31)) = 0.31 (rank 0 computes on; rank 1 waits at 0.2).
  EXPECT_NEAR(w0.ideal_end, 0.31, 1e-12);
  const auto& w1 = r.windows[1];
  EXPECT_NEAR(w1.useful_max, 0.28, 1e-12);  // rank 0: 0.31–0.5 and 0.51–0.6
  EXPECT_NEAR(w1.useful_mean, (0.28 + 0.1) / 2, 1e-12);
  EXPECT_NEAR(w1.ideal, 0.29, 1e-12);  // 0.6 − 0.31
  EXPECT_NEAR(w1.eff.trf_e, 0.29 / 0.31, 1e-12);
}

// P ranks in lock-step, µs: MPI_Init 0–100, then per iteration 9 ms compute, an eager send to
// the right (1 µs) and a receive from the left that completes 1 ms after the compute ended —
// except in iteration kStallIter, where every message takes kStall longer (a network stall).
constexpr int kRing = 4, kIters = 20, kStallIter = 10;
constexpr double kCompute = 9000, kComm = 1000, kStall = 40000, kInit = 100;

trace::Trace stalled_ring(double stall) {
  TraceBuilder b(kRing, 1e-6);
  for (Rank r = 0; r < kRing; ++r) b.enter(r, 0, "main").call(r, MpiOp::Init, 0, kInit);
  double t = kInit;
  for (int i = 0; i < kIters; ++i) {
    const double done = t + kCompute;
    const double arrive = done + kComm + (i == kStallIter ? stall : 0);
    for (Rank r = 0; r < kRing; ++r) {
      b.enter(r, t, "compute").leave(r, done, "compute");
      b.send(r, done, done + 1, (r + 1) % kRing, i);
      b.recv(r, done + 1, arrive, arrive, (r + kRing - 1) % kRing, i);
    }
    t = arrive;
  }
  for (Rank r = 0; r < kRing; ++r) b.call(r, MpiOp::Finalize, t, t + 50).leave(r, t + 50, "main");
  return b.trace();
}

TEST(TimeResolved, StallShowsInItsWindowsOnly) {
  const auto undisturbed = run_lamport(stalled_ring(0), {WindowRule::Fixed, 0.01, 0});
  const double pe0 = 0.9;  // 9 ms of 10 ms useful, balanced
  EXPECT_NEAR(undisturbed.eff.pe, pe0, 1e-9);
  EXPECT_NEAR(undisturbed.eff.lb, 1.0, 1e-12);
  EXPECT_NEAR(undisturbed.ideal, 20 * 0.009, 1e-9);  // messages cost nothing on an ideal network
  ASSERT_EQ(undisturbed.windows.size(), 20u);

  const auto r = run_lamport(stalled_ring(kStall), {WindowRule::Fixed, 0.01, 0});
  // 10 iterations of 10 ms, one of 50 ms (windows 10–14), 9 of 10 ms: 24 windows aligned on
  // the iterations (T0 = the end of MPI_Init).
  ASSERT_EQ(r.windows.size(), 24u);
  EXPECT_NEAR(r.elapsed, 0.24, 1e-12);
  for (std::size_t w = 0; w < r.windows.size(); ++w) {
    SCOPED_TRACE(w);
    const auto& e = r.windows[w].eff;
    if (w >= 11 && w <= 14) {
      // Inside the stall nobody computes: nothing useful, nothing an ideal network would need.
      EXPECT_EQ(e.pe, 0.0);
      EXPECT_EQ(e.comm_e, 0.0);
      EXPECT_EQ(e.trf_e, 0.0);
    } else {
      EXPECT_NEAR(e.pe, pe0, 1e-9);
      EXPECT_NEAR(e.comm_e, pe0, 1e-9);
      EXPECT_NEAR(e.lb, 1.0, 1e-12);
      EXPECT_NEAR(e.ser_e, 1.0, 1e-9);
      EXPECT_NEAR(e.trf_e, pe0, 1e-9);
    }
  }
  // The whole run hides it: 180 ms useful in 240 ms.
  EXPECT_NEAR(r.eff.pe, 0.75, 1e-9);
  EXPECT_NEAR(r.eff.comm_e, 0.75, 1e-9);
  EXPECT_NEAR(r.eff.trf_e, 0.75, 1e-9);
  EXPECT_NEAR(r.eff.ser_e, 1.0, 1e-9);
  EXPECT_NEAR(r.ideal, 0.18, 1e-9);
  // Cumulative PE falls in the stall and recovers only partly.
  EXPECT_NEAR(r.windows[10].cum.pe, 0.9, 1e-9);
  EXPECT_NEAR(r.windows[11].cum.pe, 0.099 / 0.12, 1e-9);
  EXPECT_NEAR(r.windows[14].cum.pe, 0.9 * 11 / 15, 1e-9);
  expect_invariants(r);
  expect_invariants(undisturbed);

  // Equal windows (here 12 of 20 ms): the stall windows still stand out.
  const auto c = run_lamport(stalled_ring(kStall), {WindowRule::Count, 0, 12});
  ASSERT_EQ(c.windows.size(), 12u);
  EXPECT_NEAR(c.windows[5].eff.pe, 0.45, 1e-9);  // 100–120 ms: iteration 10's compute, stall
  EXPECT_EQ(c.windows[6].eff.pe, 0.0);
  EXPECT_NEAR(c.windows[3].eff.pe, pe0, 1e-9);
  expect_invariants(c);
}

// 4 ranks over [0, 10] s, ⌈√4⌉ = 2 events needed per rank and window. Ranks 0–2 have two
// events in every second; rank 3 has 3 events in [0,1), one each in [1,2) and [2,3), none in
// [3,5), two in [5,6) and [6,7), and only main's Leave (at T1) after that.
TEST(TimeResolved, AdaptiveWindowsMergeUntilEveryRankHasSqrtPEvents) {
  TraceBuilder b(4, 1.0);
  for (Rank r = 0; r < 3; ++r) {
    b.enter(r, 0, "main");
    for (int j = 0; j < 10; ++j) b.enter(r, j + 0.2, "compute").leave(r, j + 0.6, "compute");
    b.leave(r, 10, "main");
  }
  b.enter(3, 0, "main").enter(3, 0.2, "compute").leave(3, 0.6, "compute");
  b.enter(3, 1.2, "compute").leave(3, 2.6, "compute");
  b.enter(3, 5.2, "compute").leave(3, 5.6, "compute");
  b.enter(3, 6.2, "compute").leave(3, 6.6, "compute");
  b.leave(3, 10, "main");
  const auto r = run_lamport(b.trace(), {WindowRule::Adaptive, 0, 10});
  EXPECT_EQ(r.min_events, 2u);
  std::vector<double> bounds;
  for (const auto& w : r.windows) bounds.push_back(w.start);
  bounds.push_back(r.windows.back().end);
  // [0,1) alone; [1,2)+[2,3); [3,4)+[4,5)+[5,6); [6,7), and the deficient tail [7,10] joins it.
  EXPECT_EQ(bounds, (std::vector<double>{0, 1, 3, 6, 10}));
  EXPECT_EQ(r.windows[0].events, 4u * 3);  // main's Enter and one compute on every rank
  EXPECT_EQ(r.windows[3].events, 3u * 9 + 3);  // 4 seconds of 2 events + main's Leave; rank 3: 2 + 1
  expect_invariants(r);
  // With 9 ranks 3 events are needed: rank 3 never has 3 in [1,10], one window remains after [0,1).
  TraceBuilder nine(9, 1.0);
  for (Rank r9 = 0; r9 < 9; ++r9) {
    nine.enter(r9, 0, "main");
    for (int j = 0; j < 10; ++j) nine.enter(r9, j + 0.2, "compute").leave(r9, j + 0.6, "compute");
    nine.leave(r9, 10, "main");
  }
  const auto r9 = run_lamport(nine.trace(), {WindowRule::Adaptive, 0, 10});
  EXPECT_EQ(r9.min_events, 3u);
  // 3 events in [0,1) (Enter main + 2); then 2 per second: [1,3) has 4, [3,5) 4, ..., the tail
  // [9,10] has 3 (with main's Leave at T1).
  std::vector<double> b9;
  for (const auto& w : r9.windows) b9.push_back(w.start);
  EXPECT_EQ(b9, (std::vector<double>{0, 1, 3, 5, 7, 9}));
}

// A collective ends at its latest entry; MPI_Init and MPI_Finalize are not useful time.
TEST(TimeResolved, LamportCollectiveEndsAtLatestEntry) {
  TraceBuilder b(2, 1.0);
  b.enter(0, 0, "main").call(0, MpiOp::Init, 0, 0.5).coll(0, MpiOp::Barrier, 1.5, 3.5);
  b.enter(1, 0, "main").call(1, MpiOp::Init, 0, 0.5).coll(1, MpiOp::Barrier, 3.0, 3.5);
  b.call(0, MpiOp::Finalize, 4.5, 4.7).leave(0, 4.7, "main");
  b.call(1, MpiOp::Finalize, 4.0, 4.7).leave(1, 4.7, "main");
  const auto r = run_lamport(b.trace());
  EXPECT_NEAR(r.elapsed, 4.0, 1e-12);  // 0.5 (Init's end) to 4.5 (the last Finalize's start)
  EXPECT_NEAR(r.useful[0], 2.0, 1e-12);
  EXPECT_NEAR(r.useful[1], 3.0, 1e-12);
  // Ideal: Init ends at 0 (its latest entry); rank 0 enters the barrier at 1, rank 1 at 2.5,
  // both leave at 2.5; Finalize at 3.5 (rank 0) and 3.0 → T_ideal = 3.5.
  EXPECT_NEAR(r.ideal_unclamped, 3.5, 1e-12);
  EXPECT_NEAR(r.eff.ser_e, 3.0 / 3.5, 1e-12);
  EXPECT_NEAR(r.eff.trf_e, 3.5 / 4.0, 1e-12);
  expect_invariants(r);
}

// Two ranks that both send 1 MiB first: real buffering resolved it, the Lamport rule would
// wait forever; the replay lets one send go and counts it.
TEST(TimeResolved, LamportBreaksRendezvousCycles) {
  TraceBuilder b(2, 1.0);
  b.enter(0, 0, "main").send(0, 1, 1.1, 1, 0).recv(0, 1.1, 1.2, 1.2, 1, 0).leave(0, 2, "main");
  b.enter(1, 0, "main").send(1, 1, 1.1, 0, 0).recv(1, 1.1, 1.2, 1.2, 0, 0).leave(1, 2, "main");
  trace::Trace t = b.trace();
  for (auto& l : t.locations)
    for (auto& e : l.events) e.bytes = 1 << 20;
  const auto m = trace::Matching::build(t);
  const auto ref = lamport_reference(t, m);
  EXPECT_EQ(ref.relaxed_sends, 1u);
  EXPECT_EQ(ref.unresolved, 0u);
  const auto r = time_resolved(t, ref);
  EXPECT_NEAR(r.ideal, 1.8, 1e-12);  // 1 s before and 0.8 s after, nothing in between
}

TEST(TimeResolved, NetworkReferenceNeedsCorrespondingEvents) {
  const auto t = fixture_d();
  trace::Trace ideal = t;
  ideal.locations[1].events[2].time = 0.5;
  ideal.locations[1].events[3].time = 0.5;
  ideal.locations[1].events[4].time = 0.6;
  ideal.locations[0].events[3].time = 0.5;
  ideal.locations[0].events[4].time = 0.59;
  IdealReference ref;
  std::string why;
  ASSERT_TRUE(network_reference(t, ideal, ref, why)) << why;
  EXPECT_EQ(ref.source, "ideal_network");
  const auto r = time_resolved(t, ref);
  EXPECT_NEAR(r.ideal, 0.6, 1e-12);
  EXPECT_NEAR(r.eff.trf_e, 0.6 / 0.62, 1e-12);
  EXPECT_EQ(r.source, "ideal_network");
  ideal.locations[1].events.pop_back();
  EXPECT_FALSE(network_reference(t, ideal, ref, why));
  EXPECT_EQ(why, "rank 1 has 4 events in the ideal run, 5 in the run");
  EXPECT_THROW(time_resolved(t, lamport_reference(t, trace::Matching::build(t)), {WindowRule::Fixed, 0, 0}),
               std::invalid_argument);
}

// --- the conventions ---------------------------------------------------------------------

TimeResolvedResult run_as(const trace::Trace& t, Convention c, const WindowOptions& w = {WindowRule::Count, 0, 1}) {
  const auto m = trace::Matching::build(t);
  return time_resolved(t, lamport_reference(t, m), w, c);
}

// PE = LB·CommE always; CommE = SerE·TrfE (Bsc's TrfE = CommE/SerE: up to rounding).
void expect_identities(const TimeResolvedResult& r) {
  EXPECT_NEAR(r.eff.pe, r.eff.lb * r.eff.comm_e, 1e-12);
  EXPECT_NEAR(r.eff.comm_e, r.eff.ser_e * r.eff.trf_e, 1e-12);
  double pe_time = 0;
  for (const auto& w : r.windows) {
    EXPECT_NEAR(w.eff.pe, w.eff.lb * w.eff.comm_e, 1e-12);
    EXPECT_NEAR(w.eff.comm_e, w.eff.ser_e * w.eff.trf_e, 1e-12);
    pe_time += w.eff.pe * (w.end - w.start);
  }
  EXPECT_NEAR(pe_time, r.eff.pe * r.elapsed, 1e-12);
  ASSERT_FALSE(r.estimates.empty());
  EXPECT_EQ(r.estimates[0].source, r.source);
  EXPECT_EQ(r.estimates[0].t_ideal, r.ideal);
  EXPECT_EQ(r.estimates[0].useful_max, r.useful_ideal_max);
  EXPECT_GE(r.useful_ideal_max, r.useful_max);
  if (r.convention != Convention::Bsc || !r.mpi) {
    EXPECT_EQ(r.useful_ideal_max, r.useful_max);
  }
}

// A worker thread of rank 0: regions [enter, leave) named `region`, not-useful states.
trace::Location worker(trace::Trace& t, std::int32_t thread, const std::vector<std::pair<double, double>>& regions,
                       std::vector<trace::StateInterval> states, const std::string& region = "omp_fn") {
  trace::Location l;
  l.rank = 0;
  l.thread = thread;
  const auto id = t.defs.region(region);
  for (const auto& [a, b] : regions) {
    l.events.push_back(trace::make_event(a, trace::EventKind::Enter, MpiOp::None, id));
    l.events.push_back(trace::make_event(b, trace::EventKind::Leave, MpiOp::None, id));
  }
  l.states = std::move(states);
  return l;
}

TEST(Conventions, NamesParseAndDefaults) {
  for (const Convention c : {Convention::Waitlab, Convention::Bsc, Convention::Scalasca}) {
    Convention back = c == Convention::Bsc ? Convention::Waitlab : Convention::Bsc;
    ASSERT_TRUE(parse_convention(convention_name(c), back));
    EXPECT_EQ(back, c);
    EXPECT_FALSE(convention_span_text(c).empty());
    EXPECT_FALSE(convention_useful_text(c).empty());
  }
  EXPECT_EQ(convention_name(Convention::Bsc), "bsc");
  Convention c = Convention::Scalasca;
  EXPECT_FALSE(parse_convention("BSC", c));
  EXPECT_FALSE(parse_convention("", c));
  EXPECT_EQ(c, Convention::Scalasca);
  EXPECT_EQ(default_convention(trace::Origin::Simulated), Convention::Waitlab);
  EXPECT_EQ(default_convention(trace::Origin::Unknown), Convention::Waitlab);
  EXPECT_EQ(default_convention(trace::Origin::Extrae), Convention::Bsc);
  EXPECT_EQ(default_convention(trace::Origin::ScoreP), Convention::Scalasca);
  EXPECT_NE(convention_span_text(Convention::Waitlab), convention_span_text(Convention::Bsc));
}

TEST(Conventions, MakeEstimate) {
  // SerE = useful_max / t_ideal, TrfE = CommE / SerE.
  const auto e = make_estimate("smpi_replay", 0.6, 0.55, 0.59 / 0.62);
  EXPECT_EQ(e.source, "smpi_replay");
  EXPECT_EQ(e.t_ideal, 0.6);
  EXPECT_EQ(e.useful_max, 0.55);
  EXPECT_NEAR(e.ser_e, 0.55 / 0.6, 1e-15);
  EXPECT_NEAR(e.trf_e, (0.59 / 0.62) / (0.55 / 0.6), 1e-15);
  const auto z = make_estimate("lamport", 0, 0.5, 0.5);
  EXPECT_EQ(z.ser_e, 0.0);
  EXPECT_EQ(z.trf_e, 0.0);
}

// MPI_Comm_rank as Extrae and Score-P name it: a region of file "MPI" without an op. It is MPI
// time under every convention; the same name as a user region (no file) is useful.
TEST(Conventions, MpiCallWithoutCommunicationIsNotUseful) {
  for (const bool mpi_file : {true, false}) {
    SCOPED_TRACE(mpi_file);
    TraceBuilder b(2, 1.0);
    b.enter(0, 0, "main").enter(0, 1, "MPI_Comm_rank").leave(0, 3, "MPI_Comm_rank").leave(0, 10, "main");
    b.enter(1, 0, "main").leave(1, 10, "main");
    trace::Trace t = b.trace();
    t.defs.regions[static_cast<std::size_t>(t.defs.find_region("MPI_Comm_rank"))].file = mpi_file ? "MPI" : "";
    for (const Convention c : {Convention::Waitlab, Convention::Bsc, Convention::Scalasca}) {
      SCOPED_TRACE(convention_name(c));
      const auto r = run_as(t, c);
      EXPECT_EQ(r.mpi, mpi_file);
      EXPECT_NEAR(r.elapsed, 10, 1e-12);
      EXPECT_NEAR(r.useful[0], mpi_file ? 8 : 10, 1e-12);
      EXPECT_NEAR(r.useful[1], 10, 1e-12);
      // Lamport: the 2 s in MPI_Comm_rank cost nothing on an ideal network.
      EXPECT_NEAR(r.ideal_unclamped, 10, 1e-12);
      EXPECT_NEAR(r.eff.lb, mpi_file ? 9.0 / 10 : 1.0, 1e-12);
      expect_identities(r);
    }
    const auto ref = lamport_reference(t, trace::Matching::build(t));
    EXPECT_DOUBLE_EQ(ref.times[0][3], mpi_file ? 8 : 10);  // Leave main
  }
}

// Computation before MPI_Init and after MPI_Finalize: outside waitlab's span, inside BSC's.
//   rank 0: main 0–10, MPI_Init 1–2, MPI_Finalize 8–9;  rank 1: main 0–9.5, Init 0.5–2,
//   Finalize 7–9.
// Waitlab: T = [2, 8] = 6, U = {6, 5}. Bsc: T = [0, 10] = 10, U0 = 1 + 6 + 1 = 8,
// U1 = 0.5 + 5 + 0.5 + 0.5 (after its last event, still in no MPI call) = 6.5.
// Lamport: Init ends at its latest entry 1 on both; Finalize entered at 7 (rank 0) and 6, left
// at 7; main left at 8 and 7.5. I(0) = 0, I(10) = max(8 + 0, 7.5 + 0.5) = 8 → T_ideal = 8.
TEST(Conventions, SpanWholeTraceVersusInitFinalize) {
  TraceBuilder b(2, 1.0);
  b.enter(0, 0, "main").call(0, MpiOp::Init, 1, 2).call(0, MpiOp::Finalize, 8, 9).leave(0, 10, "main");
  b.enter(1, 0, "main").call(1, MpiOp::Init, 0.5, 2).call(1, MpiOp::Finalize, 7, 9).leave(1, 9.5, "main");
  const auto w = run_as(b.trace(), Convention::Waitlab);
  EXPECT_NEAR(w.t0, 2, 1e-12);
  EXPECT_NEAR(w.t1, 8, 1e-12);
  EXPECT_NEAR(w.useful[0], 6, 1e-12);
  EXPECT_NEAR(w.useful[1], 5, 1e-12);
  EXPECT_NEAR(w.ideal_unclamped, 6, 1e-12);  // Init's end (1) to rank 0's Finalize entry (7)
  EXPECT_EQ(w.units, 2u);
  EXPECT_EQ(w.convention, Convention::Waitlab);
  const auto r = run_as(b.trace(), Convention::Bsc, {WindowRule::Count, 0, 2});
  EXPECT_EQ(r.convention, Convention::Bsc);
  EXPECT_NEAR(r.t0, 0, 1e-12);
  EXPECT_NEAR(r.t1, 10, 1e-12);
  EXPECT_NEAR(r.useful[0], 8, 1e-12);
  EXPECT_NEAR(r.useful[1], 6.5, 1e-12);
  EXPECT_NEAR(r.eff.lb, 7.25 / 8, 1e-12);
  EXPECT_NEAR(r.eff.comm_e, 0.8, 1e-12);
  EXPECT_NEAR(r.eff.pe, 0.725, 1e-12);
  EXPECT_NEAR(r.ideal_unclamped, 8, 1e-12);
  EXPECT_NEAR(r.eff.ser_e, 1.0, 1e-12);
  EXPECT_NEAR(r.eff.trf_e, 0.8, 1e-12);
  // Window [0, 5): U = {1 + 3, 0.5 + 3}; I(5) = max(1 + 3, 1 + 3) = 4.
  ASSERT_EQ(r.windows.size(), 2u);
  EXPECT_NEAR(r.windows[0].useful_max, 4, 1e-12);
  EXPECT_NEAR(r.windows[0].useful_mean, 3.75, 1e-12);
  EXPECT_NEAR(r.windows[0].ideal_end, 4, 1e-12);
  EXPECT_NEAR(r.windows[1].ideal, 4, 1e-12);
  expect_identities(r);
}

// A declared span (Paraver's header end) longer than the events: the tail is in the run and,
// in no MPI call, useful. Same trace as above, declared [0, 12]: U = {10, 8.5},
// I(12) = max(8 + 2, 7.5 + 2.5) = 10.
TEST(Conventions, DeclaredSpanLongerThanTheEvents) {
  TraceBuilder b(2, 1.0);
  b.enter(0, 0, "main").call(0, MpiOp::Init, 1, 2).call(0, MpiOp::Finalize, 8, 9).leave(0, 10, "main");
  b.enter(1, 0, "main").call(1, MpiOp::Init, 0.5, 2).call(1, MpiOp::Finalize, 7, 9).leave(1, 9.5, "main");
  trace::Trace t = b.trace();
  t.span_begin = 0;
  t.span_end = 12;
  for (const Convention c : {Convention::Bsc, Convention::Scalasca}) {
    const auto r = run_as(t, c);
    EXPECT_NEAR(r.elapsed, 12, 1e-12);
    EXPECT_NEAR(r.useful[0], 10, 1e-12);
    EXPECT_NEAR(r.useful[1], 8.5, 1e-12);
    EXPECT_NEAR(r.ideal_unclamped, 10, 1e-12);
    EXPECT_NEAR(r.eff.pe, 18.5 / 24, 1e-12);
    expect_identities(r);
  }
  // Waitlab ignores the declared span.
  EXPECT_NEAR(run_as(t, Convention::Waitlab).elapsed, 6, 1e-12);
}

// Not-useful states (Location::states). Both ranks: main 0–10, MPI_Barrier 5–6. Rank 0:
// flushing 2–4 and 5.5–7 (overlapping the barrier: the union counts); rank 1: tracing
// disabled 8–9 and an overlapping state 8.5–9.5 (union 8–9.5).
// Bsc and Scalasca: U0 = 10 − 1 − 2 − 1 = 6, U1 = 10 − 1 − 1.5 = 7.5. Waitlab ignores states:
// U = {9, 9}.
TEST(Conventions, StatesAreNotUsefulExceptUnderWaitlab) {
  TraceBuilder b(2, 1.0);
  for (Rank r : {0, 1}) b.enter(r, 0, "main").coll(r, MpiOp::Barrier, 5, 6).leave(r, 10, "main");
  trace::Trace t = b.trace();
  t.locations[0].states = {{2, 4, 12}, {5.5, 7, 12}};
  t.locations[1].states = {{8, 9, 14}, {8.5, 9.5, 12}};
  for (const Convention c : {Convention::Bsc, Convention::Scalasca}) {
    SCOPED_TRACE(convention_name(c));
    const auto r = run_as(t, c, {WindowRule::Count, 0, 2});
    EXPECT_NEAR(r.useful[0], 6, 1e-12);
    EXPECT_NEAR(r.useful[1], 7.5, 1e-12);
    EXPECT_NEAR(r.eff.lb, 6.75 / 7.5, 1e-12);
    EXPECT_NEAR(r.eff.comm_e, 0.75, 1e-12);
    // Window [0, 5): rank 0 useful 0–2, 4–5 = 3; rank 1 5. [5, 10]: 7–10 = 3; 6–8, 9.5–10 = 2.5.
    EXPECT_NEAR(r.windows[0].useful_mean, 4, 1e-12);
    EXPECT_NEAR(r.windows[1].useful_max, 3, 1e-12);
    // The Lamport replay keeps non-MPI time (states too) at its length: T_ideal = 9.
    EXPECT_NEAR(r.ideal_unclamped, 9, 1e-12);
    expect_identities(r);
  }
  const auto w = run_as(t, Convention::Waitlab);
  EXPECT_NEAR(w.useful[0], 9, 1e-12);
  EXPECT_NEAR(w.useful[1], 9, 1e-12);
}

// Rank 0: main 0–10, MPI_Init 0–1, MPI_Finalize 9–10. Two worker threads in omp_fn 2–6 and
// 2–4, "not created" (2) before 2 and idle (0) after their region: U = {8, 4, 2}.
// Bsc: P = 3, LB = (14/3)/8, CommE = 0.8, PE = 14/30. Waitlab: the rank only, T = [1, 9].
// Lamport on the rank: Init ends at 0, Finalize entered at 8 → I(10) = 8 + 0, I(5) = 4.
TEST(Conventions, ThreadsAreUnitsUnderBscAndScalasca) {
  TraceBuilder b(1, 1.0);
  b.enter(0, 0, "main").call(0, MpiOp::Init, 0, 1).call(0, MpiOp::Finalize, 9, 10).leave(0, 10, "main");
  trace::Trace t = b.trace();
  t.threads.push_back(worker(t, 1, {{2, 6}}, {{0, 2, 2}, {6, 10, 0}}));
  t.threads.push_back(worker(t, 2, {{2, 4}}, {{0, 2, 2}, {4, 10, 0}}));
  for (const Convention c : {Convention::Bsc, Convention::Scalasca}) {
    SCOPED_TRACE(convention_name(c));
    const auto r = run_as(t, c, {WindowRule::Count, 0, 2});
    EXPECT_EQ(r.units, 3u);
    EXPECT_EQ(r.ranks, 1u);
    EXPECT_TRUE(r.mpi);
    ASSERT_EQ(r.useful.size(), 3u);
    EXPECT_NEAR(r.useful[0], 8, 1e-12);
    EXPECT_NEAR(r.useful[1], 4, 1e-12);
    EXPECT_NEAR(r.useful[2], 2, 1e-12);
    EXPECT_NEAR(r.eff.lb, 14.0 / 3 / 8, 1e-12);
    EXPECT_NEAR(r.eff.comm_e, 0.8, 1e-12);
    EXPECT_NEAR(r.eff.pe, 14.0 / 30, 1e-12);
    EXPECT_NEAR(r.ideal, 8, 1e-12);
    // Windows clip every unit: [0, 5): {4, 3, 2}; [5, 10]: {4, 1, 0}.
    ASSERT_EQ(r.windows.size(), 2u);
    EXPECT_NEAR(r.windows[0].useful_max, 4, 1e-12);
    EXPECT_NEAR(r.windows[0].eff.pe, 0.6, 1e-12);
    EXPECT_NEAR(r.windows[1].eff.pe, 1.0 / 3, 1e-12);
    EXPECT_NEAR(r.windows[0].ideal, 4, 1e-12);
    EXPECT_EQ(r.windows[0].events, 3u + 1 + 2);  // before 5: the rank's 3 events, thread 1's Enter, thread 2's 2
    expect_identities(r);
  }
  const auto w = run_as(t, Convention::Waitlab);
  EXPECT_EQ(w.units, 1u);
  ASSERT_EQ(w.useful.size(), 1u);
  EXPECT_NEAR(w.elapsed, 8, 1e-12);
  EXPECT_NEAR(w.useful[0], 8, 1e-12);
  EXPECT_EQ(w.eff.lb, 1.0);
}

// No MPI call anywhere: the flag is down and the metrics are computed as such. Rank 0: main
// 1–3, rank 1: main 0–4, declared span [0, 5]. Bsc: T = 5, both units useful all along, T_ideal
// = T (ranks that only compute keep their time). Waitlab: T = [0, 4], U = {2, 4}.
TEST(Conventions, TraceWithoutMpi) {
  TraceBuilder b(2, 1.0);
  b.enter(0, 1, "main").leave(0, 3, "main");
  b.enter(1, 0, "main").leave(1, 4, "main");
  trace::Trace t = b.trace();
  t.span_begin = 0;
  t.span_end = 5;
  const auto r = run_as(t, Convention::Bsc);
  EXPECT_FALSE(r.mpi);
  EXPECT_NEAR(r.elapsed, 5, 1e-12);
  EXPECT_NEAR(r.useful[0], 5, 1e-12);
  EXPECT_NEAR(r.useful[1], 5, 1e-12);
  EXPECT_NEAR(r.ideal_unclamped, 5, 1e-12);
  EXPECT_NEAR(r.eff.pe, 1.0, 1e-12);
  EXPECT_NEAR(r.eff.trf_e, 1.0, 1e-12);
  const auto w = run_as(t, Convention::Waitlab);
  EXPECT_FALSE(w.mpi);
  EXPECT_NEAR(w.elapsed, 4, 1e-12);
  EXPECT_NEAR(w.useful[0], 2, 1e-12);
  EXPECT_NEAR(w.useful[1], 4, 1e-12);
  EXPECT_NEAR(w.eff.pe, 0.75, 1e-12);
  EXPECT_NEAR(w.eff.lb, 0.75, 1e-12);
  // With an MPI call on a worker thread only, the trace has MPI.
  t.threads.push_back(worker(t, 1, {{1, 2}}, {}, "MPI_Comm_rank"));
  t.defs.regions[static_cast<std::size_t>(t.defs.find_region("MPI_Comm_rank"))].file = "MPI";
  EXPECT_TRUE(run_as(t, Convention::Bsc).mpi);
}

// Counter samples: a sample at t counts when the unit is useful just before t.
// Rank 0: main 0–10, MPI_Barrier 4–6, flushing 7–8. Samples (t, ins, cyc):
//   (0, 5, 5) before the span: no; (2, 100, 200) yes, then (2, 999, 999) no (a second sample at
//   the same time: its stretch is empty, as Extrae's MPI_Cart_create); (4, 50, 100) yes (4−ε is before the
//   barrier); (6, 7, 1000) no (in MPI); (7, 30, 60) yes; (8, 11, 13) no under Bsc (flushing),
//   yes under Waitlab; (10, 20, 40) yes.
// Worker thread: omp_fn 1–3, idle 3–10; samples (3, 1000, 500) yes, (10, 9, 9) no.
// Bsc: ins = 100 + 50 + 30 + 20 + 1000 = 1200, cyc = 200 + 100 + 60 + 40 + 500 = 900,
//   Σ U = (10 − 2 − 1) + 3 = 10 → 90 Hz, IPC 4/3.
// Waitlab (the rank only, states ignored): ins = 211, cyc = 413, U = 8.
TEST(Conventions, CountersOverUsefulStretches) {
  TraceBuilder b(1, 1.0);
  b.enter(0, 0, "main").coll(0, MpiOp::Barrier, 4, 6).leave(0, 10, "main");
  trace::Trace t = b.trace();
  t.locations[0].states = {{7, 8, 12}};
  t.locations[0].counters = {{0, 5, 5},  {2, 100, 200}, {2, 999, 999}, {4, 50, 100},
                             {6, 7, 1000}, {7, 30, 60},  {8, 11, 13},   {10, 20, 40}};
  t.threads.push_back(worker(t, 1, {{1, 3}}, {{3, 10, 0}}));
  t.threads[0].counters = {{3, 1000, 500}, {10, 9, 9}};
  t.counters = trace::kHasInstructions | trace::kHasCycles;
  const auto r = run_as(t, Convention::Bsc);
  EXPECT_TRUE(r.counters.instructions);
  EXPECT_TRUE(r.counters.cycles);
  EXPECT_EQ(r.counters.useful_instructions, 1200.0);
  EXPECT_EQ(r.counters.useful_cycles, 900.0);
  EXPECT_NEAR(r.counters.ipc, 1200.0 / 900, 1e-15);
  EXPECT_NEAR(r.counters.frequency_hz, 90, 1e-12);
  const auto w = run_as(t, Convention::Waitlab);
  EXPECT_EQ(w.counters.useful_instructions, 211.0);
  EXPECT_EQ(w.counters.useful_cycles, 413.0);
  EXPECT_NEAR(w.counters.frequency_hz, 413.0 / 8, 1e-12);
  // Instructions only: no cycles, no IPC, no frequency.
  t.counters = trace::kHasInstructions;
  const auto i = run_as(t, Convention::Bsc);
  EXPECT_TRUE(i.counters.instructions);
  EXPECT_FALSE(i.counters.cycles);
  EXPECT_EQ(i.counters.useful_instructions, 1200.0);
  EXPECT_EQ(i.counters.useful_cycles, 0.0);
  EXPECT_EQ(i.counters.ipc, 0.0);
  EXPECT_EQ(i.counters.frequency_hz, 0.0);
  t.counters = 0;
  EXPECT_EQ(run_as(t, Convention::Bsc).counters.useful_instructions, 0.0);
}

// Fixture D as Extrae writes it: no main region, only the MPI calls (1 MiB MPI_Send 0.5–0.51
// on rank 0, MPI_Recv 0.2–0.52 on rank 1), the header's span [0, 0.62], and Paraver's idle
// records end on rank 0 once it has finished (0.6–0.62, which Paraver shows Idle: the reader's
// kStateNoRecord).
// By hand: U0 = 0.5 + (0.6 − 0.51) = 0.59, U1 = 0.2 + (0.62 − 0.52) = 0.30, T = 0.62:
//   LB = 0.445/0.59 = 75.42 %, CommE = 0.59/0.62 = 95.16 %, PE = 0.445/0.62 = 71.77 % — Fixture D's.
// Lamport: the send enters at 0.5 and, its receive posted at 0.2, leaves at 0.5; the receive
// completes at 0.5. After their last events the ranks keep the measured distance up to where
// their records end (rank 0 at 0.6, as Dimemas ends it; rank 1 at T1):
// I(0.62) = max(0.5 + 0.09, 0.5 + 0.10) = 0.60 — Fixture D's. The ideal run's useful time
// (BSC's: outside MPI up to the records' end) is 0.6 − 0.01 = 0.59 and 0.62 − 0.32 = 0.30:
// SerE = 0.59/0.60 = 98.33 %, TrfE = CommE/SerE = 0.60/0.62 = 96.77 %.
TEST(Conventions, FixtureDAsExtraeWritesIt) {
  TraceBuilder b(2, 1.0);
  b.send(0, 0.5, 0.51, 1, 7).recv(1, 0.2, 0.52, 0.52, 0, 7);
  trace::Trace t = b.trace();
  for (auto& l : t.locations)
    for (auto& e : l.events)
      if (e.kind == trace::EventKind::Send || e.kind == trace::EventKind::Recv) e.bytes = 1 << 20;
  t.origin = trace::Origin::Extrae;
  t.span_begin = 0;
  t.span_end = 0.62;
  t.locations[0].states = {{0.6, 0.62, trace::kStateNoRecord}};
  const auto r = run_as(t, default_convention(t.origin), {WindowRule::Count, 0, 2});
  EXPECT_EQ(r.convention, Convention::Bsc);
  EXPECT_NEAR(r.elapsed, 0.62, 1e-12);
  EXPECT_NEAR(r.useful[0], 0.59, 1e-12);
  EXPECT_NEAR(r.useful[1], 0.30, 1e-12);
  EXPECT_NEAR(r.eff.lb, 0.445 / 0.59, 1e-12);
  EXPECT_NEAR(r.eff.comm_e, 0.59 / 0.62, 1e-12);
  EXPECT_NEAR(r.eff.pe, 0.445 / 0.62, 1e-12);
  EXPECT_NEAR(100 * r.eff.pe, 71.77, 0.005);
  EXPECT_NEAR(r.ideal, 0.60, 1e-12);
  EXPECT_NEAR(r.useful_ideal_max, 0.59, 1e-12);
  EXPECT_NEAR(r.eff.ser_e, 0.59 / 0.60, 1e-12);
  EXPECT_NEAR(r.eff.trf_e, 0.60 / 0.62, 1e-12);
  ASSERT_EQ(r.estimates.size(), 1u);
  EXPECT_EQ(r.estimates[0].source, "lamport");
  EXPECT_NEAR(r.estimates[0].t_ideal, 0.60, 1e-12);
  EXPECT_NEAR(r.estimates[0].useful_max, 0.59, 1e-12);
  EXPECT_EQ(r.estimates[0].ser_e, r.eff.ser_e);
  EXPECT_EQ(r.estimates[0].trf_e, r.eff.trf_e);
  // Window [0, 0.31): both useful until 0.2, rank 0 until 0.31; I(0.31) = 0.31.
  EXPECT_NEAR(r.windows[0].useful_mean, 0.255, 1e-12);
  EXPECT_NEAR(r.windows[0].ideal_end, 0.31, 1e-12);
  expect_identities(r);
  // The Waitlab convention on the same trace: first to last event, states ignored.
  const auto w = run_as(t, Convention::Waitlab);
  EXPECT_NEAR(w.t0, 0.2, 1e-12);
  EXPECT_NEAR(w.t1, 0.52, 1e-12);
}

}  // namespace
}  // namespace waitlab::analysis
