// waitlab::engine — the transport of one MPI process (plan §6.2, "MPI realisation").
//
// Promise: MpiTransport is this process's end of a run over the processes of a communicator
// (MPI_COMM_WORLD unless another is given; MPI must be running — the constructor throws
// std::logic_error otherwise — and outlive the transport): size() and self() are the
// communicator's. It talks on a private duplicate of the communicator, so no other traffic of
// the program can meet its parcels. post() appends to a buffer per
// (destination, channel); flush() sends each buffer as one parcel (also an empty one) with a
// nonblocking send whose tag is the channel and keeps the bytes until the send completes, so a
// flush never waits for a receiver and every process may flush and then receive; receive()
// probes for a parcel on the channel's tag (from any source, or the one named) and receives
// exactly it. MPI's non-overtaking rule keeps one source's parcels on one channel in flush
// order. The collectives are MPI's own where they are exact: the sum over MPI_UINT64_T with
// MPI_SUM, min, max and maxloc with commutative user operations that call exact_min, exact_max
// and exact_maxloc (MPI_MIN/MAX/MAXLOC promise nothing about NaN or the sign of zero), gather
// with MPI_Gatherv and broadcast with MPI_Bcast (the sizes first); chain is the default form.
// A parcel, and the bytes of a gather or broadcast, hold at most INT_MAX bytes (MPI counts are
// ints): more throws std::length_error (on every process for the collectives). abort() is
// MPI_Abort on the communicator. traffic() counts the parcels this process sent and received
// (and their bytes) and the native collectives it called with the bytes it contributed.
// The destructor waits for this process's parcels to be sent (each must be received) and frees
// the duplicate; it must run before MPI_Finalize.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "analysis/engine/transport.hpp"

namespace waitlab::engine {

// What this process sent and received. Parcels to itself go through MPI too (its loopback) but
// cross no network: they are counted apart.
struct MpiTraffic {
  std::uint64_t parcels_sent = 0;      // to other processes
  std::uint64_t bytes_sent = 0;        // the parcels' bytes (MPI's envelopes not counted)
  std::uint64_t parcels_received = 0;  // from other processes
  std::uint64_t bytes_received = 0;
  std::uint64_t parcels_to_self = 0;
  std::uint64_t bytes_to_self = 0;
  std::uint64_t collectives = 0;       // MPI collective calls (a gather makes three, a broadcast two)
  std::uint64_t collective_bytes = 0;  // the bytes this process contributed to them
};

class MpiTransport final : public Transport {
 public:
  explicit MpiTransport(MPI_Comm communicator = MPI_COMM_WORLD);
  ~MpiTransport() override;
  MpiTransport(const MpiTransport&) = delete;
  MpiTransport& operator=(const MpiTransport&) = delete;

  int size() const override { return size_; }
  int self() const override { return self_; }
  void flush() override;
  Parcel receive(Channel channel) override;
  Parcel receive(Channel channel, int source) override;
  [[noreturn]] void abort(int exit_code) override;

  std::uint64_t sum(std::uint64_t value) override;
  double min(double value) override;
  double max(double value) override;
  MaxLoc maxloc(const MaxLoc& value) override;
  std::vector<Bytes> gather(std::span<const std::byte> bytes) override;
  Bytes broadcast(std::span<const std::byte> bytes) override;

  const MpiTraffic& traffic() const { return traffic_; }

 protected:
  void post_unchecked(int destination, Channel channel, std::span<const std::byte> bytes) override;

 private:
  Parcel take(Channel channel, int source);  // source or MPI_ANY_SOURCE
  void reap_completed_sends();
  double allreduce_double(double value, MPI_Op op);

  MPI_Comm comm_ = MPI_COMM_NULL;
  int size_ = 0;
  int self_ = 0;
  MPI_Op min_ = MPI_OP_NULL, max_ = MPI_OP_NULL, maxloc_ = MPI_OP_NULL;
  MPI_Datatype maxloc_type_ = MPI_DATATYPE_NULL;
  std::map<std::pair<int, Channel>, Bytes> posted_;  // the buffers since the last flush
  // The sends not known to be complete and their bytes (kept alive until they are).
  std::vector<MPI_Request> sending_;
  std::vector<Bytes> sending_bytes_;
  MpiTraffic traffic_;
};

}  // namespace waitlab::engine
