// Platforms as SimGrid sees them: message times over the routes that the hierarchical
// platform builds, loopback links, user XML files and rank placement.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "util/error.hpp"
#include "sim/platform_build.hpp"
#include "sim_util.hpp"

namespace waitlab::sim::test {
namespace {

// Rank 0 sends 8 B to each of `to` in turn, 10 ms apart so that flows never overlap;
// returns the time each message took (receive leave minus send enter).
std::vector<double> message_times(const models::PlatformDesc& p, int ranks, const std::vector<int>& to) {
  std::vector<std::vector<Action>> acts(static_cast<std::size_t>(ranks));
  for (std::size_t i = 0; i < to.size(); ++i) {
    acts[0].push_back(compute(10e-3));
    acts[0].push_back(p2p(ActionKind::Send, to[i], 8));
    acts[static_cast<std::size_t>(to[i])].push_back(p2p(ActionKind::Recv, 0, 8));
  }
  ListWorkload w(acts);
  const auto t = simulate(p, w, {}, options()).trace;
  std::vector<double> out;
  for (std::size_t i = 0; i < to.size(); ++i)
    out.push_back(call(t, to[i], MpiOp::Recv).second -
                  nth(t, 0, EventKind::Send, MpiOp::Send, static_cast<int>(i)).time);
  return out;
}

models::PlatformDesc hierarchical(models::Topology topo, const std::string& params, int nodes) {
  models::PlatformDesc p;
  p.kind = models::PlatformKind::Hierarchical;
  p.nodes = nodes;
  p.sockets = 2;
  p.cores = 2;
  p.speed = 1e9;
  p.core_link = {1e9, 1e-6};
  p.socket_link = {1e9, 10e-6};
  p.nic_link = {1e9, 100e-6};
  p.network_link = {1e9, 1e-3};
  p.topology = topo;
  p.topo_parameters = params;
  return p;
}

TEST(Hierarchical, RoutesCrossOneLinkPerLevel) {
  // 2 nodes x 2 sockets x 2 cores, block placement: rank 1 shares rank 0's socket, rank 2
  // is on the other socket, rank 4 on the other node.
  const auto p = hierarchical(models::Topology::Flat, "", 2);
  const auto got = message_times(p, 8, {1, 2, 4});
  EXPECT_NEAR(got[0], smpi_transfer_time(8, 2e-6, 1e9), 1e-12);          // core, core
  EXPECT_NEAR(got[1], smpi_transfer_time(8, 2e-6 + 20e-6, 1e9), 1e-12);  // + socket, socket
  EXPECT_NEAR(got[2], smpi_transfer_time(8, 2e-6 + 20e-6 + 200e-6 + 2e-3, 1e9),
              1e-12);  // + NICs, 2 network links
}

TEST(Hierarchical, RoundRobinPlacementSpreadsOverNodes) {
  auto p = hierarchical(models::Topology::Flat, "", 2);
  p.placement = models::PlacementKind::RoundRobin;
  // Rank 1 is on node 1, rank 2 on node 0 (core 1, same socket as rank 0).
  const auto got = message_times(p, 8, {1, 2});
  EXPECT_NEAR(got[0], smpi_transfer_time(8, 2.222e-3, 1e9), 1e-12);
  EXPECT_NEAR(got[1], smpi_transfer_time(8, 2e-6, 1e9), 1e-12);
}

TEST(Hierarchical, TorusNeighboursAreOneNetworkHopApart) {
  // A ring of 4 nodes: node 1 is one torus link away from node 0, node 2 two links.
  const auto p = hierarchical(models::Topology::Torus, "4", 4);
  const auto got = message_times(p, 16, {4, 8});
  const double intra = 2e-6 + 20e-6 + 200e-6;
  EXPECT_NEAR(got[0], smpi_transfer_time(8, intra + 1e-3, 1e9), 1e-12);
  EXPECT_NEAR(got[1], smpi_transfer_time(8, intra + 2e-3, 1e9), 1e-12);
}

TEST(Hierarchical, FatTreeAndDragonflyBuildAndRun) {
  // Fat tree of 4 leaves (2 per level-1 switch): node 1 is 2 links from node 0, node 2 four.
  const auto ft = message_times(hierarchical(models::Topology::FatTree, "2;2,2;1,2;1,1", 4), 16, {4, 8});
  const double intra = 2e-6 + 20e-6 + 200e-6;
  EXPECT_NEAR(ft[0], smpi_transfer_time(8, intra + 2e-3, 1e9), 1e-12);
  EXPECT_NEAR(ft[1], smpi_transfer_time(8, intra + 4e-3, 1e9), 1e-12);
  // Dragonfly "1,1;1,1;2,1;2": 4 nodes, two per router.
  const auto df = message_times(hierarchical(models::Topology::Dragonfly, "1,1;1,1;2,1;2", 4), 16, {4, 8});
  EXPECT_GT(df[0], smpi_transfer_time(8, intra, 1e9));
  EXPECT_GT(df[1], df[0]);
}

TEST(Hierarchical, BadTopologyParametersAreInputErrors) {
  ListWorkload w(std::vector<std::vector<Action>>(2));  // two ranks doing nothing
  try {
    simulate(hierarchical(models::Topology::Torus, "4,x", 4), w, {}, options());
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "platform: topo_parameters '4,x' of the torus network: expected positive "
              "integers, got 'x'");
  }
}

TEST(Cluster, LoopbackCarriesSameNodeMessages) {
  auto p = cluster(2);
  p.cores = 2;  // ranks 0 and 1 on node 0, rank 2 on node 1
  p.loopback = {50e9, 0.1e-6};
  const auto got = message_times(p, 3, {1, 2});
  EXPECT_NEAR(got[0], smpi_transfer_time(8, 0.1e-6, 50e9), 1e-12);
  EXPECT_NEAR(got[1], smpi_transfer_time(8, 2e-6, 1e9), 1e-12);
  // Without a loopback link, same-node traffic goes up and down the node's own link; its
  // 5 % cross-traffic lands on the same two links, so the flow gets 1e9 / 1.05 B/s.
  p.loopback = {};
  EXPECT_NEAR(message_times(p, 3, {1})[0], 2e-6 * 2.01467 + 24 / (1e9 / 1.05 * 0.812084), 1e-12);
}

class XmlFile {
 public:
  explicit XmlFile(const std::string& body) {
    char name[] = "/tmp/waitlab-test-XXXXXX.xml";
    const int fd = mkstemps(name, 4);
    if (fd < 0) throw std::runtime_error("mkstemps");
    close(fd);
    path_ = name;
    std::ofstream(path_) << body;
  }
  ~XmlFile() { std::remove(path_.c_str()); }
  models::PlatformDesc desc() const {
    models::PlatformDesc p;
    p.kind = models::PlatformKind::Xml;
    p.xml_file = path_;
    return p;
  }

 private:
  std::string path_;
};

TEST(Xml, RanksFollowNaturalHostOrder) {
  // Three hosts of different speeds, declared out of order: rank r runs on the r-th host in
  // natural order (h1, h2, h10), which its compute time of 1e6 flops reveals.
  XmlFile f(R"(<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="z" routing="Full">
    <host id="h10" speed="4Gf"/>
    <host id="h2" speed="2Gf"/>
    <host id="h1" speed="1Gf"/>
  </zone>
</platform>)");
  Action a = compute(1e6);
  a.flops = true;
  ListWorkload w({{a}, {a}, {a}});
  const auto t = simulate(f.desc(), w, {}, options()).trace;
  EXPECT_DOUBLE_EQ(t.locations[0].truth.at(0).end, 1e-3);
  EXPECT_DOUBLE_EQ(t.locations[1].truth.at(0).end, 0.5e-3);
  EXPECT_DOUBLE_EQ(t.locations[2].truth.at(0).end, 0.25e-3);
  EXPECT_DOUBLE_EQ(t.locations[2].truth.at(0).nominal, 0.25e-3);  // flops / speed of that host
  EXPECT_EQ(t.attribute("platform"), "xml: " + f.desc().xml_file);

  ListWorkload four({{}, {}, {}, {}});
  try {
    simulate(f.desc(), four, {}, options());
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "platform file " + f.desc().xml_file +
                  " has 3 hosts, fewer than the 4 ranks of the workload (one rank per host)");
  }
}

TEST(Xml, MissingOrMalformedFilesAreInputErrors) {
  ListWorkload w(std::vector<std::vector<Action>>(1));
  models::PlatformDesc p;
  p.kind = models::PlatformKind::Xml;
  p.xml_file = "/nonexistent/platform.xml";
  try {
    simulate(p, w, {}, options());
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "platform file /nonexistent/platform.xml: cannot be read");
  }
  XmlFile bad("<platform version=\"4.1\"><host id=\"a\" speed=\"fast\"/></platform>");
  try {
    simulate(bad.desc(), w, {}, options());
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("platform file " + bad.desc().xml_file), std::string::npos)
        << e.what();
  }
}

TEST(NaturalOrder, ComparesNumbersByValue) {
  using detail::natural_less;
  EXPECT_TRUE(natural_less("node-2", "node-10"));
  EXPECT_FALSE(natural_less("node-10", "node-2"));
  EXPECT_TRUE(natural_less("a", "b"));
  EXPECT_TRUE(natural_less("n1c2", "n1c10"));
  EXPECT_TRUE(natural_less("n9", "n10a"));
  EXPECT_FALSE(natural_less("x", "x"));
}

}  // namespace
}  // namespace waitlab::sim::test
