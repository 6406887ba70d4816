// The journal of a commit of outputs (app/commit_journal.hpp).
#include "app/commit_journal.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "util/error.hpp"

namespace waitlab::app {

namespace fs = std::filesystem;

namespace {

std::string reason(int err) {
  return std::strerror(err);
}

}  // namespace

// Writes the journal whole (a temporary file, flushed to disk, renamed into place).
void write_commit_journal(const std::string& path, const std::string& text, const std::string& given) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  bool ok = fd >= 0;
  for (std::size_t off = 0; ok && off < text.size();) {
    const ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n <= 0) ok = false;
    else off += static_cast<std::size_t>(n);
  }
  const int err = errno;
  ok = ok && ::fsync(fd) == 0;
  if (fd >= 0) ::close(fd);
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    throw InputError(given + ": cannot write the outputs' journal " + path + ": " + reason(err ? err : errno) +
                     " (nothing was changed)");
  }
}

bool recover_commit(const std::string& dir) {
  const std::string journal = (fs::path(dir) / kCommitJournal).string();
  std::error_code ec;
  fs::remove(journal + ".tmp", ec);  // a journal never completed: its commit never began
  std::ifstream in(journal);
  if (!in) return false;
  std::string line, staging, trash;
  std::vector<std::pair<char, std::string>> steps;
  bool head = false, end = false;
  while (std::getline(in, line)) {
    if (line == kCommitJournalHead) head = true;
    else if (line.rfind("staging ", 0) == 0) staging = line.substr(8);
    else if (line.rfind("trash ", 0) == 0) trash = line.substr(6);
    else if (line.size() > 2 && line[1] == ' ' && (line[0] == 'R' || line[0] == 'N' || line[0] == 'D'))
      steps.emplace_back(line[0], line.substr(2));
    else if (line == "end") end = true;
  }
  in.close();
  if (!head || !end || staging.empty() || trash.empty()) return false;  // not ours: left alone
  const auto exists = [](const std::string& p) {
    struct stat st = {};
    return ::lstat(p.c_str(), &st) == 0;
  };
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const auto& [kind, name] = steps[i];
    const std::string target = (fs::path(dir) / name).string();
    const std::string from = staging + "/" + name;
    const std::string old = trash + "/" + std::to_string(i);
    if (kind == 'D') {
      if (!exists(old) && exists(target)) ::rename(target.c_str(), old.c_str());
      continue;
    }
    if (!exists(from)) continue;  // moved in already
    if (kind == 'R' && exists(target) && !exists(old)) ::rename(target.c_str(), old.c_str());
    ::rename(from.c_str(), target.c_str());
  }
  fs::remove_all(trash, ec);
  fs::remove_all(staging, ec);
  ::unlink(journal.c_str());
  return true;
}

}  // namespace waitlab::app
