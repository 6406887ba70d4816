#include "analysis/idlewave/summary.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <stdexcept>

#include "analysis/engine/bytes.hpp"
#include "analysis/engine/fold.hpp"
#include "analysis/waitstate/partners.hpp"
#include "util/memory.hpp"

namespace waitlab::analysis::idle {

using engine::ByteReader;
using engine::ByteWriter;
using engine::Bytes;
using engine::Location;
using trace::EventKind;
using trace::MpiOp;

bool is_idle_pattern(Pattern p) {
  switch (p) {
    case Pattern::LateSender:
    case Pattern::LateReceiver:
    case Pattern::WaitAtNxN:
    case Pattern::WaitAtBarrier:
    case Pattern::LateBroadcast:
    case Pattern::EarlyReduce:
    case Pattern::EarlyScan:
      return true;
    default:
      return false;
  }
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (v.size() % 2 == 1) return *mid;
  const double hi = *mid;
  return (hi + *std::max_element(v.begin(), mid)) / 2;
}

double trimmed_mean(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t cut = v.size() / 10;
  double s = 0;
  for (std::size_t i = cut; i < v.size() - cut; ++i) s += v[i];
  return s / static_cast<double>(v.size() - 2 * cut);
}

std::int32_t iteration_at(const std::vector<Time>& starts, Time time) {
  return static_cast<std::int32_t>(std::upper_bound(starts.begin(), starts.end(), time) - starts.begin()) - 1;
}

int offset(Rank from, Rank to, std::size_t P) {
  long long d = static_cast<long long>(to) - from;
  const long long n = static_cast<long long>(P);
  if (2 * std::llabs(d) > n) d -= d > 0 ? n : -n;
  return static_cast<int>(d);
}

namespace {

// A rank's iteration starts from the ground truth: the first compute interval of each workload
// iteration.
std::vector<Time> truth_starts(const trace::Location& loc) {
  std::vector<Time> starts;
  std::int32_t last = -1;
  for (const auto& c : loc.truth) {
    if (c.iteration <= last) continue;
    while (last + 1 <= c.iteration) {
      starts.push_back(c.start);
      ++last;
    }
  }
  return starts;
}

struct RegionCount {
  std::uint32_t region;
  std::uint64_t count;
};

// The user region entered once per iteration: the one with the fewest Enters on the median rank
// (at least 3), the first such; −1 if none. Process 0 decides from every rank's counts and
// broadcasts the choice.
std::int64_t iteration_region(const engine::Shard& shard, engine::Transport& transport) {
  const auto& regions = shard.defs.regions;
  const std::size_t R = regions.size();
  const auto user = [&](std::uint32_t g) { return g < R && regions[g].op == MpiOp::None; };
  ByteWriter mine;
  for (const trace::Location& loc : shard.locations) {
    std::vector<std::uint64_t> c(R, 0);
    for (const auto& e : loc.events)
      if (e.kind == EventKind::Enter && user(e.ref)) ++c[e.ref];
    std::vector<RegionCount> nonzero;
    for (std::uint32_t g = 0; g < R; ++g)
      if (c[g] > 0) nonzero.push_back({g, c[g]});
    mine.put(nonzero);
  }
  const std::vector<Bytes> parts = transport.gather(mine.bytes());
  std::int64_t best = -1;
  if (transport.self() == 0) {
    std::vector<std::vector<double>> counts(R, std::vector<double>(static_cast<std::size_t>(shard.ranks), 0.0));
    std::size_t rank = 0;
    for (const Bytes& part : parts)
      for (ByteReader in(part); !in.done(); ++rank)
        for (const RegionCount& rc : in.get_vector<RegionCount>()) counts[rc.region][rank] = static_cast<double>(rc.count);
    double best_count = 0;
    for (std::uint32_t g = 0; g < R; ++g) {
      if (!user(g)) continue;
      const double m = median(counts[g]);
      if (m >= 3 && (best < 0 || m < best_count)) {
        best = g;
        best_count = m;
      }
    }
  }
  return engine::decode<std::int64_t>(transport.broadcast(engine::encode(best)));
}

// Start times of each owned rank's iterations: from the ground truth (if any rank has one), or
// else the Enters of the iteration region.
std::vector<std::vector<Time>> iteration_starts(const engine::Shard& shard, engine::Transport& transport,
                                                bool& from_truth) {
  std::vector<std::vector<Time>> starts(shard.locations.size());
  from_truth = false;
  if (shard.has_truth) {
    std::uint64_t any = 0;
    for (std::size_t i = 0; i < starts.size(); ++i) {
      starts[i] = truth_starts(shard.locations[i]);
      any += starts[i].empty() ? 0 : 1;
    }
    if (transport.sum(any) > 0) {
      from_truth = true;
      return starts;
    }
  }
  const std::int64_t best = iteration_region(shard, transport);
  for (std::size_t i = 0; i < starts.size(); ++i) {
    starts[i].clear();
    if (best < 0) continue;
    for (const auto& e : shard.locations[i].events)
      if (e.kind == EventKind::Enter && e.ref == static_cast<std::uint32_t>(best)) starts[i].push_back(e.time);
  }
  return starts;
}

// The rank's idle periods, from its wait states in their order.
void idle_periods(const engine::Shard& shard, const trace::Matching& m, const WaitStateResult& waits, Rank r,
                  RankSummary& s) {
  const auto& events = shard.location(r).events;
  const auto ri = static_cast<std::size_t>(r);
  for (std::size_t i = waits.rank_first[ri]; i < waits.rank_first[ri + 1]; ++i) {
    const WaitState& w = waits.instances[i];
    if (!is_idle_pattern(w.pattern)) continue;
    const trace::Call& c = m.calls[ri][w.call];
    Time start = events[c.enter].time;
    if (w.pattern != Pattern::LateSender)
      for (std::uint32_t e = c.enter; e <= c.leave && e < events.size(); ++e)
        if (events[e].kind == EventKind::CollBegin) {
          start = events[e].time;
          break;
        }
    IdlePeriod p;
    p.rank = w.rank;
    p.start = start;
    p.seconds = w.seconds;
    p.pattern = w.pattern;
    p.cause_rank = w.cause_rank;
    p.iteration = iteration_at(s.starts, start);
    s.periods.push_back(p);
    s.calls.push_back(w.call);
  }
  // By start (stable), the calls alongside.
  std::vector<std::size_t> order(s.periods.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return s.periods[a].start < s.periods[b].start; });
  std::vector<IdlePeriod> periods;
  std::vector<std::uint32_t> calls;
  periods.reserve(order.size());
  calls.reserve(order.size());
  for (const std::size_t i : order) {
    periods.push_back(s.periods[i]);
    calls.push_back(s.calls[i]);
  }
  s.periods = std::move(periods);
  s.calls = std::move(calls);
}

// Each owned rank's iterations but the first and the last (start-up, and no following start):
// their length and the time outside and inside MPI, appended to the process's lists for the
// medians; the rank's mean time outside MPI per iteration. And what the rank usually idles at
// each point of its iterations: per position of the call in the iteration (from the first call
// at or after the iteration's start) the median over its iterations of the idle there (0 where
// it idles now and then), each period's `usual` the smaller of that and its length.
struct IterationValues {
  std::vector<double> period, exec, comm;
};

void iterations(const engine::Shard& shard, const trace::Matching& m, Rank r, RankSummary& s, IterationValues& all) {
  const auto& st = s.starts;
  const auto& ev = shard.location(r).events;
  const auto& calls = m.calls[static_cast<std::size_t>(r)];
  if (st.size() >= 3) {
    std::vector<double> exec;
    std::size_t ci = 0;
    for (std::size_t k = 1; k + 1 < st.size(); ++k) {
      double mpi = 0;
      while (ci < calls.size() && ev[calls[ci].enter].time < st[k]) ++ci;
      for (std::size_t cj = ci; cj < calls.size() && ev[calls[cj].enter].time < st[k + 1]; ++cj)
        if (calls[cj].op != MpiOp::Init && calls[cj].op != MpiOp::Finalize)
          mpi += ev[calls[cj].leave].time - ev[calls[cj].enter].time;
      const double period = iteration_length(st, k);
      all.period.push_back(period);
      exec.push_back(period - mpi);
      all.comm.push_back(mpi);
    }
    all.exec.insert(all.exec.end(), exec.begin(), exec.end());
    s.has_exec_mean = exec.size() >= 3;
    if (s.has_exec_mean) s.exec_mean = trimmed_mean(std::move(exec));
  }
  if (st.empty()) return;
  std::vector<std::uint32_t> first_call;  // per iteration start: the first call entered at or after it
  for (const Time t : st)
    first_call.push_back(static_cast<std::uint32_t>(
        std::partition_point(calls.begin(), calls.end(), [&](const trace::Call& c) { return ev[c.enter].time < t; }) -
        calls.begin()));
  std::vector<std::vector<double>> at_pos;  // [position][iteration]
  std::vector<std::size_t> where(s.periods.size(), SIZE_MAX);
  for (std::size_t i = 0; i < s.periods.size(); ++i) {
    const IdlePeriod& p = s.periods[i];
    if (p.iteration < 0 || s.calls[i] < first_call[static_cast<std::size_t>(p.iteration)]) continue;
    const std::size_t pos = s.calls[i] - first_call[static_cast<std::size_t>(p.iteration)];
    if (pos >= at_pos.size()) at_pos.resize(pos + 1, std::vector<double>(st.size(), 0.0));
    at_pos[pos][static_cast<std::size_t>(p.iteration)] += p.seconds;
    where[i] = pos;
  }
  std::vector<double> usual(at_pos.size());
  for (std::size_t pos = 0; pos < at_pos.size(); ++pos) usual[pos] = median(std::move(at_pos[pos]));
  for (std::size_t i = 0; i < s.periods.size(); ++i)
    if (where[i] != SIZE_MAX) s.periods[i].usual = std::min(s.periods[i].seconds, usual[where[i]]);
  s.usual_idle = std::accumulate(usual.begin(), usual.end(), 0.0);
}

// What the messages tell of the owned ranks: the sides each receive-completing call receives
// from, the ranks sending to each, and whether a send completed before its receive was posted
// (the receive post's Enter comes from the receiver: partner_times).
void messages(const engine::Shard& shard, const trace::Matching& m, engine::Transport& transport,
              std::vector<RankSummary>& owned) {
  const auto P = static_cast<std::size_t>(shard.ranks);
  const std::vector<MessageTimes> times = partner_times(shard, m, transport);
  std::vector<std::vector<std::uint8_t>> sides(owned.size());
  for (Location l = shard.owned.first; l < shard.owned.last; ++l)
    sides[static_cast<std::size_t>(l - shard.owned.first)].assign(m.calls[static_cast<std::size_t>(l)].size(), 0);
  for (std::size_t i = 0; i < m.messages.size(); ++i) {
    const trace::Message& msg = m.messages[i];
    if (shard.owned.holds(msg.receiver)) {
      const auto at = static_cast<std::size_t>(msg.receiver - shard.owned.first);
      const int off = offset(msg.receiver, msg.sender, P);
      if (off != 0) sides[at][msg.recv_done_call] |= off < 0 ? 1 : 2;
      if (msg.sender != msg.receiver) owned[at].senders.push_back(msg.sender);
    }
    if (shard.owned.holds(msg.sender)) {
      const auto& sc = m.calls[static_cast<std::size_t>(msg.sender)][msg.send_done_call];
      if (shard.time(msg.sender, sc.leave) < times[i].post_enter - kTimeResolution)
        owned[static_cast<std::size_t>(msg.sender - shard.owned.first)].eager = true;
    }
  }
  for (std::size_t at = 0; at < owned.size(); ++at) {
    RankSummary& s = owned[at];
    std::sort(s.senders.begin(), s.senders.end());
    s.senders.erase(std::unique(s.senders.begin(), s.senders.end()), s.senders.end());
    for (const std::uint8_t side : sides[at]) {
      if (side == 0) continue;
      s.sides |= side;
      ++s.receiving_calls;
      if (side != 3) ++s.one_sided_calls;
    }
  }
}

void put(ByteWriter& out, const RankSummary& s) {
  out.put(s.starts).put(s.periods).put(s.usual_idle).put(s.exec_mean).put(s.has_exec_mean);
  out.put(s.senders).put(s.delays).put(s.sides).put(s.receiving_calls).put(s.one_sided_calls).put(s.eager);
  out.put(s.has_events).put(s.first_time).put(s.last_time);
}

// A rank's summary; its idle periods are appended to `periods`.
RankSummary get(ByteReader& in, std::vector<IdlePeriod>& periods) {
  RankSummary s;
  s.starts = in.get_vector<Time>();
  const auto n = in.get<std::uint64_t>();
  if (n > in.remaining() / sizeof(IdlePeriod)) throw std::runtime_error("idle waves: a summary ends early");
  const auto raw = in.get_raw(static_cast<std::size_t>(n) * sizeof(IdlePeriod));
  const std::size_t at = periods.size();
  periods.resize(at + static_cast<std::size_t>(n));
  if (n > 0) std::memcpy(static_cast<void*>(periods.data() + at), raw.data(), raw.size());
  s.usual_idle = in.get<double>();
  s.exec_mean = in.get<double>();
  s.has_exec_mean = in.get<bool>();
  s.senders = in.get_vector<Rank>();
  s.delays = in.get_vector<InjectedDelay>();
  s.sides = in.get<std::uint8_t>();
  s.receiving_calls = in.get<std::uint64_t>();
  s.one_sided_calls = in.get<std::uint64_t>();
  s.eager = in.get<bool>();
  s.has_events = in.get<bool>();
  s.first_time = in.get<Time>();
  s.last_time = in.get<Time>();
  return s;
}

}  // namespace

Summaries summarize(const engine::Shard& shard, const trace::Matching& m, const WaitStateResult& waits,
                    engine::Transport& transport) {
  Summaries all;
  all.has_truth = shard.has_truth;
  std::vector<std::vector<Time>> starts = iteration_starts(shard, transport, all.iterations_from_truth);
  std::vector<RankSummary> owned(shard.locations.size());
  IterationValues values;
  for (Location l = shard.owned.first; l < shard.owned.last; ++l) {
    const auto at = static_cast<std::size_t>(l - shard.owned.first);
    RankSummary& s = owned[at];
    s.starts = std::move(starts[at]);
    idle_periods(shard, m, waits, l, s);
    iterations(shard, m, l, s, values);
    const trace::Location& loc = shard.location(l);
    if (shard.has_truth)
      for (const auto& c : loc.truth) {
        const double d = c.injected[static_cast<std::size_t>(trace::Cause::Delay)];
        if (d > kTimeResolution) s.delays.push_back({c.iteration, c.start, c.end, d});
      }
    s.has_events = !loc.events.empty();
    if (s.has_events) {
      s.first_time = loc.events.front().time;
      s.last_time = loc.events.back().time;
    }
  }
  messages(shard, m, transport, owned);
  all.period_median = engine::median(transport, values.period);
  all.exec_median = engine::median(transport, values.exec);
  all.comm_median = engine::median(transport, values.comm);
  values = {};
  ByteWriter mine;
  std::uint64_t periods = 0;
  for (const RankSummary& s : owned) {
    put(mine, s);
    periods += s.periods.size();
  }
  owned = {};  // process 0 holds every rank's summary next: only one copy of its own at a time
  periods = transport.sum(periods);
  // The summaries are all process 0 holds beyond its shard: what the steps above freed (the
  // partner exchange, the iterations' values) goes back to the system first, or glibc keeps it
  // resident beside them.
  util::release_freed_memory();
  std::vector<Bytes> parts = transport.gather(std::move(mine).bytes());
  if (!parts.empty()) {
    all.of.reserve(static_cast<std::size_t>(shard.ranks));
    all.periods.reserve(static_cast<std::size_t>(periods));
  }
  for (Bytes& part : parts) {  // process order = rank order; each part's bytes go once read
    for (ByteReader in(part); !in.done();) all.of.push_back(get(in, all.periods));
    part = {};
  }
  return all;
}

}  // namespace waitlab::analysis::idle
