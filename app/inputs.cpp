#include "app/inputs.hpp"

#include <sys/stat.h>

#include <filesystem>

#include "util/error.hpp"
#include "analysis/trace/trace_io.hpp"
#include "app/commit_journal.hpp"

namespace waitlab::app {

namespace fs = std::filesystem;

namespace {

// What a non-regular file is, for the message.
const char* kind_of(mode_t m) {
  if (S_ISFIFO(m)) return "a FIFO (named pipe)";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

// `p` made absolute, `.` and `..` and symbolic links of its existing part resolved.
fs::path resolved(const std::string& p) {
  std::error_code ec;
  fs::path r = fs::weakly_canonical(fs::absolute(p), ec);
  return ec ? fs::absolute(p).lexically_normal() : r;
}

}  // namespace

void Inputs::add(const std::string& path, const std::string& what) {
  // A commit into the input's directory that a SIGKILL stopped half-way is finished first (once
  // a directory: a TI index's thousands of rank files share one).
  if (const std::string dir = resolved(path).parent_path().string(); checked_dirs_.insert(dir).second)
    recover_commit(dir);
  struct stat st = {};
  if (::stat(path.c_str(), &st) != 0) return;  // the reader says that it is missing, in its words
  if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
    throw InputError(path + ": " + what + " is " + kind_of(st.st_mode) +
                     ", not a regular file: waitlab reads only files (reading this one might never end)");
  Entry e;
  e.shown = what + " " + path;
  e.dev = st.st_dev;
  e.ino = st.st_ino;
  e.dir = S_ISDIR(st.st_mode);
  for (fs::path a = resolved(path).parent_path(); !a.empty(); a = a.parent_path()) {
    struct stat ast = {};
    if (::stat(a.c_str(), &ast) == 0) e.holders.emplace_back(ast.st_dev, ast.st_ino);
    if (a == a.root_path()) break;
  }
  entries_.push_back(std::move(e));
}

void Inputs::add_trace(const std::string& path) {
  add(path, "the input");  // before its index or anchor is opened
  for (const auto& f : trace::input_files(path))
    if (f != path) add(f, "the input");
}

const Inputs::Entry* Inputs::find(dev_t dev, ino_t ino) const {
  for (const auto& e : entries_)
    if (e.dev == dev && e.ino == ino) return &e;
  return nullptr;
}

const Inputs::Entry* Inputs::held_by(dev_t dev, ino_t ino) const {
  for (const auto& e : entries_)
    for (const auto& [d, i] : e.holders)
      if (d == dev && i == ino) return &e;
  return nullptr;
}

void Inputs::check_output(const std::string& path) const {
  if (entries_.empty()) return;
  const fs::path p = resolved(path);
  struct stat st = {};
  if (::stat(p.c_str(), &st) == 0) {
    if (const Entry* e = find(st.st_dev, st.st_ino))
      throw InputError(path + ": the output would overwrite " + e->shown + "; write it elsewhere");
    if (S_ISDIR(st.st_mode))
      if (const Entry* e = held_by(st.st_dev, st.st_ino))
        throw InputError(path + ": the output would replace a directory holding " + e->shown + "; write it elsewhere");
  }
  check_output_dir(p.parent_path().string());
}

void Inputs::check_output_dir(const std::string& dir) const {
  if (entries_.empty()) return;
  for (fs::path a = resolved(dir); !a.empty(); a = a.parent_path()) {
    struct stat st = {};
    if (::stat(a.c_str(), &st) == 0)
      if (const Entry* e = find(st.st_dev, st.st_ino)) {
        if (a == resolved(dir) && !e->dir)
          throw InputError(dir + ": the output would overwrite " + e->shown + "; write it elsewhere");
        throw InputError(dir + ": the output would be written inside " + e->shown + "; write it elsewhere");
      }
    if (a == a.root_path()) break;
  }
}

void Inputs::check_replaced(const std::string& path, const std::string& shown) const {
  if (entries_.empty()) return;
  struct stat st = {};
  if (::lstat(path.c_str(), &st) != 0) return;
  if (const Entry* e = find(st.st_dev, st.st_ino))
    throw InputError(shown + ": the output would overwrite " + e->shown + " (nothing was changed); write it elsewhere");
  if (S_ISDIR(st.st_mode))
    if (const Entry* e = held_by(st.st_dev, st.st_ino))
      throw InputError(shown + ": the output would replace a directory holding " + e->shown +
                       " (nothing was changed); write it elsewhere");
}

}  // namespace waitlab::app
