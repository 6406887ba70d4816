// waitlab::engine — folds over locations that give the serial result's bits for any number of
// processes (plan §5.3, rules D3 and D4).
//
// Promise: chained_fold is the continuing fold (D3a): the accumulator travels along the
// processes in location order and each owned location continues it, so the result is
// bit-identical to `for (l = 0; l < L; ++l) step(l, acc)` in one process. gather_in_location_order
// brings one value per location to process 0 in location order — the rows a writer folds while
// it writes them (D4). location_order_sum is the partial fold (D3b) of one double per location:
// added on process 0 in location order, so the same bits as the serial loop; median an exact
// order statistic of values spread over the processes. Every process calls
// each of them (collectives). An accumulator or value is a trivially copyable type or a
// std::vector of one.
#pragma once

#include <algorithm>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

#include "analysis/engine/bytes.hpp"
#include "analysis/engine/partition.hpp"
#include "analysis/engine/transport.hpp"

namespace waitlab::engine {

template <typename Acc, typename Step>
Acc chained_fold(Transport& transport, LocationRange owned, Acc initial, Step&& step) {
  const Bytes result = transport.chain(encode(initial), [&](Bytes in) {
    Acc acc = decode<Acc>(in);
    for (Location l = owned.first; l < owned.last; ++l) step(l, acc);
    return encode(acc);
  });
  return decode<Acc>(result);
}

// `values` holds one value per owned location, in order. Process 0 gets every location's.
template <typename T>
std::vector<T> gather_in_location_order(Transport& transport, LocationRange owned, std::span<const T> values) {
  if (values.size() != static_cast<std::size_t>(owned.size()))
    throw std::invalid_argument("fold: one value per owned location expected");
  const std::vector<Bytes> parts = transport.gather(encode(std::vector<T>(values.begin(), values.end())));
  std::vector<T> all;
  for (const Bytes& part : parts) {  // process order = location order: the ranges are contiguous
    std::vector<T> some = decode<std::vector<T>>(part);
    all.insert(all.end(), some.begin(), some.end());
  }
  return all;
}

// The sum of `values` (one per owned location) over all locations, on every process.
double location_order_sum(Transport& transport, LocationRange owned, std::span<const double> values);

// The median of every process's `values` together (0 if there are none; the mean of the middle
// two if their number is even), on every process: an exact order statistic, found by eight
// rounds of 256-bucket histograms of the values' bytes (most significant first, in an order-
// preserving map of doubles to integers) summed over the processes — what is per value never
// leaves its process. The same bits as sorting all the values in one process; −0 counts as +0.
double median(Transport& transport, std::span<const double> values);

// Table rows (each process's sorted by `less`, the keys of all processes distinct) on process 0,
// all of them in `less` order — the serial table (rule D4: process 0 writes and folds them); an
// empty list on the others. Every process calls it.
template <typename Row, typename Less>
std::vector<Row> gather_rows(Transport& transport, const std::vector<Row>& rows, Less less) {
  const std::vector<Bytes> parts = transport.gather(encode(rows));
  std::vector<Row> all;
  for (const Bytes& part : parts) {
    std::vector<Row> some = decode<std::vector<Row>>(part);
    all.insert(all.end(), some.begin(), some.end());
  }
  std::sort(all.begin(), all.end(), less);
  return all;
}

}  // namespace waitlab::engine
