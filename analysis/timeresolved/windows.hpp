// waitlab::analysis — the window rule of the time-resolved analysis (analysis/timeresolved), as
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

namespace waitlab::analysis {

inline constexpr const char* kDefaultWindows = "50";
inline constexpr std::size_t kAdaptiveBaseWindows = 1000;

analysis::WindowOptions parse_windows(const std::string& text);
// The rule in the words parse_windows() reads back ("50", "10ms", "adaptive:1000").
std::string windows_text(const analysis::WindowOptions& w);

// The most windows the time-resolved analysis may make of a trace of `events` events (those of
// its ranks and threads): one window per event — more windows than events leave windows empty,
// and each costs memory and work for every rank (`--windows 1000000` on a 20,000-event trace
// took 3.2 GB) — but never fewer than kAdaptiveBaseWindows, so that the default rules (50
// windows, adaptive from 1000) work on any trace, and never more than kMaxWindowCount.
inline constexpr std::size_t kMaxWindowCount = 1000000;
std::size_t window_limit(std::size_t events);
// "" if the rule makes at most window_limit(events) windows, else the error, after `where`
// ("--windows: 1000000 windows for a trace of 20000 events; ..."): N equal windows count N,
// adaptive:N its N base windows, a window length the `fixed_windows` it makes over the trace's
// span (ignored for the other rules).
std::string window_count_error(const analysis::WindowOptions& w, double fixed_windows, std::size_t events,
                               const std::string& where);

}  // namespace waitlab::analysis
