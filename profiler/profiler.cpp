#include "profiler/profiler.hpp"

#include <cxxabi.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <string_view>

namespace waitlab::profiler {

using trace::MpiOp;

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

namespace {

constexpr const char* kSource = "libwaitlab-profiler";

// The names of the measured functions (trace::mpi_name is in wl_trace, which this library
// does not link: the estimator core is all it needs of waitlab).
std::string_view function_name(MpiOp op) {
  switch (op) {
    case MpiOp::Send:
      return "MPI_Send";
    case MpiOp::Ssend:
      return "MPI_Ssend";
    case MpiOp::Recv:
      return "MPI_Recv";
    case MpiOp::Sendrecv:
      return "MPI_Sendrecv";
    case MpiOp::Wait:
      return "MPI_Wait";
    case MpiOp::Waitall:
      return "MPI_Waitall";
    case MpiOp::Barrier:
      return "MPI_Barrier";
    case MpiOp::Bcast:
      return "MPI_Bcast";
    case MpiOp::Reduce:
      return "MPI_Reduce";
    case MpiOp::Allreduce:
      return "MPI_Allreduce";
    case MpiOp::Gather:
      return "MPI_Gather";
    case MpiOp::Scatter:
      return "MPI_Scatter";
    case MpiOp::Allgather:
      return "MPI_Allgather";
    case MpiOp::Alltoall:
      return "MPI_Alltoall";
    case MpiOp::Scan:
      return "MPI_Scan";
    case MpiOp::Exscan:
      return "MPI_Exscan";
    case MpiOp::ReduceScatter:
      return "MPI_Reduce_scatter";
    default:
      return "MPI";
  }
}

std::string demangle(const char* name) {
  int status = 0;
  char* d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string out = status == 0 && d != nullptr ? d : name;
  std::free(d);
  return out;
}

std::string module_name(const char* path) {
  std::error_code ec;
  // dladdr may name the main program "".
  const std::filesystem::path p = path != nullptr && *path != '\0'
                                      ? std::filesystem::path(path)
                                      : std::filesystem::read_symlink("/proc/self/exe", ec);
  return p.filename().string();
}

// The function that made the call returning to `ret` (the same on every rank running the same
// binaries): its demangled name if the module exports it, else "<module>+0x<offset>".
std::string caller_name(const void* ret) {
  const auto* pc = static_cast<const char*>(ret) - 1;  // inside the call instruction
  Dl_info info{};
  if (dladdr(pc, &info) == 0) return fmt::format("{}", static_cast<const void*>(pc));
  if (info.dli_sname != nullptr) return demangle(info.dli_sname);
  return fmt::format("{}+{:#x}", module_name(info.dli_fname), pc - static_cast<const char*>(info.dli_fbase));
}

// A RankReport as bytes for the gather to rank 0: plain values, written and read by the
// same binary.
class Writer {
 public:
  template <class T>
  void put(const T& v) {
    buf_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void put(const std::string& s) {
    put(static_cast<std::uint64_t>(s.size()));
    buf_ += s;
  }
  std::string take() { return std::move(buf_); }

 private:
  std::string buf_;
};

class Reader {
 public:
  explicit Reader(const std::string& s) : p_(s.data()) {}
  template <class T>
  T get() {
    T v;
    std::memcpy(&v, p_, sizeof v);
    p_ += sizeof v;
    return v;
  }
  std::string str() {
    const auto n = get<std::uint64_t>();
    std::string s(p_, n);
    p_ += n;
    return s;
  }

 private:
  const char* p_;
};

std::string serialize(const RankReport& r) {
  Writer w;
  w.put(r.span);
  w.put(static_cast<std::uint64_t>(r.paths.size()));
  for (const auto& name : r.paths) w.put(name);
  w.put(static_cast<std::uint64_t>(r.rows.size()));
  for (const auto& row : r.rows) {
    w.put(row.path);
    w.put(row.pattern);
    w.put(row.calls);
    w.put(row.time);
    for (const double x : row.waiting) w.put(x);
  }
  return w.take();
}

RankReport parse(const std::string& bytes) {
  Reader in(bytes);
  RankReport r;
  r.span = in.get<double>();
  r.paths.resize(in.get<std::uint64_t>());
  for (auto& name : r.paths) name = in.str();
  r.rows.resize(in.get<std::uint64_t>());
  for (auto& row : r.rows) {
    row.path = in.get<std::uint32_t>();
    row.pattern = in.get<minprofile::Pattern>();
    row.calls = in.get<std::uint64_t>();
    row.time = in.get<double>();
    for (double& x : row.waiting) x = in.get<double>();
  }
  return r;
}

// The minima of the collective categories over all ranks: the profiler's one reduction,
// min_all then min_untested.
minprofile::GlobalMinima global_minima(const minprofile::RankProfile& profile) {
  constexpr std::size_t kSlots = minprofile::GlobalMinima::kSlots;
  minprofile::GlobalMinima g;
  profile.contribute_minima(g);
  std::vector<double> mins(g.min_all);
  mins.insert(mins.end(), g.min_untested.begin(), g.min_untested.end());
  PMPI_Allreduce(MPI_IN_PLACE, mins.data(), static_cast<int>(mins.size()), MPI_DOUBLE, MPI_MIN,
                 MPI_COMM_WORLD);
  std::copy_n(mins.begin(), kSlots, g.min_all.begin());
  std::copy_n(mins.begin() + kSlots, kSlots, g.min_untested.begin());
  return g;
}

// Every rank's `mine`, on rank 0 (empty elsewhere).
std::vector<std::string> gather(const std::string& mine, int rank, int ranks) {
  const int len = static_cast<int>(mine.size());
  std::vector<int> lens(rank == 0 ? ranks : 0);
  PMPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> displs(lens.size());
  int total = 0;
  for (std::size_t r = 0; r < lens.size(); ++r) {
    displs[r] = total;
    total += lens[r];
  }
  std::string all(static_cast<std::size_t>(total), '\0');
  PMPI_Gatherv(mine.data(), len, MPI_BYTE, all.data(), lens.data(), displs.data(), MPI_BYTE, 0,
               MPI_COMM_WORLD);
  std::vector<std::string> parts;
  for (std::size_t r = 0; r < lens.size(); ++r)
    parts.push_back(all.substr(static_cast<std::size_t>(displs[r]), static_cast<std::size_t>(lens[r])));
  return parts;
}

// The result of all ranks: one numbering of their call paths. Each rank timed its own span
// (clocks of different nodes are not synchronised): the wall time is the longest span.
minprofile::Result assemble(const std::vector<RankReport>& reports, double percentile) {
  std::map<std::string, std::uint32_t> ids;
  std::vector<std::string> names;
  std::vector<std::vector<minprofile::RankRow>> rows(reports.size());
  std::vector<double> begin(reports.size(), 0.0), end;
  for (std::size_t r = 0; r < reports.size(); ++r) {
    std::vector<std::uint32_t> id(reports[r].paths.size());
    for (std::size_t p = 0; p < id.size(); ++p) {
      const auto [it, added] = ids.try_emplace(reports[r].paths[p], static_cast<std::uint32_t>(names.size()));
      if (added) names.push_back(it->first);
      id[p] = it->second;
    }
    for (auto row : reports[r].rows) {
      row.path = id[row.path];
      rows[r].push_back(row);
    }
    end.push_back(reports[r].span);
  }
  return minprofile::assemble(std::move(rows), std::move(begin), std::move(end), names, percentile, false);
}

// Writes `path` as "<path>.tmp" renamed; on failure says so on stderr.
void write_file(const std::filesystem::path& path, const std::string& text) {
  const std::string tmp = path.string() + ".tmp";
  int err = 0;
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) {
    err = errno;
  } else {
    if (std::fwrite(text.data(), 1, text.size(), f) != text.size()) err = errno != 0 ? errno : EIO;
    if (std::fclose(f) != 0 && err == 0) err = errno;
    if (err == 0 && std::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
    if (err != 0) std::remove(tmp.c_str());
  }
  if (err != 0) std::fprintf(stderr, "%s: cannot write %s: %s\n", kSource, path.c_str(), std::strerror(err));
}

}  // namespace

void Profiler::start(double begin, int thread_level) {
  begin_ = begin;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  PMPI_Comm_size(MPI_COMM_WORLD, &size_);
  multiple_ = thread_level == MPI_THREAD_MULTIPLE;
  owner_ = pthread_self();
  const char* env = std::getenv("WAITLAB_PROFILER_TEST");
  const std::string_view test = env == nullptr ? "" : env;
  test_ = test != "0";
  if (!test.empty() && test != "0" && test != "1" && rank_ == 0)
    std::fprintf(stderr, "%s: WAITLAB_PROFILER_TEST is \"%s\", not 0 or 1: the test stays on\n", kSource,
                 env);
  active_ = true;
}

std::uint64_t Profiler::key(MPI_Request r) {
  static_assert(sizeof(MPI_Request) <= sizeof(std::uint64_t));
  std::uint64_t k = 0;
  std::memcpy(&k, &r, sizeof r);
  return k;
}

std::uint32_t Profiler::site(const void* caller, MpiOp op) {
  // User-space addresses leave the top byte free for the function.
  const std::uint64_t k = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(caller)) ^
                          (static_cast<std::uint64_t>(op) << 56);
  const auto [id, added] = site_ids_.insert(k, static_cast<std::uint32_t>(sites_.size()));
  if (added) sites_.push_back(Site{caller, op});
  return *id;
}

MPI_Status* Profiler::statuses(std::size_t n) {
  if (statuses_.size() < n) statuses_.resize(n);
  return statuses_.data();
}

Request* Profiler::pending(std::size_t n) {
  if (pending_.size() < n) pending_.resize(n);
  return pending_.data();
}

MPI_Request* Profiler::saved(const MPI_Request* reqs, std::size_t n) {
  if (saved_.size() < n) saved_.resize(n);
  std::copy_n(reqs, n, saved_.begin());
  return saved_.data();
}

RankReport Profiler::report(double span, const minprofile::GlobalMinima& g) const {
  // Call sites of one function calling the same MPI function are one call path.
  RankReport out;
  out.span = span;
  std::map<std::string, std::uint32_t> ids;
  std::vector<std::uint32_t> path_of_site(sites_.size());
  for (std::size_t s = 0; s < sites_.size(); ++s) {
    const std::string name = caller_name(sites_[s].caller) + "/" + std::string(function_name(sites_[s].op));
    const auto [it, added] = ids.try_emplace(name, static_cast<std::uint32_t>(out.paths.size()));
    if (added) out.paths.push_back(name);
    path_of_site[s] = it->second;
  }
  for (minprofile::RankRow r : profile_.rows(g)) {
    r.path = path_of_site[r.path];
    const auto it = std::find_if(out.rows.begin(), out.rows.end(), [&](const minprofile::RankRow& x) {
      return x.path == r.path && x.pattern == r.pattern;
    });
    if (it == out.rows.end()) {
      out.rows.push_back(r);
      continue;
    }
    it->calls += r.calls;
    it->time += r.time;
    for (std::size_t v = 0; v < minprofile::kVariantCount; ++v) it->waiting[v] += r.waiting[v];
  }
  return out;
}

void Profiler::finish() {
  active_ = false;
  const double span = now() - begin_;
  const auto parts = gather(serialize(report(span, global_minima(profile_))), rank_, size_);
  if (rank_ != 0) return;

  std::vector<RankReport> reports;
  for (const auto& part : parts) reports.push_back(parse(part));
  auto result = assemble(reports, profile_.percentile());
  if (!test_) result.computed[static_cast<std::size_t>(minprofile::Variant::ExcludeTested)] = false;
  const char* out = std::getenv("WAITLAB_PROFILER_OUT");
  const std::filesystem::path dir = out != nullptr && *out != '\0' ? out : ".";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);  // a failure shows when writing
  write_file(dir / "minprofile.csv", minprofile::to_csv(result));
  write_file(dir / "minprofile.json", minprofile::to_json(result, kSource));
}

}  // namespace waitlab::profiler
