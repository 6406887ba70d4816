// Delay costs and the critical path: Fixtures B and C of ALGORITHMS.md §2–4 exactly, and
// the invariants on hand-built traces.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/critpath/critpath.hpp"
#include "analysis/delay/delay.hpp"
#include "trace_builder.hpp"

namespace waitlab::analysis::test {
namespace {

struct Analysed {
  trace::Trace trace;
  trace::Matching match;
  WaitStateResult waits;
  DelayResult delay;
  CriticalPathResult cp;
};

Analysed analyse(const TraceBuilder& b) {
  Analysed a{b.trace(), {}, {}, {}, {}};
  a.match = trace::Matching::build(a.trace);
  a.waits = wait_states(a.trace, a.match);
  a.delay = delay_costs(a.trace, a.match, a.waits);
  a.cp = critical_path(a.trace, a.match, a.waits);
  return a;
}

struct Cost {
  double short_term = 0, long_term = 0;
};
Cost cost(const Analysed& a, DelayKind k, const std::string& path, Rank r) {
  for (const auto& e : a.delay.table)
    if (e.kind == k && e.rank == r && a.match.paths.name(e.path, a.trace.defs) == path)
      return {e.short_term, e.long_term};
  return {-1, -1};
}
const WaitClass& class_of(const Analysed& a, Pattern p, Rank r) {
  for (std::size_t i = 0; i < a.waits.instances.size(); ++i)
    if (a.waits.instances[i].pattern == p && a.waits.instances[i].rank == r) return a.delay.classes[i];
  ADD_FAILURE() << "no " << pattern_name(p) << " on rank " << r;
  static const WaitClass none;
  return none;
}

void expect_invariants(const Analysed& a) {
  // Delay costs + unattributed = waiting time of the synchronisation points.
  EXPECT_NEAR(a.delay.short_term + a.delay.long_term + a.delay.unattributed, a.delay.sync_waiting,
              1e-9 * (1 + a.delay.sync_waiting));
  for (const auto& e : a.delay.table) {
    EXPECT_GE(e.short_term, 0);
    EXPECT_GE(e.long_term, 0);
  }
  // The critical-path profile sums to the path's length; the impact split adds up.
  double sum = 0;
  for (const auto& c : a.cp.profile) {
    sum += c.on_path;
    EXPECT_GE(c.imbalance, 0);
  }
  EXPECT_NEAR(sum, a.cp.length, 1e-9);
  const double p = static_cast<double>(a.trace.ranks());
  EXPECT_NEAR(a.cp.critical_activities + a.cp.critical_imbalance, p * a.cp.length, 1e-9);
  for (std::size_t i = 1; i < a.cp.segments.size(); ++i)
    EXPECT_NEAR(a.cp.segments[i - 1].end, a.cp.segments[i].start, 1e-12);
}

TEST(FixtureB, WaitStatesDelayCostsAndCriticalPath) {
  const auto a = analyse(fixture_b());
  const double us = 1e-6, eps = 1e-9 * us;
  const auto& t = a.waits;
  EXPECT_EQ(t.instances.size(), 4u);
  for (const auto& w : t.instances) {
    if (w.pattern == Pattern::LateSender) {
      EXPECT_NEAR(w.seconds, 1000 * us, eps);
    } else {
      EXPECT_EQ(w.pattern, Pattern::WaitAtBarrier);
      EXPECT_NEAR(w.seconds, (w.rank == 1 ? 500 : 400) * us, eps);
    }
  }
  // Short-term (Late Sender): r0 main 1000, r1 main/MPI_Recv 1000·20/1020; long-term r0 main 1000·1000/1020.
  const Cost r0 = cost(a, DelayKind::LateSender, "main", 0);
  EXPECT_NEAR(r0.short_term, 1000 * us, eps);
  EXPECT_NEAR(r0.long_term, 1000.0 * 1000 / 1020 * us, eps);
  EXPECT_NEAR(r0.long_term, 980.39 * us, 0.005 * us);
  const Cost r1 = cost(a, DelayKind::LateSender, "main/MPI_Recv", 1);
  EXPECT_NEAR(r1.short_term, 1000.0 * 20 / 1020 * us, eps);
  EXPECT_NEAR(r1.short_term, 19.6 * us, 0.01 * us);
  EXPECT_EQ(r1.long_term, 0);
  // The barrier waits (500 + 400) are r0's short-term barrier costs. Against r1 (main 1470,
  // MPI_Recv 20, MPI_Send 10 before 2500) only r0's main is in excess (2990 − 1470); against
  // r2 (main 1580, MPI_Recv 20 before 2600) main by 1410 and MPI_Send by 10.
  EXPECT_NEAR(cost(a, DelayKind::Barrier, "main", 0).short_term, (500 + 400.0 * 1410 / 1420) * us, eps);
  EXPECT_NEAR(cost(a, DelayKind::Barrier, "main/MPI_Send", 0).short_term, 400.0 * 10 / 1420 * us, eps);
  // Classification: r1's wait propagates 980.39 to r2, whose wait is indirect by as much.
  EXPECT_NEAR(class_of(a, Pattern::LateSender, 1).propagating, 1000.0 * 1000 / 1020 * us, eps);
  EXPECT_NEAR(class_of(a, Pattern::LateSender, 1).gamma_long, 1000.0 * 1000 / 1020 * us, eps);
  EXPECT_NEAR(class_of(a, Pattern::LateSender, 1).direct, 1000 * us, eps);
  EXPECT_NEAR(class_of(a, Pattern::LateSender, 2).indirect, 1000.0 * 1000 / 1020 * us, eps);
  EXPECT_NEAR(class_of(a, Pattern::LateSender, 2).terminal, 1000 * us, eps);
  EXPECT_EQ(a.delay.unattributed, 0);
  // The critical path lies entirely on rank 0, from 0 to 3050 µs.
  for (const auto& s : a.cp.segments) EXPECT_EQ(s.rank, 0);
  EXPECT_NEAR(a.cp.length, 3050 * us, eps);
  expect_invariants(a);
}

TEST(FixtureC, PaperFigure3) {
  const auto a = analyse(fixture_c());
  const double eps = 1e-12;
  EXPECT_NEAR(cost(a, DelayKind::LateSender, "main/f", 0).short_term, 0.75, eps);
  EXPECT_NEAR(cost(a, DelayKind::LateSender, "main/f", 0).long_term, 0.375, eps);
  EXPECT_NEAR(cost(a, DelayKind::LateSender, "main/g", 0).short_term, 2.25, eps);
  EXPECT_NEAR(cost(a, DelayKind::LateSender, "main/g", 0).long_term, 1.125, eps);
  EXPECT_NEAR(cost(a, DelayKind::LateSender, "main/MPI_Recv", 1).short_term, 0.5, eps);
  EXPECT_NEAR(cost(a, DelayKind::LateSender, "main/MPI_Recv", 1).long_term, 0.0, eps);
  EXPECT_NEAR(class_of(a, Pattern::LateSender, 1).gamma_long, 1.5, eps);
  EXPECT_NEAR(a.delay.short_term + a.delay.long_term, 5.0, eps);
  EXPECT_EQ(a.delay.table.size(), 3u);
  // C's wait (2) is a quarter direct (B's receive processing), three quarters propagated.
  EXPECT_NEAR(class_of(a, Pattern::LateSender, 2).direct, 0.5, eps);
  EXPECT_NEAR(class_of(a, Pattern::LateSender, 2).indirect, 1.5, eps);
  // Critical path: C's receive tail (6–6.5) ← B's send and receive tail (5–6) ← A's f and g (0–5).
  ASSERT_GE(a.cp.segments.size(), 3u);
  EXPECT_EQ(a.cp.segments.front().rank, 0);
  EXPECT_EQ(a.cp.segments.back().rank, 2);
  EXPECT_EQ(a.cp.jumps, 2u);
  EXPECT_NEAR(a.cp.length, 6.5, eps);
  const auto on_path = [&](const std::string& path) {
    for (const auto& c : a.cp.profile)
      if (a.match.paths.name(c.path, a.trace.defs) == path) return c.on_path;
    return -1.0;
  };
  EXPECT_NEAR(on_path("main/f"), 2.0, eps);
  EXPECT_NEAR(on_path("main/g"), 3.0, eps);
  EXPECT_NEAR(on_path("main/MPI_Recv"), 1.5, eps);  // B 5–6, C 6–6.5
  expect_invariants(a);
}

TEST(CriticalPath, ImbalanceOfAFunctionThatIsSerialised) {
  // Paper 001's extreme example: every rank runs `work` for 1 s, but one after the other
  // (a token passed along the ranks). Per-rank profiles are balanced; the path is not.
  TraceBuilder b(3, 1.0);
  for (Rank r : {0, 1, 2}) b.enter(r, 0, "main");
  b.enter(0, 0, "work").leave(0, 1, "work").send(0, 1, 1, 1).call(0, MpiOp::Finalize, 1, 3);
  b.recv(1, 0, 1, 1, 0).enter(1, 1, "work").leave(1, 2, "work").send(1, 2, 2, 2).call(1, MpiOp::Finalize, 2, 3);
  b.recv(2, 0, 2, 2, 1).enter(2, 2, "work").leave(2, 3, "work").call(2, MpiOp::Finalize, 3, 3);
  b.leave(0, 3, "main").leave(1, 3, "main").leave(2, 3, "main");
  const auto a = analyse(b);
  for (const auto& c : a.cp.profile) {
    if (a.match.paths.name(c.path, a.trace.defs) != "main/work") continue;
    EXPECT_DOUBLE_EQ(c.on_path, 3.0);
    EXPECT_DOUBLE_EQ(c.average, 1.0);
    EXPECT_DOUBLE_EQ(c.imbalance, 2.0);
  }
  EXPECT_DOUBLE_EQ(a.cp.length, 3.0);
  EXPECT_DOUBLE_EQ(a.cp.critical_imbalance, 3 * 2.0);
  expect_invariants(a);
}

// The path's bounds (issue 33): waitlab's run from the end rank's last event to the first event
// of the rank reached and jump at a Wait at Init; Scalasca's (scout's CriticalPath.pattern) run
// from the Enter of the last MPI_Finalize back to the Enter of MPI_Init, with no jump inside it.
// Rank 0 enters MPI_Finalize last (70 > 65); it waited 5 s in MPI_Init for rank 1, which ran
// `pre` 0–10 first.
TEST(CriticalPath, ScalascasBoundsRunFromInitToTheLastFinalizeEnter) {
  TraceBuilder b(2, 1.0);
  b.enter(0, 0, "main").call(0, MpiOp::Init, 5, 20).enter(0, 20, "work").leave(0, 60, "work").send(0, 60, 60, 1);
  b.call(0, MpiOp::Finalize, 70, 80).leave(0, 80, "main");
  b.enter(1, 0, "main").enter(1, 0, "pre").leave(1, 10, "pre").call(1, MpiOp::Init, 10, 20).recv(1, 20, 60, 60, 0);
  b.call(1, MpiOp::Finalize, 65, 80).leave(1, 85, "main");
  const auto a = analyse(b);
  const auto segments = [](const Analysed& of, const CriticalPathResult& c) {
    std::vector<std::tuple<Rank, std::string, double, double>> s;
    for (const auto& g : c.segments) s.emplace_back(g.rank, of.match.paths.name(g.path, of.trace.defs), g.start, g.end);
    return s;
  };
  using S = std::vector<std::tuple<Rank, std::string, double, double>>;
  // waitlab's: rank 0's last event (80) back to rank 1's first (0), one jump at 10.
  EXPECT_EQ(a.cp.bounds, PathBounds::Waitlab);
  EXPECT_DOUBLE_EQ(a.cp.length, 80.0);
  EXPECT_EQ(a.cp.jumps, 1u);
  EXPECT_EQ(segments(a, a.cp), (S{{1, "main/pre", 0, 10},
                                {0, "main/MPI_Init", 10, 20},
                                {0, "main/work", 20, 60},
                                {0, "main", 60, 70},
                                {0, "main/MPI_Finalize", 70, 80}}));
  // Scalasca's: rank 0's MPI_Finalize Enter (70) back to its MPI_Init Enter (5), no jump.
  const auto s = critical_path(a.trace, a.match, a.waits, CriticalPathOptions{PathBounds::Scalasca});
  EXPECT_EQ(s.bounds, PathBounds::Scalasca);
  EXPECT_DOUBLE_EQ(s.start, 5.0);
  EXPECT_DOUBLE_EQ(s.end, 70.0);
  EXPECT_DOUBLE_EQ(s.length, 65.0);
  EXPECT_EQ(s.jumps, 0u);
  EXPECT_EQ(segments(a, s), (S{{0, "main/MPI_Init", 5, 20}, {0, "main/work", 20, 60}, {0, "main", 60, 70}}));
  double on_path = 0;
  for (const auto& c : s.profile) on_path += c.on_path;
  EXPECT_DOUBLE_EQ(on_path, s.length);

  // Scout's critical path has no callback at scans: an Early Scan is no jump under its bounds.
  // Rank 1 waits 8 s in MPI_Scan for rank 0 (working 1–10), then works 11–15 and enters
  // MPI_Finalize last.
  TraceBuilder c(2, 1.0);
  for (Rank r : {0, 1}) c.enter(r, 0, "main").call(r, MpiOp::Init, 0, 1);
  c.enter(0, 1, "work").leave(0, 10, "work").coll(0, MpiOp::Scan, 10, 11).call(0, MpiOp::Finalize, 11, 16);
  c.coll(1, MpiOp::Scan, 2, 11).enter(1, 11, "work").leave(1, 15, "work").call(1, MpiOp::Finalize, 15, 16);
  for (Rank r : {0, 1}) c.leave(r, 16, "main");
  const auto e = analyse(c);
  ASSERT_DOUBLE_EQ(e.waits.total[static_cast<std::size_t>(Pattern::EarlyScan)], 8.0);
  EXPECT_DOUBLE_EQ(e.cp.length, 16.0);
  EXPECT_EQ(e.cp.jumps, 1u);
  const auto es = critical_path(e.trace, e.match, e.waits, CriticalPathOptions{PathBounds::Scalasca});
  EXPECT_DOUBLE_EQ(es.length, 15.0);
  EXPECT_EQ(es.jumps, 0u);
  EXPECT_EQ(segments(e, es), (S{{1, "main/MPI_Init", 0, 1}, {1, "main", 1, 2}, {1, "main/MPI_Scan", 2, 11},
                             {1, "main/work", 11, 15}}));
}

// Fixtures E, F and G (issue 18; µs; 3 ranks, every rank in `main` 0–3200, MPI_Init 10–100,
// MPI_Finalize 3000–3100), with the delay costs Scalasca 2.6 reports for them.
TraceBuilder scalasca_fixture(const std::function<void(TraceBuilder&)>& body) {
  TraceBuilder b(3, 1e-6);
  for (Rank r : {0, 1, 2}) b.enter(r, 0, "main").call(r, MpiOp::Init, 10, 100);
  body(b);
  for (Rank r : {0, 1, 2}) b.call(r, MpiOp::Finalize, 3000, 3100).leave(r, 3200, "main");
  return b;
}

// Every cell of the table, as {kind, path, rank, short, long} in µs.
struct Expected {
  DelayKind kind;
  std::string path;
  Rank rank;
  double short_us, long_us;
};
void expect_table(const Analysed& a, const std::vector<Expected>& want) {
  EXPECT_EQ(a.delay.table.size(), want.size());
  for (const auto& e : want) {
    const Cost c = cost(a, e.kind, e.path, e.rank);
    EXPECT_NEAR(c.short_term, e.short_us * 1e-6, 1e-15) << delay_kind_name(e.kind) << " " << e.path << " r" << e.rank;
    EXPECT_NEAR(c.long_term, e.long_us * 1e-6, 1e-15) << delay_kind_name(e.kind) << " " << e.path << " r" << e.rank;
  }
  expect_invariants(a);
}

// E: a Late Sender (600), a barrier that r2 enters last (r0 waits 700, r1 300), then a Late
// Sender back (150). The last wait's interval starts at the barrier, where r0 and r1
// synchronised (any kind of synchronisation counts, not only messages between the pair):
// r1's barrier wait lies before it and is no cause of r0's wait; nothing is long-term.
TEST(FixtureE, SynchronisationIntervalStartsAtAnyKindOfSynchronisation) {
  const auto a = analyse(scalasca_fixture([](TraceBuilder& b) {
    b.send(0, 1000, 1010, 1).coll(0, MpiOp::Barrier, 1100, 1810).recv(0, 1850, 2020, 2020, 1);
    b.recv(1, 400, 1020, 1020, 0).coll(1, MpiOp::Barrier, 1500, 1810).send(1, 2000, 2010, 0);
    b.coll(2, MpiOp::Barrier, 1800, 1810);
  }));
  expect_table(a, {{DelayKind::LateSender, "main", 0, 600, 0},
                   {DelayKind::LateSender, "main", 1, 150, 0},
                   {DelayKind::Barrier, "main", 2, 1000, 0}});
  EXPECT_NEAR(a.delay.unattributed, 0, 1e-15);
}

// F: a broadcast, a reduce whose root r0 waits 500 for r2 (Early Reduce), a broadcast in
// which r1 waits 500 and r2 5 for the root (Late Broadcast). r1 and r0 did not synchronise
// in the reduce: r1's wait is the root's reduce wait passed on, a long-term cost of r2's
// extra work filed under the kind of wait it finally caused (1-to-N).
TEST(FixtureF, LongTermCostsUnderTheKindTheyFinallyCause) {
  const auto a = analyse(scalasca_fixture([](TraceBuilder& b) {
    for (Rank r : {0, 1, 2}) b.coll(r, MpiOp::Bcast, 200, 210, 0);
    b.coll(0, MpiOp::Reduce, 300, 810, 0).coll(0, MpiOp::Bcast, 820, 830, 0);
    b.coll(1, MpiOp::Reduce, 300, 310, 0).coll(1, MpiOp::Bcast, 320, 830, 0);
    b.coll(2, MpiOp::Reduce, 800, 810, 0).coll(2, MpiOp::Bcast, 815, 830, 0);
  }));
  expect_table(a, {{DelayKind::OneToN, "main", 0, 5, 0},
                   {DelayKind::OneToN, "main", 2, 0, 500},
                   {DelayKind::NToOne, "main", 2, 500, 0}});
  EXPECT_NEAR(a.delay.unattributed, 0, 1e-15);
  EXPECT_NEAR(a.delay.long_total[static_cast<std::size_t>(DelayKind::OneToN)], 500e-6, 1e-15);
  EXPECT_EQ(a.delay.long_total[static_cast<std::size_t>(DelayKind::NToOne)], 0);
}

// G: r1 waits 800 for r0's message, then enters the barrier last (r0 waits 400, r2 900). The
// interval of r0's barrier wait starts where the message synchronised the pair, when the
// first of them left its call (r0's send at 1010): r1's receive after that (10) and its
// main (480 against r0's 90) are the cause, 400 exactly. r2's wait goes back to the start:
// r1's main 80 and receive 20 more than r2's, and r1's own wait of 800 — passed on from r0's
// late send, a long-term barrier cost of r0's main.
TEST(FixtureG, IntervalFromThePairsLastSynchronisation) {
  const auto a = analyse(scalasca_fixture([](TraceBuilder& b) {
    b.send(0, 1000, 1010, 1).coll(0, MpiOp::Barrier, 1100, 1510);
    b.recv(1, 200, 1020, 1020, 0).coll(1, MpiOp::Barrier, 1500, 1510);
    b.coll(2, MpiOp::Barrier, 600, 1510);
  }));
  expect_table(a, {{DelayKind::LateSender, "main", 0, 800, 0},
                   {DelayKind::Barrier, "main", 1, 470, 0},
                   {DelayKind::Barrier, "main/MPI_Recv", 1, 30, 0},
                   {DelayKind::Barrier, "main", 0, 0, 800}});
  EXPECT_NEAR(a.delay.unattributed, 0, 1e-15);
}

// H (issue 33): a broadcast from r0 in which r1 waits 300 and r2 200 (Late Broadcast; r0 leaves
// at 510, eagerly), then r0 waits 300 for r1's message (Late Sender). The pair's previous
// synchronisation is the broadcast, and after a collective Scalasca starts the interval on each
// rank at its Leave less its completion there: max(0, F − max(E, min(B_root, F))), E the
// earliest end among the non-roots that waited for the root (r2's 520; the root's own 510 does
// not count). r0: 510 − 0; r1: 600 − (600 − 520) = 520. Δ on r1 = main 400 − 190 and
// MPI_Bcast 80 (not 90, as from the pair's earlier Leave 510); the wait of 300 is longer than
// its causes (290): the scale of a message is capped, 10 has no cause.
TEST(FixtureH, IntervalAfterABroadcastStartsAtEachRanksCompletion) {
  const auto a = analyse(scalasca_fixture([](TraceBuilder& b) {
    b.coll(0, MpiOp::Bcast, 500, 510, 0).recv(0, 700, 1010, 1010, 1);
    b.coll(1, MpiOp::Bcast, 200, 600, 0).send(1, 1000, 1010, 0);
    b.coll(2, MpiOp::Bcast, 300, 520, 0);
  }));
  EXPECT_NEAR(a.waits.total[static_cast<std::size_t>(Pattern::LateBroadcast)], 500e-6, 1e-15);
  EXPECT_NEAR(a.waits.total[static_cast<std::size_t>(Pattern::LateSender)], 300e-6, 1e-15);
  expect_table(a, {{DelayKind::LateSender, "main", 1, 210, 0},
                   {DelayKind::LateSender, "main/MPI_Bcast", 1, 80, 0},
                   {DelayKind::OneToN, "main", 0, 500, 0}});
  EXPECT_NEAR(a.delay.unattributed, 10e-6, 1e-15);
  EXPECT_EQ(a.delay.sync_points, 3u);
}

// H′: H with the message replaced by a reduce to r0 that r1 begins last (Early Reduce: r0 waits
// 300, caused by r1). The same interval and Δ = 290 — but the scale of a collective is not
// capped (scout's CalculateCollectiveDelay): all 300 go to r1's main and MPI_Bcast in
// proportion, nothing is left without a cause.
TEST(FixtureH, CollectiveScaleIsNotCapped) {
  const auto a = analyse(scalasca_fixture([](TraceBuilder& b) {
    b.coll(0, MpiOp::Bcast, 500, 510, 0).coll(0, MpiOp::Reduce, 700, 1010, 0);
    b.coll(1, MpiOp::Bcast, 200, 600, 0).coll(1, MpiOp::Reduce, 1000, 1010, 0);
    b.coll(2, MpiOp::Bcast, 300, 520, 0).coll(2, MpiOp::Reduce, 650, 1010, 0);
  }));
  EXPECT_NEAR(a.waits.total[static_cast<std::size_t>(Pattern::EarlyReduce)], 300e-6, 1e-15);
  expect_table(a, {{DelayKind::NToOne, "main", 1, 210.0 * 300 / 290, 0},
                   {DelayKind::NToOne, "main/MPI_Bcast", 1, 80.0 * 300 / 290, 0},
                   {DelayKind::OneToN, "main", 0, 500, 0}});
  EXPECT_NEAR(a.delay.unattributed, 0, 1e-15);
}

// I (issue 33; a Scalasca 2.6 defect waitlab does not copy): r2 waits for r1's message (ev_1,
// 300), then twice for r0's (x and ev_0, 200 each), then enters the barrier last (r0 waits 200,
// r1 250). r1's barrier interval runs from ev_1 (t0 = 510): on r2 main 570 against r1's 740,
// MPI_Recv 20, and r2's waits x and ev_0 (400) — Δ + W_d = 420, so 250·20/420 short-term on r2's
// MPI_Recv and 250·200/420 = 119.0476 passed on to each of x and ev_0, both inside that interval,
// and from there a long-term barrier cost of r0's main (2 × 119.0476). Scalasca 2.6 gives x none
// (MpiDelayOps.cpp CalculateScales with DelayCostMap::addCosts applies r1's scale only from the
// next synchronisation point on, ev_0): it reports 119.0476 long-term and leaves 119.0476 of r1's
// waiting out of every cost (docs/analyses.md, "Differences from Scalasca 2.6").
TEST(FixtureI, LongTermCostsReachEveryWaitInTheInterval) {
  const auto a = analyse(scalasca_fixture([](TraceBuilder& b) {
    b.send(1, 500, 510, 2).coll(1, MpiOp::Barrier, 1250, 1510);
    b.send(0, 800, 810, 2).send(0, 1200, 1210, 2).coll(0, MpiOp::Barrier, 1300, 1510);
    b.recv(2, 200, 510, 510, 1).recv(2, 600, 810, 810, 0).recv(2, 1000, 1210, 1210, 0);
    b.coll(2, MpiOp::Barrier, 1500, 1510);
  }));
  expect_table(a, {{DelayKind::LateSender, "main", 0, 400, 0},
                   {DelayKind::LateSender, "main", 1, 300, 0},
                   {DelayKind::Barrier, "main", 2, 200, 0},
                   {DelayKind::Barrier, "main/MPI_Recv", 2, 250.0 * 20 / 420, 0},
                   {DelayKind::Barrier, "main", 0, 0, 2 * 250.0 * 200 / 420}});
  EXPECT_NEAR(a.delay.unattributed, 0, 1e-15);
  EXPECT_NEAR(a.delay.short_term + a.delay.long_term, 1150e-6, 1e-15);
  EXPECT_NEAR(a.delay.scalasca_collective_long_term_lost, 250.0 * 200 / 420 * 1e-6, 1e-15);
  EXPECT_EQ(a.delay.scalasca_late_receiver_at_stake, 0.0);
}

// The Late Receiver defect of Scalasca 2.6 (MPI.pattern, MPI_LATERECEIVER: the sender's
// completion is `leave_sendcmp > leave_recvreq ? 0 : leave_sendcmp − leave_recvreq`, never
// positive): r0's MPI_Ssend waits 400 for r1 to post the receive and leaves 10 after r1's
// MPI_Recv. r1 then waits 300 for r0's next message; that interval starts where the pair
// synchronised, at the earlier Leave (650), so r0's 10 in MPI_Ssend after it is a cause beside
// its main 290. Scalasca starts r0's side at its own Leave (660): it reports main 290 only and
// leaves the 10 without a cause.
TEST(Delay, LateReceiverCompletionIsTheSendersProcessing) {
  const auto a = analyse(scalasca_fixture([](TraceBuilder& b) {
    b.send(0, 200, 660, 1, 0, MpiOp::Ssend).send(0, 1000, 1010, 1);
    b.recv(1, 600, 640, 650, 0).recv(1, 700, 1010, 1010, 0);
  }));
  EXPECT_NEAR(a.waits.total[static_cast<std::size_t>(Pattern::LateReceiver)], 400e-6, 1e-15);
  EXPECT_NEAR(a.waits.total[static_cast<std::size_t>(Pattern::LateSender)], 300e-6, 1e-15);
  expect_table(a, {{DelayKind::LateSender, "main", 0, 290, 0},
                   {DelayKind::LateSender, "main/MPI_Ssend", 0, 10, 0},
                   {DelayKind::LateReceiver, "main", 1, 400, 0}});
  EXPECT_NEAR(a.delay.unattributed, 0, 1e-15);
  EXPECT_NEAR(a.delay.scalasca_late_receiver_at_stake, 10e-6, 1e-15);
  EXPECT_EQ(a.delay.scalasca_collective_long_term_lost, 0.0);
}

// Completion time is processing (scout's CalculateWaitMap subtracts only the waiting of the
// synchronisation points in an interval), and every barrier synchronises its members, waited or
// not (cb_pre_sync_coll). Rank 1 left the barrier 2 s after rank 0 (Barrier Completion: no wait)
// and computed 1 s in main before sending; rank 0 waits 3 s for that message. Both intervals
// start at 1 (rank 1: its Leave 3 less its completion 2): rank 1's 2 s in MPI_Barrier after it
// and its 1 s of main are the cause, all 3 s.
TEST(Delay, CompletionTimeIsProcessing) {
  TraceBuilder b(2, 1.0);
  for (Rank r : {0, 1}) b.enter(r, 0, "main");
  b.coll(0, MpiOp::Barrier, 0, 1).recv(0, 1, 4, 4, 1);
  b.coll(1, MpiOp::Barrier, 0, 3).send(1, 4, 4, 0);
  for (Rank r : {0, 1}) b.leave(r, 4, "main");
  const auto a = analyse(b);
  ASSERT_DOUBLE_EQ(a.waits.total[static_cast<std::size_t>(Pattern::LateSender)], 3.0);
  ASSERT_DOUBLE_EQ(a.waits.total[static_cast<std::size_t>(Pattern::BarrierCompletion)], 2.0);
  EXPECT_EQ(a.delay.table.size(), 2u);
  EXPECT_DOUBLE_EQ(cost(a, DelayKind::LateSender, "main", 1).short_term, 1.0);
  EXPECT_DOUBLE_EQ(cost(a, DelayKind::LateSender, "main/MPI_Barrier", 1).short_term, 2.0);
  EXPECT_EQ(a.delay.unattributed, 0.0);
  expect_invariants(a);
}

// Only the wait at a message is capped (Delay.MPI.pattern: scale_w = min(w / (ΣΔ + W_d), 1)); the
// long-term cost it carries is not (scale_c = γ / (ΣΔ + W_d)). Fixture H, and then r2 waits 500
// for r0's next message (sent at 1100): its interval from the broadcast (r2 from 520, r0 from
// 510) holds r0's main 280 against r2's 80, r0's MPI_Recv 10 and r0's Late Sender wait 300, so
// 500·300/510 of it is r0's wait passed on (γ). r0's capped wait (300 against causes of 290)
// gives r1 210 and 80 short-term, 10 have no cause — and γ goes to r1 whole, in proportion
// 210 : 80 (capped, 9.8 of it would have had no cause).
TEST(FixtureH, LongTermCostOfACappedWaitIsNotCapped) {
  const auto a = analyse(scalasca_fixture([](TraceBuilder& b) {
    b.coll(0, MpiOp::Bcast, 500, 510, 0).recv(0, 700, 1010, 1010, 1).send(0, 1100, 1110, 2);
    b.coll(1, MpiOp::Bcast, 200, 600, 0).send(1, 1000, 1010, 0);
    b.coll(2, MpiOp::Bcast, 300, 520, 0).recv(2, 600, 1110, 1110, 0);
  }));
  EXPECT_NEAR(a.waits.total[static_cast<std::size_t>(Pattern::LateSender)], 800e-6, 1e-15);
  const double gamma = 500.0 * 300 / 510;
  expect_table(a, {{DelayKind::LateSender, "main", 1, 210, gamma * 210 / 290},
                   {DelayKind::LateSender, "main/MPI_Bcast", 1, 80, gamma * 80 / 290},
                   {DelayKind::LateSender, "main", 0, 500.0 * 200 / 510, 0},
                   {DelayKind::LateSender, "main/MPI_Recv", 0, 500.0 * 10 / 510, 0},
                   {DelayKind::OneToN, "main", 0, 500, 0}});
  EXPECT_NEAR(a.delay.unattributed, 10e-6, 1e-15);
}

// Scalasca has no delay metric for Wait at Init and Wait at Finalize: no costs for them, but
// MPI_Init still synchronises its members, so an interval starts at its first Leave. Rank 0
// waits 10 s in MPI_Init (rank 1 computed in `pre` first), 20 s for rank 1's message (rank 1
// worked 30 s, rank 0 10 s since MPI_Init) and 200 s in MPI_Finalize.
TEST(Delay, WaitAtInitAndFinalizeHaveNoDelayCosts) {
  TraceBuilder b(2, 1.0);
  for (Rank r : {0, 1}) b.enter(r, 0, "main");
  b.call(0, MpiOp::Init, 0, 20).enter(0, 20, "work").leave(0, 30, "work").recv(0, 30, 50, 50, 1);
  b.call(0, MpiOp::Finalize, 100, 300);
  b.enter(1, 0, "pre").leave(1, 10, "pre").call(1, MpiOp::Init, 10, 20);
  b.enter(1, 20, "work").leave(1, 50, "work").send(1, 50, 50, 0);
  b.call(1, MpiOp::Finalize, 300, 300);
  for (Rank r : {0, 1}) b.leave(r, 300, "main");
  const auto a = analyse(b);
  EXPECT_DOUBLE_EQ(a.waits.total[static_cast<std::size_t>(Pattern::WaitAtInit)], 10.0);
  EXPECT_DOUBLE_EQ(a.waits.total[static_cast<std::size_t>(Pattern::WaitAtFinalize)], 200.0);
  EXPECT_DOUBLE_EQ(a.waits.total[static_cast<std::size_t>(Pattern::LateSender)], 20.0);
  ASSERT_EQ(a.delay.table.size(), 1u);  // `pre` lies before the interval; MPI_Finalize is free
  EXPECT_DOUBLE_EQ(cost(a, DelayKind::LateSender, "main/work", 1).short_term, 20.0);
  EXPECT_EQ(a.delay.sync_points, 1u);
  EXPECT_DOUBLE_EQ(a.delay.sync_waiting, 20.0);
  EXPECT_EQ(a.delay.unattributed, 0.0);
  expect_invariants(a);
}

TEST(Delay, WaitWithoutCauseInsideTheTraceIsUnattributed) {
  // Both ranks do the same work; the receive waits only for the message's latency.
  TraceBuilder b(2, 1.0);
  for (Rank r : {0, 1}) b.enter(r, 0, "main").enter(r, 0, "work").leave(r, 4, "work");
  b.send(0, 5, 5, 1).recv(1, 4, 6, 6, 0);
  const auto a = analyse(b);
  ASSERT_EQ(a.waits.instances.size(), 1u);
  // Rank 0 spent 1 s more in main before sending: that is the cause, all short-term.
  EXPECT_DOUBLE_EQ(cost(a, DelayKind::LateSender, "main", 0).short_term, 1.0);
  expect_invariants(a);

  TraceBuilder c(2, 1.0);
  c.recv(1, 0, 3, 3, 0).send(0, 2, 2, 1);  // rank 0 does nothing visible before sending at 2
  const auto u = analyse(c);
  EXPECT_DOUBLE_EQ(u.delay.unattributed, 2.0);
  EXPECT_TRUE(u.delay.table.empty());
  expect_invariants(u);
}

}  // namespace
}  // namespace waitlab::analysis::test
