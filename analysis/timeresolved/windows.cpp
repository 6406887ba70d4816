#include "analysis/timeresolved/windows.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "util/units.hpp"

namespace waitlab::analysis {

namespace {

const char* const kAllowed =
    "expected a number of equal windows (e.g. 50), a window length with its unit (e.g. 10ms) or adaptive[:N]";

bool parse_count(const std::string& s, std::size_t& n) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  return ec == std::errc() && end == s.data() + s.size();
}

}  // namespace

analysis::WindowOptions parse_windows(const std::string& text) {
  analysis::WindowOptions w;
  const std::string t = text;
  std::size_t n = 0;
  const bool digits = !t.empty() && t.find_first_not_of("0123456789") == std::string::npos;
  if (digits) {
    if (!parse_count(t, n) || n < 1 || n > kMaxWindowCount)
      throw std::invalid_argument(std::string("the number of windows must be 1 to 1000000, got ") + t);
    w.rule = analysis::WindowRule::Count;
    w.count = n;
    return w;
  }
  if (t == "adaptive" || t.rfind("adaptive:", 0) == 0) {
    w.rule = analysis::WindowRule::Adaptive;
    w.count = kAdaptiveBaseWindows;
    if (t.size() > 9) {
      if (!parse_count(t.substr(9), n) || n < 1 || n > kMaxWindowCount)
        throw std::invalid_argument("adaptive:N needs a number of base windows from 1 to 1000000, got '" + t + "'");
      w.count = n;
    }
    return w;
  }
  double len = 0;
  try {
    len = units::parse_duration(t);
  } catch (const units::UnitError& e) {
    throw std::invalid_argument(std::string(kAllowed) + "; got '" + t + "' (" + e.what() + ")");
  }
  if (!(len > 0)) throw std::invalid_argument("the window length must be positive, got '" + t + "'");
  w.rule = analysis::WindowRule::Fixed;
  w.length = len;
  return w;
}

std::string windows_text(const analysis::WindowOptions& w) {
  switch (w.rule) {
    case analysis::WindowRule::Count: return std::to_string(w.count);
    case analysis::WindowRule::Fixed: return units::format(w.length, units::Quantity::Duration);
    case analysis::WindowRule::Adaptive: return "adaptive:" + std::to_string(w.count);
  }
  return "?";
}

std::size_t window_limit(std::size_t events) {
  return std::min(kMaxWindowCount, std::max(events, kAdaptiveBaseWindows));
}

std::string window_count_error(const analysis::WindowOptions& w, double fixed_windows, std::size_t events,
                               const std::string& where) {
  const std::size_t limit = window_limit(events);
  const double windows =
      w.rule == analysis::WindowRule::Fixed ? std::ceil(fixed_windows) : static_cast<double>(w.count);
  if (!(windows > static_cast<double>(limit))) return "";
  const std::string bound = "; at most " + std::to_string(limit) + " (one window per event, at least " +
                            std::to_string(kAdaptiveBaseWindows) + "): ";
  const std::string trace = " for a trace of " + std::to_string(events) + " events";
  switch (w.rule) {
    case analysis::WindowRule::Count:
      return where + ": " + std::to_string(w.count) + " windows" + trace + bound + "give fewer windows, such as 50";
    case analysis::WindowRule::Adaptive:
      return where + ": " + windows_text(w) + " starts from " + std::to_string(w.count) + " windows" + trace + bound +
             "give fewer base windows, or adaptive";
    case analysis::WindowRule::Fixed: {
      char count[32];
      std::snprintf(count, sizeof count, "%.15g", windows);
      return where + ": windows of " + windows_text(w) + " would be " + count + " windows" + trace + bound +
             "give a longer window, or a number of windows such as 50";
    }
  }
  return "";
}

}  // namespace waitlab::analysis
