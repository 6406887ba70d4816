// waitlab::engine — the order-free exchange (exchange.hpp).
#include "analysis/engine/exchange.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <tuple>

namespace waitlab::engine {

std::span<const ExchangeRecord> Inbox::of(Location target) const {
  if (!owned_.holds(target))
    throw std::out_of_range("exchange: location " + std::to_string(target) + " is not owned here");
  return records_[static_cast<std::size_t>(target - owned_.first)];
}

Exchange::Exchange(Transport& transport, const Partition& partition, Channel channel)
    : transport_(transport), partition_(partition), channel_(channel),
      outgoing_(static_cast<std::size_t>(transport.size())) {
  if (partition.processes() != transport.size())
    throw std::invalid_argument("exchange: a partition for " + std::to_string(partition.processes()) +
                                " processes on a transport of " + std::to_string(transport.size()));
}

void Exchange::emit(Location source, Location target, std::uint64_t key, std::span<const std::byte> payload) {
  if (!partition_.range(transport_.self()).holds(source))
    throw std::out_of_range("exchange: location " + std::to_string(source) + " is not owned here");
  const int owner = partition_.owner(target);  // checks the target
  // Each record: source, target, key, payload length, payload.
  outgoing_[static_cast<std::size_t>(owner)]
      .put(source)
      .put(target)
      .put(key)
      .put(static_cast<std::uint64_t>(payload.size()))
      .put_raw(payload);
}

ByteWriter& Exchange::record(Location source, Location target, std::uint64_t key) {
  const std::tuple<Location, Location, std::uint64_t> where{source, target, key};
  if (last_ == nullptr || last_where_ != where) {  // most records continue the one before
    last_ = &building_[where];
    last_where_ = where;
  }
  return *last_;
}

Inbox Exchange::deliver() {
  for (const auto& [where, writer] : building_)
    emit(std::get<0>(where), std::get<1>(where), std::get<2>(where), writer.bytes());
  building_.clear();
  last_ = nullptr;
  for (int d = 0; d < transport_.size(); ++d) {
    auto& writer = outgoing_[static_cast<std::size_t>(d)];
    transport_.post(d, channel_, writer.bytes());
    writer = ByteWriter();
  }
  transport_.flush();
  const LocationRange owned = partition_.range(transport_.self());
  std::vector<std::vector<ExchangeRecord>> records(static_cast<std::size_t>(owned.size()));
  for (int source = 0; source < transport_.size(); ++source) {  // one parcel from each, this round's
    const Parcel parcel = transport_.receive(channel_, source);
    ByteReader in(parcel.bytes);
    while (!in.done()) {
      ExchangeRecord r;
      r.source = in.get<Location>();
      const auto target = in.get<Location>();
      r.key = in.get<std::uint64_t>();
      const auto raw = in.get_raw(static_cast<std::size_t>(in.get<std::uint64_t>()));
      r.payload.assign(raw.begin(), raw.end());
      if (!owned.holds(target))
        throw std::runtime_error("exchange: a record for location " + std::to_string(target) + " reached process " +
                                 std::to_string(transport_.self()));
      records[static_cast<std::size_t>(target - owned.first)].push_back(std::move(r));
    }
  }
  // A source's records come in one parcel, in emission order: a stable sort keeps that order.
  for (auto& list : records)
    std::stable_sort(list.begin(), list.end(), [](const ExchangeRecord& a, const ExchangeRecord& b) {
      return std::tie(a.source, a.key) < std::tie(b.source, b.key);
    });
  return Inbox(owned, std::move(records));
}

}  // namespace waitlab::engine
