// waitlab::engine — the transport of a run of one process (the serial analysis).
//
// Promise: size() is 1; what is posted to process 0 is queued and received, after a flush, in
// the order flushed on each channel; every collective returns its own argument (through the
// same code as any other transport). receive() with nothing queued on the channel would wait
// forever: it throws std::logic_error instead. abort() ends the program with the exit code.
#pragma once

#include <deque>
#include <map>

#include "analysis/engine/transport.hpp"

namespace waitlab::engine {

class SerialTransport final : public Transport {
 public:
  int size() const override { return 1; }
  int self() const override { return 0; }
  void flush() override;
  Parcel receive(Channel channel) override;
  Parcel receive(Channel channel, int source) override;  // source 0
  [[noreturn]] void abort(int exit_code) override;

 protected:
  void post_unchecked(int destination, Channel channel, std::span<const std::byte> bytes) override;

 private:
  std::map<Channel, Bytes> posted_;  // the buffers since the last flush
  std::map<Channel, std::deque<Bytes>> arrived_;
};

}  // namespace waitlab::engine
