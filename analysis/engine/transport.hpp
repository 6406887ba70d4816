// waitlab::engine — how the engine's processes talk to each other.
//
// Promise: a Transport is one process's end of a run of size() processes (numbered
// 0..size()−1; self() is this one). Point to point: post() appends bytes to this process's
// buffer for a destination and channel and never blocks; flush() sends every buffer posted to
// since the last flush as one parcel (also when it holds no bytes); receive() hands over one
// parcel that arrived on a channel — from any source, or from the one named — waiting for one if
// none has. Parcels from one source on one channel arrive in the order they were flushed; parcels
// from different sources arrive in any order — what the engine computes must not depend on it. The collectives are exact (rule D5 of
// docs/plans/issue-32-replay-engine.md): integer sums, min/max of doubles and the maximum with
// its location, byte gathers to process 0 and broadcasts from it, and a chained fold in process
// order; there is deliberately no floating-point sum. Every process calls each collective, in
// the same order. Their default forms run over post/receive on channels of their own (at
// kFirstReservedChannel and above); a transport may replace them with native ones.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <vector>

#include "analysis/engine/bytes.hpp"
#include "analysis/engine/partition.hpp"

namespace waitlab::engine {

using Channel = std::uint16_t;
inline constexpr Channel kFirstReservedChannel = 0xFF00;  // the collectives' channels

struct Parcel {
  int source = 0;
  Bytes bytes;
};

// The largest value and the location holding it; on equal values the lowest location (D5).
struct MaxLoc {
  double value = 0;
  Location location = 0;
  bool operator==(const MaxLoc&) const = default;
};

// Exact combinations, commutative and associative down to the bits (so the order in which
// processes' values meet cannot show): a NaN wins (as the one quiet NaN), min prefers −0.0 to
// +0.0 and max +0.0 to −0.0; maxloc counts a NaN as the largest value.
double exact_min(double a, double b);
double exact_max(double a, double b);
MaxLoc exact_maxloc(const MaxLoc& a, const MaxLoc& b);

// What abort() throws where it cannot end the program (VirtualTransport): the exit code asked for.
struct Aborted : std::runtime_error {
  explicit Aborted(int exit_code);
  int code;
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual int size() const = 0;
  virtual int self() const = 0;

  // Throws std::invalid_argument for a destination out of range or a reserved channel.
  void post(int destination, Channel channel, std::span<const std::byte> bytes);
  virtual void flush() = 0;
  virtual Parcel receive(Channel channel) = 0;
  // The oldest parcel from `source` on the channel (a protocol that expects one parcel from each
  // process per round takes them this way: a fast process may already have sent the next round's).
  virtual Parcel receive(Channel channel, int source) = 0;
  // Ends the whole run with this exit code (every process).
  [[noreturn]] virtual void abort(int exit_code) = 0;

  virtual std::uint64_t sum(std::uint64_t value);  // modulo 2^64
  virtual double min(double value);
  virtual double max(double value);
  virtual MaxLoc maxloc(const MaxLoc& value);
  // Every process's bytes, in process order, on process 0; an empty list on the others.
  virtual std::vector<Bytes> gather(std::span<const std::byte> bytes);
  // Process 0's bytes on every process (the others' argument is ignored).
  virtual Bytes broadcast(std::span<const std::byte> bytes);
  // Process 0 applies step to `initial` (the others' is ignored), each next process to what
  // its predecessor's step returned; every process gets what the last one's returned.
  virtual Bytes chain(Bytes initial, const std::function<Bytes(Bytes)>& step);

 protected:
  // post() without the checks: the collectives' default forms use the reserved channels.
  virtual void post_unchecked(int destination, Channel channel, std::span<const std::byte> bytes) = 0;

 private:
  // Gathers every process's bytes to process 0, which combines them (in process order) into
  // what is broadcast to all.
  Bytes combine_all(Bytes mine, const std::function<Bytes(const std::vector<Bytes>&)>& combine);
};

}  // namespace waitlab::engine
