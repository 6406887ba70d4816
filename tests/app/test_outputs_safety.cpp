// Hostile endings (issue 19), end to end with the waitlab binary: a signal stops every
// simulation and discards what was unfinished; a command that fails late changes nothing in
// its output directory and leaves no directory it created behind; a message to a rank that
// has finished is bad input (exit 2, one line); a run too large for the host's limits is
// refused before it starts.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "analysis/output/json_text.hpp"

namespace waitlab::app {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;  // wallclock-ok: eventually()'s hang guard only

const std::string kSource = WAITLAB_SOURCE_DIR;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every file (with its content) and directory under `root`, by relative path.
std::map<std::string, std::string> tree(const fs::path& root) {
  std::map<std::string, std::string> t;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string rel = fs::relative(it->path(), root).string();
    t[rel] = it->is_directory() ? std::string("<dir>") : slurp(it->path());
  }
  return t;
}

std::set<std::string> names(const fs::path& dir) {
  std::set<std::string> n;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    n.insert(it->path().filename().string());
  return n;
}

// /proc/PID/stat: "PID (comm) STATE PPID ...": the state and the parent (comm may hold spaces).
bool proc_stat(pid_t pid, char& state, pid_t& ppid) {
  const std::string s = slurp("/proc/" + std::to_string(pid) + "/stat");
  const auto close = s.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream in(s.substr(close + 1));
  return static_cast<bool>(in >> state >> ppid);
}

// Running (not a zombie: an orphan's zombie may never be reaped in a container).
bool alive(pid_t pid) {
  char state = 0;
  pid_t ppid = 0;
  return proc_stat(pid, state, ppid) && state != 'Z' && state != 'X';
}

std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> kids;
  std::error_code ec;
  for (fs::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(name));
    char state = 0;
    pid_t ppid = 0;
    if (proc_stat(pid, state, ppid) && ppid == parent && state != 'Z') kids.push_back(pid);
  }
  return kids;
}

std::vector<pid_t> descendants(pid_t root) {
  std::vector<pid_t> all;
  for (const pid_t c : children_of(root)) {
    all.push_back(c);
    for (const pid_t g : descendants(c)) all.push_back(g);
  }
  return all;
}

// How long a condition may take to come true before the test calls it a hang: far above what
// any load makes of the few seconds these steps take, so that only a real hang fails. No test
// here bounds how long something takes (scripts/check_no_wallclock.py).
constexpr double kHangGuardSeconds = 300;

// Polls `done` every 20 ms until it holds, or until kHangGuardSeconds have passed; true if it held.
template <class F>
bool eventually(F done) {
  const auto end = Clock::now() + std::chrono::duration<double>(kHangGuardSeconds);  // wallclock-ok: hang guard
  while (!done()) {
    if (Clock::now() > end) return false;  // wallclock-ok: hang guard
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

struct Result {
  int status = -1;  // as from waitpid
  std::string out;
  std::string err;
  int code() const { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }
  bool one_line() const { return !err.empty() && err.find('\n') == err.size() - 1; }
};

class OutputsSafety : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string(info->test_suite_name()) + "_" + info->name();
    for (char& c : name)
      if (c == '/') c = '_';
    dir_ = fs::temp_directory_path() / ("waitlab_safety_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "tmp");
  }
  void TearDown() override {
    for (const pid_t p : strays_)
      if (alive(p)) ::kill(p, SIGKILL);
    fs::remove_all(dir_);
  }

  fs::path write(const std::string& name, const std::string& text) const {
    fs::create_directories((dir_ / name).parent_path());
    std::ofstream(dir_ / name, std::ios::binary) << text;
    return dir_ / name;
  }

  // Starts waitlab ARGS as from a terminal: default signal dispositions, nothing blocked,
  // TMPDIR = DIR/tmp (the simulation's temporary directories go there), output to files.
  // `limit`: a resource limit (setrlimit) of the process, e.g. {RLIMIT_AS, 2 GiB} for ulimit -v.
  using Limit = std::optional<std::pair<int, rlim_t>>;
  // `sigint_ignored`: as a background job of a script (`waitlab ... &`) starts.
  pid_t start(const std::vector<std::string>& args, Limit limit = std::nullopt, bool sigint_ignored = false) {
    std::vector<std::string> argv_s = {WAITLAB_BINARY};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    const std::string out = (dir_ / "stdout.txt").string();
    const std::string err = (dir_ / "stderr.txt").string();
    const std::string tmp = (dir_ / "tmp").string();
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
      for (const int sig : {SIGINT, SIGTERM, SIGHUP}) ::signal(sig, SIG_DFL);
      if (sigint_ignored) ::signal(SIGINT, SIG_IGN);
      sigset_t none;
      sigemptyset(&none);
      ::sigprocmask(SIG_SETMASK, &none, nullptr);
      const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(o, STDOUT_FILENO);
      ::dup2(e, STDERR_FILENO);
      ::setenv("TMPDIR", tmp.c_str(), 1);
      if (memory_check_ != nullptr)
        ::setenv("WAITLAB_MEMORY_CHECK", memory_check_, 1);
      else
        ::unsetenv("WAITLAB_MEMORY_CHECK");
      if (limit) {
        struct rlimit rl = {limit->second, limit->second};
        ::setrlimit(limit->first, &rl);
      }
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    return pid;
  }

  Result finish(pid_t pid) const {
    Result r;
    while (::waitpid(pid, &r.status, 0) < 0 && errno == EINTR) {
    }
    r.out = slurp(dir_ / "stdout.txt");
    r.err = slurp(dir_ / "stderr.txt");
    return r;
  }

  Result waitlab(const std::vector<std::string>& args, Limit limit = std::nullopt) {
    return finish(start(args, limit));
  }

  const char* memory_check_ = nullptr;  // WAITLAB_MEMORY_CHECK of the commands started (unset)

  // An output directory with the files of an earlier run and one of the user's.
  fs::path populated(const std::string& name, const std::vector<std::string>& files) const {
    for (const auto& f : files) write(name + "/" + f, "old " + f + "\n");
    write(name + "/notes.txt", "the user's own notes\n");
    return dir_ / name;
  }

  // The entries of DIR besides the ones a test made: a staging directory left behind shows here.
  std::set<std::string> leftovers(const std::set<std::string>& expected) const {
    std::set<std::string> extra;
    for (const auto& n : names(dir_))
      if (!expected.count(n) && n != "tmp" && n != "stdout.txt" && n != "stderr.txt") extra.insert(n);
    return extra;
  }

  fs::path dir_;
  std::vector<pid_t> strays_;  // killed at the end if a test failed to stop them
};

// A run of many seconds whose memory grows slowly: heat1d, 4096 ranks × 300 iterations.
const char* kLong =
    "name: long\n"
    "platform: {type: cluster, nodes: 256, cores: 16}\n"
    "workload: {type: heat1d, ranks: 4096, iterations: 300}\n";

const char* kTiGone =  // rank 0 sends to rank 1 after rank 1 has finished
    "0 init\n0 compute 1000\n0 send 1 1 8\n0 finalize\n1 init\n1 finalize\n";
const char* kTiGood = "0 init\n0 compute 1000\n0 send 1 1 8\n0 finalize\n1 init\n1 recv 0 1 8\n1 finalize\n";

// ---- signals ----------------------------------------------------------------------------

class Interrupt : public OutputsSafety, public ::testing::WithParamInterface<int> {};

TEST_P(Interrupt, StopsTheSimulationDiscardsItsOutputsAndKeepsTheOldOnes) {
  const int sig = GetParam();
  const fs::path scenario = write("long.yaml", kLong);
  const fs::path out = populated("out", {"summary.json", "report.html", "trace.wlt"});
  const auto before = tree(out);
  const pid_t parent = start({"run", scenario.string(), "--no-progress", "--out", out.string()});
  strays_.push_back(parent);
  // The simulation process appears once the scenario is loaded and checked.
  pid_t child = 0;
  ASSERT_TRUE(eventually([&] {
    const auto kids = children_of(parent);
    if (!kids.empty()) child = kids.front();
    return child != 0 || !alive(parent);
  }));
  ASSERT_NE(child, 0) << "waitlab ended before simulating: " << slurp(dir_ / "stderr.txt");
  strays_.push_back(child);
  ASSERT_TRUE(eventually([&] { return !names(dir_ / "tmp").empty(); }));  // its temporary directory
  std::this_thread::sleep_for(std::chrono::milliseconds(500));                  // well into the run
  ASSERT_TRUE(alive(child));

  ASSERT_EQ(::kill(parent, sig), 0);
  const Result r = finish(parent);
  EXPECT_TRUE(eventually([&] { return !alive(child); })) << "the simulation process outlived waitlab";
  if (sig == SIGKILL) {
    EXPECT_TRUE(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGKILL);
  } else {
    EXPECT_EQ(r.code(), 128 + sig);
    EXPECT_EQ(r.err, std::string("waitlab: interrupted by ") + (sig == SIGINT ? "SIGINT" : "SIGTERM") +
                         "; unfinished outputs were discarded\n");
  }
  EXPECT_EQ(r.out, "");
  // Nothing half-written anywhere: the old outputs unchanged, no staging directory, and the
  // simulation's temporary directory removed (after SIGKILL by the child itself).
  EXPECT_EQ(tree(out), before);
  EXPECT_EQ(leftovers({"long.yaml", "out"}), std::set<std::string>{});
  EXPECT_TRUE(eventually([&] { return names(dir_ / "tmp").empty(); }));
}

// `waitlab run ... &` in a script starts with SIGINT ignored: `kill -INT` did nothing, and
// the run went on. It stops now, as from a terminal.
TEST_F(OutputsSafety, SigintStopsARunStartedWithSigintIgnored) {
  const fs::path scenario = write("long.yaml", kLong);
  const pid_t parent = start({"run", scenario.string(), "--no-progress", "--out", (dir_ / "out").string()},
                             std::nullopt, true);
  strays_.push_back(parent);
  pid_t child = 0;
  ASSERT_TRUE(eventually([&] {
    const auto kids = children_of(parent);
    if (!kids.empty()) child = kids.front();
    return child != 0 || !alive(parent);
  }));
  ASSERT_NE(child, 0) << slurp(dir_ / "stderr.txt");
  strays_.push_back(child);
  ASSERT_EQ(::kill(parent, SIGINT), 0);
  const Result r = finish(parent);
  EXPECT_EQ(r.code(), 130);
  EXPECT_EQ(r.err, "waitlab: interrupted by SIGINT; unfinished outputs were discarded\n");
  EXPECT_TRUE(eventually([&] { return !alive(child); }));
  EXPECT_EQ(leftovers({"long.yaml"}), std::set<std::string>{});
  EXPECT_TRUE(eventually([&] { return names(dir_ / "tmp").empty(); }));
}

INSTANTIATE_TEST_SUITE_P(Signals, Interrupt, ::testing::Values(SIGINT, SIGTERM, SIGKILL),
                         [](const ::testing::TestParamInfo<int>& i) {
                           return std::string(i.param == SIGINT ? "SIGINT" : i.param == SIGTERM ? "SIGTERM" : "SIGKILL");
                         });

// A study: the signal reaches every job and every job's simulation; the study directory stays
// as it was. SIGKILL of waitlab: the jobs die with it, stop their simulations and remove the
// study's staging directory themselves.
class InterruptStudy : public OutputsSafety, public ::testing::WithParamInterface<int> {};

TEST_P(InterruptStudy, StopsEveryJobAndKeepsTheOldStudy) {
  const int sig = GetParam();
  const fs::path scenario = write("long.yaml", kLong);
  const fs::path out = populated("study", {"sweep.csv", "sweep.json", "point_0000/summary.json"});
  const auto before = tree(out);
  const pid_t parent = start({"sweep", scenario.string(), "--grid", "run.seed=1,2", "-j", "2", "--out", out.string()});
  strays_.push_back(parent);
  // Two jobs, each with its simulation process.
  std::vector<pid_t> all;
  ASSERT_TRUE(eventually([&] {
    all = descendants(parent);
    return all.size() >= 4 || !alive(parent);
  })) << slurp(dir_ / "stderr.txt");
  ASSERT_GE(all.size(), 4u) << "waitlab ended early: " << slurp(dir_ / "stdout.txt") << slurp(dir_ / "stderr.txt");
  for (const pid_t p : all) strays_.push_back(p);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));

  ASSERT_EQ(::kill(parent, sig), 0);
  const Result r = finish(parent);
  for (const pid_t p : all) EXPECT_TRUE(eventually([&] { return !alive(p); })) << "process " << p << " outlived waitlab";
  if (sig == SIGKILL) {
    EXPECT_TRUE(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGKILL);
  } else {
    EXPECT_EQ(r.code(), 143);
    EXPECT_EQ(r.err, "waitlab: interrupted by SIGTERM; unfinished outputs were discarded\n");
  }
  EXPECT_EQ(tree(out), before);
  EXPECT_TRUE(eventually([&] { return leftovers({"long.yaml", "study"}).empty(); }))
      << *leftovers({"long.yaml", "study"}).begin();
  EXPECT_TRUE(eventually([&] { return names(dir_ / "tmp").empty(); }));
}

INSTANTIATE_TEST_SUITE_P(Signals, InterruptStudy, ::testing::Values(SIGTERM, SIGKILL),
                         [](const ::testing::TestParamInfo<int>& i) {
                           return std::string(i.param == SIGTERM ? "SIGTERM" : "SIGKILL");
                         });

// ---- failures late in a command ----------------------------------------------------------

const char* kSmall =
    "name: small\n"
    "platform: {type: cluster, nodes: 4}\n"
    "workload: {type: heat1d, ranks: 4, iterations: 3}\n"
    "outputs: {analyses: [waitstate]}\n";

TEST_F(OutputsSafety, RunAndReplayThatFailChangeNothing) {
  const fs::path scenario = write("small.yaml", kSmall);
  const fs::path gone = write("gone.ti", kTiGone);
  // A real earlier run, and a file of the user's beside it.
  const fs::path out = dir_ / "out";
  ASSERT_EQ(waitlab({"run", scenario.string(), "--no-progress", "--out", out.string()}).code(), 0);
  write("out/notes.txt", "the user's own notes\n");
  const auto before = tree(out);
  ASSERT_TRUE(before.count("summary.json") && before.count("report.html") && before.count("waitstates.csv"));

  // Bad input found by the simulation (a message to a finished rank).
  Result r = waitlab({"replay", gone.string(), "--no-progress", "--out", out.string()});
  EXPECT_EQ(r.code(), 2);
  EXPECT_TRUE(r.one_line()) << r.err;
  EXPECT_EQ(tree(out), before);
  // A failure when the outputs are put in place, after the simulation and the analyses: an
  // output name taken by a directory.
  fs::remove(out / "waitstates.csv");
  fs::create_directories(out / "waitstates.csv" / "x");
  const auto blocked = tree(out);
  r = waitlab({"run", scenario.string(), "--no-progress", "--out", out.string()});
  EXPECT_EQ(r.code(), 2);
  EXPECT_EQ(r.err, "waitlab: error: cannot write " + out.string() +
                       "/waitstates.csv: a directory of that name is in the way (nothing was changed)\n");
  EXPECT_EQ(tree(out), blocked);
  // Into directories that do not exist: none is left behind.
  r = waitlab({"replay", gone.string(), "--no-progress", "--out", (dir_ / "new" / "deep" / "er").string()});
  EXPECT_EQ(r.code(), 2);
  EXPECT_EQ(leftovers({"small.yaml", "gone.ti", "out"}), std::set<std::string>{});
  // A scenario that deadlocks.
  write("ring.ti", "0 init\n0 recv 1 1 8\n0 finalize\n1 init\n1 recv 0 1 8\n1 finalize\n");
  r = waitlab({"replay", (dir_ / "ring.ti").string(), "--no-progress", "--out", (dir_ / "new").string()});
  EXPECT_EQ(r.code(), 2);
  EXPECT_EQ(r.err.rfind("waitlab: error: deadlock at t=0 s: 2 of 2 ranks can never finish", 0), 0u) << r.err;
  EXPECT_EQ(leftovers({"small.yaml", "gone.ti", "ring.ti", "out"}), std::set<std::string>{});
  EXPECT_TRUE(names(dir_ / "tmp").empty());
}

TEST_F(OutputsSafety, ASuccessfulRunReplacesItsOutputsAndKeepsTheUsersFiles) {
  const fs::path scenario = write("small.yaml", kSmall);
  const fs::path out = populated("out", {"summary.json", "baseline.wlt", "delay.csv"});
  const Result r = waitlab({"run", scenario.string(), "--no-progress", "--out", out.string()});
  ASSERT_EQ(r.code(), 0) << r.err;
  const auto after = tree(out);
  EXPECT_NE(after.at("summary.json"), "old summary.json\n");
  EXPECT_EQ(after.count("baseline.wlt"), 0u);  // outputs this run does not write are removed
  EXPECT_EQ(after.count("delay.csv"), 0u);
  EXPECT_EQ(after.at("notes.txt"), "the user's own notes\n");
  EXPECT_TRUE(after.count("trace.wlt") && after.count("host.json") && after.count("waitstates.csv"));
  EXPECT_EQ(leftovers({"small.yaml", "out"}), std::set<std::string>{});
  // The terminal names the outputs where they are, not where they were prepared.
  EXPECT_NE(r.out.find("results         " + out.string() + "/summary.json, "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(".waitlab-"), std::string::npos) << r.out;
  EXPECT_EQ(slurp(out / "host.json").find(".waitlab-"), std::string::npos);
  // A new directory gets the usual permissions, not mkdtemp's 0700.
  const Result again = waitlab({"run", scenario.string(), "--no-progress", "--out", (dir_ / "fresh").string()});
  ASSERT_EQ(again.code(), 0) << again.err;
  const auto perms = fs::status(dir_ / "fresh").permissions();
  EXPECT_NE(perms & fs::perms::others_read, fs::perms::none);
}

// A waitlab killed (SIGKILL) while it prepared its outputs leaves its staging directory beside
// them, and its trash directory if the kill came as the commit began. The next waitlab that
// writes there removes those of a process that has ended (the name holds its pid and start
// time) and nothing else: not those of a waitlab still running, not a user's look-alike.
TEST_F(OutputsSafety, TheLeftoversOfAKilledWaitlabAreRemovedByTheNext) {
  const fs::path scenario = write("small.yaml", kSmall);
  const fs::path out = populated("out", {"summary.json"});
  const std::string pid = std::to_string(::getpid());
  std::ifstream stat_in("/proc/" + pid + "/stat");
  std::string stat((std::istreambuf_iterator<char>(stat_in)), std::istreambuf_iterator<char>());
  std::istringstream fields(stat.substr(stat.rfind(')') + 1));
  std::string start;
  for (int i = 3; i <= 22; ++i) fields >> start;
  const std::string live = pid + "." + start;  // this test process: running
  const std::string dead = pid + "." + std::to_string(std::stoull(start) + 1);  // same pid, another start
  for (const std::string& d : std::vector<std::string>{".out.waitlab-" + dead + "-abc123", ".waitlab-trash." + dead + "-def456",
                               ".out.waitlab-" + live + "-ghi789", ".out.waitlab-mine", "out/.waitlab-staging." +
                               dead + "-jkl012"}) {
    fs::create_directories(dir_ / d);
    write(d + "/f", "x\n");
  }
  const Result r = waitlab({"run", scenario.string(), "--no-progress", "--out", out.string()});
  ASSERT_EQ(r.code(), 0) << r.err;
  for (const std::string& gone : std::vector<std::string>{".out.waitlab-" + dead + "-abc123", ".waitlab-trash." + dead + "-def456",
                                  "out/.waitlab-staging." + dead + "-jkl012"}) {
    EXPECT_FALSE(fs::exists(dir_ / gone)) << gone;
    EXPECT_NE(r.err.find("waitlab: " + out.string() + ": removed " + (dir_ / gone).string() +
                         ", the unfinished outputs of an earlier waitlab that was killed\n"),
              std::string::npos)
        << r.err;
  }
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 3) << r.err;
  EXPECT_EQ(slurp(dir_ / (".out.waitlab-" + live + "-ghi789") / "f"), "x\n");
  EXPECT_EQ(slurp(dir_ / ".out.waitlab-mine" / "f"), "x\n");
  EXPECT_EQ(tree(out).at("notes.txt"), "the user's own notes\n");
}

TEST_F(OutputsSafety, AnalyzeThatFailsChangesNothing) {
  const fs::path scenario = write("small.yaml", kSmall);
  ASSERT_EQ(waitlab({"run", scenario.string(), "--no-progress", "--out", (dir_ / "r").string()}).code(), 0);
  const fs::path ana = dir_ / "ana";
  ASSERT_EQ(waitlab({"analyze", (dir_ / "r" / "trace.wlt").string(), "--out", ana.string()}).code(), 0);
  write("ana/notes.txt", "mine\n");
  fs::remove(ana / "delay.csv");
  fs::create_directories(ana / "delay.csv" / "x");
  const auto before = tree(ana);
  Result r = waitlab({"analyze", (dir_ / "r" / "trace.wlt").string(), "--out", ana.string()});
  EXPECT_EQ(r.code(), 2);
  EXPECT_EQ(r.err, "waitlab: error: cannot write " + ana.string() +
                       "/delay.csv: a directory of that name is in the way (nothing was changed)\n");
  EXPECT_EQ(tree(ana), before);
  // An unreadable trace: no output directory is made.
  write("bad.wlt", "not a trace");
  r = waitlab({"analyze", (dir_ / "bad.wlt").string(), "--out", (dir_ / "new" / "ana").string()});
  EXPECT_EQ(r.code(), 2);
  EXPECT_EQ(leftovers({"small.yaml", "r", "ana", "bad.wlt"}), std::set<std::string>{});
}

TEST_F(OutputsSafety, ConvertRefusesToOverwriteItsInputAndLeavesNothingWhenItFails) {
  const fs::path scenario = write("small.yaml", kSmall);
  const fs::path run = dir_ / "r";
  ASSERT_EQ(waitlab({"run", scenario.string(), "--no-progress", "--out", run.string()}).code(), 0);
  const auto before = tree(run);
  const std::string in = (run / "trace.wlt").string();
  // The run directory as an OTF2 archive directory would replace the run, its input included.
  Result r = waitlab({"convert", in, run.string()});
  EXPECT_EQ(r.code(), 2);
  EXPECT_EQ(r.err, "waitlab: error: " + run.string() + ": the output would replace a directory holding the input " +
                       in + "; write it elsewhere\n");
  r = waitlab({"convert", in, in});
  EXPECT_EQ(r.code(), 2);
  EXPECT_EQ(r.err, "waitlab: error: " + in + ": the output would overwrite the input " + in + "; write it elsewhere\n");
  r = waitlab({"convert", in, dir_.string()});
  EXPECT_EQ(r.code(), 2);
  EXPECT_TRUE(r.one_line()) << r.err;
  EXPECT_EQ(tree(run), before);
  // Into the input's own OTF2 archive.
  ASSERT_EQ(waitlab({"convert", in, (dir_ / "otf").string()}).code(), 0);
  r = waitlab({"convert", (dir_ / "otf").string(), (dir_ / "otf" / "x.wlt").string()});
  EXPECT_EQ(r.code(), 2);
  EXPECT_TRUE(r.one_line()) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "otf" / "x.wlt"));
  // A TI trace that cannot be replayed (an MPI_ANY_SOURCE receive no send is left for), into
  // a directory that does not exist: nothing is made.
  write("any.ti", "0 init\n0 recv -333 1 8\n0 finalize\n1 init\n1 finalize\n");
  r = waitlab({"convert", (dir_ / "any.ti").string(), (dir_ / "new" / "x.wlt").string()});
  EXPECT_EQ(r.code(), 2);
  EXPECT_TRUE(r.one_line()) << r.err;
  EXPECT_EQ(leftovers({"small.yaml", "r", "otf", "any.ti"}), std::set<std::string>{});
  // A successful conversion over an older archive replaces it whole.
  ASSERT_EQ(waitlab({"convert", in, (dir_ / "otf").string()}).code(), 0);
  EXPECT_EQ(leftovers({"small.yaml", "r", "otf", "any.ti"}), std::set<std::string>{});
  EXPECT_TRUE(fs::exists(dir_ / "otf" / "traces.otf2"));
}

TEST_F(OutputsSafety, ReportWithoutSummaryChangesNothing) {
  const fs::path out = populated("out", {"report.html", "waitstates.csv"});
  const auto before = tree(out);
  Result r = waitlab({"report", out.string()});
  EXPECT_EQ(r.code(), 2);
  EXPECT_TRUE(r.one_line()) << r.err;
  EXPECT_EQ(r.out, "");  // no "wrote " before the error
  EXPECT_EQ(tree(out), before);
  r = waitlab({"report", (dir_ / "none").string()});
  EXPECT_EQ(r.code(), 2);
  EXPECT_EQ(leftovers({"out"}), std::set<std::string>{});
}

TEST_F(OutputsSafety, AStudyWithAFailingJobChangesNothing) {
  write("good.ti", kTiGood);
  write("gone.ti", kTiGone);
  const fs::path scenario = write("trace.yaml",
                                  "name: tr\n"
                                  "platform: {type: cluster, nodes: 2}\n"
                                  "workload: {trace: good.ti}\n");
  const fs::path out = populated("sweep", {"sweep.csv", "sweep.json", "point_0000/summary.json"});
  const auto before = tree(out);
  // Point 0 succeeds, point 1 sends to a finished rank: the study fails and replaces nothing.
  Result r = waitlab({"sweep", scenario.string(), "--grid",
                       "workload.trace=" + (dir_ / "good.ti").string() + "," + (dir_ / "gone.ti").string(), "--out",
                       out.string()});
  EXPECT_EQ(r.code(), 2) << r.out << r.err;
  EXPECT_NE(r.out.find("FAILED: rank 0, action 2 (send): destination rank 1 has already finished"), std::string::npos)
      << r.out;
  EXPECT_EQ(tree(out), before);
  EXPECT_EQ(leftovers({"good.ti", "gone.ti", "trace.yaml", "sweep"}), std::set<std::string>{});
  // A job's error is shown on one line, its control characters escaped, on standard error as
  // every error of waitlab.
  write("ctrl.ti", "0 init\n0 frob\x1b[31mnicate\n0 finalize\n1 init\n1 finalize\n");
  r = waitlab({"sweep", scenario.string(), "--grid",
               "workload.trace=" + (dir_ / "good.ti").string() + "," + (dir_ / "ctrl.ti").string(), "--out",
               out.string()});
  EXPECT_EQ(r.code(), 2) << r.out << r.err;
  EXPECT_NE(r.out.find("FAILED: " + (dir_ / "ctrl.ti").string() + ":2: unknown action 'frob\\x1b[31mnicate'"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.err.rfind("waitlab: error: point_0001: " + (dir_ / "ctrl.ti").string() +
                            ":2: unknown action 'frob\\x1b[31mnicate'",
                        0),
            0u)
      << r.err;
  EXPECT_TRUE(r.one_line()) << r.err;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos);
  EXPECT_EQ(tree(out), before);
  // All points succeed: the study is replaced, each point's run directory whole, with its
  // run.log (the terminal summary).
  r = waitlab({"sweep", scenario.string(), "--grid", "run.seed=1,2", "--out", out.string()});
  ASSERT_EQ(r.code(), 0) << r.out << r.err;
  EXPECT_NE(r.out.find(" " + (out / "point_0000").string() + "\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("wrote " + (out / "sweep.csv").string() + "\n"), std::string::npos) << r.out;
  const auto after = tree(out);
  EXPECT_NE(after.at("sweep.csv"), "old sweep.csv\n");
  EXPECT_EQ(after.at("notes.txt"), "the user's own notes\n");
  EXPECT_TRUE(after.count("point_0001/summary.json") && after.count("point_0000/run.log"));
  EXPECT_EQ(after.at("point_0000/run.log").find(".waitlab-"), std::string::npos);
  EXPECT_EQ(leftovers({"good.ti", "gone.ti", "ctrl.ti", "trace.yaml", "sweep"}), std::set<std::string>{});
}

TEST_F(OutputsSafety, WhatifAndValidateThatFailLateChangeNothing) {
  const fs::path scenario = write("small.yaml", std::string(kSmall) + "variants:\n  - {name: ideal, network: ideal}\n");
  // whatif: every run succeeds, then the study's table cannot be put in place.
  const fs::path w = populated("whatif", {"whatif.html", "baseline/summary.json"});
  fs::create_directories(w / "whatif.csv" / "x");
  auto before = tree(w);
  Result r = waitlab({"whatif", scenario.string(), "--out", w.string()});
  EXPECT_EQ(r.code(), 2) << r.out << r.err;
  EXPECT_EQ(r.err, "waitlab: error: cannot write " + w.string() +
                       "/whatif.csv: a directory of that name is in the way (nothing was changed)\n");
  EXPECT_EQ(tree(w), before);
  // validate: likewise with its table.
  const fs::path v = populated("validation", {"validation.json", "small/waitstates.csv"});
  fs::create_directories(v / "validation.csv" / "x");
  before = tree(v);
  r = waitlab({"validate", scenario.string(), "--no-plot", "--out", v.string()});
  EXPECT_EQ(r.code(), 2) << r.out << r.err;
  EXPECT_EQ(r.err, "waitlab: error: cannot write " + v.string() +
                       "/validation.csv: a directory of that name is in the way (nothing was changed)\n");
  EXPECT_EQ(tree(v), before);
  EXPECT_EQ(leftovers({"small.yaml", "whatif", "validation"}), std::set<std::string>{});
}

// ---- bad input found by the simulation, and the host's limits -----------------------------

TEST_F(OutputsSafety, ReplayOfATraceSendingToAFinishedRankIsBadInput) {
  // SMPI aborted here ("Actor pid=2 is gone??", a backtrace, exit 1).
  const fs::path gone = write("gone.ti", kTiGone);
  for (const char* semantics : {"waitlab", "smpi-default"}) {
    const Result r = waitlab({"replay", gone.string(), "--no-progress", "--set", std::string("run.semantics=") + semantics,
                              "--out", (dir_ / "o").string()});
    EXPECT_EQ(r.code(), 2) << semantics;
    EXPECT_EQ(r.err,
              "waitlab: error: rank 0, action 2 (send): destination rank 1 has already finished (at t=0 s, after its "
              "last action): the message can never be received\n")
        << semantics;
  }
  EXPECT_FALSE(fs::exists(dir_ / "o"));
}

TEST_F(OutputsSafety, ARunBeyondTheAddressSpaceLimitIsRefusedBeforeItStarts) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer reserves terabytes of address space at start: no process of this build runs "
                  "under ulimit -v (MemoryCheck.AddressSpaceDataAndCommitLimits tests the check itself)";
#endif
  // 1024 ranks need 8 GiB of address space for their stacks; ulimit -v 2 GiB.
  const fs::path scenario = write("k.yaml",
                                  "name: k\n"
                                  "platform: {type: cluster, nodes: 64, cores: 16}\n"
                                  "workload: {type: heat1d, ranks: 1024, iterations: 10}\n");
  const Result r = waitlab({"run", scenario.string(), "--no-progress", "--out", (dir_ / "o").string()},
                           std::make_pair(static_cast<int>(RLIMIT_AS), rlim_t{2} << 30));
  EXPECT_EQ(r.code(), 2);
  EXPECT_TRUE(r.one_line()) << r.err;
  EXPECT_EQ(r.err.rfind("waitlab: error: this simulation of 1024 ranks needs about ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(" of address space (8 MiB of stack per rank) but the address-space limit (ulimit -v) is 2.0 "
                       "GiB: raise it (ulimit -v unlimited) or simulate fewer ranks or iterations"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "o"));
}

TEST_F(OutputsSafety, ARunWhoseTraceExceedsTheFileSizeLimitIsRefusedBeforeItStarts) {
  // The simulation hands its trace over in one file (about 70 MB here); ulimit -f 10 MB made
  // the simulation process die of SIGXFSZ at the very end.
  const fs::path scenario = write("k.yaml",
                                  "name: k\n"
                                  "platform: {type: cluster, nodes: 64, cores: 16}\n"
                                  "workload: {type: heat1d, ranks: 1024, iterations: 100}\n");
  const Result r = waitlab({"run", scenario.string(), "--no-progress", "--out", (dir_ / "o").string()},
                           std::make_pair(static_cast<int>(RLIMIT_FSIZE), rlim_t{10} << 20));
  EXPECT_EQ(r.code(), 2);
  EXPECT_EQ(r.err,
            "waitlab: error: this simulation of 1024 ranks writes its trace of about 68 MiB (1.6 million events) into "
            "one file, but the file-size limit (ulimit -f) is 10 MiB: raise it (ulimit -f unlimited) or simulate "
            "fewer ranks or iterations (WAITLAB_MEMORY_CHECK=warn runs it anyway)\n");
  EXPECT_FALSE(fs::exists(dir_ / "o"));
}

// The pictures of `waitlab plot` and `waitlab pop` are drawn by a Python child: it dies with
// waitlab, and the directory keeps its old pictures and report until the new ones are complete.
// A stand-in interpreter (WAITLAB_PYTHON) that never finishes stands for a long drawing.
class Drawing : public OutputsSafety {
 protected:
  void SetUp() override {
    OutputsSafety::SetUp();
    const fs::path py = write("slow-python", "#!/bin/sh\nexec sleep 60\n");
    fs::permissions(py, fs::perms::owner_all);
    ::setenv("WAITLAB_PYTHON", py.c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("WAITLAB_PYTHON");
    OutputsSafety::TearDown();
  }
  // Starts `args`, waits for the stand-in interpreter, sends `sig` to waitlab.
  Result interrupt(const std::vector<std::string>& args, int sig) {
    const pid_t parent = start(args);
    strays_.push_back(parent);
    pid_t child = 0;
    EXPECT_TRUE(eventually([&] {
      const auto kids = children_of(parent);
      if (!kids.empty()) child = kids.front();
      return child != 0 || !alive(parent);
    }));
    EXPECT_NE(child, 0) << "waitlab ended before drawing: " << slurp(dir_ / "stderr.txt");
    if (child == 0) return finish(parent);
    strays_.push_back(child);
    EXPECT_EQ(::kill(parent, sig), 0);
    const Result r = finish(parent);
    EXPECT_TRUE(eventually([&] { return !alive(child); })) << "the drawing outlived waitlab";
    return r;
  }
};

TEST_F(Drawing, PlotInterruptedStopsPythonAndKeepsThePictures) {
  const fs::path scenario = write("small.yaml", kSmall);
  const fs::path out = dir_ / "out";
  {
    ::unsetenv("WAITLAB_PYTHON");  // the real pictures first
    const Result made = waitlab({"run", scenario.string(), "--no-progress", "--out", out.string(), "--set",
                                 "outputs.analyses=[waitstate,idlewave]"});
    ::setenv("WAITLAB_PYTHON", (dir_ / "slow-python").c_str(), 1);
    ASSERT_EQ(made.code(), 0) << made.err;
  }
  ASSERT_TRUE(fs::exists(out / "idlewave_heatmap.png"));
  ASSERT_TRUE(fs::exists(out / "report.html"));
  const auto before = tree(out);
  const Result r = interrupt({"plot", out.string()}, SIGINT);
  EXPECT_EQ(r.code(), 130);
  EXPECT_EQ(r.err, "waitlab: interrupted by SIGINT; unfinished outputs were discarded\n");
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(tree(out), before);
  EXPECT_EQ(leftovers({"small.yaml", "out", "slow-python"}), std::set<std::string>{});

  // A drawing that fails is an error and changes nothing either.
  ::setenv("WAITLAB_PYTHON", "/bin/false", 1);
  const Result failed = waitlab({"plot", out.string()});
  EXPECT_EQ(failed.code(), 2);
  EXPECT_TRUE(failed.one_line()) << failed.err;
  EXPECT_NE(failed.err.find("/bin/false failed drawing idlewave"), std::string::npos) << failed.err;
  EXPECT_EQ(tree(out), before);
  EXPECT_EQ(leftovers({"small.yaml", "out", "slow-python"}), std::set<std::string>{});

  // An interpreter that never ends (it hung the command) is stopped after WAITLAB_PLOT_TIMEOUT.
  ::setenv("WAITLAB_PYTHON", (dir_ / "slow-python").c_str(), 1);
  ::setenv("WAITLAB_PLOT_TIMEOUT", "1", 1);
  const Result stuck = waitlab({"plot", out.string()});
  ::unsetenv("WAITLAB_PLOT_TIMEOUT");
  EXPECT_EQ(stuck.code(), 2);
  EXPECT_EQ(stuck.err, "waitlab: error: " + (dir_ / "slow-python").string() +
                           " did not finish drawing idlewave within 1 s (WAITLAB_PLOT_TIMEOUT): stopped\n");
  EXPECT_EQ(tree(out), before);
  EXPECT_EQ(leftovers({"small.yaml", "out", "slow-python"}), std::set<std::string>{});
}

TEST_F(Drawing, PopInterruptedStopsPythonAndKeepsTheOldTable) {
  const fs::path scenario = write("small.yaml", kSmall);
  ::unsetenv("WAITLAB_PYTHON");
  for (const char* n : {"2", "4"})
    ASSERT_EQ(waitlab({"run", scenario.string(), "--no-progress", "--out", (dir_ / (std::string("r") + n)).string(),
                       "--set", std::string("workload.ranks=") + n})
                  .code(),
              0);
  ::setenv("WAITLAB_PYTHON", (dir_ / "slow-python").c_str(), 1);
  const fs::path out = populated("pop", {"pop.csv", "pop.json", "summary.json", "pop.png", "pop_speedup.png", "report.html"});
  const auto before = tree(out);
  const Result r = interrupt({"pop", (dir_ / "r2").string(), (dir_ / "r4").string(), "-o", out.string()}, SIGTERM);
  EXPECT_EQ(r.code(), 143);
  EXPECT_EQ(r.err, "waitlab: interrupted by SIGTERM; unfinished outputs were discarded\n");
  EXPECT_EQ(tree(out), before);
  EXPECT_EQ(leftovers({"small.yaml", "r2", "r4", "pop", "slow-python"}), std::set<std::string>{});

  // Completed (the picture fails: a warning), the table replaces the old one and the user's
  // file stays.
  ::setenv("WAITLAB_PYTHON", "/bin/false", 1);
  const Result done = waitlab({"pop", (dir_ / "r2").string(), (dir_ / "r4").string(), "-o", out.string()});
  EXPECT_EQ(done.code(), 0) << done.err;
  EXPECT_NE(done.err.find("the POP pictures were not drawn"), std::string::npos) << done.err;
  EXPECT_EQ(done.err.find(".waitlab-"), std::string::npos) << done.err;  // DIR named, not the staging directory
  EXPECT_EQ(slurp(out / "notes.txt"), "the user's own notes\n");
  EXPECT_FALSE(fs::exists(out / "pop.png"));  // the old picture described other runs
  EXPECT_FALSE(fs::exists(out / "pop_speedup.png"));
  EXPECT_NE(slurp(out / "pop.csv").find("run,origin,convention,ranks,units"), std::string::npos);
  EXPECT_EQ(leftovers({"small.yaml", "r2", "r4", "pop", "slow-python"}), std::set<std::string>{});
}


// ---- inputs are never harmed (issue 29) -----------------------------------------------

// `waitlab convert t.wlt DIR` into a directory holding the user's files deleted them (exit 0).
TEST_F(OutputsSafety, ConvertNeverDeletesTheUsersFilesInTheWay) {
  const fs::path scenario = write("small.yaml", kSmall);
  const fs::path run = dir_ / "r";
  ASSERT_EQ(waitlab({"run", scenario.string(), "--no-progress", "--out", run.string()}).code(), 0);
  const std::string in = (run / "trace.wlt").string();
  write("D/notes.txt", "the user's own notes\n");
  const auto before = tree(dir_ / "D");
  Result r = waitlab({"convert", in, (dir_ / "D").string()});
  EXPECT_EQ(r.code(), 2);
  EXPECT_EQ(r.err, "waitlab: error: cannot write " + (dir_ / "D").string() + ": it holds " +
                       (dir_ / "D" / "notes.txt").string() +
                       ", which the new output does not have; waitlab never deletes a file it would not write "
                       "again: remove it yourself or write elsewhere (nothing was changed)\n");
  EXPECT_EQ(tree(dir_ / "D"), before);
  // An archive of its own is replaced: the same files, new contents.
  ASSERT_EQ(waitlab({"convert", in, (dir_ / "A").string()}).code(), 0);
  r = waitlab({"convert", in, (dir_ / "A").string()});
  EXPECT_EQ(r.code(), 0) << r.err;
  EXPECT_EQ(leftovers({"small.yaml", "r", "D", "A"}), std::set<std::string>{});
}

// A TI index listing absolute paths, converted into the directory of its rank files: the rank
// files were replaced by an OTF2 archive (exit 0).
TEST_F(OutputsSafety, ConvertRefusesToReplaceTheRankFilesOfItsTiIndex) {
  const fs::path scenario = write("small.yaml", kSmall);
  ASSERT_EQ(waitlab({"run", scenario.string(), "--no-progress", "--out", (dir_ / "r").string()}).code(), 0);
  ASSERT_EQ(waitlab({"convert", (dir_ / "r" / "trace.wlt").string(), (dir_ / "t.ti").string()}).code(), 0);
  fs::rename(dir_ / "t.ti_files", dir_ / "files");
  std::string index;
  for (int rank = 0; rank < 4; ++rank) index += (dir_ / "files" / ("rank-" + std::to_string(rank) + ".txt")).string() + "\n";
  const fs::path idx = write("idx.ti", index);
  const auto before = tree(dir_ / "files");
  const Result r = waitlab({"convert", idx.string(), (dir_ / "files").string()});
  EXPECT_EQ(r.code(), 2);
  EXPECT_EQ(r.err, "waitlab: error: " + (dir_ / "files").string() +
                       ": the output would replace a directory holding the input " +
                       (dir_ / "files" / "rank-0.txt").string() + "; write it elsewhere\n");
  EXPECT_EQ(tree(dir_ / "files"), before);
  // The same through a symbolic link and a path with `..`.
  fs::create_directory_symlink(dir_ / "files", dir_ / "link");
  EXPECT_EQ(waitlab({"convert", idx.string(), (dir_ / "link").string()}).code(), 2);
  EXPECT_EQ(waitlab({"convert", idx.string(), (dir_ / "r" / ".." / "files").string()}).code(), 2);
  EXPECT_EQ(tree(dir_ / "files"), before);
}

// `waitlab replay r/trace.wlt --out r` replaced its own input with the replay's trace. It is
// refused before anything is simulated — also when the output directory is the run directory
// under another name, or holds a hard link of the input under the trace's name.
TEST_F(OutputsSafety, ReplayRefusesToOverwriteTheTraceItReplays) {
  const fs::path scenario = write("small.yaml", kSmall);
  const fs::path run = dir_ / "r";
  ASSERT_EQ(waitlab({"run", scenario.string(), "--no-progress", "--out", run.string()}).code(), 0);
  const std::string in = (run / "trace.wlt").string();
  const auto before = tree(run);
  Result r = waitlab({"replay", in, "--no-progress", "--out", run.string()});
  EXPECT_EQ(r.code(), 2);
  EXPECT_EQ(r.err, "waitlab: error: " + in + ": the output would overwrite the input " + in + "; write it elsewhere\n");
  fs::create_directory_symlink(run, dir_ / "same");
  r = waitlab({"replay", in, "--no-progress", "--out", (dir_ / "same").string()});
  EXPECT_EQ(r.code(), 2);
  EXPECT_TRUE(r.one_line()) << r.err;
  fs::create_directory(dir_ / "other");
  fs::create_hard_link(in, dir_ / "other" / "trace.wlt");
  r = waitlab({"replay", in, "--no-progress", "--out", (dir_ / "other").string()});
  EXPECT_EQ(r.code(), 2);
  EXPECT_EQ(r.err, "waitlab: error: " + (dir_ / "other" / "trace.wlt").string() + ": the output would overwrite the input " +
                       in + "; write it elsewhere\n");
  EXPECT_EQ(tree(run), before);
  // Written elsewhere, or analysed into its own directory (no file of the same name), it runs.
  EXPECT_EQ(waitlab({"replay", in, "--no-progress", "--out", (dir_ / "r2").string()}).code(), 0);
  EXPECT_EQ(waitlab({"analyze", in, "--out", run.string()}).code(), 0);
  EXPECT_EQ(slurp(run / "trace.wlt"), before.at("trace.wlt"));
}

// A FIFO where a file is read hung the command forever: a TI file, a TI rank file, an OTF2
// event file, a Paraver .pcf, report's summary.json. Each is refused before it is opened.
TEST_F(OutputsSafety, InputsThatAreNotFilesAreRefusedBeforeTheyAreOpened) {
  const fs::path scenario = write("small.yaml", kSmall);
  const fs::path run = dir_ / "r";
  ASSERT_EQ(waitlab({"run", scenario.string(), "--no-progress", "--out", run.string()}).code(), 0);
  const std::string in = (run / "trace.wlt").string();
  const auto fifo = [&](const fs::path& p) {
    std::error_code ec;
    fs::remove(p, ec);
    ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0) << p;
  };
  const auto refused = [&](const std::vector<std::string>& args, const fs::path& named) {
    const Result r = waitlab(args);
    EXPECT_EQ(r.code(), 2) << r.err;
    EXPECT_EQ(r.err, "waitlab: error: " + named.string() +
                         ": the input is a FIFO (named pipe), not a regular file: waitlab reads only files (reading "
                         "this one might never end)\n");
  };
  fifo(dir_ / "pipe.ti");
  refused({"convert", (dir_ / "pipe.ti").string(), (dir_ / "x.wlt").string()}, dir_ / "pipe.ti");
  refused({"replay", (dir_ / "pipe.ti").string(), "--no-progress", "--out", (dir_ / "x").string()}, dir_ / "pipe.ti");
  fifo(dir_ / "rank1.txt");
  const fs::path idx = write("idx.ti", (dir_ / "pipe.ti").string() + "\n" + (dir_ / "rank1.txt").string() + "\n");
  refused({"replay", idx.string(), "--no-progress", "--out", (dir_ / "x").string()}, dir_ / "pipe.ti");
  ASSERT_EQ(waitlab({"convert", in, (dir_ / "arch").string()}).code(), 0);
  fifo(dir_ / "arch" / "traces" / "1.evt");
  refused({"analyze", (dir_ / "arch").string(), "--out", (dir_ / "x").string()}, dir_ / "arch" / "traces" / "1.evt");
  ASSERT_EQ(waitlab({"convert", in, (dir_ / "p.prv").string()}).code(), 0);
  fifo(dir_ / "p.pcf");
  refused({"analyze", (dir_ / "p.prv").string(), "--out", (dir_ / "x").string()}, dir_ / "p.pcf");
  fifo(run / "summary.json");
  refused({"report", run.string()}, run / "summary.json");
  EXPECT_FALSE(fs::exists(dir_ / "x"));
  EXPECT_FALSE(fs::exists(dir_ / "x.wlt"));
}

// The commit stopped between every pair of its steps (WAITLAB_TEST_COMMIT_STOP, app/
// output_dir.cpp): killed (SIGKILL), the directory is finished by the next waitlab that reads
// it and is then exactly the uninterrupted result; with SIGTERM, the command ends once the new
// outputs are in place and says so. A run over an earlier one replaces files, adds the
// analyses' tables and removes the earlier baseline trace; the user's notes stay.
TEST_F(OutputsSafety, ACommitStoppedAtAnyStepEndsAsTheCompleteNewResult) {
  const fs::path scenario = write("small.yaml", kSmall);
  const auto old_run = [&](const fs::path& d) {
    ASSERT_EQ(waitlab({"run", scenario.string(), "--no-progress", "--out", d.string(), "--set", "run.baseline=true",
                       "--set", "outputs.analyses=[]"})
                  .code(),
              0);
    write(d.lexically_relative(dir_).string() + "/notes.txt", "the user's own notes\n");
  };
  const std::vector<std::string> new_run = {"run", scenario.string(), "--no-progress", "--set", "run.seed=7"};
  const auto without_host = [](std::map<std::string, std::string> t) {
    t.erase("host.json");  // host-dependent figures
    return t;
  };
  const fs::path ref = dir_ / "ref";
  old_run(ref);
  const auto old_tree = without_host(tree(ref));
  ASSERT_TRUE(old_tree.count("baseline.wlt"));
  auto args = new_run;
  args.insert(args.end(), {"--out", ref.string()});
  ASSERT_EQ(waitlab(args).code(), 0);
  const auto new_tree = without_host(tree(ref));
  ASSERT_FALSE(new_tree.count("baseline.wlt"));
  ASSERT_TRUE(new_tree.count("waitstates.csv"));
  ASSERT_EQ(new_tree.at("notes.txt"), "the user's own notes\n");

  int stops = 0;
  for (int k = 0;; ++k) {
    const fs::path out = dir_ / ("k" + std::to_string(k));
    old_run(out);
    args = new_run;
    args.insert(args.end(), {"--out", out.string()});
    ::setenv("WAITLAB_TEST_COMMIT_STOP", (std::to_string(k) + ":" + std::to_string(SIGKILL)).c_str(), 1);
    const Result r = waitlab(args);
    ::unsetenv("WAITLAB_TEST_COMMIT_STOP");
    if (r.code() == 0) {  // no step k: the commit ran to its end
      EXPECT_EQ(without_host(tree(out)), new_tree);
      fs::remove_all(out);
      break;
    }
    ASSERT_TRUE(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGKILL) << "step " << k << ": " << r.err;
    ++stops;
    EXPECT_NE(without_host(tree(out)), old_tree);  // half-way: the journal, some of the files
    // The next waitlab that reads the directory finishes the commit.
    ASSERT_EQ(waitlab({"analyze", (out / "trace.wlt").string(), "--out", (dir_ / "a").string()}).code(), 0);
    EXPECT_EQ(without_host(tree(out)), new_tree) << "stopped after step " << k;
    fs::remove_all(dir_ / "a");
    fs::remove_all(out);
    EXPECT_EQ(leftovers({"small.yaml", "ref", "stdout.txt", "stderr.txt"}), std::set<std::string>{}) << k;
  }
  // Once the journal is in place, and after each rename: two for each file replaced, one for
  // each added or removed.
  EXPECT_GE(stops, 10);

  // SIGTERM (blocked during the commit) half-way: exit 143 once the new result is in place.
  const fs::path out = dir_ / "term";
  old_run(out);
  args = new_run;
  args.insert(args.end(), {"--out", out.string()});
  ::setenv("WAITLAB_TEST_COMMIT_STOP", ("3:" + std::to_string(SIGTERM)).c_str(), 1);
  const Result r = waitlab(args);
  ::unsetenv("WAITLAB_TEST_COMMIT_STOP");
  EXPECT_EQ(r.code(), 143);
  EXPECT_EQ(r.err, "waitlab: interrupted by SIGTERM; the outputs were complete and are in place\n");
  EXPECT_EQ(without_host(tree(out)), new_tree);
  EXPECT_EQ(leftovers({"small.yaml", "ref", "term"}), std::set<std::string>{});
}

// Faults of the host are exit 2 with one line, and change nothing: a missing TMPDIR, a file
// size limit (SIGXFSZ killed waitlab with status 153 and left a staging directory), a full
// disk (tests/faults), names that are not UTF-8 on their way to JSON (an internal failure at the
// very end: json.exception.type_error.316).
TEST_F(OutputsSafety, HostFaultsAreOneLineAndChangeNothing) {
  const fs::path scenario = write("small.yaml", kSmall);
  const fs::path run = dir_ / "r";
  ASSERT_EQ(waitlab({"run", scenario.string(), "--no-progress", "--out", run.string()}).code(), 0);
  const auto before = tree(run);
  fs::remove_all(dir_ / "tmp");  // TMPDIR names a directory that does not exist
  Result r = waitlab({"run", scenario.string(), "--no-progress", "--out", run.string(), "--set", "run.seed=3"});
  EXPECT_EQ(r.code(), 2);
  EXPECT_EQ(r.err.rfind("waitlab: error: TMPDIR=" + (dir_ / "tmp").string() +
                            ": cannot create the simulation's temporary directory " + (dir_ / "tmp").string() +
                            "/waitlab-sim.",
                        0),
            0u)
      << r.err;
  EXPECT_NE(r.err.find(": No such file or directory (set TMPDIR to a writable directory)\n"), std::string::npos) << r.err;
  EXPECT_TRUE(r.one_line()) << r.err;
  EXPECT_EQ(tree(run), before);
  fs::create_directory(dir_ / "tmp");

  // ulimit -f 1 KiB: the Paraver trace and its .pcf are larger.
  r = waitlab({"convert", (run / "trace.wlt").string(), (dir_ / "big.prv").string()},
              std::make_pair(static_cast<int>(RLIMIT_FSIZE), rlim_t{1} << 10));
  EXPECT_EQ(r.code(), 2) << r.err;
  EXPECT_NE(r.err.find(".tmp failed: File too large (the file size limit, ulimit -f, is 1024 bytes)\n"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(r.one_line()) << r.err;
  EXPECT_EQ(leftovers({"small.yaml", "r"}), std::set<std::string>{});
}

// Names that are not UTF-8 (a Paraver .pcf's, a .wlt's) reached the JSON library at the very
// end of a command: an internal failure (json.exception.type_error.316). They become U+FFFD.
using output::json_text;  // analysis/output/json_text.hpp (was app/json_text.hpp)

TEST(JsonText, BytesThatAreNotUtf8BecomeTheReplacementCharacter) {
  nlohmann::ordered_json j;
  j["call_path"] = std::string("comp\xe9te/MPI_Recv");
  j["x"] = 1.5;
  EXPECT_EQ(json_text(j, -1), "{\"call_path\":\"comp\xef\xbf\xbdte/MPI_Recv\",\"x\":1.5}");
  EXPECT_EQ(json_text(j), "{\n  \"call_path\": \"comp\xef\xbf\xbdte/MPI_Recv\",\n  \"x\": 1.5\n}");
  EXPECT_THROW((void)j.dump(), nlohmann::json::type_error);  // what the outputs did before
}

// A Paraver trace cut cleanly at a line end (half its records) was analysed without a word,
// and its POP factors were nonsense: it is read (it may still be useful) with a warning on the
// terminal, in summary.json and in the report.
TEST_F(OutputsSafety, ATraceCutShortIsAnalysedWithAWarning) {
  const fs::path src = fs::path(WAITLAB_SOURCE_DIR) / "tests" / "data" / "extrae";
  ASSERT_EQ(std::system(("gzip -dc '" + (src / "epoch_2proc.prv.gz").string() + "' > '" + (dir_ / "whole.prv").string() +
                         "'").c_str()),
            0);
  std::istringstream prv(slurp(dir_ / "whole.prv"));
  std::vector<std::string> lines;
  for (std::string l; std::getline(prv, l);) lines.push_back(l);
  std::string cut;
  for (std::size_t i = 0; i < lines.size() / 2; ++i) cut += lines[i] + "\n";
  write("cut.prv", cut);
  fs::copy_file(src / "epoch_2proc.pcf", dir_ / "cut.pcf");
  fs::copy_file(src / "epoch_2proc.row", dir_ / "cut.row");
  const Result r = waitlab({"analyze", (dir_ / "cut.prv").string(), "--out", (dir_ / "a").string()});
  EXPECT_EQ(r.code(), 0) << r.err;
  const std::string head = "waitlab: warning: " + (dir_ / "cut.prv").string() + ": the records stop at ";
  EXPECT_EQ(r.err.rfind(head, 0), 0u) << r.err;
  EXPECT_NE(r.err.find("before the end time the header declares (11.5284 s): the trace may have been cut short"),
            std::string::npos)
      << r.err;
  const auto j = nlohmann::json::parse(slurp(dir_ / "a" / "summary.json"));
  ASSERT_EQ(j["trace"]["warnings"].size(), 1u);
  const std::string w = j["trace"]["warnings"][0].get<std::string>();  // named by the file's name only
  EXPECT_EQ(w.rfind("cut.prv: the records stop at ", 0), 0u) << w;
  EXPECT_EQ("waitlab: warning: " + (dir_ / "cut.prv").string() + w.substr(7) + "\n", r.err);
  EXPECT_NE(slurp(dir_ / "a" / "report.html").find("the trace may have been cut short"), std::string::npos);
  // The whole trace: no warning.
  const Result whole = waitlab({"analyze", (src / "epoch_2proc.prv.gz").string(), "--out", (dir_ / "b").string()});
  EXPECT_EQ(whole.code(), 0) << whole.err;
  EXPECT_EQ(whole.err, "");
}

// What SimGrid accepts in a platform file but aborts on once ranks run (exit 1, "The Impossible
// Did Happen", or a missing route) or silently misuses (a host of speed 0) is bad input: exit 2, one line naming the
// file and the value.
TEST_F(OutputsSafety, PlatformFilesSimGridWouldAbortOnAreRefused) {
  const auto platform = [&](const std::string& name, const std::string& speed0, const std::string& bandwidth,
                            bool route) {
    write(name + ".xml", "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                         "<platform version=\"4.1\">\n  <zone id=\"z\" routing=\"Full\">\n"
                         "    <host id=\"h0\" speed=\"" + speed0 + "\"/>\n    <host id=\"h1\" speed=\"1Gf\"/>\n"
                         "    <link id=\"l\" bandwidth=\"" + bandwidth + "\" latency=\"1us\"/>\n" +
                         (route ? "    <route src=\"h0\" dst=\"h1\"><link_ctn id=\"l\"/></route>\n" : "") +
                         "  </zone>\n</platform>\n");
    return write(name + ".yaml", "platform: {type: xml, file: " + name + ".xml}\n"
                                 "workload: {type: heat1d, ranks: 2, iterations: 2}\n");
  };
  const auto run = [&](const fs::path& scenario) {
    return waitlab({"run", scenario.string(), "--no-progress", "--out", (dir_ / "o").string()});
  };
  Result r = run(platform("bw0", "1Gf", "0Bps", true));
  EXPECT_EQ(r.code(), 2);
  EXPECT_EQ(r.err, "waitlab: error: platform file " + (dir_ / "bw0.xml").string() +
                       ": link 'l' has bandwidth 0 B/s: a message over it would never arrive (give it a bandwidth > 0)\n");
  r = run(platform("speed0", "0f", "1GBps", true));
  EXPECT_EQ(r.code(), 2);
  EXPECT_EQ(r.err, "waitlab: error: platform file " + (dir_ / "speed0.xml").string() +
                       ": host 'h0' has speed 0 flop/s: a rank placed on it would never compute (give it a speed > 0)\n");
  // 200 bytes that make SimGrid create ten million hosts (8.1 GB before a timeout).
  write("big.xml", "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                   "<platform version=\"4.1\">\n  <cluster id=\"c\" prefix=\"h\" suffix=\"\" radical=\"0-9999999\" "
                   "speed=\"1Gf\" bw=\"1GBps\" lat=\"1us\"/>\n</platform>\n");
  r = run(write("big.yaml", "platform: {type: xml, file: big.xml}\nworkload: {type: heat1d, ranks: 2, iterations: 2}\n"));
  EXPECT_EQ(r.code(), 2);
  EXPECT_EQ(r.err, "waitlab: error: platform file " + (dir_ / "big.xml").string() +
                       ":4: its clusters declare more than 1048576 hosts (radical '0-9999999'): more than waitlab's "
                       "limit on hosts, and SimGrid would create every one\n");
  // No route between the two ranks' hosts: SimGrid aborts at their first message; its log
  // names the hosts, and so does the error.
  r = run(platform("noroute", "1Gf", "1GBps", false));
  EXPECT_EQ(r.code(), 2);
  const std::string head = "waitlab: error: platform file " + (dir_ / "noroute.xml").string() +
                           ": there is no route from host 'h0' to host 'h1' (SimGrid aborted at the first message "
                           "between them, at simulated time ";
  EXPECT_EQ(r.err.rfind(head, 0), 0u) << r.err;
  EXPECT_NE(r.err.find(" s): declare a <route> between them, or place the ranks on hosts that have one\n"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "o"));
  EXPECT_EQ(run(platform("good", "1Gf", "1GBps", true)).code(), 0);
}

// A latency within the documented limits can push the clock so far that SimGrid's lazy model
// loses the run's 25 us noise steps and aborts ("The Impossible Did Happen", exit 1 before):
// exit 2, naming the clock and the largest latency.
TEST_F(OutputsSafety, SimGridsPrecisionFailureNamesTheLatency) {
  const Result r = waitlab({"run", kSource + "/scenarios/heat1d.yaml", "--no-progress", "--set",
                            "platform.core_latency=1e5s", "--set", "workload.iterations=3", "--out",
                            (dir_ / "o").string()});
  EXPECT_EQ(r.code(), 2);
  EXPECT_EQ(r.err, "waitlab: error: platform: SimGrid's resource model failed at simulated time 390060.000575 s "
                   "(\"The Impossible Did Happen\"): its double-precision clock cannot resolve the run's short "
                   "steps that far out; the platform's largest latency is core_latency = 100000 s; shorten the "
                   "latencies or the run\n");
  EXPECT_FALSE(fs::exists(dir_ / "o"));
}

// `report` of a directory holding a 1 GB PNG took 5.2 GB (base64 in memory): a picture above
// 32 MiB is linked, not embedded.
TEST_F(OutputsSafety, AHugePictureIsLinkedNotEmbedded) {
  const fs::path scenario = write("small.yaml", kSmall);
  const fs::path run = dir_ / "r";
  ASSERT_EQ(waitlab({"run", scenario.string(), "--no-progress", "--out", run.string(), "--set",
                     "outputs.analyses=[idlewave]"})
                .code(),
            0);
  ASSERT_TRUE(fs::exists(run / "idlewave_heatmap.png"));
  fs::resize_file(run / "idlewave_heatmap.png", std::uintmax_t{1} << 30);  // sparse: no disk used
  const Result r = waitlab({"report", run.string()});
  EXPECT_EQ(r.code(), 0) << r.err;
  EXPECT_LT(fs::file_size(run / "report.html"), std::uintmax_t{1} << 20);
  const std::string html = slurp(run / "report.html");
  EXPECT_NE(html.find("src=\"idlewave_heatmap.png\""), std::string::npos);
  EXPECT_NE(html.find("(1024 MB: linked, not embedded; the report shows it only beside that file)"), std::string::npos);
}

// An alltoall of 16 ranks x 1 GiB each under an address-space limit: std::bad_alloc was an
// internal failure (exit 1). The estimate counts a collective's buffers now and refuses it
// before the run; a size it still misses (here forced with WAITLAB_MEMORY_CHECK=off) is an
// out-of-memory exit 2.
TEST_F(OutputsSafety, OutOfMemoryForBuffersIsExit2) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer reserves terabytes of address space at start: no process of this build runs "
                  "under ulimit -v";
#endif
  const fs::path scenario = write("a2a.yaml", "platform: {type: cluster, nodes: 16}\n"
                                              "workload: {type: alltoall_loop, ranks: 16, iterations: 2, bytes: 1GiB}\n");
  const auto limit = std::make_pair(static_cast<int>(RLIMIT_AS), rlim_t{8} << 30);
  Result r = waitlab({"run", scenario.string(), "--no-progress", "--out", (dir_ / "o").string()}, limit);
  EXPECT_EQ(r.code(), 2);
  EXPECT_EQ(r.err.rfind("waitlab: error: this simulation of 16 ranks needs about 168.", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("168.0 GiB for the largest collective (alltoall on 16 ranks, buffers of 16.0 GiB)) but the "
                       "address-space limit (ulimit -v) is 8.0 GiB"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(r.one_line()) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "o"));
  memory_check_ = "off";
  r = waitlab({"run", scenario.string(), "--no-progress", "--out", (dir_ / "o").string()}, limit);
  EXPECT_EQ(r.code(), 2);
  EXPECT_EQ(r.err.rfind("waitlab: error: out of memory in the simulation of rank ", 0), 0u) << r.err;
  EXPECT_TRUE(r.one_line()) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "o"));
}

}  // namespace
}  // namespace waitlab::app
