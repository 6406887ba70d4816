// match_collectives of shard_matching.hpp: the collective half of a shard's matching (plan §6.4).
#include <algorithm>
#include <limits>

#include "analysis/engine/shard_matching.hpp"

namespace waitlab::engine {

namespace {

using trace::CollectiveCall;
using trace::Rank;

// What the members of one instance agree on, combined over the processes: the lowest and the
// highest operation of its calls and the root named by the call of the communicator's first member.
struct Agreement {
  std::uint8_t op_min = std::numeric_limits<std::uint8_t>::max();
  std::uint8_t op_max = 0;
  Rank root = trace::kNoRank;
};

using Calls = std::vector<std::vector<std::vector<CollectiveCall>>>;  // per communicator, per rank

// Instances per communicator: the fewest calls of any member (none when a member is no location).
std::vector<std::uint64_t> instance_counts(const Shard& shard, const Calls& calls, Transport& transport) {
  const auto& comms = shard.defs.comms;
  std::vector<std::uint64_t> initial(comms.size(), std::numeric_limits<std::uint64_t>::max());
  for (std::size_t c = 0; c < comms.size(); ++c)
    for (Rank g : comms[c].members)
      if (g < 0 || g >= shard.ranks) initial[c] = 0;
  for (std::size_t c = 0; c < comms.size(); ++c)
    if (comms[c].members.empty()) initial[c] = 0;
  const Bytes counts = transport.chain(encode(initial), [&](Bytes in) {
    auto count = decode<std::vector<std::uint64_t>>(in);
    for (std::size_t c = 0; c < comms.size(); ++c)
      for (Rank g : comms[c].members)
        if (shard.owned.holds(g)) count[c] = std::min<std::uint64_t>(count[c], calls[c][static_cast<std::size_t>(g)].size());
    return encode(count);
  });
  return decode<std::vector<std::uint64_t>>(counts);
}

// Every instance's agreement, communicator by communicator, instance by instance.
std::vector<Agreement> agreements(const Shard& shard, const Calls& calls, const std::vector<std::uint64_t>& counts,
                                  Transport& transport) {
  const auto& comms = shard.defs.comms;
  std::uint64_t total = 0;
  for (std::uint64_t n : counts) total += n;
  const Bytes all = transport.chain(encode(std::vector<Agreement>(static_cast<std::size_t>(total))), [&](Bytes in) {
    auto agreed = decode<std::vector<Agreement>>(in);
    std::size_t at = 0;
    for (std::size_t c = 0; c < comms.size(); ++c) {
      const auto& members = comms[c].members;
      for (std::size_t pos = 0; pos < members.size() && counts[c] > 0; ++pos) {
        if (!shard.owned.holds(members[pos])) continue;
        const auto& mine = calls[c][static_cast<std::size_t>(members[pos])];
        for (std::uint64_t k = 0; k < counts[c]; ++k) {
          Agreement& a = agreed[at + k];
          const auto op = static_cast<std::uint8_t>(mine[k].op);
          a.op_min = std::min(a.op_min, op);
          a.op_max = std::max(a.op_max, op);
          if (pos == 0) a.root = mine[k].root;
        }
      }
      at += counts[c];
    }
    return encode(agreed);
  });
  return decode<std::vector<Agreement>>(all);
}

}  // namespace

void match_collectives(Shard& shard, Transport& transport, const trace::MatchWalk& walk) {
  trace::Matching& m = shard.matching;
  const Calls& calls = walk.collective_calls();
  const auto& comms = shard.defs.comms;
  const std::vector<std::uint64_t> counts = instance_counts(shard, calls, transport);
  const std::vector<Agreement> agreed = agreements(shard, calls, counts, transport);
  m.collectives.clear();
  m.members.clear();
  std::size_t at = 0;
  for (trace::CommId c = 0; c < comms.size(); ++c) {
    const auto& members = comms[c].members;
    std::vector<char> member(static_cast<std::size_t>(shard.ranks), 0);
    for (Rank g : members)
      if (g >= 0 && g < shard.ranks) member[static_cast<std::size_t>(g)] = 1;
    for (Location r = shard.owned.first; r < shard.owned.last; ++r) {
      const std::size_t held = calls[c][static_cast<std::size_t>(r)].size();
      m.unmatched.collective_calls += member[static_cast<std::size_t>(r)] ? held - counts[c] : held;
    }
    for (std::uint64_t k = 0; k < counts[c]; ++k) {
      const Agreement& a = agreed[at + k];
      if (a.op_min != a.op_max) {  // counted once, by process 0
        if (transport.self() == 0) m.unmatched.collective_calls += members.size();
        continue;
      }
      trace::CollInstance inst;
      inst.comm = c;
      inst.op = static_cast<trace::MpiOp>(a.op_min);
      inst.root = a.root;
      inst.first = static_cast<std::uint32_t>(m.members.size());
      for (Rank g : members) {
        if (!shard.owned.holds(g)) continue;
        const CollectiveCall& cc = calls[c][static_cast<std::size_t>(g)][k];
        m.members.push_back(trace::CollMember{g, cc.call, cc.begin, cc.end, cc.begin_event, cc.end_event});
      }
      inst.count = static_cast<std::uint32_t>(m.members.size() - inst.first);
      m.collectives.push_back(inst);
    }
    at += counts[c];
  }
}

}  // namespace waitlab::engine
