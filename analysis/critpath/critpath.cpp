#include "analysis/critpath/critpath.hpp"

#include <algorithm>
#include <utility>

#include "analysis/critpath/walk.hpp"
#include "analysis/engine/bytes.hpp"
#include "analysis/engine/fold.hpp"
#include "analysis/engine/serial_transport.hpp"
#include "analysis/waitstate/partners.hpp"

namespace waitlab::analysis {

using trace::Matching;

namespace {

// Where the path ends: the rank entering the last MPI_Finalize last (its member that began last,
// first such in communicator order) and that call, else the rank whose last event is latest (the
// lowest such) and kNoCall, or kNoRank. One fold along the processes: each Finalize instance's owned member that began last
// joins the others' by later_begin (the wait states' exact rule over begin and position), and the
// ranks' last events are compared in rank order, as the serial loop compares them.
std::pair<Rank, std::uint32_t> end_rank(const engine::Shard& shard, const Matching& m, engine::Transport& transport) {
  std::vector<MemberMark> mine;  // per MPI_Finalize instance, in m.collectives order
  for (const trace::CollInstance& inst : m.collectives) {
    if (inst.op != trace::MpiOp::Finalize) continue;
    MemberMark& mark = mine.emplace_back();
    for (std::uint32_t i = inst.first; i < inst.first + inst.count;
         ++i) {  // owned members, in communicator order
      const trace::CollMember& mem = m.members[i];
      if (!mark.found() || mem.begin > mark.begin) mark = MemberMark{mem.begin, 0, mem.rank, mem.call};
    }
    if (mark.found()) {
      const auto& members = shard.defs.comms[inst.comm].members;
      const auto at = std::find(members.begin(), members.end(), mark.rank);
      mark.position = static_cast<std::uint32_t>(at - members.begin());
    }
  }
  const engine::Bytes combined = transport.chain(
      engine::ByteWriter().put(std::vector<MemberMark>(mine.size())).put(trace::kNoRank).put(Time{0}).bytes(),
      [&](engine::Bytes in) {
        engine::ByteReader reader(in);
        auto marks = reader.get_vector<MemberMark>();
        auto latest = reader.get<Rank>();
        auto latest_time = reader.get<Time>();
        for (std::size_t f = 0; f < marks.size(); ++f) marks[f] = later_begin(marks[f], mine[f]);
        for (engine::Location l = shard.owned.first; l < shard.owned.last; ++l) {
          const auto& ev = shard.location(l).events;
          if (!ev.empty() && (latest == trace::kNoRank || ev.back().time > latest_time)) {
            latest = l;
            latest_time = ev.back().time;
          }
        }
        return engine::ByteWriter().put(marks).put(latest).put(latest_time).bytes();
      });
  engine::ByteReader reader(combined);
  const auto marks = reader.get_vector<MemberMark>();
  const auto latest = reader.get<Rank>();
  // A member has a call, so its rank has events for the walk to start from.
  std::pair<Rank, std::uint32_t> end{latest, kNoCall};
  for (const MemberMark& mark : marks)
    if (mark.found()) end = {mark.rank, mark.call};
  return end;
}

// The walk's step budget, the serial one: events + 2·instances + 16 of the whole trace.
std::uint64_t walk_budget(const engine::Shard& shard, const WaitStateResult& w,
                          engine::Transport& transport) {
  std::uint64_t mine = 2 * w.instances.size();
  for (const trace::Location& l : shard.locations) mine += l.events.size();
  return transport.sum(mine) + 16;
}

// Seconds per call path: on the path from the segments in time order; time (exclusive, every
// rank) and waiting (every wait state) folded along the ranks in rank order — time over each
// rank's events, waiting over its instances by (call, pattern) — so the serial loops' bits.
std::vector<CallPathImpact> profile(const engine::Shard& shard, const Matching& m, const WaitStateResult& w,
                                    const std::vector<PathSegment>& segments, engine::Transport& transport) {
  const std::size_t n = m.paths.size();
  // acc: time per call path, then waiting per call path
  const auto add_rank = [&](engine::Location l, std::vector<double>& acc) {
    const auto r = static_cast<std::size_t>(l);
    const auto& ev = shard.location(l).events;
    const auto& after = m.path_after[r];
    for (std::size_t e = 0; e + 1 < ev.size(); ++e)
      if (after[e] != trace::kNoCallPath) acc[after[e]] += ev[e + 1].time - ev[e].time;
    for (std::size_t i = w.rank_first[r]; i < w.rank_first[r + 1]; ++i)
      acc[n + m.calls[r][w.instances[i].call].path] += w.instances[i].seconds;
  };
  const auto sums = engine::chained_fold(transport, shard.owned, std::vector<double>(2 * n, 0.0), add_rank);
  std::vector<CallPathImpact> prof(n);
  for (std::size_t p = 0; p < n; ++p) {
    prof[p].path = static_cast<CallPathId>(p);
    prof[p].time = sums[p];
    prof[p].waiting = sums[n + p];
  }
  for (const auto& s : segments) prof[s.path].on_path += s.end - s.start;
  return prof;
}

}  // namespace

CriticalPathResult critical_path(const engine::Shard& shard, const Matching& m, const WaitStateResult& w,
                                 engine::Transport& transport, const CriticalPathOptions& options) {
  CriticalPathResult res;
  res.bounds = options.bounds;
  const auto n = static_cast<std::size_t>(shard.ranks);
  res.ranks = n;
  if (n == 0) return res;
  const auto [rank, finalize] = end_rank(shard, m, transport);
  if (rank == trace::kNoRank) return res;

  WalkedPath path =
      walk_path(shard, m, w, transport, rank, finalize, walk_budget(shard, w, transport), options.bounds);
  res.segments = std::move(path.segments);
  res.start = path.start;
  res.end = path.end;
  res.length = res.end - res.start;
  res.jumps = path.jumps;
  res.complete = path.complete;

  std::vector<CallPathImpact> prof = profile(shard, m, w, res.segments, transport);
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

CriticalPathResult critical_path(const trace::Trace& tr, const Matching& m, const WaitStateResult& w,
                                 const CriticalPathOptions& options) {
  engine::SerialTransport serial;
  return critical_path(engine::Shard::whole(tr), m, w, serial, options);
}

std::string_view path_bounds_name(PathBounds b) { return b == PathBounds::Scalasca ? "scalasca" : "waitlab"; }

std::string path_bounds_text(PathBounds b) {
  return b == PathBounds::Scalasca
             ? "Scalasca's bounds: from the MPI_Init Enter to the last MPI_Finalize Enter, no jump inside MPI_Init"
             : "waitlab's bounds: from the first event to the last event of the rank entering MPI_Finalize last";
}

}  // namespace waitlab::analysis
