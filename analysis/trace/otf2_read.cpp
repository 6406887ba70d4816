// OTF2 archives: the reader (see otf2.hpp and docs/formats.md; the writer is otf2_write.cpp).
// Global definitions are read first; the regions, metrics and communicators they define map to
// the Trace's, then each location read (ranks, then worker threads) has its local definitions
// and its events read through callbacks into one Sink.
#include "analysis/trace/otf2.hpp"

#include <otf2/otf2.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "analysis/trace/otf2_check.hpp"
#include "analysis/trace/otf2_common.hpp"
#include "util/error.hpp"

namespace waitlab::trace {

namespace fs = std::filesystem;

namespace {

using detail::kOriginProperty;
using detail::kSpanBeginProperty;
using detail::kSpanEndProperty;
using detail::QuietErrors;

// Event records the event model has no place for: skipped and counted by kind (their OTF2
// names). MpiRequestCancelled has its own callback (it drops the cancelled request's post);
// Metric, BufferFlush and MeasurementOnOff too (counter samples and overhead states).
#define WL_OTF2_SKIPPED_RECORDS(X)                                                                      \
  X(MpiRequestTest) X(NonBlockingCollectiveRequest)                                                     \
  X(NonBlockingCollectiveComplete) X(OmpFork) X(OmpJoin) X(OmpAcquireLock) X(OmpReleaseLock)            \
  X(OmpTaskCreate) X(OmpTaskSwitch) X(OmpTaskComplete) X(ParameterString) X(ParameterInt)               \
  X(ParameterUnsignedInt) X(RmaWinCreate) X(RmaWinDestroy) X(RmaCollectiveBegin) X(RmaCollectiveEnd)   \
  X(RmaGroupSync) X(RmaRequestLock) X(RmaAcquireLock) X(RmaTryLock) X(RmaReleaseLock) X(RmaSync)        \
  X(RmaWaitChange) X(RmaPut) X(RmaGet) X(RmaAtomic) X(RmaOpCompleteBlocking) X(RmaOpCompleteNonBlocking) \
  X(RmaOpTest) X(RmaOpCompleteRemote) X(ThreadFork) X(ThreadJoin) X(ThreadTeamBegin) X(ThreadTeamEnd)   \
  X(ThreadAcquireLock) X(ThreadReleaseLock) X(ThreadTaskCreate) X(ThreadTaskSwitch)                     \
  X(ThreadTaskComplete) X(ThreadCreate) X(ThreadBegin) X(ThreadWait) X(ThreadEnd)                       \
  X(CallingContextEnter) X(CallingContextLeave) X(CallingContextSample) X(IoCreateHandle)               \
  X(IoDestroyHandle) X(IoDuplicateHandle) X(IoSeek) X(IoChangeStatusFlags) X(IoDeleteFile)              \
  X(IoOperationBegin) X(IoOperationTest) X(IoOperationIssued) X(IoOperationComplete)                    \
  X(IoOperationCancelled) X(IoAcquireLock) X(IoReleaseLock) X(IoTryLock)                                \
  X(CommCreate) X(CommDestroy) X(Unknown)

enum class Skip : std::uint8_t {
#define WL_OTF2_ENUM(name) name,
  WL_OTF2_SKIPPED_RECORDS(WL_OTF2_ENUM)
#undef WL_OTF2_ENUM
  MpiRequestCancelled,
  Metric,                 // of a metric that is not PAPI_TOT_INS/PAPI_TOT_CYC, or a metric instance
  CancelledIsend,         // the MpiIsend of a cancelled request
  CancelledIrecvRequest,  // the MpiIrecvRequest of a cancelled request
  InterSend,              // point-to-point records on an inter-communicator
  InterRecv,
  InterIsend,
  InterIsendComplete,
  InterIrecvRequest,
  InterIrecv,
  Count_
};
constexpr std::size_t kSkipKinds = static_cast<std::size_t>(Skip::Count_);
constexpr std::array<std::string_view, kSkipKinds> kSkipNames = {
#define WL_OTF2_NAME(name) #name,
    WL_OTF2_SKIPPED_RECORDS(WL_OTF2_NAME)
#undef WL_OTF2_NAME
        "MpiRequestCancelled",
    "Metric",
    "MpiIsend (cancelled)",
    "MpiIrecvRequest (cancelled)",
    "MpiSend (inter-communicator)",
    "MpiRecv (inter-communicator)",
    "MpiIsend (inter-communicator)",
    "MpiIsendComplete (inter-communicator)",
    "MpiIrecvRequest (inter-communicator)",
    "MpiIrecv (inter-communicator)"};
static_assert(!kSkipNames.back().empty(), "a name for every Skip");

std::string paradigm_name(unsigned p) {
  static constexpr std::array<std::string_view, 25> kNames = {
      "UNKNOWN", "USER",    "COMPILER",  "OPENMP",    "MPI",       "CUDA",      "MEASUREMENT_SYSTEM",
      "PTHREAD", "HMPP",    "OMPSS",     "HARDWARE",  "GASPI",     "UPC",       "SHMEM",
      "WINTHREAD", "QTTHREAD", "ACETHREAD", "TBBTHREAD", "OPENACC", "OPENCL",  "MTAPI",
      "SAMPLING", "NONE",   "HIP",       "KOKKOS"};
  return p < kNames.size() ? std::string(kNames[p]) : "paradigm " + std::to_string(p);
}

std::string collective_name(unsigned op) {
  static constexpr std::array<std::string_view, 23> kNames = {
      "BARRIER",   "BCAST",     "GATHER",         "GATHERV",        "SCATTER",
      "SCATTERV",  "ALLGATHER", "ALLGATHERV",     "ALLTOALL",       "ALLTOALLV",
      "ALLTOALLW", "ALLREDUCE", "REDUCE",         "REDUCE_SCATTER", "SCAN",
      "EXSCAN",    "REDUCE_SCATTER_BLOCK",        "CREATE_HANDLE",  "DESTROY_HANDLE",
      "ALLOCATE",  "DEALLOCATE", "CREATE_HANDLE_AND_ALLOCATE",      "DESTROY_HANDLE_AND_DEALLOCATE"};
  return op < kNames.size() ? std::string(kNames[op]) : "collective " + std::to_string(op);
}

MpiOp mpi_op_of(OTF2_CollectiveOp op) {
  switch (op) {
    case OTF2_COLLECTIVE_OP_BARRIER: return MpiOp::Barrier;
    case OTF2_COLLECTIVE_OP_BCAST: return MpiOp::Bcast;
    case OTF2_COLLECTIVE_OP_GATHER: return MpiOp::Gather;
    case OTF2_COLLECTIVE_OP_GATHERV: return MpiOp::Gatherv;
    case OTF2_COLLECTIVE_OP_SCATTER: return MpiOp::Scatter;
    case OTF2_COLLECTIVE_OP_SCATTERV: return MpiOp::Scatterv;
    case OTF2_COLLECTIVE_OP_ALLGATHER: return MpiOp::Allgather;
    case OTF2_COLLECTIVE_OP_ALLGATHERV: return MpiOp::Allgatherv;
    case OTF2_COLLECTIVE_OP_ALLTOALL: return MpiOp::Alltoall;
    case OTF2_COLLECTIVE_OP_ALLTOALLV:
    case OTF2_COLLECTIVE_OP_ALLTOALLW: return MpiOp::Alltoallv;
    case OTF2_COLLECTIVE_OP_ALLREDUCE: return MpiOp::Allreduce;
    case OTF2_COLLECTIVE_OP_REDUCE: return MpiOp::Reduce;
    case OTF2_COLLECTIVE_OP_REDUCE_SCATTER:
    case OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK: return MpiOp::ReduceScatter;
    case OTF2_COLLECTIVE_OP_SCAN: return MpiOp::Scan;
    case OTF2_COLLECTIVE_OP_EXSCAN: return MpiOp::Exscan;
    default: return MpiOp::None;  // communicator and window creation/destruction (17-22)
  }
}

// The operation of an MPI region by its (canonical) name: the event model's own names, and
// the variants that behave like one of them for matching and wait states.
MpiOp mpi_region_op(std::string_view name) {
  const MpiOp op = mpi_op_from_name(name);
  if (op != MpiOp::None) return op;
  static constexpr std::array<std::pair<std::string_view, MpiOp>, 19> kVariants = {{
      {"MPI_Init_thread", MpiOp::Init},
      {"MPI_Bsend", MpiOp::Send},
      {"MPI_Rsend", MpiOp::Send},
      {"MPI_Ibsend", MpiOp::Isend},
      {"MPI_Irsend", MpiOp::Isend},
      {"MPI_Issend", MpiOp::Isend},
      {"MPI_Start", MpiOp::Isend},     // posts a persistent send or receive request
      {"MPI_Startall", MpiOp::Isend},  // idem, several
      {"MPI_Mrecv", MpiOp::Recv},
      {"MPI_Imrecv", MpiOp::Irecv},
      {"MPI_Sendrecv_replace", MpiOp::Sendrecv},
      {"MPI_Test", MpiOp::Wait},  // completes at most one request
      {"MPI_Testany", MpiOp::Wait},
      {"MPI_Waitany", MpiOp::Wait},
      {"MPI_Testall", MpiOp::Waitall},  // completes several requests
      {"MPI_Testsome", MpiOp::Waitall},
      {"MPI_Waitsome", MpiOp::Waitall},
      {"MPI_Alltoallw", MpiOp::Alltoallv},  // per-pair sizes (and types), like MPI_Alltoallv
      {"MPI_Reduce_scatter_block", MpiOp::ReduceScatter},
  }};
  for (const auto& [n, o] : kVariants)
    if (n == name) return o;
  return MpiOp::None;
}

// Global definitions as read.
struct Defs {
  std::uint64_t resolution = 1, offset = 0, length = 0;
  bool have_clock = false;
  std::unordered_map<OTF2_StringRef, std::string> strings;
  struct Reg {
    OTF2_RegionRef id;
    OTF2_StringRef name, canonical, source;
    OTF2_Paradigm paradigm;
    OTF2_RegionRole role;
  };
  std::vector<Reg> regions;
  std::map<OTF2_LocationGroupRef, bool> process_groups;  // id -> is a process
  struct Loc {
    OTF2_LocationType type;
    std::uint64_t events;
    OTF2_LocationGroupRef group;
  };
  std::map<OTF2_LocationRef, Loc> locations;
  struct Grp {
    OTF2_GroupType type;
    OTF2_Paradigm paradigm;
    std::vector<std::uint64_t> members;
  };
  std::map<OTF2_GroupRef, Grp> groups;
  std::vector<OTF2_GroupRef> group_order;  // definition order
  struct Com {
    OTF2_CommRef id;
    OTF2_StringRef name;
    OTF2_GroupRef group;
  };
  std::vector<Com> comms;
  std::vector<OTF2_CommRef> inter_comms;
  struct Member {
    OTF2_StringRef name;
    OTF2_MetricMode mode;
  };
  std::map<OTF2_MetricMemberRef, Member> metric_members;
  std::map<OTF2_MetricRef, std::vector<OTF2_MetricMemberRef>> metric_classes;  // not the instances
  std::string str(OTF2_StringRef r) const {
    const auto it = strings.find(r);
    return it == strings.end() ? std::string() : it->second;
  }
};

// OTF2 reference -> T: a vector for the small dense ids every writer uses, a hash map beyond.
template <typename T>
class RefTable {
 public:
  void put(std::uint64_t ref, const T& v) {
    if (ref < kDense) {
      if (ref >= dense_.size()) dense_.resize(ref + 1);
      dense_[ref] = v;
    } else {
      sparse_[ref] = v;
    }
  }
  const T& get(std::uint64_t ref) const {
    if (ref < dense_.size()) return dense_[ref];
    if (sparse_.empty()) return none_;
    const auto it = sparse_.find(ref);
    return it == sparse_.end() ? none_ : it->second;
  }

 private:
  static constexpr std::uint64_t kDense = 1u << 20;
  std::vector<T> dense_;
  std::unordered_map<std::uint64_t, T> sparse_;
  T none_{};
};

struct RegionInfo {
  RegionId id = 0;
  MpiOp op = MpiOp::None;
  OTF2_Paradigm paradigm = OTF2_PARADIGM_UNKNOWN;
  bool defined = false;
  bool keep = false;  // false: Enter/Leave of another paradigm's region, skipped
  bool overhead = false;  // a measurement-system region: its time is a kStateOverhead interval
};

// One value of a Metric record of a PAPI metric the event model keeps.
enum class Counter : std::uint8_t { None, Instructions, Cycles };
struct MetricSlot {
  Counter counter = Counter::None;
  bool accumulated = true;  // values accumulate (a delta is the difference); else each is a delta
};
struct MetricInfo {
  bool defined = false;  // a metric class (not an instance) of which some member is kept
  std::vector<MetricSlot> slots;
};

enum class CommKind : std::uint8_t { Undefined, Intra, Self, Inter };
struct CommInfo {
  CommId id = 0;
  CommKind kind = CommKind::Undefined;
};

constexpr std::size_t kNone = static_cast<std::size_t>(-1);
constexpr std::uint64_t kNoIndex = static_cast<std::uint64_t>(-1);
constexpr std::size_t kCollSelf = 256, kCollInter = 257, kCollKeys = 258;

// Receives the events of one location after another (the rank's events vector is swapped in).
struct Sink {
  std::uint64_t offset = 0;
  double resolution = 1;
  RefTable<RegionInfo> regions;
  RefTable<CommInfo> comms;
  std::map<OTF2_MetricRef, MetricInfo> metrics;
  const std::vector<Communicator>* trace_comms = nullptr;
  // The program regions (Score-P: role ARTIFICIAL, paradigm MEASUREMENT_SYSTEM, named after
  // the executable), by the string of their canonical name, which ProgramBegin names; and
  // what a ProgramBegin naming none of them gets (a region made for it, named by the
  // program's file name).
  std::unordered_map<OTF2_StringRef, RegionId> program_regions;
  const std::unordered_map<OTF2_StringRef, std::string>* strings = nullptr;
  std::vector<Region>* trace_regions = nullptr;
  std::vector<RegionId> program_stack;  // per location: the program regions begun, not ended

  // The location being read.
  Location* loc = nullptr;
  std::vector<Event>* ev = nullptr;
  Rank rank = 0;
  std::array<std::uint64_t, 2> last_counter{};  // accumulated instructions, cycles so far
  std::uint32_t overhead_depth = 0;             // open measurement-system regions
  Time overhead_begin = 0;
  bool measurement_off = false;
  Time off_begin = 0;
  MpiOp call = MpiOp::None;  // the MPI call the location is in (the op of its records)
  std::size_t coll_begin = kNone;
  OTF2_TimeStamp last_tick = 0;                    // of the location's previous record
  std::size_t depth = 0;                           // kept regions entered and not left
  std::uint64_t error_index = kNoIndex;            // the record `error` is about, if known
  std::vector<std::size_t> drop;                   // events to remove once the location is read
  std::unordered_set<std::uint64_t> inter_isends;  // requests of skipped inter-communicator Isends
  std::string error;

  // Over all locations.
  std::array<std::uint64_t, kSkipKinds> skipped{};
  std::array<std::uint64_t, 256> enter_skipped{}, leave_skipped{};
  std::array<std::uint64_t, kCollKeys> coll_begin_skipped{}, coll_end_skipped{};
  std::uint64_t metrics_read = 0, flushes_read = 0, on_off_read = 0, overhead_enters = 0, overhead_leaves = 0;
  std::uint8_t counters = 0;  // kHasInstructions | kHasCycles of the samples read

  void start(Location* l, Rank r) {
    loc = l;
    last_tick = 0;
    error_index = kNoIndex;
    depth = 0;
    ev = &l->events;
    rank = r;
    last_counter = {};
    overhead_depth = 0;
    measurement_off = false;
    call = MpiOp::None;
    coll_begin = kNone;
    drop.clear();
    inter_isends.clear();
    program_stack.clear();
  }
  // Seconds of a tick that check() accepted.
  Time time(OTF2_TimeStamp t) const {
    return static_cast<double>(t - offset) / resolution;
  }
  // Every record of the location: its time must not be before the global offset (a negative
  // time) nor before the previous record's (time runs forward on a location), and must convert
  // to a finite number of seconds. Records the first failure (with the record's index, from
  // OTF2's 1-based event position) and returns false, for the callback to interrupt the read.
  bool check(OTF2_TimeStamp t, std::uint64_t position) {
    if (t >= offset && t >= last_tick && std::isfinite(time(t))) {
      last_tick = t;
      return true;
    }
    if (t < offset) {
      bad_time(position, "is at tick " + std::to_string(t) + ", before the clock properties' global offset " +
                             std::to_string(offset) + " (a negative time)");
    } else if (t < last_tick) {
      bad_time(position, "at tick " + std::to_string(t) + " goes back in time from the previous record at tick " +
                             std::to_string(last_tick) + " (time runs forward on a location)");
    } else {
      bad_time(position, "at tick " + std::to_string(t) + " is not a finite time");
    }
    return false;
  }
  void bad_time(std::uint64_t position, const std::string& what) { fail_at(position, "the record " + what); }
  // The first failure of the location, at the record of OTF2's 1-based event position.
  OTF2_CallbackCode fail_at(std::uint64_t position, std::string what) {
    if (error.empty()) {
      error_index = position > 0 ? position - 1 : 0;
      error = std::move(what);
    }
    return OTF2_CALLBACK_INTERRUPT;
  }
  Rank global(const CommInfo& c, std::uint32_t local) const {
    if (c.kind == CommKind::Self) return local == 0 ? rank : kNoRank;
    const auto& m = (*trace_comms)[c.id].members;
    return local < m.size() ? m[local] : kNoRank;
  }
  // The world rank of `local`, the `role` (receiver, sender, root) that the record `record` at
  // OTF2's event `position` names in communicator `ref`: OTF2_UNDEFINED_UINT32 (what
  // write_otf2 writes for none) is none; a rank the communicator does not have, or a member
  // that is no rank of the archive, fails the location (false).
  bool member(const CommInfo& c, OTF2_CommRef ref, std::uint32_t local, const char* record, const char* role,
              std::uint64_t position, Rank& out) {
    out = kNoRank;
    if (local == OTF2_UNDEFINED_UINT32) return true;
    out = global(c, local);
    if (out != kNoRank) return true;
    const Communicator& comm = (*trace_comms)[c.id];
    const std::size_t size = c.kind == CommKind::Self ? 1 : comm.members.size();
    std::string what = std::string("the ") + record + " names " + role + " " + std::to_string(local) +
                       " in MPI communicator " + std::to_string(ref) + " (" + comm.name + "), ";
    if (local < size) {
      what += "whose member " + std::to_string(local) + " is no rank of the archive";
    } else {
      what += "which has " + std::to_string(size) + (size == 1 ? " rank" : " ranks");
    }
    fail_at(position, what);
    return false;
  }
  OTF2_CallbackCode fail(std::string what) {
    if (error.empty()) error = std::move(what);
    return OTF2_CALLBACK_INTERRUPT;
  }
  OTF2_CallbackCode undefined_comm(OTF2_CommRef c) {
    return fail("a record names undefined MPI communicator " + std::to_string(c));
  }
  OTF2_CallbackCode skip(Skip k) {
    ++skipped[static_cast<std::size_t>(k)];
    return OTF2_CALLBACK_SUCCESS;
  }
  // Drops the still pending post (IsendStart or IrecvPost) of request `req`; false if none.
  bool drop_post(std::uint64_t req, EventKind post, EventKind done) {
    for (std::size_t i = ev->size(); i-- > 0;) {
      const Event& e = (*ev)[i];
      if (e.aux != req) continue;
      if (e.kind == done) return false;
      if (e.kind == post) {
        drop.push_back(i);
        return true;
      }
    }
    return false;
  }
  void overhead(Time b, Time e) { loc->states.push_back(StateInterval{b, std::max(b, e), kStateOverhead}); }
  // Once the location is read: closes what is still open (at the location's last time) and
  // merges the overhead intervals into ordered, non-overlapping ones (Score-P writes a flush
  // both as a BufferFlush record and as its "TRACE BUFFER FLUSH" region).
  void finish_states() {
    Time last = ev->empty() ? 0 : ev->back().time;
    for (const StateInterval& st : loc->states) last = std::max(last, st.end);
    if (!loc->counters.empty()) last = std::max(last, loc->counters.back().time);
    if (overhead_depth > 0) overhead(overhead_begin, last);
    if (measurement_off) overhead(off_begin, last);
    auto& v = loc->states;
    std::stable_sort(v.begin(), v.end(), [](const StateInterval& a, const StateInterval& b) { return a.begin < b.begin; });
    std::size_t out = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (out > 0 && v[i].begin <= v[out - 1].end) {
        v[out - 1].end = std::max(v[out - 1].end, v[i].end);
      } else {
        v[out++] = v[i];
      }
    }
    v.resize(out);
  }
  // Removes the dropped events, keeping the order of the others.
  void compact() {
    if (drop.empty()) return;
    std::sort(drop.begin(), drop.end());
    drop.erase(std::unique(drop.begin(), drop.end()), drop.end());
    std::vector<Event>& v = *ev;
    std::size_t out = drop.front(), k = 0;
    for (std::size_t i = drop.front(); i < v.size(); ++i) {
      if (k < drop.size() && drop[k] == i) {
        ++k;
        continue;
      }
      v[out++] = v[i];
    }
    v.resize(out);
  }
};

Sink& sink(void* p) {
  return *static_cast<Sink*>(p);
}

OTF2_CallbackCode on_enter(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t position, void* u, OTF2_AttributeList*,
                           OTF2_RegionRef r) {
  Sink& s = sink(u);
  if (!s.check(t, position)) return OTF2_CALLBACK_INTERRUPT;
  const RegionInfo& ri = s.regions.get(r);
  if (ri.overhead) {
    if (s.overhead_depth++ == 0) s.overhead_begin = s.time(t);
    ++s.overhead_enters;
    return OTF2_CALLBACK_SUCCESS;
  }
  if (!ri.keep) {
    if (!ri.defined) return s.fail("an Enter names undefined region " + std::to_string(r));
    ++s.enter_skipped[ri.paradigm];
    return OTF2_CALLBACK_SUCCESS;
  }
  if (++s.depth > kMaxRegionDepth)
    return s.fail_at(position, "the Enter nests regions deeper than the " + std::to_string(kMaxRegionDepth) +
                                   " levels a trace may have");
  if (ri.op != MpiOp::None) s.call = ri.op;
  s.ev->push_back(make_event(s.time(t), EventKind::Enter, ri.op, ri.id));
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_leave(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t position, void* u, OTF2_AttributeList*,
                           OTF2_RegionRef r) {
  Sink& s = sink(u);
  if (!s.check(t, position)) return OTF2_CALLBACK_INTERRUPT;
  const RegionInfo& ri = s.regions.get(r);
  if (ri.overhead) {
    if (s.overhead_depth > 0 && --s.overhead_depth == 0) s.overhead(s.overhead_begin, s.time(t));
    ++s.overhead_leaves;
    return OTF2_CALLBACK_SUCCESS;
  }
  if (!ri.keep) {
    if (!ri.defined) return s.fail("a Leave names undefined region " + std::to_string(r));
    ++s.leave_skipped[ri.paradigm];
    return OTF2_CALLBACK_SUCCESS;
  }
  if (s.depth > 0) --s.depth;
  if (ri.op != MpiOp::None) s.call = MpiOp::None;
  s.ev->push_back(make_event(s.time(t), EventKind::Leave, ri.op, ri.id));
  return OTF2_CALLBACK_SUCCESS;
}
// A point-to-point record (MpiSend, MpiRecv, MpiIsend, MpiIrecv) as the event `kind`: its
// time checked, its communicator defined, the peer (`local` in the communicator, the
// `role` of the record) a member. One on an inter-communicator is skipped as `inter`, after
// `on_inter` has done the request's bookkeeping.
template <typename OnInter>
OTF2_CallbackCode p2p_record(void* u, OTF2_TimeStamp t, uint64_t position, OTF2_CommRef c, uint32_t local,
                             EventKind kind, const char* record, const char* role, uint32_t tag, uint64_t len,
                             uint64_t req, Skip inter, OnInter on_inter) {
  Sink& s = sink(u);
  if (!s.check(t, position)) return OTF2_CALLBACK_INTERRUPT;
  const CommInfo& ci = s.comms.get(c);
  if (ci.kind == CommKind::Undefined) return s.undefined_comm(c);
  if (ci.kind == CommKind::Inter) {
    on_inter(s);
    return s.skip(inter);
  }
  Rank peer = kNoRank;
  if (!s.member(ci, c, local, record, role, position, peer)) return OTF2_CALLBACK_INTERRUPT;
  s.ev->push_back(make_event(s.time(t), kind, s.call, ci.id, peer, static_cast<std::int32_t>(tag), len, req));
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_send(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t position, void* u, OTF2_AttributeList*, uint32_t to,
                          OTF2_CommRef c, uint32_t tag, uint64_t len) {
  return p2p_record(u, t, position, c, to, EventKind::Send, "MpiSend", "receiver", tag, len, 0, Skip::InterSend,
                    [](Sink&) {});
}
OTF2_CallbackCode on_recv(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t position, void* u, OTF2_AttributeList*, uint32_t from,
                          OTF2_CommRef c, uint32_t tag, uint64_t len) {
  return p2p_record(u, t, position, c, from, EventKind::Recv, "MpiRecv", "sender", tag, len, 0, Skip::InterRecv,
                    [](Sink&) {});
}
OTF2_CallbackCode on_isend(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t position, void* u, OTF2_AttributeList*, uint32_t to,
                           OTF2_CommRef c, uint32_t tag, uint64_t len, uint64_t req) {
  // Its completion is skipped too (on_isend_complete).
  return p2p_record(u, t, position, c, to, EventKind::IsendStart, "MpiIsend", "receiver", tag, len, req,
                    Skip::InterIsend, [req](Sink& s) { s.inter_isends.insert(req); });
}
OTF2_CallbackCode on_isend_complete(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t position, void* u, OTF2_AttributeList*,
                                    uint64_t req) {
  Sink& s = sink(u);
  if (!s.check(t, position)) return OTF2_CALLBACK_INTERRUPT;
  if (!s.inter_isends.empty() && s.inter_isends.erase(req) > 0) return s.skip(Skip::InterIsendComplete);
  s.ev->push_back(make_event(s.time(t), EventKind::IsendComplete, s.call, 0, kNoRank, 0, 0, req));
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_irecv_request(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t position, void* u, OTF2_AttributeList*,
                                   uint64_t req) {
  Sink& s = sink(u);
  if (!s.check(t, position)) return OTF2_CALLBACK_INTERRUPT;
  s.ev->push_back(make_event(s.time(t), EventKind::IrecvPost, s.call, 0, kNoRank, 0, 0, req));
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_irecv(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t position, void* u, OTF2_AttributeList*, uint32_t from,
                           OTF2_CommRef c, uint32_t tag, uint64_t len, uint64_t req) {
  // Its request's post goes too.
  return p2p_record(u, t, position, c, from, EventKind::IrecvComplete, "MpiIrecv", "sender", tag, len, req,
                    Skip::InterIrecv, [req](Sink& s) {
                      if (s.drop_post(req, EventKind::IrecvPost, EventKind::IrecvComplete))
                        s.skip(Skip::InterIrecvRequest);
                    });
}
// A cancelled request never matches: its post goes too.
OTF2_CallbackCode on_request_cancelled(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t position, void* u,
                                       OTF2_AttributeList*, uint64_t req) {
  Sink& s = sink(u);
  if (!s.check(t, position)) return OTF2_CALLBACK_INTERRUPT;
  if (s.drop_post(req, EventKind::IrecvPost, EventKind::IrecvComplete)) {
    s.skip(Skip::CancelledIrecvRequest);
  } else if (s.drop_post(req, EventKind::IsendStart, EventKind::IsendComplete)) {
    s.skip(Skip::CancelledIsend);
  }
  s.inter_isends.erase(req);
  return s.skip(Skip::MpiRequestCancelled);
}
OTF2_CallbackCode on_coll_begin(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t position, void* u, OTF2_AttributeList*) {
  Sink& s = sink(u);
  if (!s.check(t, position)) return OTF2_CALLBACK_INTERRUPT;
  s.coll_begin = s.ev->size();  // OTF2's CollectiveBegin has neither op nor communicator: see the End
  s.ev->push_back(make_event(s.time(t), EventKind::CollBegin, MpiOp::None, kCommWorld));
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_coll_end(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t position, void* u, OTF2_AttributeList*,
                              OTF2_CollectiveOp op, OTF2_CommRef c, uint32_t root, uint64_t sent, uint64_t received) {
  Sink& s = sink(u);
  if (!s.check(t, position)) return OTF2_CALLBACK_INTERRUPT;
  const CommInfo& ci = s.comms.get(c);
  if (ci.kind == CommKind::Undefined) return s.undefined_comm(c);
  const MpiOp mop = mpi_op_of(op);
  const std::size_t begin = s.coll_begin;
  s.coll_begin = kNone;
  if (mop == MpiOp::None || ci.kind != CommKind::Intra) {  // skipped with its Begin
    const std::size_t key = ci.kind == CommKind::Self ? kCollSelf : ci.kind == CommKind::Inter ? kCollInter : op;
    ++s.coll_end_skipped[key];
    if (begin != kNone) {
      s.drop.push_back(begin);
      ++s.coll_begin_skipped[key];
    }
    return OTF2_CALLBACK_SUCCESS;
  }
  Rank root_rank = kNoRank;
  if (!s.member(ci, c, root, "MpiCollectiveEnd", "root", position, root_rank)) return OTF2_CALLBACK_INTERRUPT;
  if (begin != kNone) {
    (*s.ev)[begin].op = mop;
    (*s.ev)[begin].ref = ci.id;
  }
  s.ev->push_back(make_event(s.time(t), EventKind::CollEnd, mop, ci.id, root_rank, 0, sent, received));
  return OTF2_CALLBACK_SUCCESS;
}

// Score-P's own time: a buffer flush, and measurement switched off until it is switched on.
OTF2_CallbackCode on_buffer_flush(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t position, void* u, OTF2_AttributeList*,
                                  OTF2_TimeStamp stop) {
  Sink& s = sink(u);
  if (!s.check(t, position)) return OTF2_CALLBACK_INTERRUPT;
  if (stop < t) return s.fail("a BufferFlush ends at tick " + std::to_string(stop) + ", before it begins");
  s.overhead(s.time(t), s.time(stop));
  ++s.flushes_read;
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_measurement(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t position, void* u, OTF2_AttributeList*,
                                 OTF2_MeasurementMode mode) {
  Sink& s = sink(u);
  if (!s.check(t, position)) return OTF2_CALLBACK_INTERRUPT;
  if (mode == OTF2_MEASUREMENT_OFF && !s.measurement_off) {
    s.measurement_off = true;
    s.off_begin = s.time(t);
  } else if (mode == OTF2_MEASUREMENT_ON && s.measurement_off) {
    s.measurement_off = false;
    s.overhead(s.off_begin, s.time(t));
  }
  ++s.on_off_read;
  return OTF2_CALLBACK_SUCCESS;
}
// PAPI_TOT_INS / PAPI_TOT_CYC values: a counter sample of what each counted since the
// location's previous one (accumulated values as differences, modulo 2^64).
OTF2_CallbackCode on_metric(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t position, void* u, OTF2_AttributeList*,
                            OTF2_MetricRef metric, uint8_t n, const OTF2_Type* types, const OTF2_MetricValue* values) {
  Sink& s = sink(u);
  if (!s.check(t, position)) return OTF2_CALLBACK_INTERRUPT;
  const auto it = s.metrics.find(metric);
  if (it == s.metrics.end() || !it->second.defined) return s.skip(Skip::Metric);
  const MetricInfo& m = it->second;
  if (n != m.slots.size())
    return s.fail("a Metric record holds " + std::to_string(n) + " values where metric class " +
                  std::to_string(metric) + " has " + std::to_string(m.slots.size()) + " members");
  CounterSample sample;
  sample.time = s.time(t);
  for (std::size_t i = 0; i < n; ++i) {
    const MetricSlot& slot = m.slots[i];
    if (slot.counter == Counter::None) continue;
    std::uint64_t v = 0;
    if (types[i] == OTF2_TYPE_UINT64) {
      v = values[i].unsigned_int;
    } else if (types[i] == OTF2_TYPE_INT64 && values[i].signed_int >= 0) {
      v = static_cast<std::uint64_t>(values[i].signed_int);
    } else if (types[i] == OTF2_TYPE_DOUBLE && values[i].floating_point >= 0 && values[i].floating_point < 1.8e19) {
      v = static_cast<std::uint64_t>(std::llround(values[i].floating_point));
    } else {
      return s.fail("a Metric record holds a negative or non-integral hardware counter value (OTF2 type " +
                    std::to_string(static_cast<unsigned>(types[i])) + ")");
    }
    const std::size_t k = slot.counter == Counter::Instructions ? 0 : 1;
    std::uint64_t delta = v;
    if (slot.accumulated) {
      delta = v - s.last_counter[k];
      s.last_counter[k] = v;
    }
    (k == 0 ? sample.instructions : sample.cycles) = delta;
    s.counters = static_cast<std::uint8_t>(s.counters | (k == 0 ? kHasInstructions : kHasCycles));
  }
  s.loc->counters.push_back(sample);
  ++s.metrics_read;
  return OTF2_CALLBACK_SUCCESS;
}

// ProgramBegin / ProgramEnd: an Enter and a Leave of the program region, the root of every
// call path, as Scalasca's reader (PEARL) makes them. Score-P's MPI-only traces have no other
// region outside MPI: the time between MPI calls is the program's, and the delay costs and
// the critical path charge it there.
OTF2_CallbackCode on_program_begin(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t position, void* u,
                                   OTF2_AttributeList*, OTF2_StringRef name, uint32_t, const OTF2_StringRef*) {
  Sink& s = sink(u);
  if (!s.check(t, position)) return OTF2_CALLBACK_INTERRUPT;
  RegionId id = 0;
  if (const auto it = s.program_regions.find(name); it != s.program_regions.end()) {
    id = it->second;
  } else {
    const auto text = s.strings->find(name);
    std::string program = text == s.strings->end() ? std::string() : text->second;
    if (const std::size_t slash = program.rfind('/'); slash != std::string::npos) program.erase(0, slash + 1);
    if (program.empty()) program = "program";
    id = static_cast<RegionId>(s.trace_regions->size());
    s.trace_regions->push_back(Region{program, MpiOp::None, ""});
    s.program_regions.emplace(name, id);
  }
  if (++s.depth > kMaxRegionDepth)
    return s.fail_at(position, "the ProgramBegin nests regions deeper than the " + std::to_string(kMaxRegionDepth) +
                                   " levels a trace may have");
  s.program_stack.push_back(id);
  s.ev->push_back(make_event(s.time(t), EventKind::Enter, MpiOp::None, id));
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_program_end(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t position, void* u, OTF2_AttributeList*,
                                 int64_t) {
  Sink& s = sink(u);
  if (!s.check(t, position)) return OTF2_CALLBACK_INTERRUPT;
  if (s.program_stack.empty()) return s.fail_at(position, "a ProgramEnd without a ProgramBegin before it");
  if (s.depth > 0) --s.depth;
  s.ev->push_back(make_event(s.time(t), EventKind::Leave, MpiOp::None, s.program_stack.back()));
  s.program_stack.pop_back();
  return OTF2_CALLBACK_SUCCESS;
}

template <Skip K, typename... A>
OTF2_CallbackCode on_skipped(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t position, void* u, OTF2_AttributeList*,
                             A...) {
  Sink& s = sink(u);
  if (!s.check(t, position)) return OTF2_CALLBACK_INTERRUPT;
  return s.skip(K);
}
// Registers on_skipped<K> with the setter of one record kind (the argument types come from it).
template <Skip K, typename... A>
void skip_with(OTF2_ErrorCode (*set)(OTF2_EvtReaderCallbacks*,
                                     OTF2_CallbackCode (*)(OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void*,
                                                           OTF2_AttributeList*, A...)),
               OTF2_EvtReaderCallbacks* cb) {
  set(cb, &on_skipped<K, A...>);
}

OTF2_EvtReaderCallbacks* event_callbacks() {
  OTF2_EvtReaderCallbacks* cb = OTF2_EvtReaderCallbacks_New();
  if (!cb) return nullptr;
  OTF2_EvtReaderCallbacks_SetEnterCallback(cb, on_enter);
  OTF2_EvtReaderCallbacks_SetLeaveCallback(cb, on_leave);
  OTF2_EvtReaderCallbacks_SetMpiSendCallback(cb, on_send);
  OTF2_EvtReaderCallbacks_SetMpiRecvCallback(cb, on_recv);
  OTF2_EvtReaderCallbacks_SetMpiIsendCallback(cb, on_isend);
  OTF2_EvtReaderCallbacks_SetMpiIsendCompleteCallback(cb, on_isend_complete);
  OTF2_EvtReaderCallbacks_SetMpiIrecvRequestCallback(cb, on_irecv_request);
  OTF2_EvtReaderCallbacks_SetMpiIrecvCallback(cb, on_irecv);
  OTF2_EvtReaderCallbacks_SetMpiRequestCancelledCallback(cb, on_request_cancelled);
  OTF2_EvtReaderCallbacks_SetMpiCollectiveBeginCallback(cb, on_coll_begin);
  OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback(cb, on_coll_end);
  OTF2_EvtReaderCallbacks_SetBufferFlushCallback(cb, on_buffer_flush);
  OTF2_EvtReaderCallbacks_SetMeasurementOnOffCallback(cb, on_measurement);
  OTF2_EvtReaderCallbacks_SetMetricCallback(cb, on_metric);
  OTF2_EvtReaderCallbacks_SetProgramBeginCallback(cb, on_program_begin);
  OTF2_EvtReaderCallbacks_SetProgramEndCallback(cb, on_program_end);
#define WL_OTF2_SKIP(name) skip_with<Skip::name>(OTF2_EvtReaderCallbacks_Set##name##Callback, cb);
  WL_OTF2_SKIPPED_RECORDS(WL_OTF2_SKIP)
#undef WL_OTF2_SKIP
  return cb;
}

// The region a kept Enter/Leave names: user and compiler regions, and MPI functions.
bool kept_paradigm(OTF2_Paradigm p) {
  return p == OTF2_PARADIGM_UNKNOWN || p == OTF2_PARADIGM_USER || p == OTF2_PARADIGM_COMPILER ||
         p == OTF2_PARADIGM_MPI;
}
// Groups and communicators of MPI (UNKNOWN for writers that do not say).
bool mpi_paradigm(OTF2_Paradigm p) {
  return p == OTF2_PARADIGM_MPI || p == OTF2_PARADIGM_UNKNOWN;
}

void read_global_definitions(OTF2_Reader* reader, Defs& d, const std::function<void(const std::string&)>& fail) {
  OTF2_GlobalDefReader* gdr = OTF2_Reader_GetGlobalDefReader(reader);
  if (!gdr) fail("cannot read the global definitions");
  OTF2_GlobalDefReaderCallbacks* gcb = OTF2_GlobalDefReaderCallbacks_New();
  OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(
      gcb, [](void* u, uint64_t res, uint64_t off, uint64_t length, uint64_t) {
        Defs& defs = *static_cast<Defs*>(u);
        defs.resolution = res;
        defs.offset = off;
        defs.length = length;
        defs.have_clock = true;
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_GlobalDefReaderCallbacks_SetStringCallback(gcb, [](void* u, OTF2_StringRef r, const char* text) {
    static_cast<Defs*>(u)->strings[r] = text ? text : "";
    return OTF2_CALLBACK_SUCCESS;
  });
  OTF2_GlobalDefReaderCallbacks_SetRegionCallback(
      gcb, [](void* u, OTF2_RegionRef r, OTF2_StringRef name, OTF2_StringRef canonical, OTF2_StringRef,
              OTF2_RegionRole role, OTF2_Paradigm paradigm, OTF2_RegionFlag, OTF2_StringRef source, uint32_t,
              uint32_t) {
        static_cast<Defs*>(u)->regions.push_back(Defs::Reg{r, name, canonical, source, paradigm, role});
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(
      gcb, [](void* u, OTF2_LocationGroupRef g, OTF2_StringRef, OTF2_LocationGroupType type, OTF2_SystemTreeNodeRef,
              OTF2_LocationGroupRef) {
        static_cast<Defs*>(u)->process_groups[g] = type == OTF2_LOCATION_GROUP_TYPE_PROCESS;
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_GlobalDefReaderCallbacks_SetLocationCallback(
      gcb, [](void* u, OTF2_LocationRef l, OTF2_StringRef, OTF2_LocationType type, uint64_t events,
              OTF2_LocationGroupRef g) {
        static_cast<Defs*>(u)->locations[l] = Defs::Loc{type, events, g};
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_GlobalDefReaderCallbacks_SetGroupCallback(
      gcb, [](void* u, OTF2_GroupRef g, OTF2_StringRef, OTF2_GroupType type, OTF2_Paradigm paradigm, OTF2_GroupFlag,
              uint32_t n, const uint64_t* members) {
        Defs& defs = *static_cast<Defs*>(u);
        if (defs.groups.find(g) == defs.groups.end()) defs.group_order.push_back(g);
        defs.groups[g] = Defs::Grp{type, paradigm, std::vector<std::uint64_t>(members, members + n)};
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_GlobalDefReaderCallbacks_SetCommCallback(
      gcb, [](void* u, OTF2_CommRef c, OTF2_StringRef name, OTF2_GroupRef g, OTF2_CommRef, OTF2_CommFlag) {
        static_cast<Defs*>(u)->comms.push_back(Defs::Com{c, name, g});
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_GlobalDefReaderCallbacks_SetInterCommCallback(
      gcb, [](void* u, OTF2_CommRef c, OTF2_StringRef, OTF2_GroupRef, OTF2_GroupRef, OTF2_CommRef, OTF2_CommFlag) {
        static_cast<Defs*>(u)->inter_comms.push_back(c);
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_GlobalDefReaderCallbacks_SetMetricMemberCallback(
      gcb, [](void* u, OTF2_MetricMemberRef m, OTF2_StringRef name, OTF2_StringRef, OTF2_MetricType, OTF2_MetricMode mode,
              OTF2_Type, OTF2_Base, int64_t, OTF2_StringRef) {
        static_cast<Defs*>(u)->metric_members[m] = Defs::Member{name, mode};
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_GlobalDefReaderCallbacks_SetMetricClassCallback(
      gcb, [](void* u, OTF2_MetricRef c, uint8_t n, const OTF2_MetricMemberRef* members, OTF2_MetricOccurrence,
              OTF2_RecorderKind) {
        static_cast<Defs*>(u)->metric_classes[c] = std::vector<OTF2_MetricMemberRef>(members, members + n);
        return OTF2_CALLBACK_SUCCESS;
      });
  const OTF2_ErrorCode reg = OTF2_Reader_RegisterGlobalDefCallbacks(reader, gdr, gcb, &d);
  OTF2_GlobalDefReaderCallbacks_Delete(gcb);
  if (reg != OTF2_SUCCESS) fail("cannot read the global definitions");
  std::uint64_t n_defs = 0;
  const OTF2_ErrorCode code = OTF2_Reader_ReadAllGlobalDefinitions(reader, gdr, &n_defs);
  OTF2_Reader_CloseGlobalDefReader(reader, gdr);
  if (code != OTF2_SUCCESS)
    fail(std::string("corrupt or truncated global definitions after definition ") + std::to_string(n_defs) + " (" +
         OTF2_Error_GetDescription(code) + ")");
}

// One read of an archive (read_otf2), step by step: open it, read the global definitions,
// find the ranks and their worker threads, the origin, define the regions, metrics and
// communicators, then read the local definitions and the events of every location read.
class ArchiveReader {
 public:
  // Reads the ranks [first, last) and their threads (`whole`: every rank).
  ArchiveReader(const std::string& anchor, std::size_t first, std::size_t last, bool whole)
      : anchor_(anchor), first_(first), last_(last), whole_(whole) {}
  ~ArchiveReader() {
    if (reader_) OTF2_Reader_Close(reader_);
  }
  ArchiveReader(const ArchiveReader&) = delete;
  ArchiveReader& operator=(const ArchiveReader&) = delete;

  TracePart read_part(Otf2ReadStats* stats) {
    open_archive();
    read_global_defs();
    find_ranks();
    find_threads();
    read_origin();

    s_.strings = &d_.strings;
    s_.trace_regions = &t_.defs.regions;
    s_.offset = d_.offset;
    s_.resolution = static_cast<double>(d_.resolution);
    define_regions();
    define_metrics();
    define_comms();
    s_.trace_comms = &t_.defs.comms;

    // The locations read: the ranks', then the worker threads'.
    for (std::size_t r = first_; r < last_; ++r)
      reading_.push_back(Reading{location_of_rank_[r], &t_.locations[r - first_]});
    for (std::size_t i = 0; i < t_.threads.size(); ++i)
      reading_.push_back(Reading{location_of_thread_[i], &t_.threads[i]});
    read_local_defs();
    const std::uint64_t records = read_events();
    t_.counters = s_.counters;
    if (stats) fill_stats(*stats, records);
    return part();
  }

 private:
  struct Reading {
    OTF2_LocationRef ref;
    Location* target;
  };

  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(anchor_ + ": " + what +
                     (quiet_.first().empty() ? std::string() : " (" + quiet_.first() + ")"));
  }

  // libotf2 allocates what the counts in the files announce before it reads what they count
  // (and leaks what it allocated when it fails on an empty anchor): each file is checked
  // before libotf2 reads it (otf2_check.hpp).
  void open_archive() {
    if (const std::string bad = otf2_check::check_anchor(anchor_, layout_); !bad.empty())
      fail("cannot open as an OTF2 archive: " + bad);
    reader_ = OTF2_Reader_Open(anchor_.c_str());
    if (!reader_) fail("cannot open as an OTF2 archive");
    if (OTF2_Reader_SetSerialCollectiveCallbacks(reader_) != OTF2_SUCCESS) fail("cannot set up the reader");
    // Files named in messages: the archive's directory next to the anchor.
    archive_dir_ = fs::path(anchor_).replace_extension("");
    archive_name_ = archive_dir_.filename().string();
  }

  void read_global_defs() {
    const fs::path global = fs::path(archive_dir_).replace_extension(".def");
    std::error_code ec;
    if (!fs::exists(global, ec)) fail(global.filename().string() + ": missing (the global definitions)");
    if (const std::string bad =
            otf2_check::check_records(global.string(), otf2_check::FileKind::GlobalDefinitions, layout_);
        !bad.empty())
      fail(global.filename().string() + ": corrupt or truncated global definitions: " + bad);
    read_global_definitions(reader_, d_,
                            [&](const std::string& what) { fail(global.filename().string() + ": " + what); });
    if (!d_.have_clock) fail("the global definitions hold no clock properties");
    if (d_.resolution == 0)
      fail("traces.def: the clock properties give a timer resolution of 0 ticks per second (expected at least 1)");
  }

  // Ranks: the MPI COMM_LOCATIONS group lists the location of rank i at index i (Score-P:
  // each process's master thread). Without one, one rank per process location group in id
  // order, carried by its lowest CPU-thread location. Every other location is skipped.
  void find_ranks() {
    const Defs::Grp* comm_locations = nullptr;
    for (const OTF2_Paradigm want : {OTF2_PARADIGM_MPI, OTF2_PARADIGM_UNKNOWN})
      for (OTF2_GroupRef g : d_.group_order) {
        const Defs::Grp& grp = d_.groups.at(g);
        if (!comm_locations && grp.type == OTF2_GROUP_TYPE_COMM_LOCATIONS && grp.paradigm == want)
          comm_locations = &grp;
      }
    if (comm_locations && !comm_locations->members.empty()) {
      std::set<OTF2_LocationRef> seen;
      for (std::uint64_t loc : comm_locations->members) {
        if (!d_.locations.count(loc) || !seen.insert(loc).second)
          fail("the MPI locations group names " +
               std::string(d_.locations.count(loc) ? "twice" : "undefined") + " location " +
               std::to_string(loc));
        location_of_rank_.push_back(loc);
      }
    } else {
      std::map<OTF2_LocationGroupRef, OTF2_LocationRef> lowest;  // ordered maps: id order
      for (const auto& [l, loc] : d_.locations) {
        const auto g = d_.process_groups.find(loc.group);
        if (g == d_.process_groups.end() || !g->second || loc.type != OTF2_LOCATION_TYPE_CPU_THREAD) continue;
        lowest.try_emplace(loc.group, l);
      }
      for (const auto& [g, l] : lowest) location_of_rank_.push_back(l);
    }
    n_ = location_of_rank_.size();
    if (n_ == 0) fail("no MPI process location in the archive");
    for (std::size_t r = 0; r < n_; ++r) rank_of_location_[location_of_rank_[r]] = static_cast<Rank>(r);

    if (whole_) last_ = n_;
    if (last_ > n_)
      throw std::invalid_argument(anchor_ + ": ranks [" + std::to_string(first_) + ", " + std::to_string(last_) +
                                  ") of an archive of " + std::to_string(n_) + " ranks");
    t_.locations.resize(last_ - first_);
    for (std::size_t r = first_; r < last_; ++r) t_.locations[r - first_].rank = static_cast<Rank>(r);
  }

  // Worker threads: the other CPU-thread locations of a rank's location group (Score-P:
  // OpenMP and Pthread threads of the process), numbered 1, 2, ... in location id order.
  void find_threads() {
    std::map<OTF2_LocationGroupRef, Rank> rank_of_group;
    for (std::size_t r = 0; r < n_; ++r)
      rank_of_group.try_emplace(d_.locations.at(location_of_rank_[r]).group, static_cast<Rank>(r));
    std::vector<std::pair<Rank, OTF2_LocationRef>> workers;
    for (const auto& [l, loc] : d_.locations) {
      if (loc.type != OTF2_LOCATION_TYPE_CPU_THREAD || rank_of_location_.count(l)) continue;
      const auto g = rank_of_group.find(loc.group);
      if (g != rank_of_group.end()) workers.emplace_back(g->second, l);
    }
    std::sort(workers.begin(), workers.end());
    workers_ = workers.size();
    for (std::size_t i = 0; i < workers.size(); ++i) {
      const Rank rank = workers[i].first;
      if (static_cast<std::size_t>(rank) < first_ || static_cast<std::size_t>(rank) >= last_) continue;
      Location l;
      l.rank = rank;
      l.thread = !t_.threads.empty() && t_.threads.back().rank == l.rank ? t_.threads.back().thread + 1 : 1;
      t_.threads.push_back(std::move(l));
      location_of_thread_.push_back(workers[i].second);
    }
  }

  // Waitlab's own archives (creator "waitlab ...") say in their properties where the trace
  // came from and the span it declares; any other archive is taken as Score-P's, spanning the
  // clock properties' trace length from the global offset (time 0).
  void read_origin() {
    char* creator = nullptr;
    const bool own = OTF2_Reader_GetCreator(reader_, &creator) == OTF2_SUCCESS && creator &&
                     std::string_view(creator).substr(0, 7) == "waitlab";
    std::free(creator);
    const auto property = [&](const char* name) {
      char* value = nullptr;
      std::string v;
      if (OTF2_Reader_GetProperty(reader_, name, &value) == OTF2_SUCCESS && value) v = value;
      std::free(value);
      return v;
    };
    if (own) {
      const std::string origin = property(kOriginProperty);
      t_.origin = Origin::Simulated;
      for (Origin o : {Origin::Simulated, Origin::Extrae, Origin::ScoreP, Origin::Unknown})
        if (origin == origin_name(o)) t_.origin = o;
      const std::string b = property(kSpanBeginProperty), e = property(kSpanEndProperty);
      if (!b.empty() && !e.empty()) {
        char* end_b = nullptr;
        char* end_e = nullptr;
        const double vb = std::strtod(b.c_str(), &end_b), ve = std::strtod(e.c_str(), &end_e);
        if (*end_b != '\0' || *end_e != '\0' || !std::isfinite(vb) || !std::isfinite(ve))
          fail("the declared span [" + b + ", " + e + "] is not a pair of numbers");
        t_.span_begin = vb;
        t_.span_end = ve;
      }
    } else {
      t_.origin = Origin::ScoreP;
      t_.span_begin = 0;
      t_.span_end = static_cast<double>(d_.length) / static_cast<double>(d_.resolution);
    }
  }

  // Regions, in definition order; MPI functions (source file "MPI" or paradigm MPI) get their
  // operation from the canonical name. Regions of other paradigms are left out.
  void define_regions() {
    for (const auto& rg : d_.regions) {
      const std::string source = d_.str(rg.source);
      const bool mpi = source == "MPI" || rg.paradigm == OTF2_PARADIGM_MPI;
      RegionInfo info;
      info.defined = true;
      info.paradigm = rg.paradigm;
      info.keep = mpi || kept_paradigm(rg.paradigm);
      info.overhead = rg.paradigm == OTF2_PARADIGM_MEASUREMENT_SYSTEM;
      // A program region (ProgramBegin names its canonical name): kept, as a region of its own
      // (its Enter records, if a writer made any, are still the measurement system's).
      if (rg.paradigm == OTF2_PARADIGM_MEASUREMENT_SYSTEM && rg.role == OTF2_REGION_ROLE_ARTIFICIAL &&
          d_.str(rg.name) != "TRACE BUFFER FLUSH" && d_.str(rg.name) != "MEASUREMENT OFF") {
        s_.program_regions.emplace(rg.canonical, static_cast<RegionId>(t_.defs.regions.size()));
        t_.defs.regions.push_back(Region{d_.str(rg.name), MpiOp::None, ""});
      }
      if (info.keep) {
        const std::string name = d_.str(rg.name), canonical = d_.str(rg.canonical);
        info.op = mpi ? mpi_region_op(canonical.empty() ? name : canonical) : MpiOp::None;
        info.id = static_cast<RegionId>(t_.defs.regions.size());
        t_.defs.regions.push_back(Region{name, info.op, mpi ? std::string("MPI") : source});
      }
      s_.regions.put(rg.id, info);
    }
  }

  // Metric classes with PAPI_TOT_INS or PAPI_TOT_CYC members of accumulated or relative values
  // (Score-P: accumulated from the start, recorded at every Enter and Leave).
  void define_metrics() {
    for (const auto& [ref, members] : d_.metric_classes) {
      MetricInfo info;
      for (OTF2_MetricMemberRef m : members) {
        MetricSlot slot;
        const auto it = d_.metric_members.find(m);
        if (it != d_.metric_members.end()) {
          const std::string name = d_.str(it->second.name);
          const unsigned value = static_cast<unsigned>(it->second.mode) & OTF2_METRIC_VALUE_MASK;
          const bool usable = value == OTF2_METRIC_VALUE_ACCUMULATED || value == OTF2_METRIC_VALUE_RELATIVE;
          if (usable && name == "PAPI_TOT_INS") slot.counter = Counter::Instructions;
          if (usable && name == "PAPI_TOT_CYC") slot.counter = Counter::Cycles;
          slot.accumulated = value == OTF2_METRIC_VALUE_ACCUMULATED;
        }
        info.defined = info.defined || slot.counter != Counter::None;
        info.slots.push_back(slot);
      }
      s_.metrics[ref] = std::move(info);
    }
  }

  // MPI communicators: COMM_GROUP members are ranks (indices into the MPI COMM_LOCATIONS
  // group); a COMM_SELF group has none (every rank alone). Thread teams (OpenMP, Pthread
  // groups) are not MPI communicators.
  void define_comms() {
    struct Pending {
      OTF2_CommRef ref;
      Communicator comm;
      CommKind kind;
    };
    std::vector<Pending> found;
    for (const auto& c : d_.comms) {
      const auto g = d_.groups.find(c.group);
      if (g == d_.groups.end() || !mpi_paradigm(g->second.paradigm)) continue;
      const Defs::Grp& grp = g->second;
      Pending p{c.id, Communicator{d_.str(c.name), {}}, CommKind::Intra};
      if (grp.type == OTF2_GROUP_TYPE_COMM_SELF) {
        p.kind = CommKind::Self;
        if (p.comm.name.empty()) p.comm.name = "MPI_COMM_SELF";
      } else if (grp.type == OTF2_GROUP_TYPE_COMM_GROUP) {
        for (std::uint64_t idx : grp.members)
          p.comm.members.push_back(idx < n_ ? static_cast<Rank>(idx) : kNoRank);
      } else if (grp.type == OTF2_GROUP_TYPE_COMM_LOCATIONS || grp.type == OTF2_GROUP_TYPE_LOCATIONS) {
        for (std::uint64_t loc : grp.members) {
          const auto rl = rank_of_location_.find(loc);
          p.comm.members.push_back(rl == rank_of_location_.end() ? kNoRank : rl->second);
        }
      } else {
        continue;
      }
      if (p.kind == CommKind::Intra && p.comm.members.empty()) continue;  // no member: never used by MPI
      if (p.comm.name.empty()) p.comm.name = "MPI communicator " + std::to_string(c.id);
      found.push_back(std::move(p));
    }
    // MPI_COMM_WORLD first: the first communicator holding every rank in rank order.
    std::size_t world = found.size();
    for (std::size_t i = 0; i < found.size() && world == found.size(); ++i) {
      const auto& m = found[i].comm.members;
      bool identity = found[i].kind == CommKind::Intra && m.size() == n_;
      for (std::size_t r = 0; identity && r < n_; ++r) identity = m[r] == static_cast<Rank>(r);
      if (identity) world = i;
    }
    if (world == found.size()) {
      Communicator w{"MPI_COMM_WORLD", {}};
      for (std::size_t r = 0; r < n_; ++r) w.members.push_back(static_cast<Rank>(r));
      t_.defs.comms.push_back(std::move(w));
    } else {
      s_.comms.put(found[world].ref, CommInfo{0, CommKind::Intra});
      t_.defs.comms.push_back(found[world].comm);
    }
    for (std::size_t i = 0; i < found.size(); ++i) {
      if (i == world) continue;
      s_.comms.put(found[i].ref, CommInfo{static_cast<CommId>(t_.defs.comms.size()), found[i].kind});
      t_.defs.comms.push_back(std::move(found[i].comm));
    }
    for (OTF2_CommRef c : d_.inter_comms) s_.comms.put(c, CommInfo{0, CommKind::Inter});
  }

  std::string file(OTF2_LocationRef loc, const char* ext) const {
    return (archive_dir_ / (std::to_string(loc) + ext)).string();
  }
  // The location read i and its file, for messages.
  std::string where(std::size_t i, const char* ext) const {
    const Location& l = *reading_[i].target;
    return "rank " + std::to_string(l.rank) +
           (l.thread ? " thread " + std::to_string(l.thread) : std::string()) + " (" + archive_name_ + "/" +
           std::to_string(reading_[i].ref) + ext + ")";
  }

  // Local definitions first: their mapping tables (local -> global ids) and clock offsets
  // apply to the location's events.
  void read_local_defs() {
    const std::size_t n_read = reading_.size();
    for (const Reading& rd : reading_) OTF2_Reader_SelectLocation(reader_, rd.ref);
    // A writer may write no local definitions at all (their ids are then global), but when
    // the locations read have them, one that is missing would leave its events' ids unmapped.
    std::vector<char> has_defs(n_read, 0);
    bool any_defs = false;
    for (std::size_t i = 0; i < n_read; ++i) {
      std::error_code ec;
      has_defs[i] = fs::exists(file(reading_[i].ref, ".def"), ec) ? 1 : 0;
      any_defs = any_defs || has_defs[i];
    }
    if (OTF2_Reader_OpenDefFiles(reader_) == OTF2_SUCCESS) {
      for (std::size_t i = 0; i < n_read; ++i) {
        if (!has_defs[i]) {
          if (any_defs)
            fail(where(i, ".def") + ": the local definitions are missing (other locations have theirs)");
          continue;
        }
        if (const std::string bad = otf2_check::check_records(
                file(reading_[i].ref, ".def"), otf2_check::FileKind::LocalDefinitions, layout_);
            !bad.empty())
          fail(where(i, ".def") + ": corrupt or truncated local definitions: " + bad);
        OTF2_DefReader* dr = OTF2_Reader_GetDefReader(reader_, reading_[i].ref);
        if (!dr) fail(where(i, ".def") + ": cannot read the local definitions");
        std::uint64_t read = 0;
        const OTF2_ErrorCode code = OTF2_Reader_ReadAllLocalDefinitions(reader_, dr, &read);
        OTF2_Reader_CloseDefReader(reader_, dr);
        if (code != OTF2_SUCCESS)
          fail(where(i, ".def") + ": corrupt or truncated local definitions after definition " +
               std::to_string(read) + " (" + OTF2_Error_GetDescription(code) + ")");
      }
      OTF2_Reader_CloseDefFiles(reader_);
    } else if (any_defs) {
      fail("cannot open the local definition files");
    }
  }

  // The events of every location read, one location after another into the Sink; returns the
  // number of records read.
  std::uint64_t read_events() {
    const std::size_t n_read = reading_.size();
    if (OTF2_Reader_OpenEvtFiles(reader_) != OTF2_SUCCESS) fail("cannot open the event files");

    OTF2_EvtReaderCallbacks* ecb = event_callbacks();
    if (!ecb) fail("cannot set up the event reader");
    std::string error;
    std::uint64_t records = 0;
    for (std::size_t i = 0; i < n_read && error.empty(); ++i) {
      const OTF2_LocationRef loc = reading_[i].ref;
      std::vector<Event>& events = reading_[i].target->events;
      // Reserve what the definitions announce, bounded by the event file's size (a record
      // takes at least one byte), so that a corrupt count cannot allocate much.
      const std::uint64_t announced = d_.locations.at(loc).events;
      std::error_code ec;
      const std::uintmax_t bytes = fs::file_size(file(loc, ".evt"), ec);
      if (!ec) events.reserve(static_cast<std::size_t>(std::min<std::uintmax_t>(announced, bytes)));
      error = otf2_check::check_records(file(loc, ".evt"), otf2_check::FileKind::Events, layout_);
      if (!error.empty()) {
        error = where(i, ".evt") + ": corrupt or truncated events: " + error;
        break;
      }
      OTF2_EvtReader* er = OTF2_Reader_GetEvtReader(reader_, loc);
      if (!er) {
        error = where(i, ".evt") + ": cannot read the events";
        break;
      }
      s_.start(reading_[i].target, reading_[i].target->rank);
      OTF2_Reader_RegisterEvtCallbacks(reader_, er, ecb, &s_);
      // At most one record more than the definitions announce: past the end of a truncated
      // file, OTF2 may go on decoding whatever its read buffer held before (seen: forever).
      const std::uint64_t limit = announced > 0 ? announced + 1 : OTF2_UNDEFINED_UINT64;
      std::uint64_t read = 0;
      const OTF2_ErrorCode code = OTF2_Reader_ReadLocalEvents(reader_, er, limit, &read);
      OTF2_Reader_CloseEvtReader(reader_, er);
      records += read;
      if (!s_.error.empty()) {
        error = where(i, ".evt") + ", event " +
                std::to_string(s_.error_index != kNoIndex ? s_.error_index : read) + ": " + s_.error;
      } else if (code != OTF2_SUCCESS) {
        error = where(i, ".evt") + ": corrupt or truncated events after event " + std::to_string(read) +
                " (" + OTF2_Error_GetDescription(code) + ")";
      } else if (announced > 0 && read != announced) {
        error = where(i, ".evt") + ": corrupt or truncated events: " + std::to_string(read) +
                (read > announced ? "+" : "") + " records where the definitions announce " +
                std::to_string(announced);
      }
      s_.compact();
      s_.finish_states();
      if (events.capacity() - events.size() > events.size() / 4 + 1024) events.shrink_to_fit();
    }
    OTF2_EvtReaderCallbacks_Delete(ecb);
    OTF2_Reader_CloseEvtFiles(reader_);
    if (!error.empty()) fail(error);
    return records;
  }

  void fill_stats(Otf2ReadStats& stats, std::uint64_t records) const {
    stats.skipped_locations = d_.locations.size() - n_ - workers_;  // of the whole trace, in every part
    stats.thread_locations = t_.threads.size();
    stats.timer_resolution = d_.resolution;
    stats.global_offset = d_.offset;
    stats.trace_length = d_.length;
    stats.records = records;
    stats.skipped_records.clear();
    for (std::size_t k = 0; k < kSkipKinds; ++k)
      if (s_.skipped[k]) stats.skipped_records[std::string(kSkipNames[k])] += s_.skipped[k];
    for (unsigned p = 0; p < 256; ++p) {
      if (s_.enter_skipped[p])
        stats.skipped_records["Enter (" + paradigm_name(p) + ")"] += s_.enter_skipped[p];
      if (s_.leave_skipped[p])
        stats.skipped_records["Leave (" + paradigm_name(p) + ")"] += s_.leave_skipped[p];
    }
    for (std::size_t k = 0; k < kCollKeys; ++k) {
      const std::string why = k == kCollSelf    ? std::string("MPI_COMM_SELF")
                              : k == kCollInter ? std::string("inter-communicator")
                                                : collective_name(static_cast<unsigned>(k));
      if (s_.coll_begin_skipped[k])
        stats.skipped_records["MpiCollectiveBegin (" + why + ")"] += s_.coll_begin_skipped[k];
      if (s_.coll_end_skipped[k])
        stats.skipped_records["MpiCollectiveEnd (" + why + ")"] += s_.coll_end_skipped[k];
    }
    stats.converted_records.clear();
    const std::pair<const char*, std::uint64_t> converted[] = {
        {"Metric", s_.metrics_read},
        {"BufferFlush", s_.flushes_read},
        {"MeasurementOnOff", s_.on_off_read},
        {"Enter (MEASUREMENT_SYSTEM)", s_.overhead_enters},
        {"Leave (MEASUREMENT_SYSTEM)", s_.overhead_leaves}};
    for (const auto& [kind, count] : converted)
      if (count) stats.converted_records[kind] = count;
  }

  // What was read, as a part (the event counts are the definitions' records per rank).
  TracePart part() { return make_part(std::move(t_), n_, static_cast<Rank>(first_), record_counts()); }

 public:
  // The records the definitions announce for every rank's location (no event read).
  std::vector<std::uint64_t> read_record_counts() {
    open_archive();
    read_global_defs();
    find_ranks();
    return record_counts();
  }

 private:
  std::vector<std::uint64_t> record_counts() const {
    std::vector<std::uint64_t> counts;
    counts.reserve(n_);
    for (const OTF2_LocationRef loc : location_of_rank_) counts.push_back(d_.locations.at(loc).events);
    return counts;
  }

  std::string anchor_;
  std::size_t first_ = 0, last_ = 0;
  bool whole_ = true;
  QuietErrors quiet_;          // restored after the reader is closed (the destructor's body)
  otf2_check::Layout layout_;  // the chunk sizes check_anchor found, for the other files' checks
  OTF2_Reader* reader_ = nullptr;
  fs::path archive_dir_;  // the archive's directory next to the anchor
  std::string archive_name_;
  Defs d_;
  std::vector<OTF2_LocationRef> location_of_rank_;
  std::vector<OTF2_LocationRef> location_of_thread_;  // of t_.threads[i]
  std::unordered_map<OTF2_LocationRef, Rank> rank_of_location_;
  std::size_t n_ = 0;  // ranks
  Trace t_;
  Sink s_;
  std::vector<Reading> reading_;  // the locations read: the ranks', then the worker threads'
  std::size_t workers_ = 0;       // worker-thread locations of every rank (read or not)
};

}  // namespace

Trace read_otf2(const std::string& anchor, Otf2ReadStats* stats) {
  ArchiveReader reader(anchor, 0, 0, true);
  return to_trace(reader.read_part(stats));
}

TracePart read_otf2_part(const std::string& anchor, Rank first, Rank last, Otf2ReadStats* stats) {
  if (first < 0 || last < first)
    throw std::invalid_argument(anchor + ": ranks [" + std::to_string(first) + ", " + std::to_string(last) + ")");
  ArchiveReader reader(anchor, static_cast<std::size_t>(first), static_cast<std::size_t>(last), false);
  return reader.read_part(stats);
}

std::vector<std::uint64_t> otf2_record_counts(const std::string& anchor) {
  ArchiveReader reader(anchor, 0, 0, true);
  return reader.read_record_counts();
}

}  // namespace waitlab::trace
