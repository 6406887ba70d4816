// waitlab::sim (internal) — turns a models::PlatformDesc into SimGrid zones, hosts and links.
//
// Promise: build_platform() creates the whole platform in the running SimGrid engine (it
// must be the first zone created, after the network model is configured) and returns the
// host and core speed of every rank, following models::place(). Flat cluster: one star
// zone, one host of `cores` cores per node on its own split-duplex link, plus a loopback
// link when it has a bandwidth. Hierarchical: one single-core host per core; a star zone
// per socket (core links, a router as gateway), a star zone per node (socket links, and a
// router as the node's gateway carrying the shared NIC link), all inside a flat star, fat
// tree, torus or dragonfly network (SMPI-NOTES.md §4). Xml: the user's file; rank r runs on
// the r-th host in natural name order ("node-2" before "node-10").
// Bad input (missing file, too few hosts, a topology SimGrid rejects) throws InputError.
#pragma once

#include <string>
#include <vector>

#include "models/platform.hpp"

namespace simgrid::s4u {
class Engine;
class Host;
}  // namespace simgrid::s4u

namespace waitlab::sim::detail {

struct BuiltPlatform {
  std::vector<simgrid::s4u::Host*> rank_host;  // host of each rank
  std::vector<double> rank_speed;              // flop/s of the core each rank runs on
  std::string description;                     // one line, recorded in the trace attributes
};

BuiltPlatform build_platform(simgrid::s4u::Engine& engine, const models::PlatformDesc& desc, int ranks);

// One-line human description of a platform (no SimGrid needed).
std::string describe_platform(const models::PlatformDesc& desc);

// "a2" < "a10": compares embedded decimal numbers by value.
bool natural_less(const std::string& a, const std::string& b);

}  // namespace waitlab::sim::detail
