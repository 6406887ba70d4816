// forward_replay of passes.hpp: the logical clocks' visit in happened-before order, as the engine's
// causal forward replay (analysis/engine/causal.hpp) with an event's new time as its value.
//
// A receive needs its send's final time (offered by the sender under the message's index among the
// messages of its (sender, receiver) pair); a constrained collective end needs its instance's latest
// releasing begin (the replay's instance, combined by exact maxima), and for a scan the begins of
// the releasing members at or before its position (one replay instance per position: a scan of N
// members declares at most N(N+1)/2 needs). The bound c of an event is the largest value of its
// needs + l_min — the same bits as the latest of them + l_min, rounding being monotone. At a global
// standstill (a dependency cycle) the lowest stuck rank's blocked event goes without the needs that
// have no value (LetGo::Event with equal urgencies): what the one-process visit did.
#include <algorithm>

#include "analysis/clock/passes.hpp"
#include "analysis/engine/causal.hpp"

namespace waitlab::clock {

std::uint64_t forward_replay(const engine::Shard& shard, const Owned& owned, const Graph& g, double lmin,
                             Rule& rule, engine::Transport& transport) {
  const trace::Matching& m = shard.matching;
  const engine::LocationRange range = shard.owned;
  std::vector<std::uint32_t> events;
  for (Rank r = range.first; r < range.last; ++r)
    events.push_back(static_cast<std::uint32_t>(owned.events(r).size()));
  engine::CausalReplay<Time> replay(transport, shard.partition, range, std::move(events),
                                    static_cast<std::uint32_t>(g.slots()), engine::LetGo::Event,
                                    kClockChannel);
  for (std::uint32_t id = 0; id < m.messages.size(); ++id) {
    const trace::Message& msg = m.messages[id];
    if (range.holds(msg.sender)) replay.offer(msg.sender, msg.send_event, msg.receiver, g.pair_index[id]);
    if (range.holds(msg.receiver)) replay.need(msg.receiver, msg.recv_event, msg.sender, g.pair_index[id]);
  }
  for (std::uint32_t k = 0; k < m.members.size(); ++k) {
    const std::uint32_t i = g.inst[k];
    if (i == kNone || g.dep[i] == Dep::None) continue;
    const trace::CollMember& mem = m.members[k];
    const std::uint64_t first = g.slot_first[i];
    const bool prefix = g.dep[i] == Dep::Prefix;
    if (g.releases(k))
      replay.feed(mem.rank, mem.begin_event,
                  static_cast<std::uint32_t>(first + (prefix ? g.position[k] : 0)));
    if (!g.constrained(k)) continue;
    if (!prefix) {
      replay.need_instance(mem.rank, mem.end_event, static_cast<std::uint32_t>(first));
      continue;
    }
    for (std::uint32_t p = 0; p <= g.position[k]; ++p)
      if (g.prefix_releases[first + p])
        replay.need_instance(mem.rank, mem.end_event, static_cast<std::uint32_t>(first + p));
  }
  std::uint64_t dropped = 0;
  engine::CausalReplay<Time>::Callbacks callbacks;
  callbacks.event = [&](Location r, std::uint32_t i,
                        std::span<const engine::CausalReplay<Time>::Input> inputs) {
    double c = kNoTime;
    for (const auto& in : inputs)
      if (!in.let_go) c = std::max(c, in.value + lmin);
    auto& ev = owned.events(r);
    ev[i].time = rule.place(r, i, ev[i].time, c);
    return ev[i].time;
  };
  callbacks.combine = [](const Time& a, const Time& b) { return engine::exact_max(a, b); };
  callbacks.urgency = [](Location, std::uint8_t) { return 0.0; };
  callbacks.let_go = [&](Location, std::uint8_t) { ++dropped; };
  replay.run(callbacks);
  return transport.sum(dropped);
}

}  // namespace waitlab::clock
