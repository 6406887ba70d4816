// The text helpers every user-facing message goes through: the UTF-8 check (scenario strings
// and arguments end up in JSON) and one_line(), the form of every error the command line prints;
// closest_name(), the "did you mean" of every message about an unknown name, with bounded work.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "util/text.hpp"

namespace waitlab::text {
namespace {

TEST(Text, InvalidUtf8FindsTheFirstBadByte) {
  constexpr auto npos = std::string_view::npos;
  EXPECT_EQ(invalid_utf8(""), npos);
  EXPECT_EQ(invalid_utf8("plain ascii"), npos);
  EXPECT_EQ(invalid_utf8("25\xc2\xb5s, 3\xe2\x82\xac, \xf0\x9f\x98\x80"), npos);  // µ, €, an emoji
  EXPECT_EQ(invalid_utf8("caf\xe9"), 3u);                                          // Latin-1
  EXPECT_EQ(invalid_utf8("ab\x9f"), 2u);                                           // a lone continuation byte
  EXPECT_EQ(invalid_utf8("\xc0\xaf"), 0u);                                         // overlong '/'
  EXPECT_EQ(invalid_utf8("\xe0\x80\xaf"), 0u);                                     // overlong, 3 bytes
  EXPECT_EQ(invalid_utf8("x\xed\xa0\x80"), 1u);                                    // a surrogate
  EXPECT_EQ(invalid_utf8("\xf4\x90\x80\x80"), 0u);                                 // above U+10FFFF
  EXPECT_EQ(invalid_utf8("\xe2\x82"), 0u);                                         // cut short
  EXPECT_EQ(invalid_utf8("\xff"), 0u);
}

TEST(Text, OneLineEscapesWhatIsNotPrintable) {
  EXPECT_EQ(one_line("a plain message"), "a plain message");
  EXPECT_EQ(one_line("two\nlines\tand\r\x01\x7f"), "two\\nlines\\tand\\r\\x01\\x7f");
  EXPECT_EQ(one_line("caf\xe9 \x9f\xff"), "caf\\xe9 \\x9f\\xff");
  EXPECT_EQ(one_line("25\xc2\xb5s \xe2\x82\xac"), "25\xc2\xb5s \xe2\x82\xac");  // valid UTF-8 stays
  EXPECT_EQ(one_line("c1 \xc2\x9f"), "c1 \\xc2\\x9f");                             // a C1 control
  EXPECT_EQ(one_line(std::string("nul\0byte", 8)), "nul\\x00byte");
  EXPECT_EQ(one_line(std::string(10, 'x'), 4), "xxxx... (6 more bytes)");
  // A multi-byte character cut by the limit is shown as bytes, never half a character.
  EXPECT_EQ(one_line("ab\xe2\x82\xac", 3), "ab\\xe2... (2 more bytes)");
}

// The unbounded algorithm closest_name() must agree with (below its length cap): the full
// table of the edit distance, the first candidate at the smallest distance ≤ max(2, |name|/3).
std::size_t full_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}
std::string reference_closest(const std::string& name, const std::vector<std::string>& candidates) {
  std::size_t best_distance = std::max<std::size_t>(2, name.size() / 3) + 1;
  std::string best;
  for (const auto& c : candidates)
    if (const auto d = full_distance(name, c); d < best_distance) {
      best_distance = d;
      best = c;
    }
  return best;
}

TEST(Text, ClosestNameKeepsEverySuggestion) {
  // The suggestions the messages of waitlab make (grep "did you mean" in tests/; Spec.DidYouMean
  // has the option names' cases, through did_you_mean, which is closest_name).
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"remov", {"name", "description", "remove", "network"}},
      {"heat1", {"heat1d", "halo2d", "halo3d", "sweep2d"}},
      {"critpat", {"waitstate", "delay", "critpath", "minprofile", "idlewave", "timeresolved"}},
      {"dealy", {"waitstate", "delay", "critpath"}},
      {"rn", {"run", "analyze", "replay", "convert"}},
      {"pairs", {"default", "pair", "ring"}},
      {"alltoal", {"bcast", "alltoall", "allreduce"}},
      {"runn", {"name", "description", "platform", "workload", "run"}},
      {"rnu", {"name", "platform", "run"}},
      {"sed", {"seed", "eager_threshold"}},
      {"mian", {"main", "compute"}},
      {"clustr", {"cluster", "hierarchical", "xml"}},
      {"waitany", {"waitall", "wait"}},
      {"mpj", {"fast", "mpi", "ompi"}},
      {"b", {"a"}},
  };
  for (const auto& [name, candidates] : cases)
    EXPECT_EQ(closest_name(name, candidates), reference_closest(name, candidates)) << name;
  EXPECT_EQ(closest_name("remov", cases[0].second), "remove");
  EXPECT_EQ(closest_name("b", cases.back().second), "a");
  EXPECT_EQ(closest_name("", {"ab", "abc"}), "ab");
  EXPECT_EQ(closest_name("same", {"samey", "same", "sam"}), "same");
  // Against the full table on many names of a small alphabet (many near misses and ties),
  // every length from 0 to 40.
  std::uint64_t state = 12345;
  const auto next = [&state](std::uint64_t n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (state >> 33) % n;
  };
  const auto word = [&](std::size_t length) {
    std::string w;
    for (std::size_t i = 0; i < length; ++i) w += static_cast<char>('a' + next(3));
    return w;
  };
  for (int round = 0; round < 2000; ++round) {
    const std::string name = word(next(41));
    std::vector<std::string> candidates;
    for (std::uint64_t i = next(12); i > 0; --i) {
      std::string c = name;
      for (std::uint64_t e = next(6); e > 0; --e) {  // a few edits of the name, or another word
        const std::size_t at = c.empty() ? 0 : next(c.size());
        switch (next(4)) {
          case 0: c.insert(at, 1, static_cast<char>('a' + next(3))); break;
          case 1: if (!c.empty()) c.erase(at, 1); break;
          case 2: if (!c.empty()) c[at] = static_cast<char>('a' + next(3)); break;
          default: c = word(next(41));
        }
      }
      candidates.push_back(c);
    }
    ASSERT_EQ(closest_name(name, candidates), reference_closest(name, candidates)) << name << " round " << round;
  }
}

// Issue 29, item 5: a 100,000-character region name against a trace of 10,000 regions took more
// than a minute (the full table: 10^9 cells a candidate). The work is counted in table cells.
TEST(Text, ClosestNameDoesBoundedWork) {
  std::vector<std::string> regions;
  for (int i = 0; i < 10000; ++i) regions.push_back("region_" + std::to_string(i));
  std::uint64_t cells = 0;
  const std::string huge = "region_1" + std::string(99992, 'x');
  EXPECT_EQ(closest_name(huge, regions, &cells), "");  // no suggestion for a name this long
  EXPECT_EQ(cells, 0u);
  // At the length cap, against 10,000 candidates of the same length, each one edit away from
  // the next: the band is at most 2 × 42 + 1 cells wide, and the search stops at the cap on cells.
  const std::string name(kMaxSuggestedName, 'q');
  std::vector<std::string> similar;
  for (int i = 0; i < 10000; ++i) {
    std::string c(kMaxSuggestedName, 'z');
    c.replace(0, std::to_string(i).size(), std::to_string(i));
    similar.push_back(c);
  }
  cells = 0;
  EXPECT_EQ(closest_name(name, similar, &cells), "");  // every candidate is 128 edits away
  const std::uint64_t per_candidate = (kMaxSuggestedName + 1) * (2 * (kMaxSuggestedName / 3) + 1);
  EXPECT_LE(cells, kMaxSuggestionCells + per_candidate);
  // A short name: only the candidates of a length within 2 of its 7 are looked at, in a band of
  // at most 5 cells of each of its 8 rows.
  cells = 0;
  EXPECT_EQ(closest_name("compute", regions, &cells), "");
  EXPECT_LE(cells, 10000u * (3 + 7 * 5));
  std::vector<std::string> long_names;
  for (int i = 0; i < 1000; ++i) long_names.push_back(std::string(200, 'c') + std::to_string(i));
  cells = 0;
  EXPECT_EQ(closest_name("compute", long_names, &cells), "");  // their lengths alone rule them out
  EXPECT_EQ(cells, 0u);
  // A typo among the 10,000 is still found, at the cost of the short candidates only.
  std::vector<std::string> names;
  for (int i = 0; i < 10000; ++i) names.push_back("r" + std::to_string(i));
  names.push_back("compute");
  cells = 0;
  EXPECT_EQ(closest_name("compte", names, &cells), "compute");
  EXPECT_LT(cells, 10001u * 7 * 5);  // at most (|name| + 1) rows of 2 × 2 + 1 cells a candidate
}

}  // namespace
}  // namespace waitlab::text
