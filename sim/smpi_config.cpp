#include "sim/smpi_config.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "models/spec.hpp"
#include "util/error.hpp"

namespace waitlab::sim {

const std::vector<CollectiveSet>& collective_sets() {
  static const std::vector<CollectiveSet> sets = {
      {"fast",
       "tree algorithms whose simulation cost grows as N log N (SMPI-NOTES.md §3): the default",
       {{"bcast", "binomial_tree"},
        {"reduce", "binomial"},
        {"allreduce", "redbcast"},
        {"barrier", "ompi_tree"},
        {"gather", "ompi_binomial"},
        {"scatter", "ompi_binomial"},
        {"allgather", "GB"},
        {"alltoall", "bruck"}}},
      {"mpi",
       "closer to what MPICH/Open MPI use for small messages (recursive doubling for allreduce, "
       "barrier and allgather); 5-15x more simulation cost than fast",
       {{"bcast", "binomial_tree"},
        {"reduce", "binomial"},
        {"allreduce", "rdb"},
        {"barrier", "ompi_recursivedoubling"},
        {"gather", "ompi_binomial"},
        {"scatter", "ompi_binomial"},
        {"allgather", "rdb"},
        {"alltoall", "bruck"}}},
      {"default",
       "SimGrid's default selector (linear barrier, gather, scatter and allgather, reduce+bcast "
       "allreduce, binomial bcast): what smpi-default semantics use; quadratic cost at scale",
       {}},
  };
  return sets;
}

const std::vector<CollectiveAlgorithms>& collective_algorithms() {
  // SimGrid 3.32's own table (smpi_coll_descriptions in src/smpi/colls/smpi_coll.cpp, the list
  // its "Collective '...' has no algorithm '...'! Valid algorithms: ..." message prints), in its
  // order. tests/sim/test_collective_algorithms.cpp runs every name through a simulation.
  static const std::vector<CollectiveAlgorithms> table = {
      {"gather",
       {"default", "ompi", "ompi_basic_linear", "ompi_binomial", "ompi_linear_sync", "mpich", "mvapich2",
        "mvapich2_two_level", "impi", "automatic"}},
      {"allgather",
       {"default", "2dmesh", "3dmesh", "bruck", "GB", "loosely_lr", "NTSLR", "NTSLR_NB", "pair", "rdb", "rhv", "ring",
        "SMP_NTS", "smp_simple", "spreading_simple", "ompi", "ompi_neighborexchange", "mvapich2", "mvapich2_smp",
        "mpich", "impi", "automatic"}},
      {"allgatherv",
       {"default", "GB", "pair", "ring", "ompi", "ompi_neighborexchange", "ompi_bruck", "mpich", "mpich_rdb",
        "mpich_ring", "mvapich2", "impi", "automatic"}},
      {"allreduce",
       {"default", "lr", "rab1", "rab2", "rab_rdb", "rdb", "smp_binomial", "smp_binomial_pipeline", "smp_rdb",
        "smp_rsag", "smp_rsag_lr", "smp_rsag_rab", "redbcast", "ompi", "ompi_ring_segmented", "mpich", "mvapich2",
        "mvapich2_rs", "mvapich2_two_level", "impi", "rab", "automatic"}},
      {"alltoall",
       {"default", "2dmesh", "3dmesh", "basic_linear", "bruck", "pair", "pair_rma", "pair_light_barrier",
        "pair_mpi_barrier", "pair_one_barrier", "rdb", "ring", "ring_light_barrier", "ring_mpi_barrier",
        "ring_one_barrier", "mvapich2", "mvapich2_scatter_dest", "ompi", "mpich", "impi", "automatic"}},
      {"alltoallv",
       {"default", "bruck", "pair", "pair_light_barrier", "pair_mpi_barrier", "pair_one_barrier", "ring",
        "ring_light_barrier", "ring_mpi_barrier", "ring_one_barrier", "ompi", "mpich", "ompi_basic_linear",
        "mvapich2", "impi", "automatic"}},
      {"bcast",
       {"default", "arrival_pattern_aware", "arrival_pattern_aware_wait", "arrival_scatter", "binomial_tree",
        "flattree", "flattree_pipeline", "NTSB", "NTSL", "NTSL_Isend", "scatter_LR_allgather",
        "scatter_rdb_allgather", "SMP_binary", "SMP_binomial", "SMP_linear", "ompi", "ompi_split_bintree",
        "ompi_pipeline", "mpich", "mvapich2", "mvapich2_inter_node", "mvapich2_intra_node",
        "mvapich2_knomial_intra_node", "impi", "automatic"}},
      {"reduce",
       {"default", "arrival_pattern_aware", "binomial", "flat_tree", "NTSL", "scatter_gather", "ompi", "ompi_chain",
        "ompi_pipeline", "ompi_basic_linear", "ompi_in_order_binary", "ompi_binary", "ompi_binomial", "mpich",
        "mvapich2", "mvapich2_knomial", "mvapich2_two_level", "impi", "rab", "automatic"}},
      {"reduce_scatter",
       {"default", "ompi", "ompi_basic_recursivehalving", "ompi_ring", "ompi_butterfly", "mpich", "mpich_pair",
        "mpich_rdb", "mpich_noncomm", "mvapich2", "impi", "automatic"}},
      {"scatter",
       {"default", "ompi", "ompi_basic_linear", "ompi_linear_nb", "ompi_binomial", "mpich", "mvapich2",
        "mvapich2_two_level_binomial", "mvapich2_two_level_direct", "impi", "automatic"}},
      {"barrier",
       {"default", "ompi", "ompi_basic_linear", "ompi_two_procs", "ompi_tree", "ompi_bruck", "ompi_recursivedoubling",
        "ompi_doublering", "mpich_smp", "mpich", "mvapich2_pair", "mvapich2", "impi", "automatic"}},
  };
  return table;
}

namespace {

// Names SimGrid 3.32 knows that waitlab's engine cannot run, and why (measured: every other
// name runs, tests/sim/test_collective_algorithms.cpp).
struct Unsupported {
  const char* collective;
  const char* algorithm;
  const char* why;
};
constexpr const char* kAnySource =
    "it receives from MPI_ANY_SOURCE, which SimGrid 3.32 cannot match when SMPI runs embedded without "
    "privatization, as in waitlab (the simulation crashes; smpirun runs it)";
constexpr Unsupported kUnsupported[] = {
    {"bcast", "arrival_pattern_aware", kAnySource},
    {"bcast", "arrival_pattern_aware_wait", kAnySource},
    {"bcast", "SMP_linear",
     "it fails in SimGrid 3.32 on nodes of one core (smpirun: a rank sends to a rank that has finished; in waitlab "
     "the ranks deadlock)"},
    {"bcast", "automatic", "it tries every bcast algorithm, arrival_pattern_aware among them (which receives from "
                           "MPI_ANY_SOURCE: the simulation crashes; smpirun fails with MPI_ERR_TRUNCATE)"},
    {"reduce", "arrival_pattern_aware", kAnySource},
    {"reduce", "automatic", "it tries every reduce algorithm, arrival_pattern_aware among them (which receives from "
                            "MPI_ANY_SOURCE: the simulation crashes)"},
    {"barrier", "automatic", "it deadlocks in SimGrid 3.32 (smpirun too)"},
};

// The algorithms whose communication depends on ranks and sizes only (payload_free()): the
// presets' and SimGrid's default selector's, and those measured to give the same times with
// and without payload copies (tests/sim/test_collective_algorithms.cpp checks every one). The
// selectors (ompi, mpich, mvapich2, impi) are not among them: on nodes of several cores they
// may take SMP-aware paths, which exchange host lists.
const std::vector<std::pair<std::string, std::vector<std::string>>>& payload_free_table() {
  static const std::vector<std::pair<std::string, std::vector<std::string>>> table = {
      {"gather", {"default", "ompi_basic_linear", "ompi_binomial", "ompi_linear_sync"}},
      {"allgather",
       {"default", "2dmesh", "3dmesh", "bruck", "GB", "NTSLR", "NTSLR_NB", "pair", "rdb", "rhv", "ring",
        "spreading_simple", "ompi_neighborexchange"}},
      {"allgatherv",
       {"default", "GB", "pair", "ring", "ompi_neighborexchange", "ompi_bruck", "mpich_rdb", "mpich_ring"}},
      {"allreduce", {"default", "lr", "rab1", "rab2", "rab_rdb", "rdb", "redbcast", "ompi_ring_segmented", "rab"}},
      {"alltoall",
       {"default", "2dmesh", "3dmesh", "basic_linear", "bruck", "pair", "pair_light_barrier", "pair_mpi_barrier",
        "pair_one_barrier", "rdb", "ring", "ring_light_barrier", "ring_mpi_barrier", "ring_one_barrier"}},
      {"alltoallv",
       {"default", "bruck", "pair", "pair_light_barrier", "pair_mpi_barrier", "pair_one_barrier", "ring",
        "ring_light_barrier", "ring_mpi_barrier", "ring_one_barrier", "ompi_basic_linear"}},
      {"bcast",
       {"default", "binomial_tree", "flattree", "flattree_pipeline", "NTSB", "NTSL", "NTSL_Isend",
        "scatter_LR_allgather", "scatter_rdb_allgather", "ompi_split_bintree", "ompi_pipeline"}},
      {"reduce",
       {"default", "binomial", "flat_tree", "NTSL", "scatter_gather", "ompi_chain", "ompi_pipeline",
        "ompi_basic_linear", "ompi_in_order_binary", "ompi_binary", "ompi_binomial", "rab"}},
      {"reduce_scatter",
       {"default", "ompi_basic_recursivehalving", "ompi_ring", "ompi_butterfly", "mpich_pair", "mpich_rdb"}},
      {"scatter", {"default", "ompi_basic_linear", "ompi_linear_nb", "ompi_binomial"}},
      {"barrier",
       {"default", "ompi_basic_linear", "ompi_tree", "ompi_bruck", "ompi_recursivedoubling", "ompi_doublering"}},
  };
  return table;
}

}  // namespace

std::string collective_algorithm_error(const std::string& collective, const std::string& algorithm) {
  const auto join = [](const std::vector<std::string>& v) {
    std::string out;
    for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
    return out;
  };
  const auto hint = [](const std::string& name, const std::vector<std::string>& names) {
    const std::string best = models::did_you_mean(name, names);
    return best.empty() ? std::string() : "; did you mean '" + best + "'?";
  };
  std::vector<std::string> collectives;
  for (const auto& c : collective_algorithms()) {
    if (c.collective != collective) {
      collectives.push_back(c.collective);
      continue;
    }
    const std::string valid = " (SimGrid 3.32's algorithms for " + collective + ": " + join(c.algorithms) + ")";
    if (const std::string why = unsupported_algorithm(collective, algorithm); !why.empty())
      return "collective '" + collective + "': waitlab cannot run SimGrid's algorithm '" + algorithm + "': " + why +
             valid;
    for (const auto& a : c.algorithms)
      if (a == algorithm) return "";
    return "collective '" + collective + "' has no algorithm '" + algorithm + "'" + hint(algorithm, c.algorithms) +
           valid;
  }
  return "unknown collective '" + collective + "'" + hint(collective, collectives) +
         " (collectives whose algorithm SMPI lets one choose: " + join(collectives) + ")";
}

std::string unsupported_algorithm(const std::string& collective, const std::string& algorithm) {
  for (const auto& u : kUnsupported)
    if (collective == u.collective && algorithm == u.algorithm) return u.why;
  return "";
}

bool payload_free(const std::string& collective, const std::string& algorithm) {
  for (const auto& [c, names] : payload_free_table())
    if (c == collective) return std::find(names.begin(), names.end(), algorithm) != names.end();
  return false;
}

bool copies_payloads(const RunOptions& options) {
  if (options.semantics == Semantics::SmpiDefault || options.copy_payloads) return true;
  for (const auto& [k, a] : effective_collective_algorithms(options))
    if (!payload_free(k, a)) return true;
  return false;
}

const CollectiveSet& effective_collective_set(const RunOptions& options) {
  const auto& sets = collective_sets();
  const std::string& want =
      options.semantics == Semantics::SmpiDefault ? std::string("default") : options.collectives;
  for (const auto& s : sets)
    if (s.name == want) return s;
  std::string names;
  for (const auto& s : sets) names += (names.empty() ? "" : ", ") + s.name;
  throw InputError("unknown collective set '" + options.collectives + "' (sets: " + names + ")");
}

std::vector<std::pair<std::string, std::string>> chosen_collective_algorithms(const RunOptions& options) {
  std::vector<std::pair<std::string, std::string>> chosen = effective_collective_set(options).algorithms;
  for (const auto& choice : options.collective_algorithms) {
    const std::string& key = choice.first;  // (not a structured binding: clang 14 cannot capture one)
    const std::string& algo = choice.second;
    if (const std::string e = collective_algorithm_error(key, algo); !e.empty())
      throw InputError("run.collective_algorithms: " + e);
    const auto it = std::find_if(chosen.begin(), chosen.end(), [&](const auto& p) { return p.first == key; });
    if (it != chosen.end())
      it->second = algo;
    else
      chosen.emplace_back(key, algo);
  }
  return chosen;
}

void check_collectives_for(const RunOptions& options, int ranks) {
  for (const auto& [coll, algo] : chosen_collective_algorithms(options))
    if (coll == "barrier" && algo == "ompi_two_procs" && ranks != 2)
      throw InputError("run.collective_algorithms: SimGrid's barrier algorithm 'ompi_two_procs' is for 2 ranks only "
                       "(it deadlocks on more); this run has " + std::to_string(ranks));
}

std::vector<std::pair<std::string, std::string>> effective_collective_algorithms(const RunOptions& options) {
  const auto chosen = chosen_collective_algorithms(options);
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& c : collective_algorithms()) {
    std::string algo = "default";
    for (const auto& [k, a] : chosen)
      if (k == c.collective) algo = a;
    out.emplace_back(c.collective, algo);
  }
  return out;
}

std::string equal_counts_reduce_scatter(const RunOptions& options) {
  std::string algorithm;
  for (const auto& [coll, algo] : effective_collective_algorithms(options))
    if (coll == "reduce_scatter" && (algo == "mpich_noncomm" || algo == "automatic")) algorithm = algo;
  return algorithm;
}

namespace detail {

std::vector<std::string> simgrid_config(const RunOptions& options) {
  std::vector<std::string> c = {
      "network/model:SMPI",            // the S4U default (LV08) is WAN-calibrated
      "smpi/simulate-computation:no",  // host time spent in our code must not become simulated time
      "smpi/test:0",
      "smpi/iprobe:0",
      "smpi/errors-are-fatal:no",  // errors come back as return codes: we report them as InputError
  };
  if (options.timing_precision > 0) {
    // SimGrid 3.32 rounds every completion to surf/precision (default 1 ns); rounding errors
    // accumulate over many iterations (docs/scenarios.md, run.timing_precision).
    std::ostringstream p;
    p.precision(17);
    p << "surf/precision:" << options.timing_precision;
    c.push_back(p.str());
  }
  if (options.semantics == Semantics::Waitlab) {
    c.emplace_back("smpi/send-is-detached-thresh:0");
  } else {
    const double t = std::min(options.eager_threshold, static_cast<double>(std::numeric_limits<int>::max()));
    c.push_back("smpi/send-is-detached-thresh:" + std::to_string(static_cast<long long>(std::ceil(t))));
  }
  const NetworkChange& net = options.network;
  if (!(std::isfinite(net.bandwidth_scale) && net.bandwidth_scale > 0))
    throw InputError("network bandwidth scale must be a positive number (got " + std::to_string(net.bandwidth_scale) + ")");
  if (!(std::isfinite(net.latency_scale) && net.latency_scale >= 0))
    throw InputError("network latency scale must be a non-negative number (got " + std::to_string(net.latency_scale) + ")");
  if (net.ideal) {
    // No per-message software overheads, no size-dependent latency or bandwidth factors: an
    // ideal network costs nothing, whatever the message size. Rendezvous still synchronises
    // the sender with its receiver (a matching question, not a timing one).
    for (const char* k : {"smpi/os:0:0:0:0:0", "smpi/or:0:0:0:0:0", "smpi/ois:0:0:0:0:0", "smpi/lat-factor:0:1",
                          "smpi/bw-factor:0:1"})
      c.emplace_back(k);
  }
  if (effective_collective_set(options).algorithms.empty()) c.emplace_back("smpi/coll-selector:default");
  // SimGrid takes an smpi/<collective> key over the selector's choice.
  for (const auto& [key, algo] : chosen_collective_algorithms(options)) c.push_back("smpi/" + key + ":" + algo);
  return c;
}

}  // namespace detail

}  // namespace waitlab::sim
