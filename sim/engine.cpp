// simulate(): one simulation per forked child (SimGrid 3.32 cannot run two engines in one
// process). The child inherits the workload and perturbation objects, runs the simulation,
// and writes a result file (status, message, statistics, the online estimate, then the trace as .wlt); the
// parent reads it back. The child's stdout goes to /dev/null and its stderr (SimGrid's
// log) to a file whose tail explains a crash; progress lines and warnings go to the parent's
// stderr. The child dies with the parent; a signal to the parent is passed on to it
// (sim/signals.hpp). Before forking, the memory the run needs is compared with what the host
// allows (sim/resources.hpp).
#include "sim/engine.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include "analysis/trace/error.hpp"
#include "analysis/trace/wlt.hpp"
#include "sim/resources.hpp"
#include "sim/signals.hpp"
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
    if (mkdtemp(tmpl.data()) == nullptr)
      throw std::runtime_error("cannot create a temporary directory from " + tmpl + ": " +
                               std::strerror(errno));
    path_ = tmpl;
    cleanup_.emplace(path_, CleanupPath::Kind::Tree);
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
  std::optional<CleanupPath> cleanup_;
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

void write_result(const std::string& path, Status status, const std::string& message, const RunResult* r) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(kMagic, sizeof kMagic);
  put(out, static_cast<std::uint8_t>(status));
  put(out, static_cast<std::uint64_t>(message.size()));
  out.write(message.data(), static_cast<std::streamsize>(message.size()));
  if (r != nullptr) {
    put(out, r->stats.simulated_time);
    put(out, r->stats.mpi_operations);
    put_estimate(out, r->estimate);
    trace::write_wlt(r->trace, out);
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

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return s;
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
      const RunResult r = detail::run_here(platform, workload, perturbations, options, progress_fd, phase, watch);
      write_result(dir.file("result"), Status::Ok, "", &r);
    } catch (const InputError& e) {
      write_result(dir.file("result"), Status::BadInput, e.what(), nullptr);
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

RunResult simulate(const models::PlatformDesc& platform, const models::Workload& workload,
                   const models::Perturbations& perturbations, const RunOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  // Cheap checks in the parent give the clearest messages.
  if (workload.ranks() < 1) throw InputError("the workload has no ranks");
  (void)detail::simgrid_config(options);  // validates the collective set and the eager threshold
  if (platform.kind != models::PlatformKind::Xml) (void)models::place(platform, workload.ranks());

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
  const pid_t pid = fork_process(SIGTERM, true);
  if (pid == 0) child(dir, platform, workload, perturbations, options, watch);

  int status = 0;
  struct rusage usage = {};
  while (wait4(pid, &status, 0, &usage) < 0) {
    if (errno != EINTR) throw std::runtime_error(std::string("waitpid failed: ") + std::strerror(errno));
  }
  child_ended(pid);
  // Interrupted: the signal was passed on to the child, which has ended; nothing is kept.
  if (interruption() != 0) exit_interrupted();
  const int stopped_by = WIFSIGNALED(status) ? WTERMSIG(status)
                         : WIFEXITED(status) && WEXITSTATUS(status) > 128 ? WEXITSTATUS(status) - 128
                                                                          : 0;
  // Someone stopped the simulation process itself (its handler exits with 128 + signal):
  // the command cannot go on without it.
  if (stopped_by == SIGINT || stopped_by == SIGTERM || stopped_by == SIGHUP) exit_interrupted(stopped_by);
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
  r.estimate = get_estimate(in);
  r.trace = trace::read_wlt(in, result_path);
  // Warnings of a successful run (SimGrid's, unusual) are passed on rather than lost, except
  // AddressSanitizer's note that it cannot follow SimGrid's stack switches (ASan builds only).
  std::ifstream warnings(log);
  for (std::string line; std::getline(warnings, line);) {
    if (line.find("ASan is ignoring requested __asan_handle_no_return") != std::string::npos ||
        line == "False positive error reports may follow" ||
        line == "For details see https://github.com/google/sanitizers/issues/189")
      continue;
    std::cerr << "[simulation] " << line << "\n";
  }
  r.stats.host_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.stats.peak_rss_bytes = peak_rss;
  r.stats.estimated_rss_bytes = limits.self_rss + need.resident;
  r.stats.base_rss_bytes = limits.self_rss;
  return r;
}

}  // namespace waitlab::sim
