#include "models/platform.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>

#include "util/error.hpp"

namespace waitlab::models {

namespace {

using units::Quantity;
constexpr std::int64_t kMaxInt = std::numeric_limits<std::int32_t>::max();
constexpr std::int64_t kSaturatedCount = std::int64_t{1} << 40;
constexpr std::int64_t kMaxNetworkElements = std::int64_t{1} << 22;
// Building a hierarchical platform (sim/platform_build.cpp), SimGrid 3.32 looks every host and
// link it creates up by name in every zone made so far (NetZoneImpl::get_host_by_name_or_null
// and get_link_by_name_or_null walk the whole tree of zones), so the build costs about
// zones × (hosts + links + routers) lookups: a node is 2 + sockets zones. Measured with 2 ranks
// (the rest of the run is nothing): 256 x 8 x 8 cores, 9.6e7 lookups, 9.5 s; 1024 x 2 x 16,
// 3.0e8, 43 s; 4096 x 1 x 1, 3.5e8, 12.5 s; 16384 x 8 x 8, within the limit on hosts, 3.9e11:
// days. At this limit, about 20 s (a cluster is one zone: its build grows with its hosts only).
constexpr std::int64_t kMaxBuildLookups = std::int64_t{1} << 27;

// "1099511627776 or more" for a saturated count.
std::string count_text(std::int64_t n) {
  return n >= kSaturatedCount ? std::to_string(kSaturatedCount) + " or more" : std::to_string(n);
}

OptionSpec placement_option() {
  return choice_option("placement", {"block", "round-robin"}, "block",
                       "rank -> core mapping: block fills node 0's cores first; round-robin puts rank r on "
                       "node r mod nodes");
}

// The platform checks on top of OptionReader's: counts, links, placement.
class Reader : public OptionReader {
 public:
  Reader(const Options& o, std::string type) : OptionReader(o, SpecKind::Platform, std::move(type)) {}
  int count(std::string_view name) const {
    const double v = number(name);
    if (!std::isfinite(v) || v != std::floor(v) || v < 1 || v > static_cast<double>(kMaxInt))
      fail(name, "must be a whole number between 1 and " + std::to_string(kMaxInt) + ", got " + shown(v));
    return static_cast<int>(v);
  }
  // Options "<prefix>_bandwidth" and "<prefix>_latency" ("bandwidth", "latency" without prefix).
  LinkSpec link(const std::string& prefix) const {
    const std::string p = prefix.empty() ? "" : prefix + "_";
    return {bandwidth(p + "bandwidth", false), non_negative(p + "latency", Quantity::Duration)};
  }
  // A bandwidth of at least 1 byte/s (0 too when `zero_allowed`): 2 GiB over 1e-300 Bps would
  // take an infinite time.
  double bandwidth(const std::string& name, bool zero_allowed) const {
    const double v = zero_allowed ? non_negative(name, Quantity::Bandwidth) : positive(name, Quantity::Bandwidth);
    if (v != 0 && v < 1)
      fail(name, "must be at least 1Bps (one byte per second), got " + shown(v, Quantity::Bandwidth));
    return v;
  }
  // A core speed of at least 1 flop/s, for the same reason.
  double speed() const {
    const double v = positive("speed", Quantity::Speed);
    if (v < 1) fail("speed", "must be at least 1f (one flop per second), got " + shown(v, Quantity::Speed));
    return v;
  }
  PlacementKind placement() const {
    return choice("placement") == "round-robin" ? PlacementKind::RoundRobin : PlacementKind::Block;
  }
};

// Positive integers of one SimGrid topology field ("4,4" or "2"), each of at most nine digits:
// digits are checked before they are added up, so a 30-digit field cannot overflow. The first
// bad item goes to `bad` and `ok` becomes false.
std::vector<std::int64_t> fields(std::string_view s, bool& ok, std::string& bad) {
  std::vector<std::int64_t> out;
  ok = true;
  bad.clear();
  while (true) {
    const auto comma = s.find(',');
    const auto item = s.substr(0, comma);
    std::int64_t v = 0;
    ok = !item.empty() && item.size() <= 9;
    for (std::size_t i = 0; ok && i < item.size(); ++i) {
      if (item[i] < '0' || item[i] > '9') ok = false;
      else v = v * 10 + (item[i] - '0');
    }
    if (!ok || v < 1) {
      ok = false;
      bad = std::string(item);
      return out;
    }
    out.push_back(v);
    if (comma == std::string_view::npos) break;
    s = s.substr(comma + 1);
  }
  return out;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  while (true) {
    const auto p = s.find(sep);
    out.push_back(s.substr(0, p));
    if (p == std::string_view::npos) break;
    s = s.substr(p + 1);
  }
  return out;
}

// a * b, or kSaturated when it would exceed it (the operands are >= 0).
constexpr std::int64_t kSaturated = kSaturatedCount;
std::int64_t mul_sat(std::int64_t a, std::int64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > kSaturated / b ? kSaturated : std::min(a * b, kSaturated);
}
std::int64_t add_sat(std::int64_t a, std::int64_t b) {
  return std::min(a + b, kSaturated);
}

// The shape of SimGrid's topo_parameters: its leaves (nodes) and the switches, routers and
// links SimGrid would create for it (saturated at kSaturated), or an explanation in `why`.
struct TopologySize {
  std::int64_t leaves = -1;  // -1: not a valid description
  std::int64_t elements = 0;
};

TopologySize topology_size(Topology t, std::string_view params, std::string& why) {
  TopologySize size;
  bool ok = true;
  // A field that is not a list of whole numbers from 1 to 999999999 says so first.
  const auto field = [&](std::string_view f) {
    std::string bad;
    auto v = fields(f, ok, bad);
    if (!ok)
      why = (bad.empty() ? std::string("an empty item") : "'" + bad + "' is not a whole number from 1 to 999999999") +
            "; " + why;
    return v;
  };
  if (t == Topology::FatTree) {
    why =
        "a fat tree is 'levels;down-links per level;up-links per level;parallel links per level', e.g. "
        "'2;4,4;1,2;1,2' (16 nodes)";
    const auto parts = split(params, ';');
    if (parts.size() != 4) return size;
    const auto levels = field(parts[0]);
    if (!ok || levels.size() != 1) return size;
    std::vector<std::int64_t> f[4];
    for (std::size_t i = 1; i < 4; ++i) {
      f[i] = field(parts[i]);
      if (!ok || static_cast<std::int64_t>(f[i].size()) != levels[0]) return size;
    }
    // Level 0 holds the nodes (the product of the down-links); level l holds
    // prod_{i>l} down_i x prod_{i<=l} up_i switches, linked to level l-1 by up_l x parallel_l
    // links per element of level l-1.
    const std::size_t L = f[1].size();
    std::int64_t leaves = 1;
    for (auto d : f[1]) leaves = mul_sat(leaves, d);
    std::int64_t below = leaves, elements = leaves;
    for (std::size_t l = 0; l < L; ++l) {
      std::int64_t here = 1;
      for (std::size_t i = l + 1; i < L; ++i) here = mul_sat(here, f[1][i]);
      for (std::size_t i = 0; i <= l; ++i) here = mul_sat(here, f[2][i]);
      elements = add_sat(elements, add_sat(here, mul_sat(below, mul_sat(f[2][l], f[3][l]))));
      below = here;
    }
    size.leaves = leaves;
    size.elements = elements;
  } else if (t == Topology::Torus) {
    why = "a torus is its extents 'X,Y,Z' (any number of dimensions), e.g. '4,4,4' (64 nodes)";
    const auto f = field(params);
    if (!ok) return size;
    std::int64_t n = 1;
    for (auto v : f) n = mul_sat(n, v);
    size.leaves = n;
    size.elements = mul_sat(n, static_cast<std::int64_t>(f.size()) + 1);  // nodes and one link per dimension
  } else if (t == Topology::Dragonfly) {
    why =
        "a dragonfly is 'groups,links;chassis,links;routers,links;nodes per router', e.g. '3,4;4,3;5,1;2' "
        "(120 nodes)";
    const auto parts = split(params, ';');
    if (parts.size() != 4) return size;
    std::vector<std::int64_t> f[4];
    for (std::size_t i = 0; i < 4; ++i) {
      f[i] = field(parts[i]);
      if (!ok || f[i].size() != (i < 3 ? 2u : 1u)) return size;
    }
    const std::int64_t g = f[0][0], c = f[1][0], r = f[2][0];
    const std::int64_t routers = mul_sat(mul_sat(g, c), r);
    size.leaves = mul_sat(routers, f[3][0]);
    // Routers, nodes, and the links: all-to-all inside a chassis, between the chassis of a
    // group, and between groups, each bundle `links` wide.
    std::int64_t links = mul_sat(mul_sat(routers, r), f[2][1]);
    links = add_sat(links, mul_sat(mul_sat(routers, c), f[1][1]));
    links = add_sat(links, mul_sat(mul_sat(g, g), f[0][1]));
    size.elements = add_sat(add_sat(routers, size.leaves), links);
  }
  return size;
}

PlatformDesc make_cluster(const Options& o) {
  const Reader rd(o, "cluster");
  PlatformDesc p;
  p.kind = PlatformKind::Cluster;
  p.nodes = rd.count("nodes");
  p.cores = rd.count("cores");
  p.speed = rd.speed();
  p.network_link = rd.link("");
  const double lb = rd.bandwidth("loopback_bandwidth", true);
  p.loopback = {lb, rd.non_negative("loopback_latency", Quantity::Duration)};
  p.placement = rd.placement();
  if (p.nodes > kMaxHosts)
    rd.fail("nodes", "must be at most " + std::to_string(kMaxHosts) + " (waitlab's limit on hosts), got " +
                         std::to_string(p.nodes));
  if (static_cast<std::int64_t>(p.nodes) * p.cores > kMaxInt)
    rd.fail("cores", "nodes x cores = " + std::to_string(static_cast<std::int64_t>(p.nodes) * p.cores) +
                         " is too large (at most " + std::to_string(kMaxInt) + ")");
  return p;
}

PlatformDesc make_hierarchical(const Options& o) {
  const Reader rd(o, "hierarchical");
  PlatformDesc p;
  p.kind = PlatformKind::Hierarchical;
  p.sockets = rd.count("sockets");
  p.cores = rd.count("cores");
  p.speed = rd.speed();
  p.core_link = rd.link("core");
  p.socket_link = rd.link("socket");
  p.nic_link = rd.link("nic");
  p.network_link = rd.link("network");
  p.placement = rd.placement();
  const std::string& topo = o.string("topology");
  p.topology = topo == "fat_tree"    ? Topology::FatTree
               : topo == "torus"     ? Topology::Torus
               : topo == "dragonfly" ? Topology::Dragonfly
                                     : Topology::Flat;
  if (o.has("topo_parameters")) p.topo_parameters = o.string("topo_parameters");
  if (p.topology == Topology::Flat) {
    if (!p.topo_parameters.empty())
      rd.fail("topo_parameters",
              "is only for the fat_tree, torus and dragonfly topologies (topology is flat)");
    if (!o.has("nodes")) rd.fail("nodes", "is required with the flat topology");
    p.nodes = rd.count("nodes");
  } else {
    if (p.topo_parameters.empty())
      rd.fail("topo_parameters", "is required with the " + topo + " topology (e.g. " +
                                     (p.topology == Topology::FatTree ? "'2;4,4;1,2;1,2'"
                                      : p.topology == Topology::Torus ? "'4,4,4'"
                                                                      : "'3,4;4,3;5,1;2'") +
                                     ")");
    std::string why;
    const auto size = topology_size(p.topology, p.topo_parameters, why);
    const auto leaves = size.leaves;
    if (leaves < 1)
      rd.fail("topo_parameters", "'" + p.topo_parameters + "' is not a valid " + topo + ": " + why);
    if (leaves > kMaxHosts)
      rd.fail("topo_parameters", "'" + p.topo_parameters + "' has " + count_text(leaves) + " nodes; at most " +
                                     std::to_string(kMaxHosts) + " (waitlab's limit on hosts)");
    if (size.elements > kMaxNetworkElements)
      rd.fail("topo_parameters", "'" + p.topo_parameters + "' makes " + count_text(size.elements) +
                                     " switches, routers and links; at most " +
                                     std::to_string(kMaxNetworkElements) + " (waitlab's limit)");
    if (o.has("nodes") && rd.count("nodes") != leaves)
      rd.fail("nodes", "the " + topo + " '" + p.topo_parameters + "' has " + std::to_string(leaves) +
                           " nodes, but nodes = " + std::to_string(rd.count("nodes")) +
                           " (leave nodes out to take it from the topology)");
    p.nodes = static_cast<int>(leaves);
  }
  // Every core is a host of its own: nodes x sockets x cores hosts (64-bit: three counts below
  // 2^31 cannot overflow the product of two, and the third is checked against what is left).
  const std::int64_t per_node = static_cast<std::int64_t>(p.sockets) * p.cores;
  const std::string shape =
      std::to_string(p.nodes) + " x " + std::to_string(p.sockets) + " x " + std::to_string(p.cores);
  if (per_node > kMaxHosts || static_cast<std::int64_t>(p.nodes) * per_node > kMaxHosts)
    rd.fail("cores", "nodes x sockets x cores = " + shape + " cores is more than " + std::to_string(kMaxHosts) +
                         " (waitlab's limit on hosts; every core is a host)");
  // What SimGrid builds (sim/platform_build.cpp): per node a zone, a NIC zone with its router
  // and the NIC link; per socket a zone, a router and a link; per core a host and its link;
  // then the network: one uplink per node (flat) or the topology's elements. All counts are
  // below 2^21 here (nodes x sockets x cores <= 2^20, a topology's elements <= 2^22), so
  // their products fit.
  const std::int64_t n = p.nodes, sockets = p.sockets, hosts = n * per_node;
  const std::int64_t zones = n * (sockets + 2) + 1;
  std::int64_t network = n;
  if (p.topology != Topology::Flat) {
    std::string why;
    network = topology_size(p.topology, p.topo_parameters, why).elements;
  }
  const std::int64_t elements = hosts + n * (1 + sockets) /* routers */ + n * (1 + sockets) + hosts /* links */ +
                                network;
  if (zones * elements > kMaxBuildLookups)
    rd.fail(p.topology == Topology::Flat ? "nodes" : "topo_parameters",
            "nodes x sockets x cores = " + shape + " makes " + std::to_string(zones) + " zones and " +
                std::to_string(elements) +
                " hosts, routers and links, and SimGrid 3.32 looks each of these up in every zone as it builds "
                "them: " + std::to_string(zones) + " x " + std::to_string(elements) + " = " +
                std::to_string(zones * elements) + " lookups, more than " + std::to_string(kMaxBuildLookups) +
                " (waitlab's limit, about 20 s of building): use fewer nodes or fewer sockets per node, or a "
                "cluster platform (one zone)");
  return p;
}

PlatformDesc make_xml(const Options& o) {
  const Reader rd(o, "xml");
  PlatformDesc p;
  p.kind = PlatformKind::Xml;
  p.xml_file = o.string("file");
  // Existence is checked where the path is resolved (relative to the scenario file) and read.
  if (p.xml_file.empty()) rd.fail("file", "must name a SimGrid platform file");
  return p;
}

}  // namespace

std::vector<Slot> place(const PlatformDesc& p, int ranks) {
  if (ranks < 1) throw InputError("the workload needs at least one rank, got " + std::to_string(ranks));
  if (ranks > kMaxRanks)
    throw InputError("the workload has " + std::to_string(ranks) + " ranks; waitlab simulates at most " +
                     std::to_string(kMaxRanks));
  if (p.kind == PlatformKind::Xml) {
    // One host per rank; `sim` resolves node r against the file's hosts.
    std::vector<Slot> slots(static_cast<std::size_t>(ranks));
    for (int r = 0; r < ranks; ++r) slots[static_cast<std::size_t>(r)].node = r;
    return slots;
  }
  const std::int64_t total = static_cast<std::int64_t>(p.nodes) * p.cores_per_node();
  if (ranks > total)
    throw InputError("platform has " + std::to_string(total) + " cores but the workload needs " +
                     std::to_string(ranks) + " ranks (add nodes or cores, or lower workload.ranks)");
  std::vector<Slot> slots(static_cast<std::size_t>(ranks));
  const int per_socket = p.kind == PlatformKind::Hierarchical ? p.cores : p.cores_per_node();
  for (int r = 0; r < ranks; ++r) {
    Slot& s = slots[static_cast<std::size_t>(r)];
    if (p.placement == PlacementKind::RoundRobin) {
      s.node = r % p.nodes;
      s.core = r / p.nodes;
    } else {
      s.node = r / p.cores_per_node();
      s.core = r % p.cores_per_node();
    }
    s.socket = s.core / per_socket;
  }
  return slots;
}

PlatformDesc make_platform(const std::string& type, const Options& opts) {
  if (type == "cluster") return make_cluster(opts);
  if (type == "hierarchical") return make_hierarchical(opts);
  if (type == "xml") return make_xml(opts);
  throw InputError(
      unknown_model_message(SpecKind::Platform, type, {"cluster", "hierarchical", "xml"}, opts.context()));
}

void register_platforms(Registry& r) {
  const auto link = [](const std::string& prefix, const std::string& what, std::string bw, std::string lat) {
    const std::string p = prefix.empty() ? "" : prefix + "_";
    return std::vector<OptionSpec>{
        quantity_option(p + "bandwidth", Quantity::Bandwidth, std::move(bw), "bandwidth of " + what),
        quantity_option(p + "latency", Quantity::Duration, std::move(lat), "latency of " + what)};
  };
  const auto cat = [](std::vector<OptionSpec> a, const std::vector<OptionSpec>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };

  r.add(make_spec(
      SpecKind::Platform, "cluster",
      "A flat cluster (SimGrid <cluster>): `nodes` hosts of `cores` cores, each host on its own "
      "link to one switch (no backbone, so flows only share the links they cross). Ranks on the same "
      "host talk over the loopback link if it has a bandwidth, else through the host's link.",
      cat(cat({quantity_option("nodes", Quantity::Integer, "", "number of nodes (hosts)"),
               quantity_option("cores", Quantity::Integer, "1", "cores per node"),
               quantity_option("speed", Quantity::Speed, "1Gf", "speed of each core (flop/s)")},
              link("", "each node's link to the switch", "10GBps", "1us")),
          cat(link("loopback", "the same-node link (bandwidth 0 = none)", "0Bps", "0s"),
              {placement_option()}))));

  r.add(make_spec(
      SpecKind::Platform, "hierarchical",
      "Nodes x sockets x cores: one link per core to its socket, one per socket to the node's router, "
      "and a NIC link shared by the whole node into the network, which is flat (one switch) or a fat "
      "tree, torus or dragonfly (SimGrid's topo_parameters syntax). Same-socket messages cross two core "
      "links; other-socket messages also two socket links; other-node messages also two NIC links and "
      "the network.",
      cat(cat({quantity_option("nodes", Quantity::Integer, "",
                               "number of nodes; required for the flat topology, otherwise taken from "
                               "topo_parameters (and checked if given)",
                               true),
               quantity_option("sockets", Quantity::Integer, "2", "sockets per node"),
               quantity_option("cores", Quantity::Integer, "8", "cores per socket"),
               quantity_option("speed", Quantity::Speed, "1Gf", "speed of each core (flop/s)")},
              cat(link("core", "each core's link to its socket", "50GBps", "20ns"),
                  link("socket", "each socket's link to the node's router", "25GBps", "100ns"))),
          cat(cat(link("nic", "each node's network interface (shared by its cores)", "12.5GBps", "500ns"),
                  {choice_option("topology", {"flat", "fat_tree", "torus", "dragonfly"}, "flat",
                                 "network between the nodes"),
                   text_option("topo_parameters",
                               "SimGrid topology parameters: fat_tree 'levels;down;up;parallel' (e.g. "
                               "'2;4,4;1,2;1,2' = 16 nodes), torus 'X,Y,Z', dragonfly "
                               "'groups,links;chassis,links;routers,links;nodes' (e.g. '3,4;4,3;5,1;2' = 120 "
                               "nodes)",
                               true)}),
              cat(link("network", "each link of the network (flat: each node's uplink to the switch)",
                       "12.5GBps", "500ns"),
                  {placement_option()})))));

  r.add(make_spec(
      SpecKind::Platform, "xml",
      "A user's own SimGrid platform file; rank r runs on the file's r-th host (in the order SimGrid "
      "lists them).",
      {text_option("file", "path of the SimGrid XML platform file (relative to the scenario file)", false)}));
}

}  // namespace waitlab::models
