#include "app/output_dir.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "util/error.hpp"
#include "app/commit_journal.hpp"
#include "util/signals.hpp"

namespace waitlab::app {

namespace fs = std::filesystem;

struct OutputDir::Cleanup {
  util::CleanupPath path;
  Cleanup(const std::string& p, util::CleanupPath::Kind k) : path(p, k) {}
};

namespace {

bool lstat_of(const std::string& p, struct stat& st) {
  return ::lstat(p.c_str(), &st) == 0;
}

bool is_directory(const struct stat& st) {
  return S_ISDIR(st.st_mode);
}

std::string reason(int err) {
  return std::strerror(err);
}

// DIR made absolute, without `.`, `..` or a trailing slash, symbolic links of its existing
// part resolved (so that its parent is where a sibling belongs).
fs::path absolute_dir(const std::string& dir) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(dir), ec);
  if (ec) p = fs::absolute(dir).lexically_normal();
  if (p.has_relative_path() && p.filename().empty()) p = p.parent_path();
  return p;
}

// "PID.START": this process, told apart from a later one of the same pid by its start time
// (field 22 of /proc/PID/stat, in clock ticks since boot). It is part of the name of every
// directory the commit makes beside the outputs, so that the next waitlab can tell the
// leftovers of a killed one (SIGKILL cannot be caught) from those of one still running.
std::string start_time_of(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t paren = text.rfind(')');  // the command name may hold spaces and ')'
  if (paren == std::string::npos) return {};
  std::istringstream fields(text.substr(paren + 1));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i)
    if (i == 22) return field;
  return {};
}

std::string process_tag() {
  const std::string pid = std::to_string(::getpid());
  return pid + "." + start_time_of(pid);
}

// Removes the directories named PREFIX + "PID.START-XXXXXX" in WHERE whose process has ended:
// the staging and trash directories of a waitlab killed before it could remove them.
void remove_orphans(const fs::path& where, const std::string& prefix, const std::string& shown_dir) {
  std::error_code ec;
  for (fs::directory_iterator it(where, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string rest = name.substr(prefix.size());  // PID.START-XXXXXX
    const std::size_t dot = rest.find('.');
    const std::size_t dash = rest.rfind('-');
    if (dot == std::string::npos || dash == std::string::npos || dash < dot || rest.size() - dash != 7) continue;
    const std::string pid = rest.substr(0, dot);
    const std::string start = rest.substr(dot + 1, dash - dot - 1);
    const auto digits = [](const std::string& t) {
      return !t.empty() && t.size() < 20 && std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; });
    };
    if (!digits(pid) || !digits(start) || start_time_of(pid) == start) continue;  // still running
    struct stat st = {};
    if (!lstat_of(it->path().string(), st) || !is_directory(st)) continue;
    std::error_code rec;
    fs::remove_all(it->path(), rec);
    if (!rec)
      std::cerr << "waitlab: " << shown_dir << ": removed " << it->path().string()
                << ", the unfinished outputs of an earlier waitlab that was killed\n";
  }
}

// A fresh directory from a mkdtemp template, with the permissions mkdir would give it (mkdtemp
// makes it private, and it may become the output directory).
std::string make_temp_dir(const std::string& tmpl_text) {
  std::string tmpl = tmpl_text;
  if (::mkdtemp(tmpl.data()) == nullptr) {
    const int err = errno;
    throw InputError("cannot create " + tmpl_text.substr(0, tmpl_text.size() - 6) + "... (for the outputs): " +
                     reason(err));
  }
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::chmod(tmpl.c_str(), 0777 & ~mask);
  return tmpl;
}

// A testing hook (tests/app/test_outputs_safety.cpp): WAITLAB_TEST_COMMIT_STOP="K:SIGNAL" sends
// this process SIGNAL (a number) after the K-th rename of a commit (0: once the journal is in
// place), so that a test can stop the commit between every pair of its steps.
struct TestStop {
  long after = -1;
  int signal = 0;
  void at(int renames) const {
    if (after == renames && signal > 0) ::raise(signal);
  }
};
TestStop test_stop() {
  TestStop t;
  const char* v = std::getenv("WAITLAB_TEST_COMMIT_STOP");
  if (v == nullptr) return t;
  char* end = nullptr;
  t.after = std::strtol(v, &end, 10);
  if (end != nullptr && *end == ':') t.signal = static_cast<int>(std::strtol(end + 1, nullptr, 10));
  return t;
}

}  // namespace

void check_output_dir(const std::string& dir) {
  if (dir.empty()) throw InputError("the output directory is an empty path");
  const fs::path p = absolute_dir(dir);
  struct stat st = {};
  if (::stat(p.string().c_str(), &st) == 0) {
    if (!is_directory(st)) throw InputError(dir + ": cannot be the output directory: it is not a directory");
    return;
  }
  if (lstat_of(p.string(), st))
    throw InputError(dir + ": cannot be the output directory: it is a symbolic link to nothing");
  for (fs::path a = p.parent_path(); !a.empty(); a = a.parent_path()) {
    if (::stat(a.string().c_str(), &st) == 0) {
      if (!is_directory(st))
        throw InputError(dir + ": cannot create the output directory: " + a.string() + " is not a directory");
      return;
    }
    if (a == a.root_path()) break;
  }
}

OutputDir::OutputDir(const std::string& dir, const Inputs& inputs, Mode mode)
    : inputs_(inputs), given_(dir), mode_(mode) {
  check_output_dir(dir);
  inputs_.check_output_dir(dir);
  const fs::path abs = absolute_dir(dir);
  dir_ = abs.string();
  struct stat st = {};
  existed_ = ::stat(dir_.c_str(), &st) == 0;
  if (existed_ && recover_commit(dir_))
    std::cerr << "waitlab: " << dir << ": finished the commit of outputs that an earlier waitlab was stopped in\n";
  const std::string name = abs.filename().string();
  if (abs != abs.root_path()) {
    remove_orphans(abs.parent_path(), "." + name + ".waitlab-", dir);
    remove_orphans(abs.parent_path(), ".waitlab-trash.", dir);
  }
  if (existed_) {
    remove_orphans(abs, ".waitlab-staging.", dir);
    remove_orphans(abs, ".waitlab-trash.", dir);
  }
  // The directories missing on the way are made now, and removed again if the command fails.
  std::vector<fs::path> missing;
  for (fs::path a = mode == Mode::Entries ? abs : abs.parent_path(); !a.empty(); a = a.parent_path()) {
    struct stat ast = {};
    if (::stat(a.string().c_str(), &ast) == 0) break;
    missing.push_back(a);
    if (a == a.root_path()) break;
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (::mkdir(it->c_str(), 0777) != 0 && errno != EEXIST) {
      const int err = errno;
      throw InputError(dir + ": cannot create the output directory: cannot create " + it->string() + ": " +
                       reason(err));
    }
    created_.push_back(it->string());
    cleanups_.push_back(std::make_unique<Cleanup>(it->string(), util::CleanupPath::Kind::EmptyDirectory));
  }
  // A mount point's sibling is on another file system: there the staging directory goes inside.
  bool inside = mode == Mode::Entries;
  if (mode == Mode::Directory && existed_) {
    struct stat parent = {};
    inside = abs == abs.root_path() ||
             (::stat(abs.parent_path().c_str(), &parent) == 0 && parent.st_dev != st.st_dev);
  }
  const std::string tag = process_tag() + "-XXXXXX";
  staging_ = make_temp_dir(inside ? (abs / (".waitlab-staging." + tag)).string()
                                  : (abs.parent_path() / ("." + name + ".waitlab-" + tag)).string());
  cleanups_.push_back(std::make_unique<Cleanup>(staging_, util::CleanupPath::Kind::Tree));
  if (mode != Mode::Directory || !existed_) return;

  // The top-level files of DIR, linked into the staging directory.
  std::error_code ec;
  for (fs::directory_iterator it(abs, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& from = it->path();
    const std::string entry = from.filename().string();
    if (from.string() == staging_) continue;
    struct stat est = {};
    if (!lstat_of(from.string(), est) || is_directory(est)) continue;
    const std::string to = staging_ + "/" + entry;
    if (::link(from.c_str(), to.c_str()) != 0) {
      std::error_code cec;
      fs::copy(from, to, fs::copy_options::copy_symlinks, cec);
      if (cec)
        throw InputError(shown(entry) + ": cannot prepare the outputs beside it (link or copy into " + staging_ +
                         "): " + cec.message());
    }
    struct stat sst = {};
    if (!lstat_of(to, sst)) continue;
    snapshot_.push_back({entry, static_cast<unsigned long>(est.st_dev), static_cast<unsigned long>(est.st_ino),
                         static_cast<unsigned long>(sst.st_ino)});
  }
  if (ec) throw InputError(dir + ": cannot read the output directory: " + ec.message());
}

OutputDir::~OutputDir() {
  if (committed_) return;
  std::error_code ec;
  fs::remove_all(staging_, ec);
  for (auto it = created_.rbegin(); it != created_.rend(); ++it) ::rmdir(it->c_str());  // only if empty
}

std::string OutputDir::shown(const std::string& name) const {
  if (given_ == "." || given_ == "./") return name;
  return (fs::path(given_) / name).string();
}

void OutputDir::rethrow_final() const {
  try {
    throw;
  } catch (const InputError& e) {
    throw InputError(final_text(e.what()));
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(final_text(e.what()));
  }
}

std::string OutputDir::final_text(const std::string& text) const {
  std::string out = text;
  const std::string to = fs::path(given_).lexically_normal().string();
  std::string target = to;
  if (target.size() > 1 && target.back() == '/') target.pop_back();
  for (std::size_t at = out.find(staging_); at != std::string::npos; at = out.find(staging_, at + target.size()))
    out.replace(at, staging_.size(), target);
  return out;
}

void OutputDir::commit() {
  if (committed_) return;
  const util::SignalBlock block;  // the commit does not stop half-way
  bool moved = false;
  if (mode_ == Mode::Directory && !existed_) {
    // DIR is new: the staging directory becomes it. Someone may have made it meanwhile (a
    // study's shares): then its entries are moved in one by one.
    if (::rename(staging_.c_str(), dir_.c_str()) == 0) {
      moved = true;
      util::outputs_committed();
    } else if (errno != EEXIST && errno != ENOTEMPTY && errno != EISDIR) {
      const int err = errno;
      throw InputError(given_ + ": cannot create the output directory (rename " + staging_ + "): " + reason(err));
    }
  }
  if (!moved) sync();
  committed_ = true;
  cleanups_.clear();  // nothing to remove on interruption any more
}

// Applies the staging directory to DIR: first checks every step, then moves the old entries
// that are replaced or removed into a trash directory and the new ones in, undoing all of it
// if a step fails; the trash is removed at the end.
void OutputDir::sync() {
  struct Step {
    std::string name;
    bool remove = false;    // removed by the command (else moved in from the staging directory)
    bool replaces = false;  // an entry of DIR goes to the trash first
  };
  std::vector<Step> steps;
  // Entries the command removed: in the snapshot, gone from the staging directory, still the
  // same file in DIR.
  for (const auto& s : snapshot_) {
    struct stat st = {};
    if (lstat_of(staging_ + "/" + s.name, st)) continue;
    struct stat dst = {};
    if (lstat_of(dir_ + "/" + s.name, dst) && static_cast<unsigned long>(dst.st_ino) == s.ino &&
        static_cast<unsigned long>(dst.st_dev) == s.dev)
      steps.push_back({s.name, true, true});
  }
  std::error_code ec;
  std::vector<std::string> staged;
  for (fs::directory_iterator it(staging_, ec), end; !ec && it != end; it.increment(ec))
    staged.push_back(it->path().filename().string());
  if (ec) throw InputError(given_ + ": cannot read the prepared outputs in " + staging_ + ": " + ec.message());
  std::sort(staged.begin(), staged.end());
  for (const auto& name : staged) {
    struct stat st = {};
    if (!lstat_of(staging_ + "/" + name, st)) continue;
    const auto snap = std::find_if(snapshot_.begin(), snapshot_.end(), [&](const Snapshot& s) { return s.name == name; });
    if (snap != snapshot_.end() && snap->staged_ino == static_cast<unsigned long>(st.st_ino)) continue;  // unchanged
    struct stat dst = {};
    const bool exists = lstat_of(dir_ + "/" + name, dst);
    if (exists && is_directory(dst) != is_directory(st))
      throw InputError("cannot write " + shown(name) + ": " + (is_directory(dst) ? "a directory" : "a file") +
                       " of that name is in the way (nothing was changed)");
    if (exists && is_directory(dst)) {
      // A directory is replaced whole: only by one that has every file it has.
      const fs::path old_dir = fs::path(dir_) / name;
      for (fs::recursive_directory_iterator it(old_dir, ec), end; !ec && it != end; it.increment(ec)) {
        const fs::path rel = it->path().lexically_relative(old_dir);
        struct stat nst = {};
        if (!lstat_of((fs::path(staging_) / name / rel).string(), nst))
          throw InputError("cannot write " + shown(name) + ": it holds " + (fs::path(shown(name)) / rel).string() +
                           ", which the new output does not have; waitlab never deletes a file it would not write "
                           "again: remove it yourself or write elsewhere (nothing was changed)");
      }
      if (ec) throw InputError("cannot write " + shown(name) + ": cannot read it: " + ec.message() + " (nothing was changed)");
    }
    steps.push_back({name, false, exists});
  }
  // No input is replaced or removed, whatever its path (app/inputs.hpp).
  for (const Step& s : steps)
    if (s.replaces) inputs_.check_replaced(dir_ + "/" + s.name, shown(s.name));
  // summary.json says that the files beside it belong to it: it goes first and comes last.
  const auto summary_last = [](const Step& a, const Step& b) {
    const int ka = a.remove ? (a.name == "summary.json" ? 0 : 1) : (a.name == "summary.json" ? 3 : 2);
    const int kb = b.remove ? (b.name == "summary.json" ? 0 : 1) : (b.name == "summary.json" ? 3 : 2);
    return ka < kb;
  };
  std::stable_sort(steps.begin(), steps.end(), summary_last);
  if (steps.empty()) {
    fs::remove_all(staging_, ec);
    return;
  }

  const fs::path staging(staging_);
  const std::string trash = make_temp_dir((staging.parent_path() / (".waitlab-trash." + process_tag() + "-XXXXXX")).string());
  const Cleanup trash_cleanup(trash, util::CleanupPath::Kind::Tree);
  // The journal: from the moment it is in DIR, the commit can only roll forward — finished by
  // this process, or by the next waitlab that opens DIR if this one is killed (recover_commit).
  const std::string journal = dir_ + "/" + kCommitJournal;
  const TestStop stop = test_stop();
  stop.at(-1);  // before the journal: the staging and trash directories are left to the next waitlab
  {
    std::string text = std::string(kCommitJournalHead) + "\nstaging " + staging_ + "\ntrash " + trash + "\n";
    for (std::size_t i = 0; i < steps.size(); ++i)
      text += std::string(steps[i].remove ? "D " : steps[i].replaces ? "R " : "N ") + steps[i].name + "\n";
    text += "end\n";
    write_commit_journal(journal, text, given_);
  }
  util::outputs_committed();
  int renames = 0;
  stop.at(renames);
  std::vector<std::pair<std::string, std::string>> done;  // renames made, to undo
  const auto move = [&](const std::string& from, const std::string& to, const std::string& name) {
    if (::rename(from.c_str(), to.c_str()) == 0) {
      done.emplace_back(from, to);
      stop.at(++renames);
      return;
    }
    const int err = errno;
    for (auto it = done.rbegin(); it != done.rend(); ++it) ::rename(it->second.c_str(), it->first.c_str());
    std::error_code rec;
    fs::remove_all(trash, rec);
    ::unlink(journal.c_str());
    util::outputs_committed(false);
    throw InputError("cannot write " + shown(name) + ": " + reason(err) + " (nothing was changed)");
  };
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    if (s.replaces) move(dir_ + "/" + s.name, trash + "/" + std::to_string(i), s.name);
    if (!s.remove) move(staging_ + "/" + s.name, dir_ + "/" + s.name, s.name);
  }
  fs::remove_all(trash, ec);
  fs::remove_all(staging_, ec);
  ::unlink(journal.c_str());
}


}  // namespace waitlab::app
