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
// read_paraver("X.prv") reads a Paraver trace of one application whose tasks are MPI ranks
// (task t = rank t-1; further threads of a task are counted and skipped), and X.pcf next to
// it when present (labels: region names, MPI call names). MPI call events become
// Enter/Leave of the canonical MPI regions; communication records become Send/Recv/
// IsendStart/IrecvPost/IrecvComplete/IsendComplete events inside the calls they belong to;
// collectives become CollBegin (at Enter)/CollEnd (at Leave) with the communicator, sizes and
// root of their detail events; 60000019 events become user-region Enter/Leave. Without
// waitlab's request events, requests complete by a documented rule (docs/formats.md).
// Unknown event types, global-op records (4) and comment lines are skipped and counted. Any
// malformed line is an InputError "<file>:<line>: <what was expected>"; a missing file is an
// InputError naming it. The reader never trusts a count or an id from the file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/trace/trace.hpp"

namespace waitlab::trace {

// Extrae's Paraver event types (FORMATS.md §2.5).
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
  std::uint64_t skipped_records = 0;        // global-op (4) records, inter-communicator lines,
                                            // records of threads other than thread 1
  std::uint64_t skipped_events = 0;         // type:value pairs the reader does not use
  std::uint64_t skipped_threads = 0;        // threads beyond the first of a task (header)
  std::uint64_t unmatched_comms = 0;        // sides of communication records no MPI call fits
  std::uint64_t unknown_communicators = 0;  // collective communicator ids without a c: line
  bool waitlab_events = false;              // the file has waitlab's request events
};

// Reads prv_path (and the .pcf next to it when present).
Trace read_paraver(const std::string& prv_path, ParaverReadStats* stats = nullptr);

}  // namespace waitlab::trace
