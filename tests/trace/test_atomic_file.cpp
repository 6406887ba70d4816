// Atomic output files: a file under its final name is always whole, and every kind of
// failure (cannot create, writer throws, disk full, cannot rename) leaves the final name
// as it was and no temporary behind.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "analysis/trace/atomic_file.hpp"
#include "util/error.hpp"
#include "analysis/trace/wlt.hpp"

namespace waitlab::trace {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class AtomicFile : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("wl_atomic_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The directory's entries, sorted: what a failure may have left behind.
  std::string listing() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    std::string s;
    for (const auto& n : names) s += n + ";";
    return s;
  }

  fs::path dir_;
};

// A trace of about 4 MB (100,000 events).
Trace big_trace() {
  Trace t;
  t.defs.region("r");
  t.defs.comms.push_back(Communicator{"MPI_COMM_WORLD", {0}});
  Location l;
  l.rank = 0;
  for (int i = 0; i < 100000; ++i) {
    Event e;
    e.time = i;
    e.kind = (i % 2 == 0) ? EventKind::Enter : EventKind::Leave;
    l.events.push_back(e);
  }
  t.locations.push_back(l);
  return t;
}

TEST_F(AtomicFile, WritesAndReplacesWholeFiles) {
  const std::string path = (dir_ / "x.json").string();
  write_file_atomic(path, "first");
  EXPECT_EQ(slurp(path), "first");
  write_file_atomic(path, std::string("second"));
  EXPECT_EQ(slurp(path), "second");
  write_file_atomic(path, [](std::ostream& out) { out << "third" << 3; });
  EXPECT_EQ(slurp(path), "third3");
  EXPECT_EQ(listing(), "x.json;");
}

TEST_F(AtomicFile, WriterThatThrowsLeavesOldFileAndNoTemporary) {
  const std::string path = (dir_ / "x.json").string();
  write_file_atomic(path, "old");
  const auto half_then_throw = [](std::ostream& out) {
    out << "half";
    throw std::logic_error("writer failed");
  };
  try {
    write_file_atomic(path, half_then_throw);
    FAIL() << "the writer's exception must propagate";
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(), "writer failed");  // unchanged, not wrapped
  }
  EXPECT_EQ(slurp(path), "old");
  EXPECT_EQ(listing(), "x.json;");
  // Without an old file: nothing at all.
  EXPECT_THROW(write_file_atomic((dir_ / "y.json").string(), half_then_throw), std::logic_error);
  EXPECT_EQ(listing(), "x.json;");
}

TEST_F(AtomicFile, FailedStreamIsAnInputErrorAndLeavesNothing) {
  const std::string path = (dir_ / "x.json").string();
  try {
    write_file_atomic(path, [](std::ostream& out) { out.setstate(std::ios::badbit); });
    FAIL() << "a failed stream must be reported";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("cannot write " + path + ": writing " + path + ".tmp failed: ", 0),
              0u)
        << e.what();
  }
  EXPECT_EQ(listing(), "");
}

TEST_F(AtomicFile, MissingDirectory) {
  const std::string path = (dir_ / "missing" / "x.json").string();
  try {
    write_file_atomic(path, "x");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "cannot write " + path + ": cannot create " + path + ".tmp: No such file or directory");
  }
  EXPECT_EQ(listing(), "");
}

TEST_F(AtomicFile, FailedRenameRemovesTheTemporary) {
  // The final name is a non-empty directory: rename(2) refuses to replace it.
  fs::create_directories(dir_ / "x.json" / "inside");
  const std::string path = (dir_ / "x.json").string();
  try {
    write_file_atomic(path, "x");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(
        std::string(e.what()).rfind("cannot write " + path + ": cannot rename " + path + ".tmp to it: ", 0),
        0u)
        << e.what();
  }
  EXPECT_EQ(listing(), "x.json;");
  EXPECT_TRUE(fs::is_directory(dir_ / "x.json" / "inside"));
}

TEST_F(AtomicFile, TraceWriterExceptionLeavesOldTraceAndNoTemporary) {
  const std::string path = (dir_ / "t.wlt").string();
  write_wlt(big_trace(), path);
  const std::string old = slurp(path);
  Trace bad = big_trace();
  bad.attributes.push_back({"huge", std::string(std::size_t{1} << 24, 'x')});  // > the 16 MiB string limit
  EXPECT_THROW(write_wlt(bad, path), std::length_error);
  EXPECT_TRUE(slurp(path) == old);
  EXPECT_EQ(listing(), "t.wlt;");
  EXPECT_EQ(read_wlt(path), big_trace());
}

// Disk full, for real: a file-size limit makes write(2) fail with EFBIG part-way through.
// Run in a child process so that the limit cannot affect anything else.
TEST_F(AtomicFile, DiskFullLeavesNothingUnderTheFinalName) {
  const std::string trace_path = (dir_ / "t.wlt").string();
  const std::string text_path = (dir_ / "s.json").string();
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim {};
    lim.rlim_cur = lim.rlim_max = 100000;  // bytes
    if (::setrlimit(RLIMIT_FSIZE, &lim) != 0) ::_exit(10);
    int status = 0;
    try {
      write_wlt(big_trace(), trace_path);
      status |= 1;  // must not succeed
    } catch (const InputError& e) {
      if (std::string(e.what()).rfind("cannot write " + trace_path + ": writing ", 0) != 0) status |= 2;
    } catch (...) {
      status |= 4;
    }
    try {
      write_file_atomic(text_path, std::string(200000, 'x'));
      status |= 8;
    } catch (const InputError&) {
    } catch (...) {
      status |= 16;
    }
    ::_exit(status);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "bit 1: no error, 2: wrong message, 4: wrong type, 8/16: text file";
  EXPECT_EQ(listing(), "");
}

}  // namespace
}  // namespace waitlab::trace
