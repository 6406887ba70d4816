#include "analysis/trace/otf2_writer.hpp"

#include <otf2/otf2.h>

#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <filesystem>
#include <map>
#include <vector>

#include "analysis/trace/error.hpp"

namespace waitlab::trace {

namespace fs = std::filesystem;

namespace {

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
    begin_ = t.begin_time();
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
    OTF2_Archive* archive = OTF2_Archive_Open(dir.c_str(), "traces", OTF2_FILEMODE_WRITE, 1024 * 1024,
                                              4 * 1024 * 1024, OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
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
      return local[c][static_cast<std::size_t>(g)];
    };

    check(OTF2_Archive_OpenEvtFiles(archive), "open event files");
    std::vector<std::uint64_t> counts(n, 0);
    for (std::size_t r = 0; r < n; ++r) {
      OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(archive, r);
      if (!w) throw InputError(where_ + ": cannot open the event writer of rank " + std::to_string(r));
      for (const Event& e : t_.locations[r].events) {
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
        ++counts[r];
      }
      check(OTF2_Archive_CloseEvtWriter(archive, w), "close an event writer");
    }
    check(OTF2_Archive_CloseEvtFiles(archive), "close event files");

    check(OTF2_Archive_OpenDefFiles(archive), "open definition files");
    for (std::size_t r = 0; r < n; ++r) {
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
    std::vector<OTF2_StringRef> region_names;
    for (const auto& reg : t_.defs.regions) region_names.push_back(str(reg.name));
    const OTF2_StringRef machine = str("machine"), node_class = str("node"), mpi_name = str("MPI");
    std::vector<OTF2_StringRef> rank_names, thread_names;
    for (std::size_t r = 0; r < n; ++r) {
      rank_names.push_back(str("MPI Rank " + std::to_string(r)));
      thread_names.push_back(str("Master thread"));
    }
    const OTF2_StringRef locations_name = str("MPI_COMM_WORLD locations");
    std::vector<OTF2_StringRef> comm_names;
    for (const auto& c : t_.defs.comms) comm_names.push_back(str(c.name));

    const Time end = t_.end_time();
    check(OTF2_GlobalDefWriter_WriteClockProperties(g, static_cast<std::uint64_t>(kOtf2TicksPerSecond), 0,
                                                    ticks(end) + 1, OTF2_UNDEFINED_TIMESTAMP),
          "clock properties");
    for (const std::string* s : order_) check(OTF2_GlobalDefWriter_WriteString(g, strings_.at(*s), s->c_str()), "string");
    check(OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_MPI, mpi_name, OTF2_PARADIGM_CLASS_PROCESS), "paradigm");
    for (std::size_t i = 0; i < t_.defs.regions.size(); ++i) {
      const Region& reg = t_.defs.regions[i];
      const bool mpi = reg.op != MpiOp::None;
      check(OTF2_GlobalDefWriter_WriteRegion(g, static_cast<OTF2_RegionRef>(i), region_names[i], region_names[i], 0,
                                             mpi ? region_role(reg.op) : static_cast<OTF2_RegionRole>(OTF2_REGION_ROLE_FUNCTION),
                                             mpi ? OTF2_PARADIGM_MPI : OTF2_PARADIGM_USER, OTF2_REGION_FLAG_NONE,
                                             mpi ? mpi_file : 0, 0, 0),
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
    // Group 0: the locations of the MPI ranks (COMM_LOCATIONS), before every communicator group.
    std::vector<std::uint64_t> all(n);
    for (std::size_t r = 0; r < n; ++r) all[r] = r;
    check(OTF2_GlobalDefWriter_WriteGroup(g, 0, locations_name, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
                                          OTF2_GROUP_FLAG_NONE, static_cast<std::uint32_t>(n), all.data()),
          "locations group");
    for (std::size_t c = 0; c < t_.defs.comms.size(); ++c) {
      std::vector<std::uint64_t> members;
      for (Rank m : t_.defs.comms[c].members) members.push_back(static_cast<std::uint64_t>(m));
      check(OTF2_GlobalDefWriter_WriteGroup(g, static_cast<OTF2_GroupRef>(c + 1), comm_names[c],
                                            OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
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
      default: return OTF2_COLLECTIVE_OP_BARRIER;
    }
  }

  static OTF2_RegionRole region_role(MpiOp op) {
    switch (op) {
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
  std::map<std::string, OTF2_StringRef> strings_;
  std::vector<const std::string*> order_;  // strings in id order
};

}  // namespace

void write_otf2(const Trace& trace, const std::string& dir) {
  const std::string tmp = dir + ".tmp";
  std::error_code ec;
  fs::remove_all(tmp, ec);
  try {
    Writer w(trace, dir);
    w.write(tmp);
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
