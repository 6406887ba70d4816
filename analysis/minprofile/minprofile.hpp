// waitlab::analysis — the minimum-duration estimator on waitlab's event model.
//
// Promise: minprofile_estimate() is the offline estimator: a pure function of a Trace and its
// Matching that feeds each rank's calls, in program order, through a minprofile::CallFacts
// (what a PMPI wrapper sees of a call, here taken from its events) into a RankProfile. The
// result equals the simulator's online estimate of the same run
// (tests/sim/test_minprofile_online.cpp).
// The variant exclude_tested needs the kTestedComplete flag of simulated runs with
// run.minprofile; on other traces it is marked not computed.
// On the replay engine (issue 32) each process profiles the ranks it owns; the collective
// minima and histograms are folded along the ranks in rank order (the serial bits for any
// number of processes), each rank's rows are computed where it lives, and process 0 assembles
// the result. The engine's types are only declared here: the simulator includes this header.
#pragma once

#include "analysis/minprofile/calls.hpp"
#include "analysis/minprofile/estimator.hpp"
#include "analysis/trace/match.hpp"
#include "analysis/trace/trace.hpp"
#include "analysis/engine/fwd.hpp"

namespace waitlab::analysis {

// Run attribute naming traces whose MPI_Wait/MPI_Waitall Enter events carry kTestedComplete.
inline constexpr const char* kTestedAttribute = "minprofile_tested";

// The estimate of a trace: the replay engine's run below with one process holding every rank.
minprofile::Result minprofile_estimate(const trace::Trace& trace, const trace::Matching& matching,
                                       double percentile = 5.0);

// The replay engine's run, called by every process with its shard and the shard's matching
// (engine::match_shard). Process 0 gets the whole result, the serial one to the bit (what the
// writers need); every other process an empty Result (its ranks' rows went to process 0).
minprofile::Result minprofile_estimate(const engine::Shard& shard, const trace::Matching& matching,
                                       engine::Transport& transport, double percentile = 5.0);

}  // namespace waitlab::analysis
