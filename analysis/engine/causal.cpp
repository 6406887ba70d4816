// waitlab::engine — the causal replay's routes of instance values (causal.hpp).
#include "analysis/engine/causal.hpp"

namespace waitlab::engine {

// Process 0 gathers every process's (instance, feeds, needs) and broadcasts them all, each entry
// as process << 40 | instance << 2 | needs << 1 | feeds.
InstanceRoutes instance_routes(Transport& transport, const std::vector<std::uint8_t>& feeds,
                               const std::vector<std::uint8_t>& needs) {
  const std::size_t n = feeds.size();
  InstanceRoutes routes;
  routes.feeders.assign(n, 0);
  routes.needers.assign(n, {});
  std::vector<std::uint64_t> mine;
  for (std::size_t i = 0; i < n; ++i)
    if (feeds[i] != 0 || needs[i] != 0)
      mine.push_back(static_cast<std::uint64_t>(i) << 2 | (needs[i] != 0 ? 2u : 0u) |
                     (feeds[i] != 0 ? 1u : 0u));
  std::vector<std::uint64_t> all;
  if (transport.size() == 1) {
    all = std::move(mine);
  } else {
    const std::vector<Bytes> parts = transport.gather(encode(mine));
    for (std::size_t p = 0; p < parts.size(); ++p)
      for (const std::uint64_t e : decode<std::vector<std::uint64_t>>(parts[p])) all.push_back(p << 40 | e);
    all = decode<std::vector<std::uint64_t>>(transport.broadcast(encode(all)));
  }
  const std::uint64_t self = static_cast<std::uint64_t>(transport.self());
  const std::uint64_t mask = (std::uint64_t{1} << 40) - 1;
  for (const std::uint64_t e : all) {
    const std::size_t i = static_cast<std::size_t>((e & mask) >> 2);
    if ((e & 1) != 0) ++routes.feeders[i];
    if ((e & 2) != 0 && (e >> 40) != self && feeds[i] != 0)
      routes.needers[i].push_back(static_cast<int>(e >> 40));
  }
  return routes;
}

}  // namespace waitlab::engine
