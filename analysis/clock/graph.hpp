// waitlab::clock — the happened-before structure clock correction works on, per shard (internal
// to analysis/clock; docs/clock-correction.md).
//
// Promise: build_graph — called by every process, also those owning no location — gives each
// owned collective member the role Matching::build's whole-trace graph gives it (releases: its
// begin matters to an end; constrained: its end follows begins), and each instance its
// dependency and its number of releasing members, combined over the processes exactly (integer
// sums, maxima, bitwise or); per owned rank, the events that release or carry a constraint in
// event order. fold_slots combines one value per instance (or per communicator position, for a
// Prefix instance) over the processes with an exact minimum or maximum. message_partner_times
// gives each owned side of a message the other side's time. All are the same for any partition
// and delivery order (rules D1–D5 of docs/plans/issue-32-replay-engine.md).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <vector>

#include "analysis/engine/shard.hpp"
#include "analysis/engine/transport.hpp"
#include "analysis/trace/match.hpp"

namespace waitlab::clock {

using engine::Location;
using trace::Rank;
using trace::Time;

inline constexpr engine::Channel kClockChannel = 0xFE50;  // the exchange rounds of clock correction
inline constexpr std::uint32_t kNone = 0xffffffffu;
inline constexpr double kNoTime = -std::numeric_limits<double>::infinity();
inline constexpr double kNever = std::numeric_limits<double>::infinity();

// The owned locations' events, writable: the shard views them, and clock correction changes them
// in place (the storage the shard views must not be const: a Shard::of copy, or Shard::whole or
// Shard::of_part of a trace or part the caller may change).
class Owned {
 public:
  explicit Owned(const engine::Shard& shard);
  trace::Location& operator[](Rank r) const { return locations_[static_cast<std::size_t>(r - range.first)]; }
  std::vector<trace::Event>& events(Rank r) const { return (*this)[r].events; }
  engine::LocationRange range;

 private:
  std::span<trace::Location> locations_;
};

// Whose begins a member's end has to follow. A member's own begin counts too (Scalasca's rule:
// with l_min > 0 it keeps a collective at least l_min long).
enum class Dep : std::uint8_t {
  None,      // no constraint (MPI_Finalize, MPI_Alltoallv, a communicator of one)
  All,       // every member (barrier, allreduce, alltoall, allgather, reduce_scatter, init)
  FromRoot,  // non-root members follow the root (bcast, scatter)
  ToRoot,    // the root follows every member (reduce, gather)
  Prefix,    // member i follows members 0..i (scan, exscan)
};

struct Graph {
  enum Kind : std::uint8_t { kSend, kRecv, kBegin, kEnd };
  struct Point {
    std::uint32_t event;
    std::uint32_t id;  // message (kSend, kRecv) or member (kBegin, kEnd), in the shard's matching
    Kind kind;
  };
  static constexpr std::uint8_t kReleases = 1;     // the member's begin matters to an end
  static constexpr std::uint8_t kConstrained = 2;  // the member's end follows begins

  // Per owned member.
  std::vector<std::uint32_t> inst;      // its instance
  std::vector<std::uint32_t> position;  // its rank in the communicator
  std::vector<std::uint8_t> role;       // kReleases | kConstrained
  // Per instance (every instance of the trace).
  std::vector<Dep> dep;
  std::vector<std::uint32_t> releasers;   // members that release, over all processes
  std::vector<std::uint32_t> size;        // members (the communicator's size)
  std::vector<std::uint64_t> slot_first;  // fold_slots' slots: one per instance, one per member for Prefix
  std::vector<std::uint8_t> prefix_releases;  // per Prefix slot: the member at that position releases
  // Per owned rank (from owned.first), by event.
  std::vector<std::vector<Point>> points;
  // Per message of the shard's matching: its index among the messages of its (sender, receiver).
  std::vector<std::uint32_t> pair_index;
  bool any_prefix = false;

  bool releases(std::uint32_t k) const { return (role[k] & kReleases) != 0; }
  bool constrained(std::uint32_t k) const { return (role[k] & kConstrained) != 0; }
  std::uint64_t slots() const { return slot_first.back(); }
};

Graph build_graph(const engine::Shard& shard, const Owned& owned, engine::Transport& transport);

// One value per slot (Graph::slot_first) over all processes: every process starts from `initial`
// in every slot, `fill` puts its owned members' values in with `combine`, and the processes'
// vectors are combined slot by slot with `combine` (an exact minimum or maximum: the order in
// which they meet cannot show). fill(member k, put) calls put(slot, value) for any slots.
using SlotPut = std::function<void(std::uint64_t slot, double value)>;
std::vector<double> fold_slots(const engine::Shard& shard, const Graph& g, engine::Transport& transport,
                               double initial, double (*combine)(double, double),
                               const std::function<void(std::uint32_t k, const SlotPut& put)>& fill);

// For each message of the shard's matching: `time(message)` of its owned side at the other side
// (the receiver gets the sender's, `to_receiver`, or the sender the receiver's): one exchange round,
// every process. Entries of messages whose other side is not owned here are what was received;
// where both sides are owned, time(message) itself.
std::vector<Time> message_partner_times(const engine::Shard& shard, engine::Transport& transport,
                                        bool to_receiver,
                                        const std::function<Time(std::uint32_t message)>& time);

}  // namespace waitlab::clock
