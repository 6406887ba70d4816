#include "analysis/trace/otf2.hpp"

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

namespace {

MpiOp mpi_op_of(OTF2_CollectiveOp op) {
  switch (op) {
    case OTF2_COLLECTIVE_OP_BARRIER: return MpiOp::Barrier;
    case OTF2_COLLECTIVE_OP_BCAST: return MpiOp::Bcast;
    case OTF2_COLLECTIVE_OP_GATHER:
    case OTF2_COLLECTIVE_OP_GATHERV: return MpiOp::Gather;
    case OTF2_COLLECTIVE_OP_SCATTER:
    case OTF2_COLLECTIVE_OP_SCATTERV: return MpiOp::Scatter;
    case OTF2_COLLECTIVE_OP_ALLGATHER:
    case OTF2_COLLECTIVE_OP_ALLGATHERV: return MpiOp::Allgather;
    case OTF2_COLLECTIVE_OP_ALLTOALL:
    case OTF2_COLLECTIVE_OP_ALLTOALLV:
    case OTF2_COLLECTIVE_OP_ALLTOALLW: return MpiOp::Alltoall;
    case OTF2_COLLECTIVE_OP_ALLREDUCE: return MpiOp::Allreduce;
    case OTF2_COLLECTIVE_OP_REDUCE: return MpiOp::Reduce;
    case OTF2_COLLECTIVE_OP_REDUCE_SCATTER:
    case OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK: return MpiOp::ReduceScatter;
    case OTF2_COLLECTIVE_OP_SCAN: return MpiOp::Scan;
    case OTF2_COLLECTIVE_OP_EXSCAN: return MpiOp::Exscan;
    default: return MpiOp::None;
  }
}

struct Defs {
  std::uint64_t resolution = 1, offset = 0;
  std::map<OTF2_StringRef, std::string> strings;
  struct Reg {
    OTF2_RegionRef id;
    OTF2_StringRef name, canonical, source;
    OTF2_Paradigm paradigm;
  };
  std::vector<Reg> regions;
  std::map<OTF2_LocationGroupRef, bool> process_groups;  // id -> is a process
  std::map<OTF2_LocationRef, OTF2_LocationGroupRef> locations;
  struct Grp {
    OTF2_GroupType type;
    std::vector<std::uint64_t> members;
  };
  std::map<OTF2_GroupRef, Grp> groups;
  struct Com {
    OTF2_CommRef id;
    OTF2_StringRef name;
    OTF2_GroupRef group;
  };
  std::vector<Com> comms;
  std::string str(OTF2_StringRef r) const {
    const auto it = strings.find(r);
    return it == strings.end() ? std::string() : it->second;
  }
};

// Per location while reading its events.
struct LocationReader {
  Trace* trace;
  Rank rank;
  const Defs* defs;
  const std::map<OTF2_RegionRef, RegionId>* regions;
  const std::map<OTF2_CommRef, CommId>* comms;
  std::size_t last_coll_begin = static_cast<std::size_t>(-1);
  std::string error;
  MpiOp call = MpiOp::None;  // the MPI call the location is in (the op of its records)

  Time time(OTF2_TimeStamp t) const {
    return static_cast<double>(static_cast<std::int64_t>(t - defs->offset)) / static_cast<double>(defs->resolution);
  }
  std::vector<Event>& events() { return trace->locations[static_cast<std::size_t>(rank)].events; }
  CommId comm(OTF2_CommRef c) {
    const auto it = comms->find(c);
    if (it == comms->end()) {
      if (error.empty()) error = "an event names undefined communicator " + std::to_string(c);
      return kCommWorld;
    }
    return it->second;
  }
  Rank global(CommId c, std::uint32_t local) const {
    const auto& m = trace->defs.comms[c].members;
    return local < m.size() ? m[local] : kNoRank;
  }
  void add(const Event& e) { events().push_back(e); }
};

LocationReader& lr(void* p) {
  return *static_cast<LocationReader*>(p);
}

OTF2_CallbackCode on_enter(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList*, OTF2_RegionRef r) {
  auto& l = lr(u);
  const auto it = l.regions->find(r);
  if (it == l.regions->end()) {
    l.error = "an Enter names undefined region " + std::to_string(r);
    return OTF2_CALLBACK_INTERRUPT;
  }
  const MpiOp op = l.trace->defs.regions[it->second].op;
  if (op != MpiOp::None) l.call = op;
  l.add(make_event(l.time(t), EventKind::Enter, op, it->second));
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_leave(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList*, OTF2_RegionRef r) {
  auto& l = lr(u);
  const auto it = l.regions->find(r);
  if (it == l.regions->end()) {
    l.error = "a Leave names undefined region " + std::to_string(r);
    return OTF2_CALLBACK_INTERRUPT;
  }
  const MpiOp op = l.trace->defs.regions[it->second].op;
  if (op != MpiOp::None) l.call = MpiOp::None;
  l.add(make_event(l.time(t), EventKind::Leave, op, it->second));
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_send(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList*, uint32_t to,
                          OTF2_CommRef c, uint32_t tag, uint64_t len) {
  auto& l = lr(u);
  const CommId cm = l.comm(c);
  l.add(make_event(l.time(t), EventKind::Send, l.call, cm, l.global(cm, to), static_cast<std::int32_t>(tag), len));
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_recv(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList*, uint32_t from,
                          OTF2_CommRef c, uint32_t tag, uint64_t len) {
  auto& l = lr(u);
  const CommId cm = l.comm(c);
  l.add(make_event(l.time(t), EventKind::Recv, l.call, cm, l.global(cm, from), static_cast<std::int32_t>(tag), len));
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_isend(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList*, uint32_t to,
                           OTF2_CommRef c, uint32_t tag, uint64_t len, uint64_t req) {
  auto& l = lr(u);
  const CommId cm = l.comm(c);
  l.add(make_event(l.time(t), EventKind::IsendStart, l.call, cm, l.global(cm, to), static_cast<std::int32_t>(tag),
                   len, req));
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_isend_complete(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList*,
                                    uint64_t req) {
  auto& l = lr(u);
  l.add(make_event(l.time(t), EventKind::IsendComplete, l.call, 0, kNoRank, 0, 0, req));
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_irecv_request(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList*,
                                   uint64_t req) {
  auto& l = lr(u);
  l.add(make_event(l.time(t), EventKind::IrecvPost, l.call, 0, kNoRank, 0, 0, req));
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_irecv(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList*, uint32_t from,
                           OTF2_CommRef c, uint32_t tag, uint64_t len, uint64_t req) {
  auto& l = lr(u);
  const CommId cm = l.comm(c);
  l.add(make_event(l.time(t), EventKind::IrecvComplete, l.call, cm, l.global(cm, from),
                   static_cast<std::int32_t>(tag), len, req));
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_coll_begin(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList*) {
  auto& l = lr(u);
  l.last_coll_begin = l.events().size();
  l.add(make_event(l.time(t), EventKind::CollBegin, MpiOp::None, kCommWorld));
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_coll_end(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList*,
                              OTF2_CollectiveOp op, OTF2_CommRef c, uint32_t root, uint64_t sent, uint64_t received) {
  auto& l = lr(u);
  const CommId cm = l.comm(c);
  const MpiOp mop = mpi_op_of(op);
  if (l.last_coll_begin < l.events().size()) {  // OTF2's CollectiveBegin has neither op nor communicator
    l.events()[l.last_coll_begin].op = mop;
    l.events()[l.last_coll_begin].ref = cm;
  }
  l.last_coll_begin = static_cast<std::size_t>(-1);
  l.add(make_event(l.time(t), EventKind::CollEnd, mop, cm, root == OTF2_UNDEFINED_UINT32 ? kNoRank : l.global(cm, root),
                   0, sent, received));
  return OTF2_CALLBACK_SUCCESS;
}

}  // namespace

Trace read_otf2(const std::string& anchor, Otf2ReadStats* stats) {
  QuietErrors quiet;
  const auto fail = [&](const std::string& what) {
    throw InputError(anchor + ": " + what + (quiet.first().empty() ? std::string() : " (" + quiet.first() + ")"));
  };
  OTF2_Reader* reader = OTF2_Reader_Open(anchor.c_str());
  if (!reader) fail("cannot open as an OTF2 archive");
  struct Close {
    OTF2_Reader* r;
    ~Close() { OTF2_Reader_Close(r); }
  } close{reader};
  if (OTF2_Reader_SetSerialCollectiveCallbacks(reader) != OTF2_SUCCESS) fail("cannot set up the reader");

  // Global definitions.
  Defs d;
  OTF2_GlobalDefReader* gdr = OTF2_Reader_GetGlobalDefReader(reader);
  if (!gdr) fail("cannot read the global definitions");
  OTF2_GlobalDefReaderCallbacks* gcb = OTF2_GlobalDefReaderCallbacks_New();
  OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(
      gcb, [](void* u, uint64_t res, uint64_t off, uint64_t, uint64_t) {
        static_cast<Defs*>(u)->resolution = res == 0 ? 1 : res;
        static_cast<Defs*>(u)->offset = off;
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_GlobalDefReaderCallbacks_SetStringCallback(gcb, [](void* u, OTF2_StringRef r, const char* text) {
    static_cast<Defs*>(u)->strings[r] = text ? text : "";
    return OTF2_CALLBACK_SUCCESS;
  });
  OTF2_GlobalDefReaderCallbacks_SetRegionCallback(
      gcb, [](void* u, OTF2_RegionRef r, OTF2_StringRef name, OTF2_StringRef canonical, OTF2_StringRef,
              OTF2_RegionRole, OTF2_Paradigm paradigm, OTF2_RegionFlag, OTF2_StringRef source, uint32_t, uint32_t) {
        static_cast<Defs*>(u)->regions.push_back(Defs::Reg{r, name, canonical, source, paradigm});
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(
      gcb, [](void* u, OTF2_LocationGroupRef g, OTF2_StringRef, OTF2_LocationGroupType type, OTF2_SystemTreeNodeRef,
              OTF2_LocationGroupRef) {
        static_cast<Defs*>(u)->process_groups[g] = type == OTF2_LOCATION_GROUP_TYPE_PROCESS;
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_GlobalDefReaderCallbacks_SetLocationCallback(
      gcb, [](void* u, OTF2_LocationRef l, OTF2_StringRef, OTF2_LocationType, uint64_t, OTF2_LocationGroupRef g) {
        static_cast<Defs*>(u)->locations[l] = g;
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_GlobalDefReaderCallbacks_SetGroupCallback(
      gcb, [](void* u, OTF2_GroupRef g, OTF2_StringRef, OTF2_GroupType type, OTF2_Paradigm, OTF2_GroupFlag,
              uint32_t n, const uint64_t* members) {
        static_cast<Defs*>(u)->groups[g] = Defs::Grp{type, std::vector<std::uint64_t>(members, members + n)};
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_GlobalDefReaderCallbacks_SetCommCallback(
      gcb, [](void* u, OTF2_CommRef c, OTF2_StringRef name, OTF2_GroupRef g, OTF2_CommRef, OTF2_CommFlag) {
        static_cast<Defs*>(u)->comms.push_back(Defs::Com{c, name, g});
        return OTF2_CALLBACK_SUCCESS;
      });
  const OTF2_ErrorCode reg = OTF2_Reader_RegisterGlobalDefCallbacks(reader, gdr, gcb, &d);
  OTF2_GlobalDefReaderCallbacks_Delete(gcb);
  if (reg != OTF2_SUCCESS) fail("cannot read the global definitions");
  std::uint64_t n_defs = 0;
  if (OTF2_Reader_ReadAllGlobalDefinitions(reader, gdr, &n_defs) != OTF2_SUCCESS)
    fail("corrupt global definitions");
  OTF2_Reader_CloseGlobalDefReader(reader, gdr);

  // Ranks: one per process location group, in id order; its lowest location carries it.
  Trace t;
  std::map<OTF2_LocationGroupRef, Rank> rank_of_group;
  for (const auto& [g, process] : d.process_groups)
    if (process) rank_of_group.emplace(g, static_cast<Rank>(rank_of_group.size()));
  std::map<Rank, OTF2_LocationRef> location_of_rank;
  std::map<OTF2_LocationRef, Rank> rank_of_location;
  std::uint64_t skipped = 0;
  for (const auto& [l, g] : d.locations) {
    const auto it = rank_of_group.find(g);
    if (it == rank_of_group.end() || location_of_rank.count(it->second)) {
      ++skipped;
      continue;
    }
    location_of_rank[it->second] = l;
    rank_of_location[l] = it->second;
  }
  if (stats) stats->skipped_locations = skipped;
  const std::size_t n = location_of_rank.size();
  if (n == 0) fail("no MPI process location in the archive");
  t.locations.resize(n);
  for (std::size_t r = 0; r < n; ++r) t.locations[r].rank = static_cast<Rank>(r);

  // Regions, in definition order.
  std::map<OTF2_RegionRef, RegionId> regions;
  for (const auto& rg : d.regions) {
    const std::string name = d.str(rg.name);
    const std::string source = d.str(rg.source);
    const bool mpi = source == "MPI" || rg.paradigm == OTF2_PARADIGM_MPI;
    const MpiOp op = mpi ? mpi_op_from_name(d.str(rg.canonical).empty() ? name : d.str(rg.canonical)) : MpiOp::None;
    regions[rg.id] = static_cast<RegionId>(t.defs.regions.size());
    t.defs.regions.push_back(Region{name, op, op == MpiOp::None ? source : std::string("MPI")});
  }

  // Communicators: COMM_GROUP members index the COMM_LOCATIONS group's locations.
  std::vector<std::uint64_t> comm_locations;
  for (const auto& [g, grp] : d.groups)
    if (grp.type == OTF2_GROUP_TYPE_COMM_LOCATIONS) comm_locations = grp.members;
  std::map<OTF2_CommRef, CommId> comms;
  std::vector<Communicator> defs_comms;
  std::vector<OTF2_CommRef> comm_refs;
  for (const auto& c : d.comms) {
    Communicator com{d.str(c.name), {}};
    const auto g = d.groups.find(c.group);
    if (g != d.groups.end())
      for (std::uint64_t idx : g->second.members) {
        const std::uint64_t loc = g->second.type == OTF2_GROUP_TYPE_COMM_GROUP && idx < comm_locations.size()
                                      ? comm_locations[idx]
                                      : idx;
        const auto rl = rank_of_location.find(loc);
        com.members.push_back(rl == rank_of_location.end() ? kNoRank : rl->second);
      }
    defs_comms.push_back(std::move(com));
    comm_refs.push_back(c.id);
  }
  // MPI_COMM_WORLD first: the communicator that holds every rank.
  std::size_t world = defs_comms.size();
  for (std::size_t i = 0; i < defs_comms.size() && world == defs_comms.size(); ++i)
    if (defs_comms[i].members.size() == n) world = i;
  if (world == defs_comms.size()) {
    Communicator w{"MPI_COMM_WORLD", {}};
    for (std::size_t r = 0; r < n; ++r) w.members.push_back(static_cast<Rank>(r));
    t.defs.comms.push_back(w);
  } else {
    t.defs.comms.push_back(defs_comms[world]);
    comms[comm_refs[world]] = 0;
  }
  for (std::size_t i = 0; i < defs_comms.size(); ++i) {
    if (i == world) continue;
    comms[comm_refs[i]] = static_cast<CommId>(t.defs.comms.size());
    t.defs.comms.push_back(defs_comms[i]);
  }

  // Events, location by location.
  for (const auto& [r, loc] : location_of_rank) OTF2_Reader_SelectLocation(reader, loc);
  const bool have_defs = OTF2_Reader_OpenDefFiles(reader) == OTF2_SUCCESS;
  if (OTF2_Reader_OpenEvtFiles(reader) != OTF2_SUCCESS) fail("cannot open the event files");
  if (have_defs) {
    for (const auto& [r, loc] : location_of_rank) {
      OTF2_DefReader* dr = OTF2_Reader_GetDefReader(reader, loc);
      if (dr) {
        std::uint64_t read = 0;
        OTF2_Reader_ReadAllLocalDefinitions(reader, dr, &read);
        OTF2_Reader_CloseDefReader(reader, dr);
      }
    }
    OTF2_Reader_CloseDefFiles(reader);
  }
  OTF2_EvtReaderCallbacks* ecb = OTF2_EvtReaderCallbacks_New();
  OTF2_EvtReaderCallbacks_SetEnterCallback(ecb, on_enter);
  OTF2_EvtReaderCallbacks_SetLeaveCallback(ecb, on_leave);
  OTF2_EvtReaderCallbacks_SetMpiSendCallback(ecb, on_send);
  OTF2_EvtReaderCallbacks_SetMpiRecvCallback(ecb, on_recv);
  OTF2_EvtReaderCallbacks_SetMpiIsendCallback(ecb, on_isend);
  OTF2_EvtReaderCallbacks_SetMpiIsendCompleteCallback(ecb, on_isend_complete);
  OTF2_EvtReaderCallbacks_SetMpiIrecvRequestCallback(ecb, on_irecv_request);
  OTF2_EvtReaderCallbacks_SetMpiIrecvCallback(ecb, on_irecv);
  OTF2_EvtReaderCallbacks_SetMpiCollectiveBeginCallback(ecb, on_coll_begin);
  OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback(ecb, on_coll_end);
  std::string error;
  for (const auto& [r, loc] : location_of_rank) {
    OTF2_EvtReader* er = OTF2_Reader_GetEvtReader(reader, loc);
    if (!er) {
      error = "cannot read the events of location " + std::to_string(loc);
      break;
    }
    LocationReader state{&t, r, &d, &regions, &comms, static_cast<std::size_t>(-1), {}};
    OTF2_Reader_RegisterEvtCallbacks(reader, er, ecb, &state);
    std::uint64_t read = 0;
    const OTF2_ErrorCode code = OTF2_Reader_ReadAllLocalEvents(reader, er, &read);
    OTF2_Reader_CloseEvtReader(reader, er);
    if (!state.error.empty()) {
      error = "rank " + std::to_string(r) + ", event " + std::to_string(read) + ": " + state.error;
      break;
    }
    if (code != OTF2_SUCCESS) {
      error = "rank " + std::to_string(r) + ": corrupt or truncated events after event " + std::to_string(read) + " (" +
              OTF2_Error_GetDescription(code) + ")";
      break;
    }
  }
  OTF2_EvtReaderCallbacks_Delete(ecb);
  OTF2_Reader_CloseEvtFiles(reader);
  if (!error.empty()) fail(error);
  return t;
}

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
