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
// The v-collectives carry their per-rank sizes (Counts) by an index into their workload's
// CountsPool (Workload::counts()): an action stays 64 bytes, and the P sizes of a call are
// stored once for every action that passes the same ones.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
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
  // The v-collectives and MPI_Reduce_scatter: sizes per rank in `counts` (bytes).
  Gatherv,        // root; bytes = this rank's send size; counts.recv = what the root receives from each rank
  Scatterv,       // root; bytes = this rank's receive size; counts.send = what the root sends to each rank
  Allgatherv,     // bytes = this rank's send size; counts.recv = what every rank receives from each rank
  Alltoallv,      // counts.send = what this rank sends to each rank, counts.recv = receives from each
  ReduceScatter,  // counts.recv = each rank's block of the reduced vector (every rank sends their sum)
};

std::string_view action_name(ActionKind k);
// The MPI function an action calls (MpiOp::None for Enter/Leave/Compute).
trace::MpiOp action_op(ActionKind k);

// The per-rank sizes a rank passes to a v-collective, in bytes, one entry per rank of the
// communicator (empty where the call takes none: a non-root's receive counts of MPI_Gatherv).
struct Counts {
  std::vector<std::uint64_t> send;
  std::vector<std::uint64_t> recv;
  bool operator==(const Counts&) const = default;
};

inline constexpr std::uint32_t kNoCounts = UINT32_MAX;
inline constexpr std::size_t kMaxComms = UINT16_MAX + 1;  // Action::comm's range

// The Counts of a workload's actions, each distinct one stored once (a replay of N ranks
// whose alltoallv passes the same counts every iteration holds N of them, not N × iterations;
// uniform counts are one for all ranks).
class CountsPool {
 public:
  std::uint32_t intern(Counts c);  // the id of an equal stored Counts, or of `c` now stored
  const Counts& at(std::uint32_t id) const { return store_.at(id); }
  std::size_t size() const { return store_.size(); }

 private:
  std::deque<Counts> store_;  // stable addresses
  std::unordered_multimap<std::uint64_t, std::uint32_t> by_hash_;
};

struct Action {
  ActionKind kind = ActionKind::Compute;
  bool flops : 1 = false;       // Compute: `amount` is flops instead of seconds
  // Wait: not a call of its own; the request is one of those the next action, a Waitall,
  // completes (the actions between are in_waitall Waits only).
  bool in_waitall : 1 = false;
  // Collectives: index into Definitions::comms (0 = MPI_COMM_WORLD); a workload holds at most
  // kMaxComms communicators (replays refuse more).
  std::uint16_t comm = 0;
  trace::RegionId region = 0;   // Enter/Leave/Compute: region id in the workload's definitions
  Rank peer = trace::kNoRank;   // p2p: destination (send kinds) or source (recv kinds); Sendrecv: dest
  Rank peer2 = trace::kNoRank;  // Sendrecv: source
  Rank root = 0;                // rooted collectives: the root's rank in `comm` (= world rank on comm 0)
  std::int32_t tag = 0;
  std::int32_t tag2 = 0;        // Sendrecv: receive tag
  std::int32_t request = -1;    // Isend/Irecv/Wait: request slot
  std::int32_t iteration = -1;  // workload iteration this action belongs to (-1 = none)
  std::uint32_t counts = kNoCounts;  // v-collectives: their Counts, Workload::counts(id)
  std::uint64_t bytes = 0;
  std::uint64_t bytes2 = 0;  // Sendrecv: receive bytes
  double amount = 0;         // Compute: seconds or flops
};
static_assert(sizeof(Action) <= 64, "an Action stays one cache line: replays hold millions");

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

// A point-to-point action (Send, Ssend, Recv, Isend, Irecv) to or from `peer`: what the
// synthetic workloads and the trace converters make.
inline Action p2p_action(ActionKind kind, Rank peer, std::int32_t tag, std::uint64_t bytes) {
  Action a;
  a.kind = kind;
  a.peer = peer;
  a.tag = tag;
  a.bytes = bytes;
  return a;
}

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
