// Clock-skew correction (analysis/trace/clock.hpp): the linear map recovers offset and
// drift exactly, the clamping (forward controlled logical clock) fixes what the linear map
// cannot, in happened-before order, and a consistent trace is left bit-identical.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/trace/clock.hpp"
#include "analysis/trace/trace.hpp"

namespace waitlab::trace {
namespace {

constexpr double kUs = 1e-6;
constexpr double kTol = 1e-12;

// Hand-built traces, times in µs (stored in s). Each rank's events are appended in order.
class Builder {
 public:
  explicit Builder(int ranks) {
    Communicator world{"MPI_COMM_WORLD", {}};
    for (Rank r = 0; r < ranks; ++r) world.members.push_back(r);
    t_.defs.comms.push_back(world);
    t_.locations.resize(static_cast<std::size_t>(ranks));
    for (Rank r = 0; r < ranks; ++r) t_.locations[static_cast<std::size_t>(r)].rank = r;
  }
  Builder& enter(Rank r, double t, const std::string& region) {
    return ev(r, make_event(t * kUs, EventKind::Enter, MpiOp::None, t_.defs.region(region)));
  }
  Builder& leave(Rank r, double t, const std::string& region) {
    return ev(r, make_event(t * kUs, EventKind::Leave, MpiOp::None, t_.defs.region(region)));
  }
  Builder& call(Rank r, MpiOp op, double enter, double leave) {
    return mpi(r, op, enter).mpi_leave(r, op, leave);
  }
  Builder& send(Rank r, double enter, double leave, Rank dst, int tag = 0) {
    mpi(r, MpiOp::Send, enter)
        .ev(r, make_event(enter * kUs, EventKind::Send, MpiOp::None, kCommWorld, dst, tag, 8));
    return mpi_leave(r, MpiOp::Send, leave);
  }
  Builder& recv(Rank r, double enter, double at, double leave, Rank src, int tag = 0) {
    mpi(r, MpiOp::Recv, enter)
        .ev(r, make_event(at * kUs, EventKind::Recv, MpiOp::None, kCommWorld, src, tag, 8));
    return mpi_leave(r, MpiOp::Recv, leave);
  }
  Builder& isend(Rank r, double enter, double leave, Rank dst, int tag, std::uint64_t req) {
    mpi(r, MpiOp::Isend, enter)
        .ev(r, make_event(enter * kUs, EventKind::IsendStart, MpiOp::None, kCommWorld, dst, tag, 8, req));
    return mpi_leave(r, MpiOp::Isend, leave);
  }
  Builder& irecv(Rank r, double enter, double leave, Rank src, int tag, std::uint64_t req) {
    mpi(r, MpiOp::Irecv, enter)
        .ev(r, make_event(enter * kUs, EventKind::IrecvPost, MpiOp::None, kCommWorld, src, tag, 8, req));
    return mpi_leave(r, MpiOp::Irecv, leave);
  }
  struct Done {
    bool send;
    std::uint64_t req;
    Rank peer;
    int tag;
  };
  Builder& waitall(Rank r, double enter, double at, double leave, const std::vector<Done>& done) {
    mpi(r, MpiOp::Waitall, enter);
    for (const Done& d : done)
      ev(r, d.send ? make_event(at * kUs, EventKind::IsendComplete, MpiOp::None, 0, kNoRank, 0, 0, d.req)
                   : make_event(at * kUs, EventKind::IrecvComplete, MpiOp::None, kCommWorld, d.peer, d.tag, 8,
                                d.req));
    return mpi_leave(r, MpiOp::Waitall, leave);
  }
  Builder& coll(Rank r, MpiOp op, double begin, double end, Rank root = kNoRank) {
    mpi(r, op, begin).ev(r, make_event(begin * kUs, EventKind::CollBegin, op, kCommWorld));
    ev(r, make_event(end * kUs, EventKind::CollEnd, op, kCommWorld, root, 0, 8, 8));
    return mpi_leave(r, op, end);
  }
  Builder& truth(Rank r, double start, double end) {
    ComputeTruth ct;
    ct.start = start * kUs;
    ct.end = end * kUs;
    ct.nominal = ct.end - ct.start;
    t_.locations[static_cast<std::size_t>(r)].truth.push_back(ct);
    t_.has_truth = true;
    return *this;
  }
  const Trace& trace() const { return t_; }

 private:
  Builder& ev(Rank r, const Event& e) {
    t_.locations.at(static_cast<std::size_t>(r)).events.push_back(e);
    return *this;
  }
  Builder& mpi(Rank r, MpiOp op, double t) {
    return ev(r, make_event(t * kUs, EventKind::Enter, MpiOp::None, t_.defs.mpi_region(op)));
  }
  Builder& mpi_leave(Rank r, MpiOp op, double t) {
    return ev(r, make_event(t * kUs, EventKind::Leave, MpiOp::None, t_.defs.mpi_region(op)));
  }
  Trace t_;
};

// A consistent 2-rank trace in true time: messages both ways, blocking and not, every kind
// of collective, ground truth, MPI_Init and MPI_Finalize ending together.
Trace consistent_pair() {
  Builder b(2);
  for (Rank r : {0, 1}) b.enter(r, 0, "main").call(r, MpiOp::Init, 10, 100);
  b.truth(0, 100, 2000).truth(1, 100, 1000);
  b.send(0, 2000, 2010, 1).recv(1, 1000, 2020, 2020, 0);        // late sender, 20 µs latency
  b.send(1, 2100, 2105, 0, 4).recv(0, 2050, 2101, 2101, 1, 4);  // 1 µs after the send
  b.coll(0, MpiOp::Barrier, 3000, 3600).coll(1, MpiOp::Barrier, 3500, 3600);
  b.coll(1, MpiOp::Allreduce, 4000, 4400).coll(0, MpiOp::Allreduce, 4300, 4400);
  b.coll(1, MpiOp::Bcast, 4500, 4750, 0).coll(0, MpiOp::Bcast, 4700, 4750, 0);
  b.coll(0, MpiOp::Reduce, 4800, 5100, 0).coll(1, MpiOp::Reduce, 5050, 5100, 0);
  b.irecv(1, 6000, 6005, 0, 3, 1).waitall(1, 6100, 6600, 6600, {{false, 1, 0, 3}});
  b.isend(0, 6500, 6505, 1, 3, 9).waitall(0, 6510, 6520, 6520, {{true, 9, 1, 3}});
  b.truth(0, 6520, 6800).truth(1, 6600, 6900);
  b.call(0, MpiOp::Finalize, 6800, 6950).call(1, MpiOp::Finalize, 6900, 6950);
  for (Rank r : {0, 1}) b.leave(r, 6950, "main");
  return b.trace();
}

// Rank r's clock reads a + b·t at true time t.
Trace skewed(Trace t, Rank r, double a, double b) {
  for (Event& e : t.locations[static_cast<std::size_t>(r)].events) e.time = a + b * e.time;
  for (ComputeTruth& ct : t.locations[static_cast<std::size_t>(r)].truth) {
    ct.start = a + b * ct.start;
    ct.end = a + b * ct.end;
  }
  return t;
}

void expect_times_near(const Trace& got, const Trace& want) {
  ASSERT_EQ(got.ranks(), want.ranks());
  for (std::size_t r = 0; r < got.ranks(); ++r) {
    const auto& g = got.locations[r];
    const auto& w = want.locations[r];
    ASSERT_EQ(g.events.size(), w.events.size());
    for (std::size_t i = 0; i < g.events.size(); ++i)
      EXPECT_NEAR(g.events[i].time, w.events[i].time, kTol) << "rank " << r << " event " << i;
    ASSERT_EQ(g.truth.size(), w.truth.size());
    for (std::size_t i = 0; i < g.truth.size(); ++i) {
      EXPECT_NEAR(g.truth[i].start, w.truth[i].start, kTol) << "rank " << r << " truth " << i;
      EXPECT_NEAR(g.truth[i].end, w.truth[i].end, kTol) << "rank " << r << " truth " << i;
    }
  }
}

std::size_t index_of(const Trace& t, Rank r, EventKind kind, std::size_t nth = 0) {
  const auto& ev = t.locations[static_cast<std::size_t>(r)].events;
  for (std::size_t i = 0; i < ev.size(); ++i)
    if (ev[i].kind == kind && nth-- == 0) return i;
  ADD_FAILURE() << "no such event";
  return 0;
}

// Every event of rank r before `from` keeps its time; from `from` on, all move by `shift`.
void expect_shifted_from(const Trace& got, const Trace& orig, Rank r, std::size_t from, double shift) {
  const auto& g = got.locations[static_cast<std::size_t>(r)].events;
  const auto& o = orig.locations[static_cast<std::size_t>(r)].events;
  ASSERT_EQ(g.size(), o.size());
  for (std::size_t i = 0; i < g.size(); ++i) {
    if (i < from) {
      EXPECT_EQ(g[i].time, o[i].time) << "rank " << r << " event " << i;
    } else {
      EXPECT_NEAR(g[i].time - o[i].time, shift, kTol) << "rank " << r << " event " << i;
    }
  }
}

TEST(ClockLinear, OffsetIsRecoveredExactly) {
  const Trace truth = consistent_pair();
  Trace t = skewed(truth, 1, 1e-3, 1.0);  // rank 1's clock runs 1 ms ahead
  const ClockReport rep = correct_clocks(t);
  EXPECT_GT(rep.violations_before, 0u);
  EXPECT_EQ(rep.violations_after_linear, 0u);
  EXPECT_EQ(rep.violations_after, 0u);
  EXPECT_EQ(rep.ranks_linear, 1u);
  EXPECT_EQ(rep.events_moved, 0u);
  EXPECT_NEAR(rep.max_offset, 1e-3, kTol);
  EXPECT_NEAR(rep.max_drift, 0.0, 1e-9);
  EXPECT_EQ(rep.max_shift, 0.0);
  EXPECT_EQ(rep.method, "linear");
  expect_times_near(t, truth);
  EXPECT_EQ(t.locations[0], truth.locations[0]);  // the reference is never touched
}

TEST(ClockLinear, DriftIsRecoveredExactly) {
  const Trace truth = consistent_pair();
  Trace t = skewed(truth, 1, 1e-3, 1.0 + 1e-4);
  const ClockReport rep = correct_clocks(t);
  EXPECT_GT(rep.violations_before, 0u);
  EXPECT_EQ(rep.violations_after, 0u);
  EXPECT_EQ(rep.ranks_linear, 1u);
  EXPECT_NEAR(rep.max_offset, 1e-3 + 100 * kUs * 1e-4, kTol);  // at MPI_Init's Leave
  EXPECT_NEAR(rep.max_drift, 1e-4, 1e-9);
  EXPECT_EQ(rep.method, "linear");
  expect_times_near(t, truth);
}

TEST(ClockLinear, ExplicitLinearModeNeverClamps) {
  const Trace truth = consistent_pair();
  Trace t = skewed(truth, 1, -2e-3, 1.0 - 5e-5);
  ClockOptions opt;
  opt.mode = ClockOptions::Mode::Linear;
  const ClockReport rep = correct_clocks(t, opt);
  EXPECT_GT(rep.violations_before, 0u);
  EXPECT_EQ(rep.violations_after_linear, 0u);
  EXPECT_EQ(rep.violations_after, 0u);
  EXPECT_NEAR(rep.max_offset, 2e-3 + 100 * kUs * 5e-5, kTol);
  EXPECT_NEAR(rep.max_drift, 5e-5, 1e-9);
  EXPECT_EQ(rep.method, "linear");
  expect_times_near(t, truth);
}

TEST(ClockLinear, OnlyInitGivesAnOffset) {
  Builder b(2);
  for (Rank r : {0, 1}) b.call(r, MpiOp::Init, 10, 100);
  b.send(0, 200, 205, 1).recv(1, 150, 201, 201, 0);
  b.send(1, 300, 305, 0).recv(0, 250, 301, 301, 1);
  const Trace truth = b.trace();
  Trace t = skewed(truth, 1, 5e-4, 1.0);
  const ClockReport rep = correct_clocks(t);
  EXPECT_GT(rep.violations_before, 0u);
  EXPECT_EQ(rep.violations_after, 0u);
  EXPECT_EQ(rep.ranks_linear, 1u);
  EXPECT_NEAR(rep.max_offset, 5e-4, kTol);
  EXPECT_EQ(rep.max_drift, 0.0);
  expect_times_near(t, truth);
}

TEST(ClockClamp, ReceiveBeforeItsSendMovesForwardByTheNeededAmount) {
  Builder b(2);
  for (Rank r : {0, 1}) b.enter(r, 0, "main").call(r, MpiOp::Init, 10, 100);
  b.send(0, 2000, 2010, 1).recv(1, 1000, 1998, 1999, 0);  // received 2 µs before it was sent
  b.truth(1, 1999, 2500);
  b.enter(1, 1999, "work").leave(1, 2500, "work");
  b.call(0, MpiOp::Finalize, 6800, 6950).call(1, MpiOp::Finalize, 6900, 6950);
  for (Rank r : {0, 1}) b.leave(r, 6950, "main");
  const Trace orig = b.trace();

  for (const auto mode : {ClockOptions::Mode::Clamp, ClockOptions::Mode::Auto}) {
    Trace t = orig;
    ClockOptions opt;
    opt.mode = mode;
    opt.min_latency = 0.5 * kUs;
    const ClockReport rep = correct_clocks(t, opt);
    EXPECT_EQ(rep.violations_before, 1u);
    EXPECT_EQ(rep.violations_after_linear, 1u);  // consistent Init/Finalize: linear is the identity
    EXPECT_EQ(rep.violations_after, 0u);
    EXPECT_EQ(rep.ranks_linear, 0u);
    const std::size_t recv = index_of(orig, 1, EventKind::Recv);
    const double shift = 2000 * kUs + 0.5 * kUs - 1998 * kUs;
    EXPECT_EQ(t.locations[1].events[recv].time, 2000 * kUs + 0.5 * kUs);  // exactly send + l_min
    expect_shifted_from(t, orig, 1, recv, shift);
    EXPECT_EQ(t.locations[0], orig.locations[0]);
    EXPECT_EQ(rep.events_moved, orig.locations[1].events.size() - recv);
    EXPECT_NEAR(rep.max_shift, 2.5 * kUs, kTol);
    EXPECT_EQ(rep.constraints_dropped, 0u);
    EXPECT_EQ(rep.method, mode == ClockOptions::Mode::Clamp ? "clamp" : "linear+clamp");
    // The compute interval after the receive moves with it, its duration kept.
    EXPECT_NEAR(t.locations[1].truth[0].start - 1999 * kUs, shift, kTol);
    EXPECT_NEAR(t.locations[1].truth[0].end - 2500 * kUs, shift, kTol);
  }
}

TEST(ClockClamp, AChainIsFixedTransitivelyInHappenedBeforeOrder) {
  // 2 → 1 → 0: rank 1 receives 2 µs early; its later send then makes rank 0's receive,
  // consistent as measured, precede it. Rank 0 is visited first and must wait.
  Builder b(3);
  for (Rank r : {0, 1, 2}) b.call(r, MpiOp::Init, 10, 100);
  b.send(2, 2000, 2001, 1).recv(1, 1500, 1998, 1998, 2);
  b.send(1, 2010, 2011, 0).recv(0, 1500, 2011, 2011, 1);    // 1 µs after the send as measured
  b.send(0, 2100, 2101, 2).recv(2, 2050, 2100.5, 2102, 0);  // 0.5 µs after the send as measured
  const Trace orig = b.trace();
  Trace t = orig;
  ClockOptions opt;
  opt.mode = ClockOptions::Mode::Clamp;
  const ClockReport rep = correct_clocks(t, opt);
  EXPECT_EQ(rep.violations_before, 1u);
  EXPECT_EQ(rep.violations_after, 0u);
  const std::size_t r1 = index_of(orig, 1, EventKind::Recv);
  const std::size_t r0 = index_of(orig, 0, EventKind::Recv);
  expect_shifted_from(t, orig, 1, r1, 2 * kUs);  // to its send at 2000
  expect_shifted_from(t, orig, 0, r0, 1 * kUs);  // to rank 1's send, now at 2012
  EXPECT_EQ(t.locations[0].events[r0].time, t.locations[1].events[index_of(orig, 1, EventKind::Send)].time);
  // Rank 0's send moved to 2100 + 1 = 2101 > 2100.5: rank 2's receive follows it too.
  const std::size_t r2 = index_of(orig, 2, EventKind::Recv);
  EXPECT_EQ(t.locations[2].events[r2].time, t.locations[0].events[index_of(orig, 0, EventKind::Send)].time);
  expect_shifted_from(t, orig, 2, r2, 0.5 * kUs);
  EXPECT_EQ(rep.events_moved,
            5u + 5u + 2u);  // rank 1 from its Recv, rank 0 from its Recv, rank 2's Recv and Leave
  EXPECT_NEAR(rep.max_shift, 2 * kUs, kTol);
}

TEST(ClockClamp, AllreduceEndBeforeAnotherMembersBeginIsFixed) {
  Builder b(3);
  for (Rank r : {0, 1, 2}) b.call(r, MpiOp::Init, 10, 100);
  b.coll(0, MpiOp::Allreduce, 3000, 3100)
      .coll(1, MpiOp::Allreduce, 3105, 3200)
      .coll(2, MpiOp::Allreduce, 2000, 3150);
  for (Rank r : {0, 1, 2}) b.enter(r, 3300, "after").leave(r, 3400, "after");
  const Trace orig = b.trace();
  Trace t = orig;
  ClockOptions opt;
  opt.mode = ClockOptions::Mode::Clamp;
  opt.min_latency = 1 * kUs;
  const ClockReport rep = correct_clocks(t, opt);
  EXPECT_EQ(rep.violations_before, 1u);  // rank 0 ends at 3100 before rank 1 begins at 3105 (+1)
  EXPECT_EQ(rep.violations_after, 0u);
  const std::size_t end0 = index_of(orig, 0, EventKind::CollEnd);
  EXPECT_EQ(t.locations[0].events[end0].time, 3105 * kUs + 1 * kUs);
  expect_shifted_from(t, orig, 0, end0, 6 * kUs);
  EXPECT_EQ(t.locations[1], orig.locations[1]);  // bound max(3000, 2000) + 1

  EXPECT_EQ(t.locations[2], orig.locations[2]);
  EXPECT_EQ(rep.events_moved, 4u);  // CollEnd, Leave, Enter(after), Leave(after)
}

TEST(ClockClamp, RootedCollectivesFollowTheirRoot) {
  Builder b(3);
  for (Rank r : {0, 1, 2}) b.call(r, MpiOp::Init, 10, 100);
  // Bcast from 1: rank 2 ends before the root began; rank 0 is fine; the root has no bound.
  b.coll(0, MpiOp::Bcast, 1000, 1300, 1)
      .coll(1, MpiOp::Bcast, 1200, 1210, 1)
      .coll(2, MpiOp::Bcast, 1000, 1150, 1);
  // Reduce to 0: the root ends before rank 2 began; non-roots have no bound.
  b.coll(0, MpiOp::Reduce, 2000, 2050, 0)
      .coll(1, MpiOp::Reduce, 2000, 2010, 0)
      .coll(2, MpiOp::Reduce, 2060, 2070, 0);
  const Trace orig = b.trace();
  Trace t = orig;
  ClockOptions opt;
  opt.mode = ClockOptions::Mode::Clamp;
  const ClockReport rep = correct_clocks(t, opt);
  EXPECT_EQ(rep.violations_before, 2u);
  EXPECT_EQ(rep.violations_after, 0u);
  const std::size_t bcast_end2 = index_of(orig, 2, EventKind::CollEnd, 0);
  expect_shifted_from(t, orig, 2, bcast_end2, 50 * kUs);  // to the root's begin, 1200
  // Rank 2's Reduce now begins at 2110: the root's end (2050) moves to it.
  const std::size_t reduce_end0 = index_of(orig, 0, EventKind::CollEnd, 1);
  expect_shifted_from(t, orig, 0, reduce_end0, 60 * kUs);
  EXPECT_EQ(t.locations[1], orig.locations[1]);
}

TEST(ClockClamp, ScanFollowsTheLowerRanksOnly) {
  Builder b(3);
  for (Rank r : {0, 1, 2}) b.call(r, MpiOp::Init, 10, 100);
  // Rank 0 ends before rank 2 began (allowed for a scan); rank 1 ends before rank 0 began.
  b.coll(0, MpiOp::Scan, 1000, 1010).coll(1, MpiOp::Scan, 900, 950).coll(2, MpiOp::Scan, 2000, 2100);
  const Trace orig = b.trace();
  Trace t = orig;
  ClockOptions opt;
  opt.mode = ClockOptions::Mode::Clamp;
  const ClockReport rep = correct_clocks(t, opt);
  EXPECT_EQ(rep.violations_before, 1u);
  EXPECT_EQ(rep.violations_after, 0u);
  expect_shifted_from(t, orig, 1, index_of(orig, 1, EventKind::CollEnd), 50 * kUs);
  EXPECT_EQ(t.locations[0], orig.locations[0]);
  EXPECT_EQ(t.locations[2], orig.locations[2]);
}

TEST(ClockClamp, WaitallCompletionsPairWithTheirOwnMessages) {
  Builder b(2);
  for (Rank r : {0, 1}) b.call(r, MpiOp::Init, 10, 100);
  b.irecv(1, 200, 201, 0, 5, 1).irecv(1, 202, 203, 0, 3, 2);
  b.isend(0, 1000, 1001, 1, 5, 7).isend(0, 2000, 2001, 1, 3, 8);
  b.waitall(0, 2002, 2003, 2003, {{true, 7, 1, 5}, {true, 8, 1, 3}});
  // Both completions at 1500: tag 5 (sent at 1000) is fine, tag 3 (sent at 2000) is early.
  b.waitall(1, 1400, 1500, 1500, {{false, 1, 0, 5}, {false, 2, 0, 3}});
  const Trace orig = b.trace();
  Trace t = orig;
  ClockOptions opt;
  opt.mode = ClockOptions::Mode::Clamp;
  const ClockReport rep = correct_clocks(t, opt);
  EXPECT_EQ(rep.violations_before, 1u);
  EXPECT_EQ(rep.violations_after, 0u);
  const std::size_t tag3 = index_of(orig, 1, EventKind::IrecvComplete, 1);
  expect_shifted_from(t, orig, 1, tag3, 500 * kUs);
  EXPECT_EQ(rep.events_moved, 2u);  // the tag-3 completion and the Leave of MPI_Waitall
}

TEST(ClockAuto, AConsistentTraceIsLeftBitIdentical) {
  const Trace orig = consistent_pair();
  Trace t = orig;
  const ClockReport rep = correct_clocks(t);
  EXPECT_EQ(t, orig);
  EXPECT_EQ(rep.violations_before, 0u);
  EXPECT_EQ(rep.violations_after_linear, 0u);
  EXPECT_EQ(rep.violations_after, 0u);
  EXPECT_EQ(rep.ranks_linear, 0u);
  EXPECT_EQ(rep.events_moved, 0u);
  EXPECT_EQ(rep.max_offset, 0.0);
  EXPECT_EQ(rep.max_drift, 0.0);
  EXPECT_EQ(rep.max_shift, 0.0);
  EXPECT_EQ(rep.method, "none");
  // Clamping alone, or both, leave it bit-identical too (Init and Finalize end together).
  for (const auto mode :
       {ClockOptions::Mode::Clamp, ClockOptions::Mode::LinearAndClamp, ClockOptions::Mode::None}) {
    Trace u = orig;
    ClockOptions opt;
    opt.mode = mode;
    const ClockReport r2 = correct_clocks(u, opt);
    EXPECT_EQ(u, orig) << clock_mode_name(mode);
    EXPECT_EQ(r2.events_moved, 0u);
    EXPECT_EQ(r2.violations_after, 0u);
  }
}

TEST(ClockAuto, MPIFinalizeIsNoConstraint) {
  // SMPI records MPI_Finalize returning at once: rank 0 may leave it before rank 1 enters.
  // MPI does not require it to synchronise: no violation, so Auto changes nothing (a linear
  // correction from these Leave times would invent a drift).
  Builder b(2);
  for (Rank r : {0, 1}) b.call(r, MpiOp::Init, 0, 5);
  b.call(0, MpiOp::Finalize, 100, 101).call(1, MpiOp::Finalize, 300, 301);
  const Trace orig = b.trace();
  Trace t = orig;
  const ClockReport rep = correct_clocks(t);
  EXPECT_EQ(rep.violations_before, 0u);
  EXPECT_EQ(t, orig);
}

TEST(ClockAuto, NoneCountsOnly) {
  Trace t = skewed(consistent_pair(), 1, 1e-3, 1.0);
  const Trace orig = t;
  ClockOptions opt;
  opt.mode = ClockOptions::Mode::None;
  const ClockReport rep = correct_clocks(t, opt);
  EXPECT_GT(rep.violations_before, 0u);
  EXPECT_EQ(rep.violations_after, rep.violations_before);
  EXPECT_EQ(rep.method, "none");
  EXPECT_EQ(t, orig);
}

TEST(ClockAuto, WithoutInitAndFinalizeOnlyTheClampWorks) {
  Builder b(2);
  b.enter(0, 0, "main").enter(1, 0, "main");
  b.send(0, 2000, 2010, 1).recv(1, 1000, 1990, 1995, 0);
  b.coll(0, MpiOp::Barrier, 3000, 3010).coll(1, MpiOp::Barrier, 3020, 3030);  // 0 ends before 1 begins
  b.leave(0, 4000, "main").leave(1, 4000, "main");
  const Trace orig = b.trace();
  Trace t = orig;
  const ClockReport rep = correct_clocks(t);
  EXPECT_EQ(rep.violations_before, 2u);
  EXPECT_EQ(rep.violations_after_linear, 2u);
  EXPECT_EQ(rep.violations_after, 0u);
  EXPECT_EQ(rep.ranks_linear, 0u);
  EXPECT_EQ(rep.max_offset, 0.0);
  EXPECT_EQ(rep.method, "linear+clamp");
  // Rank 1 moves 10 µs at its receive; its barrier then begins at 3030: rank 0's end follows.
  expect_shifted_from(t, orig, 1, index_of(orig, 1, EventKind::Recv), 10 * kUs);
  expect_shifted_from(t, orig, 0, index_of(orig, 0, EventKind::CollEnd), 20 * kUs);
}

TEST(ClockClamp, ADependencyCycleIsBrokenNotHung) {
  // Corrupt matching: each rank receives before it sends, and each receive matches the
  // other's later send (a cycle in happened-before).
  Builder b(2);
  b.recv(0, 100, 110, 110, 1).send(0, 200, 210, 1);
  b.recv(1, 100, 110, 110, 0).send(1, 200, 210, 0);
  Trace t = b.trace();
  ClockOptions opt;
  opt.mode = ClockOptions::Mode::Clamp;
  const ClockReport rep = correct_clocks(t, opt);
  EXPECT_EQ(rep.violations_before, 2u);
  EXPECT_EQ(rep.constraints_dropped, 1u);  // rank 0's receive goes first, unbounded
  EXPECT_EQ(rep.violations_after, 1u);
  for (const auto& loc : t.locations)
    for (std::size_t i = 1; i < loc.events.size(); ++i) EXPECT_LE(loc.events[i - 1].time, loc.events[i].time);
}

TEST(ClockOptionsText, ModesRoundTrip) {
  using M = ClockOptions::Mode;
  for (M m : {M::Auto, M::None, M::Linear, M::Clamp, M::LinearAndClamp}) {
    M back = M::None;
    ASSERT_TRUE(parse_clock_mode(clock_mode_name(m), back)) << clock_mode_name(m);
    EXPECT_EQ(back, m);
  }
  M m = M::Auto;
  EXPECT_FALSE(parse_clock_mode("Linear", m));
  EXPECT_FALSE(parse_clock_mode("", m));
  EXPECT_EQ(m, M::Auto);
  EXPECT_STREQ(clock_mode_name(M::LinearAndClamp), "linear+clamp");
}

}  // namespace
}  // namespace waitlab::trace
