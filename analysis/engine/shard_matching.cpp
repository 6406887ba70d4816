#include "analysis/engine/shard_matching.hpp"

#include <span>

#include "analysis/engine/bytes.hpp"

namespace waitlab::engine {

namespace {

using trace::CallPathId;
using trace::CallPaths;
using trace::kNoCallPath;

std::vector<CallPaths::Node> nodes_of(const CallPaths& paths) {
  std::vector<CallPaths::Node> nodes;
  nodes.reserve(paths.size());
  for (CallPathId i = 0; i < paths.size(); ++i) nodes.push_back(paths.node(i));
  return nodes;
}

// Adds `nodes` (a tree whose parents come before their children) to `into`: the global id of
// each node, in order.
std::vector<CallPathId> add_tree(const std::vector<CallPaths::Node>& nodes, CallPaths& into) {
  std::vector<CallPathId> ids;
  ids.reserve(nodes.size());
  for (const CallPaths::Node& n : nodes)
    ids.push_back(into.child(n.parent == kNoCallPath ? kNoCallPath : ids.at(n.parent), n.region));
  return ids;
}

// Process 0's part: the merged tree, then every process's map, in process order.
Bytes merged_trees(const std::vector<Bytes>& trees) {
  CallPaths global;
  std::vector<std::vector<CallPathId>> maps;
  for (const Bytes& tree : trees) {
    ByteReader in(tree);
    maps.push_back(add_tree(in.get_vector<CallPaths::Node>(), global));
  }
  ByteWriter out;
  out.put(nodes_of(global));
  for (const auto& map : maps) out.put(map);
  return std::move(out).bytes();
}

CallPathId renumbered(CallPathId local, const std::vector<CallPathId>& local_to_global) {
  return local == kNoCallPath ? kNoCallPath : local_to_global.at(local);
}

}  // namespace

CallPaths merge_call_paths(const CallPaths& local, Transport& transport, std::vector<CallPathId>& local_to_global) {
  const std::vector<Bytes> trees = transport.gather(ByteWriter().put(nodes_of(local)).bytes());
  const Bytes merged = transport.broadcast(transport.self() == 0 ? merged_trees(trees) : Bytes{});
  ByteReader in(merged);
  CallPaths global;
  add_tree(in.get_vector<CallPaths::Node>(), global);
  for (int p = 0; p < transport.size(); ++p) {
    auto map = in.get_vector<CallPathId>();
    if (p == transport.self()) local_to_global = std::move(map);
  }
  return global;
}

void match_shard(Shard& shard, Transport& transport) {
  shard.matching = trace::Matching{};
  trace::Matching& m = shard.matching;
  trace::MatchWalk walk(shard.defs, static_cast<std::size_t>(shard.ranks), m);
  walk.walk(shard.owned.first, shard.locations);
  match_messages(shard, transport, walk);
  match_collectives(shard, transport, walk);
  trace::Unmatched& u = m.unmatched;
  for (std::uint64_t* count : {&u.sends, &u.receives, &u.requests, &u.collective_calls, &u.unbalanced_regions,
                               &u.stray_events})
    *count = transport.sum(*count);
  std::vector<CallPathId> to_global;
  m.paths = merge_call_paths(m.paths, transport, to_global);
  for (Location l = shard.owned.first; l < shard.owned.last; ++l) {
    for (trace::Call& c : m.calls[static_cast<std::size_t>(l)]) c.path = renumbered(c.path, to_global);
    for (CallPathId& p : m.path_after[static_cast<std::size_t>(l)]) p = renumbered(p, to_global);
  }
  shard.matched = true;
}

}  // namespace waitlab::engine
