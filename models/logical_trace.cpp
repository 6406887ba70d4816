// A workload as a trace in logical times (logical_trace, models/replay.hpp), for converting TI
// to timed formats: compute takes its seconds (or flops at a speed), MPI calls take no time;
// every call gets the events a traced run records (a collective's bytes in the engine's
// convention, its root by world rank), communicators kept.
#include "models/replay.hpp"

#include <algorithm>
#include <unordered_map>
#include <utility>

#include "models/replay_common.hpp"

namespace waitlab::models {

using trace::EventKind;
using trace::MpiOp;

namespace {

// The size of a collective's communicator (its members; MPI_COMM_WORLD: every rank).
std::uint64_t comm_size(const trace::Definitions& d, const Action& a) {
  return static_cast<std::uint64_t>(a.comm < d.comms.size() ? d.comms[a.comm].members.size() : 0);
}

// Rank r's rank in a collective's communicator (its size if r is not a member).
std::size_t local_rank(const trace::Definitions& d, const Action& a, Rank r) {
  if (a.comm == trace::kCommWorld) return static_cast<std::size_t>(r);
  if (a.comm >= d.comms.size()) return 0;
  const auto& m = d.comms[a.comm].members;
  return static_cast<std::size_t>(std::find(m.begin(), m.end(), r) - m.begin());
}

// What rank r sends and receives in collective `a` (`root`: r is its root), in the engine's
// byte convention for collectives (sim/simulation.cpp).
std::pair<std::uint64_t, std::uint64_t> collective_bytes(const Workload& w, const trace::Definitions& d,
                                                         const Action& a, Rank r, bool root) {
  const std::uint64_t ranks = comm_size(d, a);
  const std::uint64_t b = a.bytes;
  std::uint64_t sent = b, got = b;
  const Counts* c = w.counts(a.counts);
  const auto sum = [](const std::vector<std::uint64_t>* v) {
    std::uint64_t total = 0;
    if (v != nullptr)
      for (const auto x : *v) total += x;
    return total;
  };
  const std::vector<std::uint64_t>* send = c ? &c->send : nullptr;
  const std::vector<std::uint64_t>* recv = c ? &c->recv : nullptr;
  switch (a.kind) {
    case ActionKind::Barrier:
      sent = got = 0;
      break;
    case ActionKind::Bcast:
      sent = root ? b : 0;
      got = root ? 0 : b;
      break;
    case ActionKind::Reduce:
      got = root ? b : 0;
      break;
    case ActionKind::Gather:
      got = root ? b * ranks : 0;
      break;
    case ActionKind::Scatter:
      sent = root ? b * ranks : 0;
      break;
    case ActionKind::Allgather:
      got = b * ranks;
      break;
    case ActionKind::Alltoall:
      sent = got = b * ranks;
      break;
    case ActionKind::Gatherv:
      got = root ? sum(recv) : 0;
      break;
    case ActionKind::Scatterv:
      sent = root ? sum(send) : 0;
      break;
    case ActionKind::Allgatherv:
      got = sum(recv);
      break;
    case ActionKind::Alltoallv:
      sent = sum(send);
      got = sum(recv);
      break;
    case ActionKind::ReduceScatter:
      sent = sum(recv);
      got = recv != nullptr && local_rank(d, a, r) < recv->size() ? (*recv)[local_rank(d, a, r)] : 0;
      break;
    default:
      break;
  }
  return {sent, got};
}

// One rank's events in logical time, from its actions: MPI_Init, the actions, MPI_Finalize.
class LogicalRank {
 public:
  LogicalRank(const Workload& w, double speed, trace::Definitions& defs, Rank r, std::vector<trace::Event>& ev)
      : w_(w), speed_(speed), defs_(defs), r_(r), ev_(ev) {}

  void run() {
    call(MpiOp::Init, [] {});
    auto s = w_.stream(r_);
    Action a;
    while (s->next(a)) action(a);
    call(MpiOp::Finalize, [] {});
  }

 private:
  // MPI call `op`: its Enter, the events `body` adds, its Leave, all at the current time.
  template <class Body>
  void call(MpiOp op, Body&& body) {
    ev_.push_back(trace::make_event(now_, EventKind::Enter, op, defs_.mpi_region(op)));
    body();
    ev_.push_back(trace::make_event(now_, EventKind::Leave, op, defs_.mpi_region(op)));
  }

  void action(const Action& a) {
    const MpiOp op = action_op(a.kind);
    switch (a.kind) {
      case ActionKind::Enter:
      case ActionKind::Leave:
        ev_.push_back(trace::make_event(now_, a.kind == ActionKind::Enter ? EventKind::Enter : EventKind::Leave,
                                        MpiOp::None, a.region));
        break;
      case ActionKind::Compute:
        now_ += a.flops ? a.amount / speed_ : a.amount;
        break;
      case ActionKind::Send:
      case ActionKind::Ssend:
        call(op, [&] {
          ev_.push_back(trace::make_event(now_, EventKind::Send, op, trace::kCommWorld, a.peer, a.tag, a.bytes));
        });
        break;
      case ActionKind::Recv:
        call(op, [&] {
          ev_.push_back(trace::make_event(now_, EventKind::Recv, op, trace::kCommWorld, a.peer, a.tag, a.bytes));
        });
        break;
      case ActionKind::Isend:
      case ActionKind::Irecv:
        call(op, [&] {
          const auto id = next_request_++;
          open_[a.request] = {id, a};
          ev_.push_back(trace::make_event(now_, a.kind == ActionKind::Isend ? EventKind::IsendStart
                                                                             : EventKind::IrecvPost,
                                          op, trace::kCommWorld, a.peer, a.tag, a.bytes, id));
        });
        break;
      case ActionKind::Wait:
        if (a.in_waitall) {  // part of the Waitall that follows
          joined_.push_back(a.request);
          break;
        }
        call(op, [&] { complete(a.request); });
        break;
      case ActionKind::Waitall:
        waitall(op);
        break;
      case ActionKind::Sendrecv:
        call(op, [&] {
          ev_.push_back(trace::make_event(now_, EventKind::Send, op, trace::kCommWorld, a.peer, a.tag, a.bytes));
          ev_.push_back(trace::make_event(now_, EventKind::Recv, op, trace::kCommWorld, a.peer2, a.tag2, a.bytes2));
        });
        break;
      default:
        collective(a, op);
        break;
    }
  }

  // The completion of the request in `slot`, if it is open.
  void complete(std::int32_t slot) {
    const auto it = open_.find(slot);
    if (it == open_.end()) return;
    const auto& [id, a] = it->second;
    if (a.kind == ActionKind::Isend)
      ev_.push_back(trace::make_event(now_, EventKind::IsendComplete, MpiOp::None, trace::kCommWorld, a.peer, a.tag,
                                      a.bytes, id));
    else
      ev_.push_back(trace::make_event(now_, EventKind::IrecvComplete, MpiOp::None, trace::kCommWorld, a.peer, a.tag,
                                      a.bytes, id));
    open_.erase(it);
  }

  // An MPI_Waitall over the in_waitall Waits' requests before it (none: every open one),
  // completed in posting order.
  void waitall(MpiOp op) {
    std::sort(joined_.begin(), joined_.end());
    call(op, [&] {
      std::vector<std::pair<std::uint64_t, std::int32_t>> order;  // in posting order
      for (const auto& [slot, v] : open_)
        if (joined_.empty() || std::binary_search(joined_.begin(), joined_.end(), slot))
          order.emplace_back(v.first, slot);
      std::sort(order.begin(), order.end());
      for (const auto& [id, slot] : order) complete(slot);
    });
    joined_.clear();
  }

  void collective(const Action& a, MpiOp op) {
    const bool rooted = a.kind == ActionKind::Bcast || a.kind == ActionKind::Reduce ||
                        a.kind == ActionKind::Gather || a.kind == ActionKind::Scatter ||
                        a.kind == ActionKind::Gatherv || a.kind == ActionKind::Scatterv;
    const Rank root_rank = detail::world_rank(defs_, a.comm, a.root);  // the trace names roots by world rank
    // (not a structured binding: clang 14 cannot capture one)
    const auto bytes = collective_bytes(w_, defs_, a, r_, rooted && root_rank == r_);
    const std::uint64_t sent = bytes.first, got = bytes.second;
    call(op, [&] {
      ev_.push_back(trace::make_event(now_, EventKind::CollBegin, op, a.comm));
      ev_.push_back(trace::make_event(now_, EventKind::CollEnd, op, a.comm, rooted ? root_rank : trace::kNoRank, 0,
                                      sent, got));
    });
  }

  const Workload& w_;
  double speed_;
  trace::Definitions& defs_;
  Rank r_;
  std::vector<trace::Event>& ev_;
  double now_ = 0;
  std::uint64_t next_request_ = 0;
  std::unordered_map<std::int32_t, std::pair<std::uint64_t, Action>> open_;  // slot -> (request id, posting)
  std::vector<std::int32_t> joined_;  // slots of the Waitall to come (in_waitall Waits), sorted there
};

}  // namespace

trace::Trace logical_trace(const Workload& w, double speed) {
  trace::Trace t;
  t.defs = w.definitions();
  trace::Communicator world{"MPI_COMM_WORLD", {}};
  for (Rank r = 0; r < w.ranks(); ++r) world.members.push_back(r);
  if (t.defs.comms.empty())
    t.defs.comms.push_back(world);
  else
    t.defs.comms[trace::kCommWorld] = world;
  t.locations.resize(static_cast<std::size_t>(w.ranks()));
  for (Rank r = 0; r < w.ranks(); ++r) {
    auto& loc = t.locations[static_cast<std::size_t>(r)];
    loc.rank = r;
    LogicalRank(w, speed, t.defs, r, loc.events).run();
  }
  t.attributes.push_back({"times", "logical: compute at its duration, MPI calls take no time"});
  return t;
}

}  // namespace waitlab::models
