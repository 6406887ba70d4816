// waitlab::engine — the matching of a shard (plan §6.4), on any number of processes.
//
// Promise: match_shard — called by every process, also those owning no location — walks the
// shard's owned locations with the serial matcher's own walk (trace::MatchWalk) on a call-path
// tree of its own, then gives every call path its global id: the trees are gathered to process
// 0 in process (hence location) order and merged there node by node in first-appearance order,
// which is exactly the order in which Matching::build's location-major walk meets them (rule
// D6), and process 0 broadcasts the merged tree with each process's map from local to global
// ids. Afterwards shard.matching.paths is the global tree (on every process) and the owned
// locations' calls and path_after carry global ids: the same as Matching::build's on the whole
// trace, for every partition and every delivery order. Messages (match_messages below) are
// matched too, and collectives (match_collectives below). shard.matching.unmatched holds the
// global totals (integer sums over the processes). A shard matched before (the clock correction
// matches it) is matched anew: what it held is replaced.
#pragma once

#include "analysis/engine/shard.hpp"
#include "analysis/engine/transport.hpp"

namespace waitlab::engine {

inline constexpr Channel kMatchingChannel = 0xFE00;

void match_shard(Shard& shard, Transport& transport);

// Point-to-point messages from what `walk` kept of the owned locations' sends and receives (one
// exchange round, every process): each location sends each peer location, per channel in
// posting order, its sends to it and its receives from it (no ids travel: the k-th send of a
// channel matches its k-th receive, as in Matching::build). shard.matching.messages gets every
// message an owned location sends or receives, in Matching::build's order (by sender,
// receiver, communicator, tag, posting order); shard.matching.unmatched (still this process's)
// counts the sends and receives no message took, each once: by the receiver, or by the sender
// when the destination is no location.
void match_messages(Shard& shard, Transport& transport, const trace::MatchWalk& walk);

// Collective instances from what `walk` kept of the owned locations' collective calls: the k-th
// call of every member of a communicator forms instance k, for k below the fewest calls of any
// member, and only if the members' operations agree (what Matching::build does; the counts and the
// agreement are combined over the processes exactly: minima and maxima of integers).
// shard.matching.collectives holds every instance of the trace in Matching::build's order (by
// communicator, then sequence number) with its operation and root — on every process — and
// shard.matching.members, for each, only the members this shard owns, in communicator order
// (inst.first, inst.count index them: count is the owned members', not the communicator's size).
// shard.matching.unmatched (still this process's) counts each owned rank's calls no instance
// took, and each disagreeing instance's calls once (on process 0).
void match_collectives(Shard& shard, Transport& transport, const trace::MatchWalk& walk);

// The call-path merge on its own: each process's local tree in, the global tree out on every
// process, and `local_to_global` (one entry per local node) for this process.
trace::CallPaths merge_call_paths(const trace::CallPaths& local, Transport& transport,
                                  std::vector<trace::CallPathId>& local_to_global);

}  // namespace waitlab::engine
