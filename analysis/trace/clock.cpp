// The clock modes' names (clock.hpp); correct_clocks itself is analysis/clock's (correct.cpp).
#include "analysis/trace/clock.hpp"

namespace waitlab::trace {

bool parse_clock_mode(const std::string& text, ClockOptions::Mode& mode) {
  using M = ClockOptions::Mode;
  for (M m : {M::Auto, M::None, M::Linear, M::Clamp, M::LinearAndClamp, M::Clc}) {
    if (text == clock_mode_name(m)) {
      mode = m;
      return true;
    }
  }
  return false;
}

const char* clock_mode_name(ClockOptions::Mode mode) {
  switch (mode) {
    case ClockOptions::Mode::Auto:
      return "auto";
    case ClockOptions::Mode::None:
      return "none";
    case ClockOptions::Mode::Linear:
      return "linear";
    case ClockOptions::Mode::Clamp:
      return "clamp";
    case ClockOptions::Mode::LinearAndClamp:
      return "linear+clamp";
    case ClockOptions::Mode::Clc:
      return "clc";
  }
  return "?";
}

}  // namespace waitlab::trace
