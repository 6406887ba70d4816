#include "app/plot.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "util/error.hpp"
#include "app/plots_embedded.hpp"
#include "util/signals.hpp"

namespace waitlab::app {

namespace {

std::string python() {
  if (const char* p = std::getenv("WAITLAB_PYTHON"); p != nullptr && *p != '\0') return p;
  // Debian's interpreter is the one python3-matplotlib belongs to; a python3 earlier on
  // PATH (pyenv, conda) usually lacks it.
  if (access("/usr/bin/python3", X_OK) == 0) return "/usr/bin/python3";
  return "python3";
}

std::string last_lines(const std::string& text, std::size_t n) {
  std::istringstream in(text);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) lines.push_back(l);
  std::string out;
  for (std::size_t i = lines.size() > n ? lines.size() - n : 0; i < lines.size(); ++i)
    out += (out.empty() ? "" : " | ") + lines[i];
  return out;
}

// WAITLAB_PLOT_TIMEOUT (seconds, > 0), else 600.
double plot_timeout() {
  if (const char* v = std::getenv("WAITLAB_PLOT_TIMEOUT"); v != nullptr && *v != '\0') {
    char* end = nullptr;
    const double s = std::strtod(v, &end);
    if (end != v && *end == '\0' && s > 0 && std::isfinite(s)) return s;
  }
  return 600;
}

std::string fmt_seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

}  // namespace

std::string draw(const std::string& script, const std::vector<std::string>& args) {
  std::string_view code;
  for (const auto& [name, text] : plots::kScripts)
    if (name == script) code = text;
  if (code.empty()) throw std::logic_error("no plot script " + script);

  char log_name[] = "/tmp/waitlab-plot.XXXXXX";
  const int log = mkstemp(log_name);
  if (log < 0) return std::string("cannot create a temporary file: ") + std::strerror(errno);
  const std::string exe = python();
  std::vector<std::string> argv_s = {exe, "-c", std::string(code)};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);

  // The interpreter dies with us and receives our SIGINT/SIGTERM/SIGHUP (util/signals.hpp); an
  // interrupted drawing stops the command as an interrupted simulation does.
  std::cout.flush();
  std::fflush(nullptr);
  const std::string exec_failed = "cannot run " + exe + ": ";  // made before the fork: the child only execs
  pid_t pid = -1;
  try {
    pid = util::fork_process(SIGTERM, true);
  } catch (...) {
    close(log);
    std::remove(log_name);
    throw;
  }
  if (pid == 0) {
    const int null = open("/dev/null", O_RDONLY);
    if (null >= 0) dup2(null, STDIN_FILENO);
    dup2(log, STDOUT_FILENO);
    dup2(log, STDERR_FILENO);
    execvp(exe.c_str(), argv.data());
    const char* reason = std::strerror(errno);
    if (write(STDERR_FILENO, exec_failed.data(), exec_failed.size()) >= 0) {
      if (write(STDERR_FILENO, reason, std::strlen(reason)) < 0) _exit(127);
    }
    _exit(127);
  }
  close(log);
  // A drawing takes seconds; one that never ends (a stuck interpreter, WAITLAB_PYTHON naming a
  // program that waits for something) is stopped after WAITLAB_PLOT_TIMEOUT seconds (600).
  const double limit = plot_timeout();
  int status = 0;
  bool timed_out = false;
  for (int waited_ms = 0;; waited_ms += 50) {
    const pid_t got = waitpid(pid, &status, WNOHANG);
    if (got == pid || (got < 0 && errno != EINTR)) break;
    if (util::interruption() == 0 && waited_ms >= limit * 1000) {
      timed_out = true;
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      break;
    }
    usleep(50 * 1000);
  }
  util::child_ended(pid);
  if (util::interruption() != 0) {
    std::remove(log_name);
    util::exit_interrupted();
  }
  std::string why;
  if (timed_out) {
    why = exe + " did not finish drawing " + script + " within " + fmt_seconds(limit) +
          " s (WAITLAB_PLOT_TIMEOUT): stopped";
  } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::ifstream in(log_name);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    why = exe + " failed drawing " + script + ": " + last_lines(text, 2);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && text.rfind(exec_failed, 0) == 0)
      why = text + " (install python3-matplotlib: scripts/setup.sh)";
    if (text.find("No module named 'matplotlib'") != std::string::npos)
      why = exe + " has no matplotlib (install python3-matplotlib: scripts/setup.sh, or set WAITLAB_PYTHON)";
    // A full disk or a file size limit fails the command (it changes nothing), even where a
    // picture is only a view whose failure is otherwise a warning.
    if (text.find("No space left on device") != std::string::npos || text.find("File too large") != std::string::npos) {
      std::remove(log_name);
      throw WriteError(exe + " could not write the pictures of " + script + ": " + last_lines(text, 1));
    }
  }
  std::remove(log_name);
  return why;
}

std::string draw_pictures(const output::Entry& analysis, const std::string& dir) {
  for (const auto& p : analysis.pictures)
    for (const char* ext : {".png", ".svg"}) {
      std::error_code ec;
      std::filesystem::remove(std::filesystem::path(dir) / (std::string(p.stem) + ext), ec);
    }
  return draw(analysis.plot_script, {dir});
}

}  // namespace waitlab::app
