#include "sim/resources.hpp"

#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <numeric>
#include <sstream>
#include <unordered_map>

#include <fmt/format.h>

#include "util/error.hpp"
#include "sim/recording.hpp"

namespace waitlab::sim {

namespace {

// A /proc/meminfo field ("MemAvailable:   20353964 kB"), bytes; 0 if absent.
std::uint64_t meminfo(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key + ":", 0) != 0) continue;
    std::istringstream value(line.substr(key.size() + 1));
    std::uint64_t kib = 0;
    value >> kib;
    return kib * 1024;
  }
  return 0;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A number in a file ("max" or absent: 0).
std::uint64_t read_number(const std::string& path) {
  std::ifstream in(path);
  std::uint64_t v = 0;
  return in >> v ? v : 0;
}

// A field of a cgroup's memory.stat ("inactive_file 123"); 0 if absent.
std::uint64_t stat_field(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  std::string k;
  std::uint64_t v = 0;
  while (in >> k >> v)
    if (k == key) return v;
  return 0;
}

// The memory cgroup's room: limit − usage, v2 (memory.max) or v1 (memory.limit_in_bytes),
// the usage without the inactive page cache (reclaimed before anything is killed); 0 when
// there is no limit (v1 writes a huge number for "none").
std::uint64_t cgroup_room() {
  std::ifstream in("/proc/self/cgroup");
  std::string v2_path, v1_path;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("0::", 0) == 0) v2_path = line.substr(3);
    const auto c = line.find(":memory:");
    if (c != std::string::npos) v1_path = line.substr(c + 8);
  }
  const auto room = [](std::uint64_t limit, std::uint64_t usage) -> std::uint64_t {
    if (limit == 0 || limit >= (1ull << 60)) return 0;
    return limit > usage ? limit - usage : 1;  // at (or over) its limit: 1 byte of room
  };
  const auto used = [](std::uint64_t usage, std::uint64_t inactive) { return usage > inactive ? usage - inactive : 0; };
  for (const std::string& base : {"/sys/fs/cgroup" + v2_path, std::string("/sys/fs/cgroup")}) {
    const std::uint64_t limit = read_number(base + "/memory.max");
    if (limit > 0)
      return room(limit, used(read_number(base + "/memory.current"), stat_field(base + "/memory.stat", "inactive_file")));
  }
  for (const std::string& base : {"/sys/fs/cgroup/memory" + v1_path, std::string("/sys/fs/cgroup/memory")}) {
    const std::uint64_t limit = read_number(base + "/memory.limit_in_bytes");
    if (limit > 0)
      return room(limit, used(read_number(base + "/memory.usage_in_bytes"),
                              stat_field(base + "/memory.stat", "total_inactive_file")));
  }
  return 0;
}

std::uint64_t soft_limit(int resource) {
  struct rlimit rl = {};
  if (getrlimit(resource, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return 0;
  return static_cast<std::uint64_t>(rl.rlim_cur);
}

std::uint64_t statm_field(int index) {
  std::ifstream in("/proc/self/statm");
  std::uint64_t v[2] = {};
  in >> v[0] >> v[1];
  return v[index] * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

// Events the engine records for one action (docs/engine.md §7), an Isend/Irecv's completion
// event (recorded by its wait) counted with it.
double events_of(models::ActionKind k) {
  using K = models::ActionKind;
  switch (k) {
    case K::Enter:
    case K::Leave:
      return 1;
    case K::Compute:
      return 0;
    case K::Send:
    case K::Ssend:
    case K::Recv:
      return 3;
    case K::Isend:
    case K::Irecv:
      return 4;
    case K::Wait:
    case K::Waitall:
      return 2;
    default:  // Sendrecv and the collectives
      return 4;
  }
}

std::string count_text(double n) {
  if (n >= 1e9) return fmt::format("{:.1f} billion", n / 1e9);
  if (n >= 1e6) return fmt::format("{:.1f} million", n / 1e6);
  return fmt::format("{:.0f}", n);
}

}  // namespace

std::uint64_t HostLimits::memory_limit() const {
  if (mem_available == 0) return cgroup_free;
  if (cgroup_free == 0) return mem_available;
  return std::min(mem_available, cgroup_free);
}

HostLimits read_host_limits() {
  HostLimits h;
  const std::string info = read_text("/proc/meminfo");
  h.mem_available = meminfo(info, "MemAvailable");
  h.swap_free = meminfo(info, "SwapFree");
  if (read_number("/proc/sys/vm/overcommit_memory") == 2) {
    const std::uint64_t limit = meminfo(info, "CommitLimit");
    const std::uint64_t used = meminfo(info, "Committed_AS");
    h.commit_free = limit > used ? limit - used : 1;
  }
  h.cgroup_free = cgroup_room();
  h.address_space = soft_limit(RLIMIT_AS);
  h.data = soft_limit(RLIMIT_DATA);
  h.max_map_count = static_cast<long>(read_number("/proc/sys/vm/max_map_count"));
  h.self_rss = resident_bytes();
  h.self_vsz = virtual_bytes();
  const char* tmp = std::getenv("TMPDIR");
  h.temp_dir = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  struct statvfs fs = {};
  if (statvfs(h.temp_dir.c_str(), &fs) == 0) h.temp_free = static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize;
  h.file_size = soft_limit(RLIMIT_FSIZE);
  return h;
}

MemoryNeed memory_need(int ranks, double events, double truths, bool heap_stacks, bool held) {
  MemoryNeed m;
  m.ranks = ranks;
  m.events = events;
  m.truths = truths;
  m.heap_stacks = heap_stacks;
  const double bytes = events * sizeof(trace::Event) + truths * sizeof(trace::ComputeTruth);
  // The simulation process keeps its records on disk (sim/recording.hpp) in a bounded buffer;
  // a trace read back into memory takes its 40 and 56 bytes a record in the caller (counted
  // here too, with the vectors' growth: the two processes do not peak together, so it is an
  // upper bound).
  const double recorded =
      held ? bytes * kGrowth : std::min(bytes, static_cast<double>(Recording::kBufferBytes));
  m.resident =
      kBaseBytes + static_cast<std::uint64_t>(ranks) * kRankBytes + static_cast<std::uint64_t>(recorded);
  m.held = held;
  m.result_bytes = static_cast<std::uint64_t>(bytes);
  // Every actor's stack is a mapping of its own (with a guard page) or a piece of the heap;
  // untouched, it costs address space, not memory.
  const std::uint64_t page = static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
  m.address_space = m.resident + static_cast<std::uint64_t>(ranks) * (kStackBytes + (heap_stacks ? 0 : page));
  return m;
}

void MemoryNeed::add_collective(double bytes, const std::string& text) {
  const double capped = std::min(bytes, 1e18);
  collective_bytes = static_cast<std::uint64_t>(capped);
  collective = text;
  resident += collective_bytes;
  address_space += collective_bytes;
}

std::string MemoryNeed::breakdown() const {
  std::string b = breakdown_records();
  if (collective_bytes > 0)
    b += fmt::format(" + {} for the largest collective ({})", human_bytes(collective_bytes), collective);
  return b;
}

std::string MemoryNeed::breakdown_records() const {
  if (!held)
    return fmt::format(
        "{} ranks × {} + {} of buffers for {} events and {} compute intervals recorded to disk", ranks,
        human_bytes(kRankBytes), human_bytes(std::min<std::uint64_t>(result_bytes, Recording::kBufferBytes)),
        count_text(events), count_text(truths));
  return fmt::format("{} ranks × {} + {} events × {} B and {} compute intervals × {} B as recorded", ranks,
                     human_bytes(kRankBytes), count_text(events), sizeof(trace::Event), count_text(truths),
                     sizeof(trace::ComputeTruth));
}

namespace {

// One rank's recorded events, compute intervals and the actions drawn to count them, and the
// memory its largest collective takes.
struct RankCount {
  double events = 0;
  double truths = 0;
  std::uint64_t actions = 0;
  double collective = 0;  // bytes (collective_bytes)
  std::string collective_text;
};

// The memory a collective takes in the simulation process, all its ranks together: waitlab's
// two scratch buffers of the call's widest buffer W (the per-rank size times the
// communicator's ranks for gather, scatter, allgather and alltoall; the whole vector for the
// v-collectives) and SimGrid's algorithms' own temporary buffers, which every rank holds at
// once. Measured (peak resident memory of `run` of an alltoall_loop, one iteration, SMPI's
// default algorithms): (2.5 + P/2) x W for P = 4, 8, 16 and 32 ranks and W from 256 MiB to
// 1 GiB — 4.5 GiB for 4 x 256 MiB, 10.5 GiB for 16 x 64 MiB. The same bound is taken for every
// collective.
// `text` (if given) gets "alltoall on 16 ranks, buffers of 16.0 GiB": asked for the largest only.
// `vtotals` caches the widest buffer of each interned Counts (a v-collective's vectors are P
// long: summed once, not at every call).
double collective_bytes(const models::Action& a, const models::Workload& w,
                        std::unordered_map<std::uint32_t, double>& vtotals, std::string* text = nullptr) {
  using K = models::ActionKind;
  const auto& comms = w.definitions().comms;
  const double ranks = a.comm < comms.size() && !comms[a.comm].members.empty()
                           ? static_cast<double>(comms[a.comm].members.size())
                           : static_cast<double>(w.ranks());
  double wide = 0;
  switch (a.kind) {
    case K::Bcast: case K::Reduce: case K::Allreduce:
      wide = static_cast<double>(a.bytes);
      break;
    case K::Gather: case K::Scatter: case K::Allgather: case K::Alltoall:
      wide = static_cast<double>(a.bytes) * ranks;
      break;
    case K::Gatherv: case K::Scatterv: case K::Allgatherv: case K::Alltoallv: case K::ReduceScatter:
      if (const auto it = vtotals.find(a.counts); it != vtotals.end()) {
        wide = std::max(it->second, static_cast<double>(a.bytes));
      } else if (const models::Counts* c = w.counts(a.counts)) {
        double send = 0, recv = 0;
        for (const auto v : c->send) send += static_cast<double>(v);
        for (const auto v : c->recv) recv += static_cast<double>(v);
        vtotals.emplace(a.counts, std::max(send, recv));
        wide = std::max({send, recv, static_cast<double>(a.bytes)});
      }
      break;
    default:
      return 0;
  }
  const double bytes = (2.5 + ranks / 2) * wide;
  if (bytes > 0 && text != nullptr)
    *text = fmt::format("{} on {} ranks, buffers of {}", models::action_name(a.kind), ranks,
                       human_bytes(static_cast<std::uint64_t>(wide)));
  return bytes;
}

// Counts the actions of one rank's stream, at most `cap` of them: a longer stream (a
// user-chosen iteration count, up to 2^30) is extrapolated from what was counted, so the work
// does not grow with the iterations. The extrapolation follows the iteration numbers stamped
// on the actions (Action::iteration): the counts before the first stamped action, then the
// mean of the complete iterations counted (a synthetic workload's iterations are all alike,
// so the figure is exact) times the workload's iterations from the first stamped one on. A
// stream without usable stamps (none, decreasing, past `iterations`, or no iteration complete
// within the cap) is scaled by how much of it was consumed (ActionStream::done()); one that
// cannot tell either is counted to its end.
RankCount count_rank(models::ActionStream& stream, const models::Workload& workload,
                     std::unordered_map<std::uint32_t, double>& vtotals, bool recorded, int iterations,
                     std::uint64_t cap) {
  RankCount c;
  int first = -1;         // the first stamped iteration
  int current = -1;       // the iteration of the last stamped action
  bool in_order = true;   // the stamps never decreased
  RankCount before_first;    // counts before the first stamped action
  RankCount before_current;  // counts before the first action of `current`
  const auto stamp = [&](const models::Action& a) {
    if (a.iteration < 0 || a.iteration == current) return;
    if (a.iteration < current) in_order = false;
    if (first < 0) {
      first = a.iteration;
      before_first = c;
    }
    current = a.iteration;
    before_current = c;
  };
  models::Action a;
  bool extrapolate = true;
  while (stream.next(a)) {
    if (c.actions >= cap && extrapolate) {
      // `a` is beyond the cap: the stream is longer. Its stamp may close the current iteration.
      stamp(a);
      if (in_order && first >= 0 && current > first && iterations > current) {
        const double done = current - first;  // complete iterations counted
        const double todo = static_cast<double>(iterations) - first;
        RankCount e = before_first;
        e.events += (before_current.events - before_first.events) / done * todo;
        e.truths += (before_current.truths - before_first.truths) / done * todo;
        e.actions = c.actions + 1;  // `a` was drawn too
        e.collective = c.collective;
        e.collective_text = c.collective_text;
        return e;
      }
      if (const double share = stream.done(); share > 0 && share <= 1) {
        c.events /= share;
        c.truths /= share;
        ++c.actions;
        return c;
      }
      extrapolate = false;  // nothing says how long the stream is: count it all
    } else {
      stamp(a);
    }
    // (An in_waitall Wait records nothing itself.)
    if (recorded && !a.in_waitall) c.events += events_of(a.kind);
    if (a.kind == models::ActionKind::Compute) ++c.truths;
    if (const double b = collective_bytes(a, workload, vtotals); b > c.collective) {
      c.collective = b;
      collective_bytes(a, workload, vtotals, &c.collective_text);
    }
    ++c.actions;
  }
  return c;
}

}  // namespace

MemoryNeed estimate_memory(const models::Workload& workload, const RunOptions& options, const HostLimits& limits,
                           std::uint64_t budget, std::uint64_t rank_budget) {
  const int n = workload.ranks();
  // Every rank's stream is generated (lazily, far cheaper than simulating it) and its actions
  // counted, at most `rank_budget` per rank (count_rank extrapolates the rest), up to `budget`
  // actions in all; beyond that the ranks counted so far stand for all. They are visited in a
  // scattered order (stride ≈ 0.618 n, coprime with n), so that a partial count is not all
  // first rows or all boundary columns of a grid.
  long long stride = std::max<long long>(1, static_cast<long long>(0.6180339887 * n));
  while (std::gcd(stride, static_cast<long long>(n)) != 1) --stride;
  // Without record_events only MPI_Init's and MPI_Finalize's events are recorded
  // (RunOptions::record_events; the online estimator, which flags recorded events, makes the
  // engine record them all).
  const bool recorded = options.record_events || options.minprofile;
  double events = 0;
  double truths = 0;
  std::uint64_t actions = 0;
  double collective = 0;
  std::string collective_text;
  std::unordered_map<std::uint32_t, double> vtotals;
  int counted = 0;
  for (long long k = 0; k < n && (counted == 0 || actions < budget); ++k, ++counted) {
    const int r = static_cast<int>(k * stride % n);
    auto stream = workload.stream(r);
    const RankCount c =
        count_rank(*stream, workload, vtotals, recorded, workload.iterations(), std::max<std::uint64_t>(1, rank_budget));
    if (c.collective > collective) {
      collective = c.collective;
      collective_text = c.collective_text;
    }
    events += 4 + c.events;  // MPI_Init and MPI_Finalize: Enter and Leave each
    truths += c.truths;
    actions += c.actions;
  }
  const double scale = counted > 0 ? static_cast<double>(n) / counted : 0;
  const long maps = options.max_map_count > 0 ? options.max_map_count
                    : limits.max_map_count > 0 ? limits.max_map_count
                                               : 65530;
  MemoryNeed need = memory_need(n, events * scale, truths * scale, detail::unguarded_stacks(n, maps),
                                options.return_trace);
  need.actions = actions;
  need.add_collective(collective, collective_text);
  return need;
}

std::string check_memory(const MemoryNeed& need, const HostLimits& limits) {
  const char* mode = std::getenv("WAITLAB_MEMORY_CHECK");
  const std::string how = mode != nullptr ? mode : "";
  if (how == "off") return "";
  const bool refuse = how != "warn";
  std::string warning;
  const auto problem = [&](const std::string& text) {
    if (refuse) throw InputError(text + " (WAITLAB_MEMORY_CHECK=warn runs it anyway)");
    if (warning.empty()) warning = text;
  };
  const std::string what = fmt::format("this simulation of {} ranks needs about {} of memory ({})", need.ranks,
                                       human_bytes(need.resident), need.breakdown());
  const std::string fewer = need.collective_bytes > 0 ? "simulate fewer ranks, iterations or smaller messages"
                                                       : "simulate fewer ranks or iterations";
  const std::string stacks =
      fmt::format("{} of stack per rank{}", human_bytes(kStackBytes),
                  need.collective_bytes > 0 ? fmt::format(", {} for the largest collective ({})",
                                                          human_bytes(need.collective_bytes), need.collective)
                                            : std::string());
  // Address space: the stacks, 8 MiB per rank, whatever part of them is touched.
  const std::uint64_t space = limits.self_vsz + need.address_space;
  if (limits.address_space > 0 && space > limits.address_space)
    problem(fmt::format("this simulation of {} ranks needs about {} of address space ({}) but the "
                        "address-space limit (ulimit -v) is {}: raise it (ulimit -v unlimited) or {}",
                        need.ranks, human_bytes(space), stacks, human_bytes(limits.address_space), fewer));
  if (limits.data > 0 && need.address_space > limits.data)
    problem(fmt::format("this simulation of {} ranks needs about {} of data segment ({}) but the "
                        "data limit (ulimit -d) is {}: raise it (ulimit -d unlimited) or {}",
                        need.ranks, human_bytes(need.address_space), stacks, human_bytes(limits.data), fewer));
  if (limits.commit_free > 0 && need.address_space > limits.commit_free)
    problem(fmt::format("this simulation of {} ranks commits about {} of memory ({}) but with "
                        "vm.overcommit_memory=2 only {} can still be committed: {}, or allow overcommit "
                        "(sysctl vm.overcommit_memory=0)",
                        need.ranks, human_bytes(need.address_space), stacks, human_bytes(limits.commit_free), fewer));
  // The result file: the trace, written by the simulation process into $TMPDIR.
  const std::string trace_size = fmt::format("its trace of about {} ({} events)", human_bytes(need.result_bytes),
                                             count_text(need.events));
  if (limits.file_size > 0 && need.result_bytes > limits.file_size)
    problem(fmt::format("this simulation of {} ranks writes {} into one file, but the file-size limit (ulimit -f) is "
                        "{}: raise it (ulimit -f unlimited) or {}",
                        need.ranks, trace_size, human_bytes(limits.file_size), fewer));
  if (limits.temp_free > 0 && need.result_bytes > limits.temp_free)
    problem(fmt::format("this simulation of {} ranks writes {} into {} (TMPDIR), which has {} free: set TMPDIR to a "
                        "directory with more room, or {}",
                        need.ranks, trace_size, limits.temp_dir, human_bytes(limits.temp_free), fewer));
  const std::uint64_t limit = limits.memory_limit();
  if (limit == 0) return warning;
  const std::string source = limits.cgroup_free > 0 && limits.cgroup_free <= limits.mem_available
                                 ? "left under this cgroup's memory limit"
                                 : "available (MemAvailable)";
  if (need.resident > limit + limits.swap_free)
    problem(fmt::format("{}, but only {} are {}{}: {}, or free memory", what, human_bytes(limit), source,
                        limits.swap_free > 0 ? fmt::format(" and {} of swap", human_bytes(limits.swap_free)) : "",
                        fewer));
  else if (need.resident > limit / 10 * 8 && warning.empty())
    warning = fmt::format("{}, close to the {} {}: it may swap or be killed by the out-of-memory killer", what,
                          human_bytes(limit), source);
  return warning;
}

std::uint64_t resident_bytes() {
  return statm_field(1);
}

std::uint64_t virtual_bytes() {
  return statm_field(0);
}

std::string human_bytes(std::uint64_t b) {
  const double v = static_cast<double>(b);
  if (b >= (1ull << 30)) return fmt::format("{:.1f} GiB", v / (1ull << 30));
  if (b >= (1ull << 20)) return fmt::format("{:.0f} MiB", v / (1ull << 20));
  if (b >= (1ull << 10)) return fmt::format("{:.0f} KiB", v / (1ull << 10));
  return fmt::format("{} B", b);
}

namespace detail {

bool unguarded_stacks(int ranks, long max_map_count) {
  return 2L * ranks + kMappingHeadroom > max_map_count;
}

}  // namespace detail

}  // namespace waitlab::sim
