#include "analysis/waitstate/partners.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <span>
#include <tuple>

#include "analysis/engine/exchange.hpp"

namespace waitlab::analysis {

using engine::ByteReader;
using engine::ByteWriter;
using engine::Bytes;
using engine::Location;

namespace {

constexpr std::uint64_t kFromSender = 0;    // per message: send Enter, send event time
constexpr std::uint64_t kFromReceiver = 1;  // per message: the receive post's Enter

trace::Time enter(const engine::Shard& shard, const trace::Matching& m, trace::Rank r, std::uint32_t call) {
  return shard.time(r, m.calls[static_cast<std::size_t>(r)][call].enter);
}

}  // namespace

std::vector<MessageTimes> partner_times(const engine::Shard& shard, const trace::Matching& m,
                                        engine::Transport& transport) {
  const auto& msgs = m.messages;
  std::vector<MessageTimes> times(msgs.size());
  engine::Exchange exchange(transport, shard.partition, kWaitStateChannel);
  // Messages come sorted by (sender, receiver, …): each pair's messages are one run, in the same
  // order on both sides, so a run travels as one record of values in that order.
  for (std::size_t i = 0; i < msgs.size();) {
    std::size_t j = i;
    while (j < msgs.size() && msgs[j].sender == msgs[i].sender && msgs[j].receiver == msgs[i].receiver) ++j;
    const bool sender_here = shard.owned.holds(msgs[i].sender);
    const bool receiver_here = shard.owned.holds(msgs[i].receiver);
    ByteWriter to_receiver, to_sender;
    for (std::size_t k = i; k < j; ++k) {
      const trace::Message& msg = msgs[k];
      if (sender_here) {
        times[k].send_enter = enter(shard, m, msg.sender, msg.send_call);
        times[k].send_event = shard.time(msg.sender, msg.send_event);
        if (!receiver_here) to_receiver.put(times[k].send_enter).put(times[k].send_event);
      }
      if (receiver_here) {
        times[k].post_enter = enter(shard, m, msg.receiver, msg.recv_post_call);
        if (!sender_here) to_sender.put(times[k].post_enter);
      }
    }
    if (sender_here && !receiver_here) exchange.emit(msgs[i].sender, msgs[i].receiver, kFromSender, to_receiver.bytes());
    if (receiver_here && !sender_here) exchange.emit(msgs[i].receiver, msgs[i].sender, kFromReceiver, to_sender.bytes());
    i = j;
  }
  const engine::Inbox inbox = exchange.deliver();
  std::map<std::tuple<Location, Location, std::uint64_t>, std::span<const std::byte>> received;
  for (Location l = shard.owned.first; l < shard.owned.last; ++l)
    for (const engine::ExchangeRecord& r : inbox.of(l)) received[{r.source, l, r.key}] = r.payload;
  for (std::size_t i = 0; i < msgs.size();) {
    std::size_t j = i;
    while (j < msgs.size() && msgs[j].sender == msgs[i].sender && msgs[j].receiver == msgs[i].receiver) ++j;
    const trace::Rank s = msgs[i].sender, r = msgs[i].receiver;
    if (shard.owned.holds(s) != shard.owned.holds(r)) {
      const bool from_sender = shard.owned.holds(r);
      const auto found = received.find({from_sender ? s : r, from_sender ? r : s, from_sender ? kFromSender : kFromReceiver});
      if (found == received.end()) throw std::runtime_error("waitstate: a partner sent no times for its messages");
      ByteReader in(found->second);
      for (std::size_t k = i; k < j; ++k) {
        if (from_sender) {
          times[k].send_enter = in.get<trace::Time>();
          times[k].send_event = in.get<trace::Time>();
        } else {
          times[k].post_enter = in.get<trace::Time>();
        }
      }
    }
    i = j;
  }
  return times;
}

MemberMark later_begin(const MemberMark& a, const MemberMark& b) {
  if (!a.found()) return b;
  if (!b.found()) return a;
  if (a.begin != b.begin) return a.begin > b.begin ? a : b;
  return a.position < b.position ? a : b;
}

CommPositions::CommPositions(const engine::Shard& shard) {
  const auto& comms = shard.defs.comms;
  position_.resize(comms.size());
  for (std::size_t c = 0; c < comms.size(); ++c) {
    for (std::size_t p = 0; p < comms[c].members.size(); ++p)
      if (shard.owned.holds(comms[c].members[p])) position_[c].emplace_back(comms[c].members[p], static_cast<std::uint32_t>(p));
    std::sort(position_[c].begin(), position_[c].end());
  }
}

std::uint32_t CommPositions::of(trace::CommId comm, trace::Rank rank) const {
  const auto& list = position_.at(comm);
  const auto it = std::lower_bound(list.begin(), list.end(), std::pair<trace::Rank, std::uint32_t>{rank, 0});
  return it != list.end() && it->first == rank ? it->second : MemberMark::kNowhere;
}

CollectiveSummaries collective_summaries(const engine::Shard& shard, const trace::Matching& m,
                                         engine::Transport& transport) {
  const CommPositions positions(shard);
  CollectiveSummaries out;
  out.scan_first.reserve(m.collectives.size() + 1);
  std::uint64_t scan_total = 0;
  for (const trace::CollInstance& inst : m.collectives) {
    out.scan_first.push_back(scan_total);
    if (trace::is_scan(inst.op)) scan_total += shard.defs.comms[inst.comm].members.size();
  }
  out.scan_first.push_back(scan_total);
  CollectiveSummary identity;
  identity.min_end = std::numeric_limits<trace::Time>::infinity();
  // One fold along the processes: each adds its owned members (exact maxima and minima).
  const Bytes combined = transport.chain(
      ByteWriter()
          .put(std::vector<CollectiveSummary>(m.collectives.size(), identity))
          .put(std::vector<MemberMark>(static_cast<std::size_t>(scan_total)))
          .bytes(),
      [&](Bytes in) {
        ByteReader reader(in);
        auto summaries = reader.get_vector<CollectiveSummary>();
        auto scans = reader.get_vector<MemberMark>();
        for (std::size_t k = 0; k < m.collectives.size(); ++k) {
          const trace::CollInstance& inst = m.collectives[k];
          CollectiveSummary& s = summaries[k];
          for (std::uint32_t i = inst.first; i < inst.first + inst.count; ++i) {
            const trace::CollMember& mem = m.members[i];
            const MemberMark mark{mem.begin, positions.of(inst.comm, mem.rank), mem.rank, mem.call};
            s.latest = later_begin(s.latest, mark);
            s.min_end = std::min(s.min_end, mem.end);
            if (mem.rank == inst.root) s.root = mark;
            else s.latest_nonroot = later_begin(s.latest_nonroot, mark);
            if (trace::is_scan(inst.op)) scans[static_cast<std::size_t>(out.scan_first[k] + mark.position)] = mark;
          }
        }
        return ByteWriter().put(summaries).put(scans).bytes();
      });
  ByteReader reader(combined);
  out.of = reader.get_vector<CollectiveSummary>();
  out.scan_members = reader.get_vector<MemberMark>();
  return out;
}

}  // namespace waitlab::analysis
