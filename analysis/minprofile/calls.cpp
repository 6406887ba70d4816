#include "analysis/minprofile/calls.hpp"

#include <algorithm>

namespace waitlab::minprofile {

using trace::MpiOp;

Pattern classify(MpiOp op, bool root, bool completes_receive, bool completes_send) {
  switch (trace::base_collective(op)) {
    case MpiOp::Recv:
    case MpiOp::Sendrecv:
      return Pattern::LateSender;
    case MpiOp::Send:
    case MpiOp::Ssend:
      return Pattern::LateReceiver;
    case MpiOp::Wait:
    case MpiOp::Waitall:
      return completes_receive ? Pattern::LateSender : completes_send ? Pattern::LateReceiver : Pattern::None;
    case MpiOp::Barrier:
      return Pattern::WaitAtBarrier;
    case MpiOp::Allreduce:
    case MpiOp::Allgather:
    case MpiOp::Alltoall:
    case MpiOp::ReduceScatter:
      return Pattern::WaitAtNxN;
    case MpiOp::Bcast:
    case MpiOp::Scatter:
      return root ? Pattern::None : Pattern::LateBroadcast;
    case MpiOp::Reduce:
    case MpiOp::Gather:
      return root ? Pattern::EarlyReduce : Pattern::None;
    case MpiOp::Scan:
    case MpiOp::Exscan:
      return Pattern::EarlyScan;
    default:
      return Pattern::None;  // MPI_Isend, MPI_Irecv, MPI_Init, MPI_Finalize
  }
}

void CallFacts::begin(MpiOp op, double enter) {
  op_ = op;
  enter_ = enter;
  bytes_ = 0;
  root_ = receives_ = sends_ = tested_ = false;
  peers_.clear();
}

void CallFacts::message(bool receive, trace::Rank peer, std::uint64_t bytes) {
  (receive ? receives_ : sends_) = true;
  bytes_ += bytes;
  peers_.push_back(peer);
}

void CallFacts::collective(bool root, std::uint64_t bytes_moved) {
  root_ = root;
  bytes_ += bytes_moved;
}

CallRecord CallFacts::finish(std::uint32_t path, double leave) {
  CallRecord c;
  c.path = path;
  c.function = static_cast<std::uint8_t>(op_);
  c.pattern = classify(op_, root_, receives_, sends_);
  c.bytes = bytes_;
  c.duration = leave - enter_;
  c.tested_complete = tested_;
  // The peer set's identity: FNV-1a over the sorted, distinct peers (never 0 when non-empty).
  std::sort(peers_.begin(), peers_.end());
  peers_.erase(std::unique(peers_.begin(), peers_.end()), peers_.end());
  std::uint64_t h = 0;
  if (!peers_.empty()) {
    h = 1469598103934665603ull;
    for (const trace::Rank p : peers_) {
      h ^= static_cast<std::uint32_t>(p);
      h *= 1099511628211ull;
    }
    if (h == 0) h = 1;
  }
  c.peers = h;
  return c;
}

}  // namespace waitlab::minprofile
