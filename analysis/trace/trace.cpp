#include "analysis/trace/trace.hpp"

#include <algorithm>
#include <limits>

namespace waitlab::trace {

namespace {
constexpr std::array<std::string_view, static_cast<std::size_t>(MpiOp::Count_)> kMpiNames = {
    "",          "MPI_Init",   "MPI_Finalize",  "MPI_Send",      "MPI_Ssend",     "MPI_Recv",
    "MPI_Isend", "MPI_Irecv",  "MPI_Wait",      "MPI_Waitall",   "MPI_Sendrecv",  "MPI_Barrier",
    "MPI_Bcast", "MPI_Reduce", "MPI_Allreduce", "MPI_Gather",    "MPI_Scatter",   "MPI_Allgather",
    "MPI_Alltoall", "MPI_Scan", "MPI_Exscan",   "MPI_Reduce_scatter", "MPI_Gatherv", "MPI_Scatterv",
    "MPI_Allgatherv", "MPI_Alltoallv"};
}  // namespace

std::string_view mpi_name(MpiOp op) {
  auto i = static_cast<std::size_t>(op);
  return i < kMpiNames.size() ? kMpiNames[i] : std::string_view{};
}

MpiOp mpi_op_from_name(std::string_view name) {
  for (std::size_t i = 1; i < kMpiNames.size(); ++i)
    if (kMpiNames[i] == name) return static_cast<MpiOp>(i);
  return MpiOp::None;
}

bool is_collective(MpiOp op) {
  switch (op) {
    case MpiOp::Barrier: case MpiOp::Bcast: case MpiOp::Reduce: case MpiOp::Allreduce:
    case MpiOp::Gather: case MpiOp::Scatter: case MpiOp::Allgather: case MpiOp::Alltoall:
    case MpiOp::Scan: case MpiOp::Exscan: case MpiOp::ReduceScatter: case MpiOp::Gatherv:
    case MpiOp::Scatterv: case MpiOp::Allgatherv: case MpiOp::Alltoallv:
      return true;
    default:
      return false;
  }
}

bool is_point_to_point(MpiOp op) {
  switch (op) {
    case MpiOp::Send: case MpiOp::Ssend: case MpiOp::Recv: case MpiOp::Isend: case MpiOp::Irecv:
    case MpiOp::Wait: case MpiOp::Waitall: case MpiOp::Sendrecv:
      return true;
    default:
      return false;
  }
}

std::string_view event_kind_name(EventKind k) {
  switch (k) {
    case EventKind::Enter: return "Enter";
    case EventKind::Leave: return "Leave";
    case EventKind::Send: return "Send";
    case EventKind::Recv: return "Recv";
    case EventKind::IsendStart: return "IsendStart";
    case EventKind::IsendComplete: return "IsendComplete";
    case EventKind::IrecvPost: return "IrecvPost";
    case EventKind::IrecvComplete: return "IrecvComplete";
    case EventKind::CollBegin: return "CollBegin";
    case EventKind::CollEnd: return "CollEnd";
  }
  return "?";
}

RefKind ref_kind(EventKind k) {
  switch (k) {
    case EventKind::Enter:
    case EventKind::Leave:
      return RefKind::Region;
    case EventKind::Send:
    case EventKind::Recv:
    case EventKind::IsendStart:
    case EventKind::IrecvComplete:
    case EventKind::CollBegin:
    case EventKind::CollEnd:
      return RefKind::Communicator;
    case EventKind::IsendComplete:
    case EventKind::IrecvPost:
      return RefKind::None;
  }
  return RefKind::None;
}

std::string_view ref_kind_name(RefKind k) {
  switch (k) {
    case RefKind::Region: return "region";
    case RefKind::Communicator: return "communicator";
    case RefKind::None: return "";
  }
  return "";
}

bool Definitions::defines_ref(const Event& e) const {
  switch (ref_kind(e.kind)) {
    case RefKind::Region: return e.ref < regions.size();
    case RefKind::Communicator: return e.ref < comms.size();
    case RefKind::None: return true;
  }
  return true;
}

std::string_view origin_name(Origin o) {
  switch (o) {
    case Origin::Simulated: return "simulated";
    case Origin::Extrae: return "extrae";
    case Origin::ScoreP: return "scorep";
    case Origin::Unknown: return "unknown";
  }
  return "?";
}

std::string_view omp_kind_name(OmpKind k) {
  switch (k) {
    case OmpKind::ParallelRegion: return "parallel region";
    case OmpKind::ParallelFunction: return "parallel function";
    case OmpKind::Task: return "task";
    case OmpKind::Count_: break;
  }
  return "?";
}

std::string_view cause_name(Cause c) {
  switch (c) {
    case Cause::Imbalance: return "imbalance";
    case Cause::Noise: return "noise";
    case Cause::Delay: return "delay";
    default: return "?";
  }
}

RegionId Definitions::region(std::string_view name, MpiOp op) {
  for (std::size_t i = 0; i < regions.size(); ++i)
    if (regions[i].name == name && regions[i].op == op) return static_cast<RegionId>(i);
  regions.push_back(Region{std::string(name), op, op == MpiOp::None ? std::string() : std::string("MPI")});
  return static_cast<RegionId>(regions.size() - 1);
}

std::int64_t Definitions::find_region(std::string_view name) const {
  for (std::size_t i = 0; i < regions.size(); ++i)
    if (regions[i].name == name) return static_cast<std::int64_t>(i);
  return -1;
}

std::size_t Trace::event_count() const {
  std::size_t n = 0;
  for (const auto& l : locations) n += l.events.size();
  return n;
}

Time Trace::begin_time() const {
  Time t = std::numeric_limits<Time>::infinity();
  for (const auto& l : locations)
    if (!l.events.empty()) t = std::min(t, l.events.front().time);
  return t == std::numeric_limits<Time>::infinity() ? 0 : t;
}

Time Trace::end_time() const {
  Time t = -std::numeric_limits<Time>::infinity();
  for (const auto& l : locations)
    if (!l.events.empty()) t = std::max(t, l.events.back().time);
  return t == -std::numeric_limits<Time>::infinity() ? 0 : t;
}

std::string Trace::attribute(std::string_view key) const {
  for (const auto& a : attributes)
    if (a.key == key) return a.value;
  return {};
}

void Trace::set_attribute(const std::string& key, const std::string& value) {
  for (auto& a : attributes)
    if (a.key == key) {
      a.value = value;
      return;
    }
  attributes.push_back({key, value});
}

}  // namespace waitlab::trace
