// waitlab::trace — the event model every analysis reads (ALGORITHMS.md §1).
//
// Promise: a Trace keeps definitions (regions, communicators, strings) apart from
// compact per-location event arrays of fixed-size records that refer to the
// definitions by id, as OTF2 does. Times are double seconds. A simulated trace also
// carries ground truth: for every compute interval, its nominal duration and the
// time that each perturbation cause added to it. Nothing here knows SimGrid or OTF2.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace waitlab::trace {

using Time = double;      // seconds
using Rank = std::int32_t;
using RegionId = std::uint32_t;
using CommId = std::uint32_t;

inline constexpr Rank kNoRank = -1;
inline constexpr CommId kCommWorld = 0;  // communicator 0 is always MPI_COMM_WORLD

// The MPI functions the event model distinguishes. `None` marks a user region.
enum class MpiOp : std::uint8_t {
  None = 0,
  Init,
  Finalize,
  Send,
  Ssend,
  Recv,
  Isend,
  Irecv,
  Wait,
  Waitall,
  Sendrecv,
  Barrier,
  Bcast,
  Reduce,
  Allreduce,
  Gather,
  Scatter,
  Allgather,
  Alltoall,
  Scan,
  Exscan,
  ReduceScatter,
  Count_  // number of values, keep last
};

// Canonical MPI name ("MPI_Send"), or "" for None.
std::string_view mpi_name(MpiOp op);
// Inverse of mpi_name; returns None for an unknown name.
MpiOp mpi_op_from_name(std::string_view name);
bool is_collective(MpiOp op);
bool is_point_to_point(MpiOp op);

enum class EventKind : std::uint8_t {
  Enter = 0,
  Leave,
  Send,           // peer = destination
  Recv,           // peer = source
  IsendStart,     // peer = destination, aux = request id
  IsendComplete,  // aux = request id
  IrecvPost,      // aux = request id
  IrecvComplete,  // peer = source, aux = request id
  CollBegin,
  CollEnd,  // op, ref = communicator, peer = root (kNoRank if none), bytes = sent, aux = received
};
std::string_view event_kind_name(EventKind k);

// One event: a fixed-size record of 40 bytes. Field meaning depends on `kind`:
//   Enter/Leave: ref = region id.
//   Send/Recv/IsendStart/IrecvComplete: ref = communicator, peer, tag, bytes; aux = request id
//     for the non-blocking kinds.
//   IsendComplete/IrecvPost: aux = request id (IrecvPost may carry the posted source/tag).
//   CollBegin: ref = communicator, op.
//   CollEnd: ref = communicator, op, peer = root or kNoRank, bytes = sent, aux = received.
//   flags: Enter of MPI_Wait/MPI_Waitall: kTestedComplete (simulated runs with run.minprofile).
struct Event {
  Time time = 0;
  std::uint64_t bytes = 0;
  std::uint64_t aux = 0;
  EventKind kind = EventKind::Enter;
  MpiOp op = MpiOp::None;
  std::uint16_t flags = 0;
  std::uint32_t ref = 0;
  Rank peer = kNoRank;
  std::int32_t tag = 0;

  bool operator==(const Event&) const = default;
};
// Event::flags bit: a test at the call's entry found every request it completes already
// complete (what a profiler's MPI_Testall before MPI_Waitall reports; costs no simulated time).
inline constexpr std::uint16_t kTestedComplete = 1;
static_assert(sizeof(Event) == 40, "Event must stay a compact 40-byte record");

// An event from its fields, in the order the table above names them.
inline Event make_event(Time t, EventKind kind, MpiOp op = MpiOp::None, std::uint32_t ref = 0,
                        Rank peer = kNoRank, std::int32_t tag = 0, std::uint64_t bytes = 0,
                        std::uint64_t aux = 0) {
  Event e;
  e.time = t;
  e.kind = kind;
  e.op = op;
  e.ref = ref;
  e.peer = peer;
  e.tag = tag;
  e.bytes = bytes;
  e.aux = aux;
  return e;
}

// Why a compute interval took longer than nominal.
enum class Cause : std::uint8_t { Imbalance = 0, Noise = 1, Delay = 2, Count_ };
inline constexpr std::size_t kCauseCount = static_cast<std::size_t>(Cause::Count_);
std::string_view cause_name(Cause c);

// Ground truth of one compute interval (simulated traces only).
struct ComputeTruth {
  Time start = 0;
  Time end = 0;
  double nominal = 0;                               // seconds the workload asked for
  std::array<double, kCauseCount> injected{};       // seconds added, by cause
  RegionId region = 0;                              // innermost user region around it
  std::int32_t iteration = -1;                      // workload iteration, -1 if none

  double injected_total() const { return injected[0] + injected[1] + injected[2]; }
  bool operator==(const ComputeTruth&) const = default;
};

struct Region {
  std::string name;
  MpiOp op = MpiOp::None;  // None for user regions
  std::string file;        // source file; "MPI" for MPI regions (as Score-P writes)
  bool operator==(const Region&) const = default;
};

struct Communicator {
  std::string name;
  std::vector<Rank> members;  // member i has local rank i (global ranks); empty for
                              // MPI_COMM_SELF as OTF2 readers find it (each rank alone)
  bool operator==(const Communicator&) const = default;
};

struct Location {
  Rank rank = 0;
  std::vector<Event> events;        // ordered by time (ties keep program order)
  std::vector<ComputeTruth> truth;  // ordered by start; empty for measured traces
  bool operator==(const Location&) const = default;
};

struct Definitions {
  std::vector<Region> regions;
  std::vector<Communicator> comms;  // comms[0] is MPI_COMM_WORLD

  // Returns the id of the region with this name and op, adding it if new.
  RegionId region(std::string_view name, MpiOp op = MpiOp::None);
  // Id of the canonical MPI region for op (adds it if new).
  RegionId mpi_region(MpiOp op) { return region(mpi_name(op), op); }
  // Returns the id of the named region, or -1 if absent.
  std::int64_t find_region(std::string_view name) const;
  bool operator==(const Definitions&) const = default;
};

// Key/value metadata describing where a trace came from (scenario, platform, seed, ...).
struct Attribute {
  std::string key;
  std::string value;
  bool operator==(const Attribute&) const = default;
};

struct Trace {
  Definitions defs;
  std::vector<Location> locations;  // locations[r].rank == r
  std::vector<Attribute> attributes;
  bool has_truth = false;

  std::size_t ranks() const { return locations.size(); }
  std::size_t event_count() const;
  // Earliest event time and latest event time over all locations (0,0 if empty).
  Time begin_time() const;
  Time end_time() const;
  std::string attribute(std::string_view key) const;  // "" if absent
  bool operator==(const Trace&) const = default;
};

}  // namespace waitlab::trace
