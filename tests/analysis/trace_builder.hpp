// Hand-built traces for the analysis tests: each rank's events are appended in time order;
// times are given in the unit passed to the builder (µs for the fixtures) and stored in s.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/trace/match.hpp"
#include "analysis/trace/trace.hpp"

namespace waitlab::analysis::test {

using trace::EventKind;
using trace::MpiOp;
using trace::Rank;

class TraceBuilder {
 public:
  TraceBuilder(int ranks, double unit) : unit_(unit) {
    trace::Communicator world{"MPI_COMM_WORLD", {}};
    for (Rank r = 0; r < ranks; ++r) world.members.push_back(r);
    t_.defs.comms.push_back(world);
    t_.locations.resize(static_cast<std::size_t>(ranks));
    for (Rank r = 0; r < ranks; ++r) t_.locations[static_cast<std::size_t>(r)].rank = r;
  }

  TraceBuilder& enter(Rank r, double t, const std::string& region) {
    return ev(r, trace::make_event(s(t), EventKind::Enter, MpiOp::None, t_.defs.region(region)));
  }
  TraceBuilder& leave(Rank r, double t, const std::string& region) {
    return ev(r, trace::make_event(s(t), EventKind::Leave, MpiOp::None, t_.defs.region(region)));
  }
  // An MPI call with no communication events (MPI_Init, MPI_Finalize, MPI_Irecv's shell...).
  TraceBuilder& call(Rank r, MpiOp op, double enter, double leave) {
    mpi_enter(r, op, enter);
    return mpi_leave(r, op, leave);
  }
  TraceBuilder& send(Rank r, double enter, double leave, Rank dst, int tag = 0, MpiOp op = MpiOp::Send) {
    mpi_enter(r, op, enter);
    ev(r, trace::make_event(s(enter), EventKind::Send, MpiOp::None, trace::kCommWorld, dst, tag, 8));
    return mpi_leave(r, op, leave);
  }
  TraceBuilder& recv(Rank r, double enter, double at, double leave, Rank src, int tag = 0) {
    mpi_enter(r, MpiOp::Recv, enter);
    ev(r, trace::make_event(s(at), EventKind::Recv, MpiOp::None, trace::kCommWorld, src, tag, 8));
    return mpi_leave(r, MpiOp::Recv, leave);
  }
  TraceBuilder& isend(Rank r, double enter, double leave, Rank dst, int tag, std::uint64_t request) {
    mpi_enter(r, MpiOp::Isend, enter);
    ev(r, trace::make_event(s(enter), EventKind::IsendStart, MpiOp::None, trace::kCommWorld, dst, tag, 8, request));
    return mpi_leave(r, MpiOp::Isend, leave);
  }
  TraceBuilder& irecv(Rank r, double enter, double leave, Rank src, int tag, std::uint64_t request) {
    mpi_enter(r, MpiOp::Irecv, enter);
    ev(r, trace::make_event(s(enter), EventKind::IrecvPost, MpiOp::None, trace::kCommWorld, src, tag, 8, request));
    return mpi_leave(r, MpiOp::Irecv, leave);
  }
  struct Completion {
    bool send;
    std::uint64_t request;
    Rank peer;  // receives: the source
    int tag;
  };
  // MPI_Wait (one completion) or MPI_Waitall, or the call `op`; completions are recorded at `at`.
  TraceBuilder& wait(Rank r, double enter, double at, double leave, const std::vector<Completion>& done,
                     MpiOp op = MpiOp::None) {
    if (op == MpiOp::None) op = done.size() == 1 ? MpiOp::Wait : MpiOp::Waitall;
    mpi_enter(r, op, enter);
    for (const auto& c : done)
      ev(r, c.send ? trace::make_event(s(at), EventKind::IsendComplete, MpiOp::None, 0, trace::kNoRank, 0, 0, c.request)
                   : trace::make_event(s(at), EventKind::IrecvComplete, MpiOp::None, trace::kCommWorld, c.peer,
                                       c.tag, 8, c.request));
    return mpi_leave(r, op, leave);
  }
  // A collective: Enter and CollBegin at `begin`, CollEnd and Leave at `end`.
  TraceBuilder& coll(Rank r, MpiOp op, double begin, double end, Rank root = trace::kNoRank) {
    mpi_enter(r, op, begin);
    ev(r, trace::make_event(s(begin), EventKind::CollBegin, op, trace::kCommWorld));
    ev(r, trace::make_event(s(end), EventKind::CollEnd, op, trace::kCommWorld, root, 0, 8, 8));
    return mpi_leave(r, op, end);
  }

  const trace::Trace& trace() const { return t_; }
  double s(double t) const { return t * unit_; }

 private:
  TraceBuilder& ev(Rank r, const trace::Event& e) {
    auto& evs = t_.locations.at(static_cast<std::size_t>(r)).events;
    if (!evs.empty()) {
      EXPECT_LE(evs.back().time, e.time) << "events of rank " << r << " out of order";
    }
    evs.push_back(e);
    return *this;
  }
  TraceBuilder& mpi_enter(Rank r, MpiOp op, double t) {
    return ev(r, trace::make_event(s(t), EventKind::Enter, MpiOp::None, t_.defs.mpi_region(op)));
  }
  TraceBuilder& mpi_leave(Rank r, MpiOp op, double t) {
    return ev(r, trace::make_event(s(t), EventKind::Leave, MpiOp::None, t_.defs.mpi_region(op)));
  }

  double unit_;
  trace::Trace t_;
};

// Fixture A: 2 ranks, µs, every region under main, MPI_Init 10–100 on both.
inline TraceBuilder fixture_a() {
  TraceBuilder b(2, 1e-6);
  for (Rank r : {0, 1}) b.enter(r, 0, "main").call(r, MpiOp::Init, 10, 100);
  // 1: Late Sender
  b.send(0, 2000, 2010, 1).recv(1, 1000, 2020, 2020, 0);
  // 2: barrier
  b.coll(0, MpiOp::Barrier, 3000, 3600).coll(1, MpiOp::Barrier, 3500, 3600);
  // 3: allreduce
  b.coll(1, MpiOp::Allreduce, 4000, 4400).coll(0, MpiOp::Allreduce, 4300, 4400);
  // 4: broadcast from 0
  b.coll(1, MpiOp::Bcast, 4500, 4750, 0).coll(0, MpiOp::Bcast, 4700, 4750, 0);
  // 5: reduce to 0
  b.coll(0, MpiOp::Reduce, 4800, 5100, 0).coll(1, MpiOp::Reduce, 5050, 5100, 0);
  // 6: synchronous send, receiver late
  b.send(0, 5200, 5650, 1, 0, MpiOp::Ssend).recv(1, 5600, 5640, 5650, 0);
  // 7: Irecv + Wait, Isend late
  b.irecv(1, 6000, 6005, 0, 3, 1).wait(1, 6100, 6600, 6600, {{false, 1, 0, 3}});
  b.isend(0, 6500, 6505, 1, 3, 9).wait(0, 6510, 6520, 6520, {{true, 9, 1, 3}});
  // 8: finalize
  b.call(0, MpiOp::Finalize, 6800, 6950).call(1, MpiOp::Finalize, 6900, 6950);
  for (Rank r : {0, 1}) b.leave(r, 6950, "main");
  return b;
}

// Fixture B (µs): a 3-rank chain of late senders, then a barrier.
inline TraceBuilder fixture_b() {
  TraceBuilder b(3, 1e-6);
  for (Rank r : {0, 1, 2}) b.enter(r, 0, "main");
  b.send(0, 2000, 2010, 1).coll(0, MpiOp::Barrier, 3000, 3050);
  b.recv(1, 1000, 2020, 2020, 0).send(1, 2100, 2110, 2).coll(1, MpiOp::Barrier, 2500, 3050);
  b.recv(2, 1100, 2120, 2120, 1).coll(2, MpiOp::Barrier, 2600, 3050);
  for (Rank r : {0, 1, 2}) b.leave(r, 3050, "main");
  return b;
}

// Fixture C (paper 002, Fig. 3; time units): R3 on B waits 3 for A, R4 on C waits 2 for B.
inline TraceBuilder fixture_c() {
  TraceBuilder b(3, 1.0);
  const Rank A = 0, B = 1, C = 2;
  for (Rank r : {A, B, C}) b.enter(r, 0, "main");
  b.enter(A, 0, "f").leave(A, 2, "f").enter(A, 2, "g").leave(A, 5, "g").send(A, 5, 5, B);
  b.enter(B, 0, "f").leave(B, 1, "f").enter(B, 1, "h").leave(B, 2, "h").recv(B, 2, 6, 6, A).send(B, 6, 6, C);
  b.enter(C, 0, "f").leave(C, 1, "f").enter(C, 1, "h").leave(C, 2, "h").enter(C, 2, "g").leave(C, 4, "g");
  b.recv(C, 4, 6, 6.5, B);
  b.leave(A, 5, "main").leave(B, 6, "main").leave(C, 6.5, "main");
  return b;
}

}  // namespace waitlab::analysis::test
