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
#include <initializer_list>
#include <iostream>
#include <optional>

#include "analysis/trace/atomic_file.hpp"
#include "util/error.hpp"
#include "util/memory.hpp"
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

// The first of the log's first 100,000 lines that holds one of `needles` ("" if none).
std::string log_line_with(const std::string& log, std::initializer_list<const char*> needles) {
  std::ifstream in(log);
  std::string line;
  for (std::size_t n = 0; n < 100000 && std::getline(in, line); ++n)
    for (const char* needle : needles)
      if (line.find(needle) != std::string::npos) return line;
  return {};
}

// The simulated time a SimGrid log line starts with ("[0.000500] ..." -> "0.000500"), or "".
std::string log_clock(const std::string& line) {
  const std::size_t close = line.find(']');
  return line.size() > 2 && line[0] == '[' && close != std::string::npos ? line.substr(1, close - 1) : "";
}

// SimGrid checks routes only when a message needs one, and then aborts: "[0.0005]
// ...network_cm02.cpp:322: [root/CRITICAL] You're trying to send data from h0 to h1 but
// there is no connecting path between these two hosts." (or a zone's "No route between").
// Returns that fault in waitlab's words, or "" when the log holds none.
std::string missing_route(const std::string& log) {
  const std::string line = log_line_with(log, {"send data from ", "No route between "});
  if (line.empty()) return {};
  const std::size_t from = line.find("send data from ");
  const std::size_t path = line.find(" but there is no connecting path");
  std::string what;
  if (from != std::string::npos && path != std::string::npos && path > from) {
    const std::string pair = line.substr(from + 15, path - from - 15);  // "h0 to h1"
    const std::size_t to = pair.find(" to ");
    what = "there is no route from " +
           (to == std::string::npos ? "'" + pair + "'"
                                    : "host '" + pair.substr(0, to) + "' to host '" + pair.substr(to + 4) + "'");
  } else {
    what = line.substr(line.find("No route between "));
  }
  const std::string when = log_clock(line);
  return what + " (SimGrid aborted at the first message between them" +
         (when.empty() ? std::string() : ", at simulated time " + when + " s") +
         "): declare a <route> between them, or place the ranks on hosts that have one";
}

// SimGrid 3.32's lazy resource model dies with "The Impossible Did Happen (yet again)" when
// the clock is so large that the run's short steps are lost in its precision (a core latency
// of 1e5 s with a 25 us noise: clock 390060.000575 s). Returns the clock it names ("?" if
// none), or "" when the log holds no such line.
std::string impossible_happened(const std::string& log) {
  const std::string line = log_line_with(log, {"The Impossible Did Happen"});
  if (line.empty()) return {};
  const std::string when = log_clock(line);
  return when.empty() ? "?" : when;
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

RunResult simulate(const models::PlatformDesc& platform, const models::Workload& workload,
                   const models::Perturbations& perturbations, const RunOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  // Cheap checks in the parent give the clearest messages.
  if (workload.ranks() < 1) throw InputError("the workload has no ranks");
  if (!valid_eager_threshold(options.eager_threshold))
    throw InputError("eager threshold must be a non-negative number of bytes");
  check_collectives_for(options, workload.ranks());  // the collective set, the algorithms' names and rules
  if (platform.kind != models::PlatformKind::Xml) (void)models::place(platform, workload.ranks());

  // What the caller freed before (a replay's trace records, once converted) goes back to the
  // system: otherwise it stays resident in this process and in the child, which shares it.
  util::release_freed_memory();
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
