// The causal forward replay (analysis/engine/causal.hpp): hand-made cases with their exact values
// (a chain across locations, a cycle let go by urgency, a need let go twice without progress, an
// instance's maximum, LetGo::Event), and random declarations — acyclic and with cycles, needs
// of the same event, instances fed and needed anywhere — whose every value (by bits) and every
// let-go are the one-process run's for P = 1, 2, 3, 4, 7 and L + 1 under five delivery orders.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "causal_checks.hpp"
#include "processes.hpp"

namespace waitlab::engine {
namespace {

using namespace causal_checks;

// The one-process result, and the same bits for every P and seed.
Result expect_independent(const Graph& g, const std::string& what) {
  const Result serial = joined(on_serial([&](Transport& t) { return replay(t, g); }));
  std::vector<int> counts = kProcessCounts;
  counts.push_back(static_cast<int>(g.events.size()) + 1);
  for (int p : counts)
    for (std::uint64_t seed : kSeeds) {
      const Result r = joined(on_virtual(p, seed, [&](Transport& t) { return replay(t, g); }));
      EXPECT_EQ(bits_of(r), bits_of(serial)) << what << ", " << p << " processes, seed " << seed;
    }
  return serial;
}

TEST(CausalReplay, AChainAcrossLocationsGetsItsValues) {
  // 0: e1 → 1: e1; 1: e2 → 2: e0.
  Graph g;
  g.events = {2, 3, 1};
  g.links = {{0, 1, 1, 1, 5, 0}, {1, 2, 2, 0, 9, 0}};
  const Result r = expect_independent(g, "chain");
  // Location 0: 0, 1. Location 1: 1; max(2, 11)·0.75 + 0.5 = 8.75; 9.75. Location 2: max(2, 19.75)·0.75
  // + 4.875.
  EXPECT_EQ(r, (Result{2, 0, 1, 0, 3, 1, 8.75, 9.75, 0, 1, 19.75 * 0.75 + 4.875, 0}));
}

TEST(CausalReplay, ACycleLetsTheMostUrgentNeedGo) {
  // 0: e1 waits for 1: e2, 1: e1 for 0: e2 (tag 1: more urgent) — 1 lets go.
  Graph g;
  g.events = {3, 3};
  g.links = {{1, 2, 0, 1, 7, 0}, {0, 2, 1, 1, 8, 1}};
  const Result r = expect_independent(g, "cycle");
  // Location 1: 1, 2 + 0.5 (let go, tag 1), 3.5; location 0's e1 then sees 3.5.
  const double e1 = std::max(1.0, 3.5 + 10) * 0.75 + 0.5 * 3.5;
  EXPECT_EQ(r, (Result{3, 0, e1, e1 + 1, 0, 3, 1, 2.5, 3.5, 1, 1}));
}

TEST(CausalReplay, TheLowestLocationGoesOnEqualUrgency) {
  Graph g;
  g.events = {3, 3};
  g.links = {{1, 2, 0, 1, 7, 0}, {0, 2, 1, 1, 8, 0}};
  const Result r = expect_independent(g, "cycle, equal urgency");
  const double e1 = std::max(2.0, 2.25 + 10) * 0.75 + 0.5 * 2.25;
  EXPECT_EQ(r, (Result{3, 0, 1.25, 2.25, 1, 0, 3, 1, e1, e1 + 1, 0}));
}

TEST(CausalReplay, ANeedLetGoTwiceWithoutProgressLetsTheEventGo) {
  // 0: e1 waits for 1: e2 and 1: e3; 1: e1 for 0: e2 and 0: e3. Location 0 (urgent) lets its
  // first need go, then its second (the first comes back), then the first again: both go.
  Graph g;
  g.events = {4, 4};
  g.links = {{1, 2, 0, 1, 1, 1}, {1, 3, 0, 1, 2, 1}, {0, 2, 1, 1, 3, 0}, {0, 3, 1, 1, 4, 0}};
  const Result r = expect_independent(g, "released twice");
  const double a = 1 + 0.5 + 0.5;  // both let go (tag 1): +0.5 each
  const double b1 =
      std::max(std::max(2.0, a + 1 + 10) * 0.75 + 0.5 * (a + 1), a + 2 + 10) * 0.75 + 0.5 * (a + 2);
  EXPECT_EQ(b1, 12.5);
  EXPECT_EQ(r, (Result{4, 0, a, a + 1, a + 2, 2, 1, 1, 4, 1, b1, b1 + 1, b1 + 2, 0}));  // each let go once
}

TEST(CausalReplay, AnInstanceCombinesEveryFeed) {
  // Every location feeds event 0 into instance 0, event 1 needs it; location 2 feeds twice.
  Graph g;
  g.events = {2, 2, 3};
  g.feeds = {{{0, 0}, {1, 0}, {2, 0}, {2, 1}}};
  g.needs = {{{0, 1}, {1, 1}, {2, 2}}};
  const Result r = expect_independent(g, "instance");
  // Values at e0: 0, 1, 2; location 2's e1 is 3 (no need): the maximum is 3.
  const auto after = [](double prev) { return std::max(prev + 1, 13.0) * 0.75 + 1.5; };
  EXPECT_EQ(r, (Result{2, 0, after(0), 0, 2, 1, after(1), 0, 3, 2, 3, after(3), 0}));
}

TEST(CausalReplay, LetGoEventDropsEveryMissingNeedAtOnce) {
  Graph g;
  g.events = {4, 4};
  g.links = {{1, 2, 0, 1, 1, 1}, {1, 3, 0, 1, 2, 1}, {0, 2, 1, 1, 3, 0}, {0, 3, 1, 1, 4, 0}};
  g.rule = LetGo::Event;
  const Result r = expect_independent(g, "LetGo::Event");
  EXPECT_EQ(r[0], 4);
  EXPECT_EQ(r[5], 2);  // location 0 let both needs go, once each
}

TEST(CausalReplay, RandomAcyclicDeclarationsGiveTheOneProcessValues) {
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    const Graph g = random_graph(seed, true);
    const Result r = expect_independent(g, "acyclic seed " + std::to_string(seed));
    std::size_t at = 0;  // nothing was let go
    for (std::size_t l = 0; l < g.events.size(); ++l) {
      at += 1 + g.events[l];
      EXPECT_EQ(r[at], 0) << "acyclic seed " << seed << ", location " << l;
      at += 1 + static_cast<std::size_t>(r[at]);
    }
  }
}

TEST(CausalReplay, RandomDeclarationsWithCyclesGiveTheOneProcessValues) {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    Graph g = random_graph(seed, false);
    expect_independent(g, "cyclic seed " + std::to_string(seed));
    g.rule = LetGo::Event;
    expect_independent(g, "cyclic seed " + std::to_string(seed) + ", LetGo::Event");
  }
}

}  // namespace
}  // namespace waitlab::engine
