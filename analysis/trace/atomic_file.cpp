#include "analysis/trace/atomic_file.hpp"

#include <sys/resource.h>
#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <ostream>

#include "util/error.hpp"

namespace waitlab::trace {

namespace {

// errno after a failed stream operation is a hint at best (the standard does not promise
// it), so it is only quoted when set.
std::string reason(int err, const char* fallback) {
  return err != 0 ? std::string(std::strerror(err)) : std::string(fallback);
}

// Why writing `path` failed, with what to do about a full disk or a file size limit.
std::string write_failure(const std::string& path, const std::string& tmp, int err) {
  struct rlimit rl = {};
  const bool fsize_limit = ::getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY;
  if (err == 0) err = fsize_limit ? EFBIG : ENOSPC;  // the stream lost errno: the likely cause is named
  std::string why = "cannot write " + path + ": writing " + tmp + " failed: " + std::strerror(err);
  if (err == ENOSPC) {
    const std::string dir = std::filesystem::path(path).parent_path().string();
    struct statvfs fs = {};
    if (::statvfs(dir.empty() ? "." : dir.c_str(), &fs) == 0)
      why += " (" + std::to_string(static_cast<unsigned long long>(fs.f_bavail) * fs.f_frsize / 1024) +
             " KiB free there; free some space or write elsewhere)";
  } else if (err == EFBIG) {
    if (fsize_limit)
      why += " (the file size limit, ulimit -f, is " + std::to_string(static_cast<unsigned long long>(rl.rlim_cur)) +
             " bytes)";
  }
  return why;
}

void remove_quietly(const std::string& p) {
  std::error_code ec;
  std::filesystem::remove(p, ec);
}

}  // namespace

void write_file_atomic(const std::string& path, const std::function<void(std::ostream&)>& write) {
  const std::string tmp = path + ".tmp";
  std::ofstream out;
  errno = 0;
  out.open(tmp, std::ios::binary | std::ios::trunc);
  if (!out)
    throw InputError("cannot write " + path + ": cannot create " + tmp + ": " + reason(errno, "cannot open"));
  errno = 0;
  try {
    write(out);
  } catch (...) {
    const int err = errno;
    const bool failed = !out;  // the stream failed (a full disk, a file size limit), not the writer
    out.close();
    remove_quietly(tmp);
    if (failed) throw WriteError(write_failure(path, tmp, err));
    throw;
  }
  errno = 0;
  out.flush();
  out.close();
  if (!out) {
    const int err = errno;
    remove_quietly(tmp);
    throw WriteError(write_failure(path, tmp, err));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    remove_quietly(tmp);
    throw InputError("cannot write " + path + ": cannot rename " + tmp + " to it: " + ec.message());
  }
}

void write_file_atomic(const std::string& path, std::string_view content) {
  write_file_atomic(path, [content](std::ostream& out) {
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
  });
}

bool write_or_remove(const std::string& path, bool present, const std::function<void(std::ostream&)>& write) {
  if (present) {
    write_file_atomic(path, write);
    return true;
  }
  std::error_code ec;
  std::filesystem::remove(path, ec);
  if (ec) throw InputError("cannot remove " + path + " (left from an earlier run): " + ec.message());
  return false;
}

}  // namespace waitlab::trace
