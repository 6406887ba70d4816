// A measured-looking trace of 4 ranks in a 2×2 grid with row and column communicators, and
// what its replay must give (tests of sub-communicator replay: tests/analysis/
// test_replay_comms.cpp, tests/app/test_replay_comms.cpp). tests/data/grid2x2_comms.prv is the
// same trace as Extrae would write it.
//
// Ranks 0, 1 form row 0, ranks 2, 3 row 1; columns {0, 2} and {1, 3}. Times in µs:
//   MPI_Init 0–10 on every rank;
//   MPI_Allreduce (8 B) on its row: row 0 enters at 1010 (its compute is 900 µs longer),
//     row 1 at 110; recorded ends 1020 and 120 (row 1 does not wait for row 0);
//   50 µs of compute, MPI_Allreduce (8 B) on its column: row 0 enters at 1070, row 1 at 170,
//     all leave at 1080 (row 1 waits 900 µs for row 0);
//   20 µs of compute, MPI_Bcast (8 B) on its column from the row-1 rank (world rank 2 resp. 3,
//     rank 1 of the column), 1100–1110;
//   30 µs of compute, MPI_Finalize 1140–1150.
// All compute in region "main".
#pragma once

#include <string>

#include "analysis/trace/trace.hpp"
#include "tests/sim/sim_util.hpp"

namespace waitlab::test::grid {

using trace::EventKind;
using trace::MpiOp;
using trace::Rank;

inline constexpr trace::CommId kRow0 = 1, kRow1 = 2, kCol0 = 3, kCol1 = 4;
inline trace::CommId row_of(Rank r) {
  return r < 2 ? kRow0 : kRow1;
}
inline trace::CommId column_of(Rank r) {
  return r % 2 == 0 ? kCol0 : kCol1;
}

inline trace::Trace row_column_trace() {
  trace::Trace t;
  t.origin = trace::Origin::ScoreP;
  t.defs.comms = {{"MPI_COMM_WORLD", {0, 1, 2, 3}},
                  {"row 0", {0, 1}},
                  {"row 1", {2, 3}},
                  {"column 0", {0, 2}},
                  {"column 1", {1, 3}}};
  const auto main = t.defs.region("main");
  t.locations.resize(4);
  const auto us = [](double v) { return v * 1e-6; };
  for (Rank r = 0; r < 4; ++r) {
    auto& loc = t.locations[static_cast<std::size_t>(r)];
    loc.rank = r;
    auto& ev = loc.events;
    const auto call = [&](MpiOp op, double enter, double leave) {
      ev.push_back(trace::make_event(us(enter), EventKind::Enter, MpiOp::None, t.defs.mpi_region(op)));
      ev.push_back(trace::make_event(us(leave), EventKind::Leave, MpiOp::None, t.defs.mpi_region(op)));
    };
    const auto coll = [&](MpiOp op, double enter, double leave, trace::CommId comm, Rank root,
                          std::uint64_t sent, std::uint64_t got) {
      ev.push_back(trace::make_event(us(enter), EventKind::Enter, MpiOp::None, t.defs.mpi_region(op)));
      ev.push_back(trace::make_event(us(enter), EventKind::CollBegin, op, comm));
      ev.push_back(trace::make_event(us(leave), EventKind::CollEnd, op, comm, root, 0, sent, got));
      ev.push_back(trace::make_event(us(leave), EventKind::Leave, MpiOp::None, t.defs.mpi_region(op)));
    };
    const bool late = r < 2;  // row 0 computes 900 µs longer
    ev.push_back(trace::make_event(0, EventKind::Enter, MpiOp::None, main));
    call(MpiOp::Init, 0, 10);
    // Bytes as Score-P counts them (models/trace_to_workload.cpp scorep_payload): an allreduce of 8 B on
    // 2 ranks sends and receives 2 × 8; a bcast's root sends 2 × 8 and receives 8.
    coll(MpiOp::Allreduce, late ? 1010 : 110, late ? 1020 : 120, row_of(r), trace::kNoRank, 16, 16);
    coll(MpiOp::Allreduce, late ? 1070 : 170, 1080, column_of(r), trace::kNoRank, 16, 16);
    const Rank root = r % 2 == 0 ? 2 : 3;  // the column's rank 1
    coll(MpiOp::Bcast, 1100, 1110, column_of(r), root, r == root ? 16 : 0, 8);
    call(MpiOp::Finalize, 1140, 1150);
    ev.push_back(trace::make_event(us(1150), EventKind::Leave, MpiOp::None, main));
  }
  return t;
}

// The replay on a flat cluster of 4 single-core nodes, 1 GB/s and 1 µs links (2 µs from node
// to node), with the `fast` collectives, under Waitlab semantics (messages inside collectives
// are rendezvous): one 8-byte message between two ranks that are both ready takes T; the
// allreduce of two ranks (redbcast: reduce then bcast) 2T, the bcast of two ranks T. The
// replay starts at MPI_Init's end (10 µs): every time is 10 µs earlier than in the trace.
inline double hop() {
  return sim::test::smpi_transfer_time(8, 2e-6, 1e9);
}
struct Expected {
  double row_allreduce_end[2];  // row 0, row 1
  double column_allreduce_end;  // every rank
  double bcast_end;             // every rank
  double finalize_enter;        // every rank: the run's end
};
inline Expected expected() {
  const double T = hop();
  Expected e{};
  e.row_allreduce_end[0] = 1000e-6 + 2 * T;
  e.row_allreduce_end[1] = 100e-6 + 2 * T;  // on MPI_COMM_WORLD it would wait for row 0
  // Row 0 enters the column allreduce at 1050 µs + 2T, row 1 at 150 µs + 2T: each column's
  // row-1 rank waits 900 µs (Wait at NxN), the rows none.
  e.column_allreduce_end = 1050e-6 + 4 * T;
  e.bcast_end = 1070e-6 + 5 * T;
  e.finalize_enter = 1100e-6 + 5 * T;
  return e;
}
inline constexpr double kColumnWait = 900e-6;  // Wait at NxN of ranks 2 and 3 on their columns

}  // namespace waitlab::test::grid
