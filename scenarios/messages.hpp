// Internal to scenarios/ (not a public header): the pieces every message of the loader is made
// of: a list of names, and the "did you mean" hint for a name it does not know.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "models/spec.hpp"

namespace waitlab::scenarios::detail {

inline std::string join(const std::vector<std::string>& v, std::string_view sep = ", ") {
  std::string s;
  for (const auto& x : v) {
    if (!s.empty()) s += sep;
    s += x;
  }
  return s;
}

// "; did you mean 'iterations'?", or "" when no candidate is close.
inline std::string hint(std::string_view name, const std::vector<std::string>& candidates) {
  const std::string best = models::did_you_mean(name, candidates);
  return best.empty() ? std::string() : "; did you mean '" + best + "'?";
}

}  // namespace waitlab::scenarios::detail
