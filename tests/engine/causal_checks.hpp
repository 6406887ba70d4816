// The causal forward replay's promise as a check on any transport (the virtual one in
// test_causal.cpp, MPI's in mpi/test_mpi_transport.cpp): declarations of a whole run (links
// between events, instances fed and needed), each process declaring the part it owns, an
// order-sensitive value per event, and what each process gets — its locations' values and
// let-goes — as bytes whose concatenation in process order is the run's.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "analysis/engine/causal.hpp"

namespace waitlab::engine::causal_checks {

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
inline double value_of(Location l, std::uint32_t k, double previous,
                       std::span<const CausalReplay<double>::Input> in) {
  double v = k == 0 ? static_cast<double>(l) : previous + 1;
  for (const auto& x : in)
    v = x.let_go ? v + 0.25 * (x.tag + 1) : std::max(v, x.value + 10) * 0.75 + 0.5 * x.value;
  return v;
}

inline Bytes replay(Transport& t, const Graph& g) {
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

// Random declarations: L locations, links between random events (acyclic: only from an earlier
// to a later "step"), instances fed and needed by random members.
inline Graph random_graph(std::uint64_t seed, bool acyclic) {
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

// Each process's bytes joined in process order.
inline Result joined(const std::vector<Bytes>& parts) {
  Result all;
  for (const Bytes& b : parts) {
    const Result some = decode<Result>(b);
    all.insert(all.end(), some.begin(), some.end());
  }
  return all;
}

inline std::vector<std::uint64_t> bits_of(const Result& r) {
  std::vector<std::uint64_t> b;
  for (double d : r) b.push_back(std::bit_cast<std::uint64_t>(d));
  return b;
}

}  // namespace waitlab::engine::causal_checks
