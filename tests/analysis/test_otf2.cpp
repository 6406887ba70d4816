// The OTF2 writer: every record of Fixture A and of a simulated run, as otf2-print (OTF2's
// own reader) sees them.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "util/error.hpp"
#include "analysis/waitstate/waitstate.hpp"
#include "analysis/trace/otf2.hpp"
#include "app/summary.hpp"
#include "scenarios/scenario.hpp"
#include "trace_builder.hpp"

namespace waitlab::analysis::test {
namespace {

namespace fs = std::filesystem;

fs::path scratch(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("waitlab_otf2_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(p);
  return p;
}

// Runs otf2-print (with `options`, e.g. -G for the definitions) on the archive; returns its
// exit code and output.
std::pair<int, std::string> otf2_print(const fs::path& archive, const std::string& options = "") {
  const fs::path out = archive.string() + ".txt";
  const std::string cmd =
      "otf2-print " + options + " '" + (archive / "traces.otf2").string() + "' > '" + out.string() + "' 2>&1";
  const int status = std::system(cmd.c_str());
  std::ifstream in(out);
  std::stringstream s;
  s << in.rdbuf();
  fs::remove(out);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, s.str()};
}

// Event records by otf2-print's name, from its listing (one line per record).
std::map<std::string, int> records(const std::string& listing) {
  std::map<std::string, int> n;
  std::istringstream in(listing);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream l(line);
    std::string word, loc, time;
    if (!(l >> word >> loc >> time)) continue;
    if (word == "ENTER" || word == "LEAVE" || word.rfind("MPI_", 0) == 0) ++n[word];
  }
  return n;
}

std::map<std::string, int> expected(const trace::Trace& t) {
  static const std::map<EventKind, std::string> names = {
      {EventKind::Enter, "ENTER"},           {EventKind::Leave, "LEAVE"},
      {EventKind::Send, "MPI_SEND"},         {EventKind::Recv, "MPI_RECV"},
      {EventKind::IsendStart, "MPI_ISEND"},  {EventKind::IsendComplete, "MPI_ISEND_COMPLETE"},
      {EventKind::IrecvPost, "MPI_IRECV_REQUEST"}, {EventKind::IrecvComplete, "MPI_IRECV"},
      {EventKind::CollBegin, "MPI_COLLECTIVE_BEGIN"}, {EventKind::CollEnd, "MPI_COLLECTIVE_END"}};
  std::map<std::string, int> n;
  for (const auto& l : t.locations)
    for (const auto& e : l.events) ++n[names.at(e.kind)];
  return n;
}

// A simulated halo2d run (3 iterations), simulated once for every test that needs it.
const trace::Trace& halo2d() {
  static const trace::Trace t = [] {
    const auto s = scenarios::load_scenario(std::string(WAITLAB_SOURCE_DIR) + "/scenarios/halo2d.yaml",
                                            {"workload.iterations=3"});
    return app::simulate_scenario(s, false).result.trace;
  }();
  return t;
}

bool have_otf2_print() {
  return std::system("command -v otf2-print > /dev/null 2>&1") == 0;
}

TEST(Otf2Writer, FixtureAIsReadByOtf2Print) {
  const trace::Trace t = fixture_a().trace();
  const fs::path dir = scratch("fixture_a");
  trace::write_otf2(t, dir.string());
  EXPECT_TRUE(fs::exists(dir / "traces.otf2"));
  EXPECT_TRUE(fs::exists(dir / "traces.def"));
  EXPECT_FALSE(fs::exists(dir.string() + ".tmp"));
  if (!have_otf2_print()) GTEST_SKIP() << "otf2-print not installed (package otf2-tools)";
  const auto [code, listing] = otf2_print(dir);
  ASSERT_EQ(code, 0) << listing;
  EXPECT_EQ(records(listing), expected(t)) << listing;
  // The conventions Scalasca relies on: MPI regions by name with source file "MPI".
  const auto [dcode, defs] = otf2_print(dir, "-G");
  ASSERT_EQ(dcode, 0) << defs;
  for (const char* s : {"\"MPI_Init\"", "\"MPI_Finalize\"", "\"MPI_Recv\"", "\"MPI\"", "COMM_LOCATIONS",
                        "\"MPI_COMM_WORLD\"", "CPU_THREAD"})
    EXPECT_NE(defs.find(s), std::string::npos) << s << " not in\n" << defs;
  fs::remove_all(dir);
}

TEST(Otf2Writer, SimulatedRunIsReadByOtf2Print) {
  const fs::path dir = scratch("halo2d");
  trace::write_otf2(halo2d(), dir.string());
  if (!have_otf2_print()) GTEST_SKIP() << "otf2-print not installed (package otf2-tools)";
  const auto [code, listing] = otf2_print(dir);
  ASSERT_EQ(code, 0) << listing.substr(0, 2000);
  EXPECT_EQ(records(listing), expected(halo2d()));
  fs::remove_all(dir);
}

// Scalasca's clock condition at MPI_Init and MPI_Finalize (scout's pre_finalize check): a
// member that leaves before the latest member entered is a violation.
std::size_t init_finalize_violations(const trace::Trace& t) {
  std::size_t n = 0;
  for (const MpiOp op : {MpiOp::Init, MpiOp::Finalize}) {
    std::vector<std::pair<double, double>> calls;  // each rank's (enter, leave) of its call
    for (const auto& l : t.locations) {
      std::pair<double, double> c{NAN, NAN};
      for (const auto& e : l.events) {
        if (e.op != op) continue;
        if (e.kind == EventKind::Enter) c.first = e.time;
        if (e.kind == EventKind::Leave) c.second = e.time;
      }
      calls.push_back(c);
    }
    double latest = -INFINITY;
    for (const auto& c : calls) latest = std::max(latest, c.first);
    for (const auto& c : calls) n += c.second < latest ? 1 : 0;
  }
  return n;
}

// Simulated MPI_Finalize synchronises (docs/engine.md): every rank leaves it when the last one
// enters, so an OTF2 consumer sees a barrier-like call and no clock-condition violation; the
// run still ends when SimGrid's clock does, and Wait at Finalize is each rank's lead.
TEST(Otf2Writer, SimulatedInitAndFinalizeKeepTheClockCondition) {
  const auto s = scenarios::load_scenario(std::string(WAITLAB_SOURCE_DIR) + "/scenarios/demo.yaml",
                                          {"workload.ranks=64", "workload.iterations=20",
                                           "perturbations[0].rank=32", "perturbations[0].duration=5ms",
                                           "platform.nodes=64", "platform.cores=1", "run.baseline=true"});
  const auto o = app::simulate_scenario(s, false);
  const trace::Trace& t = o.result.trace;
  double last_enter = -INFINITY, last_leave = -INFINITY, lead = 0;
  std::vector<double> enter(t.ranks()), leave(t.ranks());
  for (std::size_t r = 0; r < t.ranks(); ++r) {
    const auto& ev = t.locations[r].events;
    ASSERT_GE(ev.size(), 2u);
    ASSERT_EQ(ev.back().op, MpiOp::Finalize);
    ASSERT_EQ(ev[ev.size() - 2].op, MpiOp::Finalize);
    enter[r] = ev[ev.size() - 2].time;
    leave[r] = ev.back().time;
    last_enter = std::max(last_enter, enter[r]);
    last_leave = std::max(last_leave, leave[r]);
  }
  for (std::size_t r = 0; r < t.ranks(); ++r) {
    EXPECT_EQ(leave[r], last_enter) << "rank " << r;
    lead += last_enter - enter[r];
  }
  EXPECT_EQ(last_leave, o.result.stats.simulated_time);  // SimGrid's end of the run
  // Wait at Finalize is each rank's lead; the delay adds 5 ms to it on the 43 ranks its wave
  // does not reach in the 10 iterations after it (it reaches 22..42, one rank per iteration).
  const auto at_finalize = [](const trace::Trace& x) {
    return wait_states(x, trace::Matching::build(x)).total[static_cast<std::size_t>(Pattern::WaitAtFinalize)];
  };
  EXPECT_NEAR(at_finalize(t), lead, 1e-12);
  ASSERT_TRUE(o.baseline.has_value());
  EXPECT_NEAR(at_finalize(t) - at_finalize(o.baseline->trace), 43 * 5e-3, 1e-9);
  EXPECT_EQ(init_finalize_violations(t), 0u);

  const fs::path dir = scratch("finalize");
  trace::write_otf2(t, dir.string());
  const trace::Trace back = trace::read_otf2((dir / "traces.otf2").string());
  EXPECT_EQ(init_finalize_violations(back), 0u);
  // The check is not vacuous: Finalize returning at once (SMPI's own) breaks it on every rank
  // that entered before the last ones, the 43 the wave did not reach.
  trace::Trace at_once = back;
  for (auto& l : at_once.locations) l.events.back().time = l.events[l.events.size() - 2].time;
  EXPECT_EQ(init_finalize_violations(at_once), 43u);
  fs::remove_all(dir);
}

// Events as OTF2 holds them: everything but the Irecv request's peer/tag/size and the Isend
// completion's fields other than the request; times to the nanosecond. (`op` is defined for
// collective records only; elsewhere producers may set it to the enclosing call's.)
void expect_same_events(const trace::Trace& a, const trace::Trace& b) {
  ASSERT_EQ(a.ranks(), b.ranks());
  EXPECT_EQ(a.origin, b.origin);  // a simulated run reads back as one, without a declared span
  EXPECT_EQ(a.has_declared_span(), b.has_declared_span());
  EXPECT_EQ(b.threads.size(), a.threads.size());
  EXPECT_EQ(a.counters, b.counters);
  EXPECT_EQ(a.defs.regions, b.defs.regions);
  EXPECT_EQ(a.defs.comms, b.defs.comms);
  for (std::size_t r = 0; r < a.ranks(); ++r) {
    const auto& x = a.locations[r].events;
    const auto& y = b.locations[r].events;
    ASSERT_EQ(x.size(), y.size()) << "rank " << r;
    for (std::size_t i = 0; i < x.size(); ++i) {
      EXPECT_NEAR(x[i].time, y[i].time, 0.5e-9) << "rank " << r << " event " << i;
      EXPECT_EQ(x[i].kind, y[i].kind) << "rank " << r << " event " << i;
      EXPECT_EQ(x[i].aux, y[i].aux) << "rank " << r << " event " << i;
      if (x[i].kind == EventKind::IrecvPost || x[i].kind == EventKind::IsendComplete) continue;
      if (x[i].kind == EventKind::CollBegin || x[i].kind == EventKind::CollEnd) {  // op means something there
        EXPECT_EQ(x[i].op, y[i].op) << "rank " << r << " event " << i;
      }
      EXPECT_EQ(x[i].ref, y[i].ref) << "rank " << r << " event " << i;
      EXPECT_EQ(x[i].peer, y[i].peer) << "rank " << r << " event " << i;
      EXPECT_EQ(x[i].tag, y[i].tag) << "rank " << r << " event " << i;
      EXPECT_EQ(x[i].bytes, y[i].bytes) << "rank " << r << " event " << i;
    }
  }
}

TEST(Otf2RoundTrip, FixtureAGivesTheSameWaitStates) {
  const trace::Trace t = fixture_a().trace();
  const fs::path dir = scratch("rt_fixture_a");
  trace::write_otf2(t, dir.string());
  trace::Otf2ReadStats stats;
  const trace::Trace back = trace::read_otf2((dir / "traces.otf2").string(), &stats);
  EXPECT_EQ(stats.skipped_locations, 0u);
  expect_same_events(t, back);
  const auto m1 = trace::Matching::build(t), m2 = trace::Matching::build(back);
  const auto w1 = wait_states(t, m1), w2 = wait_states(back, m2);
  ASSERT_EQ(w1.table.size(), w2.table.size());
  for (std::size_t i = 0; i < w1.table.size(); ++i) {
    EXPECT_EQ(w1.table[i].pattern, w2.table[i].pattern);
    EXPECT_EQ(w1.table[i].rank, w2.table[i].rank);
    EXPECT_EQ(m1.paths.name(w1.table[i].path, t.defs), m2.paths.name(w2.table[i].path, back.defs));
    EXPECT_NEAR(w1.table[i].seconds, w2.table[i].seconds, 1e-9);
  }
  fs::remove_all(dir);
}

TEST(Otf2RoundTrip, SimulatedRunKeepsEveryEvent) {
  const fs::path dir = scratch("rt_halo2d");
  trace::write_otf2(halo2d(), dir.string());
  expect_same_events(halo2d(), trace::read_otf2((dir / "traces.otf2").string()));
  fs::remove_all(dir);
}

// A measured trace's new fields: threads and counter samples are written, the origin and span
// kept in the archive's properties; what OTF2 cannot hold is listed by otf2_losses.
TEST(Otf2RoundTrip, ThreadsCountersOriginAndSpan) {
  trace::Trace t = fixture_a().trace();
  t.origin = trace::Origin::Extrae;
  t.span_begin = t.begin_time() - 0.5;
  t.span_end = t.end_time() + 0.25;
  t.counters = trace::kHasInstructions;  // no cycles: only PAPI_TOT_INS is written
  t.locations[1].counters = {{t.locations[1].events.front().time, 7, 99}, {t.locations[1].events.back().time, 11, 0}};
  const trace::RegionId main = t.defs.region("omp work");
  for (std::int32_t k : {1, 3}) {  // thread 3 without a thread 2: renumbered
    trace::Location l;
    l.rank = 0;
    l.thread = k;
    l.events = {trace::make_event(t.begin_time() + 0.1 * k, EventKind::Enter, MpiOp::None, main),
                trace::make_event(t.begin_time() + 0.2 * k, EventKind::Leave, MpiOp::None, main)};
    l.states = {{t.begin_time(), t.begin_time() + 0.05, 2}};
    t.threads.push_back(l);
  }
  const std::vector<std::string> lost = trace::otf2_losses(t);
  const std::vector<std::string> expected = {
      "the source, tag and size of MPI_Irecv requests at posting (OTF2 has them at completion)",  // Fixture A's
      "2 state intervals (not-useful states outside MPI: Paraver states, measurement overhead): OTF2 has no record "
      "for them",
      "the numbers of 1 worker threads (OTF2 readers number a process's threads 1, 2, ... in order)"};
  EXPECT_EQ(lost, expected);
  const fs::path dir = scratch("rt_measured");
  trace::write_otf2(t, dir.string());
  trace::Otf2ReadStats stats;
  const trace::Trace back = trace::read_otf2((dir / "traces.otf2").string(), &stats);
  fs::remove_all(dir);
  const double t0 = t.begin_time();  // the archive's time 0
  EXPECT_EQ(back.origin, trace::Origin::Extrae);
  EXPECT_NEAR(back.span_begin, -0.5, 1e-12);
  EXPECT_NEAR(back.span_end, t.end_time() + 0.25 - t0, 1e-12);
  EXPECT_EQ(back.counters, trace::kHasInstructions);
  ASSERT_EQ(back.locations[1].counters.size(), 2u);
  EXPECT_EQ(back.locations[1].counters[0].instructions, 7u);
  EXPECT_EQ(back.locations[1].counters[1].instructions, 11u);
  EXPECT_EQ(back.locations[1].counters[1].cycles, 0u);  // not written
  EXPECT_NEAR(back.locations[1].counters[1].time, t.locations[1].events.back().time - t0, 1e-9);
  EXPECT_EQ(stats.thread_locations, 2u);
  ASSERT_EQ(back.threads.size(), 2u);
  EXPECT_EQ(back.threads[1].rank, 0);
  EXPECT_EQ(back.threads[1].thread, 2);  // was 3
  ASSERT_EQ(back.threads[1].events.size(), 2u);
  EXPECT_NEAR(back.threads[1].events[1].time, 0.6, 1e-9);
  EXPECT_EQ(back.threads[1].events[1].ref, static_cast<std::uint32_t>(back.defs.find_region("omp work")));
  EXPECT_TRUE(back.threads[0].states.empty());
}

TEST(Otf2Reader, MissingAndTruncatedArchivesAreInputErrors) {
  const auto message = [](const std::string& anchor) {
    try {
      trace::read_otf2(anchor);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message("/nonexistent/traces.otf2").rfind("/nonexistent/traces.otf2: cannot open as an OTF2 archive", 0), 0u);
  const fs::path dir = scratch("truncated");
  trace::write_otf2(fixture_a().trace(), dir.string());
  // Cut rank 1's event file in half.
  const fs::path evt = dir / "traces" / "1.evt";
  ASSERT_TRUE(fs::exists(evt));
  fs::resize_file(evt, fs::file_size(evt) / 2);
  const std::string m = message((dir / "traces.otf2").string());
  EXPECT_EQ(m.rfind((dir / "traces.otf2").string() + ": rank 1", 0), 0u) << m;
  fs::remove_all(dir);
}

TEST(Otf2Writer, UnwritableDirectoryIsAnInputError) {
  try {
    trace::write_otf2(fixture_a().trace(), "/proc/waitlab/none");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("/proc/waitlab/none: cannot ", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace waitlab::analysis::test
