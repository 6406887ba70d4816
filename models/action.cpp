#include "models/action.hpp"

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
  }
  return MpiOp::None;
}

}  // namespace waitlab::models
