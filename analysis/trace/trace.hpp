// waitlab::trace — the event model every analysis reads (ALGORITHMS.md §1).
//
// Promise: a Trace keeps definitions (regions, communicators, strings) apart from
// compact per-location event arrays of fixed-size records that refer to the
// definitions by id, as OTF2 does. Times are double seconds. A simulated trace also
// carries ground truth: for every compute interval, its nominal duration and the
// time that each perturbation cause added to it. Nothing here knows SimGrid or OTF2.
#pragma once

#include <array>
#include <cstddef>
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

// The deepest nesting of regions (Enters not yet left) that a trace reader accepts on one
// location; deeper is refused as an InputError. Real call stacks stay far below it; the
// analyses pay for every level with a call path whose cost grows with its depth (a million
// nested regions on one line of a Paraver file took more memory than the machine has, 10,000
// took 1.3 GB and 21 s to analyse).
inline constexpr std::size_t kMaxRegionDepth = 4096;
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
  Gatherv,     // the v-collectives: counts per rank (their CollEnd holds the call's totals)
  Scatterv,
  Allgatherv,
  Alltoallv,
  Count_  // number of values, keep last
};

// Canonical MPI name ("MPI_Send"), or "" for None.
std::string_view mpi_name(MpiOp op);
// Inverse of mpi_name; returns None for an unknown name.
MpiOp mpi_op_from_name(std::string_view name);
bool is_collective(MpiOp op);
bool is_point_to_point(MpiOp op);
// The fixed-size collective a v-collective synchronises like (MPI_Gatherv -> MPI_Gather,
// MPI_Scatterv -> MPI_Scatter, MPI_Allgatherv -> MPI_Allgather, MPI_Alltoallv -> MPI_Alltoall);
// every other op is its own. The analyses (wait states, dependencies) use it. Inline: the
// PMPI profiler's estimator core uses it without the trace library.
inline MpiOp base_collective(MpiOp op) {
  switch (op) {
    case MpiOp::Gatherv: return MpiOp::Gather;
    case MpiOp::Scatterv: return MpiOp::Scatter;
    case MpiOp::Allgatherv: return MpiOp::Allgather;
    case MpiOp::Alltoallv: return MpiOp::Alltoall;
    default: return op;
  }
}

// MPI_Scan and MPI_Exscan: each rank waits only for the lower ranks.
inline bool is_scan(MpiOp op) { return op == MpiOp::Scan || op == MpiOp::Exscan; }

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

// The definitions an event's `ref` names: regions (Enter, Leave), communicators (the message and
// collective kinds), or none (IsendComplete, IrecvPost: their request id identifies them).
enum class RefKind : std::uint8_t { None = 0, Region, Communicator };
RefKind ref_kind(EventKind k);
std::string_view ref_kind_name(RefKind k);  // "region", "communicator", "" for None

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
  // An MPI function: one the event model knows (op), or any other the measuring tool names
  // as MPI (file "MPI": MPI_Comm_rank, MPI_Comm_dup, MPI_Cart_create, ... — no communication,
  // but time in MPI all the same).
  bool is_mpi() const { return op != MpiOp::None || file == "MPI"; }
  bool operator==(const Region&) const = default;
};

struct Communicator {
  std::string name;
  std::vector<Rank> members;  // member i has local rank i (global ranks); empty for
                              // MPI_COMM_SELF as OTF2 readers find it (each rank alone)
  bool operator==(const Communicator&) const = default;
};

// A stretch of a location's time that its measurement tool marks as not useful although the
// location is in no MPI call (measured traces only): a Paraver state other than Running
// outside MPI — not created (2), OpenMP synchronisation (5) or scheduling (7), I/O and trace
// flushing (12), tracing disabled (14), idle (0), ... — or Score-P's measurement overhead
// (kStateOverhead) — or time no record of the location covers (kStateNoRecord: a Paraver
// thread before its first record, between records, after its last one: the location does not
// exist there, as Dimemas replays it). `state` is the tool's code (the Paraver state value).
// Intervals of one location are ordered by begin and do not overlap; they may overlap MPI
// calls (a flush inside an MPI call): the analyses take the union.
struct StateInterval {
  Time begin = 0;
  Time end = 0;
  std::uint32_t state = 0;
  bool operator==(const StateInterval&) const = default;
};
inline constexpr std::uint32_t kParaverRunning = 1;
inline constexpr std::uint32_t kStateOverhead = 1000;  // measurement overhead (Score-P buffer flush, ...)
inline constexpr std::uint32_t kStateNoRecord = 1001;  // no record covers it (Paraver: Idle as Paraver shows it)

// Hardware counters read at `time` on one location: what each counted since the location's
// previous sample (Extrae writes such deltas at every burst boundary; accumulated values, as
// Score-P writes them, become deltas when read). The delta belongs to the stretch that ends at
// `time`. Trace::counters says which of the two the trace has.
struct CounterSample {
  Time time = 0;
  std::uint64_t instructions = 0;  // PAPI_TOT_INS
  std::uint64_t cycles = 0;        // PAPI_TOT_CYC
  bool operator==(const CounterSample&) const = default;
};
inline constexpr std::uint8_t kHasInstructions = 1;
inline constexpr std::uint8_t kHasCycles = 2;

// The OpenMP structure of a location (measured traces: Extrae's Paraver events), kept apart from
// `events` so that the MPI analyses' call paths do not change: a parallel region (60000001 on
// the rank's master thread: the construct from its opening to its closing, fork and join
// included; id = its kind: 1 DO, 2 SECTIONS, 3 REGION), an executed parallel function
// (60000018, on every thread of the team: the outlined body; id = Extrae's function id) or an
// executed task function (60000023; id = its function id). Ordered by begin (ties: by kind);
// intervals of one kind do not overlap (a new value closes the open one, as Paraver's "last
// event value" reads them).
enum class OmpKind : std::uint8_t { ParallelRegion = 0, ParallelFunction, Task, Count_ };
std::string_view omp_kind_name(OmpKind k);  // "parallel region", "parallel function", "task"
struct OmpInterval {
  Time begin = 0;
  Time end = 0;
  OmpKind kind = OmpKind::ParallelRegion;
  std::uint32_t id = 0;
  bool operator==(const OmpInterval&) const = default;
};

struct Location {
  Rank rank = 0;
  std::int32_t thread = 0;          // 0: the rank's MPI thread; k ≥ 1: its (k+1)-th thread
  std::vector<Event> events;        // ordered by time (ties keep program order)
  std::vector<ComputeTruth> truth;  // ordered by start; empty for measured traces
  std::vector<StateInterval> states;     // not useful outside MPI (measured traces; ordered)
  std::vector<CounterSample> counters;   // ordered by time (measured traces with counters)
  std::vector<OmpInterval> omp;          // OpenMP regions, functions, tasks (ordered by begin)
  bool operator==(const Location&) const = default;
};

// Where a trace comes from: it decides the conventions the efficiency metrics follow by
// default (ALGORITHMS.md §6): waitlab's own for simulated runs, BSC's for Extrae's Paraver
// traces, Scalasca/Cube's for Score-P's OTF2 archives.
enum class Origin : std::uint8_t { Simulated = 0, Extrae, ScoreP, Unknown };
std::string_view origin_name(Origin o);  // "simulated", "extrae", "scorep", "unknown"

struct Definitions {
  std::vector<Region> regions;
  std::vector<Communicator> comms;  // comms[0] is MPI_COMM_WORLD

  // Returns the id of the region with this name and op, adding it if new.
  RegionId region(std::string_view name, MpiOp op = MpiOp::None);
  // Id of the canonical MPI region for op (adds it if new).
  RegionId mpi_region(MpiOp op) { return region(mpi_name(op), op); }
  // Returns the id of the named region, or -1 if absent.
  std::int64_t find_region(std::string_view name) const;
  // Whether e.ref names a region or communicator defined here (true when it names none).
  bool defines_ref(const Event& e) const;
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
  std::vector<Location> locations;  // locations[r].rank == r, thread 0: the MPI analyses' ranks
  // Further threads of the ranks (OpenMP workers of a hybrid run), ordered by (rank, thread),
  // each with thread ≥ 1. The MPI analyses (matching, wait states, delay, critical path) read
  // `locations` only; the efficiency metrics count every thread as a unit (BSC's convention).
  std::vector<Location> threads;
  std::vector<Attribute> attributes;
  bool has_truth = false;
  Origin origin = Origin::Simulated;
  // The time range the trace declares for the whole run (Paraver: 0 to the header's end time;
  // OTF2: the clock properties' global offset and length), or span_end < span_begin when it
  // declares none.
  Time span_begin = 0;
  Time span_end = -1;
  std::uint8_t counters = 0;  // kHasInstructions | kHasCycles: what CounterSample values hold

  std::size_t ranks() const { return locations.size(); }
  std::size_t event_count() const;  // events of `locations` (not `threads`)
  bool has_declared_span() const { return span_end >= span_begin; }
  // Earliest event time and latest event time over all locations (0,0 if empty).
  Time begin_time() const;
  Time end_time() const;
  std::string attribute(std::string_view key) const;  // "" if absent
  // Sets the attribute `key` to `value`: in place if present, else appended.
  void set_attribute(const std::string& key, const std::string& value);
  bool operator==(const Trace&) const = default;
};

}  // namespace waitlab::trace
