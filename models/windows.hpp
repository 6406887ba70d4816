// waitlab::models — the window rule of the time-resolved analysis (analysis/timeresolved), as
// users write it: on the command line (`waitlab analyze --windows`) and in a scenario
// (outputs.windows).
//
// Promise: parse_windows() accepts
//   "N"            N equal windows (an integer ≥ 1), e.g. "50" (the default);
//   "10ms"         windows of a fixed length (a duration with its unit: s, ms, us, ns);
//   "adaptive"     1000 equal base windows merged until every rank has ⌈√P⌉ events in each;
//   "adaptive:N"   the same from N base windows;
// and throws std::invalid_argument saying what is allowed otherwise.
#pragma once

#include <string>

#include "analysis/timeresolved/timeresolved.hpp"

namespace waitlab::models {

inline constexpr const char* kDefaultWindows = "50";
inline constexpr std::size_t kAdaptiveBaseWindows = 1000;

analysis::WindowOptions parse_windows(const std::string& text);
// The rule in the words parse_windows() reads back ("50", "10ms", "adaptive:1000").
std::string windows_text(const analysis::WindowOptions& w);

}  // namespace waitlab::models
