// waitlab::models — actions: what one rank does, one MPI call or compute interval at a time.
//
// Promise: a workload (synthetic generator or replayed trace) yields, per rank, a lazy
// stream of Actions; the engine executes each through the MPI API. Non-blocking calls
// name a per-rank request slot; MPI_Wait names the slot; MPI_Waitall completes every
// outstanding request of the rank, or only some: those named by the Wait actions marked
// `in_waitall` just before it (an MPI_Waitall over part of the requests). Collectives name
// their communicator (an index into the workload's Definitions::comms, 0 = MPI_COMM_WORLD)
// and their root in its numbering; point-to-point peers are world ranks. Compute is in
// seconds (nominal, before perturbation) or flops; it always lies inside a user region
// (Enter/Leave actions), and carries the iteration number so perturbations and ground truth
// can refer to it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "analysis/trace/trace.hpp"

namespace waitlab::models {

using trace::Rank;

enum class ActionKind : std::uint8_t {
  Enter,     // region
  Leave,     // region
  Compute,   // seconds (or flops if `flops` is true), region = innermost user region
  Send,      // peer, tag, bytes
  Ssend,     // peer, tag, bytes
  Recv,      // peer, tag, bytes
  Isend,     // peer, tag, bytes, request
  Irecv,     // peer, tag, bytes, request
  Wait,      // request (in_waitall: one of the requests of the Waitall that follows)
  Waitall,   // the requests of the in_waitall Waits just before it, else all outstanding requests
  Sendrecv,  // peer (dest), tag, bytes; peer2 (source), tag2, bytes2
  // Collectives run on `comm`; roots are ranks of that communicator.
  Barrier,
  Bcast,      // root, bytes
  Reduce,     // root, bytes
  Allreduce,  // bytes
  Gather,     // root, bytes (per rank)
  Scatter,    // root, bytes (per rank)
  Allgather,  // bytes (per rank)
  Alltoall,   // bytes (per pair)
};

std::string_view action_name(ActionKind k);
// The MPI function an action calls (MpiOp::None for Enter/Leave/Compute).
trace::MpiOp action_op(ActionKind k);

struct Action {
  ActionKind kind = ActionKind::Compute;
  bool flops = false;           // Compute: `amount` is flops instead of seconds
  // Wait: not a call of its own; the request is one of those the next action, a Waitall,
  // completes (the actions between are in_waitall Waits only).
  bool in_waitall = false;
  trace::RegionId region = 0;   // Enter/Leave/Compute: region id in the workload's definitions
  Rank peer = trace::kNoRank;   // p2p: destination (send kinds) or source (recv kinds); Sendrecv: dest
  Rank peer2 = trace::kNoRank;  // Sendrecv: source
  Rank root = 0;                // rooted collectives: the root's rank in `comm` (= world rank on comm 0)
  std::int32_t tag = 0;
  std::int32_t tag2 = 0;        // Sendrecv: receive tag
  std::int32_t request = -1;    // Isend/Irecv/Wait: request slot
  std::int32_t iteration = -1;  // workload iteration this action belongs to (-1 = none)
  std::uint32_t comm = 0;       // collectives: index into Definitions::comms (0 = MPI_COMM_WORLD)
  std::uint64_t bytes = 0;
  std::uint64_t bytes2 = 0;  // Sendrecv: receive bytes
  double amount = 0;         // Compute: seconds or flops
};

// A lazy per-rank stream: next() fills `a` and returns true, or returns false at the end.
// MPI_Init and MPI_Finalize are implicit (the engine adds them).
class ActionStream {
 public:
  virtual ~ActionStream() = default;
  virtual bool next(Action& a) = 0;
  // How much of the stream has been consumed, 0..1 (for the progress display), or −1 when
  // the stream cannot tell.
  virtual double done() const { return -1; }
};

// Convenience: an ActionStream over a precomputed vector (tests, replayed traces).
class VectorStream : public ActionStream {
 public:
  explicit VectorStream(std::vector<Action> actions) : actions_(std::move(actions)) {}
  bool next(Action& a) override {
    if (pos_ >= actions_.size()) return false;
    a = actions_[pos_++];
    return true;
  }
  double done() const override {
    return actions_.empty() ? 1.0 : static_cast<double>(pos_) / static_cast<double>(actions_.size());
  }

 private:
  std::vector<Action> actions_;
  std::size_t pos_ = 0;
};

}  // namespace waitlab::models
