// simulate(): one simulation per forked child (SimGrid 3.32 cannot run two engines in one
// process). The child inherits the workload and perturbation objects, runs the simulation,
// and writes a result file (status, message, statistics, the online estimate, then the trace as .wlt); the
// parent reads it back. The child's stdout goes to /dev/null and its stderr (SimGrid's
// log) to a file whose tail explains a crash; progress lines and warnings go to the parent's
// stderr. The child dies with the parent; a signal to the parent is passed on to it
// (util/signals.hpp). Before forking, the memory the run needs is compared with what the host
// allows (sim/resources.hpp).
#include "sim/engine.hpp"

#include <fcntl.h>
#include <malloc.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include "analysis/trace/atomic_file.hpp"
#include "util/error.hpp"
#include "analysis/trace/wlt.hpp"
#include "models/spec.hpp"
#include "sim/resources.hpp"
#include "util/signals.hpp"
#include "sim/simulation.hpp"

namespace waitlab::sim {

namespace {

constexpr char kMagic[8] = {'W', 'L', 'R', 'E', 'S', 'U', 'L', 'T'};
enum class Status : std::uint8_t { Ok = 0, BadInput = 1, Failure = 2 };

std::string temp_base() {
  const char* base = std::getenv("TMPDIR");
  return base && *base ? base : "/tmp";
}

// A private temporary directory, removed with everything in it (also when the process is
// interrupted, or when its parent is killed while the simulation child runs).
class TempDir {
 public:
  TempDir() {
    std::string tmpl = temp_base() + "/waitlab-sim.XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr) {
      // The environment's fault, not waitlab's: said as bad input (exit 2), with what to do.
      const int err = errno;
      const char* env = std::getenv("TMPDIR");
      throw InputError(std::string(env && *env ? "TMPDIR=" + std::string(env) : std::string("/tmp")) +
                       ": cannot create the simulation's temporary directory " + tmpl + ": " + std::strerror(err) +
                       " (set TMPDIR to a writable directory)");
    }
    path_ = tmpl;
    cleanup_.emplace(path_, util::CleanupPath::Kind::Tree);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
  std::optional<util::CleanupPath> cleanup_;
};

template <class T>
void put(std::ostream& out, const T& v) {
  out.write(reinterpret_cast<const char*>(&v), sizeof v);
}
template <class T>
T get(std::istream& in) {
  T v{};
  in.read(reinterpret_cast<char*>(&v), sizeof v);
  return v;
}

void put_string(std::ostream& out, const std::string& s) {
  put(out, static_cast<std::uint64_t>(s.size()));
  out.write(s.data(), static_cast<std::streamsize>(s.size()));
}
std::string get_string(std::istream& in) {
  std::string s(static_cast<std::size_t>(get<std::uint64_t>(in)), '\0');
  in.read(s.data(), static_cast<std::streamsize>(s.size()));
  return s;
}

// The online estimate, before the trace (parent and child are the same binary).
void put_estimate(std::ostream& out, const std::optional<minprofile::Result>& e) {
  put(out, static_cast<std::uint8_t>(e.has_value()));
  if (!e) return;
  put(out, e->percentile);
  for (const bool c : e->computed) put(out, static_cast<std::uint8_t>(c));
  put(out, static_cast<std::uint64_t>(e->ranks));
  put(out, e->wall_time);
  for (const double t : e->rank_time) put(out, t);
  put(out, static_cast<std::uint64_t>(e->paths.size()));
  for (const auto& p : e->paths) put_string(out, p);
  put(out, static_cast<std::uint64_t>(e->rows.size()));
  for (const auto& r : e->rows) put(out, r);
}
std::optional<minprofile::Result> get_estimate(std::istream& in) {
  if (get<std::uint8_t>(in) == 0) return std::nullopt;
  minprofile::Result e;
  e.percentile = get<double>(in);
  for (auto& c : e.computed) c = get<std::uint8_t>(in) != 0;
  e.ranks = static_cast<std::size_t>(get<std::uint64_t>(in));
  e.wall_time = get<double>(in);
  e.rank_time.resize(e.ranks);
  for (auto& t : e.rank_time) t = get<double>(in);
  e.paths.resize(static_cast<std::size_t>(get<std::uint64_t>(in)));
  for (auto& p : e.paths) p = get_string(in);
  e.rows.resize(static_cast<std::size_t>(get<std::uint64_t>(in)));
  for (auto& r : e.rows) r = get<minprofile::Row>(in);
  if (!in) throw std::runtime_error("the simulation result ends inside the online estimate");
  return e;
}

void put_totals(std::ostream& out, const trace::RecordTotals& t) {
  put(out, t.first_init);
  put(out, t.last_finalize);
  put(out, t.first_event);
  put(out, t.last_event);
  put(out, t.compute_intervals);
  put(out, t.nominal_compute);
  for (const auto n : t.injected_intervals) put(out, n);
  put(out, static_cast<std::uint64_t>(t.injected_by_rank[0].size()));
  for (const auto& v : t.injected_by_rank)
    out.write(reinterpret_cast<const char*>(v.data()),
              static_cast<std::streamsize>(v.size() * sizeof(double)));
}
trace::RecordTotals get_totals(std::istream& in) {
  trace::RecordTotals t;
  t.first_init = get<double>(in);
  t.last_finalize = get<double>(in);
  t.first_event = get<double>(in);
  t.last_event = get<double>(in);
  t.compute_intervals = get<std::uint64_t>(in);
  t.nominal_compute = get<double>(in);
  for (auto& n : t.injected_intervals) n = get<std::uint64_t>(in);
  const auto ranks = static_cast<std::size_t>(get<std::uint64_t>(in));
  for (auto& v : t.injected_by_rank) {
    v.resize(in ? ranks : 0);
    in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(double)));
  }
  if (!in) throw std::runtime_error("the simulation result ends inside the trace's totals");
  return t;
}

// The result of a run: status, message, then for a run that ended well its statistics, the
// trace's totals, the online estimate and the trace's truth flag and attributes (the trace
// itself is in a .wlt file: RunOptions::trace_file or the temporary directory's trace.wlt).
void write_result(const std::string& path, Status status, const std::string& message, const RunResult* r) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(kMagic, sizeof kMagic);
  put(out, static_cast<std::uint8_t>(status));
  put(out, static_cast<std::uint64_t>(message.size()));
  out.write(message.data(), static_cast<std::streamsize>(message.size()));
  if (r != nullptr) {
    put(out, r->stats.simulated_time);
    put(out, r->stats.mpi_operations);
    put(out, r->stats.events);
    put_totals(out, r->stats.totals);
    put_estimate(out, r->estimate);
    put(out, static_cast<std::uint8_t>(r->trace.has_truth));
    put(out, static_cast<std::uint64_t>(r->trace.attributes.size()));
    for (const auto& a : r->trace.attributes) {
      put_string(out, a.key);
      put_string(out, a.value);
    }
  }
  out.flush();
  if (!out) throw std::runtime_error("cannot write the simulation result to " + path);
}

std::string tail(const std::string& path, std::size_t lines) {
  std::ifstream in(path);
  std::deque<std::string> last;
  for (std::string line; std::getline(in, line);) {
    last.push_back(line);
    if (last.size() > lines) last.pop_front();
  }
  std::string out;
  for (const auto& l : last) out += "\n  " + l;
  return out;
}

// SimGrid checks routes only when a message needs one, and then aborts: "[0.0005]
// ...network_cm02.cpp:322: [root/CRITICAL] You're trying to send data from h0 to h1 but
// there is no connecting path between these two hosts." (or a zone's "No route between").
// Returns that fault in waitlab's words, or "" when the log holds none.
std::string missing_route(const std::string& log) {
  std::ifstream in(log);
  std::string line;
  for (std::size_t n = 0; n < 100000 && std::getline(in, line); ++n) {
    const std::size_t from = line.find("send data from ");
    const std::size_t path = line.find(" but there is no connecting path");
    const std::size_t zone = line.find("No route between ");
    if (from == std::string::npos && zone == std::string::npos) continue;
    std::string when;
    if (line.size() > 2 && line[0] == '[') when = line.substr(1, line.find(']') - 1);
    std::string what;
    if (from != std::string::npos && path != std::string::npos && path > from) {
      const std::string pair = line.substr(from + 15, path - from - 15);  // "h0 to h1"
      const std::size_t to = pair.find(" to ");
      what = to == std::string::npos ? "'" + pair + "'"
                                     : "host '" + pair.substr(0, to) + "' to host '" + pair.substr(to + 4) + "'";
      what = "there is no route from " + what;
    } else {
      what = line.substr(zone);
    }
    return what + " (SimGrid aborted at the first message between them" +
           (when.empty() ? std::string() : ", at simulated time " + when + " s") +
           "): declare a <route> between them, or place the ranks on hosts that have one";
  }
  return {};
}

// SimGrid 3.32's lazy resource model dies with "The Impossible Did Happen (yet again)" when
// the clock is so large that the run's short steps are lost in its precision (a core latency
// of 1e5 s with a 25 us noise: clock 390060.000575 s). Returns the clock it names, or "".
std::string impossible_happened(const std::string& log) {
  std::ifstream in(log);
  std::string line;
  for (std::size_t n = 0; n < 100000 && std::getline(in, line); ++n) {
    if (line.find("The Impossible Did Happen") == std::string::npos) continue;
    if (line.size() > 2 && line[0] == '[' && line.find(']') != std::string::npos)
      return line.substr(1, line.find(']') - 1);
    return "?";
  }
  return {};
}

// ", the platform's largest latency is core_latency 1e+06 s" (empty for an XML platform).
std::string largest_latency(const models::PlatformDesc& p) {
  if (p.kind == models::PlatformKind::Xml) return {};
  const bool cluster = p.kind == models::PlatformKind::Cluster;
  const std::vector<std::pair<const char*, double>> links =
      cluster ? std::vector<std::pair<const char*, double>>{{"latency", p.network_link.latency},
                                                            {"loopback_latency", p.loopback.latency}}
              : std::vector<std::pair<const char*, double>>{{"core_latency", p.core_link.latency},
                                                            {"socket_latency", p.socket_link.latency},
                                                            {"nic_latency", p.nic_link.latency},
                                                            {"network_latency", p.network_link.latency}};
  const auto top = std::max_element(links.begin(), links.end(),
                                    [](const auto& a, const auto& b) { return a.second < b.second; });
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", top->second);
  return std::string("; the platform's largest latency is ") + top->first + " = " + buf + " s";
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return s;
}

// Where the child writes the trace.
std::string trace_path(const TempDir& dir, const RunOptions& options) {
  return options.trace_file.empty() ? dir.file("trace.wlt") : options.trace_file;
}

// Runs in the child; never returns.
[[noreturn]] void child(const TempDir& dir, const models::PlatformDesc& platform,
                        const models::Workload& workload, const models::Perturbations& perturbations,
                        const RunOptions& options, const MemoryWatch& watch) {
  // Progress lines and memory warnings go to the parent's stderr, SimGrid's log to a file.
  const int progress_fd = dup(STDERR_FILENO);
  const int null_fd = open("/dev/null", O_WRONLY);
  const int log_fd = open(dir.file("stderr.log").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (null_fd >= 0) dup2(null_fd, STDOUT_FILENO);
  if (log_fd >= 0) dup2(log_fd, STDERR_FILENO);
  int code = 0;
  try {
    try {
      const auto phase = [&dir](const char* what) {
        std::ofstream(dir.file("phase"), std::ios::trunc) << what;
      };
      Recording recording(
          dir.file("records"), static_cast<std::size_t>(workload.ranks()),
          options.record_buffer_bytes > 0 ? options.record_buffer_bytes : Recording::kBufferBytes);
      RunResult r =
          detail::run_here(platform, workload, perturbations, options, progress_fd, recording, phase, watch);
      for (const auto& a : options.attributes) r.trace.set_attribute(a.key, a.value);
      // The trace, from the records on disk; the parent reads it back if it asked for it.
      if (options.trace_file.empty() && !options.return_trace)
        r.stats.totals = recording.totals();
      else
        trace::write_file_atomic(trace_path(dir, options), [&](std::ostream& out) {
          r.stats.totals = recording.write_wlt(r.trace, out);
        });
      write_result(dir.file("result"), Status::Ok, "", &r);
    } catch (const InputError& e) {
      write_result(dir.file("result"), Status::BadInput, e.what(), nullptr);
    } catch (const std::bad_alloc&) {
      // More than the memory estimate counted met the host's limit: bad input for this host,
      // named as such (exit 2).
      write_result(dir.file("result"), Status::BadInput,
                   "out of memory in the simulation: it needed more memory than the host allows (ulimit -v, the "
                   "machine's memory), more than the estimate before the run counted (a collective algorithm's "
                   "buffers, or WAITLAB_MEMORY_CHECK); simulate fewer ranks or smaller messages, or give it more "
                   "memory",
                   nullptr);
    } catch (const std::exception& e) {
      write_result(dir.file("result"), Status::Failure, e.what(), nullptr);
    }
  } catch (...) {
    code = 3;
  }
  std::fflush(nullptr);
  _exit(code);  // no atexit handlers or static destructors of the parent's state
}

}  // namespace

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

std::vector<std::pair<std::string, std::string>> effective_collective_algorithms(const RunOptions& options) {
  const CollectiveSet& preset = detail::effective_collectives(options);
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& c : collective_algorithms()) {
    std::string algo = "default";
    for (const auto& [k, a] : preset.algorithms)
      if (k == c.collective) algo = a;
    for (const auto& [k, a] : options.collective_algorithms)
      if (k == c.collective) algo = a;
    out.emplace_back(c.collective, algo);
  }
  return out;
}

RunResult simulate(const models::PlatformDesc& platform, const models::Workload& workload,
                   const models::Perturbations& perturbations, const RunOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  // Cheap checks in the parent give the clearest messages.
  if (workload.ranks() < 1) throw InputError("the workload has no ranks");
  (void)detail::simgrid_config(options);  // validates the collective set and the eager threshold
  for (const auto& [coll, algo] : effective_collective_algorithms(options))
    if (coll == "barrier" && algo == "ompi_two_procs" && workload.ranks() != 2)
      throw InputError("run.collective_algorithms: SimGrid's barrier algorithm 'ompi_two_procs' is for 2 ranks only "
                       "(it deadlocks on more); this run has " + std::to_string(workload.ranks()));
  if (platform.kind != models::PlatformKind::Xml) (void)models::place(platform, workload.ranks());

  // What the caller freed before (a replay's trace records, once converted) goes back to the
  // system: otherwise it stays resident in this process and in the child, which shares it.
  malloc_trim(0);
  // What the run needs of the host, before anything is started: a run that cannot fit is
  // refused in a second rather than killed after an hour.
  const HostLimits limits = read_host_limits();
  const MemoryNeed need = estimate_memory(workload, options, limits);
  if (const std::string warning = check_memory(need, limits); !warning.empty())
    std::cerr << "waitlab: warning: " << warning << "\n";
  MemoryWatch watch;
  watch.base = limits.self_rss;
  watch.estimate = need.resident;
  watch.limit = limits.memory_limit();

  TempDir dir;
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  // The child dies with us (SIGTERM: it then removes the temporary directory itself).
  const pid_t pid = util::fork_process(SIGTERM, true);
  if (pid == 0) child(dir, platform, workload, perturbations, options, watch);

  int status = 0;
  struct rusage usage = {};
  while (wait4(pid, &status, 0, &usage) < 0) {
    if (errno != EINTR) throw std::runtime_error(std::string("waitpid failed: ") + std::strerror(errno));
  }
  util::child_ended(pid);
  // Interrupted: the signal was passed on to the child, which has ended; nothing is kept.
  if (util::interruption() != 0) util::exit_interrupted();
  const int stopped_by = WIFSIGNALED(status) ? WTERMSIG(status)
                         : WIFEXITED(status) && WEXITSTATUS(status) > 128 ? WEXITSTATUS(status) - 128
                                                                          : 0;
  // Someone stopped the simulation process itself (its handler exits with 128 + signal):
  // the command cannot go on without it.
  if (stopped_by == SIGINT || stopped_by == SIGTERM || stopped_by == SIGHUP) util::exit_interrupted(stopped_by);
  const std::uint64_t peak_rss = static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;  // KiB on Linux
  const std::string log = dir.file("stderr.log");
  const std::string result_path = dir.file("result");
  std::ifstream in(result_path, std::ios::binary);
  char magic[sizeof kMagic] = {};
  if (in) in.read(magic, sizeof magic);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !in ||
      std::memcmp(magic, kMagic, sizeof kMagic) != 0) {
    std::string how = WIFSIGNALED(status) ? "was killed by signal " + std::to_string(WTERMSIG(status)) +
                                                " (" + strsignal(WTERMSIG(status)) + ")"
                      : WIFEXITED(status) ? "exited with code " + std::to_string(WEXITSTATUS(status))
                                          : "ended abnormally";
    std::string msg = "the simulation process " + how + " without a result";
    // SIGKILL is what the kernel's out-of-memory killer sends.
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
      msg += " after using " + human_bytes(peak_rss) + " of memory (estimated need " + human_bytes(need.resident) +
             (limits.memory_limit() > 0 ? ", " + human_bytes(limits.memory_limit()) + " available" : std::string()) +
             "): if the kernel's out-of-memory killer did it, simulate fewer ranks or iterations";
    const std::string t = tail(log, 20);
    if (!t.empty()) msg += "; its last messages:" + t;
    // SimGrid aborts (instead of throwing) on some malformed platforms: blame the input.
    if (const std::string route = missing_route(log); !route.empty())
      throw InputError("platform" + (platform.xml_file.empty() ? std::string() : " file " + platform.xml_file) +
                       ": " + route);
    if (const std::string when = impossible_happened(log); !when.empty())
      throw InputError("platform" + (platform.xml_file.empty() ? std::string() : " file " + platform.xml_file) +
                       ": SimGrid's resource model failed at simulated time " + when +
                       " s (\"The Impossible Did Happen\"): its double-precision clock cannot resolve the run's "
                       "short steps that far out" + largest_latency(platform) +
                       "; shorten the latencies or the run");
    if (read_text(dir.file("phase")) == "platform")
      throw InputError("platform" +
                       (platform.xml_file.empty() ? std::string() : " file " + platform.xml_file) +
                       ": SimGrid rejected it (" + msg + ")");
    throw std::runtime_error(msg);
  }
  const auto st = static_cast<Status>(get<std::uint8_t>(in));
  const auto len = get<std::uint64_t>(in);
  std::string message(static_cast<std::size_t>(len), '\0');
  in.read(message.data(), static_cast<std::streamsize>(len));
  if (st == Status::BadInput) throw InputError(message);
  if (st != Status::Ok) {
    const std::string t = tail(log, 20);
    throw std::runtime_error("simulation failed: " + message +
                             (t.empty() ? "" : "; SimGrid's last messages:" + t));
  }
  RunResult r;
  r.stats.simulated_time = get<double>(in);
  r.stats.mpi_operations = get<std::uint64_t>(in);
  r.stats.events = get<std::uint64_t>(in);
  r.stats.totals = get_totals(in);
  r.estimate = get_estimate(in);
  const bool has_truth = get<std::uint8_t>(in) != 0;
  std::vector<trace::Attribute> attributes(static_cast<std::size_t>(get<std::uint64_t>(in)));
  for (auto& a : attributes) {
    a.key = get_string(in);
    a.value = get_string(in);
  }
  if (!in) throw std::runtime_error("the simulation result ends inside the trace's attributes");
  if (options.return_trace) {
    r.trace = trace::read_wlt(trace_path(dir, options));
  } else {
    r.trace.has_truth = has_truth;
    r.trace.attributes = std::move(attributes);
  }
  // Warnings of a successful run (SimGrid's, unusual) are passed on rather than lost, except
  // AddressSanitizer's note that it cannot follow SimGrid's stack switches (ASan builds only).
  // MPI errors SMPI reports without failing the call (a message longer than its receive:
  // "Truncating message - should not happen", MPI_ERR_TRUNCATE) are counted, in summary.json
  // too (RunStats::smpi_errors), and said once with the first of them.
  std::ifstream warnings(log);
  std::string first_error;
  for (std::string line; std::getline(warnings, line);) {
    if (line.find("ASan is ignoring requested __asan_handle_no_return") != std::string::npos ||
        line == "False positive error reports may follow" ||
        line == "For details see https://github.com/google/sanitizers/issues/189")
      continue;
    if (line.find("Truncating message") != std::string::npos || line.find("MPI_ERR_") != std::string::npos) {
      if (r.stats.smpi_errors++ == 0) first_error = line;
      continue;
    }
    std::cerr << "[simulation] " << line << "\n";
  }
  if (r.stats.smpi_errors > 0) {
    r.stats.smpi_first_error = first_error.substr(0, 300);
    std::cerr << "waitlab: warning: SMPI reported " << r.stats.smpi_errors
              << " MPI error(s) in the simulation (the run's message sizes disagree with its receives); the first: "
              << r.stats.smpi_first_error << "\n";
  }
  r.stats.host_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.stats.peak_rss_bytes = peak_rss;
  r.stats.estimated_rss_bytes = limits.self_rss + need.resident;
  r.stats.base_rss_bytes = limits.self_rss;
  return r;
}

}  // namespace waitlab::sim
