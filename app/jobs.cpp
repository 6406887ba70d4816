#include "app/jobs.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <ostream>
#include <sstream>

#include "analysis/trace/atomic_file.hpp"
#include "analysis/trace/csv.hpp"
#include "util/error.hpp"
#include "app/run_command.hpp"
#include "util/text.hpp"
#include "util/signals.hpp"

namespace waitlab::app {

Inputs inputs_of(const std::vector<Job>& jobs) {
  Inputs in;
  for (const auto& j : jobs) in.add_scenario(j.scenario);
  return in;
}

namespace {

namespace fs = std::filesystem;

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  if (from.empty() || from == to) return text;
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

// What a job's process reports back through its pipe: its error message, if any. The job's
// terminal summary goes to DIR/run.log once its outputs are in place (host-dependent, as the
// terminal's: docs/cli.md).
[[noreturn]] void child(const Job& job, int report) {
  int code = 0;
  std::string message;
  try {
    std::ostringstream log;
    run_scenario(job.scenario, job.dir, false, log);
    const std::string text = job.shown_dir.empty() ? log.str() : replace_all(log.str(), job.dir, job.shown_dir);
    trace::write_file_atomic((fs::path(job.dir) / "run.log").string(), text);
  } catch (const InputError& e) {
    code = 2;
    message = e.what();
  } catch (const std::exception& e) {
    code = 1;
    message = std::string("internal error: ") + e.what();
  } catch (...) {
    code = 1;
    message = "internal error";
  }
  // The parent reads the pipe once this process has ended: stay below the pipe's buffer.
  if (message.size() > 4000) message = message.substr(0, 4000) + " ...";
  std::size_t done = 0;
  while (done < message.size()) {
    const ssize_t n = ::write(report, message.data() + done, message.size() - done);
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  ::close(report);
  // No static destructors, no stdio flushing of the parent's buffers: this process is a copy.
  ::_exit(code);
}

std::string read_all(int fd) {
  std::string text;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      text.append(buf, static_cast<std::size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;
    }
  }
  ::close(fd);
  return text;
}

}  // namespace

Job study_job(std::string name, scenarios::Scenario s, std::string dir) {
  for (const char* a : {"waitstate", "delay", "critpath"})
    if (std::find(s.outputs.analyses.begin(), s.outputs.analyses.end(), a) == s.outputs.analyses.end())
      s.outputs.analyses.push_back(a);
  s.outputs.progress = false;
  s.outputs.dir = dir;
  s.run.baseline = false;
  return Job{std::move(name), std::move(s), std::move(dir), ""};
}

std::vector<JobOutcome> run_jobs(const std::vector<Job>& jobs, int parallel, std::ostream& out) {
  if (parallel < 1) parallel = 1;
  std::vector<JobOutcome> outcomes(jobs.size());
  struct Running {
    std::size_t job;
    int report;
  };
  std::map<pid_t, Running> running;
  std::size_t next = 0, finished = 0;
  // A failure to start a job ends the ones already running before it is reported.
  const auto give_up = [&](const char* what) {
    const std::string why = std::string(what) + ": " + std::strerror(errno);
    for (const auto& [pid, r] : running) {
      ::kill(pid, SIGTERM);
      ::waitpid(pid, nullptr, 0);
      util::child_ended(pid);
      ::close(r.report);
    }
    throw std::runtime_error(why);
  };
  while (finished < jobs.size()) {
    while (next < jobs.size() && static_cast<int>(running.size()) < parallel) {
      int fds[2];
      // Close-on-exec: the plot scripts and SimGrid's processes must not hold the write end.
      if (::pipe2(fds, O_CLOEXEC) != 0) give_up("pipe");
      // The child is a copy: what sits in our buffers would be written twice.
      out.flush();
      std::fflush(nullptr);
      // It dies with us (SIGTERM: it stops its simulation and discards its outputs), and our
      // SIGINT/SIGTERM are passed on to it (util/signals.hpp).
      pid_t pid = -1;
      try {
        pid = util::fork_process(SIGTERM, true);
      } catch (const std::exception&) {
        ::close(fds[0]);
        ::close(fds[1]);
        give_up("fork");
      }
      if (pid == 0) {
        ::close(fds[0]);
        child(jobs[next], fds[1]);
      }
      ::close(fds[1]);
      running[pid] = Running{next, fds[0]};
      ++next;
    }
    // Only our own children: the caller may have others.
    int status = 0;
    auto it = running.end();
    while (it == running.end()) {
      for (auto j = running.begin(); j != running.end() && it == running.end(); ++j) {
        const pid_t got = ::waitpid(j->first, &status, WNOHANG);
        if (got == j->first) it = j;
        if (got < 0 && errno != EINTR) throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
      }
      if (it == running.end()) ::usleep(5000);
    }
    util::child_ended(it->first);
    if (util::interruption() != 0) {
      // The signal went to every job: wait for them to stop, then stop too.
      for (const auto& [pid, r] : running) {
        while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
        }
        util::child_ended(pid);
      }
      util::exit_interrupted();
    }
    JobOutcome& o = outcomes[it->second.job];
    const Job& j = jobs[it->second.job];
    o.error = replace_all(read_all(it->second.report), j.dir, j.shown_dir.empty() ? j.dir : j.shown_dir);
    if (WIFEXITED(status)) {
      o.exit_code = WEXITSTATUS(status);
    } else {
      o.exit_code = 1;
      o.error = "the job's process died (signal " + std::to_string(WTERMSIG(status)) + ")";
    }
    if (o.exit_code != 0 && o.error.empty()) o.error = "failed with exit code " + std::to_string(o.exit_code);
    o.error = text::one_line(o.error);  // shown on one line, as main() shows its own errors
    ++finished;
    out << fmt::format("[{}/{}] {:<24} {}\n", finished, jobs.size(), j.name,
                       o.exit_code == 0 ? (j.shown_dir.empty() ? j.dir : j.shown_dir) : "FAILED: " + o.error);
    out.flush();
    running.erase(it);
  }
  return outcomes;
}

std::vector<TableRow> read_table(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": missing (the job wrote no such table)");
  std::string line;
  std::vector<std::string> header;
  if (std::getline(in, line)) header = trace::csv_split(line);
  std::vector<TableRow> rows;
  while (std::getline(in, line)) {
    const auto fields = trace::csv_split(line);
    TableRow row;
    for (std::size_t i = 0; i < header.size() && i < fields.size(); ++i) row[header[i]] = fields[i];
    rows.push_back(std::move(row));
  }
  return rows;
}

double table_number(const TableRow& row, const std::string& column, const std::string& path) {
  const auto it = row.find(column);
  double v = 0;
  if (it != row.end()) {
    const char* first = it->second.data();
    const char* last = first + it->second.size();
    const auto [end, ec] = std::from_chars(first, last, v);
    if (!it->second.empty() && ec == std::errc() && end == last) return v;
  }
  throw InputError(path + ": a row without a number in column '" + column + "'");
}

Share parse_share(const std::string& text, const std::string& option) {
  Share s;
  const auto slash = text.find('/');
  const auto number = [&](std::string_view v, int& x) {
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
    return !v.empty() && ec == std::errc() && end == v.data() + v.size();
  };
  if (slash == std::string::npos || !number(std::string_view(text).substr(0, slash), s.index) ||
      !number(std::string_view(text).substr(slash + 1), s.count) || s.count < 1 || s.index < 0 ||
      s.index >= s.count)
    throw InputError(option + ": expected R/N with 0 <= R < N (this process's share of the jobs), got '" + text + "'");
  return s;
}

}  // namespace waitlab::app
