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

#include "analysis/engine/causal.hpp"
#include "processes.hpp"

namespace waitlab::engine {
namespace {

// Declarations of a whole run: each process declares the part it owns.
struct Link {
  Location from = 0;
  std::uint32_t from_event = 0;
  Location to = 0;
  std::uint32_t to_event = 0;
  std::uint64_t key = 0;
  std::uint8_t tag = 0;
};
struct Member {
  Location location = 0;
  std::uint32_t event = 0;
};
struct Graph {
  std::vector<std::uint32_t> events;  // per location
  std::vector<Link> links;
  std::vector<std::vector<Member>> feeds, needs;  // per instance
  LetGo rule = LetGo::Blocked;
};

// Per location its values, then its let-go count, then its tags let go (as doubles), location by
// location: the process's bytes.
using Result = std::vector<double>;

// An event's value: an order-sensitive function of its predecessor and inputs.
double value_of(Location l, std::uint32_t k, double previous,
                std::span<const CausalReplay<double>::Input> in) {
  double v = k == 0 ? static_cast<double>(l) : previous + 1;
  for (const auto& x : in)
    v = x.let_go ? v + 0.25 * (x.tag + 1) : std::max(v, x.value + 10) * 0.75 + 0.5 * x.value;
  return v;
}

Bytes replay(Transport& t, const Graph& g) {
  const Partition partition =
      Partition::balanced(std::vector<std::uint64_t>(g.events.begin(), g.events.end()), t.size());
  const LocationRange owned = partition.range(t.self());
  std::vector<std::uint32_t> events(g.events.begin() + owned.first, g.events.begin() + owned.last);
  CausalReplay<double> r(t, partition, owned, events, static_cast<std::uint32_t>(g.feeds.size()), g.rule);
  for (const Link& k : g.links) {
    if (owned.holds(k.to)) r.need(k.to, k.to_event, k.from, k.key, k.tag);
    if (owned.holds(k.from)) r.offer(k.from, k.from_event, k.to, k.key);
  }
  for (std::uint32_t i = 0; i < g.feeds.size(); ++i) {
    for (const Member& m : g.feeds[i])
      if (owned.holds(m.location)) r.feed(m.location, m.event, i);
    for (const Member& m : g.needs[i])
      if (owned.holds(m.location)) r.need_instance(m.location, m.event, i, 1);
  }
  std::vector<std::vector<double>> values(static_cast<std::size_t>(owned.size()));
  std::vector<std::vector<double>> gone(values.size());
  CausalReplay<double>::Callbacks cb;
  cb.event = [&](Location l, std::uint32_t k, std::span<const CausalReplay<double>::Input> in) {
    auto& v = values[static_cast<std::size_t>(l - owned.first)];
    EXPECT_EQ(v.size(), k);
    v.push_back(value_of(l, k, v.empty() ? 0.0 : v.back(), in));
    return v.back();
  };
  cb.combine = [](const double& a, const double& b) { return exact_max(a, b); };
  cb.urgency = [](Location, std::uint8_t tag) { return static_cast<double>(tag); };
  cb.let_go = [&](Location l, std::uint8_t tag) {
    gone[static_cast<std::size_t>(l - owned.first)].push_back(tag);
  };
  r.run(cb);
  Result out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(r.next(owned.first + static_cast<Location>(i)), values[i].size());
    out.push_back(static_cast<double>(values[i].size()));
    out.insert(out.end(), values[i].begin(), values[i].end());
    out.push_back(static_cast<double>(gone[i].size()));
    out.insert(out.end(), gone[i].begin(), gone[i].end());
  }
  return encode(out);
}

Result joined(const std::vector<Bytes>& parts) {
  Result all;
  for (const Bytes& b : parts) {
    const Result some = decode<Result>(b);
    all.insert(all.end(), some.begin(), some.end());
  }
  return all;
}

std::vector<std::uint64_t> bits_of(const Result& r) {
  std::vector<std::uint64_t> b;
  for (double d : r) b.push_back(bits(d));
  return b;
}

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

// Random declarations: L locations, links between random events (acyclic: only from an earlier
// to a later "step"), instances fed and needed by random members.
Graph random_graph(std::uint64_t seed, bool acyclic) {
  std::mt19937_64 rng(seed);
  const auto pick = [&](std::uint64_t n) { return n == 0 ? 0 : rng() % n; };
  Graph g;
  const std::size_t L = 1 + pick(8);
  for (std::size_t l = 0; l < L; ++l) g.events.push_back(static_cast<std::uint32_t>(pick(14)));
  const auto event_of = [&](std::size_t l) { return static_cast<std::uint32_t>(pick(g.events[l])); };
  const std::size_t links = pick(4 * L + 1);
  std::uint64_t key = 0;
  for (std::size_t x = 0; x < links; ++x) {
    const std::size_t a = pick(L), b = pick(L);
    if (g.events[a] == 0 || g.events[b] == 0) continue;
    std::uint32_t ea = event_of(a), eb = event_of(b);
    if (acyclic) {  // steps: event k of any location is step k; links go to a later step
      if (g.events[b] < 2) continue;
      ea = std::min(ea, g.events[b] - 2);
      if (ea >= g.events[a]) continue;
      eb = ea + 1 + static_cast<std::uint32_t>(pick(g.events[b] - ea - 1));
    }
    g.links.push_back({static_cast<Location>(a), ea, static_cast<Location>(b), eb, key += 1 + pick(3),
                       static_cast<std::uint8_t>(pick(2))});
  }
  const std::size_t instances = pick(4);
  g.feeds.resize(instances);
  g.needs.resize(instances);
  for (std::size_t i = 0; i < instances; ++i)
    for (std::size_t l = 0; l < L; ++l) {
      if (g.events[l] < 2 || pick(3) == 0) continue;
      const std::uint32_t e = acyclic ? static_cast<std::uint32_t>(2 * i % (g.events[l] - 1)) : event_of(l);
      g.feeds[i].push_back({static_cast<Location>(l), e});
      if (pick(2) == 0)
        g.needs[i].push_back({static_cast<Location>(l), acyclic ? g.events[l] - 1 : event_of(l)});
    }
  if (acyclic) g.needs.assign(instances, {});  // (an instance's need may precede another's feed)
  return g;
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
