// The window rule of the time-resolved analysis (analysis/timeresolved/windows.hpp): what users write, and the
// bound on the windows a trace may be cut into (issue 29, item 5: `--windows 1000000` on a
// 20,000-event trace took 3.2 GB), with exact messages.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "analysis/timeresolved/windows.hpp"

namespace waitlab::analysis {
namespace {

analysis::WindowOptions rule(const std::string& text) {
  return parse_windows(text);
}

TEST(Windows, ParsedAndShownAsWritten) {
  EXPECT_EQ(windows_text(rule("50")), "50");
  EXPECT_EQ(windows_text(rule("adaptive")), "adaptive:1000");
  EXPECT_EQ(windows_text(rule("adaptive:200")), "adaptive:200");
  EXPECT_EQ(rule("10ms").rule, analysis::WindowRule::Fixed);
  EXPECT_EQ(rule("10ms").length, 0.01);
  EXPECT_THROW(rule("0"), std::invalid_argument);
  EXPECT_THROW(rule("1000001"), std::invalid_argument);
  EXPECT_THROW(rule("adaptive:0"), std::invalid_argument);
}

TEST(Windows, AtMostOnePerEventButNeverFewerThanTheDefaultsNeed) {
  EXPECT_EQ(window_limit(0), 1000u);
  EXPECT_EQ(window_limit(30), 1000u);
  EXPECT_EQ(window_limit(20000), 20000u);
  EXPECT_EQ(window_limit(50'000'000), 1000000u);
  // The defaults work on any trace, even an empty one.
  EXPECT_EQ(window_count_error(rule(kDefaultWindows), 0, 0, "--windows"), "");
  EXPECT_EQ(window_count_error(rule("adaptive"), 0, 0, "--windows"), "");
  EXPECT_EQ(window_count_error(rule("1000"), 0, 30, "--windows"), "");
  EXPECT_EQ(window_count_error(rule("20000"), 0, 20000, "--windows"), "");
  // The case: a million windows on 20,000 events.
  EXPECT_EQ(window_count_error(rule("1000000"), 0, 20000, "--windows"),
            "--windows: 1000000 windows for a trace of 20000 events; at most 20000 (one window per event, at "
            "least 1000): give fewer windows, such as 50");
  EXPECT_EQ(window_count_error(rule("1001"), 0, 30, "outputs.windows"),
            "outputs.windows: 1001 windows for a trace of 30 events; at most 1000 (one window per event, at least "
            "1000): give fewer windows, such as 50");
  // Adaptive windows: the base windows count.
  EXPECT_EQ(window_count_error(rule("adaptive:5000"), 0, 2000, "--windows"),
            "--windows: adaptive:5000 starts from 5000 windows for a trace of 2000 events; at most 2000 (one window "
            "per event, at least 1000): give fewer base windows, or adaptive");
  EXPECT_EQ(window_count_error(rule("adaptive:2000"), 0, 2000, "--windows"), "");
  // A window length: the windows it makes over the trace's span (counted by the caller).
  EXPECT_EQ(window_count_error(rule("1us"), 299999.5, 20000, "--windows"),
            "--windows: windows of 1us would be 300000 windows for a trace of 20000 events; at most 20000 (one "
            "window per event, at least 1000): give a longer window, or a number of windows such as 50");
  EXPECT_EQ(window_count_error(rule("1ms"), 1000, 20, "--windows"), "");
  const std::string error = window_count_error(rule("1ms"), 1000.5, 20, "--windows");
  EXPECT_EQ(error.rfind("--windows: windows of 1ms would be 1001 windows for a trace of 20 events; ", 0), 0u) << error;
}

}  // namespace
}  // namespace waitlab::analysis
