#include "models/loops.hpp"

#include <algorithm>
#include <map>

namespace waitlab::models {

namespace {

// FNV-1a over the fields that make a step what it is.
struct Hash {
  std::uint64_t h = 1469598103934665603ULL;
  void add(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xff;
      h *= 1099511628211ULL;
    }
  }
};

std::vector<std::uint64_t> step_signatures(const std::vector<Action>& actions) {
  std::vector<std::uint64_t> sigs;
  Hash h;
  bool open = false;
  for (const Action& a : actions) {
    if (a.kind == ActionKind::Compute) {
      if (open) sigs.push_back(h.h);
      h = Hash{};
      open = true;
      h.add(a.region);
      continue;
    }
    if (!open) continue;  // before the first compute interval: no step yet
    h.add(static_cast<std::uint64_t>(a.kind));
    h.add(static_cast<std::uint64_t>(static_cast<std::int64_t>(a.peer)));
    h.add(static_cast<std::uint64_t>(static_cast<std::int64_t>(a.peer2)));
    h.add(static_cast<std::uint64_t>(static_cast<std::int64_t>(a.root)));
    if (a.comm != 0) h.add(a.comm);  // a row's collective is not a column's (world-only hashes unchanged)
    h.add(a.bytes);
    h.add(a.bytes2);
    h.add(a.region);
  }
  // The last step is not complete (what follows the last compute interval is the program's
  // end, not the next iteration's calls): it takes no part in the comparison.
  (void)open;
  return sigs;
}

struct RankPeriod {
  int period = 0;
  double share = 0;
};

RankPeriod rank_period(const std::vector<std::uint64_t>& sig) {
  const int m = static_cast<int>(sig.size());
  const int lo = std::max(0, (m - kWindow) / 2);
  const int hi = std::min(m, lo + kWindow);
  const int top = std::min(kMaxPeriod, m / kMinRepeats);
  std::vector<double> share(static_cast<std::size_t>(top) + 1, 0.0);
  double best = 0;
  for (int k = 1; k <= top; ++k) {
    const int pairs = hi - k - lo;
    if (pairs <= 0) break;
    int same = 0;
    for (int i = lo; i < hi - k; ++i) same += sig[static_cast<std::size_t>(i)] == sig[static_cast<std::size_t>(i + k)];
    share[static_cast<std::size_t>(k)] = static_cast<double>(same) / pairs;
    best = std::max(best, share[static_cast<std::size_t>(k)]);
  }
  if (best < kAccept) return {};
  for (int k = 1; k <= top; ++k)
    if (share[static_cast<std::size_t>(k)] >= std::max(kAccept, best - kTolerance))
      return {k, share[static_cast<std::size_t>(k)]};
  return {};
}

}  // namespace

Loop find_loop(const std::vector<std::vector<Action>>& actions) {
  return find_loop(static_cast<int>(actions.size()), [&](int r) { return actions[static_cast<std::size_t>(r)]; });
}

Loop find_loop(int ranks, const std::function<std::vector<Action>(int)>& rank) {
  Loop loop;
  if (ranks == 0) return loop;
  std::vector<int> sample;
  const int n = std::min(ranks, kSampleRanks);
  for (int j = 0; j < n; ++j) {
    const int r = n == 1 ? 0 : static_cast<int>(static_cast<long long>(j) * (ranks - 1) / (n - 1));
    if (sample.empty() || sample.back() != r) sample.push_back(r);
  }
  std::map<int, std::pair<int, double>> votes;  // period -> (ranks, lowest share)
  std::map<int, int> repeats;                     // period -> the most steps / period of its ranks
  for (const int r : sample) {
    const auto sig = step_signatures(rank(r));
    const RankPeriod p = rank_period(sig);
    ++loop.ranks_sampled;
    if (p.period == 0) continue;
    auto [it, fresh] = votes.try_emplace(p.period, 0, p.share);
    ++it->second.first;
    it->second.second = std::min(it->second.second, p.share);
    // The rank's compute intervals (its steps and the last one) over the period.
    repeats[p.period] = std::max(repeats[p.period], static_cast<int>((sig.size() + 1) / static_cast<std::size_t>(p.period)));
  }
  for (const auto& [period, v] : votes)  // ascending: a tie keeps the smallest period
    if (v.first > loop.ranks_agreeing) {
      loop.period = period;
      loop.ranks_agreeing = v.first;
      loop.share = v.second;
      loop.iterations = repeats[period];
    }
  return loop;
}

IterationSplit split_iterations(const std::vector<std::size_t>& intervals, int iterations) {
  IterationSplit s;
  const auto n = static_cast<std::size_t>(std::max(1, iterations));
  for (const std::size_t k : intervals) {
    // This rank's intervals per iteration: fewer than the sampled ranks' where two compute
    // phases meet with no call between them (a corner of a sweep) and the trace has one
    // interval for both.
    const std::size_t per = std::max<std::size_t>(1, k / n);
    if (k % n != 0) ++s.uneven;
    s.per_rank.push_back(static_cast<std::int32_t>(std::min<std::size_t>(per, INT32_MAX)));
    if (k > 0) s.iterations = std::max(s.iterations, static_cast<int>(std::min((k - 1) / per, n - 1)) + 1);
  }
  return s;
}

}  // namespace waitlab::models
