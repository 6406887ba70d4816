// waitlab::analysis — what the wait states of a shard need from the partners of its calls
// (issue 32: the forward exchange of the replay engine; plan §2 and §6.6).
//
// Promise: partner_times gives, for every message of the shard's matching, the partner times the
// wait-state rules read: the send call's Enter and the send event's time (from the sender) and the
// receive-posting call's Enter (from the receiver) — read locally where the shard owns that side,
// received in one exchange round where another process does (8 + 8 bytes per message from the
// sender, 8 from the receiver). collective_summaries combines, for every collective instance, what
// its members' rules need of the other members: the member that began last (first such in
// communicator order) with its call, the earliest end, the root's begin and call, the last
// non-root to begin, and for scans every member's begin — by exact maxima and minima only, so the
// result is the same bits on every process for every partition (rules D1, D5). Every process
// calls both (collectives).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "analysis/engine/shard.hpp"
#include "analysis/engine/transport.hpp"
#include "analysis/trace/match.hpp"

namespace waitlab::analysis {

inline constexpr engine::Channel kWaitStateChannel = 0xFE10;

struct MessageTimes {
  trace::Time send_enter = 0;  // Enter of the send call (sender)
  trace::Time send_event = 0;  // time of the Send / IsendStart event (sender)
  trace::Time post_enter = 0;  // Enter of the call that posted the receive (receiver)
};

std::vector<MessageTimes> partner_times(const engine::Shard& shard, const trace::Matching& m,
                                        engine::Transport& transport);

// A member as the rules name it: its begin, its place in the communicator, its rank and call.
struct MemberMark {
  trace::Time begin = 0;
  std::uint32_t position = kNowhere;  // kNowhere: no such member
  trace::Rank rank = trace::kNoRank;
  std::uint32_t call = 0;
  static constexpr std::uint32_t kNowhere = 0xFFFFFFFF;
  bool found() const { return position != kNowhere; }
};

// The later-beginning of two marks; on equal begins the earlier in communicator order.
MemberMark later_begin(const MemberMark& a, const MemberMark& b);

struct CollectiveSummary {
  MemberMark latest;          // began last (first such in communicator order)
  MemberMark latest_nonroot;  // began last of the members but the root
  MemberMark root;            // the root (not found: no root, or the root is no member)
  trace::Time min_end = 0;    // the earliest end
};

struct CollectiveSummaries {
  std::vector<CollectiveSummary> of;  // per instance of m.collectives
  // Scans: the members of instance k by communicator position are
  // scan_members[scan_first[k] ...] (only instances whose operation is a scan have any).
  std::vector<std::uint64_t> scan_first;
  std::vector<MemberMark> scan_members;
};

CollectiveSummaries collective_summaries(const engine::Shard& shard, const trace::Matching& m,
                                         engine::Transport& transport);

// Each owned member's position in its communicator (memory: the owned memberships).
class CommPositions {
 public:
  explicit CommPositions(const engine::Shard& shard);
  std::uint32_t of(trace::CommId comm, trace::Rank rank) const;  // MemberMark::kNowhere: no member

 private:
  std::vector<std::vector<std::pair<trace::Rank, std::uint32_t>>> position_;  // per communicator, sorted
};

}  // namespace waitlab::analysis
