// OTF2 archives: the writer (see otf2.hpp and docs/formats.md; the reader is otf2_read.cpp).
#include "analysis/trace/otf2.hpp"

#include <otf2/otf2.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/trace/otf2_common.hpp"
#include "util/error.hpp"

namespace waitlab::trace {

namespace fs = std::filesystem;

namespace {

using detail::kOriginProperty;
using detail::kSpanBeginProperty;
using detail::kSpanEndProperty;
using detail::QuietErrors;

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

std::vector<std::string> otf2_losses(const Trace& t) {
  std::vector<std::string> lost;
  std::size_t truth = 0, states = 0, samples = 0, renumbered = 0, omp = 0;
  bool irecv_details = false;
  for (const auto* v : {&t.locations, &t.threads})
    for (const Location& l : *v) {
      truth += l.truth.size();
      omp += l.omp.size();
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
  if (omp > 0)
    lost.push_back(std::to_string(omp) +
                   " OpenMP intervals (parallel regions, parallel functions, tasks): not written, so the hybrid "
                   "factors' OpenMP split is not available from the archive");
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
