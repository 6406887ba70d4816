// waitlab::engine — the order-free exchange of records between locations (plan §6.3, item 1).
//
// Promise: in one round, each location owned by this process emits records for any locations
// under a key; deliver() — called by every process, also those owning no location — sends them,
// receives what every process emitted for this process's locations, and hands each location
// its records sorted by (source location, key), records of one source under equal keys in the
// order that source emitted them. What a location receives is therefore a function of what was
// emitted only: neither the partition, nor the number of processes, nor the order in which
// parcels arrive can show in it (rules D1 and D2). Each round sends one parcel from every
// process to every process (possibly empty), on the exchange's channel.
#pragma once

#include <cstdint>
#include <map>
#include <tuple>
#include <span>
#include <vector>

#include "analysis/engine/partition.hpp"
#include "analysis/engine/transport.hpp"

namespace waitlab::engine {

struct ExchangeRecord {
  Location source = 0;
  std::uint64_t key = 0;
  Bytes payload;
  bool operator==(const ExchangeRecord&) const = default;
};

// What this process's locations received in one round.
class Inbox {
 public:
  Inbox(LocationRange owned, std::vector<std::vector<ExchangeRecord>> records)
      : owned_(owned), records_(std::move(records)) {}
  // The records for `target` (an owned location; throws std::out_of_range otherwise), sorted.
  std::span<const ExchangeRecord> of(Location target) const;

 private:
  LocationRange owned_;
  std::vector<std::vector<ExchangeRecord>> records_;  // per owned location, from owned_.first
};

class Exchange {
 public:
  Exchange(Transport& transport, const Partition& partition, Channel channel);
  // Queues a record from `source` (owned here) for `target` (any location); throws
  // std::out_of_range otherwise.
  void emit(Location source, Location target, std::uint64_t key, std::span<const std::byte> payload);
  // The record from `source` for `target` under `key` that this round is building: what is put
  // into it travels as one record (a pair's values in an order both sides know, say).
  ByteWriter& record(Location source, Location target, std::uint64_t key);
  // The round: every process calls it; afterwards the exchange is empty for the next round.
  Inbox deliver();

 private:
  Transport& transport_;
  const Partition& partition_;
  Channel channel_;
  std::vector<ByteWriter> outgoing_;  // per destination process
  std::map<std::tuple<Location, Location, std::uint64_t>, ByteWriter> building_;  // record()'s
  ByteWriter* last_ = nullptr;  // the record record() gave last (a map's elements stay put)
  std::tuple<Location, Location, std::uint64_t> last_where_{};
};

}  // namespace waitlab::engine
