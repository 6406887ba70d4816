// libwaitlab-profiler's MPI functions (profiler.hpp says what the library promises).
//
// A measured call takes its timestamps right around the PMPI call and then gives the
// estimator the facts the simulator gives it (sim/simulation.cpp): the messages the call
// completed — destination and bytes of a send, source and received bytes of a receive, and
// for MPI_Wait/MPI_Waitall the messages of the requests it completed — or, for a
// collective, whether this rank is the root and the bytes its buffer arguments send plus
// receive. MPI_Isend and MPI_Irecv hold no wait state: they are not timed, only their
// requests remembered. MPI_Test*, MPI_Waitany, MPI_Waitsome and MPI_Request_free are not
// measured either; they only tell the profiler which of those requests they freed.
#include <mpi.h>

#include <cstdint>

#include "profiler/profiler.hpp"

namespace {

using waitlab::profiler::now;
using waitlab::profiler::Profiler;
using waitlab::profiler::Request;
using waitlab::trace::MpiOp;

Profiler prof;  // the process's rank

std::uint64_t type_size(MPI_Datatype type) {
  MPI_Count size = 0;
  PMPI_Type_size_x(type, &size);
  return size > 0 ? static_cast<std::uint64_t>(size) : 0;
}

std::uint64_t bytes(int count, MPI_Datatype type) {
  return count > 0 ? static_cast<std::uint64_t>(count) * type_size(type) : 0;
}

std::uint64_t received(const MPI_Status& st) {
  MPI_Count n = 0;
  PMPI_Get_elements_x(&st, MPI_BYTE, &n);
  return n > 0 ? static_cast<std::uint64_t>(n) : 0;
}

// The message of a request a completion call completed.
void completed(const Request& r, const MPI_Status& st) {
  if (r.kind == Request::Kind::Send) prof.facts().message(false, r.peer, r.bytes);
  if (r.kind == Request::Kind::Receive) prof.facts().message(true, st.MPI_SOURCE, received(st));
}

// A collective's communicator. Measured only with as many ranks as MPI_COMM_WORLD: only
// those collectives compare with the minimum over all ranks.
struct Group {
  bool measured = false;
  int rank = 0;
  int size = 0;
};

Group group(MPI_Comm comm) {
  Group g;
  if (!prof.recording()) return g;
  if (comm == MPI_COMM_WORLD) return Group{true, prof.world_rank(), prof.world_size()};
  PMPI_Comm_size(comm, &g.size);
  if (g.size != prof.world_size()) return g;
  PMPI_Comm_rank(comm, &g.rank);
  g.measured = true;
  return g;
}

// Ends a measured collective that returned `rc`.
int collective(int rc, bool root, std::uint64_t moved) {
  const double t = now();
  if (rc == MPI_SUCCESS) {
    prof.facts().collective(root, moved);
    prof.end(t);
  }
  return rc;
}

// MPI_Send and MPI_Ssend: the call, timed, and the message it completed.
template <typename Call>
int blocking_send(MpiOp op, const void* caller, int dest, std::uint64_t n, Call call) {
  prof.begin(op, caller);
  const int rc = call();
  const double t = now();
  if (rc == MPI_SUCCESS) {
    prof.facts().message(false, dest, n);
    prof.end(t);
  }
  return rc;
}

}  // namespace

extern "C" {

// ---------------------------------------------------------------------------------------
// Start and end

int MPI_Init(int* argc, char*** argv) {
  const double t = now();
  const int rc = PMPI_Init(argc, argv);
  int level = MPI_THREAD_SINGLE;
  if (rc == MPI_SUCCESS && PMPI_Query_thread(&level) == MPI_SUCCESS) prof.start(t, level);
  return rc;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const double t = now();
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) prof.start(t, *provided);
  return rc;
}

int MPI_Finalize() {
  if (prof.active()) prof.finish();
  return PMPI_Finalize();
}

// ---------------------------------------------------------------------------------------
// Point to point

int MPI_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  if (!prof.recording()) return PMPI_Send(buf, count, type, dest, tag, comm);
  return blocking_send(MpiOp::Send, __builtin_return_address(0), dest, bytes(count, type),
                       [&] { return PMPI_Send(buf, count, type, dest, tag, comm); });
}

int MPI_Ssend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  if (!prof.recording()) return PMPI_Ssend(buf, count, type, dest, tag, comm);
  return blocking_send(MpiOp::Ssend, __builtin_return_address(0), dest, bytes(count, type),
                       [&] { return PMPI_Ssend(buf, count, type, dest, tag, comm); });
}

int MPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status* status) {
  if (!prof.recording()) return PMPI_Recv(buf, count, type, source, tag, comm, status);
  MPI_Status st;
  prof.begin(MpiOp::Recv, __builtin_return_address(0));
  const int rc = PMPI_Recv(buf, count, type, source, tag, comm, &st);
  const double t = now();
  if (rc == MPI_SUCCESS) {
    prof.facts().message(true, st.MPI_SOURCE, received(st));
    prof.end(t);
  }
  if (status != MPI_STATUS_IGNORE) *status = st;
  return rc;
}

int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                 MPI_Status* status) {
  if (!prof.recording())
    return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                         recvtag, comm, status);
  MPI_Status st;
  prof.begin(MpiOp::Sendrecv, __builtin_return_address(0));
  const int rc = PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                               source, recvtag, comm, &st);
  const double t = now();
  if (rc == MPI_SUCCESS) {
    prof.facts().message(false, dest, bytes(sendcount, sendtype));
    prof.facts().message(true, st.MPI_SOURCE, received(st));
    prof.end(t);
  }
  if (status != MPI_STATUS_IGNORE) *status = st;
  return rc;
}

int MPI_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request* req) {
  const int rc = PMPI_Isend(buf, count, type, dest, tag, comm, req);
  if (rc == MPI_SUCCESS && prof.recording())
    prof.remember(*req, Request{Request::Kind::Send, dest, bytes(count, type)});
  return rc;
}

int MPI_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request* req) {
  const int rc = PMPI_Irecv(buf, count, type, source, tag, comm, req);
  if (rc == MPI_SUCCESS && prof.recording()) prof.remember(*req, Request{Request::Kind::Receive, 0, 0});
  return rc;
}

// With the test on (WAITLAB_PROFILER_TEST, default 1), MPI_Test(all) first; when it finds the
// requests complete, it is the call (its statuses are the call's) and the call is marked
// tested_complete for the exclude_tested variant.
int MPI_Wait(MPI_Request* req, MPI_Status* status) {
  if (!prof.recording()) return PMPI_Wait(req, status);
  const Request info = prof.take(*req);  // completion frees the handle
  MPI_Status st;
  int done = 0;
  prof.begin(MpiOp::Wait, __builtin_return_address(0));
  int rc = prof.test_at_entry() ? PMPI_Test(req, &done, &st) : MPI_SUCCESS;
  if (rc == MPI_SUCCESS && done == 0) rc = PMPI_Wait(req, &st);
  const double t = now();
  if (rc == MPI_SUCCESS) {
    prof.facts().tested_complete(done != 0);
    completed(info, st);
    prof.end(t);
  }
  if (status != MPI_STATUS_IGNORE) *status = st;
  return rc;
}

int MPI_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[]) {
  if (!prof.recording() || count < 0) return PMPI_Waitall(count, reqs, statuses);
  const auto n = static_cast<std::size_t>(count);
  Request* info = prof.pending(n);
  for (std::size_t i = 0; i < n; ++i) info[i] = prof.take(reqs[i]);
  MPI_Status* st = statuses == MPI_STATUSES_IGNORE ? prof.statuses(n) : statuses;
  int done = 0;
  prof.begin(MpiOp::Waitall, __builtin_return_address(0));
  int rc = prof.test_at_entry() ? PMPI_Testall(count, reqs, &done, st) : MPI_SUCCESS;
  if (rc == MPI_SUCCESS && done == 0) rc = PMPI_Waitall(count, reqs, st);
  const double t = now();
  if (rc == MPI_SUCCESS) {
    prof.facts().tested_complete(done != 0);
    for (std::size_t i = 0; i < n; ++i) completed(info[i], st[i]);
    prof.end(t);
  }
  return rc;
}

// Completions that are not measured: they free requests MPI_Isend/MPI_Irecv started.

int MPI_Test(MPI_Request* req, int* flag, MPI_Status* status) {
  if (!prof.tracking()) return PMPI_Test(req, flag, status);
  const MPI_Request r = *req;
  const int rc = PMPI_Test(req, flag, status);
  if (*flag != 0) prof.forget(r);
  return rc;
}

int MPI_Testall(int count, MPI_Request reqs[], int* flag, MPI_Status statuses[]) {
  if (!prof.tracking() || count < 0) return PMPI_Testall(count, reqs, flag, statuses);
  const MPI_Request* before = prof.saved(reqs, static_cast<std::size_t>(count));
  const int rc = PMPI_Testall(count, reqs, flag, statuses);
  if (*flag != 0)
    for (int i = 0; i < count; ++i) prof.forget(before[i]);
  return rc;
}

int MPI_Testany(int count, MPI_Request reqs[], int* index, int* flag, MPI_Status* status) {
  if (!prof.tracking() || count < 0) return PMPI_Testany(count, reqs, index, flag, status);
  const MPI_Request* before = prof.saved(reqs, static_cast<std::size_t>(count));
  const int rc = PMPI_Testany(count, reqs, index, flag, status);
  if (*flag != 0 && *index >= 0) prof.forget(before[*index]);
  return rc;
}

int MPI_Waitany(int count, MPI_Request reqs[], int* index, MPI_Status* status) {
  if (!prof.tracking() || count < 0) return PMPI_Waitany(count, reqs, index, status);
  const MPI_Request* before = prof.saved(reqs, static_cast<std::size_t>(count));
  const int rc = PMPI_Waitany(count, reqs, index, status);
  if (*index >= 0) prof.forget(before[*index]);
  return rc;
}

int MPI_Testsome(int incount, MPI_Request reqs[], int* outcount, int indices[], MPI_Status statuses[]) {
  if (!prof.tracking() || incount < 0) return PMPI_Testsome(incount, reqs, outcount, indices, statuses);
  const MPI_Request* before = prof.saved(reqs, static_cast<std::size_t>(incount));
  const int rc = PMPI_Testsome(incount, reqs, outcount, indices, statuses);
  for (int k = 0; k < *outcount; ++k) prof.forget(before[indices[k]]);  // MPI_UNDEFINED < 0
  return rc;
}

int MPI_Waitsome(int incount, MPI_Request reqs[], int* outcount, int indices[], MPI_Status statuses[]) {
  if (!prof.tracking() || incount < 0) return PMPI_Waitsome(incount, reqs, outcount, indices, statuses);
  const MPI_Request* before = prof.saved(reqs, static_cast<std::size_t>(incount));
  const int rc = PMPI_Waitsome(incount, reqs, outcount, indices, statuses);
  for (int k = 0; k < *outcount; ++k) prof.forget(before[indices[k]]);  // MPI_UNDEFINED < 0
  return rc;
}

int MPI_Request_free(MPI_Request* req) {
  if (prof.tracking()) prof.forget(*req);
  return PMPI_Request_free(req);
}

// ---------------------------------------------------------------------------------------
// Collectives: bytes sent + received by the buffer arguments, as RankRunner::collective.

int MPI_Barrier(MPI_Comm comm) {
  const Group g = group(comm);
  if (!g.measured) return PMPI_Barrier(comm);
  prof.begin(MpiOp::Barrier, __builtin_return_address(0));
  const int rc = PMPI_Barrier(comm);
  return collective(rc, false, 0);
}

int MPI_Bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  const Group g = group(comm);
  if (!g.measured) return PMPI_Bcast(buf, count, type, root, comm);
  const std::uint64_t b = bytes(count, type);  // the root sends it, the others receive it
  prof.begin(MpiOp::Bcast, __builtin_return_address(0));
  const int rc = PMPI_Bcast(buf, count, type, root, comm);
  return collective(rc, root == g.rank, b);
}

int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
               MPI_Comm comm) {
  const Group g = group(comm);
  if (!g.measured) return PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
  const std::uint64_t b = bytes(count, type);
  prof.begin(MpiOp::Reduce, __builtin_return_address(0));
  const int rc = PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
  return collective(rc, root == g.rank, root == g.rank ? 2 * b : b);
}

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm) {
  const Group g = group(comm);
  if (!g.measured) return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
  const std::uint64_t b = bytes(count, type);
  prof.begin(MpiOp::Allreduce, __builtin_return_address(0));
  const int rc = PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
  return collective(rc, false, 2 * b);
}

int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
               MPI_Datatype recvtype, int root, MPI_Comm comm) {
  const Group g = group(comm);
  if (!g.measured) return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  const bool is_root = root == g.rank;
  const std::uint64_t piece = is_root ? bytes(recvcount, recvtype) : 0;  // significant at the root only
  const std::uint64_t sent = is_root && sendbuf == MPI_IN_PLACE ? piece : bytes(sendcount, sendtype);
  const std::uint64_t size = static_cast<std::uint64_t>(g.size);
  prof.begin(MpiOp::Gather, __builtin_return_address(0));
  const int rc = PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  return collective(rc, is_root, sent + piece * size);
}

int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm) {
  const Group g = group(comm);
  if (!g.measured)
    return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  const bool is_root = root == g.rank;
  const std::uint64_t piece = is_root ? bytes(sendcount, sendtype) : 0;  // significant at the root only
  const std::uint64_t got = is_root && recvbuf == MPI_IN_PLACE ? piece : bytes(recvcount, recvtype);
  const std::uint64_t size = static_cast<std::uint64_t>(g.size);
  prof.begin(MpiOp::Scatter, __builtin_return_address(0));
  const int rc = PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  return collective(rc, is_root, piece * size + got);
}

int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm) {
  const Group g = group(comm);
  if (!g.measured) return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  const std::uint64_t piece = bytes(recvcount, recvtype);
  const std::uint64_t sent = sendbuf == MPI_IN_PLACE ? piece : bytes(sendcount, sendtype);
  const std::uint64_t size = static_cast<std::uint64_t>(g.size);
  prof.begin(MpiOp::Allgather, __builtin_return_address(0));
  const int rc = PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  return collective(rc, false, sent + piece * size);
}

int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm) {
  const Group g = group(comm);
  if (!g.measured) return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  const std::uint64_t piece = bytes(recvcount, recvtype);
  const std::uint64_t sent = sendbuf == MPI_IN_PLACE ? piece : bytes(sendcount, sendtype);
  const std::uint64_t size = static_cast<std::uint64_t>(g.size);
  prof.begin(MpiOp::Alltoall, __builtin_return_address(0));
  const int rc = PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  return collective(rc, false, (sent + piece) * size);
}

int MPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype type,
                       MPI_Op op, MPI_Comm comm) {
  const Group g = group(comm);
  if (!g.measured) return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm);
  std::uint64_t total = 0;  // elements contributed; this rank receives recvcounts[rank]
  for (int r = 0; r < g.size; ++r) total += static_cast<std::uint64_t>(recvcounts[r]);
  const std::uint64_t moved = (total + static_cast<std::uint64_t>(recvcounts[g.rank])) * type_size(type);
  prof.begin(MpiOp::ReduceScatter, __builtin_return_address(0));
  const int rc = PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm);
  return collective(rc, false, moved);
}

int MPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  const Group g = group(comm);
  if (!g.measured) return PMPI_Scan(sendbuf, recvbuf, count, type, op, comm);
  const std::uint64_t b = bytes(count, type);
  prof.begin(MpiOp::Scan, __builtin_return_address(0));
  const int rc = PMPI_Scan(sendbuf, recvbuf, count, type, op, comm);
  return collective(rc, false, 2 * b);
}

int MPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  const Group g = group(comm);
  if (!g.measured) return PMPI_Exscan(sendbuf, recvbuf, count, type, op, comm);
  const std::uint64_t b = bytes(count, type);
  prof.begin(MpiOp::Exscan, __builtin_return_address(0));
  const int rc = PMPI_Exscan(sendbuf, recvbuf, count, type, op, comm);
  return collective(rc, false, 2 * b);
}

}  // extern "C"
