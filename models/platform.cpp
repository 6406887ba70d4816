#include "models/platform.hpp"

#include <cmath>
#include <limits>
#include <string_view>

#include "analysis/trace/error.hpp"

namespace waitlab::models {

namespace {

using units::Quantity;
constexpr std::int64_t kMaxInt = std::numeric_limits<std::int32_t>::max();

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
    return {positive(p + "bandwidth", Quantity::Bandwidth), non_negative(p + "latency", Quantity::Duration)};
  }
  PlacementKind placement() const {
    return choice("placement") == "round-robin" ? PlacementKind::RoundRobin : PlacementKind::Block;
  }
};

// Positive integers of one SimGrid topology field ("4,4" or "2").
std::vector<std::int64_t> fields(std::string_view s, bool& ok) {
  std::vector<std::int64_t> out;
  ok = true;
  while (true) {
    const auto comma = s.find(',');
    const auto item = s.substr(0, comma);
    std::int64_t v = 0;
    if (item.empty() || item.size() > 9) ok = false;
    for (char c : item) {
      if (c < '0' || c > '9') ok = false;
      v = v * 10 + (c - '0');
    }
    if (v < 1) ok = false;
    out.push_back(v);
    if (comma == std::string_view::npos || !ok) break;
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

// Number of leaves (nodes) described by SimGrid's topo_parameters, or an explanation in `why`.
std::int64_t topology_leaves(Topology t, std::string_view params, std::string& why) {
  bool ok = true;
  std::int64_t n = 1;
  const auto mul = [&](std::int64_t v) {
    n = n > 0 && v > (std::int64_t{1} << 40) / n ? -1 : (n < 0 ? -1 : n * v);
  };
  if (t == Topology::FatTree) {
    why =
        "a fat tree is 'levels;down-links per level;up-links per level;parallel links per level', e.g. "
        "'2;4,4;1,2;1,2' (16 nodes)";
    const auto parts = split(params, ';');
    if (parts.size() != 4) return -1;
    const auto levels = fields(parts[0], ok);
    if (!ok || levels.size() != 1) return -1;
    for (std::size_t i = 1; i < 4; ++i) {
      const auto f = fields(parts[i], ok);
      if (!ok || static_cast<std::int64_t>(f.size()) != levels[0]) return -1;
      if (i == 1)
        for (auto v : f) mul(v);
    }
  } else if (t == Topology::Torus) {
    why = "a torus is its extents 'X,Y,Z' (any number of dimensions), e.g. '4,4,4' (64 nodes)";
    const auto f = fields(params, ok);
    if (!ok) return -1;
    for (auto v : f) mul(v);
  } else if (t == Topology::Dragonfly) {
    why =
        "a dragonfly is 'groups,links;chassis,links;routers,links;nodes per router', e.g. '3,4;4,3;5,1;2' "
        "(120 nodes)";
    const auto parts = split(params, ';');
    if (parts.size() != 4) return -1;
    for (std::size_t i = 0; i < 4; ++i) {
      const auto f = fields(parts[i], ok);
      if (!ok || f.size() != (i < 3 ? 2u : 1u)) return -1;
      mul(f[0]);
    }
  }
  return n;
}

PlatformDesc make_cluster(const Options& o) {
  const Reader rd(o, "cluster");
  PlatformDesc p;
  p.kind = PlatformKind::Cluster;
  p.nodes = rd.count("nodes");
  p.cores = rd.count("cores");
  p.speed = rd.positive("speed", Quantity::Speed);
  p.network_link = rd.link("");
  const double lb = rd.non_negative("loopback_bandwidth", Quantity::Bandwidth);
  p.loopback = {lb, rd.non_negative("loopback_latency", Quantity::Duration)};
  p.placement = rd.placement();
  if (static_cast<std::int64_t>(p.nodes) * p.cores > kMaxInt) rd.fail("cores", "nodes x cores is too large");
  return p;
}

PlatformDesc make_hierarchical(const Options& o) {
  const Reader rd(o, "hierarchical");
  PlatformDesc p;
  p.kind = PlatformKind::Hierarchical;
  p.sockets = rd.count("sockets");
  p.cores = rd.count("cores");
  p.speed = rd.positive("speed", Quantity::Speed);
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
    const auto leaves = topology_leaves(p.topology, p.topo_parameters, why);
    if (leaves < 1)
      rd.fail("topo_parameters", "'" + p.topo_parameters + "' is not a valid " + topo + ": " + why);
    if (leaves > kMaxInt) rd.fail("topo_parameters", "'" + p.topo_parameters + "' has too many nodes");
    if (o.has("nodes") && rd.count("nodes") != leaves)
      rd.fail("nodes", "the " + topo + " '" + p.topo_parameters + "' has " + std::to_string(leaves) +
                           " nodes, but nodes = " + std::to_string(rd.count("nodes")) +
                           " (leave nodes out to take it from the topology)");
    p.nodes = static_cast<int>(leaves);
  }
  if (static_cast<std::int64_t>(p.nodes) * p.sockets * p.cores > kMaxInt)
    rd.fail("cores", "nodes x sockets x cores is too large");
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
  std::vector<Slot> slots(static_cast<std::size_t>(ranks));
  if (p.kind == PlatformKind::Xml) {
    // One host per rank; `sim` resolves node r against the file's hosts.
    for (int r = 0; r < ranks; ++r) slots[static_cast<std::size_t>(r)].node = r;
    return slots;
  }
  const std::int64_t total = static_cast<std::int64_t>(p.nodes) * p.cores_per_node();
  if (ranks > total)
    throw InputError("platform has " + std::to_string(total) + " cores but the workload needs " +
                     std::to_string(ranks) + " ranks (add nodes or cores, or lower workload.ranks)");
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
