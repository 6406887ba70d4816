// waitlab::models — platform descriptions and rank placement (pure data, no SimGrid).
//
// Promise: a PlatformDesc says what machine to model — a flat cluster, a hierarchy of
// nodes × sockets × cores with per-level links and a shared NIC per node inside a
// flat/fat-tree/torus/dragonfly network (SMPI-NOTES.md §4), or a user's SimGrid XML
// file. `sim` turns it into SimGrid zones. place() maps ranks to cores (block or
// round-robin) so that perturbations can refer to nodes and sockets.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/spec.hpp"

namespace waitlab::models {

struct LinkSpec {
  double bandwidth = 0;  // bytes/s
  double latency = 0;    // s
};

enum class PlatformKind { Cluster, Hierarchical, Xml };
enum class Topology { Flat, FatTree, Torus, Dragonfly };
enum class PlacementKind { Block, RoundRobin };

struct PlatformDesc {
  PlatformKind kind = PlatformKind::Cluster;
  int nodes = 1;
  int sockets = 1;        // per node (Hierarchical)
  int cores = 1;          // per socket (Hierarchical) or per node (Cluster)
  double speed = 1e9;     // flop/s per core
  LinkSpec core_link;     // Hierarchical: core <-> socket
  LinkSpec socket_link;   // Hierarchical: socket <-> node router
  LinkSpec nic_link;      // Hierarchical: node router <-> network (shared NIC)
  LinkSpec network_link;  // Cluster: node link; Hierarchical: links of the fat tree/torus/dragonfly
  LinkSpec loopback;      // Cluster: same-node traffic (bandwidth 0 = none)
  Topology topology = Topology::Flat;
  std::string topo_parameters;  // SimGrid syntax, e.g. "2;4,4;1,2;1,2" (fat tree), "4,4,4" (torus)
  std::string xml_file;         // Xml
  PlacementKind placement = PlacementKind::Block;

  int cores_per_node() const { return kind == PlatformKind::Hierarchical ? sockets * cores : cores; }
  int total_cores() const { return nodes * cores_per_node(); }  // 0 meaning unknown for Xml
};

// Hard limits (docs/scenarios.md, "Limits"), checked before anything is allocated: the
// engine has run 65,536 ranks; these are 16 times that, and far below what would exhaust the
// memory of a workstation before a check could say why.
inline constexpr int kMaxRanks = 1 << 20;              // ranks of a run
inline constexpr std::int64_t kMaxHosts = 1 << 20;     // SimGrid hosts of a platform (a node, or a core)

// Where one rank runs.
struct Slot {
  int node = 0;
  int socket = 0;
  int core = 0;  // index within the node (0 .. cores_per_node-1)
};

// Rank -> slot for `ranks` ranks. Throws InputError if the platform has fewer cores than ranks
// or there are more than kMaxRanks, before allocating anything (Xml platforms: one slot per
// rank with node = rank, resolved by `sim` against the file's hosts).
std::vector<Slot> place(const PlatformDesc& p, int ranks);

// Builds a PlatformDesc from validated options of the platform spec named `type`
// ("cluster", "hierarchical", "xml"). Throws InputError.
PlatformDesc make_platform(const std::string& type, const Options& opts);

// Registers the platform specs (called by the registry).
void register_platforms(Registry& r);

}  // namespace waitlab::models
