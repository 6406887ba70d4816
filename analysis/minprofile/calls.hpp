// waitlab::minprofile — what a PMPI wrapper sees of one MPI call, and which pattern it can hold.
//
// Promise: classify() decides which wait-state pattern a call can hold from what a wrapper
// knows of it (function, root or not, whether it completes receives or sends). CallFacts
// collects one call — the simulator from the call's arguments, the trace analysis from the
// call's events, libwaitlab-profiler from the PMPI arguments — and turns it into the
// CallRecord the estimator takes. Only trace.hpp's enums are used: this stays in the
// dependency-free core that the profiler library links.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/minprofile/estimator.hpp"
#include "analysis/trace/trace.hpp"

namespace waitlab::minprofile {

Pattern classify(trace::MpiOp op, bool root, bool completes_receive, bool completes_send);

// What a PMPI wrapper sees of one call.
class CallFacts {
 public:
  void begin(trace::MpiOp op, double enter);
  void message(bool receive, trace::Rank peer, std::uint64_t bytes);  // one message sent or received
  void collective(bool root, std::uint64_t bytes_moved);
  void tested_complete(bool v) { tested_ = v; }
  // The record of the call, left at `leave`, on call path `path`.
  CallRecord finish(std::uint32_t path, double leave);
  trace::MpiOp op() const { return op_; }

 private:
  trace::MpiOp op_ = trace::MpiOp::None;
  double enter_ = 0;
  std::uint64_t bytes_ = 0;
  bool root_ = false, receives_ = false, sends_ = false, tested_ = false;
  std::vector<trace::Rank> peers_;
};

}  // namespace waitlab::minprofile
