// A random trace for the engine's tests: nested user regions, point-to-point and collective calls
// (on the world and on a communicator of the even ranks in reverse order), computation between
// them, regions and MPI calls left open — everything the serial matcher and analyses meet, from a seed.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "analysis/trace/trace.hpp"

namespace waitlab::engine {

using trace::EventKind;
using trace::make_event;
using trace::MpiOp;

// One MPI call of `op` at time t: its Enter, the events inside, its Leave.
inline void mpi_call(trace::Trace& tr, trace::Location& loc, double& t, MpiOp op, const std::vector<trace::Event>& inside) {
  const trace::RegionId region = tr.defs.mpi_region(op);
  loc.events.push_back(make_event(t += 1, EventKind::Enter, MpiOp::None, region));
  for (trace::Event e : inside) {
    e.time = t += 1;
    loc.events.push_back(e);
  }
  loc.events.push_back(make_event(t += 1, EventKind::Leave, MpiOp::None, region));
}

// A trace of `locations` ranks from `seed`. One schedule of steps for all ranks (so collectives
// and ring messages mostly match and wait), each rank with its own jitter, regions and mistakes:
// a rank meets the regions in its own order (so the call-path ids depend on location order), now
// and then calls another collective than the others (the instance disagrees), sends to a random
// peer or to no location, and may end inside an MPI call or a region.
inline trace::Trace random_trace(trace::Rank locations, std::uint64_t seed) {
  std::mt19937_64 schedule(seed);
  const auto step_of = [&](int n) { return static_cast<int>(schedule() % static_cast<std::uint64_t>(n)); };
  trace::Trace tr;
  std::vector<trace::Rank> world;
  for (trace::Rank r = 0; r < locations; ++r) world.push_back(r);
  std::vector<trace::Rank> evens_reversed;  // a communicator whose order is not the ranks'
  for (trace::Rank r = (locations - 1) / 2 * 2; r >= 0; r -= 2) evens_reversed.push_back(r);
  tr.defs.comms = {{"MPI_COMM_WORLD", world}, {"evens", evens_reversed}};
  const std::vector<trace::RegionId> user = {tr.defs.region("main"), tr.defs.region("solve"),
                                             tr.defs.region("halo"), tr.defs.region("pack")};
  const bool init = step_of(4) != 0, finalize = step_of(4) != 0;
  std::vector<int> steps(static_cast<std::size_t>(10 + step_of(30)));
  for (int& k : steps) k = step_of(12);
  std::vector<trace::Rank> roots;
  for (std::size_t k = 0; k < steps.size(); ++k) roots.push_back(static_cast<trace::Rank>(step_of(static_cast<int>(locations))));
  for (trace::Rank r = 0; r < locations; ++r) {
    std::mt19937_64 rng(seed * 7919 + static_cast<std::uint64_t>(r));
    const auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<std::uint64_t>(n)); };
    trace::Location loc;
    loc.rank = r;
    double t = pick(3);
    std::vector<trace::RegionId> open;
    const trace::Rank next = (r + 1) % locations, prev = (r + locations - 1) % locations;
    if (init || pick(4) == 0) mpi_call(tr, loc, t, MpiOp::Init, {});
    for (std::size_t step = 0; step < steps.size(); ++step) {
      t += pick(6);  // computation: ranks drift apart, so partners wait
      if (pick(3) == 0 && open.size() < 4) {
        open.push_back(user[static_cast<std::size_t>(pick(4))]);
        loc.events.push_back(make_event(t += 1, EventKind::Enter, MpiOp::None, open.back()));
      }
      const int tag = pick(8) == 0 ? 1 : 0;
      switch (steps[step]) {
        case 0:  // a ring of blocking messages (on one rank, to itself)
          mpi_call(tr, loc, t, MpiOp::Send, {make_event(0, EventKind::Send, MpiOp::None, 0, next, tag, 8)});
          mpi_call(tr, loc, t, MpiOp::Recv, {make_event(0, EventKind::Recv, MpiOp::None, 0, prev, tag, 8)});
          break;
        case 1: {  // a ring of nonblocking messages, completed by two waits
          const auto request = static_cast<std::uint64_t>(step) * 2 + 1;
          mpi_call(tr, loc, t, MpiOp::Irecv,
                   {make_event(0, EventKind::IrecvPost, MpiOp::None, 0, next, 0, 0, request + 1)});
          mpi_call(tr, loc, t, MpiOp::Isend,
                   {make_event(0, EventKind::IsendStart, MpiOp::None, 0, prev, 0, 8, request)});
          t += pick(4);
          mpi_call(tr, loc, t, MpiOp::Wait,
                   {make_event(0, EventKind::IrecvComplete, MpiOp::None, 0, next, 0, 8, request + 1)});
          if (pick(5) != 0)  // else never completed
            mpi_call(tr, loc, t, MpiOp::Wait,
                     {make_event(0, EventKind::IsendComplete, MpiOp::None, 0, trace::kNoRank, 0, 0, request)});
          break;
        }
        case 2: {  // to a random peer, or to no location (L)
          const auto peer = static_cast<trace::Rank>(pick(static_cast<int>(locations) + 1));
          if (pick(2) == 0)
            mpi_call(tr, loc, t, MpiOp::Send, {make_event(0, EventKind::Send, MpiOp::None, 0, peer, tag, 8)});
          else
            mpi_call(tr, loc, t, MpiOp::Recv, {make_event(0, EventKind::Recv, MpiOp::None, 0, peer, tag, 8)});
          break;
        }
        default: {
          const int kind = steps[step];
          MpiOp op = kind < 6   ? MpiOp::Allreduce
                     : kind < 8 ? MpiOp::Bcast
                     : kind < 9 ? MpiOp::Reduce
                     : kind < 10 ? MpiOp::Scan
                                 : MpiOp::Barrier;
          if (pick(25) == 0) op = op == MpiOp::Allreduce ? MpiOp::Barrier : MpiOp::Allreduce;  // disagrees
          const bool evens = kind == 11;
          if (evens && r % 2 != 0) break;
          const trace::CommId comm = evens ? 1 : 0;
          const bool rooted = op == MpiOp::Bcast || op == MpiOp::Reduce;
          trace::Rank root = rooted ? roots[step] : trace::kNoRank;
          if (rooted && pick(30) == 0) root = (root + 1) % locations;  // names another root
          mpi_call(tr, loc, t, op,
                   {make_event(0, EventKind::CollBegin, op, comm),
                    make_event(0, EventKind::CollEnd, op, comm, root, 0, 8, 8)});
        }
      }
      if (pick(3) == 0 && !open.empty()) {
        loc.events.push_back(make_event(t += 1, EventKind::Leave, MpiOp::None, open.back()));
        open.pop_back();
      }
    }
    if (pick(6) == 0) {  // an MPI call the trace ends inside
      loc.events.push_back(make_event(t += 1, EventKind::Enter, MpiOp::None, tr.defs.mpi_region(MpiOp::Barrier)));
    } else if (finalize || pick(3) == 0) {
      mpi_call(tr, loc, t, MpiOp::Finalize, {});
    }
    while (!open.empty() && pick(3) != 0) {
      loc.events.push_back(make_event(t += 1, EventKind::Leave, MpiOp::None, open.back()));
      open.pop_back();
    }
    tr.locations.push_back(std::move(loc));
  }
  return tr;
}

}  // namespace waitlab::engine
