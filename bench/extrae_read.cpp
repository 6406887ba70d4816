// Reading an Extrae-shaped Paraver trace: records per second and the memory of reading.
//
// Usage: extrae_read OUTDIR [MB] [TASKS] [THREADS] [REPEAT]   (defaults: 1024 MB, 64 tasks,
// 1 thread per task, 1 repeat)
//
// Synthesises OUTDIR/extrae.prv (+ .pcf, .row) of about MB megabytes shaped like what Extrae
// writes for an MPI code (the records of the EPOCH traces in tests/data/extrae): per
// task and iteration, a Running burst, an MPI_Sendrecv (state 16) with a communication
// record to the partner task, a Running burst, an MPI_Allreduce (state 13) with its
// collective details, every 10th iteration an MPI_Barrier (state 5), every 100th an Extrae
// flush (state 12, type 40000003) outside MPI, and every MPI event line carrying the 8 PAPI
// counters and 3 caller levels (6 pairs) as the real ones do. Worker threads (THREADS > 1)
// run OpenMP-like: Running and synchronisation (state 5) bursts, counters at each change.
// Records are merged in time order as Extrae merges them. The trace is then read with
// read_paraver REPEAT times (best time kept); the benchmark prints the file size, records,
// type:value pairs, seconds, records/s, and the growth of the resident set from just before
// the read to its peak (VmHWM, reset through /proc/self/clear_refs) and to just after it
// (what the Trace holds), per record. The files are deleted at the end. To profile the read
// alone: MB = 0 reads an OUTDIR/extrae.prv left by an earlier run with KEEP=1 set.
#include <malloc.h>

#include "analysis/timeresolved/timeresolved.hpp"
#include "analysis/trace/match.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "analysis/trace/paraver.hpp"
#include "bench/bench_util.hpp"

using namespace waitlab;
using bench::seconds;
using bench::status_bytes;

namespace {

// A fixed pseudo-random sequence (deterministic files).
struct Lcg {
  std::uint64_t s = 88172645463325252ull;
  std::uint64_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
  std::int64_t in(std::int64_t lo, std::int64_t hi) { return lo + static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(hi - lo)); }
};

class Writer {
 public:
  Writer(std::ostream& os, int tasks, int threads) : os_(os), tasks_(tasks), threads_(threads) {}

  void state(int task, int thread, std::int64_t b, std::int64_t e, int st) {
    line_ = "1:" + cpu(task, thread) + ":1:" + std::to_string(task) + ":" + std::to_string(thread) + ":" +
            std::to_string(b) + ":" + std::to_string(e) + ":" + std::to_string(st) + "\n";
    emit();
  }
  // An event line: the given pairs, then the PAPI counters (and callers when `callers`).
  void event(int task, int thread, std::int64_t t, const std::string& pairs, bool callers) {
    line_ = "2:" + cpu(task, thread) + ":1:" + std::to_string(task) + ":" + std::to_string(thread) + ":" +
            std::to_string(t) + ":" + pairs;
    static const long kTypes[] = {42000050, 42000059, 42000000, 42000002, 42000008, 42000055, 42000046, 42001047};
    for (long ty : kTypes) line_ += ":" + std::to_string(ty) + ":" + std::to_string(rng_.in(100, 2000000));
    if (callers)
      for (int lv = 1; lv <= 3; ++lv)
        line_ += ":7000000" + std::to_string(lv) + ":" + std::to_string(rng_.in(3, 40)) + ":8000000" +
                 std::to_string(lv) + ":" + std::to_string(rng_.in(40, 90));
    line_ += "\n";
    emit();
  }
  void comm(int s, std::int64_t ls, std::int64_t ps, int r, std::int64_t lr, std::int64_t pr, int size, int tag) {
    line_ = "3:" + cpu(s, 1) + ":1:" + std::to_string(s) + ":1:" + std::to_string(ls) + ":" + std::to_string(ps) + ":" +
            cpu(r, 1) + ":1:" + std::to_string(r) + ":1:" + std::to_string(lr) + ":" + std::to_string(pr) + ":" +
            std::to_string(size) + ":" + std::to_string(tag) + "\n";
    emit();
  }
  std::uint64_t bytes() const { return bytes_; }
  std::uint64_t records() const { return records_; }
  Lcg& rng() { return rng_; }

 private:
  std::string cpu(int task, int thread) const { return std::to_string((task - 1) * threads_ + thread); }
  void emit() {
    os_ << line_;
    bytes_ += line_.size();
    ++records_;
  }
  std::ostream& os_;
  int tasks_, threads_;
  std::string line_;
  Lcg rng_;
  std::uint64_t bytes_ = 0, records_ = 0;
};

// Writes the trace; returns the number of records.
std::uint64_t synthesise(const std::string& base, std::uint64_t target, int tasks, int threads) {
  // Iteration length 1 ms; the end time is written in the header, which comes first, so the
  // number of iterations is fixed from a first estimate of the bytes per iteration.
  const std::uint64_t per_iter = static_cast<std::uint64_t>(tasks) * (1400 + 150 * static_cast<std::uint64_t>(threads - 1));
  const std::int64_t iters = std::max<std::int64_t>(1, static_cast<std::int64_t>(target / per_iter));
  const std::int64_t kIter = 1000000;  // ns
  const std::int64_t end = (iters + 1) * kIter;
  std::ofstream os(base + ".prv");
  os << "#Paraver (01/01/70 at 00:00):" << end << "_ns:1(" << tasks * threads << "):1:" << tasks << "(";
  for (int t = 0; t < tasks; ++t) os << (t ? "," : "") << threads << ":1";
  os << "),1\nc:1:1:" << tasks;
  for (int t = 1; t <= tasks; ++t) os << ":" << t;
  os << "\n";
  Writer w(os, tasks, threads);
  for (int t = 1; t <= tasks; ++t) {
    w.event(t, 1, 0, "40000001:1:40000050:1382088798545360:40000033:35", false);
    for (int th = 2; th <= threads; ++th) w.state(t, th, 0, kIter / 2, 2);  // not created
  }
  for (std::int64_t i = 0; i < iters; ++i) {
    const std::int64_t t0 = i * kIter + 1000;
    for (int t = 1; t <= tasks; ++t) {
      const int partner = ((t - 1) ^ 1) + 1 <= tasks ? ((t - 1) ^ 1) + 1 : t;
      const std::int64_t a = t0 + w.rng().in(300000, 400000);  // Sendrecv enter
      const std::int64_t b = a + 20000;
      const std::int64_t c = b + w.rng().in(300000, 400000);  // Allreduce enter
      const std::int64_t d = c + 15000;
      std::int64_t e = d;
      w.state(t, 1, t0, a, 1);
      w.state(t, 1, a, b, 16);
      w.event(t, 1, a, "50000001:41", true);
      w.comm(t, a, a + 100, partner, a, b - 50, 8192, 1);
      w.event(t, 1, b, "50000001:0", false);
      w.state(t, 1, b, c, 1);
      w.state(t, 1, c, d, 13);
      w.event(t, 1, c, std::string("50000002:10:50100001:8:50100002:8:50100004:1") + (t == 1 ? ":50100003:1" : ""),
              true);
      w.event(t, 1, d, "50000002:0", false);
      if (i % 10 == 9) {
        w.state(t, 1, d, d + 5000, 1);
        w.state(t, 1, d + 5000, d + 9000, 5);
        w.event(t, 1, d + 5000, "50000002:8", true);
        w.event(t, 1, d + 9000, "50000002:0", false);
        e = d + 9000;
      }
      if (i % 100 == 99) {
        w.state(t, 1, e, e + 1000, 1);
        w.state(t, 1, e + 1000, e + 21000, 12);
        w.event(t, 1, e + 1000, "40000003:1", false);
        w.event(t, 1, e + 21000, "40000003:0", false);
        e += 21000;
      }
      w.state(t, 1, e, t0 + kIter, 1);
      for (int th = 2; th <= threads; ++th) {
        const std::int64_t s0 = i == 0 ? kIter / 2 : t0;  // after "not created"
        const std::int64_t m = s0 + (t0 + kIter - s0) * w.rng().in(50, 80) / 100;
        w.state(t, th, s0, m, 1);
        w.event(t, th, m, "60000018:0", false);
        w.state(t, th, m, t0 + kIter, 5);
      }
    }
  }
  os.close();
  std::ofstream(base + ".row") << "LEVEL NODE SIZE 1\nnode\n";
  std::ofstream(base + ".pcf") << "EVENT_TYPE\n9   50000001    MPI Point-to-point\nVALUES\n41   MPI_Sendrecv\n0   "
                                  "Outside MPI\n\n\nEVENT_TYPE\n9   50000002    MPI Collective Comm\nVALUES\n10   "
                                  "MPI_Allreduce\n8   MPI_Barrier\n0   Outside MPI\n\n\nEVENT_TYPE\n7  42000050 "
                                  "PAPI_TOT_INS [Instr completed]\n7  42000059 PAPI_TOT_CYC [Total cycles]\n";
  return w.records();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: extrae_read OUTDIR [MB] [TASKS] [THREADS] [REPEAT]\n";
    return 2;
  }
  const std::string dir = argv[1];
  const double mb = argc > 2 ? std::stod(argv[2]) : 1024;
  const int tasks = argc > 3 ? std::stoi(argv[3]) : 64;
  const int threads = argc > 4 ? std::stoi(argv[4]) : 1;
  const int repeat = argc > 5 ? std::stoi(argv[5]) : 1;
  std::filesystem::create_directories(dir);
  const std::string base = dir + "/extrae";
  std::uint64_t records = 0;
  const bool reuse = mb == 0;
  const double write_s =
      reuse ? 0 : seconds([&] { records = synthesise(base, static_cast<std::uint64_t>(mb * 1e6), tasks, threads); });
  const double bytes = static_cast<double>(std::filesystem::file_size(base + ".prv"));
  double read_s = 1e300, peak = 0, held = 0;
  trace::ParaverReadStats st;
  std::size_t events = 0, states = 0, samples = 0;
  trace::Trace t;
  double rss0 = 0;
  for (int k = 0; k < repeat; ++k) {
    t = trace::Trace{};
    malloc_trim(0);
    { std::ofstream("/proc/self/clear_refs") << "5"; }  // VmHWM := VmRSS
    rss0 = status_bytes("VmRSS");
    read_s = std::min(read_s, seconds([&] { t = trace::read_paraver(base + ".prv", &st); }));
    peak = std::max(peak, status_bytes("VmHWM") - rss0);
    held = std::max(held, status_bytes("VmRSS") - rss0);
    events = states = samples = 0;
    for (const auto* v : {&t.locations, &t.threads})
      for (const auto& l : *v) events += l.events.size(), states += l.states.size(), samples += l.counters.size();
  }
  // Then the analysis a POP user runs on it: the matcher, the Lamport replay and the efficiency
  // metrics with BSC's conventions (50 windows); the peak of read + analysis over the same base.
  { std::ofstream("/proc/self/clear_refs") << "5"; }
  analysis::TimeResolvedResult tr;
  double match_s = 0, lamport_s = 0, tr_s = 0;
  {
    trace::Matching m;
    analysis::IdealReference ref;
    match_s = seconds([&] { m = trace::Matching::build(t); });
    lamport_s = seconds([&] { ref = analysis::lamport_reference(t, m); });
    tr_s = seconds([&] { tr = analysis::time_resolved(t, ref, {}, analysis::Convention::Bsc); });
  }
  const double analyse_s = match_s + lamport_s + tr_s;
  const double peak_all = std::max(peak, status_bytes("VmHWM") - rss0);
  if (reuse) records = st.records;
  if (st.records != records) {
    std::cerr << "read " << st.records << " records, wrote " << records << "\n";
    return 1;
  }
  const double r = static_cast<double>(records);
  std::printf("| size MB | tasks x threads | records | pairs | write s | read s | M records/s | MB/s | events | states | "
              "counter samples | read peak B/record | read held B/record |\n");
  std::printf("| %.0f | %d x %d | %.2f M | %.2f M | %.1f | %.2f | %.2f | %.0f | %.2f M | %zu | %.2f M | %.1f | %.1f |\n",
              bytes / 1e6, tasks, threads, r / 1e6, static_cast<double>(st.event_pairs) / 1e6, write_s, read_s,
              r / read_s / 1e6, bytes / read_s / 1e6, static_cast<double>(events) / 1e6, states,
              static_cast<double>(samples) / 1e6, peak / r, held / r);
  // Read + analysis per unit of "event": Paraver record (line), Paraver event (type:value pair),
  // waitlab Trace event.
  const double all_s = read_s + analyse_s, pairs = static_cast<double>(st.event_pairs),
               ev = static_cast<double>(events);
  std::printf("\n| match s | Lamport s | timeresolved (bsc) s | read + analyse s | PE | per record: M/s | B | "
              "per type:value pair: M/s | B | per Trace event: M/s | B |\n");
  std::printf("| %.2f | %.2f | %.2f | %.2f | %.4f | %.2f | %.1f | %.1f | %.1f | %.2f | %.1f |\n", match_s, lamport_s, tr_s,
              all_s, tr.eff.pe, r / all_s / 1e6, peak_all / r, pairs / all_s / 1e6, peak_all / pairs, ev / all_s / 1e6,
              peak_all / ev);
  if (!std::getenv("KEEP"))
    for (const char* ext : {".prv", ".pcf", ".row"}) std::filesystem::remove(base + ext);
  return 0;
}
