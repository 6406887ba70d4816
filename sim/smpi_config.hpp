// waitlab::sim — SMPI's configuration as waitlab sets it, in one place for the engine, the
// scenario loader and the command line: SimGrid 3.32's collective algorithms as waitlab offers
// them (the presets or collective sets, the catalogue of every algorithm SimGrid accepts per
// collective, the checks of a choice: unknown, unsupported embedded, wrong for the run's size
// or counts), the merge of preset and overrides (chosen_collective_algorithms(), the only
// one), and the SimGrid configuration (--cfg=key:value) a run uses (detail::simgrid_config()).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "sim/options.hpp"

namespace waitlab::sim {

// Names of the collective sets (presets) and the SimGrid algorithm each uses per collective.
struct CollectiveSet {
  std::string name;
  std::string description;
  std::vector<std::pair<std::string, std::string>> algorithms;  // smpi key suffix -> algorithm
};
const std::vector<CollectiveSet>& collective_sets();

// The collectives whose algorithm SMPI lets one choose (the configuration keys smpi/<name> of
// SimGrid 3.32: gather, allgather, allgatherv, allreduce, alltoall, alltoallv, bcast, reduce,
// reduce_scatter, scatter, barrier), each with every algorithm name SimGrid 3.32 accepts for it,
// in SimGrid's order (its table in src/smpi/colls/smpi_coll.cpp; "default" is SimGrid's default
// selector's choice). SimGrid aborts on any other name: waitlab checks before it starts.
struct CollectiveAlgorithms {
  std::string collective;               // "alltoall"
  std::vector<std::string> algorithms;  // "default", "2dmesh", ...
};
const std::vector<CollectiveAlgorithms>& collective_algorithms();
// What is wrong with choosing `algorithm` for `collective` ("" if nothing): the message names
// the collective and the valid names ("unknown collective 'x' (collectives: ...)", "collective
// 'alltoall' has no algorithm 'x'; did you mean ...? (SimGrid 3.32's algorithms for alltoall: ...)").
std::string collective_algorithm_error(const std::string& collective, const std::string& algorithm);
// Why waitlab's engine cannot run a name SimGrid 3.32 knows ("" if it can): seven of them crash,
// deadlock or fail embedded (or in SimGrid itself); collective_algorithm_error() refuses them.
std::string unsupported_algorithm(const std::string& collective, const std::string& algorithm);
// The collective set a run really uses: SmpiDefault semantics always use SimGrid's default
// selector. Throws InputError for an unknown set.
const CollectiveSet& effective_collective_set(const RunOptions& options);
// What a run asks SimGrid for: the set's algorithms, then RunOptions::collective_algorithms on
// top, each checked (InputError "run.collective_algorithms: ..."; SimGrid aborts on an unknown
// name).
std::vector<std::pair<std::string, std::string>> chosen_collective_algorithms(const RunOptions& options);
// The rules of the chosen algorithms that depend on the run's size (InputError): SimGrid's
// barrier 'ompi_two_procs' deadlocks on more than 2 ranks.
void check_collectives_for(const RunOptions& options, int ranks);
// The algorithm every choosable collective runs with (in collective_algorithms() order): the
// override of RunOptions::collective_algorithms, else the preset's (SimGrid's default selector
// under SmpiDefault semantics), else "default".
std::vector<std::pair<std::string, std::string>> effective_collective_algorithms(const RunOptions& options);
// Whether `algorithm` of `collective` communicates the same whatever its messages hold (its
// pattern depends on ranks and sizes only), so that Waitlab semantics may skip copying
// payloads. Not so for the SMP-aware algorithms and selectors (they exchange host lists),
// the arrival-pattern ones (headers), the RMA one (window addresses), `automatic` (timings).
bool payload_free(const std::string& collective, const std::string& algorithm);
// Whether a run copies message payloads: always under SmpiDefault semantics; under Waitlab
// semantics with RunOptions::copy_payloads or when an effective algorithm is not payload_free().
bool copies_payloads(const RunOptions& options);
// The run's reduce_scatter algorithm if it takes equal receive counts only ("mpich_noncomm",
// "automatic": SimGrid asserts it and aborts), else "": the engine refuses an
// MPI_Reduce_scatter with unequal counts under it.
std::string equal_counts_reduce_scatter(const RunOptions& options);

namespace detail {

// The SimGrid configuration (--cfg=key:value) a run uses, in the order it is applied: SMPI's
// network model and settings, the eager protocol of the run's semantics, the ideal network's
// removed overheads, the collective algorithms (chosen_collective_algorithms()). Throws
// InputError for a bad eager threshold, network scale or collective choice.
std::vector<std::string> simgrid_config(const RunOptions& options);

}  // namespace detail

}  // namespace waitlab::sim
