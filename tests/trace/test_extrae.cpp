// Tests of the Paraver reader on real Extrae traces (tests/data/extrae: EPOCH on 1 and 2
// ranks, pure MPI; an OpenMP run, 1 task x 2 threads, no MPI): every event type accounted
// for, every thread read, states and PAPI counters as the raw records say (sums computed
// here from the decompressed text, independently of the reader), .prv.gz == .prv, MPI
// calls the event model does not model as MPI regions, origin and span; corrupt input.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "util/error.hpp"
#include "analysis/trace/otf2.hpp"
#include "analysis/trace/paraver.hpp"
#include "analysis/trace/trace_io.hpp"
#include "tests/temp_dir.hpp"

namespace waitlab::trace {
namespace {

namespace fs = std::filesystem;

const std::string kExtrae = WAITLAB_SOURCE_DIR "/tests/data/extrae/";
const std::vector<std::string> kTraces = {"epoch_1proc", "epoch_2proc", "omp2"};

// A scratch directory per test (tests/temp_dir.hpp).
struct TempDir : test::ScratchDir {
  explicit TempDir(const std::string& name) : test::ScratchDir("extrae_" + name) {}
};

// The decompressed text of a .prv.gz, by gzip itself (not by the reader's zlib code).
std::string gunzip(const std::string& path) {
  std::string out;
  FILE* p = ::popen(("gzip -dc '" + path + "'").c_str(), "r");
  if (!p) return out;
  char buf[1 << 16];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  ::pclose(p);
  return out;
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> f;
  std::stringstream ls(line);
  for (std::string x; std::getline(ls, x, ':');) f.push_back(x);
  return f;
}

std::uint64_t u64(const std::string& s) {
  std::uint64_t v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

// What the test needs from the raw records, per location (task, thread).
struct Raw {
  std::int64_t end_time = 0;  // ns
  std::uint64_t pairs = 0;
  std::map<std::string, std::uint64_t> pairs_by_type;
  struct Loc {
    std::vector<std::array<std::int64_t, 3>> states;       // begin, end, state
    std::vector<std::pair<std::int64_t, std::int64_t>> mpi; // MPI calls: enter, leave
    std::uint64_t ins = 0, cyc = 0, samples = 0;
    std::uint64_t max_value = 0;                           // largest event value of any type
  };
  std::map<std::pair<int, int>, Loc> locs;
};

Raw scan(const std::string& text) {
  Raw r;
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  {
    const auto close = line.find("):");
    r.end_time = std::stoll(line.substr(close + 2));
  }
  std::map<std::pair<int, int>, std::int64_t> open;
  while (std::getline(in, line)) {
    const auto f = split(line);
    if (f.empty() || (f[0] != "1" && f[0] != "2")) continue;
    const std::pair<int, int> key{std::stoi(f[3]), std::stoi(f[4])};
    Raw::Loc& l = r.locs[key];
    if (f[0] == "1") {
      l.states.push_back({std::stoll(f[5]), std::stoll(f[6]), std::stoll(f[7])});
      continue;
    }
    const std::int64_t t = std::stoll(f[5]);
    bool sample = false;
    for (std::size_t i = 6; i + 1 < f.size(); i += 2) {
      ++r.pairs;
      ++r.pairs_by_type[f[i]];
      const std::uint64_t v = u64(f[i + 1]);
      l.max_value = std::max(l.max_value, v);
      const std::int64_t type = std::stoll(f[i]);
      if (type == 42000050) l.ins += v, sample = true;
      if (type == 42000059) l.cyc += v, sample = true;
      if (type >= 50000001 && type <= 50000005) {
        if (open.count(key)) l.mpi.emplace_back(open[key], t), open.erase(key);
        if (v != 0) open[key] = t;
      }
    }
    l.samples += sample ? 1 : 0;
  }
  return r;
}

struct Loaded {
  Trace t;
  ParaverReadStats st;
  Raw raw;
};

const Loaded& load(const std::string& name) {
  static std::map<std::string, Loaded> cache;
  auto it = cache.find(name);
  if (it == cache.end()) {
    Loaded l;
    l.t = read_paraver(kExtrae + name + ".prv.gz", &l.st);
    l.raw = scan(gunzip(kExtrae + name + ".prv.gz"));
    it = cache.emplace(name, std::move(l)).first;
  }
  return it->second;
}

const Location& location(const Trace& t, int task, int thread) {
  if (thread == 1) return t.locations.at(static_cast<std::size_t>(task - 1));
  for (const Location& l : t.threads)
    if (l.rank == task - 1 && l.thread == thread - 1) return l;
  throw std::runtime_error("no location");
}

TEST(Extrae, EveryEventTypeIsUsedOrCountedByKind) {
  const std::set<std::string> used = {"42000050", "42000059", "50000001", "50000002", "50000003", "50100001",
                                      "50100002", "50100003", "50100004", "60000001", "60000018", "60000023"};
  for (const std::string& name : kTraces) {
    SCOPED_TRACE(name);
    const Loaded& l = load(name);
    EXPECT_EQ(l.st.event_pairs, l.raw.pairs);
    EXPECT_EQ(l.st.used_events + l.st.skipped_events, l.raw.pairs);
    std::uint64_t listed_pairs = 0, listed_records = 0;
    std::map<std::string, std::uint64_t> listed_by_type;
    for (const auto& [what, n] : l.st.skipped) {
      if (what.rfind("event type ", 0) == 0) {
        listed_pairs += n;
        listed_by_type[what.substr(11, what.find(' ', 11) - 11)] += n;
      } else {
        listed_records += n;
      }
    }
    EXPECT_EQ(listed_pairs, l.st.skipped_events);
    EXPECT_EQ(listed_records, l.st.skipped_records);
    // Every type the reader does not use is listed with exactly its count in the file.
    for (const auto& [type, n] : l.raw.pairs_by_type) {
      if (used.count(type)) {
        EXPECT_LE(listed_by_type[type], n) << type;
      } else {
        EXPECT_EQ(listed_by_type[type], n) << type;
      }
    }
  }
  // Labels come from the .pcf; Extrae's undeclared communicator marker is named.
  const auto& sk = load("epoch_2proc").st.skipped;
  const auto has = [&](const std::string& what, std::uint64_t n) {
    return std::find(sk.begin(), sk.end(), std::pair<std::string, std::uint64_t>{what, n}) != sk.end();
  };
  EXPECT_TRUE(has("event type 40000033 (Executing CPU)", 5));
  EXPECT_TRUE(has("event type 50000061 (Extrae's communicator alias marker (MPI_ALIAS_COMM_CREATE_EV), not an MPI "
                  "call)",
                  8));
}

TEST(Extrae, EveryThreadOfEveryTaskIsALocation) {
  const Trace& omp = load("omp2").t;
  ASSERT_EQ(omp.locations.size(), 1u);
  ASSERT_EQ(omp.threads.size(), 1u);
  EXPECT_EQ(omp.locations[0].rank, 0);
  EXPECT_EQ(omp.locations[0].thread, 0);
  EXPECT_EQ(omp.threads[0].rank, 0);
  EXPECT_EQ(omp.threads[0].thread, 1);
  EXPECT_EQ(load("omp2").st.locations, 2u);
  // No MPI in the OpenMP run: no events, but states and counters on both threads.
  EXPECT_EQ(omp.event_count(), 0u);
  for (const Location* l : {&omp.locations[0], &omp.threads[0]}) {
    EXPECT_FALSE(l->states.empty());
    EXPECT_FALSE(l->counters.empty());
  }
  const Trace& e2 = load("epoch_2proc").t;
  EXPECT_EQ(e2.locations.size(), 2u);
  EXPECT_TRUE(e2.threads.empty());
}

// Stored states, per location and state value: the raw records of that state outside the
// location's MPI calls, plus (kStateNoRecord) the time no record covers up to the header's end.
TEST(Extrae, StatesAreTheNotRunningRecordsOutsideMpi) {
  for (const std::string& name : kTraces) {
    SCOPED_TRACE(name);
    const Loaded& l = load(name);
    for (const auto& [key, raw] : l.raw.locs) {
      SCOPED_TRACE("task " + std::to_string(key.first) + " thread " + std::to_string(key.second));
      std::map<std::int64_t, std::int64_t> expect;  // state -> ns
      std::int64_t covered = 0;
      for (const auto& s : raw.states) {
        covered += s[1] - s[0];
        if (s[2] == 1) continue;
        bool inside = false;
        for (const auto& c : raw.mpi) inside = inside || (c.first <= s[0] && s[1] <= c.second);
        if (!inside) expect[s[2]] += s[1] - s[0];
      }
      expect[kStateNoRecord] += l.raw.end_time - covered;  // the records of a location do not overlap
      std::map<std::int64_t, double> got;
      const Location& loc = location(l.t, key.first, key.second);
      for (std::size_t i = 0; i < loc.states.size(); ++i) {
        const StateInterval& s = loc.states[i];
        EXPECT_NE(s.state, kParaverRunning);
        EXPECT_LT(s.begin, s.end);
        if (i > 0) {
          EXPECT_LE(loc.states[i - 1].end, s.begin);
        }
        got[s.state] += s.end - s.begin;
      }
      for (auto& [state, ns] : expect)
        if (ns == 0) got.emplace(state, 0.0);
      ASSERT_EQ(got.size(), expect.size());
      for (const auto& [state, ns] : expect) EXPECT_NEAR(got[state], static_cast<double>(ns) * 1e-9, 1e-9) << state;
    }
  }
  // The OpenMP run: thread 2 is "not created" (2) until 4.94 s.
  const Location& t2 = load("omp2").t.threads[0];
  ASSERT_FALSE(t2.states.empty());
  EXPECT_EQ(t2.states[0], (StateInterval{0, 4943850943e-9, 2}));
}

// The OpenMP structure (Location::omp) as the raw records give it (`zcat omp2.prv.gz | awk -F:
// '$1==2{for(i=7;i<NF;i+=2) if($i==60000001||$i==60000018) print $4"."$5, $6, $i":"$(i+1)}'`):
// the two parallel regions (60000001:3 … :0) on the master only, the two parallel-function
// instances (GetPixelBlue 3, GetPixelGreen 4) on each thread; no task functions. The MPI
// analyses' events are untouched (none: the run has no MPI). The EPOCH traces have none.
TEST(Extrae, OpenMpIntervalsAsTheRecordsSay) {
  const Trace& omp = load("omp2").t;
  using K = OmpKind;
  const std::vector<OmpInterval> master = {
      {4943782149e-9, 8515422599e-9, K::ParallelRegion, 3}, {4943849393e-9, 8515412437e-9, K::ParallelFunction, 3},
      {8515449655e-9, 9652723635e-9, K::ParallelRegion, 3}, {8515451745e-9, 9651297103e-9, K::ParallelFunction, 4}};
  const std::vector<OmpInterval> worker = {{4943850943e-9, 8510891531e-9, K::ParallelFunction, 3},
                                           {8515451937e-9, 9652720195e-9, K::ParallelFunction, 4}};
  EXPECT_EQ(omp.locations[0].omp, master);
  EXPECT_EQ(omp.threads[0].omp, worker);
  EXPECT_EQ(omp.event_count(), 0u);
  for (const char* name : {"epoch_1proc", "epoch_2proc"})
    for (const Location& l : load(name).t.locations) EXPECT_TRUE(l.omp.empty()) << name;
}

// What waitlab's Paraver and OTF2 writers cannot keep of a measured trace is said, not dropped
// in silence: the Paraver writer writes one thread per task with states made from its MPI calls
// (omp2: the worker, the 57149 state intervals and 114293 PAPI samples read, the 6 OpenMP
// intervals above), OTF2 has no record for the states nor for the OpenMP intervals.
TEST(Extrae, WritersSayWhatTheyDoNotWrite) {
  const Trace& omp = load("omp2").t;
  std::size_t states = 0, samples = 0;
  for (const auto* v : {&omp.locations, &omp.threads})
    for (const Location& l : *v) states += l.states.size(), samples += l.counters.size();
  ASSERT_EQ(states, 57149u);
  ASSERT_EQ(samples, 114293u);
  TempDir dir("extrae_writers");
  EXPECT_EQ(write_paraver(omp, dir.path("omp2.prv")),
            (std::vector<std::string>{
                "1 worker threads with their events, states and counters (not written: one thread per task)",
                "57149 state intervals (not written: the states are made from the MPI calls)",
                "114293 hardware-counter samples (not written)",
                "6 OpenMP intervals: parallel regions, parallel functions, tasks (not written)"}));
  const std::vector<std::string> otf2 = otf2_losses(omp);
  EXPECT_NE(std::find(otf2.begin(), otf2.end(),
                      "6 OpenMP intervals (parallel regions, parallel functions, tasks): not written, so the hybrid "
                      "factors' OpenMP split is not available from the archive"),
            otf2.end());
}

TEST(Extrae, PapiCountersAreSummedAsWritten) {
  for (const std::string& name : kTraces) {
    SCOPED_TRACE(name);
    const Loaded& l = load(name);
    EXPECT_EQ(l.t.counters, kHasInstructions | kHasCycles);
    std::uint64_t samples = 0;
    for (const auto& [key, raw] : l.raw.locs) {
      const Location& loc = location(l.t, key.first, key.second);
      std::uint64_t ins = 0, cyc = 0;
      for (std::size_t i = 0; i < loc.counters.size(); ++i) {
        ins += loc.counters[i].instructions;
        cyc += loc.counters[i].cycles;
        if (i > 0) {
          EXPECT_LE(loc.counters[i - 1].time, loc.counters[i].time);
        }
      }
      EXPECT_EQ(loc.counters.size(), raw.samples);
      EXPECT_EQ(ins, raw.ins);  // modulo 2^64 on both sides
      EXPECT_EQ(cyc, raw.cyc);
      samples += raw.samples;
    }
    EXPECT_EQ(l.st.counter_samples, samples);
  }
}

TEST(Extrae, ValuesAbove2To63AreRead) {
  // The OpenMP run has them (in types the reader skips).
  std::uint64_t max = 0;
  for (const auto& [key, raw] : load("omp2").raw.locs) max = std::max(max, raw.max_value);
  EXPECT_GE(max, std::uint64_t{1} << 63);
  TempDir dir("big");
  {
    std::ofstream out(dir.path("b.prv"));
    out << "#Paraver (01/01/70 at 00:00):100_ns:1(1):1:1(1:1)\n"
           "2:1:1:1:1:10:42000050:18446744073709551615:42000059:9223372036854775808:42000055:18446744073709551615\n";
  }
  ParaverReadStats st;
  const Trace t = read_paraver(dir.path("b.prv"), &st);
  ASSERT_EQ(t.locations[0].counters.size(), 1u);
  EXPECT_EQ(t.locations[0].counters[0],
            (CounterSample{10e-9, std::numeric_limits<std::uint64_t>::max(), std::uint64_t{1} << 63}));
  {
    std::ofstream out(dir.path("c.prv"));
    out << "#Paraver (01/01/70 at 00:00):100_ns:1(1):1:1(1:1)\n"
           "2:1:1:1:1:10:42000050:18446744073709551616\n";
  }
  try {
    read_paraver(dir.path("c.prv"));
    ADD_FAILURE() << "2^64 read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(dir.path("c.prv") + ":2:"), std::string::npos) << e.what();
  }
  {
    std::ofstream out(dir.path("d.prv"));  // an event type of 19 digits beyond 2^63-1
    out << "#Paraver (01/01/70 at 00:00):100_ns:1(1):1:1(1:1)\n"
           "2:1:1:1:1:10:9999999999999999999:1\n";
  }
  try {
    read_paraver(dir.path("d.prv"));
    ADD_FAILURE() << "type beyond int64 read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(dir.path("d.prv") + ":2: event record: an event type out of range"),
              std::string::npos)
        << e.what();
  }
}

TEST(Extrae, GzipAndPlainReadTheSame) {
  TempDir dir("plain");
  for (const std::string& name : kTraces) {
    SCOPED_TRACE(name);
    {
      std::ofstream out(dir.path(name + ".prv"), std::ios::binary);
      out << gunzip(kExtrae + name + ".prv.gz");
    }
    fs::copy_file(kExtrae + name + ".pcf", dir.path(name + ".pcf"));
    ParaverReadStats st;
    const Trace plain = read_paraver(dir.path(name + ".prv"), &st);
    EXPECT_TRUE(plain == load(name).t);
    EXPECT_EQ(st.skipped, load(name).st.skipped);
    EXPECT_EQ(st.records, load(name).st.records);
  }
  EXPECT_EQ(format_of_input(kExtrae + "omp2.prv.gz"), TraceFormat::Paraver);
  EXPECT_EQ(read_trace(kExtrae + "epoch_1proc.prv.gz"), load("epoch_1proc").t);
}

TEST(Extrae, EveryMpiCallExtraeNamesIsMpi) {
  const Trace& t = load("epoch_2proc").t;
  std::set<std::string> names;
  for (const Region& r : t.defs.regions) {
    if (r.name.rfind("MPI_", 0) == 0) {
      EXPECT_TRUE(r.is_mpi()) << r.name;
      names.insert(r.name);
    }
  }
  for (const char* n : {"MPI_Comm_rank", "MPI_Comm_size", "MPI_Comm_dup", "MPI_Comm_free", "MPI_Cart_create"}) {
    EXPECT_TRUE(names.count(n)) << n;
    EXPECT_EQ(t.defs.regions[static_cast<std::size_t>(t.defs.find_region(n))].file, "MPI");
  }
  // Entered on both ranks: one Enter and Leave per raw MPI call event with a value.
  for (std::size_t r = 0; r < 2; ++r) {
    std::size_t enters = 0;
    for (const Event& e : t.locations[r].events)
      if (e.kind == EventKind::Enter && t.defs.regions[e.ref].is_mpi()) ++enters;
    EXPECT_EQ(enters, load("epoch_2proc").raw.locs.at({static_cast<int>(r) + 1, 1}).mpi.size());
  }
}

TEST(Extrae, OriginAndDeclaredSpan) {
  const Loaded& l = load("epoch_1proc");
  EXPECT_EQ(l.t.origin, Origin::Extrae);
  EXPECT_FALSE(l.st.waitlab_written);
  EXPECT_DOUBLE_EQ(l.t.span_begin, 0);
  EXPECT_DOUBLE_EQ(l.t.span_end, 21.898659139);
  EXPECT_DOUBLE_EQ(load("omp2").t.span_end, 10.380609993);
}

// Extrae ends every thread's last state record at the end time of the header: the records
// reach the declared end (no "ends early" warning); the same trace cut at a line end (its
// records stop at 5.07 s of the declared 11.53 s, the last state ending at 5.88 s) reads, with
// the warning.
TEST(Extrae, RecordsReachTheDeclaredEndUnlessTheTraceIsCut) {
  for (const std::string& name : kTraces) {
    SCOPED_TRACE(name);
    const ParaverReadStats& st = load(name).st;
    EXPECT_EQ(st.declared_end, static_cast<double>(load(name).raw.end_time) / 1e9);
    EXPECT_EQ(st.last_record_time, st.declared_end);
    EXPECT_FALSE(st.ends_early);
    EXPECT_EQ(paraver_ends_early(kExtrae + name + ".prv.gz", st), "");
  }
  TempDir dir("cut");
  const std::string text = gunzip(kExtrae + "epoch_2proc.prv.gz");
  std::string cut;
  std::int64_t last = 0;  // the latest time of the records kept (a state's end, an event, a message's times)
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const auto f = split(line);
    if (!f.empty() && (f[0] == "1" || f[0] == "2" || f[0] == "3")) {
      if (std::stoll(f[5]) > 5'070'000'000) break;
      for (const std::size_t i : f[0] == "1"   ? std::vector<std::size_t>{5, 6}
                                 : f[0] == "2" ? std::vector<std::size_t>{5}
                                               : std::vector<std::size_t>{5, 6, 11, 12})
        last = std::max<std::int64_t>(last, std::stoll(f[i]));
    }
    cut += line + "\n";
  }
  EXPECT_EQ(last, 5'881'011'327);
  const std::string path = dir.path("cut.prv");
  std::ofstream(path, std::ios::binary) << cut;
  ParaverReadStats st;
  (void)read_paraver(path, &st);
  EXPECT_EQ(st.declared_end, 11.528373565);
  EXPECT_EQ(st.last_record_time, 5.881011327);
  EXPECT_TRUE(st.ends_early);
  EXPECT_EQ(
      paraver_ends_early(path, st),
      path +
          ": the records stop at 5.88101 s, 5.64736 s (48.9866 %) before the end time the header declares "
          "(11.5284 s): the trace may have been cut short, and its metrics count the time after its last "
          "record as idle");
}

TEST(Extrae, CorruptCompressedFileIsNamed) {
  TempDir dir("corrupt");
  const std::string gz = kExtrae + "epoch_1proc.prv.gz";
  std::string bytes;
  {
    std::ifstream in(gz, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    bytes = s.str();
  }
  // Truncated, and with its middle overwritten.
  std::ofstream(dir.path("cut.prv.gz"), std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  std::string bad = bytes;
  for (std::size_t i = bad.size() / 3; i < bad.size() / 3 + 64; ++i) bad[i] = static_cast<char>(bad[i] ^ 0x5a);
  std::ofstream(dir.path("bad.prv.gz"), std::ios::binary) << bad;
  for (const std::string f : {"cut.prv.gz", "bad.prv.gz"}) {
    try {
      read_paraver(dir.path(f));
      ADD_FAILURE() << f << " read";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(dir.path(f)), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace waitlab::trace
