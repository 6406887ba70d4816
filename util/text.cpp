#include "util/text.hpp"

#include <algorithm>
#include <cstdio>

namespace waitlab::text {

namespace {

// Length of the well-formed UTF-8 sequence at s[i], or 0.
std::size_t sequence(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return 1;
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xbf;  // range of the second byte
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    if (c == 0xe0) lo = 0xa0;  // overlong
    if (c == 0xed) hi = 0x9f;  // surrogates
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    if (c == 0xf0) lo = 0x90;  // overlong
    if (c == 0xf4) hi = 0x8f;  // above U+10FFFF
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  if (b(i + 1) < lo || b(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (b(i + k) < 0x80 || b(i + k) > 0xbf) return 0;
  return n;
}

// The edit distance of `a` and `b` if it is at most `k`, else k + 1, computing only the cells
// (i, j) of the table with |i − j| ≤ k (a path through any other cell costs more than k);
// stops early once a whole row exceeds k. Adds the cells computed to `cells`.
std::size_t banded_distance(std::string_view a, std::string_view b, std::size_t k, std::uint64_t& cells) {
  const std::size_t n = a.size(), m = b.size();
  const std::size_t over = k + 1;
  if ((n > m ? n - m : m - n) > k) return over;
  // Row i holds the cells j in [lo, hi]; the cells just outside the band read as `over`.
  std::vector<std::size_t> prev(m + 2, over), cur(m + 2, over);
  for (std::size_t j = 0; j <= std::min(m, k); ++j) prev[j] = j;
  cells += std::min(m, k) + 1;
  for (std::size_t i = 1; i <= n; ++i) {
    const std::size_t lo = i > k ? i - k : 0;
    const std::size_t hi = std::min(m, i + k);
    std::size_t best = over;
    if (lo > 0) cur[lo - 1] = over;
    std::size_t j = lo;
    if (j == 0) {
      cur[0] = i;  // i <= k here
      best = i;
      j = 1;
    }
    for (; j <= hi; ++j) {
      const std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      const std::size_t d = std::min({prev[j] + 1, cur[j - 1] + 1, sub, over});
      cur[j] = d;
      best = std::min(best, d);
    }
    cells += hi - lo + 1;
    cur[hi + 1] = over;  // the next row's band reaches one cell further
    std::swap(prev, cur);
    if (best > k) return over;
  }
  return std::min(prev[m], over);
}

}  // namespace

std::string closest_name(std::string_view name, const std::vector<std::string>& candidates, std::uint64_t* cells) {
  std::uint64_t work = 0;
  std::string best;
  if (name.size() <= kMaxSuggestedName) {
    std::size_t best_distance = std::max<std::size_t>(2, name.size() / 3) + 1;
    for (const auto& c : candidates) {
      if (best_distance == 0 || work >= kMaxSuggestionCells) break;
      // Only a distance below the best so far changes the answer (ties: the first candidate).
      const std::size_t d = banded_distance(name, c, best_distance - 1, work);
      if (d < best_distance) {
        best_distance = d;
        best = c;
      }
    }
  }
  if (cells != nullptr) *cells += work;
  return best;
}

std::size_t invalid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = sequence(s, i);
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

std::string one_line(std::string_view s, std::size_t max_bytes) {
  std::string out;
  const std::size_t shown = s.size() > max_bytes ? max_bytes : s.size();
  out.reserve(shown + 16);
  const auto hex = [&](unsigned char c) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02x", c);
    out += buf;
  };
  std::size_t i = 0;
  while (i < shown) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7f) {
      hex(c);
    } else if (c < 0x80) {
      out += static_cast<char>(c);
    } else {
      const std::size_t n = sequence(s, i);
      // C1 controls (U+0080..U+009F) are as invisible as C0 ones.
      const bool c1 = n == 2 && c == 0xc2 && static_cast<unsigned char>(s[i + 1]) < 0xa0;
      if (n == 0 || i + n > shown || c1) {
        hex(c);
        if (c1) {
          hex(static_cast<unsigned char>(s[i + 1]));
          i += 2;
          continue;
        }
      } else {
        out.append(s.substr(i, n));
        i += n;
        continue;
      }
    }
    ++i;
  }
  if (shown < s.size()) out += "... (" + std::to_string(s.size() - shown) + " more bytes)";
  return out;
}

}  // namespace waitlab::text
