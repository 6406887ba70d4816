#include "analysis/critpath/critpath.hpp"

#include <algorithm>

namespace waitlab::analysis {

using trace::Matching;

namespace {

// The call on rank r whose Enter..Leave range holds event k (k < Leave), or -1.
std::int64_t call_of(const std::vector<trace::Call>& calls, std::uint32_t k) {
  auto it = std::upper_bound(calls.begin(), calls.end(), k,
                             [](std::uint32_t e, const trace::Call& c) { return e < c.enter; });
  if (it == calls.begin()) return -1;
  --it;
  return k < it->leave ? it - calls.begin() : -1;
}

}  // namespace

CriticalPathResult critical_path(const trace::Trace& tr, const Matching& m, const WaitStateResult& w) {
  CriticalPathResult res;
  const std::size_t n = tr.ranks();
  res.ranks = n;
  if (n == 0) return res;

  // Where the path ends: the rank entering MPI_Finalize last, else the latest last event.
  Rank rank = trace::kNoRank;
  for (const auto& inst : m.collectives) {
    if (inst.op != trace::MpiOp::Finalize) continue;
    std::uint32_t last = 0;
    for (std::uint32_t k = 1; k < inst.count; ++k)
      if (m.members[inst.first + k].begin > m.members[inst.first + last].begin) last = k;
    if (inst.count > 0) rank = m.members[inst.first + last].rank;
  }
  if (rank == trace::kNoRank || tr.locations[rank].events.empty()) {
    rank = trace::kNoRank;
    for (std::size_t r = 0; r < n; ++r) {
      const auto& ev = tr.locations[r].events;
      if (ev.empty()) continue;
      if (rank == trace::kNoRank || ev.back().time > tr.locations[rank].events.back().time) rank = static_cast<Rank>(r);
    }
  }
  if (rank == trace::kNoRank) return res;

  // The instance of (rank, call) the path jumps at: the largest one with a cause. Looked up
  // once per call the walk enters, not once per event of it.
  Rank cached_rank = trace::kNoRank;
  std::int64_t cached_call = -1;
  const WaitState* cached = nullptr;
  const auto jump_of = [&](Rank r, std::int64_t call) -> const WaitState* {
    if (call < 0) return nullptr;
    if (r == cached_rank && call == cached_call) return cached;
    cached_rank = r;
    cached_call = call;
    cached = nullptr;
    const auto [lo, hi] = w.of_call(r, static_cast<std::uint32_t>(call));
    for (std::size_t i = lo; i < hi; ++i) {
      const WaitState& x = w.instances[i];
      if (has_cause(x.pattern) && x.cause_rank != trace::kNoRank && (!cached || x.seconds > cached->seconds))
        cached = &x;
    }
    return cached;
  };

  const auto& last_ev = tr.locations[rank].events;
  std::uint32_t k = static_cast<std::uint32_t>(last_ev.size() - 1);
  Time t = last_ev[k].time;
  res.end = t;
  std::vector<PathSegment> rev;
  const auto emit = [&](Rank r, CallPathId path, Time lo, Time hi) {
    if (!(hi > lo) || path == trace::kNoCallPath) return;
    if (!rev.empty() && rev.back().rank == r && rev.back().path == path && rev.back().start == hi) {
      rev.back().start = lo;
    } else {
      rev.push_back(PathSegment{r, path, lo, hi});
    }
  };

  std::uint64_t budget = tr.event_count() + 2 * w.instances.size() + 16;
  while (true) {
    if (budget-- == 0) {
      res.complete = false;
      break;
    }
    const auto& ev = tr.locations[rank].events;
    const auto& calls = m.calls[rank];
    const Time tk = ev[k].time;
    const CallPathId path = m.path_after[rank][k];
    const std::int64_t c = call_of(calls, k);
    const WaitState* j = jump_of(rank, c);
    if (j) {
      const auto call = static_cast<std::uint32_t>(c);
      const Time wait_end = std::min(m.enter(tr, j->cause_rank, j->cause_call), m.leave(tr, rank, call));
      const Time wait_start = wait_end - j->seconds;
      const Time jt = std::min(t, wait_end);
      if (t > wait_start && jt >= tk) {
        emit(rank, path, jt, t);
        // Continue on the delaying rank at the moment the waiting ended.
        const Rank cr = j->cause_rank;
        const auto& cev = tr.locations[cr].events;
        const auto& cc = m.calls[cr][j->cause_call];
        auto lo = cev.begin() + cc.enter, hi = cev.begin() + cc.leave + 1;
        auto it = std::upper_bound(lo, hi, jt, [](Time v, const trace::Event& e) { return v < e.time; });
        if (it == lo) {
          it = std::upper_bound(cev.begin(), cev.end(), jt, [](Time v, const trace::Event& e) { return v < e.time; });
          if (it == cev.begin()) {
            res.complete = false;
            break;
          }
        }
        rank = cr;
        k = static_cast<std::uint32_t>((it - cev.begin()) - 1);
        t = jt;
        ++res.jumps;
        continue;
      }
    }
    emit(rank, path, tk, t);
    t = tk;
    if (k == 0) break;
    --k;
  }
  res.start = t;
  res.length = res.end - res.start;
  res.segments.assign(rev.rbegin(), rev.rend());

  // Profiles: on the path, and over all ranks (time, waiting).
  std::vector<CallPathImpact> prof(m.paths.size());
  for (std::size_t p = 0; p < prof.size(); ++p) prof[p].path = static_cast<CallPathId>(p);
  for (const auto& s : res.segments) prof[s.path].on_path += s.end - s.start;
  for (std::size_t r = 0; r < n; ++r) {
    const auto& ev = tr.locations[r].events;
    const auto& after = m.path_after[r];
    for (std::size_t e = 0; e + 1 < ev.size(); ++e)
      if (after[e] != trace::kNoCallPath) prof[after[e]].time += ev[e + 1].time - ev[e].time;
  }
  for (const auto& x : w.instances) prof[m.calls[x.rank][x.call].path].waiting += x.seconds;
  const double p = static_cast<double>(n);
  for (auto& c : prof) {
    c.average = (c.time - c.waiting) / p;
    c.imbalance = std::max(0.0, c.on_path - c.average);
    res.critical_activities += p * std::min(c.on_path, c.average);
    res.critical_imbalance += p * c.imbalance;
    res.noncritical_activities += p * std::max(0.0, c.average - c.on_path);
  }
  res.profile = std::move(prof);
  return res;
}

}  // namespace waitlab::analysis
