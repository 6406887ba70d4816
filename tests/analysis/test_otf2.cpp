// The OTF2 writer: every record of Fixture A and of a simulated run, as otf2-print (OTF2's
// own reader) sees them.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "analysis/trace/error.hpp"
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

// Events as OTF2 holds them: everything but the Irecv request's peer/tag/size and the Isend
// completion's fields other than the request; times to the nanosecond. (`op` is defined for
// collective records only; elsewhere producers may set it to the enclosing call's.)
void expect_same_events(const trace::Trace& a, const trace::Trace& b) {
  ASSERT_EQ(a.ranks(), b.ranks());
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
