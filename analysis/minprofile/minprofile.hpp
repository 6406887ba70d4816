// waitlab::analysis — the minimum-duration estimator on waitlab's event model.
//
// Promise: classify() decides which wait-state pattern an MPI call can hold from what a PMPI
// wrapper knows of it (function, root or not, whether it completes receives or sends);
// CallFacts collects what a wrapper sees of one call, the same way in the simulator (from
// the call's arguments) and here (from the call's events). minprofile_estimate() is the
// offline estimator: a pure function of a Trace and its Matching that feeds each rank's calls,
// in program order, into a minprofile::RankProfile — the result equals the simulator's online
// estimate of the same run (tests/sim/test_minprofile_online.cpp).
// The variant exclude_tested needs the kTestedComplete flag of simulated runs with
// run.minprofile; on other traces it is marked not computed.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/minprofile/estimator.hpp"
#include "analysis/trace/match.hpp"
#include "analysis/trace/trace.hpp"

namespace waitlab::analysis {

minprofile::Pattern classify(trace::MpiOp op, bool root, bool completes_receive, bool completes_send);

// What a PMPI wrapper sees of one call.
class CallFacts {
 public:
  void begin(trace::MpiOp op, double enter);
  void message(bool receive, trace::Rank peer, std::uint64_t bytes);  // one message sent or received
  void collective(bool root, std::uint64_t bytes_moved);
  void tested_complete(bool v) { tested_ = v; }
  // The record of the call, left at `leave`, on call path `path`.
  minprofile::CallRecord finish(std::uint32_t path, double leave);
  trace::MpiOp op() const { return op_; }

 private:
  trace::MpiOp op_ = trace::MpiOp::None;
  double enter_ = 0;
  std::uint64_t bytes_ = 0;
  bool root_ = false, receives_ = false, sends_ = false, tested_ = false;
  std::vector<trace::Rank> peers_;
};

// Run attribute naming traces whose MPI_Wait/MPI_Waitall Enter events carry kTestedComplete.
inline constexpr const char* kTestedAttribute = "minprofile_tested";

minprofile::Result minprofile_estimate(const trace::Trace& trace, const trace::Matching& matching,
                                       double percentile = 5.0);

}  // namespace waitlab::analysis
