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
#include "analysis/trace/otf2_writer.hpp"
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

// Runs otf2-print on the archive; returns its exit code and output.
std::pair<int, std::string> otf2_print(const fs::path& archive) {
  const fs::path out = archive.string() + ".txt";
  const std::string cmd = "otf2-print '" + (archive / "traces.otf2").string() + "' > '" + out.string() + "' 2>&1";
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
  const auto [dcode, defs] = [&] {
    const std::string cmd = "otf2-print -G '" + (dir / "traces.otf2").string() + "' > '" + dir.string() + ".defs' 2>&1";
    const int st = std::system(cmd.c_str());
    std::ifstream in(dir.string() + ".defs");
    std::stringstream s;
    s << in.rdbuf();
    fs::remove(dir.string() + ".defs");
    return std::make_pair(WIFEXITED(st) ? WEXITSTATUS(st) : -1, s.str());
  }();
  ASSERT_EQ(dcode, 0) << defs;
  for (const char* s : {"\"MPI_Init\"", "\"MPI_Finalize\"", "\"MPI_Recv\"", "\"MPI\"", "COMM_LOCATIONS",
                        "\"MPI_COMM_WORLD\"", "CPU_THREAD"})
    EXPECT_NE(defs.find(s), std::string::npos) << s << " not in\n" << defs;
  fs::remove_all(dir);
}

TEST(Otf2Writer, SimulatedRunIsReadByOtf2Print) {
  const auto s = scenarios::load_scenario(std::string(WAITLAB_SOURCE_DIR) + "/scenarios/halo2d.yaml",
                                          {"workload.iterations=3"});
  const auto o = app::simulate_scenario(s, false);
  const fs::path dir = scratch("halo2d");
  trace::write_otf2(o.result.trace, dir.string());
  if (!have_otf2_print()) GTEST_SKIP() << "otf2-print not installed (package otf2-tools)";
  const auto [code, listing] = otf2_print(dir);
  ASSERT_EQ(code, 0) << listing.substr(0, 2000);
  EXPECT_EQ(records(listing), expected(o.result.trace));
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
