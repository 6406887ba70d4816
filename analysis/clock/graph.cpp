// build_graph, fold_slots and message_partner_times of graph.hpp.
#include "analysis/clock/graph.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "analysis/engine/exchange.hpp"

namespace waitlab::clock {

using engine::ByteReader;
using engine::Bytes;
using engine::ByteWriter;

Owned::Owned(const engine::Shard& shard) : range(shard.owned) {
  // The shard views locations its caller may change (the promise of graph.hpp's Owned).
  auto* first = const_cast<trace::Location*>(shard.locations.data());
  locations_ = std::span<trace::Location>(first, shard.locations.size());
}

namespace {

Dep dependency(trace::MpiOp op) {
  using trace::MpiOp;
  // MPI_Alltoallv can carry any pattern (a member may send to nobody): which begins an end
  // depends on is not in the trace, so none (Scalasca ignores it for the same reason).
  if (op == MpiOp::Alltoallv) return Dep::None;
  switch (trace::base_collective(op)) {
    case MpiOp::Init:
    case MpiOp::Barrier:
    case MpiOp::Allreduce:
    case MpiOp::Alltoall:
    case MpiOp::Allgather:
    case MpiOp::ReduceScatter:
      return Dep::All;
    case MpiOp::Bcast:
    case MpiOp::Scatter:
      return Dep::FromRoot;
    case MpiOp::Reduce:
    case MpiOp::Gather:
      return Dep::ToRoot;
    case MpiOp::Scan:
    case MpiOp::Exscan:
      return Dep::Prefix;
    default:
      return Dep::None;
  }
}

// Per communicator, its members sorted (with their positions), for look-ups in O(log N).
class Members {
 public:
  explicit Members(const engine::Shard& shard) : sorted_(shard.defs.comms.size()) {
    for (std::size_t c = 0; c < sorted_.size(); ++c) {
      const auto& members = shard.defs.comms[c].members;
      for (std::size_t p = 0; p < members.size(); ++p)
        sorted_[c].emplace_back(members[p], static_cast<std::uint32_t>(p));
      std::sort(sorted_[c].begin(), sorted_[c].end());
    }
  }
  // The position of `rank` in the communicator (its first, as std::find would give), kNone if none.
  std::uint32_t of(trace::CommId comm, Rank rank) const {
    const auto& list = sorted_.at(comm);
    const auto it = std::lower_bound(list.begin(), list.end(), std::pair<Rank, std::uint32_t>{rank, 0});
    return it != list.end() && it->first == rank ? it->second : kNone;
  }

 private:
  std::vector<std::vector<std::pair<Rank, std::uint32_t>>> sorted_;
};

// What the members of an instance add up to over the processes.
struct RoleSum {
  std::uint32_t releasers = 0;      // members that release
  std::uint32_t last_follower = 0;  // 1 + the highest position of a member that may follow (0: none)
};

// Each owned member's role before the instance's totals are known (kConstrained: it may follow),
// and the instance's totals over all processes.
void member_roles(const engine::Shard& shard, const Owned& owned, const Members& positions,
                  engine::Transport& transport, Graph& g) {
  const trace::Matching& m = shard.matching;
  const std::size_t ni = m.collectives.size();
  std::vector<RoleSum> sums(ni);
  std::vector<std::uint8_t> bitmap(g.slots(), 0);
  for (std::uint32_t i = 0; i < ni; ++i) {
    const trace::CollInstance& ci = m.collectives[i];
    const Dep dep = g.dep[i];
    if (dep == Dep::None) continue;
    for (std::uint32_t k = ci.first; k < ci.first + ci.count; ++k) {
      const trace::CollMember& mem = m.members[k];
      g.inst[k] = i;
      g.position[k] = positions.of(ci.comm, mem.rank);
      // Scalasca's byte gates: a member whose CollEnd says it sent no bytes releases nothing, one
      // that received none follows nobody. A barrier moves no data and synchronises all the same;
      // MPI_Init's Enter/Leave carry no sizes.
      const trace::Event& e = owned.events(mem.rank)[mem.end_event];
      const auto moves = [&](bool sent) {
        if (e.kind != trace::EventKind::CollEnd || ci.op == trace::MpiOp::Barrier) return true;
        return (sent ? e.bytes : e.aux) > 0;
      };
      const bool root = mem.rank == ci.root;
      std::uint8_t role = 0;
      if (moves(true) && (dep != Dep::FromRoot || root)) role |= Graph::kReleases;
      const bool follows = dep == Dep::All || dep == Dep::Prefix || (dep == Dep::FromRoot && !root) ||
                           (dep == Dep::ToRoot && root);
      if (follows && moves(false)) role |= Graph::kConstrained;
      g.role[k] = role;
      sums[i].releasers += role & Graph::kReleases;
      if (g.constrained(k)) sums[i].last_follower = std::max(sums[i].last_follower, g.position[k] + 1);
      if (dep == Dep::Prefix && g.releases(k)) bitmap[g.slot_first[i] + g.position[k]] = 1;
    }
  }
  const Bytes all = transport.chain(
      ByteWriter().put(std::vector<RoleSum>(ni)).put(std::vector<std::uint8_t>(g.slots(), 0)).bytes(),
      [&](Bytes in) {
        ByteReader reader(in);
        auto s = reader.get_vector<RoleSum>();
        auto b = reader.get_vector<std::uint8_t>();
        for (std::size_t i = 0; i < ni; ++i) {
          s[i].releasers += sums[i].releasers;
          s[i].last_follower = std::max(s[i].last_follower, sums[i].last_follower);
        }
        for (std::size_t x = 0; x < b.size(); ++x) b[x] |= bitmap[x];
        return ByteWriter().put(s).put(b).bytes();
      });
  ByteReader reader(all);
  sums = reader.get_vector<RoleSum>();
  g.prefix_releases = reader.get_vector<std::uint8_t>();
  // An end with no begin to follow is none: drop it (and, if no end is left, the begins).
  for (std::uint32_t i = 0; i < ni; ++i) {
    if (g.dep[i] == Dep::None) continue;
    const trace::CollInstance& ci = m.collectives[i];
    std::uint32_t first_releaser = g.size[i];  // Prefix: the lowest position that releases
    if (g.dep[i] == Dep::Prefix)
      for (std::uint32_t p = 0; p < g.size[i] && first_releaser == g.size[i]; ++p)
        if (g.prefix_releases[g.slot_first[i] + p]) first_releaser = p;
    const bool prefix = g.dep[i] == Dep::Prefix;
    const bool any =
        prefix ? sums[i].last_follower > first_releaser : sums[i].releasers > 0 && sums[i].last_follower > 0;
    for (std::uint32_t k = ci.first; k < ci.first + ci.count; ++k) {
      const bool keeps = prefix ? g.position[k] >= first_releaser : sums[i].releasers > 0;
      if (!any)
        g.role[k] = 0;
      else if (!keeps)
        g.role[k] &= static_cast<std::uint8_t>(~Graph::kConstrained);
    }
    g.releasers[i] = any ? sums[i].releasers : 0;
    if (!any) g.dep[i] = Dep::None;
    g.any_prefix = g.any_prefix || g.dep[i] == Dep::Prefix;
  }
}

}  // namespace

Graph build_graph(const engine::Shard& shard, const Owned& owned, engine::Transport& transport) {
  Graph g;
  const trace::Matching& m = shard.matching;
  const auto& comms = shard.defs.comms;
  const std::size_t ni = m.collectives.size();
  g.dep.assign(ni, Dep::None);
  g.releasers.assign(ni, 0);
  g.size.assign(ni, 0);
  g.slot_first.assign(ni + 1, 0);
  const Members positions(shard);
  for (std::uint32_t i = 0; i < ni; ++i) {
    const trace::CollInstance& ci = m.collectives[i];
    g.size[i] = static_cast<std::uint32_t>(comms[ci.comm].members.size());
    Dep dep = g.size[i] >= 2 ? dependency(ci.op) : Dep::None;
    const bool root = positions.of(ci.comm, ci.root) != kNone;
    if ((dep == Dep::FromRoot || dep == Dep::ToRoot) && !root) dep = Dep::None;
    g.dep[i] = dep;
    g.slot_first[i + 1] = g.slot_first[i] + (dep == Dep::None ? 0 : dep == Dep::Prefix ? g.size[i] : 1);
  }
  g.inst.assign(m.members.size(), kNone);
  g.position.assign(m.members.size(), kNone);
  g.role.assign(m.members.size(), 0);
  member_roles(shard, owned, positions, transport, g);

  // Per owned rank, the points in event order (a message's owned sides, a member's begin and end).
  g.points.resize(static_cast<std::size_t>(shard.owned.size()));
  const auto points = [&](Rank r) -> std::vector<Graph::Point>& {
    return g.points[static_cast<std::size_t>(r - shard.owned.first)];
  };
  g.pair_index.assign(m.messages.size(), 0);
  for (std::uint32_t id = 0; id < m.messages.size(); ++id) {
    const trace::Message& msg = m.messages[id];
    if (id > 0 && m.messages[id - 1].sender == msg.sender && m.messages[id - 1].receiver == msg.receiver)
      g.pair_index[id] = g.pair_index[id - 1] + 1;
    if (shard.owned.holds(msg.sender)) points(msg.sender).push_back({msg.send_event, id, Graph::kSend});
    if (shard.owned.holds(msg.receiver)) points(msg.receiver).push_back({msg.recv_event, id, Graph::kRecv});
  }
  for (std::uint32_t k = 0; k < m.members.size(); ++k) {
    auto& pts = points(m.members[k].rank);
    if (g.releases(k)) pts.push_back({m.members[k].begin_event, k, Graph::kBegin});
    if (g.constrained(k)) pts.push_back({m.members[k].end_event, k, Graph::kEnd});
  }
  for (auto& pts : g.points)
    std::sort(pts.begin(), pts.end(), [](const Graph::Point& a, const Graph::Point& b) {
      return std::tie(a.event, a.kind, a.id) < std::tie(b.event, b.kind, b.id);
    });
  return g;
}

std::vector<double> fold_slots(const engine::Shard& shard, const Graph& g, engine::Transport& transport,
                               double initial, double (*combine)(double, double),
                               const std::function<void(std::uint32_t k, const SlotPut& put)>& fill) {
  std::vector<double> mine(g.slots(), initial);
  const SlotPut put = [&](std::uint64_t slot, double value) { mine[slot] = combine(mine[slot], value); };
  for (std::uint32_t k = 0; k < shard.matching.members.size(); ++k)
    if (g.inst[k] != kNone && g.dep[g.inst[k]] != Dep::None) fill(k, put);
  const Bytes all = transport.chain(engine::encode(std::vector<double>(g.slots(), initial)), [&](Bytes in) {
    auto values = engine::decode<std::vector<double>>(in);
    for (std::size_t x = 0; x < values.size(); ++x) values[x] = combine(values[x], mine[x]);
    return engine::encode(values);
  });
  return engine::decode<std::vector<double>>(all);
}

std::vector<Time> message_partner_times(const engine::Shard& shard, engine::Transport& transport,
                                        bool to_receiver,
                                        const std::function<Time(std::uint32_t message)>& time) {
  const auto& msgs = shard.matching.messages;
  std::vector<Time> out(msgs.size(), kNoTime);
  engine::Exchange exchange(transport, shard.partition, kClockChannel);
  const auto from = [&](const trace::Message& msg) { return to_receiver ? msg.sender : msg.receiver; };
  const auto to = [&](const trace::Message& msg) { return to_receiver ? msg.receiver : msg.sender; };
  // Messages come sorted by (sender, receiver, …): each pair's messages are one run, in the same
  // order on both sides, so a run travels as one record of its times in that order.
  for (std::size_t i = 0; i < msgs.size();) {
    std::size_t j = i;
    while (j < msgs.size() && msgs[j].sender == msgs[i].sender && msgs[j].receiver == msgs[i].receiver) ++j;
    if (shard.owned.holds(from(msgs[i]))) {
      const bool local = shard.owned.holds(to(msgs[i]));
      ByteWriter* w = local ? nullptr : &exchange.record(from(msgs[i]), to(msgs[i]), 0);
      for (std::size_t k = i; k < j; ++k) {
        const Time t = time(static_cast<std::uint32_t>(k));
        if (local)
          out[k] = t;
        else
          w->put(t);
      }
    }
    i = j;
  }
  const engine::Inbox inbox = exchange.deliver();
  for (std::size_t i = 0; i < msgs.size();) {
    std::size_t j = i;
    while (j < msgs.size() && msgs[j].sender == msgs[i].sender && msgs[j].receiver == msgs[i].receiver) ++j;
    if (shard.owned.holds(to(msgs[i])) && !shard.owned.holds(from(msgs[i]))) {
      const auto records = inbox.of(to(msgs[i]));
      const auto found =
          std::partition_point(records.begin(), records.end(),
                               [&](const engine::ExchangeRecord& r) { return r.source < from(msgs[i]); });
      if (found == records.end() || found->source != from(msgs[i]))
        throw std::runtime_error("clock: a partner sent no times for its messages");
      ByteReader in(found->payload);
      for (std::size_t k = i; k < j; ++k) out[k] = in.get<Time>();
    }
    i = j;
  }
  return out;
}

}  // namespace waitlab::clock
