// waitlab::trace — Paraver traces (.prv + .pcf + .row; FORMATS.md §2) with MPI encoded as
// Extrae encodes it, written for Paraver and read back from waitlab or from Extrae.
//
// Promise: write_paraver(trace, "X.prv") writes X.prv, X.pcf and X.row, each atomically,
// byte-identical for the same trace (a fixed date in the header, no host clock). Times are
// integer nanoseconds. Per rank (task r+1, one thread, CPU r+1 on one node): Extrae's state
// records (Running outside MPI, the Extrae state of each MPI call inside), the MPI call
// events (types 50000001/2/3 with Extrae's value ids at Enter, 0 at Leave), the collective
// details at the call's Enter (50100001 sent, 50100002 received, 50100004 communicator,
// 50100003 = 1 on the root only, as Extrae writes it), user regions as 60000019 "User
// function" (value = region id + 1; at Leave the enclosing region's value or 0), and one
// communication record per matched point-to-point message (logical send = the send call's
// Enter, physical send = the Send/IsendStart time, logical receive = the receive-posting
// call's Enter, physical receive = the Recv/IrecvComplete time). What Extrae's encoding
// cannot say (request ids, where a request completes, the posted source/tag/size of a
// receive, the exact nesting of user regions, the id order of MPI regions) goes into
// waitlab event types 69000001–69000010 (documented in docs/formats.md and labelled in the
// .pcf), so that a waitlab trace reads back with every event and field. The returned lines
// name what Paraver cannot hold (ground truth, attributes, unmatched messages, ...), one
// line per kind with a count; an empty list means the trace reads back unchanged (times
// rounded to 1 ns). A trace without ranks, a negative or non-finite time, events out of
// time order or a reference to an undefined region or communicator is an InputError.
//
// read_paraver("X.prv") and read_paraver("X.prv.gz") (gzip-compressed, as Extrae and pypop
// ship traces; read through zlib, which reads plain files too) read a Paraver trace of one
// application whose tasks are MPI ranks, and X.pcf next to it when present (labels: region
// names, MPI call names, event type names). Every thread of every task is a location: thread
// 1 of task t is locations[t-1] (thread 0), thread k >= 2 is in `threads` as {rank t-1,
// thread k-1}, ordered by (rank, thread). On thread 1, MPI call events become Enter/Leave of
// the canonical MPI regions; communication records become Send/Recv/IsendStart/IrecvPost/
// IrecvComplete/IsendComplete events inside the calls they belong to; collectives become
// CollBegin (at Enter)/CollEnd (at Leave) with the communicator, sizes and root of their
// detail events; 60000019 events become user-region Enter/Leave. An MPI call the event model
// does not model (MPI_Comm_rank, MPI_Comm_dup, MPI_Cart_create, MPI_Probe, ... any value
// under types 50000001-50000005) is a region named by its .pcf label with file "MPI", so
// Region::is_mpi() holds. On worker threads MPI calls are Enter/Leave of their regions only
// (no messages; counted in worker_mpi_calls). Without waitlab's request events, requests
// complete by a documented rule (docs/formats.md).
//
// States (traces not written by waitlab): useful time is state 1 (Running) outside MPI. Every
// state record with another state becomes a StateInterval of its location (state = the
// Paraver value; adjacent intervals of one state merged) unless it lies inside one MPI call
// of that location (Extrae's MPI states 3-16 inside calls are not stored: the call says it);
// time that no state record covers, from 0 to the header's end time (Paraver shows it Idle),
// is stored as kStateNoRecord: the location has no record there. Counters: an event record carrying PAPI_TOT_INS (42000050)
// and/or PAPI_TOT_CYC (42000059) appends a CounterSample (Extrae's deltas since the previous
// read) to its location; Trace::counters says which were present. Event values are read as
// 64-bit unsigned (up to 2^64-1) or signed when negative; no value aborts the read.
//
// Origin: a trace written by waitlab (its .pcf or .prv has waitlab's event types
// 69000001-69000010) reads back as Origin::Simulated with no declared span, no states (its
// state records say what its MPI events say) and no counters, so it reads back unchanged; any other is Origin::Extrae with the declared span
// [0, header end time].
//
// Nothing is skipped silently: ParaverReadStats::skipped names each kind of pair or record
// not used, with its count. A trace whose records stop well before the end its header declares
// (a file cut at a line end) reads, and says so: ParaverReadStats::ends_early and
// paraver_ends_early(), a warning. Any malformed line is an InputError "<file>:<line>: <what was
// expected>"; a missing file, a read error or corrupt compressed data is an InputError naming
// the file. The reader never trusts a count or an id from the file: numbers beyond their
// field's range are errors, times are finite, and user regions nested deeper than
// kMaxRegionDepth on a thread are an error at the line that passes the limit.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "analysis/trace/trace.hpp"
#include "analysis/trace/trace_part.hpp"

namespace waitlab::trace {

// Extrae's Paraver event types (FORMATS.md §2.5).
inline constexpr std::int64_t kPrvPapiTotIns = 42000050;  // PAPI_TOT_INS, delta since the last read
inline constexpr std::int64_t kPrvPapiTotCyc = 42000059;  // PAPI_TOT_CYC, delta since the last read
inline constexpr std::int64_t kPrvMpiPointToPoint = 50000001;
inline constexpr std::int64_t kPrvMpiCollective = 50000002;
inline constexpr std::int64_t kPrvMpiOther = 50000003;
inline constexpr std::int64_t kPrvMpiOneSided = 50000004;
inline constexpr std::int64_t kPrvMpiIo = 50000005;
inline constexpr std::int64_t kPrvCollSendSize = 50100001;
inline constexpr std::int64_t kPrvCollRecvSize = 50100002;
inline constexpr std::int64_t kPrvCollRoot = 50100003;  // 1 on the root task only
inline constexpr std::int64_t kPrvCollComm = 50100004;  // the communicator's id in the c: lines
inline constexpr std::int64_t kPrvUserFunction = 60000019;
// Extrae's OpenMP events (Location::omp): a parallel construct on the master (value: 1 DO,
// 2 SECTIONS, 3 REGION; 0 closes it), an executed parallel function and an executed task function
// on the thread that runs it (value: the function's id; 0 ends it).
inline constexpr std::int64_t kPrvOmpParallel = 60000001;
inline constexpr std::int64_t kPrvOmpParallelFunction = 60000018;
inline constexpr std::int64_t kPrvOmpTaskFunction = 60000023;

// waitlab's own event types (values as documented in docs/formats.md).
inline constexpr std::int64_t kPrvRequestCompleted = 69000001;  // request id + 1
inline constexpr std::int64_t kPrvRequestStarted = 69000002;    // request id + 1
inline constexpr std::int64_t kPrvRecvSource = 69000003;        // posted source task (1-based), 0 = any
inline constexpr std::int64_t kPrvRecvTag = 69000004;           // posted tag
inline constexpr std::int64_t kPrvRecvSize = 69000005;          // posted size (MPI_Irecv)
inline constexpr std::int64_t kPrvUserExit = 69000006;          // user region left: region id + 1
inline constexpr std::int64_t kPrvSendDest = 69000007;          // destination task (1-based)
inline constexpr std::int64_t kPrvSendTag = 69000008;           // send tag
inline constexpr std::int64_t kPrvMpiRegion = 69000010;         // .pcf only: MPI region id + 1 -> name

// Writes the three files; prv_path names the .prv (a trailing ".prv" is replaced by
// ".pcf"/".row" for the others). Returns what the files cannot hold, one line per kind.
std::vector<std::string> write_paraver(const Trace& trace, const std::string& prv_path);

struct ParaverReadStats {
  std::uint64_t records = 0;                // state, event and communication records read
  std::uint64_t event_pairs = 0;            // type:value pairs of the event records
  std::uint64_t used_events = 0;            // pairs the reader used
  std::uint64_t kept_pairs = 0;             // used pairs kept for pass A: those of the tasks read (read_paraver_part)
  std::uint64_t skipped_events = 0;         // pairs it did not use: the "event type ..." kinds
  std::uint64_t skipped_records = 0;        // records and lines it did not use: the other kinds
  std::uint64_t locations = 0;              // threads read (all threads of all tasks)
  std::uint64_t worker_mpi_calls = 0;       // MPI calls on threads >= 2 (regions, no messages)
  std::uint64_t state_intervals = 0;        // StateIntervals stored
  std::uint64_t counter_samples = 0;        // CounterSamples stored
  std::uint64_t unmatched_comms = 0;        // sides of communication records no MPI call fits
  std::uint64_t unknown_communicators = 0;  // collective communicator ids without a c: line
  bool waitlab_events = false;              // the file has waitlab's request events
  bool waitlab_written = false;             // the .pcf or .prv has waitlab's event types
  // Where the records end against the end the header declares: a trace cut cleanly at a line
  // end reads, but its time after the last record is idle. ends_early: the last record's time
  // is more than kParaverEndsEarlyFraction of the declared end before it (paraver_ends_early()
  // says so in one line, a warning for the command to print).
  double declared_end = 0;      // the header's end time, seconds
  double last_record_time = 0;  // the latest time of a record (a state's end, an event, a message's times), s
  bool ends_early = false;
  // What was not used, by kind, with a count (kinds with none are left out), in a fixed
  // order: first the pairs, by event type: "event type 40000033 (Executing CPU)" for a type
  // the reader does not use (label from the .pcf, "unlabelled" without one), "event type
  // 50100001 (Send Size in MPI Global OP) outside an MPI call" for a used type where it
  // cannot be used; their counts sum to skipped_events. Then the records, in this order:
  // "global-op records (type 4)", "inter-communicator lines", "communication records of
  // worker threads", "state records without an end time"; their counts sum to
  // skipped_records. (Running states and the states inside MPI calls are used: they are what
  // the MPI calls and the stored StateIntervals leave over; a waitlab-written trace's states
  // are what its events say.)
  std::vector<std::pair<std::string, std::uint64_t>> skipped;
};

// Reads prv_path ("X.prv" or "X.prv.gz"; X.pcf next to it when present).
Trace read_paraver(const std::string& prv_path, ParaverReadStats* stats = nullptr);
// Reads the tasks [first, last) of prv_path (ranks first to last - 1) in one pass: the part of
// read_paraver's trace (trace_part.hpp), every value equal to the whole trace's but
// event_counts. Only these tasks' records are kept (their pairs, states, counter samples,
// events, and the communication records that they send or receive); the others' event records
// go through pass A as they are read, and what is kept of them is what the regions and the
// collective roots need: the regions noted, thread 1's open MPI call, the operations its calls
// met first, and per collective instance the lowest task flagged its root. event_counts is the
// weight of every task: the records naming it (a state or event record of one of its threads,
// a communication record it sends or receives), the same in every part. Every record of every
// task is parsed and checked, so a malformed file fails every part with read_paraver's
// message. read_paraver is this reader over every task. std::invalid_argument unless 0 <=
// first <= last <= the tasks. `stats` as read_paraver's, but kept_pairs, unmatched_comms and
// the requests completed without start (pass D's: a kind of `skipped`, listed even at 0 when
// the trace has request events) count the tasks read only.
TracePart read_paraver_part(const std::string& prv_path, Rank first, Rank last, ParaverReadStats* stats = nullptr);
// What read_paraver's `skipped` is, made of read_paraver_part's for each part of a partition
// (every part lists the same kinds: the per-task one summed, kinds of 0 dropped).
std::vector<std::pair<std::string, std::uint64_t>> merge_paraver_skipped(
    const std::vector<std::vector<std::pair<std::string, std::uint64_t>>>& parts);

// How far before the declared end the records may stop without a warning: 1 % of it (Extrae's
// traces end their last state records at the declared end exactly).
inline constexpr double kParaverEndsEarlyFraction = 0.01;
// The warning for a trace whose records stop early (ParaverReadStats::ends_early), one line
// naming the file, the last record's time and the declared end; "" if they do not.
std::string paraver_ends_early(const std::string& prv_path, const ParaverReadStats& stats);

}  // namespace waitlab::trace
