// The Lamport replay of timeresolved.hpp (an ideal network), on the replay engine's causal
// forward replay (analysis/engine/causal.hpp): every process times the ranks it owns; a receive
// waits for its send's ideal time, a large send's completing Leave for the posting of its
// receive, a collective's end for the latest entry of its members. The one-process run is the
// serial replay.
#include <cmath>

#include "analysis/engine/causal.hpp"
#include "analysis/engine/exchange.hpp"
#include "analysis/engine/serial_transport.hpp"
#include "analysis/engine/shard.hpp"
#include "analysis/timeresolved/timeresolved.hpp"

namespace waitlab::analysis {

using trace::Event;
using trace::EventKind;
using trace::Time;

namespace {

using Replay = engine::CausalReplay<Time>;

constexpr std::uint8_t kHard = 0;                           // a receive's send, a collective's entries
constexpr std::uint8_t kSoft = 1;                           // a large send's receive: let go first
constexpr std::uint64_t kPostKey = std::uint64_t{1} << 32;  // a receive's posting, by its receive event

bool mpi_boundary(const trace::Definitions& defs, const Event& e) {
  if (e.kind != EventKind::Enter && e.kind != EventKind::Leave) return false;
  return e.ref < defs.regions.size() && defs.regions[e.ref].is_mpi();
}

// The large messages an owned receiver gets, as (sender, send event): their senders say so (one
// exchange round).
std::vector<std::pair<trace::Rank, std::uint32_t>> large_receives(const engine::Shard& shard,
                                                                  const trace::Matching& m,
                                                                  engine::Transport& transport) {
  engine::Exchange exchange(transport, shard.partition, kLamportChannel);
  for (const auto& msg : m.messages)
    if (shard.owned.holds(msg.sender) &&
        shard.location(msg.sender).events[msg.send_event].bytes >= kLamportEagerLimit)
      exchange.emit(msg.sender, msg.receiver, msg.send_event, {});
  const engine::Inbox inbox = exchange.deliver();
  std::vector<std::pair<trace::Rank, std::uint32_t>> large;
  for (engine::Location r = shard.owned.first; r < shard.owned.last; ++r)
    for (const auto& rec : inbox.of(r)) large.emplace_back(rec.source, static_cast<std::uint32_t>(rec.key));
  std::sort(large.begin(), large.end());
  return large;
}

// Each owned rank's dependencies in the serial replay's order: the messages in the matching's
// order (a receive's send; a large send's receive posting), then the collective instances.
void declare(const engine::Shard& shard, const trace::Matching& m, engine::Transport& transport,
             Replay& replay) {
  const auto large = large_receives(shard, m, transport);
  for (const auto& msg : m.messages) {
    const bool big_here = shard.owned.holds(msg.sender) &&
                          shard.location(msg.sender).events[msg.send_event].bytes >= kLamportEagerLimit;
    if (shard.owned.holds(msg.receiver)) {
      replay.need(msg.receiver, msg.recv_event, msg.sender, msg.send_event, kHard);
      if (std::binary_search(large.begin(), large.end(), std::pair(msg.sender, msg.send_event)))
        replay.offer(msg.receiver, m.calls[static_cast<std::size_t>(msg.receiver)][msg.recv_post_call].enter,
                     msg.sender, kPostKey | msg.recv_event);
    }
    if (shard.owned.holds(msg.sender)) {
      replay.offer(msg.sender, msg.send_event, msg.receiver, msg.send_event);
      if (big_here)
        replay.need(msg.sender, m.calls[static_cast<std::size_t>(msg.sender)][msg.send_done_call].leave,
                    msg.receiver, kPostKey | msg.recv_event, kSoft);
    }
  }
  for (std::uint32_t i = 0; i < m.collectives.size(); ++i) {
    const auto& c = m.collectives[i];
    for (std::uint32_t k = c.first; k < c.first + c.count; ++k) {
      const auto& mem = m.members[k];
      if (!shard.owned.holds(mem.rank)) continue;
      replay.feed(mem.rank, mem.begin_event, i);
      replay.need_instance(mem.rank, mem.end_event, i, kHard);
    }
  }
}

}  // namespace

IdealReference lamport_reference(const engine::Shard& shard, const trace::Matching& matching,
                                 engine::Transport& transport) {
  const engine::LocationRange owned = shard.owned;
  std::vector<std::uint32_t> events;
  for (engine::Location r = owned.first; r < owned.last; ++r)
    events.push_back(static_cast<std::uint32_t>(shard.location(r).events.size()));
  Replay replay(transport, shard.partition, owned, events,
                static_cast<std::uint32_t>(matching.collectives.size()));
  declare(shard, matching, transport, replay);

  IdealReference ref;
  ref.source = "lamport";
  ref.times.resize(static_cast<std::size_t>(owned.size()));
  std::vector<int> depth(ref.times.size(),
                         0);  // MPI calls open: the gap before an event keeps its length at 0
  std::uint64_t relaxed = 0, unresolved = 0;
  Replay::Callbacks cb;
  cb.event = [&](engine::Location r, std::uint32_t k, std::span<const Replay::Input> in) {
    const std::size_t i = static_cast<std::size_t>(r - owned.first);
    const auto& ev = shard.location(r).events;
    auto& ideal = ref.times[i];
    Time at = k == 0 ? ev[0].time : ideal[k - 1] + (depth[i] == 0 ? ev[k].time - ev[k - 1].time : 0.0);
    for (const auto& x : in)
      if (!x.let_go) at = std::max(at, x.value);
    ideal.push_back(at);
    if (mpi_boundary(shard.defs, ev[k])) {
      if (ev[k].kind == EventKind::Enter)
        ++depth[i];
      else if (depth[i] > 0)
        --depth[i];
    }
    return at;
  };
  cb.combine = [](const Time& a, const Time& b) { return engine::exact_max(a, b); };
  cb.urgency = [](engine::Location, std::uint8_t tag) { return tag == kSoft ? 1.0 : 0.0; };
  cb.let_go = [&](engine::Location, std::uint8_t tag) { ++(tag == kSoft ? relaxed : unresolved); };
  for (auto& t : ref.times) t.reserve(events[static_cast<std::size_t>(&t - ref.times.data())]);
  replay.run(cb);
  // Events a stuck replay could not time (unreachable in practice) keep their own times.
  for (engine::Location r = owned.first; r < owned.last; ++r) {
    const auto& ev = shard.location(r).events;
    auto& ideal = ref.times[static_cast<std::size_t>(r - owned.first)];
    for (std::size_t k = ideal.size(); k < ev.size(); ++k, ++unresolved) ideal.push_back(ev[k].time);
  }
  ref.relaxed_sends = transport.sum(relaxed);
  ref.unresolved = transport.sum(unresolved);
  return ref;
}

IdealReference lamport_reference(const trace::Trace& trace, const trace::Matching& matching) {
  const engine::Shard shard = engine::Shard::whole(trace);
  engine::SerialTransport transport;
  return lamport_reference(shard, matching, transport);
}

}  // namespace waitlab::analysis
