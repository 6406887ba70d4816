// waitlab::app — the SMPI ideal-network replay by a child `waitlab` (app/waitlab_child.hpp).
#include "app/waitlab_child.hpp"

#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "util/error.hpp"

extern char** environ;

namespace waitlab::app {

namespace {

std::string hex(double v) { return fmt::format("{:a}", v); }

double parse_double(const std::string& s, const std::string& what) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size()) throw InputError(what + ": '" + s + "' is not a number");
  return v;
}

// The lines of `text`; a record's texts (why, notes) hold no newline.
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

}  // namespace

std::string waitlab_binary() {
  if (const char* p = std::getenv("WAITLAB_BIN"); p != nullptr && *p != '\0') return p;
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) return (self.parent_path() / "waitlab").string();
  return "waitlab";
}

int spawn_and_wait(const std::vector<std::string>& args, std::string* why) {
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  for (auto& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (const int rc = posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ); rc != 0) {
    if (why) *why = "cannot start " + args.front() + ": " + std::strerror(rc);
    return 1;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return 1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

std::string smpi_ideal_record(const SmpiIdealRun& r) {
  std::string s = fmt::format("waitlab smpi-ideal 1\n{}\n{}\n{}\n", r.ok ? 1 : 0, one_line(r.why), r.estimate.source);
  for (double v : {r.estimate.t_ideal, r.estimate.useful_max, r.estimate.ser_e, r.estimate.trf_e, r.replay_elapsed,
                   r.outside, r.host_seconds})
    s += hex(v) + "\n";
  for (const auto& n : r.notes) s += one_line(n) + "\n";
  return s;
}

SmpiIdealRun parse_smpi_ideal_record(const std::string& text) {
  const std::vector<std::string> l = lines_of(text);
  if (l.size() < 11 || l[0] != "waitlab smpi-ideal 1") throw InputError("not a record of `waitlab smpi-ideal`");
  SmpiIdealRun r;
  r.ok = l[1] == "1";
  r.why = l[2];
  r.estimate.source = l[3];
  double* values[] = {&r.estimate.t_ideal, &r.estimate.useful_max, &r.estimate.ser_e, &r.estimate.trf_e,
                      &r.replay_elapsed,   &r.outside,             &r.host_seconds};
  for (std::size_t i = 0; i < std::size(values); ++i) *values[i] = parse_double(l[4 + i], "smpi-ideal record");
  r.notes.assign(l.begin() + 11, l.end());
  return r;
}

std::string measured_arguments(const analysis::TimeResolvedResult& m) {
  return fmt::format("{},{},{},{},{}", m.mpi ? 1 : 0, hex(m.elapsed), hex(m.useful_ideal_max), hex(m.eff.comm_e),
                     analysis::convention_name(m.convention));
}

analysis::TimeResolvedResult parse_measured(const std::string& text) {
  std::vector<std::string> f;
  std::istringstream in(text);
  for (std::string part; std::getline(in, part, ',');) f.push_back(part);
  analysis::Convention convention{};
  if (f.size() != 5 || (f[0] != "0" && f[0] != "1") || !analysis::parse_convention(f[4], convention))
    throw InputError("--measured: expected MPI,ELAPSED,USEFUL_IDEAL_MAX,COMM_E,CONVENTION, got '" + text + "'");
  analysis::TimeResolvedResult m;
  m.mpi = f[0] == "1";
  m.elapsed = parse_double(f[1], "--measured");
  m.useful_ideal_max = parse_double(f[2], "--measured");
  m.eff.comm_e = parse_double(f[3], "--measured");
  m.convention = convention;
  return m;
}

SmpiIdealRun smpi_ideal_by_child(const AnalyzeArgs& args, const analysis::TimeResolvedResult& measured) {
  SmpiIdealRun failed;
  char tmpl[] = "/tmp/waitlab-smpi-ideal.XXXXXX";
  const int fd = mkstemp(tmpl);
  if (fd < 0) {
    failed.why = std::string("no temporary file for the child waitlab: ") + std::strerror(errno);
    return failed;
  }
  close(fd);
  const std::string record = tmpl;
  const std::string bin = waitlab_binary();
  std::string why;
  const int code = spawn_and_wait({bin, "smpi-ideal", args.trace, "--clock-correction", args.clock_correction,
                                   "--measured", measured_arguments(measured), "--record", record},
                                  &why);
  std::ifstream in(record);
  std::ostringstream text;
  text << in.rdbuf();
  std::remove(record.c_str());
  if (code != 0) {
    failed.why = !why.empty() ? why + " (the SMPI replay needs SimGrid, which waitlab-mpi does not link)"
                              : fmt::format("{} smpi-ideal ended with exit code {}", bin, code);
    return failed;
  }
  try {
    return parse_smpi_ideal_record(text.str());
  } catch (const InputError& e) {
    failed.why = bin + " smpi-ideal: " + e.what();
    return failed;
  }
}

}  // namespace waitlab::app
