// What the benchmarks measure with: host seconds of a piece of work, and the process's
// memory figures from /proc/self/status.
#pragma once

#include <chrono>
#include <fstream>
#include <string>

namespace waitlab::bench {

// A field of /proc/self/status in bytes (VmRSS, VmHWM).
inline double status_bytes(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field + ":", 0) == 0) return 1024.0 * std::stod(line.substr(field.size() + 1));
  return 0;
}

// Host seconds `f` takes.
template <typename F>
double seconds(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace waitlab::bench
