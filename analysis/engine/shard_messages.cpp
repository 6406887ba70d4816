// match_messages of shard_matching.hpp: the point-to-point half of a shard's matching (plan §6.4).
#include <algorithm>
#include <tuple>
#include <utility>

#include "analysis/engine/exchange.hpp"
#include "analysis/engine/shard_matching.hpp"

namespace waitlab::engine {

namespace {

using trace::MessageSide;

// What travels: per (location, peer location) one record of channel groups, each a header and
// its sides in posting order.
struct GroupHeader {
  trace::CommId comm = 0;
  std::int32_t tag = 0;
  std::uint32_t count = 0;
};
struct SideRecord {
  std::uint32_t call = 0;
  std::uint32_t done_call = 0;
  std::uint32_t event = 0;
};
constexpr std::uint64_t kSendsKey = 0;     // the source's sends to the target
constexpr std::uint64_t kReceivesKey = 1;  // the source's receives from the target

// The side's own location and its peer.
Location owner(const MessageSide& s, bool send) { return send ? s.src : s.dst; }
Location peer(const MessageSide& s, bool send) { return send ? s.dst : s.src; }

// Sorts `sides` by (owner, peer, comm, tag, order) and emits one record per (owner, peer) whose
// peer is a location: its channel groups.
void emit_sides(std::vector<MessageSide>& sides, bool send, Location locations, Exchange& exchange) {
  std::sort(sides.begin(), sides.end(), [send](const MessageSide& a, const MessageSide& b) {
    return std::tuple(owner(a, send), peer(a, send), a.comm, a.tag, a.order) <
           std::tuple(owner(b, send), peer(b, send), b.comm, b.tag, b.order);
  });
  for (std::size_t i = 0; i < sides.size();) {
    std::size_t j = i;
    while (j < sides.size() && owner(sides[j], send) == owner(sides[i], send) &&
           peer(sides[j], send) == peer(sides[i], send))
      ++j;
    const Location to = peer(sides[i], send);
    if (to >= 0 && to < locations) {
      ByteWriter out;
      for (std::size_t g = i; g < j;) {
        std::size_t h = g;
        while (h < j && sides[h].same_channel(sides[g])) ++h;
        out.put(GroupHeader{sides[g].comm, sides[g].tag, static_cast<std::uint32_t>(h - g)});
        for (; g < h; ++g) out.put(SideRecord{sides[g].call, sides[g].done_call, sides[g].event});
      }
      exchange.emit(owner(sides[i], send), to, send ? kSendsKey : kReceivesKey, out.bytes());
    }
    i = j;
  }
}

// The peer's sides from the records `location` received under `key`, sorted by key() (records
// come by source location, groups by channel, sides in posting order: their index is their order).
std::vector<MessageSide> remote_sides(const Inbox& inbox, Location location, std::uint64_t key) {
  std::vector<MessageSide> sides;
  for (const ExchangeRecord& r : inbox.of(location)) {
    if (r.key != key) continue;
    ByteReader in(r.payload);
    while (!in.done()) {
      const auto header = in.get<GroupHeader>();
      for (std::uint32_t k = 0; k < header.count; ++k) {
        const auto side = in.get<SideRecord>();
        const bool sends = key == kSendsKey;
        sides.push_back(MessageSide{sends ? r.source : location, sends ? location : r.source, header.comm, header.tag,
                                    k, side.event, side.call, side.done_call});
      }
    }
  }
  return sides;
}

// The sides of `all` (sorted by emit_sides: by owner, then in key() order for one owner) that
// `location` owns, in key() order.
std::span<const MessageSide> own_sides(const std::vector<MessageSide>& all, Location location, bool send) {
  const auto lo = std::partition_point(all.begin(), all.end(), [&](const MessageSide& s) { return owner(s, send) < location; });
  const auto hi = std::partition_point(lo, all.end(), [&](const MessageSide& s) { return owner(s, send) <= location; });
  return {lo, hi};
}

}  // namespace

void match_messages(Shard& shard, Transport& transport, const trace::MatchWalk& walk) {
  trace::Matching& m = shard.matching;
  std::vector<MessageSide> sends = walk.sends();
  std::erase_if(sends, [](const MessageSide& s) { return s.done_call == trace::kNoCallPath; });
  std::vector<MessageSide> receives = walk.receives();
  Exchange exchange(transport, shard.partition, kMatchingChannel);
  emit_sides(sends, true, shard.ranks, exchange);
  emit_sides(receives, false, shard.ranks, exchange);
  const Inbox inbox = exchange.deliver();
  for (const MessageSide& s : sends)  // sent to no location: no receiver counts them
    if (s.dst < 0 || s.dst >= shard.ranks) ++m.unmatched.sends;
  std::vector<std::pair<MessageSide, trace::Message>> found;
  found.reserve(std::max(sends.size(), receives.size()));
  const auto keep = [&](const MessageSide& s, const MessageSide& rv) {
    found.emplace_back(s, trace::Message{s.src, s.dst, s.call, s.done_call, rv.call, rv.done_call, s.event, rv.event});
  };
  for (Location l = shard.owned.first; l < shard.owned.last; ++l) {
    // As receiver: every channel into l, counted here.
    trace::pair_sides(remote_sides(inbox, l, kSendsKey), own_sides(receives, l, false), m.unmatched, keep);
    // As sender: the channels to locations of other processes (those of this one are above).
    const auto mine = own_sides(sends, l, true);
    std::vector<MessageSide> out(mine.begin(), mine.end());
    std::erase_if(out, [&](const MessageSide& s) { return s.dst < 0 || s.dst >= shard.ranks || shard.owned.holds(s.dst); });
    std::vector<MessageSide> back = remote_sides(inbox, l, kReceivesKey);
    std::erase_if(back, [&](const MessageSide& s) { return shard.owned.holds(s.dst); });
    trace::Unmatched counted_by_receivers;
    trace::pair_sides(out, back, counted_by_receivers, keep);
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first.key() < b.first.key(); });
  m.messages.clear();
  m.messages.reserve(found.size());
  for (const auto& f : found) m.messages.push_back(f.second);
}

}  // namespace waitlab::engine
