// read_otf2 on archives that break OTF2's rules on time (a zero timer resolution, records
// before the global offset, time going backwards on a location), written here with the OTF2
// API; and write_otf2's archives being byte-identical from one write to the next (the trace
// identifier comes from the content, not from OTF2's pid, clock and host id).
#include <gtest/gtest.h>
#include <otf2/otf2.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "util/error.hpp"
#include "analysis/trace/otf2.hpp"
#include "tests/trace/otf2_writing.hpp"

namespace waitlab::trace {
namespace {

namespace fs = std::filesystem;

using test::kFlushCallbacks;

class Otf2Limits : public testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("otf2_limits_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  // One rank (location 0) whose records are Enter(main), then an MpiSend to itself on
  // MPI_COMM_WORLD, then Leave(main), at `ticks` (with `nested`: as many Enters, then as
  // many Leaves); clock properties (resolution, offset).
  fs::path archive(const std::string& name, std::uint64_t resolution, std::uint64_t offset,
                   const std::vector<OTF2_TimeStamp>& ticks, bool nested = false) {
    const fs::path dir = root_ / name;
    write(dir, resolution, offset, ticks, nested);
    return dir / "traces.otf2";
  }

  // Replaces the one occurrence of the 8 bytes of tick `from` in location 0's event file.
  static void patch_tick(const fs::path& anchor, OTF2_TimeStamp from, OTF2_TimeStamp to) {
    const fs::path evt = anchor.parent_path() / "traces" / "0.evt";
    std::string bytes;
    {
      std::ifstream in(evt, std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    char f[8], t[8];
    std::memcpy(f, &from, 8);
    std::memcpy(t, &to, 8);
    const std::size_t at = bytes.find(std::string(f, 8));
    ASSERT_NE(at, std::string::npos);
    ASSERT_EQ(bytes.find(std::string(f, 8), at + 1), std::string::npos);
    std::memcpy(bytes.data() + at, t, 8);
    std::ofstream(evt, std::ios::binary | std::ios::trunc)
        .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }

  // One rank (location 0): Enter(main), the records `records` writes (times 20, 21, ...),
  // Leave(main). Communicators: 0 MPI_COMM_WORLD {rank 0}; 1 "pair" {rank 0, rank index 5},
  // whose member 1 is no rank of the archive; 2 MPI_COMM_SELF.
  fs::path with_records(const std::string& name, const std::function<void(OTF2_EvtWriter*)>& records) {
    const fs::path dir = root_ / name;
    write_with_records(dir, records);
    return dir / "traces.otf2";
  }

  // Appends `bytes` to the file `file` of the archive of `anchor`; returns its size before.
  static std::uintmax_t append(const fs::path& anchor, const fs::path& file, const std::string& bytes) {
    const fs::path p = anchor.parent_path() / file;
    const std::uintmax_t size = fs::file_size(p);
    std::ofstream(p, std::ios::binary | std::ios::app)
        .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return size;
  }

  fs::path root_;

 private:
  // An archive open for writing, with rank 0's event writer (w null if anything failed).
  static void open_archive(const fs::path& dir, OTF2_Archive*& a, OTF2_EvtWriter*& w) {
    a = OTF2_Archive_Open(dir.c_str(), "traces", OTF2_FILEMODE_WRITE, OTF2_CHUNK_SIZE_MIN, OTF2_CHUNK_SIZE_MIN,
                          OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    ASSERT_NE(a, nullptr);
    OK(OTF2_Archive_SetFlushCallbacks(a, &kFlushCallbacks, nullptr));
    OK(OTF2_Archive_SetSerialCollectiveCallbacks(a));
    OK(OTF2_Archive_SetCreator(a, "a hostile writer"));
    OK(OTF2_Archive_OpenEvtFiles(a));
    w = OTF2_Archive_GetEvtWriter(a, 0);
  }

  void write_with_records(const fs::path& dir, const std::function<void(OTF2_EvtWriter*)>& records) {
    OTF2_Archive* a = nullptr;
    OTF2_EvtWriter* w = nullptr;
    open_archive(dir, a, w);
    ASSERT_NE(w, nullptr);
    OK(OTF2_EvtWriter_Enter(w, nullptr, 10, 0));
    records(w);
    OK(OTF2_EvtWriter_Leave(w, nullptr, 90, 0));
    std::uint64_t events = 0;
    OK(OTF2_EvtWriter_GetNumberOfEvents(w, &events));
    OK(OTF2_Archive_CloseEvtWriter(a, w));
    OK(OTF2_Archive_CloseEvtFiles(a));
    OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(a);
    ASSERT_NE(g, nullptr);
    OK(OTF2_GlobalDefWriter_WriteClockProperties(g, 1000, 0, 100, OTF2_UNDEFINED_TIMESTAMP));
    const char* strings[] = {"", "main", "MPI_COMM_WORLD", "pair", "MPI_COMM_SELF"};
    for (OTF2_StringRef i = 0; i < 5; ++i) OK(OTF2_GlobalDefWriter_WriteString(g, i, strings[i]));
    OK(OTF2_GlobalDefWriter_WriteRegion(g, 0, 1, 1, 0, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER,
                                        OTF2_REGION_FLAG_NONE, 0, 0, 0));
    OK(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, 0, 0, OTF2_UNDEFINED_SYSTEM_TREE_NODE));
    OK(OTF2_GlobalDefWriter_WriteLocationGroup(g, 0, 0, OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
                                               OTF2_UNDEFINED_LOCATION_GROUP));
    OK(OTF2_GlobalDefWriter_WriteLocation(g, 0, 0, OTF2_LOCATION_TYPE_CPU_THREAD, events, 0));
    const std::uint64_t world[] = {0}, pair[] = {0, 5};
    OK(OTF2_GlobalDefWriter_WriteGroup(g, 0, 0, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
                                       OTF2_GROUP_FLAG_NONE, 1, world));
    OK(OTF2_GlobalDefWriter_WriteGroup(g, 1, 0, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                       OTF2_GROUP_FLAG_NONE, 1, world));
    OK(OTF2_GlobalDefWriter_WriteGroup(g, 2, 0, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                       OTF2_GROUP_FLAG_NONE, 2, pair));
    OK(OTF2_GlobalDefWriter_WriteGroup(g, 3, 0, OTF2_GROUP_TYPE_COMM_SELF, OTF2_PARADIGM_MPI,
                                       OTF2_GROUP_FLAG_NONE, 0, nullptr));
    OK(OTF2_GlobalDefWriter_WriteComm(g, 0, 2, 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE));
    OK(OTF2_GlobalDefWriter_WriteComm(g, 1, 3, 2, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE));
    OK(OTF2_GlobalDefWriter_WriteComm(g, 2, 4, 3, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE));
    OK(OTF2_Archive_Close(a));
  }

  void write(const fs::path& dir, std::uint64_t resolution, std::uint64_t offset,
             const std::vector<OTF2_TimeStamp>& ticks, bool nested) {
    OTF2_Archive* a = nullptr;
    OTF2_EvtWriter* w = nullptr;
    open_archive(dir, a, w);
    ASSERT_NE(w, nullptr);
    for (std::size_t i = 0; i < ticks.size(); ++i) {
      if (nested || i == 0) {
        OK(OTF2_EvtWriter_Enter(w, nullptr, ticks[i], 0));
      } else if (i + 1 == ticks.size()) {
        OK(OTF2_EvtWriter_Leave(w, nullptr, ticks[i], 0));
      } else {
        OK(OTF2_EvtWriter_MpiSend(w, nullptr, ticks[i], 0, 0, 7, 8));
      }
    }
    if (nested) {
      for (std::size_t i = 0; i < ticks.size(); ++i) OK(OTF2_EvtWriter_Leave(w, nullptr, ticks.back(), 0));
    }
    std::uint64_t events = 0;
    OK(OTF2_EvtWriter_GetNumberOfEvents(w, &events));
    OK(OTF2_Archive_CloseEvtWriter(a, w));
    OK(OTF2_Archive_CloseEvtFiles(a));
    OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(a);
    ASSERT_NE(g, nullptr);
    const std::uint64_t length =
        ticks.empty() ? 0 : *std::max_element(ticks.begin(), ticks.end()) - std::min(offset, ticks[0]);
    OK(OTF2_GlobalDefWriter_WriteClockProperties(g, resolution, offset, length, OTF2_UNDEFINED_TIMESTAMP));
    OK(OTF2_GlobalDefWriter_WriteString(g, 0, ""));
    OK(OTF2_GlobalDefWriter_WriteString(g, 1, "main"));
    OK(OTF2_GlobalDefWriter_WriteString(g, 2, "MPI_COMM_WORLD"));
    OK(OTF2_GlobalDefWriter_WriteRegion(g, 0, 1, 1, 0, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER,
                                        OTF2_REGION_FLAG_NONE, 0, 0, 0));
    OK(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, 0, 0, OTF2_UNDEFINED_SYSTEM_TREE_NODE));
    OK(OTF2_GlobalDefWriter_WriteLocationGroup(g, 0, 0, OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
                                               OTF2_UNDEFINED_LOCATION_GROUP));
    OK(OTF2_GlobalDefWriter_WriteLocation(g, 0, 0, OTF2_LOCATION_TYPE_CPU_THREAD, events, 0));
    const std::uint64_t member = 0;
    OK(OTF2_GlobalDefWriter_WriteGroup(g, 0, 0, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
                                       OTF2_GROUP_FLAG_NONE, 1, &member));
    OK(OTF2_GlobalDefWriter_WriteGroup(g, 1, 0, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                       OTF2_GROUP_FLAG_NONE, 1, &member));
    OK(OTF2_GlobalDefWriter_WriteComm(g, 0, 2, 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE));
    OK(OTF2_Archive_Close(a));
  }
};

TEST_F(Otf2Limits, AWellFormedArchiveReads) {
  // The shape the other tests break: times (ticks - offset) / resolution.
  const Trace t = read_otf2(archive("good", 1000, 100, {100, 150, 300}).string());
  ASSERT_EQ(t.locations.size(), 1u);
  ASSERT_EQ(t.locations[0].events.size(), 3u);
  EXPECT_EQ(t.locations[0].events[0].time, 0.0);
  EXPECT_EQ(t.locations[0].events[1].time, 0.05);
  EXPECT_EQ(t.locations[0].events[1].kind, EventKind::Send);
  EXPECT_EQ(t.locations[0].events[2].time, 0.2);
}

TEST_F(Otf2Limits, ZeroTimerResolutionIsAnInputError) {
  const fs::path anchor = archive("zero_resolution", 0, 0, {0, 1, 2});
  EXPECT_EQ(test::otf2_error_of(anchor),
            anchor.string() +
                ": traces.def: the clock properties give a timer resolution of 0 ticks per second "
                "(expected at least 1)");
}

TEST_F(Otf2Limits, TimeGoingBackwardsOnALocationNamesTheRecord) {
  // OTF2's writer refuses time going backwards: the event file is changed after writing.
  constexpr OTF2_TimeStamp a = 1'000'000'000'001, b = 2'000'000'000'002, c = 3'000'000'000'003;
  const fs::path anchor = archive("backwards", 1'000'000'000, 0, {a, b, c});
  patch_tick(anchor, c, 1'500'000'000'003);
  EXPECT_EQ(test::otf2_error_of(anchor),
            anchor.string() +
                ": rank 0 (traces/0.evt), event 2: the record at tick 1500000000003 goes back in "
                "time from the previous record at tick 2000000000002 (time runs forward on a "
                "location)");
  const fs::path second = archive("backwards_at_1", 1'000'000'000, 0, {a, b, c});
  patch_tick(second, b, 5);
  EXPECT_EQ(test::otf2_error_of(second),
            second.string() +
                ": rank 0 (traces/0.evt), event 1: the record at tick 5 goes back in time from the "
                "previous record at tick 1000000000001 (time runs forward on a location)");
  // Equal times are in order.
  EXPECT_EQ(test::otf2_error_of(archive("equal", 1000, 0, {10, 10, 10})), "(no error)");
}

TEST_F(Otf2Limits, ARecordBeforeTheGlobalOffsetIsAnInputError) {
  const fs::path anchor = archive("before_offset", 1000, 100, {99, 150, 200});
  EXPECT_EQ(test::otf2_error_of(anchor),
            anchor.string() +
                ": rank 0 (traces/0.evt), event 0: the record is at tick 99, before the clock "
                "properties' global offset 100 (a negative time)");
}

TEST_F(Otf2Limits, HugeTicksStayFinite) {
  // The largest ticks at the smallest resolution: 1.8e19 s, finite.
  const OTF2_TimeStamp big = std::numeric_limits<std::uint64_t>::max() - 1;
  const Trace t = read_otf2(archive("huge", 1, 0, {0, big / 2, big}).string());
  ASSERT_EQ(t.locations[0].events.size(), 3u);
  EXPECT_EQ(t.locations[0].events[2].time, static_cast<double>(big));
  EXPECT_TRUE(std::isfinite(t.span_end));
}

TEST_F(Otf2Limits, RegionNestingIsBounded) {
  std::vector<OTF2_TimeStamp> ticks(kMaxRegionDepth);
  for (std::size_t i = 0; i < ticks.size(); ++i) ticks[i] = i;
  EXPECT_EQ(test::otf2_error_of(archive("deep_ok", 1000, 0, ticks, true)), "(no error)");  // exactly the limit
  ticks.push_back(ticks.size());
  const fs::path anchor = archive("too_deep", 1000, 0, ticks, true);
  EXPECT_EQ(test::otf2_error_of(anchor),
            anchor.string() +
                ": rank 0 (traces/0.evt), event 4096: the Enter nests regions deeper than the 4096 "
                "levels a trace may have");
}

TEST_F(Otf2Limits, ZeroLengthFilesAreInputErrorsNamingThem) {
  const auto emptied = [&](const std::string& name, const fs::path& file) {
    const fs::path anchor = archive(name, 1000, 0, {10, 20, 30});
    fs::resize_file(anchor.parent_path() / file, 0);
    return anchor;
  };
  fs::path anchor = emptied("empty_anchor", "traces.otf2");
  EXPECT_EQ(test::otf2_error_of(anchor), anchor.string() + ": cannot open as an OTF2 archive: the anchor file is empty");
  anchor = emptied("empty_def", "traces.def");
  EXPECT_EQ(test::otf2_error_of(anchor).rfind(anchor.string() + ": traces.def: ", 0), 0u) << test::otf2_error_of(anchor);
  anchor = emptied("empty_evt", fs::path("traces") / "0.evt");
  EXPECT_EQ(test::otf2_error_of(anchor).rfind(anchor.string() + ": rank 0 (traces/0.evt): ", 0), 0u) << test::otf2_error_of(anchor);
}

// ---- message peers and collective roots: ranks of their communicator ----

Trace two_ranks();  // below

TEST_F(Otf2Limits, APeerOrRootOutsideItsCommunicatorNamesTheRecord) {
  const auto error = [&](const std::string& name, const std::function<void(OTF2_EvtWriter*)>& records) {
    const fs::path anchor = with_records(name, records);
    return test::otf2_error_of(anchor).substr(anchor.string().size());
  };
  EXPECT_EQ(error("send", [](OTF2_EvtWriter* w) { OK(OTF2_EvtWriter_MpiSend(w, nullptr, 20, 1, 0, 7, 8)); }),
            ": rank 0 (traces/0.evt), event 1: the MpiSend names receiver 1 in MPI communicator 0 "
            "(MPI_COMM_WORLD), which has 1 rank");
  EXPECT_EQ(
      error("recv", [](OTF2_EvtWriter* w) { OK(OTF2_EvtWriter_MpiRecv(w, nullptr, 20, 100000, 0, 7, 8)); }),
      ": rank 0 (traces/0.evt), event 1: the MpiRecv names sender 100000 in MPI communicator 0 "
      "(MPI_COMM_WORLD), which has 1 rank");
  EXPECT_EQ(
      error("isend",
            [](OTF2_EvtWriter* w) {
              OK(OTF2_EvtWriter_MpiSend(w, nullptr, 20, 0, 1, 7, 8));  // member 0 of "pair": rank 0
              OK(OTF2_EvtWriter_MpiIsend(w, nullptr, 21, 1, 1, 7, 8, 42));
            }),
      ": rank 0 (traces/0.evt), event 2: the MpiIsend names receiver 1 in MPI communicator 1 (pair), whose "
      "member 1 is no rank of the archive");
  EXPECT_EQ(
      error("irecv",
            [](OTF2_EvtWriter* w) {
              OK(OTF2_EvtWriter_MpiIrecvRequest(w, nullptr, 20, 42));
              OK(OTF2_EvtWriter_MpiIrecv(w, nullptr, 21, 1, 2, 7, 8, 42));
            }),
      ": rank 0 (traces/0.evt), event 2: the MpiIrecv names sender 1 in MPI communicator 2 (MPI_COMM_SELF), "
      "which has 1 rank");
  EXPECT_EQ(error("root",
                  [](OTF2_EvtWriter* w) {
                    OK(OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, 20));
                    OK(OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, 21, OTF2_COLLECTIVE_OP_BCAST, 0, 3, 8, 8));
                  }),
            ": rank 0 (traces/0.evt), event 2: the MpiCollectiveEnd names root 3 in MPI communicator 0 "
            "(MPI_COMM_WORLD), which has 1 rank");
  // Ranks the communicators have, and OTF2_UNDEFINED_UINT32 (none, as write_otf2 writes it).
  const fs::path good = with_records("good", [](OTF2_EvtWriter* w) {
    OK(OTF2_EvtWriter_MpiSend(w, nullptr, 20, 0, 0, 7, 8));
    OK(OTF2_EvtWriter_MpiRecv(w, nullptr, 21, 0, 2, 7, 8));
    OK(OTF2_EvtWriter_MpiSend(w, nullptr, 22, OTF2_UNDEFINED_UINT32, 0, 7, 8));
    OK(OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, 23));
    OK(OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, 24, OTF2_COLLECTIVE_OP_BCAST, 1, 0, 8, 8));
    OK(OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, 25));
    OK(OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, 26, OTF2_COLLECTIVE_OP_ALLREDUCE, 0, OTF2_UNDEFINED_UINT32,
                                       8, 8));
  });
  const Trace t = read_otf2(good.string());
  const std::vector<Event>& e = t.locations.at(0).events;
  ASSERT_EQ(e.size(), 9u);
  EXPECT_EQ(e[1].peer, 0);
  EXPECT_EQ(e[2].peer, 0);  // MPI_COMM_SELF: the rank itself
  EXPECT_EQ(e[3].peer, kNoRank);
  EXPECT_EQ(e[5].peer, 0);  // the root, member 0 of "pair"
  EXPECT_EQ(e[7].peer, kNoRank);
  // write_otf2's own archive of a message without a peer reads back.
  Trace none = two_ranks();
  none.locations[0].events[2].peer = kNoRank;
  write_otf2(none, (root_ / "none").string());
  EXPECT_EQ(read_otf2((root_ / "none" / "traces.otf2").string()).locations[0].events[2].peer, kNoRank);
}

// ---- bytes after the end of a file: libotf2 stops at the end-of-file record ----

TEST_F(Otf2Limits, BytesAfterAFilesEndAreAnInputError) {
  fs::path anchor = archive("garbage_evt", 1000, 0, {10, 20, 30});
  ASSERT_EQ(test::otf2_error_of(anchor), "(no error)");
  std::uintmax_t end = append(anchor, fs::path("traces") / "0.evt", "hello");
  EXPECT_EQ(test::otf2_error_of(anchor),
            anchor.string() +
                ": rank 0 (traces/0.evt): corrupt or truncated events: the file goes on for 5 bytes "
                "after its end at byte " +
                std::to_string(end) + " (the end-of-file record at byte " + std::to_string(end - 2) + ")");
  anchor = archive("garbage_def", 1000, 0, {10, 20, 30});
  end = append(anchor, "traces.def", std::string(1, '\x01'));
  EXPECT_EQ(test::otf2_error_of(anchor),
            anchor.string() +
                ": traces.def: corrupt or truncated global definitions: the file goes on for 1 byte "
                "after its end at byte " +
                std::to_string(end) + " (the end-of-file record at byte " + std::to_string(end - 2) + ")");
  // Zero bytes to the end of the last chunk are the padding of a writer that writes whole
  // chunks: they read.
  anchor = archive("padded", 1000, 0, {10, 20, 30});
  append(anchor, fs::path("traces") / "0.evt", std::string(100, '\0'));
  EXPECT_EQ(test::otf2_error_of(anchor), "(no error)");
  // Not past the chunk: a second chunk after the end is not OTF2's.
  append(anchor, fs::path("traces") / "0.evt", std::string(OTF2_CHUNK_SIZE_MIN, '\0'));
  EXPECT_NE(test::otf2_error_of(anchor).find(
                ": rank 0 (traces/0.evt): corrupt or truncated events: the file goes on for "),
            std::string::npos)
      << test::otf2_error_of(anchor);
}

// ---- the writer: the same trace, the same bytes ----

Trace two_ranks() {
  Trace t;
  const RegionId main = t.defs.region("main");
  const RegionId send = t.defs.mpi_region(MpiOp::Send);
  const RegionId recv = t.defs.mpi_region(MpiOp::Recv);
  t.defs.comms.push_back(Communicator{"MPI_COMM_WORLD", {0, 1}});
  for (Rank r = 0; r < 2; ++r) {
    Location l;
    l.rank = r;
    l.events.push_back(make_event(0, EventKind::Enter, MpiOp::None, main));
    const RegionId call = r == 0 ? send : recv;
    const MpiOp op = r == 0 ? MpiOp::Send : MpiOp::Recv;
    l.events.push_back(make_event(0.5, EventKind::Enter, op, call));
    l.events.push_back(
        make_event(0.75, r == 0 ? EventKind::Send : EventKind::Recv, op, kCommWorld, 1 - r, 3, 64));
    l.events.push_back(make_event(0.75, EventKind::Leave, op, call));
    l.events.push_back(make_event(1, EventKind::Leave, MpiOp::None, main));
    t.locations.push_back(std::move(l));
  }
  return t;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Every file of the archive under `dir`, by path relative to it.
std::vector<std::pair<std::string, std::string>> files_of(const fs::path& dir) {
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) files.emplace_back(fs::relative(e.path(), dir).string(), slurp(e.path()));
  std::sort(files.begin(), files.end());
  return files;
}

std::uint64_t trace_id(const fs::path& anchor) {
  OTF2_Reader* r = OTF2_Reader_Open(anchor.c_str());
  std::uint64_t id = 0;
  EXPECT_NE(r, nullptr);
  if (!r) return 0;
  EXPECT_EQ(OTF2_Reader_GetTraceId(r, &id), OTF2_SUCCESS);
  OTF2_Reader_Close(r);
  return id;
}

std::uint32_t crc(std::uint32_t c, const std::string& bytes) {
  return static_cast<std::uint32_t>(crc32_z(c, reinterpret_cast<const Bytef*>(bytes.data()), bytes.size()));
}

TEST_F(Otf2Limits, TheSameTraceWritesTheSameBytes) {
  const Trace t = two_ranks();
  write_otf2(t, (root_ / "first").string());
  write_otf2(t, (root_ / "second").string());
  const auto a = files_of(root_ / "first"), b = files_of(root_ / "second");
  ASSERT_EQ(a.size(), 6u);  // traces.otf2, traces.def, traces/{0,1}.{evt,def}
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].first, b[i].first);
    EXPECT_TRUE(a[i].second == b[i].second) << a[i].first << " differs";
  }
  // The identifier is the documented one: crc32 of the definitions (the anchor with the
  // identifier zeroed, traces.def, the local .def files) above the crc32 of the event files.
  const std::uint64_t id = trace_id(root_ / "first" / "traces.otf2");
  std::string anchor = slurp(root_ / "first" / "traces.otf2");
  char pattern[8];
  std::memcpy(pattern, &id, 8);
  const std::size_t at = anchor.find(std::string(pattern, 8));
  ASSERT_NE(at, std::string::npos);
  std::memset(anchor.data() + at, 0, 8);
  std::uint32_t defs = crc(0, anchor);
  defs = crc(defs, slurp(root_ / "first" / "traces.def"));
  defs = crc(defs, slurp(root_ / "first" / "traces" / "0.def"));
  defs = crc(defs, slurp(root_ / "first" / "traces" / "1.def"));
  const std::uint32_t events =
      crc(crc(0, slurp(root_ / "first" / "traces" / "0.evt")), slurp(root_ / "first" / "traces" / "1.evt"));
  EXPECT_EQ(id, std::uint64_t{defs} << 32 | events);
  // Another trace, another identifier; and the archive still reads.
  Trace other = t;
  other.locations[1].events.back().time = 1.5;
  write_otf2(other, (root_ / "other").string());
  EXPECT_NE(trace_id(root_ / "other" / "traces.otf2"), id);
  EXPECT_EQ(read_otf2((root_ / "other" / "traces.otf2").string()).locations[1].events.back().time, 1.5);
}

}  // namespace
}  // namespace waitlab::trace
