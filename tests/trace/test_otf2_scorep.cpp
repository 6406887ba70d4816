// read_otf2 on archives shaped like Score-P's: written here with the OTF2 API the way Score-P
// writes them (FORMATS.md §1 of the design notes; Score-P's MPI, OpenMP and tracing adapters):
// a TSC timer (2.1e9 ticks/s) with a large global offset, local definition ids with mapping
// tables and a clock offset in the local definitions, OpenMP threads and a metric location
// next to each master thread, thread-team groups, a split communicator and one derived from it,
// MPI_COMM_SELF, an inter-communicator, records of other paradigms, cancelled and tested
// requests, non-blocking collectives and RMA.
#include <gtest/gtest.h>
#include <otf2/otf2.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "util/error.hpp"
#include "analysis/trace/match.hpp"
#include "analysis/trace/otf2.hpp"
#include "tests/trace/otf2_writing.hpp"

namespace waitlab::trace {
namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kResolution = 2'100'000'000;  // ticks per second (a 2.1 GHz TSC)
constexpr std::uint64_t kOffset = 1'000'000'000'000;  // the global offset, in ticks
constexpr int kRanks = 4;
constexpr std::uint64_t kThread = std::uint64_t{1} << 32;  // Score-P: thread t of rank r is t << 32 | r
constexpr std::uint64_t kMetricLocation = std::uint64_t{2} << 32;
constexpr std::uint64_t kClockShiftedRank = 3;  // its local definitions hold a clock offset of +1 µs
constexpr std::int64_t kClockShift = 2100;      // ticks
// PAPI counters of rank r's master: kInsBase·(r+1) instructions before "compute", then
// kInsCompute + r in it (cycles alike, kCycCompute + 2r); its worker thread: 10, then 700.
constexpr std::uint64_t kInsBase = 1000, kInsCompute = 50'000, kCycBase = 3000, kCycCompute = 90'000;

// Ticks of a time given in microseconds (exact for the multiples of 1/2100 µs used here).
OTF2_TimeStamp us(double t) {
  return kOffset + static_cast<OTF2_TimeStamp>(std::llround(t * 2100.0));
}

// Global region ids.
enum Reg : std::uint32_t {
  kMain, kCompute, kOmpParallel, kFlush, kInit, kFinalize, kCommSplit, kCommDup, kCommRank, kAllreduce, kBcast,
  kBarrier, kIsend, kIrecv, kWaitall, kWait, kTest, kCancel, kRecv, kIallreduce, kPut, kGet, kSend, kProgram, kRegions
};
// Global communicator ids.
enum Com : std::uint32_t { kWorld, kSelf, kEven, kOdd, kOddDup, kTeam, kInter, kComms };

using test::kFlushCallbacks;

// One location's event writer. Ranks 1 and 3 write local ids (reversed) and a mapping table,
// as Score-P does for every location.
struct Loc {
  OTF2_EvtWriter* w = nullptr;
  bool mapped = false;
  std::uint32_t region(Reg g) const { return mapped ? kRegions - 1 - g : g; }
  OTF2_CommRef comm(Com c) const { return mapped ? kComms - 1 - c : c; }
};

class ScorepArchive {
 public:
  // `miscount`: the definition of rank 1's location announces one record too many.
  explicit ScorepArchive(fs::path dir, bool miscount = false) : dir_(std::move(dir)), miscount_(miscount) {}
  fs::path anchor() const { return dir_ / "traces.otf2"; }

  void write() {
    fs::remove_all(dir_);
    OTF2_Archive* a = OTF2_Archive_Open(dir_.c_str(), "traces", OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024,
                                        OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    ASSERT_NE(a, nullptr);
    OK(OTF2_Archive_SetFlushCallbacks(a, &kFlushCallbacks, nullptr));
    OK(OTF2_Archive_SetSerialCollectiveCallbacks(a));
    OK(OTF2_Archive_SetCreator(a, "Score-P 8.4"));
    OK(OTF2_Archive_OpenEvtFiles(a));
    for (int r = 0; r < kRanks; ++r) {
      Loc l{OTF2_Archive_GetEvtWriter(a, static_cast<OTF2_LocationRef>(r)), r == 1 || r == 3};
      ASSERT_NE(l.w, nullptr);
      master(l, r);
      if (testing::Test::HasFatalFailure()) return;
      OK(OTF2_EvtWriter_GetNumberOfEvents(l.w, &events_[static_cast<OTF2_LocationRef>(r)]));
      if (miscount_ && r == 1) ++events_[1];
      OK(OTF2_Archive_CloseEvtWriter(a, l.w));
      Loc t{OTF2_Archive_GetEvtWriter(a, kThread | static_cast<std::uint64_t>(r)), l.mapped};
      worker(t);
      OK(OTF2_EvtWriter_GetNumberOfEvents(t.w, &events_[kThread | static_cast<std::uint64_t>(r)]));
      OK(OTF2_Archive_CloseEvtWriter(a, t.w));
    }
    OTF2_EvtWriter* m = OTF2_Archive_GetEvtWriter(a, kMetricLocation);
    for (int i = 0; i < 3; ++i) metric(m, us(10.0 * i));
    OK(OTF2_EvtWriter_GetNumberOfEvents(m, &events_[kMetricLocation]));
    OK(OTF2_Archive_CloseEvtWriter(a, m));
    OK(OTF2_Archive_CloseEvtFiles(a));

    OK(OTF2_Archive_OpenDefFiles(a));
    for (const auto& [loc, n] : events_) {
      OTF2_DefWriter* d = OTF2_Archive_GetDefWriter(a, loc);
      ASSERT_NE(d, nullptr);
      const std::uint64_t rank = loc & 0xffffffffu;
      if ((rank == 1 || rank == 3) && loc != kMetricLocation) {  // local id -> global id
        std::vector<std::uint64_t> regions(kRegions), comms(kComms);
        for (std::uint64_t i = 0; i < kRegions; ++i) regions[i] = kRegions - 1 - i;
        for (std::uint64_t i = 0; i < kComms; ++i) comms[i] = kComms - 1 - i;
        OTF2_IdMap* rm = OTF2_IdMap_CreateFromUint64Array(kRegions, regions.data(), false);
        OTF2_IdMap* cm = OTF2_IdMap_CreateFromUint64Array(kComms, comms.data(), false);
        OK(OTF2_DefWriter_WriteMappingTable(d, OTF2_MAPPING_REGION, rm));
        OK(OTF2_DefWriter_WriteMappingTable(d, OTF2_MAPPING_COMM, cm));
        OTF2_IdMap_Free(rm);
        OTF2_IdMap_Free(cm);
      }
      if (rank == kClockShiftedRank && loc != kMetricLocation) {  // measured at init and at finalize
        OK(OTF2_DefWriter_WriteClockOffset(d, us(0), kClockShift, 0.0));
        OK(OTF2_DefWriter_WriteClockOffset(d, us(100), kClockShift, 0.0));
      }
      OK(OTF2_Archive_CloseDefWriter(a, d));
    }
    OK(OTF2_Archive_CloseDefFiles(a));
    definitions(a);
    OK(OTF2_Archive_Close(a));
  }

 private:
  // Ranks: Init; Comm_split into even/odd; Comm_dup of the odd one; an OpenMP parallel region;
  // I/O; an Irecv/Isend/Waitall ring; a cancelled Irecv (rank 0); an Isend completed by
  // MPI_Test on the odd communicator (1 -> 3); a message to itself on MPI_COMM_SELF (rank 2);
  // an Allreduce on MPI_COMM_SELF; Allreduce on the split communicators, Bcast (root: comm rank
  // 1 = world rank 3) and Barrier on the odd ones; an Iallreduce; RMA; a message on an
  // inter-communicator (0 -> 1); a Barrier on MPI_COMM_WORLD; Finalize.
  void master(const Loc& l, int r) {
    OTF2_EvtWriter* w = l.w;
    const auto enter = [&](double t, Reg g) { OK(OTF2_EvtWriter_Enter(w, nullptr, us(t), l.region(g))); };
    const auto leave = [&](double t, Reg g) { OK(OTF2_EvtWriter_Leave(w, nullptr, us(t), l.region(g))); };
    const auto coll = [&](double b, double e, OTF2_CollectiveOp op, Com c, std::uint32_t root, std::uint64_t sent,
                          std::uint64_t recvd) {
      OK(OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, us(b)));
      OK(OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, us(e), op, l.comm(c), root, sent, recvd));
    };
    const double dr = r;
    const OTF2_StringRef program = 1;
    OK(OTF2_EvtWriter_ProgramBegin(w, nullptr, us(0), program, 0, nullptr));
    enter(0, kMain);
    enter(1, kInit);
    leave(10 + dr, kInit);

    enter(20, kCommSplit);
    OK(OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, us(20.5)));
    OK(OTF2_EvtWriter_CommCreate(w, nullptr, us(21), l.comm(r % 2 ? kOdd : kEven)));
    OK(OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, us(22), OTF2_COLLECTIVE_OP_CREATE_HANDLE, l.comm(kWorld),
                                       OTF2_UNDEFINED_UINT32, 0, 0));
    leave(23, kCommSplit);
    enter(24, kCommRank);
    leave(24.5, kCommRank);
    if (r % 2) {
      enter(25, kCommDup);
      OK(OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, us(25.2)));
      OK(OTF2_EvtWriter_CommCreate(w, nullptr, us(25.4), l.comm(kOddDup)));
      OK(OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, us(25.6), OTF2_COLLECTIVE_OP_CREATE_HANDLE, l.comm(kOdd),
                                         OTF2_UNDEFINED_UINT32, 0, 0));
      leave(25.8, kCommDup);
    }

    // OpenMP: the master's side of a parallel region (old and new fork/join records).
    enter(30, kOmpParallel);
    OK(OTF2_EvtWriter_ThreadFork(w, nullptr, us(30.1), OTF2_PARADIGM_OPENMP, 2));
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    OK(OTF2_EvtWriter_OmpFork(w, nullptr, us(30.1), 2));
#pragma GCC diagnostic pop
    OK(OTF2_EvtWriter_ThreadTeamBegin(w, nullptr, us(30.2), l.comm(kTeam)));
    papi(w, us(31), kInsBase * (r + 1), kCycBase * (r + 1));  // Score-P: before the Enter, same time
    enter(31, kCompute);
    if (r == 0) metric(w, us(31.5));  // not a PAPI counter: skipped
    papi(w, us(40 + dr), kInsBase * (r + 1) + kInsCompute + static_cast<std::uint64_t>(r),
         kCycBase * (r + 1) + kCycCompute + 2 * static_cast<std::uint64_t>(r));
    leave(40 + dr, kCompute);
    OK(OTF2_EvtWriter_ThreadTeamEnd(w, nullptr, us(40.5 + dr), l.comm(kTeam)));
    OK(OTF2_EvtWriter_ThreadJoin(w, nullptr, us(41 + dr), OTF2_PARADIGM_OPENMP));
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    OK(OTF2_EvtWriter_OmpJoin(w, nullptr, us(41 + dr)));
#pragma GCC diagnostic pop
    leave(41.5 + dr, kOmpParallel);

    OK(OTF2_EvtWriter_IoOperationBegin(w, nullptr, us(45), 0, OTF2_IO_OPERATION_MODE_WRITE,
                                       OTF2_IO_OPERATION_FLAG_NONE, 4096, 0));
    OK(OTF2_EvtWriter_IoOperationComplete(w, nullptr, us(46), 0, 4096, 0));
    if (r == 0) {
      OK(OTF2_EvtWriter_ParameterString(w, nullptr, us(47), 0, program));
      OK(OTF2_EvtWriter_ParameterInt(w, nullptr, us(47), 1, -3));
      OK(OTF2_EvtWriter_CallingContextSample(w, nullptr, us(47.5), 0, 1, 0));
      OK(OTF2_EvtWriter_CallingContextEnter(w, nullptr, us(47.6), 1, 1));
      OK(OTF2_EvtWriter_CallingContextLeave(w, nullptr, us(47.7), 1));
      enter(48, kFlush);
      OK(OTF2_EvtWriter_BufferFlush(w, nullptr, us(48), us(48.5)));
      leave(48.5, kFlush);
    }
    if (r == 2) {  // measurement switched off for half a microsecond
      OK(OTF2_EvtWriter_MeasurementOnOff(w, nullptr, us(49), OTF2_MEASUREMENT_OFF));
      OK(OTF2_EvtWriter_MeasurementOnOff(w, nullptr, us(49.5), OTF2_MEASUREMENT_ON));
    }

    // The ring on MPI_COMM_WORLD: Irecv from r-1, Isend to r+1, Waitall.
    enter(50, kIrecv);
    OK(OTF2_EvtWriter_MpiIrecvRequest(w, nullptr, us(50.1), 1));
    leave(50.2, kIrecv);
    enter(51, kIsend);
    OK(OTF2_EvtWriter_MpiIsend(w, nullptr, us(51.1), static_cast<std::uint32_t>((r + 1) % kRanks), l.comm(kWorld), 7,
                               64, 2));
    leave(51.2, kIsend);
    enter(52, kWaitall);
    OK(OTF2_EvtWriter_MpiIsendComplete(w, nullptr, us(53 + dr), 2));
    OK(OTF2_EvtWriter_MpiIrecv(w, nullptr, us(53.5 + dr), static_cast<std::uint32_t>((r + kRanks - 1) % kRanks),
                               l.comm(kWorld), 7, 64, 1));
    leave(54 + dr, kWaitall);

    if (r == 0) {  // Irecv, Cancel, Wait
      enter(60, kIrecv);
      OK(OTF2_EvtWriter_MpiIrecvRequest(w, nullptr, us(60.1), 3));
      leave(60.2, kIrecv);
      enter(61, kCancel);
      leave(61.1, kCancel);
      enter(62, kWait);
      OK(OTF2_EvtWriter_MpiRequestCancelled(w, nullptr, us(62.1), 3));
      leave(62.2, kWait);
    }
    if (r == 1) {  // to comm rank 1 (world 3) on the odd communicator; a failed MPI_Test, then one that completes
      enter(63, kIsend);
      OK(OTF2_EvtWriter_MpiIsend(w, nullptr, us(63.1), 1, l.comm(kOdd), 9, 16, 4));
      leave(63.2, kIsend);
      enter(64, kTest);
      OK(OTF2_EvtWriter_MpiRequestTest(w, nullptr, us(64.1), 4));
      leave(64.2, kTest);
      enter(65, kTest);
      OK(OTF2_EvtWriter_MpiIsendComplete(w, nullptr, us(65.1), 4));
      leave(65.2, kTest);
    }
    if (r == 3) {  // from comm rank 0 (world 1)
      enter(63, kRecv);
      OK(OTF2_EvtWriter_MpiRecv(w, nullptr, us(64.5), 0, l.comm(kOdd), 9, 16));
      leave(64.6, kRecv);
    }
    if (r == 2) {  // to itself on MPI_COMM_SELF
      enter(63, kIsend);
      OK(OTF2_EvtWriter_MpiIsend(w, nullptr, us(63.1), 0, l.comm(kSelf), 5, 8, 5));
      leave(63.2, kIsend);
      enter(63.5, kRecv);
      OK(OTF2_EvtWriter_MpiRecv(w, nullptr, us(63.6), 0, l.comm(kSelf), 5, 8));
      leave(63.7, kRecv);
      enter(64, kWait);
      OK(OTF2_EvtWriter_MpiIsendComplete(w, nullptr, us(64.1), 5));
      leave(64.2, kWait);
    }
    enter(66, kAllreduce);  // on MPI_COMM_SELF
    coll(66.1, 66.2, OTF2_COLLECTIVE_OP_ALLREDUCE, kSelf, OTF2_UNDEFINED_UINT32, 8, 8);
    leave(66.3, kAllreduce);

    enter(70, kAllreduce);
    coll(70.1 + 0.3 * dr, 72, OTF2_COLLECTIVE_OP_ALLREDUCE, r % 2 ? kOdd : kEven, OTF2_UNDEFINED_UINT32, 8, 8);
    leave(72.1, kAllreduce);
    if (r % 2) {
      enter(73, kBcast);  // root: rank 1 of the odd communicator = world rank 3
      coll(73.1, 74.5, OTF2_COLLECTIVE_OP_BCAST, kOdd, 1, r == 3 ? 64 : 0, 32);
      leave(74.6, kBcast);
      enter(75, kBarrier);
      coll(75.1, 75.5, OTF2_COLLECTIVE_OP_BARRIER, kOddDup, OTF2_UNDEFINED_UINT32, 0, 0);
      leave(75.6, kBarrier);
    }

    enter(76, kIallreduce);
    OK(OTF2_EvtWriter_NonBlockingCollectiveRequest(w, nullptr, us(76.1), 6));
    leave(76.2, kIallreduce);
    enter(77, kWait);
    OK(OTF2_EvtWriter_NonBlockingCollectiveComplete(w, nullptr, us(77.1), OTF2_COLLECTIVE_OP_ALLREDUCE,
                                                    l.comm(kWorld), OTF2_UNDEFINED_UINT32, 8, 8, 6));
    leave(77.2, kWait);
    if (r == 0) {
      enter(78, kPut);
      OK(OTF2_EvtWriter_RmaPut(w, nullptr, us(78.1), 0, 1, 8, 0));
      leave(78.2, kPut);
      enter(79, kSend);  // to rank 0 of the other group of the inter-communicator
      OK(OTF2_EvtWriter_MpiSend(w, nullptr, us(79.1), 0, l.comm(kInter), 3, 4));
      leave(79.2, kSend);
    }
    if (r == 1) {
      enter(78, kGet);
      OK(OTF2_EvtWriter_RmaGet(w, nullptr, us(78.1), 0, 0, 8, 0));
      leave(78.2, kGet);
      enter(79, kRecv);
      OK(OTF2_EvtWriter_MpiRecv(w, nullptr, us(79.3), 0, l.comm(kInter), 3, 4));
      leave(79.4, kRecv);
    }

    enter(80, kBarrier);
    coll(80.1 + 0.1 * dr, 81, OTF2_COLLECTIVE_OP_BARRIER, kWorld, OTF2_UNDEFINED_UINT32, 0, 0);
    leave(81.1, kBarrier);
    enter(90, kFinalize);
    leave(91, kFinalize);
    leave(95, kMain);
    OK(OTF2_EvtWriter_ProgramEnd(w, nullptr, us(95), 0));
  }

  // An OpenMP worker thread: thread 1 of its rank, with its counters.
  void worker(const Loc& l) {
    OK(OTF2_EvtWriter_ThreadTeamBegin(l.w, nullptr, us(30.2), l.comm(kTeam)));
    papi(l.w, us(31), 10, 20);
    OK(OTF2_EvtWriter_Enter(l.w, nullptr, us(31), l.region(kCompute)));
    papi(l.w, us(39), 710, 1420);
    OK(OTF2_EvtWriter_Leave(l.w, nullptr, us(39), l.region(kCompute)));
    OK(OTF2_EvtWriter_ThreadTeamEnd(l.w, nullptr, us(40), l.comm(kTeam)));
  }

  // A value of a metric that is not a PAPI counter (class 0: "power").
  static void metric(OTF2_EvtWriter* w, OTF2_TimeStamp t) {
    const OTF2_Type types[1] = {OTF2_TYPE_UINT64};
    OTF2_MetricValue values[1];
    values[0].unsigned_int = 123456;
    OK(OTF2_EvtWriter_Metric(w, nullptr, t, 0, 1, types, values));
  }
  // PAPI_TOT_INS and PAPI_TOT_CYC accumulated since the start (class 1), as Score-P writes them.
  static void papi(OTF2_EvtWriter* w, OTF2_TimeStamp t, std::uint64_t ins, std::uint64_t cyc) {
    const OTF2_Type types[2] = {OTF2_TYPE_UINT64, OTF2_TYPE_UINT64};
    OTF2_MetricValue values[2];
    values[0].unsigned_int = ins;
    values[1].unsigned_int = cyc;
    OK(OTF2_EvtWriter_Metric(w, nullptr, t, 1, 2, types, values));
  }

  OTF2_StringRef str(const std::string& s) {
    const auto [it, added] = strings_.try_emplace(s, static_cast<OTF2_StringRef>(strings_.size()));
    if (added) order_.push_back(s);
    return it->second;
  }

  void definitions(OTF2_Archive* a) {
    OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(a);
    ASSERT_NE(g, nullptr);
    str("");
    str("./app");
    const OTF2_StringRef app_c = str("app.c"), mpi = str("MPI");
    struct R {
      const char* name;
      OTF2_Paradigm paradigm;
      OTF2_RegionRole role;
    };
    const R regions[kRegions] = {
        {"main", OTF2_PARADIGM_COMPILER, OTF2_REGION_ROLE_FUNCTION},
        {"compute", OTF2_PARADIGM_USER, OTF2_REGION_ROLE_FUNCTION},
        {"!$omp parallel @app.c:20", OTF2_PARADIGM_OPENMP, OTF2_REGION_ROLE_PARALLEL},
        {"TRACE BUFFER FLUSH", OTF2_PARADIGM_MEASUREMENT_SYSTEM, OTF2_REGION_ROLE_ARTIFICIAL},
        {"MPI_Init_thread", OTF2_PARADIGM_MPI, OTF2_REGION_ROLE_FUNCTION},
        {"MPI_Finalize", OTF2_PARADIGM_MPI, OTF2_REGION_ROLE_FUNCTION},
        {"MPI_Comm_split", OTF2_PARADIGM_MPI, OTF2_REGION_ROLE_FUNCTION},
        {"MPI_Comm_dup", OTF2_PARADIGM_MPI, OTF2_REGION_ROLE_FUNCTION},
        {"MPI_Comm_rank", OTF2_PARADIGM_MPI, OTF2_REGION_ROLE_FUNCTION},
        {"MPI_Allreduce", OTF2_PARADIGM_MPI, OTF2_REGION_ROLE_COLL_ALL2ALL},
        {"MPI_Bcast", OTF2_PARADIGM_MPI, OTF2_REGION_ROLE_COLL_ONE2ALL},
        {"MPI_Barrier", OTF2_PARADIGM_MPI, OTF2_REGION_ROLE_BARRIER},
        {"MPI_Isend", OTF2_PARADIGM_MPI, OTF2_REGION_ROLE_POINT2POINT},
        {"MPI_Irecv", OTF2_PARADIGM_MPI, OTF2_REGION_ROLE_POINT2POINT},
        {"MPI_Waitall", OTF2_PARADIGM_MPI, OTF2_REGION_ROLE_POINT2POINT},
        {"MPI_Wait", OTF2_PARADIGM_MPI, OTF2_REGION_ROLE_POINT2POINT},
        {"MPI_Test", OTF2_PARADIGM_MPI, OTF2_REGION_ROLE_POINT2POINT},
        {"MPI_Cancel", OTF2_PARADIGM_MPI, OTF2_REGION_ROLE_POINT2POINT},
        {"MPI_Recv", OTF2_PARADIGM_MPI, OTF2_REGION_ROLE_POINT2POINT},
        {"MPI_Iallreduce", OTF2_PARADIGM_MPI, OTF2_REGION_ROLE_COLL_ALL2ALL},
        {"MPI_Put", OTF2_PARADIGM_MPI, OTF2_REGION_ROLE_RMA},
        {"MPI_Get", OTF2_PARADIGM_MPI, OTF2_REGION_ROLE_RMA},
        {"MPI_Send", OTF2_PARADIGM_MPI, OTF2_REGION_ROLE_POINT2POINT},
        // Score-P's program region: named after the executable, its canonical name the path
        // ProgramBegin names.
        {"app", OTF2_PARADIGM_MEASUREMENT_SYSTEM, OTF2_REGION_ROLE_ARTIFICIAL},
    };
    std::vector<OTF2_StringRef> region_names;
    for (const R& r : regions) region_names.push_back(str(r.name));
    const OTF2_StringRef machine = str("Linux"), machine_class = str("machine"), node = str("node"), node_name = str("n001"), master = str("Master thread"),
                         thread = str("OMP thread 1"), metrics = str("Per process metrics"),
                         power = str("power"), watts = str("W"), instructions = str("PAPI_TOT_INS"),
                         cycles = str("PAPI_TOT_CYC"), events = str("#"), world = str("MPI_COMM_WORLD"),
                         self = str("MPI_COMM_SELF"), odd_dup = str("odd duplicate"), team = str("Thread team 0");
    std::vector<OTF2_StringRef> rank_names;
    for (int r = 0; r < kRanks; ++r) rank_names.push_back(str("MPI Rank " + std::to_string(r)));

    OK(OTF2_GlobalDefWriter_WriteClockProperties(g, kResolution, kOffset, us(100) - kOffset, OTF2_UNDEFINED_TIMESTAMP));
    for (const std::string& s : order_) OK(OTF2_GlobalDefWriter_WriteString(g, strings_.at(s), s.c_str()));
    OK(OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_MPI, mpi, OTF2_PARADIGM_CLASS_PROCESS));
    for (std::uint32_t i = 0; i < kRegions; ++i) {
      const bool is_mpi = regions[i].paradigm == OTF2_PARADIGM_MPI;
      OK(OTF2_GlobalDefWriter_WriteRegion(g, i, region_names[i], i == kProgram ? str("./app") : region_names[i], 0,
                                          regions[i].role,
                                          regions[i].paradigm, OTF2_REGION_FLAG_NONE, is_mpi ? mpi : app_c,
                                          is_mpi ? 0 : 10, is_mpi ? 0 : 90));
    }
    OK(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, machine, machine_class, OTF2_UNDEFINED_SYSTEM_TREE_NODE));
    OK(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 1, node_name, node, 0));
    for (int r = 0; r < kRanks; ++r)
      OK(OTF2_GlobalDefWriter_WriteLocationGroup(g, static_cast<OTF2_LocationGroupRef>(r), rank_names[r],
                                                 OTF2_LOCATION_GROUP_TYPE_PROCESS, 1, OTF2_UNDEFINED_LOCATION_GROUP));
    for (const auto& [loc, n] : events_) {
      const OTF2_LocationGroupRef group = static_cast<OTF2_LocationGroupRef>(loc & 0xffffffffu);
      if (loc == kMetricLocation) {
        OK(OTF2_GlobalDefWriter_WriteLocation(g, loc, metrics, OTF2_LOCATION_TYPE_METRIC, n, group));
      } else {
        OK(OTF2_GlobalDefWriter_WriteLocation(g, loc, loc >= kThread ? thread : master, OTF2_LOCATION_TYPE_CPU_THREAD,
                                              n, group));
      }
    }
    const OTF2_MetricMemberRef member = 0, papi_members[2] = {1, 2};
    OK(OTF2_GlobalDefWriter_WriteMetricMember(g, member, power, power, OTF2_METRIC_TYPE_OTHER,
                                              OTF2_METRIC_ABSOLUTE_POINT, OTF2_TYPE_UINT64, OTF2_BASE_DECIMAL, 0,
                                              watts));
    OK(OTF2_GlobalDefWriter_WriteMetricMember(g, 1, instructions, instructions, OTF2_METRIC_TYPE_PAPI,
                                              OTF2_METRIC_ACCUMULATED_START, OTF2_TYPE_UINT64, OTF2_BASE_DECIMAL, 0,
                                              events));
    OK(OTF2_GlobalDefWriter_WriteMetricMember(g, 2, cycles, cycles, OTF2_METRIC_TYPE_PAPI,
                                              OTF2_METRIC_ACCUMULATED_START, OTF2_TYPE_UINT64, OTF2_BASE_DECIMAL, 0,
                                              events));
    OK(OTF2_GlobalDefWriter_WriteMetricClass(g, 0, 1, &member, OTF2_METRIC_SYNCHRONOUS_STRICT,
                                             OTF2_RECORDER_KIND_CPU));
    OK(OTF2_GlobalDefWriter_WriteMetricClass(g, 1, 2, papi_members, OTF2_METRIC_SYNCHRONOUS_STRICT,
                                             OTF2_RECORDER_KIND_CPU));

    // Groups as Score-P orders them here: the OpenMP locations first, then the MPI ones.
    std::vector<std::uint64_t> threads, ranks;
    for (int r = 0; r < kRanks; ++r) {
      threads.push_back(static_cast<std::uint64_t>(r));
      threads.push_back(kThread | static_cast<std::uint64_t>(r));
      ranks.push_back(static_cast<std::uint64_t>(r));
    }
    const std::vector<std::uint64_t> even = {0, 2}, odd = {1, 3}, team_members = {0, 1};
    OK(OTF2_GlobalDefWriter_WriteGroup(g, 0, 0, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_OPENMP,
                                       OTF2_GROUP_FLAG_NONE, static_cast<std::uint32_t>(threads.size()),
                                       threads.data()));
    OK(OTF2_GlobalDefWriter_WriteGroup(g, 1, 0, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
                                       OTF2_GROUP_FLAG_NONE, kRanks, ranks.data()));
    OK(OTF2_GlobalDefWriter_WriteGroup(g, 2, 0, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                       kRanks, ranks.data()));
    OK(OTF2_GlobalDefWriter_WriteGroup(g, 3, 0, OTF2_GROUP_TYPE_COMM_SELF, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                       0, nullptr));
    OK(OTF2_GlobalDefWriter_WriteGroup(g, 4, 0, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                       2, even.data()));
    OK(OTF2_GlobalDefWriter_WriteGroup(g, 5, 0, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                       2, odd.data()));
    OK(OTF2_GlobalDefWriter_WriteGroup(g, 6, 0, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_OPENMP,
                                       OTF2_GROUP_FLAG_NONE, 2, team_members.data()));
    OK(OTF2_GlobalDefWriter_WriteComm(g, kWorld, world, 2, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE));
    OK(OTF2_GlobalDefWriter_WriteComm(g, kSelf, self, 3, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE));
    OK(OTF2_GlobalDefWriter_WriteComm(g, kEven, 0, 4, kWorld, OTF2_COMM_FLAG_CREATE_DESTROY_EVENTS));
    OK(OTF2_GlobalDefWriter_WriteComm(g, kOdd, 0, 5, kWorld, OTF2_COMM_FLAG_CREATE_DESTROY_EVENTS));
    OK(OTF2_GlobalDefWriter_WriteComm(g, kOddDup, odd_dup, 5, kOdd, OTF2_COMM_FLAG_CREATE_DESTROY_EVENTS));
    OK(OTF2_GlobalDefWriter_WriteComm(g, kTeam, team, 6, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE));
    OK(OTF2_GlobalDefWriter_WriteInterComm(g, kInter, 0, 4, 5, kWorld, OTF2_COMM_FLAG_NONE));
  }

  fs::path dir_;
  bool miscount_ = false;
  std::map<OTF2_LocationRef, std::uint64_t> events_;  // per location written
  std::map<std::string, OTF2_StringRef> strings_;
  std::vector<std::string> order_;
};

fs::path scratch(const std::string& name) {
  return fs::temp_directory_path() / ("waitlab_scorep_" + name + "_" + std::to_string(::getpid()));
}

// The first event of `kind` (and region/op where given) on a rank.
const Event* find(const Trace& t, Rank r, EventKind kind, MpiOp op = MpiOp::None, std::size_t nth = 0) {
  for (const Event& e : t.locations[static_cast<std::size_t>(r)].events)
    if (e.kind == kind && (op == MpiOp::None || e.op == op) && nth-- == 0) return &e;
  return nullptr;
}

std::string read_error(const fs::path& anchor) {
  try {
    read_otf2(anchor.string());
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

class Otf2Scorep : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(scratch("archive"));
    ScorepArchive a(*dir_);
    a.write();
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
  }
  void SetUp() override { ASSERT_TRUE(fs::exists(anchor())) << "the archive was not written"; }
  static fs::path anchor() { return *dir_ / "traces.otf2"; }
  // A copy of the archive to damage.
  static fs::path copy(const std::string& name) {
    const fs::path to = scratch(name);
    fs::remove_all(to);
    fs::copy(*dir_, to, fs::copy_options::recursive);
    return to;
  }
  static fs::path* dir_;
};
fs::path* Otf2Scorep::dir_ = nullptr;

TEST_F(Otf2Scorep, ClockPropertiesGiveTimesToTheNanosecond) {
  Otf2ReadStats stats;
  const Trace t = read_otf2(anchor().string(), &stats);
  EXPECT_EQ(stats.timer_resolution, kResolution);
  EXPECT_EQ(stats.global_offset, kOffset);
  EXPECT_EQ(stats.trace_length, 210'000u);
  ASSERT_EQ(t.ranks(), 4u);
  const auto at = [&](Rank r, std::size_t i) { return t.locations[static_cast<std::size_t>(r)].events.at(i).time; };
  EXPECT_NEAR(at(0, 0), 0.0, 1e-12);  // ProgramBegin: Enter of the program region, at the global offset
  EXPECT_NEAR(at(0, 1), 0.0, 1e-12);  // Enter main
  EXPECT_NEAR(at(0, 2), 1e-6, 1e-9);  // Enter MPI_Init_thread
  EXPECT_NEAR(at(2, 3), 12e-6, 1e-9);  // Leave MPI_Init_thread
  // Rank 3's local definitions hold a clock offset of +2100 ticks: OTF2 adds it.
  EXPECT_NEAR(at(3, 0), 1e-6, 1e-9);
  EXPECT_NEAR(at(3, 3), 14e-6, 1e-9);
  const Event* bcast = find(t, 3, EventKind::CollEnd, MpiOp::Bcast);
  ASSERT_NE(bcast, nullptr);
  EXPECT_NEAR(bcast->time, 75.5e-6, 1e-9);
  EXPECT_NEAR(t.end_time(), 96e-6, 1e-9);
}

TEST_F(Otf2Scorep, CommunicatorsAreTheMpiOnesWithWorldRanks) {
  const Trace t = read_otf2(anchor().string());
  const std::vector<Communicator> expected = {{"MPI_COMM_WORLD", {0, 1, 2, 3}},
                                              {"MPI_COMM_SELF", {}},
                                              {"MPI communicator 2", {0, 2}},
                                              {"MPI communicator 3", {1, 3}},
                                              {"odd duplicate", {1, 3}}};
  EXPECT_EQ(t.defs.comms, expected);  // not the OpenMP thread team, not the inter-communicator
}

TEST_F(Otf2Scorep, RegionsOfOtherParadigmsAreLeftOut) {
  const Trace t = read_otf2(anchor().string());
  const auto region = [&](const std::string& name) -> const Region* {
    const auto i = t.defs.find_region(name);
    return i < 0 ? nullptr : &t.defs.regions[static_cast<std::size_t>(i)];
  };
  EXPECT_EQ(region("!$omp parallel @app.c:20"), nullptr);
  EXPECT_EQ(region("TRACE BUFFER FLUSH"), nullptr);
  ASSERT_NE(region("main"), nullptr);
  EXPECT_EQ(*region("main"), (Region{"main", MpiOp::None, "app.c"}));        // COMPILER
  EXPECT_EQ(*region("compute"), (Region{"compute", MpiOp::None, "app.c"}));  // USER
  EXPECT_EQ(*region("MPI_Init_thread"), (Region{"MPI_Init_thread", MpiOp::Init, "MPI"}));
  EXPECT_EQ(*region("MPI_Test"), (Region{"MPI_Test", MpiOp::Wait, "MPI"}));
  EXPECT_EQ(*region("MPI_Comm_split"), (Region{"MPI_Comm_split", MpiOp::None, "MPI"}));
  EXPECT_EQ(*region("MPI_Iallreduce"), (Region{"MPI_Iallreduce", MpiOp::None, "MPI"}));
  EXPECT_EQ(*region("MPI_Allreduce"), (Region{"MPI_Allreduce", MpiOp::Allreduce, "MPI"}));
  // The program region is kept: ProgramBegin and ProgramEnd enter and leave it (as Scalasca's
  // reader makes them), the root of every call path.
  ASSERT_NE(region("app"), nullptr);
  EXPECT_EQ(*region("app"), (Region{"app", MpiOp::None, ""}));
  const auto& ev = t.locations[0].events;
  EXPECT_EQ(ev.front().kind, EventKind::Enter);
  EXPECT_EQ(ev.front().ref, static_cast<std::uint32_t>(t.defs.find_region("app")));
  EXPECT_EQ(ev.back().kind, EventKind::Leave);
  EXPECT_EQ(ev.back().ref, ev.front().ref);
  EXPECT_NEAR(ev.back().time, 95e-6, 1e-9);
  EXPECT_EQ(t.defs.regions.size(), static_cast<std::size_t>(kRegions) - 2);
}

TEST_F(Otf2Scorep, CollectivesOnSubCommunicatorsNameTheirCommAndRootByWorldRank) {
  const Trace t = read_otf2(anchor().string());
  for (Rank r : {1, 3}) {
    const Event* bcast = find(t, r, EventKind::CollEnd, MpiOp::Bcast);
    ASSERT_NE(bcast, nullptr) << r;
    EXPECT_EQ(bcast->ref, 3u);
    EXPECT_EQ(bcast->peer, 3);  // root: rank 1 of {1, 3}
    EXPECT_EQ(bcast->bytes, r == 3 ? 64u : 0u);
    EXPECT_EQ(bcast->aux, 32u);
    const Event* begin = find(t, r, EventKind::CollBegin, MpiOp::Bcast);
    ASSERT_NE(begin, nullptr);
    EXPECT_EQ(begin->ref, 3u);
    const Event* allreduce = find(t, r, EventKind::CollEnd, MpiOp::Allreduce);
    ASSERT_NE(allreduce, nullptr);
    EXPECT_EQ(allreduce->ref, 3u);
    EXPECT_EQ(allreduce->peer, kNoRank);
    const Event* barrier = find(t, r, EventKind::CollEnd, MpiOp::Barrier);
    ASSERT_NE(barrier, nullptr);
    EXPECT_EQ(barrier->ref, 4u);  // the duplicate of {1, 3}
  }
  for (Rank r : {0, 2}) {
    const Event* allreduce = find(t, r, EventKind::CollEnd, MpiOp::Allreduce);
    ASSERT_NE(allreduce, nullptr);
    EXPECT_EQ(allreduce->ref, 2u);
    const Event* barrier = find(t, r, EventKind::CollEnd, MpiOp::Barrier);
    ASSERT_NE(barrier, nullptr);
    EXPECT_EQ(barrier->ref, kCommWorld);
  }
  // Point to point on sub-communicators: peers as world ranks.
  const Event* isend = find(t, 1, EventKind::IsendStart, MpiOp::None, 1);
  ASSERT_NE(isend, nullptr);
  EXPECT_EQ(isend->ref, 3u);
  EXPECT_EQ(isend->peer, 3);
  const Event* recv = find(t, 3, EventKind::Recv);
  ASSERT_NE(recv, nullptr);
  EXPECT_EQ(recv->ref, 3u);
  EXPECT_EQ(recv->peer, 1);
  const Event* self = find(t, 2, EventKind::IsendStart, MpiOp::None, 1);
  ASSERT_NE(self, nullptr);
  EXPECT_EQ(self->ref, 1u);  // MPI_COMM_SELF: peer 0 is the rank itself
  EXPECT_EQ(self->peer, 2);
}

TEST_F(Otf2Scorep, OtherRecordsAndLocationsAreSkippedAndCounted) {
  Otf2ReadStats stats;
  const Trace t = read_otf2(anchor().string(), &stats);
  EXPECT_EQ(stats.skipped_locations, 1u);  // the metric location (the 4 OpenMP threads are read)
  EXPECT_EQ(stats.thread_locations, 4u);
  const std::map<std::string, std::uint64_t> expected = {
      {"CallingContextEnter", 1},
      {"CallingContextLeave", 1},
      {"CallingContextSample", 1},
      {"CommCreate", 6},
      {"Enter (OPENMP)", 4},
      {"IoOperationBegin", 4},
      {"IoOperationComplete", 4},
      {"Leave (OPENMP)", 4},
      {"Metric", 1},  // "power" on rank 0
      {"MpiCollectiveBegin (CREATE_HANDLE)", 6},
      {"MpiCollectiveBegin (MPI_COMM_SELF)", 4},
      {"MpiCollectiveEnd (CREATE_HANDLE)", 6},
      {"MpiCollectiveEnd (MPI_COMM_SELF)", 4},
      {"MpiIrecvRequest (cancelled)", 1},
      {"MpiRecv (inter-communicator)", 1},
      {"MpiRequestCancelled", 1},
      {"MpiRequestTest", 1},
      {"MpiSend (inter-communicator)", 1},
      {"NonBlockingCollectiveComplete", 4},
      {"NonBlockingCollectiveRequest", 4},
      {"OmpFork", 4},
      {"OmpJoin", 4},
      {"ParameterInt", 1},
      {"ParameterString", 1},
      {"RmaGet", 1},
      {"RmaPut", 1},
      {"ThreadFork", 4},
      {"ThreadJoin", 4},
      {"ThreadTeamBegin", 8},  // masters and workers
      {"ThreadTeamEnd", 8},
  };
  EXPECT_EQ(stats.skipped_records, expected);
  const std::map<std::string, std::uint64_t> converted = {
      {"BufferFlush", 1},
      {"Enter (MEASUREMENT_SYSTEM)", 1},
      {"Leave (MEASUREMENT_SYSTEM)", 1},
      {"MeasurementOnOff", 2},
      {"Metric", 16},  // 2 on each master, 2 on each worker
  };
  EXPECT_EQ(stats.converted_records, converted);
  std::uint64_t skipped = 0, thread_events = 0;
  for (const auto& [kind, n] : stats.skipped_records) skipped += n;
  for (const auto& [kind, n] : stats.converted_records) skipped += n;
  for (const Location& l : t.threads) thread_events += l.events.size();
  EXPECT_EQ(thread_events, 8u);
  EXPECT_EQ(stats.records, t.event_count() + thread_events + skipped);
  // The cancelled Irecv left nothing behind.
  for (const Event& e : t.locations[0].events) EXPECT_FALSE(e.kind == EventKind::IrecvPost && e.aux == 3);
}

// Seconds of a time given in microseconds, computed as the reader must: (ticks − offset) / resolution.
double sec(double t_us) {
  return static_cast<double>(std::llround(t_us * 2100.0)) / static_cast<double>(kResolution);
}

TEST_F(Otf2Scorep, OriginAndDeclaredSpanAreScorePs) {
  const Trace t = read_otf2(anchor().string());
  EXPECT_EQ(t.origin, Origin::ScoreP);
  ASSERT_TRUE(t.has_declared_span());
  EXPECT_EQ(t.span_begin, 0.0);  // the global offset
  EXPECT_EQ(t.span_end, 210'000.0 / 2.1e9);  // trace length 210000 ticks at 2.1 GHz: 100 µs
}

TEST_F(Otf2Scorep, PapiCountersBecomeSampleDeltas) {
  const Trace t = read_otf2(anchor().string());
  EXPECT_EQ(t.counters, kHasInstructions | kHasCycles);
  for (std::uint64_t r = 0; r < kRanks; ++r) {
    const double shift = r == kClockShiftedRank ? 1 : 0;  // its clock offset: +1 µs
    const std::vector<CounterSample> expected = {
        {sec(31 + shift), kInsBase * (r + 1), kCycBase * (r + 1)},
        {sec(40 + static_cast<double>(r) + shift), kInsCompute + r, kCycCompute + 2 * r}};
    EXPECT_EQ(t.locations[r].counters, expected) << "rank " << r;
    const std::vector<CounterSample> worker = {{sec(31 + shift), 10, 20}, {sec(39 + shift), 700, 1400}};
    ASSERT_EQ(t.threads.size(), 4u);
    EXPECT_EQ(t.threads[r].counters, worker) << "thread of rank " << r;
  }
}

TEST_F(Otf2Scorep, BufferFlushAndMeasurementOffAreOverhead) {
  const Trace t = read_otf2(anchor().string());
  // Rank 0: the "TRACE BUFFER FLUSH" region and its BufferFlush record, one interval.
  const std::vector<StateInterval> flush = {{sec(48), sec(48.5), kStateOverhead}};
  EXPECT_EQ(t.locations[0].states, flush);
  EXPECT_TRUE(t.locations[1].states.empty());
  const std::vector<StateInterval> off = {{sec(49), sec(49.5), kStateOverhead}};
  EXPECT_EQ(t.locations[2].states, off);
  for (const Location& l : t.threads) EXPECT_TRUE(l.states.empty());
}

TEST_F(Otf2Scorep, WorkerThreadsAreThreadsOfTheirRank) {
  const Trace t = read_otf2(anchor().string());
  ASSERT_EQ(t.threads.size(), 4u);
  const RegionId compute = static_cast<RegionId>(t.defs.find_region("compute"));
  for (std::size_t r = 0; r < kRanks; ++r) {
    const Location& l = t.threads[r];
    EXPECT_EQ(l.rank, static_cast<Rank>(r));
    EXPECT_EQ(l.thread, 1);
    const double shift = r == kClockShiftedRank ? 1 : 0;
    const std::vector<Event> expected = {make_event(sec(31 + shift), EventKind::Enter, MpiOp::None, compute),
                                         make_event(sec(39 + shift), EventKind::Leave, MpiOp::None, compute)};
    EXPECT_EQ(l.events, expected) << "thread of rank " << r;  // mapped ids (ranks 1, 3) resolved
  }
}

TEST_F(Otf2Scorep, EverythingMatches) {
  const Trace t = read_otf2(anchor().string());
  const Matching m = Matching::build(t);
  EXPECT_EQ(m.unmatched.sends, 0u);
  EXPECT_EQ(m.unmatched.receives, 0u);
  EXPECT_EQ(m.unmatched.requests, 0u);
  EXPECT_EQ(m.unmatched.collective_calls, 0u);
  EXPECT_EQ(m.unmatched.unbalanced_regions, 0u);
  EXPECT_EQ(m.unmatched.stray_events, 0u);
  EXPECT_EQ(m.messages.size(), 6u);  // the ring (4), 1 -> 3 completed by MPI_Test, 2 -> 2 on MPI_COMM_SELF
  // Init, Finalize and the Barrier on MPI_COMM_WORLD; the Allreduce on each half; the Bcast on
  // {1, 3}; the Barrier on its duplicate.
  ASSERT_EQ(m.collectives.size(), 7u);
  std::map<std::pair<CommId, MpiOp>, Rank> roots;
  for (const CollInstance& c : m.collectives) roots[{c.comm, c.op}] = c.root;
  const std::map<std::pair<CommId, MpiOp>, Rank> expected = {
      {{0, MpiOp::Init}, kNoRank},      {{0, MpiOp::Finalize}, kNoRank}, {{0, MpiOp::Barrier}, kNoRank},
      {{2, MpiOp::Allreduce}, kNoRank}, {{3, MpiOp::Allreduce}, kNoRank}, {{3, MpiOp::Bcast}, 3},
      {{4, MpiOp::Barrier}, kNoRank}};
  EXPECT_EQ(roots, expected);
  // The message completed by MPI_Test: its send completes in the second MPI_Test call.
  for (const Message& msg : m.messages)
    if (msg.sender == 1 && msg.receiver == 3) {
      const Call& done = m.calls[1][msg.send_done_call];
      EXPECT_EQ(t.defs.regions[t.locations[1].events[done.enter].ref].name, "MPI_Test");
      EXPECT_NEAR(t.locations[1].events[done.enter].time, 65e-6, 1e-9);
    }
}

// What was read from Score-P survives write_otf2 and read_otf2: MPI_COMM_SELF, MPI functions
// without an operation, user regions' source files.
TEST_F(Otf2Scorep, ReadTraceRoundTrips) {
  const Trace t = read_otf2(anchor().string());
  const fs::path dir = scratch("roundtrip");
  write_otf2(t, dir.string());
  Otf2ReadStats stats;
  const Trace back = read_otf2((dir / "traces.otf2").string(), &stats);
  fs::remove_all(dir);
  EXPECT_EQ(stats.skipped_locations, 0u);
  EXPECT_TRUE(stats.skipped_records.empty());
  EXPECT_EQ(stats.thread_locations, 4u);
  const std::map<std::string, std::uint64_t> metrics = {{"Metric", 16}};
  EXPECT_EQ(stats.converted_records, metrics);  // the samples; the overhead states are lost:
  EXPECT_EQ(otf2_losses(t), std::vector<std::string>{"2 state intervals (not-useful states outside MPI: Paraver "
                                                     "states, measurement overhead): OTF2 has no record for them"});
  EXPECT_EQ(back.origin, Origin::ScoreP);  // waitlab's archive says where the trace came from
  EXPECT_NEAR(back.span_begin, t.span_begin - t.begin_time(), 1e-12);
  EXPECT_NEAR(back.span_end, t.span_end - t.begin_time(), 1e-12);
  EXPECT_EQ(back.counters, t.counters);
  ASSERT_EQ(back.threads.size(), t.threads.size());
  for (std::size_t i = 0; i < t.threads.size(); ++i) {
    EXPECT_EQ(back.threads[i].rank, t.threads[i].rank);
    EXPECT_EQ(back.threads[i].thread, t.threads[i].thread);
    ASSERT_EQ(back.threads[i].events.size(), t.threads[i].events.size());
    for (std::size_t k = 0; k < t.threads[i].events.size(); ++k)
      EXPECT_NEAR(back.threads[i].events[k].time, t.threads[i].events[k].time - t.begin_time(), 1e-9);
  }
  for (std::size_t r = 0; r < t.ranks(); ++r) {
    const auto& x = t.locations[r].counters;
    const auto& y = back.locations[r].counters;
    ASSERT_EQ(x.size(), y.size());
    for (std::size_t k = 0; k < x.size(); ++k) {
      EXPECT_NEAR(y[k].time, x[k].time - t.begin_time(), 1e-9);
      EXPECT_EQ(y[k].instructions, x[k].instructions);
      EXPECT_EQ(y[k].cycles, x[k].cycles);
    }
    EXPECT_TRUE(back.locations[r].states.empty());
  }
  EXPECT_EQ(back.defs, t.defs);
  ASSERT_EQ(back.ranks(), t.ranks());
  for (std::size_t r = 0; r < t.ranks(); ++r) {
    const auto& x = t.locations[r].events;
    const auto& y = back.locations[r].events;
    ASSERT_EQ(x.size(), y.size()) << r;
    for (std::size_t i = 0; i < x.size(); ++i) {
      EXPECT_NEAR(x[i].time, y[i].time, 1e-9) << r << " " << i;
      Event a = x[i], b = y[i];
      a.time = b.time = 0;
      EXPECT_EQ(a, b) << r << " " << i;
    }
  }
}

TEST_F(Otf2Scorep, DamagedArchivesAreInputErrorsNamingTheFile) {
  {  // an event file cut short
    const fs::path dir = copy("truncated_evt");
    const fs::path evt = dir / "traces" / "2.evt";
    fs::resize_file(evt, fs::file_size(evt) * 2 / 3);
    const std::string m = read_error(dir / "traces.otf2");
    EXPECT_EQ(m.rfind((dir / "traces.otf2").string() + ": rank 2 (traces/2.evt): corrupt or truncated events", 0), 0u)
        << m;
    fs::remove_all(dir);
  }
  {  // no global definitions
    const fs::path dir = copy("no_def");
    fs::remove(dir / "traces.def");
    const std::string m = read_error(dir / "traces.otf2");
    EXPECT_EQ(m.rfind((dir / "traces.otf2").string() + ": ", 0), 0u) << m;
    EXPECT_NE(m.find("traces.def: missing"), std::string::npos) << m;
    fs::remove_all(dir);
  }
  {  // local definitions (mapping tables) cut short
    const fs::path dir = copy("truncated_local_def");
    const fs::path def = dir / "traces" / "1.def";
    fs::resize_file(def, fs::file_size(def) - 3);
    const std::string m = read_error(dir / "traces.otf2");
    EXPECT_EQ(m.rfind((dir / "traces.otf2").string() + ": rank 1 (traces/1.def): ", 0), 0u) << m;
    fs::remove_all(dir);
  }
  {  // a location holding another number of records than its definition announces
    const fs::path dir = scratch("miscount");
    ScorepArchive a(dir, true);
    a.write();
    const std::string m = read_error(dir / "traces.otf2");
    EXPECT_EQ(m.rfind((dir / "traces.otf2").string() + ": rank 1 (traces/1.evt): corrupt or truncated events: ", 0), 0u)
        << m;
    EXPECT_NE(m.find("where the definitions announce"), std::string::npos) << m;
    fs::remove_all(dir);
  }
  {  // local definitions missing: the events' local ids would be read unmapped
    const fs::path dir = copy("no_local_def");
    fs::remove(dir / "traces" / "3.def");
    const std::string m = read_error(dir / "traces.otf2");
    EXPECT_EQ(m.rfind((dir / "traces.otf2").string() + ": rank 3 (traces/3.def): ", 0), 0u) << m;
    fs::remove_all(dir);
  }
}

}  // namespace
}  // namespace waitlab::trace
