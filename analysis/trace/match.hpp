// waitlab::trace — the one matcher every analysis uses (ALGORITHMS.md §1).
//
// Promise: Matching::build(trace) walks each location once and produces
//   - the call-path tree (one per trace) and, per location, the call path active after
//     every event (so exclusive time per call path over any event range is a sum);
//   - per location, every MPI call (a region instance whose region is an MPI function)
//     with its Enter/Leave event indices and call path;
//   - every point-to-point message, matched by (source, destination, communicator, tag)
//     in FIFO order of posting (MPI's non-overtaking rule), blocking or through requests
//     completed by MPI_Wait/MPI_Waitall, with the calls that post and complete each side and
//     the events that send and complete the receive (trace I/O and clock correction move or
//     write those events);
//   - every collective instance (the n-th collective call on a communicator, on each
//     member), MPI_Init and MPI_Finalize included as instances on MPI_COMM_WORLD.
// What does not match (a send never received, a request never completed, a member that
// calls fewer collectives, members that disagree on the operation) is counted in
// Unmatched and left out; analyses run on what matches. Nothing here throws on a
// malformed trace except for references that read_wlt already guarantees.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "analysis/trace/trace.hpp"

namespace waitlab::trace {

using CallPathId = std::uint32_t;
inline constexpr CallPathId kNoCallPath = 0xffffffffu;

// The call-path tree: a call path is a region under a parent call path.
class CallPaths {
 public:
  struct Node {
    CallPathId parent = kNoCallPath;
    RegionId region = 0;
  };
  CallPathId child(CallPathId parent, RegionId region);  // finds or adds
  const Node& node(CallPathId id) const { return nodes_[id]; }
  std::size_t size() const { return nodes_.size(); }
  // "main/compute/MPI_Recv"
  std::string name(CallPathId id, const Definitions& defs) const;

 private:
  std::vector<Node> nodes_;
  std::unordered_map<std::uint64_t, CallPathId> index_;
};

// One MPI call on one location.
struct Call {
  std::uint32_t enter = 0;  // event index of its Enter
  std::uint32_t leave = 0;  // event index of its Leave
  CallPathId path = kNoCallPath;
  MpiOp op = MpiOp::None;
};

// One matched point-to-point message. Calls are indices into Matching::calls[rank].
struct Message {
  Rank sender = 0;
  Rank receiver = 0;
  std::uint32_t send_call = 0;       // holds Send / IsendStart
  std::uint32_t send_done_call = 0;  // completes the send (== send_call when blocking)
  std::uint32_t recv_post_call = 0;  // holds Recv / IrecvPost
  std::uint32_t recv_done_call = 0;  // holds Recv / IrecvComplete
  std::uint32_t send_event = 0;      // event index of the Send / IsendStart (sender)
  std::uint32_t recv_event = 0;      // event index of the Recv / IrecvComplete (receiver)
};

// One rank's part in a collective instance.
struct CollMember {
  Rank rank = 0;
  std::uint32_t call = 0;  // index into Matching::calls[rank]
  Time begin = 0;          // CollBegin (Enter for MPI_Init/MPI_Finalize)
  Time end = 0;            // CollEnd (Leave for MPI_Init/MPI_Finalize)
  std::uint32_t begin_event = 0;  // event indices of those two
  std::uint32_t end_event = 0;
};

struct CollInstance {
  CommId comm = kCommWorld;
  MpiOp op = MpiOp::None;
  Rank root = kNoRank;      // global rank of the root, kNoRank if none
  std::uint32_t first = 0;  // members[first .. first+count) in communicator rank order
  std::uint32_t count = 0;
};

struct Unmatched {
  std::uint64_t sends = 0;              // sends no receive matched
  std::uint64_t receives = 0;           // receives no send matched
  std::uint64_t requests = 0;           // completions of unknown requests, requests never completed
  std::uint64_t collective_calls = 0;   // calls left over or in an instance whose members disagree
  std::uint64_t unbalanced_regions = 0; // Leave without Enter, Enter never left
  std::uint64_t stray_events = 0;       // communication events outside any MPI call
  std::uint64_t total() const {
    return sends + receives + requests + collective_calls + unbalanced_regions + stray_events;
  }
};

struct Matching {
  CallPaths paths;
  std::vector<std::vector<Call>> calls;             // per location, in program order
  std::vector<std::vector<CallPathId>> path_after;  // per location, per event
  std::vector<Message> messages;
  std::vector<CollInstance> collectives;  // in order of (communicator, sequence number)
  std::vector<CollMember> members;
  Unmatched unmatched;

  static Matching build(const Trace& trace);

  // Time of the Enter / Leave event of a call.
  Time enter(const Trace& t, Rank r, std::uint32_t call) const {
    return t.locations[r].events[calls[r][call].enter].time;
  }
  Time leave(const Trace& t, Rank r, std::uint32_t call) const {
    return t.locations[r].events[calls[r][call].leave].time;
  }
  // Bytes held by the matching (for the memory figures of the benchmark).
  std::size_t memory_bytes() const;
};

// A send or a receive before matching: its channel, its place in posting order, its calls.
struct MessageSide {
  Rank src = 0;
  Rank dst = 0;
  CommId comm = 0;
  std::int32_t tag = 0;
  std::uint32_t order = 0;      // event index of Send/IsendStart, or Recv/IrecvPost
  std::uint32_t event = 0;      // event index of Send/IsendStart, or Recv/IrecvComplete
  std::uint32_t call = 0;       // posting call
  std::uint32_t done_call = 0;  // completing call (kNoCallPath: an isend never completed)
  auto key() const { return std::tie(src, dst, comm, tag, order); }
  bool same_channel(const MessageSide& o) const {
    return src == o.src && dst == o.dst && comm == o.comm && tag == o.tag;
  }
};

// A collective call (or MPI_Init/MPI_Finalize) of one rank before matching.
struct CollectiveCall {
  std::uint32_t call = 0;  // index into Matching::calls[rank]
  MpiOp op = MpiOp::None;
  Rank root = kNoRank;  // as the rank's CollEnd names it
  Time begin = 0;
  Time end = 0;
  std::uint32_t begin_event = 0;
  std::uint32_t end_event = 0;
};

// Point-to-point matching over sends and receives each sorted by key(): the k-th send on a
// channel matches the k-th receive posted on it (`matched` gets each pair, in key order); the
// excess on either side is counted in `unmatched`.
void pair_sides(std::span<const MessageSide> sends, std::span<const MessageSide> recvs, Unmatched& unmatched,
                const std::function<void(const MessageSide& send, const MessageSide& receive)>& matched);

// The two halves of Matching::build, open to the replay engine's shards (issue 32), which walk
// only the locations they own: walk() records each location's calls and call path after every
// event in m (whose per-location arrays the constructor sizes to `ranks`), adding the call
// paths it meets to m.paths in first-appearance order, and keeps the locations' sends,
// receives and collective calls; match() matches what was walked into m's messages and
// collectives. Matching::build walks every location at once and matches.
class MatchWalk {
 public:
  MatchWalk(const Definitions& defs, std::size_t ranks, Matching& m);
  ~MatchWalk();
  MatchWalk(const MatchWalk&) = delete;
  MatchWalk& operator=(const MatchWalk&) = delete;
  // Walks `locations`, which are the ranks first, first + 1, …, in that order.
  void walk(Rank first, std::span<const Location> locations);
  // What the walk kept of the walked locations' sends (never-completed isends included) and
  // receives, in walk order (until match()).
  const std::vector<MessageSide>& sends() const;
  const std::vector<MessageSide>& receives() const;
  // The walked locations' collective calls, per communicator, per rank, in program order
  // (until match()).
  const std::vector<std::vector<std::vector<CollectiveCall>>>& collective_calls() const;
  void match();

 private:
  struct State;
  const Definitions& defs_;
  std::size_t ranks_;
  Matching& m_;
  std::unique_ptr<State> state_;
};

}  // namespace waitlab::trace
