// waitlab::models::text — small text helpers for user-facing parsing and messages (internal).
//
// Promise: one definition of the blank-trimming and the English article used by the unit
// parser (units.cpp) and the option parser (spec.cpp), so that both read and word input
// the same way.
#pragma once

#include <string_view>

namespace waitlab::models::text {

// `s` without leading and trailing blanks (space, tab, CR, LF).
inline std::string_view trim(std::string_view s) {
  const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  return s;
}

// "an" before a noun starting with a vowel letter, "a" otherwise ("an amount", "a duration").
inline std::string_view article(std::string_view noun) {
  const char c = noun.empty() ? 'x' : noun.front();
  return (c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u') ? "an" : "a";
}

}  // namespace waitlab::models::text
