#include "analysis/trace/otf2.hpp"

#include <otf2/otf2.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "analysis/trace/error.hpp"
#include "analysis/trace/otf2_check.hpp"

namespace waitlab::trace {

namespace fs = std::filesystem;

namespace {

// Archive properties of waitlab's own archives (creator "waitlab"): the trace's origin and
// the span it declares, in seconds on the archive's time axis (%.17g).
constexpr const char* kOriginProperty = "WAITLAB::ORIGIN";
constexpr const char* kSpanBeginProperty = "WAITLAB::SPAN_BEGIN";
constexpr const char* kSpanEndProperty = "WAITLAB::SPAN_END";

std::string number(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

OTF2_FlushType pre_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) {
  return OTF2_FLUSH;
}
OTF2_TimeStamp post_flush(void*, OTF2_FileType, OTF2_LocationRef) {
  return 0;
}
OTF2_FlushCallbacks kFlush = {pre_flush, post_flush};

// OTF2 prints its errors to stderr; while writing, keep the first one for our message instead.
class QuietErrors {
 public:
  QuietErrors() : previous_(OTF2_Error_RegisterCallback(&QuietErrors::keep, this)) {}
  ~QuietErrors() { OTF2_Error_RegisterCallback(previous_, nullptr); }
  QuietErrors(const QuietErrors&) = delete;
  QuietErrors& operator=(const QuietErrors&) = delete;
  const std::string& first() const { return first_; }

 private:
  static OTF2_ErrorCode keep(void* self, const char*, uint64_t, const char*, OTF2_ErrorCode code, const char* fmt,
                             va_list va) {
    auto* q = static_cast<QuietErrors*>(self);
    if (q->first_.empty() && fmt) {
      char buf[512];
      std::vsnprintf(buf, sizeof buf, fmt, va);
      q->first_ = buf;
    }
    return code;
  }
  OTF2_ErrorCallback previous_;
  std::string first_;
};

class Writer {
 public:
  Writer(const Trace& t, std::string where) : t_(t), where_(std::move(where)) {
    // The time axis starts at the earliest event or counter sample of any location or thread.
    begin_ = std::numeric_limits<Time>::infinity();
    end_ = -std::numeric_limits<Time>::infinity();
    for (const auto* v : {&t.locations, &t.threads})
      for (const Location& l : *v) {
        if (!l.events.empty()) {
          begin_ = std::min(begin_, l.events.front().time);
          end_ = std::max(end_, l.events.back().time);
        }
        if (!l.counters.empty()) {
          begin_ = std::min(begin_, l.counters.front().time);
          end_ = std::max(end_, l.counters.back().time);
        }
        samples_ = samples_ || !l.counters.empty();
      }
    if (begin_ > end_) begin_ = end_ = 0;
    samples_ = samples_ && t.counters != 0;
  }

  void check(OTF2_ErrorCode code, const char* what) const {
    if (code != OTF2_SUCCESS)
      throw InputError(where_ + ": cannot write the OTF2 archive (" + what + "): " + OTF2_Error_GetDescription(code) +
                       (quiet_.first().empty() ? std::string() : " (" + quiet_.first() + ")"));
  }

  OTF2_TimeStamp ticks(Time s) const {
    return static_cast<OTF2_TimeStamp>(std::llround((s - begin_) * kOtf2TicksPerSecond));
  }

  // The string id of `s`, defining it on first use.
  OTF2_StringRef str(const std::string& s) {
    const auto [it, added] = strings_.try_emplace(s, static_cast<OTF2_StringRef>(strings_.size()));
    if (added) order_.push_back(&it->first);
    return it->second;
  }

  void write(const std::string& dir) {
    // The smallest chunks OTF2 allows: a reader or writer holds (and clears) a whole chunk per
    // location, which made the 4 MiB default definition chunk of every (empty) local
    // definition file half the write time of a 256-rank trace.
    OTF2_Archive* archive = OTF2_Archive_Open(dir.c_str(), "traces", OTF2_FILEMODE_WRITE, OTF2_CHUNK_SIZE_MIN,
                                              OTF2_CHUNK_SIZE_MIN, OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (!archive)
      throw InputError(where_ + ": cannot create the OTF2 archive" +
                       (quiet_.first().empty() ? std::string() : ": " + quiet_.first()));
    try {
      body(archive);
    } catch (...) {
      OTF2_Archive_Close(archive);
      throw;
    }
    check(OTF2_Archive_Close(archive), "close");
  }

 private:
  void body(OTF2_Archive* archive) {
    check(OTF2_Archive_SetFlushCallbacks(archive, &kFlush, nullptr), "flush callbacks");
    check(OTF2_Archive_SetSerialCollectiveCallbacks(archive), "collective callbacks");
    check(OTF2_Archive_SetCreator(archive, "waitlab"), "creator");
    const std::size_t n = t_.ranks();

    // Rank -> its rank in each communicator (OTF2 names peers and roots by communicator rank).
    std::vector<std::vector<std::uint32_t>> local(t_.defs.comms.size(), std::vector<std::uint32_t>(n, OTF2_UNDEFINED_UINT32));
    for (std::size_t c = 0; c < t_.defs.comms.size(); ++c)
      for (std::size_t i = 0; i < t_.defs.comms[c].members.size(); ++i) {
        const Rank g = t_.defs.comms[c].members[i];
        if (g >= 0 && static_cast<std::size_t>(g) < n) local[c][static_cast<std::size_t>(g)] = static_cast<std::uint32_t>(i);
      }
    const auto peer = [&](CommId c, Rank g) -> std::uint32_t {
      if (c >= local.size() || g < 0 || static_cast<std::size_t>(g) >= n) return OTF2_UNDEFINED_UINT32;
      if (t_.defs.comms[c].members.empty()) return 0;  // MPI_COMM_SELF: the rank itself
      return local[c][static_cast<std::size_t>(g)];
    };

    check(OTF2_Archive_SetProperty(archive, kOriginProperty, std::string(origin_name(t_.origin)).c_str(), true),
          "origin property");
    if (t_.has_declared_span()) {
      check(OTF2_Archive_SetProperty(archive, kSpanBeginProperty, number(t_.span_begin - begin_).c_str(), true),
            "span property");
      check(OTF2_Archive_SetProperty(archive, kSpanEndProperty, number(t_.span_end - begin_).c_str(), true),
            "span property");
    }

    check(OTF2_Archive_OpenEvtFiles(archive), "open event files");
    const std::size_t n_all = n + t_.threads.size();
    std::vector<std::uint64_t> counts(n_all, 0);
    for (std::size_t r = 0; r < n_all; ++r) {
      OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(archive, r);
      if (!w) throw InputError(where_ + ": cannot open the event writer of location " + std::to_string(r));
      const Location& l = r < n ? t_.locations[r] : t_.threads[r - n];
      std::array<std::uint64_t, 2> sums{};  // accumulated instructions, cycles (Score-P's metric mode)
      std::size_t next_sample = 0;
      const auto samples_until = [&](Time time) {
        for (; samples_ && next_sample < l.counters.size() && l.counters[next_sample].time <= time; ++next_sample) {
          const CounterSample& c = l.counters[next_sample];
          sums[0] += c.instructions;
          sums[1] += c.cycles;
          std::array<OTF2_Type, 2> types{};
          std::array<OTF2_MetricValue, 2> values{};
          std::uint8_t k = 0;
          for (std::size_t i = 0; i < 2; ++i)
            if (t_.counters & (i == 0 ? kHasInstructions : kHasCycles)) {
              types[k] = OTF2_TYPE_UINT64;
              values[k++].unsigned_int = sums[i];
            }
          check(OTF2_EvtWriter_Metric(w, nullptr, ticks(c.time), 0, k, types.data(), values.data()), "metric record");
        }
      };
      for (const Event& e : l.events) {
        samples_until(e.time);  // a sample before the events of its time, as Score-P writes them
        const OTF2_TimeStamp ts = ticks(e.time);
        OTF2_ErrorCode code = OTF2_SUCCESS;
        switch (e.kind) {
          case EventKind::Enter: code = OTF2_EvtWriter_Enter(w, nullptr, ts, e.ref); break;
          case EventKind::Leave: code = OTF2_EvtWriter_Leave(w, nullptr, ts, e.ref); break;
          case EventKind::Send:
            code = OTF2_EvtWriter_MpiSend(w, nullptr, ts, peer(e.ref, e.peer), e.ref, static_cast<std::uint32_t>(e.tag),
                                          e.bytes);
            break;
          case EventKind::Recv:
            code = OTF2_EvtWriter_MpiRecv(w, nullptr, ts, peer(e.ref, e.peer), e.ref, static_cast<std::uint32_t>(e.tag),
                                          e.bytes);
            break;
          case EventKind::IsendStart:
            code = OTF2_EvtWriter_MpiIsend(w, nullptr, ts, peer(e.ref, e.peer), e.ref,
                                           static_cast<std::uint32_t>(e.tag), e.bytes, e.aux);
            break;
          case EventKind::IsendComplete: code = OTF2_EvtWriter_MpiIsendComplete(w, nullptr, ts, e.aux); break;
          case EventKind::IrecvPost: code = OTF2_EvtWriter_MpiIrecvRequest(w, nullptr, ts, e.aux); break;
          case EventKind::IrecvComplete:
            code = OTF2_EvtWriter_MpiIrecv(w, nullptr, ts, peer(e.ref, e.peer), e.ref,
                                           static_cast<std::uint32_t>(e.tag), e.bytes, e.aux);
            break;
          case EventKind::CollBegin: code = OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, ts); break;
          case EventKind::CollEnd:
            code = OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, ts, collective_op(e.op), e.ref,
                                                   e.peer == kNoRank ? OTF2_UNDEFINED_UINT32 : peer(e.ref, e.peer),
                                                   e.bytes, e.aux);
            break;
        }
        check(code, "event record");
      }
      samples_until(std::numeric_limits<Time>::infinity());
      // The location's record count as OTF2 keeps it (with any record OTF2 adds itself, such
      // as BufferFlush): the number readers get back.
      check(OTF2_EvtWriter_GetNumberOfEvents(w, &counts[r]), "count the events");
      check(OTF2_Archive_CloseEvtWriter(archive, w), "close an event writer");
    }
    check(OTF2_Archive_CloseEvtFiles(archive), "close event files");

    check(OTF2_Archive_OpenDefFiles(archive), "open definition files");
    for (std::size_t r = 0; r < n_all; ++r) {
      OTF2_DefWriter* dw = OTF2_Archive_GetDefWriter(archive, r);
      if (!dw) throw InputError(where_ + ": cannot open the definition writer of rank " + std::to_string(r));
      check(OTF2_Archive_CloseDefWriter(archive, dw), "close a definition writer");
    }
    check(OTF2_Archive_CloseDefFiles(archive), "close definition files");

    definitions(archive, counts);
  }

  void definitions(OTF2_Archive* archive, const std::vector<std::uint64_t>& counts) {
    OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(archive);
    if (!g) throw InputError(where_ + ": cannot open the global definition writer");
    const std::size_t n = t_.ranks();
    // Strings first (OTF2 wants them defined before use): collect every name.
    str("");
    const OTF2_StringRef mpi_file = str("MPI");
    std::vector<OTF2_StringRef> region_names, region_files;
    for (const auto& reg : t_.defs.regions) {
      region_names.push_back(str(reg.name));
      region_files.push_back(reg.op != MpiOp::None ? mpi_file : str(reg.file));
    }
    const OTF2_StringRef machine = str("machine"), node_class = str("node"), mpi_name = str("MPI");
    std::vector<OTF2_StringRef> rank_names, thread_names;
    for (std::size_t r = 0; r < n; ++r) {
      rank_names.push_back(str("MPI Rank " + std::to_string(r)));
      thread_names.push_back(str("Master thread"));
    }
    for (const Location& l : t_.threads) thread_names.push_back(str("Thread " + std::to_string(l.thread)));
    const OTF2_StringRef ins_name = str("PAPI_TOT_INS"), cyc_name = str("PAPI_TOT_CYC"), unit = str("#");
    const OTF2_StringRef locations_name = str("MPI_COMM_WORLD locations");
    std::vector<OTF2_StringRef> comm_names;
    for (const auto& c : t_.defs.comms) comm_names.push_back(str(c.name));

    check(OTF2_GlobalDefWriter_WriteClockProperties(g, static_cast<std::uint64_t>(kOtf2TicksPerSecond), 0,
                                                    ticks(end_) + 1, OTF2_UNDEFINED_TIMESTAMP),
          "clock properties");
    for (const std::string* s : order_) check(OTF2_GlobalDefWriter_WriteString(g, strings_.at(*s), s->c_str()), "string");
    check(OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_MPI, mpi_name, OTF2_PARADIGM_CLASS_PROCESS), "paradigm");
    for (std::size_t i = 0; i < t_.defs.regions.size(); ++i) {
      // An MPI function the event model has no operation for (MPI_Comm_split, read from a
      // measured trace) keeps source file "MPI" and paradigm MPI, so it stays an MPI function.
      const Region& reg = t_.defs.regions[i];
      const bool mpi = reg.op != MpiOp::None || reg.file == "MPI";
      check(OTF2_GlobalDefWriter_WriteRegion(g, static_cast<OTF2_RegionRef>(i), region_names[i], region_names[i], 0,
                                             reg.op != MpiOp::None ? region_role(reg.op)
                                                                   : static_cast<OTF2_RegionRole>(OTF2_REGION_ROLE_FUNCTION),
                                             mpi ? OTF2_PARADIGM_MPI : OTF2_PARADIGM_USER, OTF2_REGION_FLAG_NONE,
                                             region_files[i], 0, 0),
            "region");
    }
    check(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, machine, node_class, OTF2_UNDEFINED_SYSTEM_TREE_NODE),
          "system tree");
    for (std::size_t r = 0; r < n; ++r)
      check(OTF2_GlobalDefWriter_WriteLocationGroup(g, static_cast<OTF2_LocationGroupRef>(r), rank_names[r],
                                                    OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
                                                    OTF2_UNDEFINED_LOCATION_GROUP),
            "location group");
    for (std::size_t r = 0; r < n; ++r)
      check(OTF2_GlobalDefWriter_WriteLocation(g, r, thread_names[r], OTF2_LOCATION_TYPE_CPU_THREAD, counts[r],
                                               static_cast<OTF2_LocationGroupRef>(r)),
            "location");
    // Worker threads: further CPU-thread locations of their rank's process.
    for (std::size_t i = 0; i < t_.threads.size(); ++i)
      check(OTF2_GlobalDefWriter_WriteLocation(g, n + i, thread_names[n + i], OTF2_LOCATION_TYPE_CPU_THREAD,
                                               counts[n + i], static_cast<OTF2_LocationGroupRef>(t_.threads[i].rank)),
            "thread location");
    if (samples_) {  // metric class 0: the counters the trace has, accumulated from the start
      std::vector<OTF2_MetricMemberRef> members;
      if (t_.counters & kHasInstructions) members.push_back(0);
      if (t_.counters & kHasCycles) members.push_back(1);
      for (OTF2_MetricMemberRef m : members)
        check(OTF2_GlobalDefWriter_WriteMetricMember(g, m, m == 0 ? ins_name : cyc_name, m == 0 ? ins_name : cyc_name,
                                                     OTF2_METRIC_TYPE_PAPI, OTF2_METRIC_ACCUMULATED_START,
                                                     OTF2_TYPE_UINT64, OTF2_BASE_DECIMAL, 0, unit),
              "metric member");
      check(OTF2_GlobalDefWriter_WriteMetricClass(g, 0, static_cast<std::uint8_t>(members.size()), members.data(),
                                                  OTF2_METRIC_SYNCHRONOUS, OTF2_RECORDER_KIND_CPU),
            "metric class");
    }
    // Group 0: the locations of the MPI ranks (COMM_LOCATIONS), before every communicator group.
    std::vector<std::uint64_t> all(n);
    for (std::size_t r = 0; r < n; ++r) all[r] = r;
    check(OTF2_GlobalDefWriter_WriteGroup(g, 0, locations_name, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
                                          OTF2_GROUP_FLAG_NONE, static_cast<std::uint32_t>(n), all.data()),
          "locations group");
    for (std::size_t c = 0; c < t_.defs.comms.size(); ++c) {
      std::vector<std::uint64_t> members;
      for (Rank m : t_.defs.comms[c].members) members.push_back(static_cast<std::uint64_t>(m));
      // No members: MPI_COMM_SELF (every rank alone), a COMM_SELF group as Score-P writes it.
      check(OTF2_GlobalDefWriter_WriteGroup(g, static_cast<OTF2_GroupRef>(c + 1), comm_names[c],
                                            members.empty() ? OTF2_GROUP_TYPE_COMM_SELF : OTF2_GROUP_TYPE_COMM_GROUP,
                                            OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                            static_cast<std::uint32_t>(members.size()), members.data()),
            "communicator group");
      check(OTF2_GlobalDefWriter_WriteComm(g, static_cast<OTF2_CommRef>(c), comm_names[c],
                                           static_cast<OTF2_GroupRef>(c + 1),
                                           c == 0 ? OTF2_UNDEFINED_COMM : static_cast<OTF2_CommRef>(0),
                                           OTF2_COMM_FLAG_NONE),
            "communicator");
    }
  }

  static OTF2_CollectiveOp collective_op(MpiOp op) {
    switch (op) {
      case MpiOp::Barrier: return OTF2_COLLECTIVE_OP_BARRIER;
      case MpiOp::Bcast: return OTF2_COLLECTIVE_OP_BCAST;
      case MpiOp::Gather: return OTF2_COLLECTIVE_OP_GATHER;
      case MpiOp::Scatter: return OTF2_COLLECTIVE_OP_SCATTER;
      case MpiOp::Allgather: return OTF2_COLLECTIVE_OP_ALLGATHER;
      case MpiOp::Alltoall: return OTF2_COLLECTIVE_OP_ALLTOALL;
      case MpiOp::Allreduce: return OTF2_COLLECTIVE_OP_ALLREDUCE;
      case MpiOp::Reduce: return OTF2_COLLECTIVE_OP_REDUCE;
      case MpiOp::ReduceScatter: return OTF2_COLLECTIVE_OP_REDUCE_SCATTER;
      case MpiOp::Scan: return OTF2_COLLECTIVE_OP_SCAN;
      case MpiOp::Exscan: return OTF2_COLLECTIVE_OP_EXSCAN;
      case MpiOp::Gatherv: return OTF2_COLLECTIVE_OP_GATHERV;
      case MpiOp::Scatterv: return OTF2_COLLECTIVE_OP_SCATTERV;
      case MpiOp::Allgatherv: return OTF2_COLLECTIVE_OP_ALLGATHERV;
      case MpiOp::Alltoallv: return OTF2_COLLECTIVE_OP_ALLTOALLV;
      default: return OTF2_COLLECTIVE_OP_BARRIER;
    }
  }

  static OTF2_RegionRole region_role(MpiOp op) {
    switch (base_collective(op)) {
      case MpiOp::Barrier: return OTF2_REGION_ROLE_BARRIER;
      case MpiOp::Bcast:
      case MpiOp::Scatter: return OTF2_REGION_ROLE_COLL_ONE2ALL;
      case MpiOp::Reduce:
      case MpiOp::Gather: return OTF2_REGION_ROLE_COLL_ALL2ONE;
      case MpiOp::Allreduce:
      case MpiOp::Allgather:
      case MpiOp::Alltoall:
      case MpiOp::ReduceScatter:
      case MpiOp::Scan:
      case MpiOp::Exscan: return OTF2_REGION_ROLE_COLL_ALL2ALL;
      case MpiOp::Init:
      case MpiOp::Finalize: return OTF2_REGION_ROLE_FUNCTION;
      default: return OTF2_REGION_ROLE_POINT2POINT;
    }
  }

  QuietErrors quiet_;
  const Trace& t_;
  std::string where_;
  Time begin_ = 0;
  Time end_ = 0;
  bool samples_ = false;  // counter samples written as Metric records
  std::map<std::string, OTF2_StringRef> strings_;
  std::vector<const std::string*> order_;  // strings in id order
};

}  // namespace

// ---- reading ----

namespace {

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
OTF2_CallbackCode on_send(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t position, void* u, OTF2_AttributeList*, uint32_t to,
                          OTF2_CommRef c, uint32_t tag, uint64_t len) {
  Sink& s = sink(u);
  if (!s.check(t, position)) return OTF2_CALLBACK_INTERRUPT;
  const CommInfo& ci = s.comms.get(c);
  if (ci.kind == CommKind::Undefined) return s.undefined_comm(c);
  if (ci.kind == CommKind::Inter) return s.skip(Skip::InterSend);
  Rank peer = kNoRank;
  if (!s.member(ci, c, to, "MpiSend", "receiver", position, peer)) return OTF2_CALLBACK_INTERRUPT;
  s.ev->push_back(
      make_event(s.time(t), EventKind::Send, s.call, ci.id, peer, static_cast<std::int32_t>(tag), len));
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_recv(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t position, void* u, OTF2_AttributeList*, uint32_t from,
                          OTF2_CommRef c, uint32_t tag, uint64_t len) {
  Sink& s = sink(u);
  if (!s.check(t, position)) return OTF2_CALLBACK_INTERRUPT;
  const CommInfo& ci = s.comms.get(c);
  if (ci.kind == CommKind::Undefined) return s.undefined_comm(c);
  if (ci.kind == CommKind::Inter) return s.skip(Skip::InterRecv);
  Rank peer = kNoRank;
  if (!s.member(ci, c, from, "MpiRecv", "sender", position, peer)) return OTF2_CALLBACK_INTERRUPT;
  s.ev->push_back(
      make_event(s.time(t), EventKind::Recv, s.call, ci.id, peer, static_cast<std::int32_t>(tag), len));
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_isend(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t position, void* u, OTF2_AttributeList*, uint32_t to,
                           OTF2_CommRef c, uint32_t tag, uint64_t len, uint64_t req) {
  Sink& s = sink(u);
  if (!s.check(t, position)) return OTF2_CALLBACK_INTERRUPT;
  const CommInfo& ci = s.comms.get(c);
  if (ci.kind == CommKind::Undefined) return s.undefined_comm(c);
  if (ci.kind == CommKind::Inter) {
    s.inter_isends.insert(req);
    return s.skip(Skip::InterIsend);
  }
  Rank peer = kNoRank;
  if (!s.member(ci, c, to, "MpiIsend", "receiver", position, peer)) return OTF2_CALLBACK_INTERRUPT;
  s.ev->push_back(make_event(s.time(t), EventKind::IsendStart, s.call, ci.id, peer,
                             static_cast<std::int32_t>(tag), len, req));
  return OTF2_CALLBACK_SUCCESS;
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
  Sink& s = sink(u);
  if (!s.check(t, position)) return OTF2_CALLBACK_INTERRUPT;
  const CommInfo& ci = s.comms.get(c);
  if (ci.kind == CommKind::Undefined) return s.undefined_comm(c);
  if (ci.kind == CommKind::Inter) {
    if (s.drop_post(req, EventKind::IrecvPost, EventKind::IrecvComplete)) s.skip(Skip::InterIrecvRequest);
    return s.skip(Skip::InterIrecv);
  }
  Rank peer = kNoRank;
  if (!s.member(ci, c, from, "MpiIrecv", "sender", position, peer)) return OTF2_CALLBACK_INTERRUPT;
  s.ev->push_back(make_event(s.time(t), EventKind::IrecvComplete, s.call, ci.id, peer,
                             static_cast<std::int32_t>(tag), len, req));
  return OTF2_CALLBACK_SUCCESS;
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

// OTF2 3.0 has no call to set an archive's trace identifier: OTF2_AnchorFile_Save (run by
// OTF2_Archive_Close) makes one up from the process id, the clock and the host id, so two
// writes of one trace differed in those 8 bytes of the anchor file. Once the archive is
// closed, the identifier is replaced by one made from the archive's content: the crc32 (zlib)
// of the definitions — the anchor file with its identifier zeroed, traces.def and the local
// .def files — in the high 32 bits, the crc32 of the event files in the low 32 (files in name
// order; 1 if both are 0, as 0 means "none" to OTF2). The identifier is found in the anchor as
// the one occurrence of the 8 bytes that OTF2_Reader_GetTraceId returns (OTF2 stores it
// unencoded, in the file's byte order), and read back through the same call after the change.
void set_content_trace_id(const fs::path& dir, const std::string& where) {
  QuietErrors quiet;
  const fs::path anchor = dir / "traces.otf2";
  const auto trace_id = [&] {
    OTF2_Reader* reader = OTF2_Reader_Open(anchor.c_str());
    std::uint64_t id = 0;
    const bool ok = reader && OTF2_Reader_GetTraceId(reader, &id) == OTF2_SUCCESS;
    if (reader) OTF2_Reader_Close(reader);
    if (!ok) throw std::runtime_error(where + ": cannot read back the trace identifier of the OTF2 archive just written");
    return id;
  };
  const auto slurp = [&](const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) throw InputError(where + ": cannot read back " + p.filename().string());
    return bytes;
  };
  const auto crc_of = [&](std::uint32_t crc, const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::vector<char> buf(1 << 20);
    while (in) {
      in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
      crc = static_cast<std::uint32_t>(
          crc32_z(crc, reinterpret_cast<const Bytef*>(buf.data()), static_cast<std::size_t>(in.gcount())));
    }
    if (in.bad()) throw InputError(where + ": cannot read back " + p.filename().string());
    return crc;
  };

  const std::uint64_t made_up = trace_id();
  std::string bytes = slurp(anchor);
  char pattern[sizeof made_up];
  std::memcpy(pattern, &made_up, sizeof made_up);
  const std::string_view view(bytes);
  const std::size_t at = view.find(std::string_view(pattern, sizeof pattern));
  if (at == std::string_view::npos || view.find(std::string_view(pattern, sizeof pattern), at + 1) != std::string_view::npos)
    throw std::runtime_error(where + ": cannot find the trace identifier in the OTF2 anchor file");
  std::memset(bytes.data() + at, 0, sizeof made_up);

  std::uint32_t defs = static_cast<std::uint32_t>(crc32_z(0, reinterpret_cast<const Bytef*>(bytes.data()), bytes.size()));
  defs = crc_of(defs, dir / "traces.def");
  std::vector<fs::path> local;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir / "traces", ec))
    if (entry.is_regular_file()) local.push_back(entry.path());
  if (ec) throw InputError(where + ": cannot list the OTF2 archive's traces/: " + ec.message());
  std::sort(local.begin(), local.end());
  std::uint32_t events = 0;
  for (const fs::path& p : local) {
    if (p.extension() == ".def") defs = crc_of(defs, p);
    if (p.extension() == ".evt") events = crc_of(events, p);
  }
  std::uint64_t id = std::uint64_t{defs} << 32 | events;
  if (id == 0) id = 1;

  std::memcpy(bytes.data() + at, &id, sizeof id);
  {
    std::ofstream out(anchor, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) throw InputError(where + ": cannot rewrite the OTF2 anchor file");
  }
  if (trace_id() != id) throw std::runtime_error(where + ": the OTF2 anchor file did not take the trace identifier");
}

}  // namespace

Trace read_otf2(const std::string& anchor, Otf2ReadStats* stats) {
  QuietErrors quiet;
  const std::function<void(const std::string&)> fail = [&](const std::string& what) {
    throw InputError(anchor + ": " + what + (quiet.first().empty() ? std::string() : " (" + quiet.first() + ")"));
  };
  // libotf2 allocates what the counts in the files announce before it reads what they count
  // (and leaks what it allocated when it fails on an empty anchor): each file is checked
  // before libotf2 reads it (otf2_check.hpp).
  otf2_check::Layout layout;
  if (const std::string bad = otf2_check::check_anchor(anchor, layout); !bad.empty())
    fail("cannot open as an OTF2 archive: " + bad);
  OTF2_Reader* reader = OTF2_Reader_Open(anchor.c_str());
  if (!reader) fail("cannot open as an OTF2 archive");
  struct Close {
    OTF2_Reader* r;
    ~Close() { OTF2_Reader_Close(r); }
  } close{reader};
  if (OTF2_Reader_SetSerialCollectiveCallbacks(reader) != OTF2_SUCCESS) fail("cannot set up the reader");
  // Files named in messages: the archive's directory next to the anchor.
  const fs::path archive_dir = fs::path(anchor).replace_extension("");
  const std::string archive_name = archive_dir.filename().string();

  Defs d;
  {
    const fs::path global = fs::path(archive_dir).replace_extension(".def");
    std::error_code ec;
    if (!fs::exists(global, ec)) fail(global.filename().string() + ": missing (the global definitions)");
    if (const std::string bad =
            otf2_check::check_records(global.string(), otf2_check::FileKind::GlobalDefinitions, layout);
        !bad.empty())
      fail(global.filename().string() + ": corrupt or truncated global definitions: " + bad);
    read_global_definitions(reader, d, [&](const std::string& what) { fail(global.filename().string() + ": " + what); });
  }
  if (!d.have_clock) fail("the global definitions hold no clock properties");
  if (d.resolution == 0)
    fail("traces.def: the clock properties give a timer resolution of 0 ticks per second (expected at least 1)");

  std::vector<OTF2_LocationRef> location_of_thread;  // of t.threads[i]
  // Ranks: the MPI COMM_LOCATIONS group lists the location of rank i at index i (Score-P:
  // each process's master thread). Without one, one rank per process location group in id
  // order, carried by its lowest CPU-thread location. Every other location is skipped.
  std::vector<OTF2_LocationRef> location_of_rank;
  const Defs::Grp* comm_locations = nullptr;
  for (const OTF2_Paradigm want : {OTF2_PARADIGM_MPI, OTF2_PARADIGM_UNKNOWN})
    for (OTF2_GroupRef g : d.group_order) {
      const Defs::Grp& grp = d.groups.at(g);
      if (!comm_locations && grp.type == OTF2_GROUP_TYPE_COMM_LOCATIONS && grp.paradigm == want) comm_locations = &grp;
    }
  if (comm_locations && !comm_locations->members.empty()) {
    std::set<OTF2_LocationRef> seen;
    for (std::uint64_t loc : comm_locations->members) {
      if (!d.locations.count(loc) || !seen.insert(loc).second)
        fail("the MPI locations group names " + std::string(d.locations.count(loc) ? "twice" : "undefined") +
             " location " + std::to_string(loc));
      location_of_rank.push_back(loc);
    }
  } else {
    std::map<OTF2_LocationGroupRef, OTF2_LocationRef> lowest;  // ordered maps: id order
    for (const auto& [l, loc] : d.locations) {
      const auto g = d.process_groups.find(loc.group);
      if (g == d.process_groups.end() || !g->second || loc.type != OTF2_LOCATION_TYPE_CPU_THREAD) continue;
      lowest.try_emplace(loc.group, l);
    }
    for (const auto& [g, l] : lowest) location_of_rank.push_back(l);
  }
  const std::size_t n = location_of_rank.size();
  if (n == 0) fail("no MPI process location in the archive");
  std::unordered_map<OTF2_LocationRef, Rank> rank_of_location;
  for (std::size_t r = 0; r < n; ++r) rank_of_location[location_of_rank[r]] = static_cast<Rank>(r);

  Trace t;
  t.locations.resize(n);
  for (std::size_t r = 0; r < n; ++r) t.locations[r].rank = static_cast<Rank>(r);

  // Worker threads: the other CPU-thread locations of a rank's location group (Score-P:
  // OpenMP and Pthread threads of the process), numbered 1, 2, ... in location id order.
  {
    std::map<OTF2_LocationGroupRef, Rank> rank_of_group;
    for (std::size_t r = 0; r < n; ++r) rank_of_group.try_emplace(d.locations.at(location_of_rank[r]).group, static_cast<Rank>(r));
    std::vector<std::pair<Rank, OTF2_LocationRef>> workers;
    for (const auto& [l, loc] : d.locations) {
      if (loc.type != OTF2_LOCATION_TYPE_CPU_THREAD || rank_of_location.count(l)) continue;
      const auto g = rank_of_group.find(loc.group);
      if (g != rank_of_group.end()) workers.emplace_back(g->second, l);
    }
    std::sort(workers.begin(), workers.end());
    for (std::size_t i = 0; i < workers.size(); ++i) {
      Location l;
      l.rank = workers[i].first;
      l.thread = i > 0 && t.threads.back().rank == l.rank ? t.threads.back().thread + 1 : 1;
      t.threads.push_back(std::move(l));
      location_of_thread.push_back(workers[i].second);
    }
  }

  // Waitlab's own archives (creator "waitlab ...") say in their properties where the trace
  // came from and the span it declares; any other archive is taken as Score-P's, spanning the
  // clock properties' trace length from the global offset (time 0).
  {
    char* creator = nullptr;
    const bool own = OTF2_Reader_GetCreator(reader, &creator) == OTF2_SUCCESS && creator &&
                     std::string_view(creator).substr(0, 7) == "waitlab";
    std::free(creator);
    const auto property = [&](const char* name) {
      char* value = nullptr;
      std::string v;
      if (OTF2_Reader_GetProperty(reader, name, &value) == OTF2_SUCCESS && value) v = value;
      std::free(value);
      return v;
    };
    if (own) {
      const std::string origin = property(kOriginProperty);
      t.origin = Origin::Simulated;
      for (Origin o : {Origin::Simulated, Origin::Extrae, Origin::ScoreP, Origin::Unknown})
        if (origin == origin_name(o)) t.origin = o;
      const std::string b = property(kSpanBeginProperty), e = property(kSpanEndProperty);
      if (!b.empty() && !e.empty()) {
        char* end_b = nullptr;
        char* end_e = nullptr;
        const double vb = std::strtod(b.c_str(), &end_b), ve = std::strtod(e.c_str(), &end_e);
        if (*end_b != '\0' || *end_e != '\0' || !std::isfinite(vb) || !std::isfinite(ve))
          fail("the declared span [" + b + ", " + e + "] is not a pair of numbers");
        t.span_begin = vb;
        t.span_end = ve;
      }
    } else {
      t.origin = Origin::ScoreP;
      t.span_begin = 0;
      t.span_end = static_cast<double>(d.length) / static_cast<double>(d.resolution);
    }
  }

  Sink s;
  s.strings = &d.strings;
  s.trace_regions = &t.defs.regions;
  s.offset = d.offset;
  s.resolution = static_cast<double>(d.resolution);

  // Regions, in definition order; MPI functions (source file "MPI" or paradigm MPI) get their
  // operation from the canonical name. Regions of other paradigms are left out.
  for (const auto& rg : d.regions) {
    const std::string source = d.str(rg.source);
    const bool mpi = source == "MPI" || rg.paradigm == OTF2_PARADIGM_MPI;
    RegionInfo info;
    info.defined = true;
    info.paradigm = rg.paradigm;
    info.keep = mpi || kept_paradigm(rg.paradigm);
    info.overhead = rg.paradigm == OTF2_PARADIGM_MEASUREMENT_SYSTEM;
    // A program region (ProgramBegin names its canonical name): kept, as a region of its own
    // (its Enter records, if a writer made any, are still the measurement system's).
    if (rg.paradigm == OTF2_PARADIGM_MEASUREMENT_SYSTEM && rg.role == OTF2_REGION_ROLE_ARTIFICIAL &&
        d.str(rg.name) != "TRACE BUFFER FLUSH" && d.str(rg.name) != "MEASUREMENT OFF") {
      s.program_regions.emplace(rg.canonical, static_cast<RegionId>(t.defs.regions.size()));
      t.defs.regions.push_back(Region{d.str(rg.name), MpiOp::None, ""});
    }
    if (info.keep) {
      const std::string name = d.str(rg.name), canonical = d.str(rg.canonical);
      info.op = mpi ? mpi_region_op(canonical.empty() ? name : canonical) : MpiOp::None;
      info.id = static_cast<RegionId>(t.defs.regions.size());
      t.defs.regions.push_back(Region{name, info.op, mpi ? std::string("MPI") : source});
    }
    s.regions.put(rg.id, info);
  }

  // Metric classes with PAPI_TOT_INS or PAPI_TOT_CYC members of accumulated or relative values
  // (Score-P: accumulated from the start, recorded at every Enter and Leave).
  for (const auto& [ref, members] : d.metric_classes) {
    MetricInfo info;
    for (OTF2_MetricMemberRef m : members) {
      MetricSlot slot;
      const auto it = d.metric_members.find(m);
      if (it != d.metric_members.end()) {
        const std::string name = d.str(it->second.name);
        const unsigned value = static_cast<unsigned>(it->second.mode) & OTF2_METRIC_VALUE_MASK;
        const bool usable = value == OTF2_METRIC_VALUE_ACCUMULATED || value == OTF2_METRIC_VALUE_RELATIVE;
        if (usable && name == "PAPI_TOT_INS") slot.counter = Counter::Instructions;
        if (usable && name == "PAPI_TOT_CYC") slot.counter = Counter::Cycles;
        slot.accumulated = value == OTF2_METRIC_VALUE_ACCUMULATED;
      }
      info.defined = info.defined || slot.counter != Counter::None;
      info.slots.push_back(slot);
    }
    s.metrics[ref] = std::move(info);
  }

  // MPI communicators: COMM_GROUP members are ranks (indices into the MPI COMM_LOCATIONS
  // group); a COMM_SELF group has none (every rank alone). Thread teams (OpenMP, Pthread
  // groups) are not MPI communicators.
  struct Pending {
    OTF2_CommRef ref;
    Communicator comm;
    CommKind kind;
  };
  std::vector<Pending> found;
  for (const auto& c : d.comms) {
    const auto g = d.groups.find(c.group);
    if (g == d.groups.end() || !mpi_paradigm(g->second.paradigm)) continue;
    const Defs::Grp& grp = g->second;
    Pending p{c.id, Communicator{d.str(c.name), {}}, CommKind::Intra};
    if (grp.type == OTF2_GROUP_TYPE_COMM_SELF) {
      p.kind = CommKind::Self;
      if (p.comm.name.empty()) p.comm.name = "MPI_COMM_SELF";
    } else if (grp.type == OTF2_GROUP_TYPE_COMM_GROUP) {
      for (std::uint64_t idx : grp.members) p.comm.members.push_back(idx < n ? static_cast<Rank>(idx) : kNoRank);
    } else if (grp.type == OTF2_GROUP_TYPE_COMM_LOCATIONS || grp.type == OTF2_GROUP_TYPE_LOCATIONS) {
      for (std::uint64_t loc : grp.members) {
        const auto rl = rank_of_location.find(loc);
        p.comm.members.push_back(rl == rank_of_location.end() ? kNoRank : rl->second);
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
    bool identity = found[i].kind == CommKind::Intra && m.size() == n;
    for (std::size_t r = 0; identity && r < n; ++r) identity = m[r] == static_cast<Rank>(r);
    if (identity) world = i;
  }
  if (world == found.size()) {
    Communicator w{"MPI_COMM_WORLD", {}};
    for (std::size_t r = 0; r < n; ++r) w.members.push_back(static_cast<Rank>(r));
    t.defs.comms.push_back(std::move(w));
  } else {
    s.comms.put(found[world].ref, CommInfo{0, CommKind::Intra});
    t.defs.comms.push_back(found[world].comm);
  }
  for (std::size_t i = 0; i < found.size(); ++i) {
    if (i == world) continue;
    s.comms.put(found[i].ref, CommInfo{static_cast<CommId>(t.defs.comms.size()), found[i].kind});
    t.defs.comms.push_back(std::move(found[i].comm));
  }
  for (OTF2_CommRef c : d.inter_comms) s.comms.put(c, CommInfo{0, CommKind::Inter});
  s.trace_comms = &t.defs.comms;

  // The locations read: the ranks', then the worker threads'.
  struct Reading {
    OTF2_LocationRef ref;
    Location* target;
  };
  std::vector<Reading> reading;
  for (std::size_t r = 0; r < n; ++r) reading.push_back(Reading{location_of_rank[r], &t.locations[r]});
  for (std::size_t i = 0; i < t.threads.size(); ++i) reading.push_back(Reading{location_of_thread[i], &t.threads[i]});
  const std::size_t n_read = reading.size();

  // Local definitions first: their mapping tables (local -> global ids) and clock offsets
  // apply to the location's events.
  for (const Reading& rd : reading) OTF2_Reader_SelectLocation(reader, rd.ref);
  const auto file = [&](OTF2_LocationRef loc, const char* ext) {
    return (archive_dir / (std::to_string(loc) + ext)).string();
  };
  const auto where = [&](std::size_t i, const char* ext) {
    const Location& l = *reading[i].target;
    return "rank " + std::to_string(l.rank) + (l.thread ? " thread " + std::to_string(l.thread) : std::string()) +
           " (" + archive_name + "/" + std::to_string(reading[i].ref) + ext + ")";
  };
  // A writer may write no local definitions at all (their ids are then global), but when
  // the locations read have them, one that is missing would leave its events' ids unmapped.
  std::vector<char> has_defs(n_read, 0);
  bool any_defs = false;
  for (std::size_t i = 0; i < n_read; ++i) {
    std::error_code ec;
    has_defs[i] = fs::exists(file(reading[i].ref, ".def"), ec) ? 1 : 0;
    any_defs = any_defs || has_defs[i];
  }
  if (OTF2_Reader_OpenDefFiles(reader) == OTF2_SUCCESS) {
    for (std::size_t i = 0; i < n_read; ++i) {
      if (!has_defs[i]) {
        if (any_defs) fail(where(i, ".def") + ": the local definitions are missing (other locations have theirs)");
        continue;
      }
      if (const std::string bad = otf2_check::check_records(file(reading[i].ref, ".def"),
                                                            otf2_check::FileKind::LocalDefinitions, layout);
          !bad.empty())
        fail(where(i, ".def") + ": corrupt or truncated local definitions: " + bad);
      OTF2_DefReader* dr = OTF2_Reader_GetDefReader(reader, reading[i].ref);
      if (!dr) fail(where(i, ".def") + ": cannot read the local definitions");
      std::uint64_t read = 0;
      const OTF2_ErrorCode code = OTF2_Reader_ReadAllLocalDefinitions(reader, dr, &read);
      OTF2_Reader_CloseDefReader(reader, dr);
      if (code != OTF2_SUCCESS)
        fail(where(i, ".def") + ": corrupt or truncated local definitions after definition " + std::to_string(read) +
             " (" + OTF2_Error_GetDescription(code) + ")");
    }
    OTF2_Reader_CloseDefFiles(reader);
  } else if (any_defs) {
    fail("cannot open the local definition files");
  }
  if (OTF2_Reader_OpenEvtFiles(reader) != OTF2_SUCCESS) fail("cannot open the event files");

  OTF2_EvtReaderCallbacks* ecb = event_callbacks();
  if (!ecb) fail("cannot set up the event reader");
  std::string error;
  std::uint64_t records = 0;
  for (std::size_t i = 0; i < n_read && error.empty(); ++i) {
    const OTF2_LocationRef loc = reading[i].ref;
    std::vector<Event>& events = reading[i].target->events;
    // Reserve what the definitions announce, bounded by the event file's size (a record
    // takes at least one byte), so that a corrupt count cannot allocate much.
    const std::uint64_t announced = d.locations.at(loc).events;
    std::error_code ec;
    const std::uintmax_t bytes = fs::file_size(file(loc, ".evt"), ec);
    if (!ec) events.reserve(static_cast<std::size_t>(std::min<std::uintmax_t>(announced, bytes)));
    error = otf2_check::check_records(file(loc, ".evt"), otf2_check::FileKind::Events, layout);
    if (!error.empty()) {
      error = where(i, ".evt") + ": corrupt or truncated events: " + error;
      break;
    }
    OTF2_EvtReader* er = OTF2_Reader_GetEvtReader(reader, loc);
    if (!er) {
      error = where(i, ".evt") + ": cannot read the events";
      break;
    }
    s.start(reading[i].target, reading[i].target->rank);
    OTF2_Reader_RegisterEvtCallbacks(reader, er, ecb, &s);
    // At most one record more than the definitions announce: past the end of a truncated
    // file, OTF2 may go on decoding whatever its read buffer held before (seen: forever).
    const std::uint64_t limit = announced > 0 ? announced + 1 : OTF2_UNDEFINED_UINT64;
    std::uint64_t read = 0;
    const OTF2_ErrorCode code = OTF2_Reader_ReadLocalEvents(reader, er, limit, &read);
    OTF2_Reader_CloseEvtReader(reader, er);
    records += read;
    if (!s.error.empty()) {
      error = where(i, ".evt") + ", event " + std::to_string(s.error_index != kNoIndex ? s.error_index : read) + ": " +
              s.error;
    } else if (code != OTF2_SUCCESS) {
      error = where(i, ".evt") + ": corrupt or truncated events after event " + std::to_string(read) + " (" +
              OTF2_Error_GetDescription(code) + ")";
    } else if (announced > 0 && read != announced) {
      error = where(i, ".evt") + ": corrupt or truncated events: " + std::to_string(read) + (read > announced ? "+" : "") +
              " records where the definitions announce " + std::to_string(announced);
    }
    s.compact();
    s.finish_states();
    if (events.capacity() - events.size() > events.size() / 4 + 1024) events.shrink_to_fit();
  }
  OTF2_EvtReaderCallbacks_Delete(ecb);
  OTF2_Reader_CloseEvtFiles(reader);
  if (!error.empty()) fail(error);
  t.counters = s.counters;

  if (stats) {
    stats->skipped_locations = d.locations.size() - n_read;
    stats->thread_locations = t.threads.size();
    stats->timer_resolution = d.resolution;
    stats->global_offset = d.offset;
    stats->trace_length = d.length;
    stats->records = records;
    stats->skipped_records.clear();
    for (std::size_t k = 0; k < kSkipKinds; ++k)
      if (s.skipped[k]) stats->skipped_records[std::string(kSkipNames[k])] += s.skipped[k];
    for (unsigned p = 0; p < 256; ++p) {
      if (s.enter_skipped[p]) stats->skipped_records["Enter (" + paradigm_name(p) + ")"] += s.enter_skipped[p];
      if (s.leave_skipped[p]) stats->skipped_records["Leave (" + paradigm_name(p) + ")"] += s.leave_skipped[p];
    }
    for (std::size_t k = 0; k < kCollKeys; ++k) {
      const std::string why = k == kCollSelf    ? std::string("MPI_COMM_SELF")
                              : k == kCollInter ? std::string("inter-communicator")
                                                : collective_name(static_cast<unsigned>(k));
      if (s.coll_begin_skipped[k]) stats->skipped_records["MpiCollectiveBegin (" + why + ")"] += s.coll_begin_skipped[k];
      if (s.coll_end_skipped[k]) stats->skipped_records["MpiCollectiveEnd (" + why + ")"] += s.coll_end_skipped[k];
    }
    stats->converted_records.clear();
    const std::pair<const char*, std::uint64_t> converted[] = {
        {"Metric", s.metrics_read},
        {"BufferFlush", s.flushes_read},
        {"MeasurementOnOff", s.on_off_read},
        {"Enter (MEASUREMENT_SYSTEM)", s.overhead_enters},
        {"Leave (MEASUREMENT_SYSTEM)", s.overhead_leaves}};
    for (const auto& [kind, count] : converted)
      if (count) stats->converted_records[kind] = count;
  }
  return t;
}

std::vector<std::string> otf2_losses(const Trace& t) {
  std::vector<std::string> lost;
  std::size_t truth = 0, states = 0, samples = 0, renumbered = 0;
  bool irecv_details = false;
  for (const auto* v : {&t.locations, &t.threads})
    for (const Location& l : *v) {
      truth += l.truth.size();
      states += l.states.size();
      samples += l.counters.size();
      for (const Event& e : l.events)
        irecv_details = irecv_details || (e.kind == EventKind::IrecvPost && (e.peer != kNoRank || e.bytes));
    }
  for (std::size_t i = 0; i < t.threads.size(); ++i) {
    const std::int32_t expected = i > 0 && t.threads[i - 1].rank == t.threads[i].rank ? t.threads[i - 1].thread + 1 : 1;
    if (t.threads[i].thread != expected) ++renumbered;
  }
  if (truth > 0)
    lost.push_back("the ground truth of " + std::to_string(truth) +
                   " compute intervals (nominal and injected time by cause): OTF2 has no such record");
  if (!t.attributes.empty())
    lost.push_back(std::to_string(t.attributes.size()) + " trace attributes (scenario, platform, seed, ...)");
  if (irecv_details)
    lost.push_back("the source, tag and size of MPI_Irecv requests at posting (OTF2 has them at completion)");
  if (states > 0)
    lost.push_back(std::to_string(states) +
                   " state intervals (not-useful states outside MPI: Paraver states, measurement overhead): OTF2 has "
                   "no record for them");
  if (samples > 0 && t.counters == 0)
    lost.push_back(std::to_string(samples) + " counter samples of a trace that declares no counter");
  if (renumbered > 0)
    lost.push_back("the numbers of " + std::to_string(renumbered) +
                   " worker threads (OTF2 readers number a process's threads 1, 2, ... in order)");
  return lost;
}

void write_otf2(const Trace& trace, const std::string& dir) {
  const std::string tmp = dir + ".tmp";
  std::error_code ec;
  fs::remove_all(tmp, ec);
  try {
    Writer w(trace, dir);
    w.write(tmp);
    set_content_trace_id(tmp, dir);
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
  fs::remove_all(dir, ec);
  fs::rename(tmp, dir, ec);
  if (ec) {
    fs::remove_all(tmp, ec);
    throw InputError(dir + ": cannot move the OTF2 archive into place: " + ec.message());
  }
}

}  // namespace waitlab::trace
