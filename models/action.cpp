#include "models/action.hpp"

#include <stdexcept>

namespace waitlab::models {

std::string_view action_name(ActionKind k) {
  switch (k) {
    case ActionKind::Enter:
      return "enter";
    case ActionKind::Leave:
      return "leave";
    case ActionKind::Compute:
      return "compute";
    case ActionKind::Send:
      return "send";
    case ActionKind::Ssend:
      return "ssend";
    case ActionKind::Recv:
      return "recv";
    case ActionKind::Isend:
      return "isend";
    case ActionKind::Irecv:
      return "irecv";
    case ActionKind::Wait:
      return "wait";
    case ActionKind::Waitall:
      return "waitall";
    case ActionKind::Sendrecv:
      return "sendrecv";
    case ActionKind::Barrier:
      return "barrier";
    case ActionKind::Bcast:
      return "bcast";
    case ActionKind::Reduce:
      return "reduce";
    case ActionKind::Allreduce:
      return "allreduce";
    case ActionKind::Gather:
      return "gather";
    case ActionKind::Scatter:
      return "scatter";
    case ActionKind::Allgather:
      return "allgather";
    case ActionKind::Alltoall:
      return "alltoall";
    case ActionKind::Gatherv:
      return "gatherv";
    case ActionKind::Scatterv:
      return "scatterv";
    case ActionKind::Allgatherv:
      return "allgatherv";
    case ActionKind::Alltoallv:
      return "alltoallv";
    case ActionKind::ReduceScatter:
      return "reducescatter";
  }
  return "?";
}

trace::MpiOp action_op(ActionKind k) {
  using trace::MpiOp;
  switch (k) {
    case ActionKind::Enter:
    case ActionKind::Leave:
    case ActionKind::Compute:
      return MpiOp::None;
    case ActionKind::Send:
      return MpiOp::Send;
    case ActionKind::Ssend:
      return MpiOp::Ssend;
    case ActionKind::Recv:
      return MpiOp::Recv;
    case ActionKind::Isend:
      return MpiOp::Isend;
    case ActionKind::Irecv:
      return MpiOp::Irecv;
    case ActionKind::Wait:
      return MpiOp::Wait;
    case ActionKind::Waitall:
      return MpiOp::Waitall;
    case ActionKind::Sendrecv:
      return MpiOp::Sendrecv;
    case ActionKind::Barrier:
      return MpiOp::Barrier;
    case ActionKind::Bcast:
      return MpiOp::Bcast;
    case ActionKind::Reduce:
      return MpiOp::Reduce;
    case ActionKind::Allreduce:
      return MpiOp::Allreduce;
    case ActionKind::Gather:
      return MpiOp::Gather;
    case ActionKind::Scatter:
      return MpiOp::Scatter;
    case ActionKind::Allgather:
      return MpiOp::Allgather;
    case ActionKind::Alltoall:
      return MpiOp::Alltoall;
    case ActionKind::Gatherv:
      return MpiOp::Gatherv;
    case ActionKind::Scatterv:
      return MpiOp::Scatterv;
    case ActionKind::Allgatherv:
      return MpiOp::Allgatherv;
    case ActionKind::Alltoallv:
      return MpiOp::Alltoallv;
    case ActionKind::ReduceScatter:
      return MpiOp::ReduceScatter;
  }
  return MpiOp::None;
}

std::uint32_t CountsPool::intern(Counts c) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a over the sizes
  const auto mix = [&h](std::uint64_t v) {
    h ^= v;
    h *= 1099511628211ull;
  };
  mix(c.send.size());
  for (const auto v : c.send) mix(v);
  mix(c.recv.size());
  for (const auto v : c.recv) mix(v);
  const auto [first, last] = by_hash_.equal_range(h);
  for (auto it = first; it != last; ++it)
    if (store_[it->second] == c) return it->second;
  if (store_.size() >= kNoCounts) throw std::length_error("more distinct v-collective counts than an Action can name");
  const auto id = static_cast<std::uint32_t>(store_.size());
  store_.push_back(std::move(c));
  by_hash_.emplace(h, id);
  return id;
}

}  // namespace waitlab::models
