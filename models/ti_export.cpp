// A workload's actions as TI records (ti_from_workload, models/replay.hpp), for writing any
// workload as a TI trace: regions dropped, compute as flops at a speed, requests named by the
// (source, destination, tag) SMPI files them under, collectives on sub-communicators as calls
// on MPI_COMM_WORLD with world-rank roots; what TI cannot hold is counted for `lost`.
#include "models/replay.hpp"

#include <charconv>
#include <unordered_map>

#include "models/replay_common.hpp"

namespace waitlab::models {

using trace::TiOp;
using trace::TiRecord;
using detail::RequestKey;

namespace {

std::string number(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// Writes a workload's ranks as TI records, one rank at a time, counting what TI loses.
class TiExport {
 public:
  TiExport(const Workload& w, double speed) : w_(w), speed_(speed) {}

  std::vector<TiRecord> rank(Rank r) {
    std::vector<TiRecord> out;
    RankRequests q;
    auto s = w_.stream(r);
    Action a;
    while (s->next(a)) {
      TiRecord rec;
      if (!record(r, a, q, rec)) continue;
      if (a.comm != trace::kCommWorld && trace::is_collective(action_op(a.kind))) {
        ++sub_comm_;
        rec.root = detail::world_rank(w_.definitions(), a.comm, a.root);
      }
      out.push_back(std::move(rec));
    }
    return out;
  }

  void report(std::vector<std::string>& lost) const {
    if (regions_) lost.push_back(std::to_string(regions_) + " region entries and exits: TI has no regions");
    if (sub_comm_)
      lost.push_back(std::to_string(sub_comm_) +
                     " collective calls on sub-communicators written as calls on MPI_COMM_WORLD (TI has no "
                     "communicators; roots as world ranks)");
    if (seconds_)
      lost.push_back(std::to_string(seconds_) + " compute intervals in seconds written as flops at " +
                     number(speed_) + " flop/s");
  }

 private:
  // One rank's requests as TI names them.
  struct RankRequests {
    std::unordered_map<std::int32_t, RequestKey> keys;  // slot -> (src, dst, tag)
    std::vector<std::int32_t> joined;                   // slots of the Waitall to come (in_waitall)
  };

  // Action `a` of rank r as a TI record; false when it makes none (a region's entry or exit, a
  // Wait that is part of the Waitall after it).
  bool record(Rank r, const Action& a, RankRequests& q, TiRecord& rec) {
    switch (a.kind) {
      case ActionKind::Enter:
      case ActionKind::Leave:
        ++regions_;
        return false;
      case ActionKind::Compute:
        rec.op = TiOp::Compute;
        rec.amount = a.flops ? a.amount : a.amount * speed_;
        if (!a.flops) ++seconds_;
        break;
      case ActionKind::Send:
      case ActionKind::Ssend:
      case ActionKind::Recv:
      case ActionKind::Isend:
      case ActionKind::Irecv:
        point_to_point(r, a, q, rec);
        break;
      case ActionKind::Wait:
        if (a.in_waitall) {  // part of the Waitall that follows
          q.joined.push_back(a.request);
          return false;
        }
        wait(a, q, rec);
        break;
      case ActionKind::Waitall:
        waitall(q, rec);
        break;
      case ActionKind::Sendrecv:
        rec.op = TiOp::Sendrecv;
        rec.peer = a.peer;
        rec.bytes = a.bytes;
        rec.peer2 = a.peer2;
        rec.bytes2 = a.bytes2;
        break;
      case ActionKind::Barrier:
        rec.op = TiOp::Barrier;
        break;
      case ActionKind::Bcast:
      case ActionKind::Reduce:
        rec.op = a.kind == ActionKind::Bcast ? TiOp::Bcast : TiOp::Reduce;
        rec.bytes = a.bytes;
        rec.root = a.root;
        break;
      case ActionKind::Allreduce:
        rec.op = TiOp::Allreduce;
        rec.bytes = a.bytes;
        break;
      case ActionKind::Gather:
      case ActionKind::Scatter:
        rec.op = a.kind == ActionKind::Gather ? TiOp::Gather : TiOp::Scatter;
        rec.bytes = rec.bytes2 = a.bytes;
        rec.root = a.root;
        break;
      case ActionKind::Allgather:
      case ActionKind::Alltoall:
        rec.op = a.kind == ActionKind::Allgather ? TiOp::Allgather : TiOp::Alltoall;
        rec.bytes = rec.bytes2 = a.bytes;
        break;
      case ActionKind::Gatherv:
      case ActionKind::Scatterv:
      case ActionKind::Allgatherv:
      case ActionKind::Alltoallv:
      case ActionKind::ReduceScatter:
        vcollective(a, rec);
        break;
    }
    return true;
  }

  // A send or receive, blocking or not; a posted request is filed under its key.
  static void point_to_point(Rank r, const Action& a, RankRequests& q, TiRecord& rec) {
    rec.op = a.kind == ActionKind::Send    ? TiOp::Send
             : a.kind == ActionKind::Ssend ? TiOp::Ssend
             : a.kind == ActionKind::Recv  ? TiOp::Recv
             : a.kind == ActionKind::Isend ? TiOp::Isend
                                           : TiOp::Irecv;
    rec.peer = a.peer;
    rec.tag = a.tag;
    rec.bytes = a.bytes;
    if (a.kind == ActionKind::Isend) q.keys[a.request] = RequestKey{r, a.peer, a.tag};
    if (a.kind == ActionKind::Irecv) q.keys[a.request] = RequestKey{a.peer, r, a.tag};
  }

  // An MPI_Wait: the request's key.
  static void wait(const Action& a, RankRequests& q, TiRecord& rec) {
    rec.op = TiOp::Wait;
    const auto it = q.keys.find(a.request);
    if (it != q.keys.end()) {
      rec.peer = it->second.src;
      rec.peer2 = it->second.dst;
      rec.tag = it->second.tag;
      q.keys.erase(it);
    }
  }

  // An MPI_Waitall: over every outstanding request, or over the in_waitall Waits' before it.
  static void waitall(RankRequests& q, TiRecord& rec) {
    rec.op = TiOp::Waitall;
    if (q.joined.empty()) {
      rec.count = static_cast<std::uint32_t>(q.keys.size());
      q.keys.clear();
    } else {  // over some requests: the others are waited for later, as SMPI writes it
      rec.count = static_cast<std::uint32_t>(q.joined.size());
      for (auto slot : q.joined) q.keys.erase(slot);
      q.joined.clear();
    }
  }

  // A v-collective: one size per rank; where the call takes none (a non-root's counts),
  // zeros, as SMPI writes them. On a sub-communicator, each member's size at its world rank
  // and zeros for the other ranks.
  void vcollective(const Action& a, TiRecord& rec) const {
    const Counts* c = w_.counts(a.counts);
    const auto ranks = static_cast<std::size_t>(w_.ranks());
    const std::vector<Rank>* members =
        a.comm == trace::kCommWorld ? nullptr : &w_.definitions().comms[a.comm].members;
    const auto sizes = [&](const std::vector<std::uint64_t>* v) {
      std::vector<std::uint64_t> world(ranks, 0);
      if (v != nullptr && members == nullptr && v->size() == ranks) world = *v;
      if (v != nullptr && members != nullptr && v->size() == members->size())
        for (std::size_t i = 0; i < v->size(); ++i) world[static_cast<std::size_t>((*members)[i])] = (*v)[i];
      return world;
    };
    const std::vector<std::uint64_t>* send = c ? &c->send : nullptr;
    const std::vector<std::uint64_t>* recv = c ? &c->recv : nullptr;
    rec.root = a.root;
    switch (a.kind) {
      case ActionKind::Gatherv:
        rec.op = TiOp::Gatherv;
        rec.bytes = a.bytes;
        rec.counts = sizes(recv);
        break;
      case ActionKind::Scatterv:
        rec.op = TiOp::Scatterv;
        rec.bytes2 = a.bytes;
        rec.counts = sizes(send);
        break;
      case ActionKind::Allgatherv:
        rec.op = TiOp::Allgatherv;
        rec.bytes = a.bytes;
        rec.counts = sizes(recv);
        rec.root = trace::kNoRank;
        break;
      case ActionKind::Alltoallv:
        rec.op = TiOp::Alltoallv;
        rec.counts = sizes(send);
        for (const auto v : sizes(recv)) rec.counts.push_back(v);
        rec.root = trace::kNoRank;
        break;
      default:
        rec.op = TiOp::ReduceScatter;
        rec.counts = sizes(recv);
        rec.root = trace::kNoRank;
        break;
    }
  }

  const Workload& w_;
  double speed_;
  std::uint64_t regions_ = 0;
  std::uint64_t seconds_ = 0;
  std::uint64_t sub_comm_ = 0;
};

}  // namespace

trace::TiTrace ti_from_workload(const Workload& w, double speed, std::vector<std::string>* lost) {
  trace::TiTrace ti;
  ti.ranks.resize(static_cast<std::size_t>(w.ranks()));
  TiExport e(w, speed);
  for (Rank r = 0; r < w.ranks(); ++r) ti.ranks[static_cast<std::size_t>(r)] = e.rank(r);
  if (lost) e.report(*lost);
  return ti;
}

}  // namespace waitlab::models
