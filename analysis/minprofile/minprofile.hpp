// waitlab::analysis — the minimum-duration estimator on waitlab's event model.
//
// Promise: minprofile_estimate() is the offline estimator: a pure function of a Trace and its
// Matching that feeds each rank's calls, in program order, through a minprofile::CallFacts
// (what a PMPI wrapper sees of a call, here taken from its events) into a RankProfile. The
// result equals the simulator's online estimate of the same run
// (tests/sim/test_minprofile_online.cpp).
// The variant exclude_tested needs the kTestedComplete flag of simulated runs with
// run.minprofile; on other traces it is marked not computed.
#pragma once

#include "analysis/minprofile/calls.hpp"
#include "analysis/minprofile/estimator.hpp"
#include "analysis/trace/match.hpp"
#include "analysis/trace/trace.hpp"

namespace waitlab::analysis {

// Run attribute naming traces whose MPI_Wait/MPI_Waitall Enter events carry kTestedComplete.
inline constexpr const char* kTestedAttribute = "minprofile_tested";

minprofile::Result minprofile_estimate(const trace::Trace& trace, const trace::Matching& matching,
                                       double percentile = 5.0);

}  // namespace waitlab::analysis
