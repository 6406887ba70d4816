#include "app/plot.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "app/plots_embedded.hpp"

extern char** environ;

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

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, log, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&fa, log, STDERR_FILENO);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, exe.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(log);
  std::string why;
  if (rc != 0) {
    why = "cannot run " + exe + ": " + std::strerror(rc) + " (install python3-matplotlib: scripts/setup.sh)";
  } else {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::ifstream in(log_name);
      const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      why = exe + " failed drawing " + script + ": " + last_lines(text, 2);
      if (text.find("No module named 'matplotlib'") != std::string::npos)
        why = exe + " has no matplotlib (install python3-matplotlib: scripts/setup.sh, or set WAITLAB_PYTHON)";
    }
  }
  std::remove(log_name);
  return why;
}

}  // namespace waitlab::app
