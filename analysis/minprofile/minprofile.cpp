#include "analysis/minprofile/minprofile.hpp"

#include <algorithm>

namespace waitlab::analysis {

using minprofile::Pattern;
using trace::EventKind;
using trace::MpiOp;

Pattern classify(MpiOp op, bool root, bool completes_receive, bool completes_send) {
  switch (op) {
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

minprofile::CallRecord CallFacts::finish(std::uint32_t path, double leave) {
  minprofile::CallRecord c;
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

minprofile::Result minprofile_estimate(const trace::Trace& trace, const trace::Matching& matching,
                                       double percentile) {
  std::vector<minprofile::RankProfile> ranks(trace.ranks(), minprofile::RankProfile(percentile));
  CallFacts facts;
  for (std::size_t r = 0; r < trace.ranks(); ++r) {
    const auto& ev = trace.locations[r].events;
    auto& prof = ranks[r];
    if (!ev.empty()) prof.set_span(ev.front().time, ev.back().time);
    for (const auto& call : matching.calls[r]) {
      facts.begin(call.op, ev[call.enter].time);
      facts.tested_complete((ev[call.enter].flags & trace::kTestedComplete) != 0);
      for (std::uint32_t i = call.enter + 1; i < call.leave; ++i) {
        const auto& e = ev[i];
        switch (e.kind) {
          case EventKind::Send:
          case EventKind::IsendComplete:
            facts.message(false, e.peer, e.bytes);
            break;
          case EventKind::Recv:
          case EventKind::IrecvComplete:
            facts.message(true, e.peer, e.bytes);
            break;
          case EventKind::CollEnd:
            facts.collective(e.peer == static_cast<trace::Rank>(r), e.bytes + e.aux);
            break;
          default:
            break;
        }
      }
      prof.add(facts.finish(call.path, ev[call.leave].time));
    }
  }
  std::vector<std::string> names(matching.paths.size());
  for (std::size_t i = 0; i < names.size(); ++i)
    names[i] = matching.paths.name(static_cast<trace::CallPathId>(i), trace.defs);
  auto result = minprofile::estimate(ranks, names);
  result.computed[static_cast<std::size_t>(minprofile::Variant::ExcludeTested)] =
      !trace.attribute(kTestedAttribute).empty();
  return result;
}

}  // namespace waitlab::analysis
