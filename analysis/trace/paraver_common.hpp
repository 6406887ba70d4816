// Internal to analysis/trace (not a public header): what the Paraver writer (paraver_write.cpp)
// and reader (paraver_read.cpp) share: Extrae's encoding of the MPI calls in both directions,
// the kinds of calls that send, receive and wait, and the names of the files and communicators.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "analysis/trace/paraver.hpp"
#include "analysis/trace/trace.hpp"

namespace waitlab::trace::detail {

// ---------------------------------------------------------------------------------------
// The Extrae encoding of the MPI calls the event model knows.

struct OpCode {
  std::int64_t type = 0;
  std::int64_t value = 0;
  std::int64_t state = 1;
};

// MPI_Exscan has no Extrae value; waitlab writes 1000 (labelled in the .pcf).
inline constexpr std::int64_t kExscanValue = 1000;

inline OpCode op_code(MpiOp op) {
  switch (op) {
    case MpiOp::Init: return {kPrvMpiOther, 31, 15};
    case MpiOp::Finalize: return {kPrvMpiOther, 32, 15};
    case MpiOp::Send: return {kPrvMpiPointToPoint, 1, 4};
    case MpiOp::Ssend: return {kPrvMpiPointToPoint, 34, 4};
    case MpiOp::Recv: return {kPrvMpiPointToPoint, 2, 3};
    case MpiOp::Isend: return {kPrvMpiPointToPoint, 3, 10};
    case MpiOp::Irecv: return {kPrvMpiPointToPoint, 4, 11};
    case MpiOp::Wait: return {kPrvMpiPointToPoint, 5, 8};
    case MpiOp::Waitall: return {kPrvMpiPointToPoint, 6, 8};
    case MpiOp::Sendrecv: return {kPrvMpiPointToPoint, 41, 16};
    case MpiOp::Barrier: return {kPrvMpiCollective, 8, 5};
    case MpiOp::Bcast: return {kPrvMpiCollective, 7, 13};
    case MpiOp::Reduce: return {kPrvMpiCollective, 9, 13};
    case MpiOp::Allreduce: return {kPrvMpiCollective, 10, 13};
    case MpiOp::Gather: return {kPrvMpiCollective, 13, 13};
    case MpiOp::Scatter: return {kPrvMpiCollective, 15, 13};
    case MpiOp::Allgather: return {kPrvMpiCollective, 17, 13};
    case MpiOp::Alltoall: return {kPrvMpiCollective, 11, 13};
    case MpiOp::Scan: return {kPrvMpiCollective, 30, 13};
    case MpiOp::Exscan: return {kPrvMpiCollective, kExscanValue, 13};
    case MpiOp::ReduceScatter: return {kPrvMpiCollective, 80, 13};
    case MpiOp::Gatherv: return {kPrvMpiCollective, 14, 13};
    case MpiOp::Scatterv: return {kPrvMpiCollective, 16, 13};
    case MpiOp::Allgatherv: return {kPrvMpiCollective, 18, 13};
    case MpiOp::Alltoallv: return {kPrvMpiCollective, 12, 13};
    default: return {};
  }
}

// Extrae's value id (under any of the MPI types) -> the operation waitlab models it as.
// Variants map to the operation they behave like (MPI_Bsend -> MPI_Send, MPI_Waitany ->
// MPI_Wait, MPI_Waitsome -> MPI_Waitall, ...).
inline MpiOp op_of_value(std::int64_t v) {
  switch (v) {
    case 1: case 33: case 35: return MpiOp::Send;
    case 2: return MpiOp::Recv;
    case 3: case 36: case 37: case 38: return MpiOp::Isend;
    case 4: return MpiOp::Irecv;
    case 5: case 59: return MpiOp::Wait;
    case 6: case 60: return MpiOp::Waitall;
    case 7: return MpiOp::Bcast;
    case 8: return MpiOp::Barrier;
    case 9: return MpiOp::Reduce;
    case 10: return MpiOp::Allreduce;
    case 11: case 170: return MpiOp::Alltoall;
    case 12: return MpiOp::Alltoallv;
    case 13: return MpiOp::Gather;
    case 14: return MpiOp::Gatherv;
    case 15: return MpiOp::Scatter;
    case 16: return MpiOp::Scatterv;
    case 17: return MpiOp::Allgather;
    case 18: return MpiOp::Allgatherv;
    case 30: return MpiOp::Scan;
    case 31: return MpiOp::Init;
    case 32: return MpiOp::Finalize;
    case 34: return MpiOp::Ssend;
    case 41: case 42: return MpiOp::Sendrecv;
    case 80: case 168: return MpiOp::ReduceScatter;
    case kExscanValue: return MpiOp::Exscan;
    default: return MpiOp::None;
  }
}

inline bool is_mpi_type(std::int64_t type) {
  return type >= kPrvMpiPointToPoint && type <= kPrvMpiIo;
}

inline bool sends(MpiOp op) {
  return op == MpiOp::Send || op == MpiOp::Ssend || op == MpiOp::Isend || op == MpiOp::Sendrecv;
}
inline bool receives(MpiOp op) {
  return op == MpiOp::Recv || op == MpiOp::Irecv || op == MpiOp::Sendrecv;
}
inline bool waits(MpiOp op) {
  return op == MpiOp::Wait || op == MpiOp::Waitall;
}

// X for X.prv or X.prv.gz (any other path stays whole): the .pcf and .row are X.pcf and X.row.
inline std::string base_of(const std::string& prv_path) {
  constexpr std::string_view gz = ".prv.gz";
  if (prv_path.size() >= gz.size() && prv_path.compare(prv_path.size() - gz.size(), gz.size(), gz) == 0)
    return prv_path.substr(0, prv_path.size() - gz.size());
  constexpr std::string_view ext = ".prv";
  if (prv_path.size() >= ext.size() && prv_path.compare(prv_path.size() - ext.size(), ext.size(), ext) == 0)
    return prv_path.substr(0, prv_path.size() - ext.size());
  return prv_path;
}

// The name of a communicator other than MPI_COMM_WORLD, by its id in the c: lines.
inline std::string comm_name(std::int64_t paraver_id) {
  return "communicator " + std::to_string(paraver_id);
}

}  // namespace waitlab::trace::detail
