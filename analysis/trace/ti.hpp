// waitlab::trace — SimGrid time-independent (TI) traces (SMPI-NOTES.md §5): what SMPI's
// `smpirun -trace-ti` writes and `smpirun -replay` reads.
//
// Promise: read_ti(path) reads either an index file (one trace file per line, line i holding
// rank i's actions; a relative path is tried against the index file's directory, then the
// working directory; every line of rank i's file must start with i, and a file listed twice
// is refused) or a single trace file holding the lines of every rank ("<rank>
// <action> <args...>", ranks interleaved in any order; every rank from 0 to the largest has
// lines, as SMPI writes them, so a small file cannot declare millions of ranks). Numbers must
// be finite (no nan, inf or out-of-range value), amounts and counts not negative, counts whole
// and below 9e15, ranks and peers ranks of the trace. Every action SMPI 3.32 writes is
// recognised: init, finalize, compute, sleep, send, Ssend, isend, ISsend, recv, irecv,
// sendRecv, wait, test, waitall, waitAny, waitany, waitsome, testany, testall, testsome,
// barrier, bcast, reduce, allreduce, gather, scatter, allgather, alltoall, gatherv,
// scatterv, allgatherv, alltoallv, reducescatter, scan, exscan, comm_size, comm_split,
// comm_dup; counts are turned into bytes with SimGrid 3.32's datatype ids (the default
// datatype is MPI_BYTE after a bare `init`, MPI_DOUBLE after `init` with an argument, as
// SMPI's replayer does). Source -333 (MPI_ANY_SOURCE) reads as kAnySource. `#` comments
// and blank lines are skipped, a missing final newline is fine (the last line counts,
// unlike in SMPI's replayer). Persistent requests (Start, Startall) and non-blocking
// collectives (ibarrier, ibcast, ...) cannot be replayed — TI does not record their
// parameters — and, like an unknown action, a malformed number, a wrong argument count or
// a file that cannot be read, throw InputError naming "file:line".
// write_ti(ti, index) writes the index file and one file per rank under
// "<index>_files/rank-<r>.txt" (the index lists them relative to its own directory, so
// `smpirun -replay` is run from there), sizes in bytes after a bare `init`; everything is
// written under temporary names and renamed when complete.
// SMPI 3.32's replayer knows no Ssend/ISsend: the writer writes them as send/isend (and
// reports it); testany-style records are not written. Turning timed traces into TI records
// and back is models/replay.hpp's business (TI records are MPI calls, not events).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analysis/trace/trace.hpp"

namespace waitlab::trace {

inline constexpr Rank kAnySource = -333;  // MPI_ANY_SOURCE as SMPI writes it

enum class TiOp : std::uint8_t {
  Compute,    // amount = flops
  Sleep,      // amount = seconds
  Send,       // peer = destination, tag, bytes
  Ssend,      // as Send, synchronous
  Isend,      // as Send, non-blocking
  Issend,     // as Ssend, non-blocking
  Recv,       // peer = source (kAnySource possible), tag, bytes
  Irecv,      // as Recv, non-blocking
  Wait,       // peer = source, peer2 = destination, tag: the request (src, dst, tag) completed
  Test,       // as Wait, but a test
  Waitall,    // count = number of requests the application passed (0 if not written)
  Waitany,    // count; also waitsome
  Testany,    // no arguments; also testall, testsome
  Sendrecv,   // peer = destination, bytes = send size; peer2 = source, bytes2 = receive size
  Barrier,
  Bcast,      // bytes, root
  Reduce,     // bytes, amount = flops of the reduction, root
  Allreduce,  // bytes, amount = flops
  Gather,     // bytes = send size, bytes2 = receive size per rank, root
  Scatter,    // bytes = send size per rank, bytes2 = receive size, root
  Allgather,  // bytes = send size, bytes2 = receive size per rank
  Alltoall,   // bytes = send size per pair, bytes2 = receive size per pair
  Gatherv,    // bytes = send size, counts = receive sizes (bytes) per rank, root
  Scatterv,   // counts = send sizes per rank, bytes2 = receive size, root
  Allgatherv, // bytes = send size, counts = receive sizes per rank
  Alltoallv,  // counts = send sizes per rank then receive sizes per rank (2 × ranks)
  ReduceScatter,  // counts = receive sizes per rank, amount = flops
  Scan,       // bytes, amount = flops
  Exscan,     // bytes, amount = flops
  CommNoop,   // comm_size, comm_split, comm_dup: nothing to replay
  Count_
};
std::string_view ti_op_name(TiOp op);  // the action name as written ("sendRecv", "ISsend", ...)

struct TiRecord {
  TiOp op = TiOp::Compute;
  Rank peer = kNoRank;
  Rank peer2 = kNoRank;
  Rank root = kNoRank;
  std::int32_t tag = 0;
  std::uint32_t count = 0;
  std::uint64_t bytes = 0;
  std::uint64_t bytes2 = 0;
  double amount = 0;
  std::uint32_t line = 0;              // line in its file (1-based), 0 if not read from a file
  std::vector<std::uint64_t> counts;   // v-collectives only, in bytes
  bool operator==(const TiRecord& o) const {
    return op == o.op && peer == o.peer && peer2 == o.peer2 && root == o.root && tag == o.tag &&
           count == o.count && bytes == o.bytes && bytes2 == o.bytes2 && amount == o.amount &&
           counts == o.counts;
  }
};

struct TiTrace {
  std::vector<std::vector<TiRecord>> ranks;  // per rank, in program order; init/finalize implicit
  std::vector<std::string> files;            // the file each rank was read from (one entry if shared)
  std::size_t record_count() const;
};

struct TiReadStats {
  std::uint64_t lines = 0;                          // action lines read
  std::map<std::string, std::uint64_t> actions;     // per action name as written
  std::uint64_t any_source = 0;                     // receives from MPI_ANY_SOURCE (-333)
  std::uint64_t files_without_final_newline = 0;
};

TiTrace read_ti(const std::string& path, TiReadStats* stats = nullptr);

// The files a reader of the TI trace `path` opens: `path` itself, then, for an index, its rank
// files in rank order (each checked to exist, as read_ti() checks them). Only the index is
// read, not the rank files. Throws InputError as read_ti().
std::vector<std::string> ti_files(const std::string& path);

// A TI trace read one rank at a time, for replays that hold one rank's records at a time: the
// constructor reads the index and checks that every rank file exists (a shared file, holding
// every rank, is read whole); records(r) parses rank r's file when asked, with the errors of
// read_ti(). The records stay valid until records() is asked for another rank.
class TiReader {
 public:
  explicit TiReader(const std::string& path);
  std::size_t ranks() const { return ranks_; }
  const std::vector<std::string>& files() const { return files_; }  // as TiTrace::files
  const std::vector<TiRecord>& records(std::size_t r);

 private:
  std::size_t ranks_ = 0;
  std::string index_;  // the index file (empty for a shared file)
  std::vector<std::string> files_;
  std::vector<std::uint32_t> index_lines_;  // the index line of each rank file
  TiTrace whole_;  // a shared file's records
  bool shared_ = false;
  std::size_t loaded_ = SIZE_MAX;
  std::vector<TiRecord> current_;
};

// Sizes in bytes of SimGrid 3.32's datatype ids (0 MPI_DOUBLE, 1 MPI_INT, 2 MPI_CHAR, 6
// MPI_BYTE, ...); 0 for an id SimGrid does not predefine.
std::uint64_t ti_datatype_size(int id);
// Writes `index_path` and its rank files; returns what SMPI's replayer cannot replay as
// written (one line each; empty if nothing).
std::vector<std::string> write_ti(const TiTrace& ti, const std::string& index_path);

}  // namespace waitlab::trace
