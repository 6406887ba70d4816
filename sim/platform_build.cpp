#include "sim/platform_build.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <simgrid/s4u.hpp>
#include <stdexcept>
#include <string_view>

#include "util/error.hpp"
#include "util/units.hpp"

namespace sg4 = simgrid::s4u;

namespace waitlab::sim::detail {

namespace {

using models::LinkSpec;
using models::PlatformDesc;
using models::PlatformKind;
using models::Topology;
using units::Quantity;
using Direction = sg4::LinkInRoute::Direction;
using NetPoint = simgrid::kernel::routing::NetPoint;

std::string fmt_link(const LinkSpec& l) {
  return units::format(l.bandwidth, Quantity::Bandwidth) + "/" + units::format(l.latency, Quantity::Duration);
}

std::string topology_name(Topology t) {
  switch (t) {
    case Topology::Flat:
      return "flat";
    case Topology::FatTree:
      return "fat_tree";
    case Topology::Torus:
      return "torus";
    case Topology::Dragonfly:
      return "dragonfly";
  }
  return "?";
}

[[noreturn]] void bad_topology(const PlatformDesc& d, const std::string& why) {
  throw InputError("platform: topo_parameters '" + d.topo_parameters + "' of the " +
                   topology_name(d.topology) + " network: " + why);
}

// "4,4" -> {4, 4}; every field a positive integer.
std::vector<unsigned> numbers(const PlatformDesc& d, std::string_view s) {
  std::vector<unsigned> out;
  std::size_t pos = 0;
  while (true) {
    const std::size_t comma = s.find(',', pos);
    const std::string_view item =
        s.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    if (item.empty() || item.size() > 9 ||
        !std::all_of(item.begin(), item.end(), [](char c) { return c >= '0' && c <= '9'; }))
      bad_topology(d, "expected positive integers, got '" + std::string(item) + "'");
    const unsigned v = static_cast<unsigned>(std::stoul(std::string(item)));
    if (v == 0) bad_topology(d, "expected positive integers, got 0");
    out.push_back(v);
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return out;
}

std::vector<std::string_view> fields(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t pos = 0;
  while (true) {
    const std::size_t p = s.find(';', pos);
    out.push_back(s.substr(pos, p == std::string_view::npos ? std::string_view::npos : p - pos));
    if (p == std::string_view::npos) break;
    pos = p + 1;
  }
  return out;
}

sg4::SplitDuplexLink* duplex(sg4::NetZone* zone, const std::string& name, const LinkSpec& l) {
  auto* link = zone->create_split_duplex_link(name, l.bandwidth);
  link->set_latency(l.latency);
  link->seal();
  return link;
}

// Builds one node of a hierarchical platform inside `parent`: a star zone of sockets, each
// a star zone of single-core hosts. Returns the node zone and its gateway router (which
// carries the NIC link, so that only cross-node traffic crosses the NIC).
class NodeBuilder {
 public:
  NodeBuilder(const PlatformDesc& d, std::vector<sg4::Host*>& cores) : d_(d), cores_(cores) {}

  std::pair<NetPoint*, NetPoint*> build(const sg4::NetZone* parent, unsigned long node) {
    if (node >= static_cast<unsigned long>(d_.nodes))
      throw InputError("platform: the " + std::to_string(d_.nodes) + "-node network '" + d_.topo_parameters +
                       "' has a node number " + std::to_string(node));
    const std::string name = "node-" + std::to_string(node);
    auto* zone = sg4::create_star_zone(name);
    zone->set_parent(parent);
    // The node's router sits in a zone of its own: SimGrid 3.32 routes wrongly from a host
    // in a socket zone to a gateway placed directly in the node zone (it looks the route up
    // in the node zone with the host's id, and loses the core link).
    auto* nic_zone = sg4::create_star_zone(name + "-nic");
    nic_zone->set_parent(zone);
    NetPoint* router = nic_zone->create_router(name + "-router");
    nic_zone->add_route(router, nullptr, nullptr, nullptr, {}, true);
    nic_zone->seal();
    auto* nic = duplex(zone, name + "-nic", d_.nic_link);
    // Links up (NIC zone -> centre) carry inbound traffic, links down outbound traffic.
    zone->add_route(nic_zone->get_netpoint(), nullptr, router, nullptr, {{nic, Direction::DOWN}}, true);
    for (int s = 0; s < d_.sockets; ++s) {
      const std::string sname = name + "-socket-" + std::to_string(s);
      auto* socket = sg4::create_star_zone(sname);
      socket->set_parent(zone);
      NetPoint* srouter = socket->create_router(sname + "-router");
      socket->add_route(srouter, nullptr, nullptr, nullptr, {}, true);
      for (int c = 0; c < d_.cores; ++c) {
        const int core = s * d_.cores + c;
        const std::string hname = name + "-core-" + std::to_string(core);
        sg4::Host* host = socket->create_host(hname, d_.speed);
        host->seal();
        auto* link = duplex(socket, hname + "-link", d_.core_link);
        socket->add_route(host->get_netpoint(), nullptr, nullptr, nullptr, {{link, Direction::UP}}, true);
        cores_[static_cast<std::size_t>(node) * static_cast<std::size_t>(d_.sockets * d_.cores) +
               static_cast<std::size_t>(core)] = host;
      }
      socket->seal();
      auto* slink = duplex(zone, sname + "-link", d_.socket_link);
      zone->add_route(socket->get_netpoint(), nullptr, srouter, nullptr, {{slink, Direction::UP}}, true);
    }
    zone->seal();
    return {zone->get_netpoint(), router};
  }

 private:
  const PlatformDesc& d_;
  std::vector<sg4::Host*>& cores_;  // node-major, core index within node
};

// Hosts of the hierarchical platform, node-major (node * cores_per_node + core).
std::vector<sg4::Host*> build_hierarchical(const PlatformDesc& d) {
  std::vector<sg4::Host*> cores(static_cast<std::size_t>(d.nodes) *
                                static_cast<std::size_t>(d.cores_per_node()));
  NodeBuilder nb(d, cores);
  const auto cb = [&nb](sg4::NetZone* zone, const std::vector<unsigned long>&, unsigned long id) {
    return nb.build(zone, id);
  };
  const double bw = d.network_link.bandwidth;
  const double lat = d.network_link.latency;
  const auto policy = sg4::Link::SharingPolicy::SPLITDUPLEX;
  try {
    switch (d.topology) {
      case Topology::Flat: {
        auto* net = sg4::create_star_zone("network");
        for (int n = 0; n < d.nodes; ++n) {
          auto [np, gw] = nb.build(net, static_cast<unsigned long>(n));
          auto* link = duplex(net, "node-" + std::to_string(n) + "-uplink", d.network_link);
          net->add_route(np, nullptr, gw, nullptr, {{link, Direction::UP}}, true);
        }
        net->seal();
        break;
      }
      case Topology::FatTree: {
        const auto f = fields(d.topo_parameters);
        if (f.size() != 4) bad_topology(d, "expected 'levels;down;up;links', e.g. '2;4,4;1,2;1,2'");
        const auto levels = numbers(d, f[0]);
        if (levels.size() != 1) bad_topology(d, "the first field is the number of levels");
        const sg4::FatTreeParams p(levels[0], numbers(d, f[1]), numbers(d, f[2]), numbers(d, f[3]));
        sg4::create_fatTree_zone("network", nullptr, p, sg4::ClusterCallbacks(cb), bw, lat, policy)->seal();
        break;
      }
      case Topology::Torus: {
        std::vector<unsigned long> dims;
        for (unsigned v : numbers(d, d.topo_parameters)) dims.push_back(v);
        sg4::create_torus_zone("network", nullptr, dims, sg4::ClusterCallbacks(cb), bw, lat, policy)->seal();
        break;
      }
      case Topology::Dragonfly: {
        const auto f = fields(d.topo_parameters);
        if (f.size() != 4) bad_topology(d, "expected 'groups,links;chassis,links;routers,links;nodes'");
        std::vector<std::vector<unsigned>> v;
        for (std::size_t i = 0; i < 4; ++i) {
          v.push_back(numbers(d, f[i]));
          if (v.back().size() != (i < 3 ? 2u : 1u))
            bad_topology(d, "expected 'groups,links;chassis,links;routers,links;nodes'");
        }
        const sg4::DragonflyParams p({v[0][0], v[0][1]}, {v[1][0], v[1][1]}, {v[2][0], v[2][1]}, v[3][0]);
        sg4::create_dragonfly_zone("network", nullptr, p, sg4::ClusterCallbacks(cb), bw, lat, policy)->seal();
        break;
      }
    }
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    bad_topology(d, std::string("SimGrid rejected it: ") + e.what());
  }
  if (std::any_of(cores.begin(), cores.end(), [](const sg4::Host* h) { return h == nullptr; }))
    bad_topology(d, "it does not have the " + std::to_string(d.nodes) + " nodes the platform declares");
  return cores;
}

std::vector<sg4::Host*> build_cluster(const PlatformDesc& d) {
  auto* zone = sg4::create_star_zone("cluster");
  std::vector<sg4::Host*> nodes;
  nodes.reserve(static_cast<std::size_t>(d.nodes));
  for (int n = 0; n < d.nodes; ++n) {
    const std::string name = "node-" + std::to_string(n);
    sg4::Host* host = zone->create_host(name, d.speed);
    host->set_core_count(d.cores);
    host->seal();
    auto* link = duplex(zone, name + "-link", d.network_link);
    zone->add_route(host->get_netpoint(), nullptr, nullptr, nullptr, {{link, Direction::UP}}, true);
    if (d.loopback.bandwidth > 0) {
      // As SimGrid's <cluster>: a fat pipe, so intra-node flows do not share it.
      auto* lb = zone->create_link(name + "-loopback", d.loopback.bandwidth);
      lb->set_latency(d.loopback.latency);
      lb->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE);
      lb->seal();
      zone->add_route(host->get_netpoint(), host->get_netpoint(), nullptr, nullptr, {{lb, Direction::NONE}},
                      false);
    }
    nodes.push_back(host);
  }
  zone->seal();
  return nodes;
}

}  // namespace

bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.size() && j < b.size()) {
    const bool da = std::isdigit(static_cast<unsigned char>(a[i])) != 0;
    const bool db = std::isdigit(static_cast<unsigned char>(b[j])) != 0;
    if (da && db) {
      std::size_t ie = i;
      std::size_t je = j;
      while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie]))) ++ie;
      while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je]))) ++je;
      // Compare by value: strip leading zeros, then longer is larger, then lexicographic.
      std::size_t is = i;
      std::size_t js = j;
      while (is + 1 < ie && a[is] == '0') ++is;
      while (js + 1 < je && b[js] == '0') ++js;
      if (ie - is != je - js) return ie - is < je - js;
      const int c = a.compare(is, ie - is, b, js, je - js);
      if (c != 0) return c < 0;
      i = ie;
      j = je;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  if (a.size() - i != b.size() - j) return a.size() - i < b.size() - j;
  return a < b;  // same natural key ("a01" vs "a1"): any strict order will do
}

std::string describe_platform(const PlatformDesc& d) {
  switch (d.kind) {
    case PlatformKind::Cluster: {
      std::string s = "cluster: " + std::to_string(d.nodes) + " nodes x " + std::to_string(d.cores) +
                      " cores at " + units::format(d.speed, Quantity::Speed) + ", node link " +
                      fmt_link(d.network_link);
      s += d.loopback.bandwidth > 0 ? ", loopback " + fmt_link(d.loopback) : ", no loopback";
      return s;
    }
    case PlatformKind::Hierarchical:
      return "hierarchical: " + std::to_string(d.nodes) + " nodes x " + std::to_string(d.sockets) +
             " sockets x " + std::to_string(d.cores) + " cores at " +
             units::format(d.speed, Quantity::Speed) + ", core link " + fmt_link(d.core_link) +
             ", socket link " + fmt_link(d.socket_link) + ", NIC " + fmt_link(d.nic_link) + ", " +
             topology_name(d.topology) + " network" +
             (d.topo_parameters.empty() ? std::string() : " '" + d.topo_parameters + "'") + " of links " +
             fmt_link(d.network_link);
    case PlatformKind::Xml:
      return "xml: " + d.xml_file;
  }
  return "?";
}

// What SimGrid accepts in a platform file but aborts on (or silently misuses) once ranks run
// on it, refused here with the value named: a rank host of speed 0 (it would never compute),
// a link of bandwidth 0 or a latency or bandwidth that is not a finite number (SimGrid's "The
// Impossible Did Happen"). (A missing route between two hosts that exchange messages makes
// SimGrid abort at that message; asking for every route up front aborted on platforms whose
// ranks never talk. The simulation process's log names the hosts: engine.cpp missing_route
// turns it into the error.)
namespace {

std::string fmt_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// A <cluster radical="0-9999999"> of 200 bytes makes SimGrid create ten million hosts (8.1 GB
// before a timeout): the hosts a file's clusters declare are counted before SimGrid reads it,
// against waitlab's limit on hosts, and an excess names the file and the line.
void check_xml_sizes(const std::string& file) {
  std::ifstream in(file);
  std::string line;
  std::uint64_t hosts = 0;
  for (std::size_t no = 1; std::getline(in, line); ++no) {
    for (std::size_t at = line.find("radical"); at != std::string::npos; at = line.find("radical", at + 7)) {
      const std::size_t open = line.find_first_of("\"'", at);
      if (open == std::string::npos) break;
      const std::size_t close = line.find(line[open], open + 1);
      if (close == std::string::npos) break;
      // "a-b,c,d-e": the sum of the ranges' lengths.
      const std::string list = line.substr(open + 1, close - open - 1);
      std::size_t pos = 0;
      while (pos <= list.size()) {
        const std::size_t comma = std::min(list.find(',', pos), list.size());
        const std::string item = list.substr(pos, comma - pos);
        const std::size_t dash = item.find('-');
        char* end = nullptr;
        const unsigned long long a = std::strtoull(item.c_str(), &end, 10);
        const unsigned long long b = dash == std::string::npos ? a : std::strtoull(item.c_str() + dash + 1, &end, 10);
        hosts += b >= a ? std::min<unsigned long long>(b - a + 1, 1ULL << 40) : 0;
        if (hosts > static_cast<std::uint64_t>(models::kMaxHosts))
          throw InputError("platform file " + file + ":" + std::to_string(no) + ": its clusters declare more than " +
                           std::to_string(models::kMaxHosts) + " hosts (radical '" + list.substr(0, 40) +
                           "'): more than waitlab's limit on hosts, and SimGrid would create every one");
        pos = comma + 1;
      }
      at = close;
    }
  }
}

void check_xml_platform(sg4::Engine& engine, const std::string& file, const std::vector<sg4::Host*>& ranks) {
  for (const sg4::Host* h : ranks) {
    const double speed = h->get_speed();
    if (!(speed > 0) || !std::isfinite(speed))
      throw InputError("platform file " + file + ": host '" + h->get_name() + "' has speed " + fmt_number(speed) +
                       " flop/s: a rank placed on it would never compute (give it a speed > 0)");
  }
  for (const sg4::Link* l : engine.get_all_links()) {
    const double bw = l->get_bandwidth();
    const double lat = l->get_latency();
    if (!(bw > 0) || !std::isfinite(bw))
      throw InputError("platform file " + file + ": link '" + l->get_name() + "' has bandwidth " + fmt_number(bw) +
                       " B/s: a message over it would never arrive (give it a bandwidth > 0)");
    if (!(lat >= 0) || !std::isfinite(lat))
      throw InputError("platform file " + file + ": link '" + l->get_name() + "' has latency " + fmt_number(lat) +
                       " s (give it a latency >= 0)");
  }
}

}  // namespace

BuiltPlatform build_platform(sg4::Engine& engine, const PlatformDesc& d, int ranks) {
  BuiltPlatform out;
  out.description = describe_platform(d);
  const auto n = static_cast<std::size_t>(ranks);
  out.rank_host.resize(n);
  out.rank_speed.resize(n);
  if (d.kind == PlatformKind::Xml) {
    if (!std::ifstream(d.xml_file).good())
      throw InputError("platform file " + d.xml_file + ": cannot be read");
    check_xml_sizes(d.xml_file);
    try {
      engine.load_platform(d.xml_file);
    } catch (const std::exception& e) {
      throw InputError("platform file " + d.xml_file + ": SimGrid rejected it: " + e.what());
    }
    auto hosts = engine.get_all_hosts();
    std::sort(hosts.begin(), hosts.end(), [](const sg4::Host* a, const sg4::Host* b) {
      return natural_less(a->get_name(), b->get_name());
    });
    if (hosts.size() < n)
      throw InputError("platform file " + d.xml_file + " has " + std::to_string(hosts.size()) +
                       " hosts, fewer than the " + std::to_string(ranks) +
                       " ranks of the workload (one rank per host)");
    for (std::size_t r = 0; r < n; ++r) {
      out.rank_host[r] = hosts[r];
      out.rank_speed[r] = hosts[r]->get_speed();
    }
    check_xml_platform(engine, d.xml_file, std::vector<sg4::Host*>(hosts.begin(), hosts.begin() + static_cast<std::ptrdiff_t>(n)));
    return out;
  }
  const auto slots = models::place(d, ranks);
  if (d.kind == PlatformKind::Cluster) {
    const auto nodes = build_cluster(d);
    for (std::size_t r = 0; r < n; ++r) out.rank_host[r] = nodes[static_cast<std::size_t>(slots[r].node)];
  } else {
    const auto cores = build_hierarchical(d);
    const auto per_node = static_cast<std::size_t>(d.cores_per_node());
    for (std::size_t r = 0; r < n; ++r)
      out.rank_host[r] =
          cores[static_cast<std::size_t>(slots[r].node) * per_node + static_cast<std::size_t>(slots[r].core)];
  }
  std::fill(out.rank_speed.begin(), out.rank_speed.end(), d.speed);
  return out;
}

}  // namespace waitlab::sim::detail
