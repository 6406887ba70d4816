#include "analysis/trace/atomic_file.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <ostream>

#include "analysis/trace/error.hpp"

namespace waitlab::trace {

namespace {

// errno after a failed stream operation is a hint at best (the standard does not promise
// it), so it is only quoted when set.
std::string reason(int err, const char* fallback) {
  return err != 0 ? std::string(std::strerror(err)) : std::string(fallback);
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
  try {
    write(out);
  } catch (...) {
    out.close();
    remove_quietly(tmp);
    throw;
  }
  errno = 0;
  out.flush();
  out.close();
  if (!out) {
    const int err = errno;
    remove_quietly(tmp);
    throw InputError("cannot write " + path + ": writing " + tmp + " failed: " + reason(err, "disk full?"));
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
