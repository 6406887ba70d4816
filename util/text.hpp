// waitlab::text — small text helpers for user-facing parsing and messages (models,
// the scenario loader and the command line).
//
// Promise: one definition of the blank-trimming and the English article used by the unit
// parser (units.cpp) and the option parser (spec.cpp), so that both read and word input
// the same way; one UTF-8 check (scenario strings and command-line arguments end up in JSON,
// which must be UTF-8) and one way to make any text a single printable line (error
// messages that echo what a user gave, binary bytes included), and one bounded "did you mean".
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace waitlab::text {

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

// Offset of the first byte of `s` that is not part of well-formed UTF-8 (RFC 3629: no
// overlong forms, no surrogates, nothing above U+10FFFF), or std::string_view::npos.
std::size_t invalid_utf8(std::string_view s);

// `s` as one printable line: control characters as \n, \t, \r or \xHH, bytes that are not
// UTF-8 as \xHH (valid UTF-8, e.g. "µs", is kept), a backslash as is; at most `max_bytes`
// bytes of `s` are shown, then "... (N more bytes)".
std::string one_line(std::string_view s, std::size_t max_bytes = 4096);

// "Did you mean": the first of `candidates` closest to `name` by edit distance (insertions,
// deletions and substitutions of bytes), if that distance is at most max(2, |name| / 3);
// otherwise "". The work is bounded whatever the input: a name longer than
// kMaxSuggestedName bytes gets no suggestion (a typo of a long name is no typo); a candidate
// whose length differs from the name's by more than the distance still allowed is skipped
// unseen (its distance is at least that difference); the distance table is computed only in
// the band |i − j| ≤ that distance, which narrows as closer candidates are found (Ukkonen);
// and the search stops, with the closest found so far, once kMaxSuggestionCells cells were
// computed. `cells`, if given, is increased by the cells computed (for tests).
inline constexpr std::size_t kMaxSuggestedName = 128;
inline constexpr std::uint64_t kMaxSuggestionCells = std::uint64_t{1} << 24;
std::string closest_name(std::string_view name, const std::vector<std::string>& candidates,
                         std::uint64_t* cells = nullptr);

}  // namespace waitlab::text
