// waitlab::trace — CSV fields as every waitlab table writes them (header-only, so that the
// dependency-free minprofile core and the profiler library can use it too).
//
// Promise: csv_field() quotes a field only when it holds a comma, a quote or a line break
// (quotes doubled, RFC 4180); csv_split() reads such a line back into its fields.
#pragma once

#include <string>
#include <vector>

namespace waitlab::trace {

inline std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

inline std::vector<std::string> csv_split(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        out.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

}  // namespace waitlab::trace
