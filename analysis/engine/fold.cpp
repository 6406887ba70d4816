// waitlab::engine — the location-order sum (fold.hpp).
#include "analysis/engine/fold.hpp"

namespace waitlab::engine {

double location_order_sum(Transport& transport, LocationRange owned, std::span<const double> values) {
  const std::vector<double> all = gather_in_location_order(transport, owned, values);
  double sum = 0;
  for (const double v : all) sum += v;
  return decode<double>(transport.broadcast(encode(sum)));
}

}  // namespace waitlab::engine
