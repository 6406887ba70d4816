// waitlab::engine — the one-process transport (serial_transport.hpp).
#include "analysis/engine/serial_transport.hpp"

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace waitlab::engine {

void SerialTransport::post_unchecked(int /*destination: always 0*/, Channel channel, std::span<const std::byte> bytes) {
  Bytes& buffer = posted_[channel];
  buffer.insert(buffer.end(), bytes.begin(), bytes.end());
}

void SerialTransport::flush() {
  for (auto& [channel, buffer] : posted_) arrived_[channel].push_back(std::move(buffer));
  posted_.clear();
}

Parcel SerialTransport::receive(Channel channel) {
  auto it = arrived_.find(channel);
  if (it == arrived_.end() || it->second.empty())
    throw std::logic_error("serial transport: nothing to receive on channel " + std::to_string(channel) +
                           " (it would wait forever)");
  Parcel parcel{0, std::move(it->second.front())};
  it->second.pop_front();
  return parcel;
}

Parcel SerialTransport::receive(Channel channel, int source) {
  if (source != 0) throw std::invalid_argument("serial transport: source " + std::to_string(source) + " of 1");
  return receive(channel);
}

void SerialTransport::abort(int exit_code) { std::exit(exit_code); }

}  // namespace waitlab::engine
