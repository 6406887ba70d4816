// read_otf2 on archives whose counts announce more than their bytes hold (otf2_check.hpp): the
// anchor's number of properties, a local mapping table's number of ids, a Group's number of
// members, a ProgramBegin's number of arguments and an attribute list's number of entries,
// each corrupted in an archive written here with the OTF2 API; they are InputErrors naming the
// file and the byte before libotf2 allocates for them. And the walk refusing no well-formed
// archive: several sizes, chunks of several sizes, records longer than 254 bytes (an 8-byte
// length), every attribute type, a big-endian anchor, and waitlab's own archives.
#include <gtest/gtest.h>
#include <otf2/otf2.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "util/error.hpp"
#include "analysis/trace/otf2.hpp"
#include "analysis/trace/otf2_check.hpp"
#include "tests/temp_dir.hpp"
#include "tests/trace/otf2_writing.hpp"

namespace waitlab::trace {
namespace {

namespace fs = std::filesystem;
using test::kFlushCallbacks;

// The shape of an archive written by write_archive.
struct Shape {
  int ranks = 2;
  int pairs = 3;  // Enter/Leave pairs per rank
  std::uint64_t event_chunk = OTF2_CHUNK_SIZE_MIN;
  std::uint64_t definition_chunk = OTF2_CHUNK_SIZE_MIN;
  int filler_strings = 0;  // global strings, and local ones on rank 0
  // A ProgramBegin of kArguments arguments first on every rank; an attribute list of every
  // OTF2_Type (ids from kFirstAttribute) on each rank's first Enter; on odd ranks a dense
  // mapping table of kIds region ids (the first local definition) and a sparse one of
  // strings; a Group of kMembers members (paradigm USER: no communicator).
  bool big_records = true;
};
constexpr std::uint32_t kArguments = 300;            // the count is 02 2c 01 in the file
constexpr std::uint64_t kIds = 300;                  // 02 2c 01 too
constexpr std::uint32_t kMembers = 3000;             // 02 b8 0b
constexpr std::uint32_t kFirstAttribute = 0x5a5a5a;  // 03 5a 5a 5a
constexpr OTF2_Type kLastType = OTF2_TYPE_LOCATION_GROUP;

OTF2_AttributeValue value_of(OTF2_Type type, std::uint32_t v) {
  OTF2_AttributeValue a{};
  switch (type) {
    case OTF2_TYPE_UINT8:
    case OTF2_TYPE_INT8:
      a.uint8 = static_cast<std::uint8_t>(v);
      break;
    case OTF2_TYPE_UINT16:
    case OTF2_TYPE_INT16:
      a.uint16 = static_cast<std::uint16_t>(v);
      break;
    case OTF2_TYPE_FLOAT:
      a.float32 = 1.5f;
      break;
    case OTF2_TYPE_DOUBLE:
      a.float64 = 2.5;
      break;
    case OTF2_TYPE_UINT64:
    case OTF2_TYPE_INT64:
    case OTF2_TYPE_LOCATION:
      a.uint64 = std::uint64_t{v} << 20;
      break;
    default:
      a.uint32 = v;
  }
  return a;
}

void write_archive(const fs::path& dir, const Shape& s) {
  fs::remove_all(dir);
  OTF2_Archive* a = OTF2_Archive_Open(dir.c_str(), "traces", OTF2_FILEMODE_WRITE, s.event_chunk,
                                      s.definition_chunk, OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  ASSERT_NE(a, nullptr);
  OK(OTF2_Archive_SetFlushCallbacks(a, &kFlushCallbacks, nullptr));
  OK(OTF2_Archive_SetSerialCollectiveCallbacks(a));
  OK(OTF2_Archive_SetCreator(a, "a careful writer"));
  OK(OTF2_Archive_OpenEvtFiles(a));
  std::vector<std::uint64_t> events(static_cast<std::size_t>(s.ranks));
  for (int r = 0; r < s.ranks; ++r) {
    OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(a, static_cast<OTF2_LocationRef>(r));
    ASSERT_NE(w, nullptr);
    OTF2_TimeStamp t = 1;
    if (s.big_records) {
      std::vector<OTF2_StringRef> arguments(kArguments);
      for (std::uint32_t i = 0; i < kArguments; ++i) arguments[i] = 2 + i % 2;
      OK(OTF2_EvtWriter_ProgramBegin(w, nullptr, t++, 1, kArguments, arguments.data()));
    }
    for (int i = 0; i < s.pairs; ++i) {
      OTF2_AttributeList* list = nullptr;
      if (s.big_records && i == 0) {
        list = OTF2_AttributeList_New();
        for (std::uint8_t type = OTF2_TYPE_UINT8; type <= kLastType; ++type) {
          OK(OTF2_AttributeList_AddAttribute(list, kFirstAttribute + type, type,
                                             value_of(type, 1000u * type)));
        }
      }
      OK(OTF2_EvtWriter_Enter(w, list, t++, 0));
      if (list) OTF2_AttributeList_Delete(list);
      OK(OTF2_EvtWriter_Leave(w, nullptr, t++, 0));
    }
    OK(OTF2_EvtWriter_GetNumberOfEvents(w, &events[static_cast<std::size_t>(r)]));
    OK(OTF2_Archive_CloseEvtWriter(a, w));
  }
  OK(OTF2_Archive_CloseEvtFiles(a));

  OK(OTF2_Archive_OpenDefFiles(a));
  for (int r = 0; r < s.ranks; ++r) {
    OTF2_DefWriter* d = OTF2_Archive_GetDefWriter(a, static_cast<OTF2_LocationRef>(r));
    ASSERT_NE(d, nullptr);
    if (s.big_records && r % 2 == 1) {
      std::vector<std::uint64_t> identity(kIds);
      for (std::uint64_t i = 0; i < kIds; ++i) identity[i] = i;
      OTF2_IdMap* dense = OTF2_IdMap_CreateFromUint64Array(kIds, identity.data(), false);
      OK(OTF2_DefWriter_WriteMappingTable(d, OTF2_MAPPING_REGION, dense));
      OTF2_IdMap_Free(dense);
      identity[5] = 7;  // one id moved: a sparse map of one pair
      OTF2_IdMap* sparse = OTF2_IdMap_CreateFromUint64Array(kIds, identity.data(), true);
      OK(OTF2_DefWriter_WriteMappingTable(d, OTF2_MAPPING_ATTRIBUTE, sparse));
      OTF2_IdMap_Free(sparse);
    }
    for (int i = 0; r == 0 && i < s.filler_strings; ++i) {
      OK(OTF2_DefWriter_WriteString(d, static_cast<OTF2_StringRef>(1000 + i),
                                    ("local string " + std::to_string(i)).c_str()));
    }
    OK(OTF2_Archive_CloseDefWriter(a, d));
  }
  OK(OTF2_Archive_CloseDefFiles(a));

  OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(a);
  ASSERT_NE(g, nullptr);
  OK(OTF2_GlobalDefWriter_WriteClockProperties(g, 1000, 0, 2 * static_cast<std::uint64_t>(s.pairs) + 2,
                                               OTF2_UNDEFINED_TIMESTAMP));
  OK(OTF2_GlobalDefWriter_WriteString(g, 0, ""));
  OK(OTF2_GlobalDefWriter_WriteString(g, 1, "main"));
  OK(OTF2_GlobalDefWriter_WriteString(g, 2, "--verbose"));
  OK(OTF2_GlobalDefWriter_WriteString(g, 3, "MPI_COMM_WORLD"));
  for (int i = 0; i < s.filler_strings; ++i) {
    OK(OTF2_GlobalDefWriter_WriteString(g, static_cast<OTF2_StringRef>(1000 + i),
                                        ("global string " + std::to_string(i)).c_str()));
  }
  OK(OTF2_GlobalDefWriter_WriteRegion(g, 0, 1, 1, 0, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER,
                                      OTF2_REGION_FLAG_NONE, 0, 0, 0));
  OK(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, 0, 0, OTF2_UNDEFINED_SYSTEM_TREE_NODE));
  std::vector<std::uint64_t> ranks;
  for (int r = 0; r < s.ranks; ++r) {
    const auto ref = static_cast<std::uint32_t>(r);
    OK(OTF2_GlobalDefWriter_WriteLocationGroup(g, ref, 0, OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
                                               OTF2_UNDEFINED_LOCATION_GROUP));
    OK(OTF2_GlobalDefWriter_WriteLocation(g, ref, 0, OTF2_LOCATION_TYPE_CPU_THREAD,
                                          events[static_cast<std::size_t>(r)], ref));
    ranks.push_back(static_cast<std::uint64_t>(r));
  }
  OK(OTF2_GlobalDefWriter_WriteGroup(g, 0, 0, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
                                     OTF2_GROUP_FLAG_NONE, static_cast<std::uint32_t>(ranks.size()),
                                     ranks.data()));
  OK(OTF2_GlobalDefWriter_WriteGroup(g, 1, 0, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                     OTF2_GROUP_FLAG_NONE, static_cast<std::uint32_t>(ranks.size()),
                                     ranks.data()));
  if (s.big_records) {
    std::vector<std::uint64_t> members(kMembers);
    for (std::uint32_t i = 0; i < kMembers; ++i) members[i] = 0x100000 + i;
    OK(OTF2_GlobalDefWriter_WriteGroup(g, 2, 0, OTF2_GROUP_TYPE_REGIONS, OTF2_PARADIGM_USER,
                                       OTF2_GROUP_FLAG_NONE, kMembers, members.data()));
  }
  OK(OTF2_GlobalDefWriter_WriteComm(g, 0, 3, 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE));
  OK(OTF2_Archive_Close(a));
}

std::string bytes_of(const fs::path& p) {
  return test::slurp(p);
}
void rewrite(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary | std::ios::trunc)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}
// The one occurrence of `pattern` in `bytes`.
std::size_t find_once(const std::string& bytes, const std::string& pattern) {
  const std::size_t at = bytes.find(pattern);
  EXPECT_NE(at, std::string::npos);
  EXPECT_EQ(bytes.find(pattern, at + 1), std::string::npos);
  return at;
}


// Every file of the archive walked to its end-of-file record.
void expect_walks_to_the_end(const fs::path& dir) {
  otf2_check::Layout layout;
  EXPECT_EQ(otf2_check::check_anchor((dir / "traces.otf2").string(), layout), "");
  EXPECT_TRUE(layout.plain_files);
  EXPECT_EQ(otf2_check::check_records((dir / "traces.def").string(), otf2_check::FileKind::GlobalDefinitions,
                                      layout),
            "");
  for (const auto& e : fs::directory_iterator(dir / "traces")) {
    const bool events = e.path().extension() == ".evt";
    EXPECT_EQ(otf2_check::check_records(
                  e.path().string(),
                  events ? otf2_check::FileKind::Events : otf2_check::FileKind::LocalDefinitions, layout),
              "")
        << e.path();
  }
}

class Otf2Check : public test::TempDirTest {
 protected:
  // A small archive with every big record (Shape's defaults).
  fs::path small(const std::string& name) {
    const fs::path dir = dir_ / name;
    write_archive(dir, Shape{});
    return dir;
  }
};

TEST_F(Otf2Check, WellFormedArchivesOfSeveralSizesRead) {
  struct Case {
    const char* name;
    Shape shape;
    std::uint64_t events_per_rank;
  };
  Shape tiny;
  tiny.ranks = 1;
  tiny.pairs = 1;
  tiny.big_records = false;
  Shape chunked;  // events over 5 chunks of 256 KiB, definitions over 2 of 512 KiB
  chunked.ranks = 3;
  chunked.pairs = 60'000;
  chunked.definition_chunk = 2 * OTF2_CHUNK_SIZE_MIN;
  chunked.filler_strings = 60'000;
  Shape big_chunks;  // in chunks of 1 and 4 MiB (Score-P's defaults)
  big_chunks.pairs = 1000;
  big_chunks.event_chunk = 1 << 20;
  big_chunks.definition_chunk = 4 << 20;
  for (const Case& c : {Case{"tiny", tiny, 2}, Case{"small", Shape{}, 7}, Case{"chunked", chunked, 120'001},
                        Case{"big_chunks", big_chunks, 2001}}) {
    SCOPED_TRACE(c.name);
    const fs::path dir = dir_ / c.name;
    write_archive(dir, c.shape);
    if (HasFatalFailure()) return;
    expect_walks_to_the_end(dir);
    Otf2ReadStats stats;
    const Trace t = read_otf2((dir / "traces.otf2").string(), &stats);
    ASSERT_EQ(t.locations.size(), static_cast<std::size_t>(c.shape.ranks));
    EXPECT_EQ(stats.records, c.events_per_rank * static_cast<std::uint64_t>(c.shape.ranks));
    // The pairs, and the ProgramBegin's Enter of the program region when there is one.
    EXPECT_EQ(t.locations.back().events.size(),
              2 * static_cast<std::size_t>(c.shape.pairs) + (c.shape.big_records ? 1 : 0));
  }
  // More than one chunk in each kind of file.
  EXPECT_GT(fs::file_size(dir_ / "chunked" / "traces" / "0.evt"), 4 * chunked.event_chunk);
  EXPECT_GT(fs::file_size(dir_ / "chunked" / "traces.def"), chunked.definition_chunk);
  EXPECT_GT(fs::file_size(dir_ / "chunked" / "traces" / "0.def"), chunked.definition_chunk);
  // waitlab's own archives, of one and of several chunks per event file.
  for (const auto& [ranks, pairs] : {std::pair{1, 1}, std::pair{4, 30'000}}) {
    Trace t;
    const RegionId work = t.defs.region("work");
    t.defs.comms.push_back(Communicator{"MPI_COMM_WORLD", {}});
    for (Rank r = 0; r < ranks; ++r) {
      t.defs.comms[0].members.push_back(r);
      Location l;
      l.rank = r;
      for (int i = 0; i < pairs; ++i) {
        l.events.push_back(make_event(2e-6 * i, EventKind::Enter, MpiOp::None, work));
        l.events.push_back(make_event(2e-6 * i + 1e-6, EventKind::Leave, MpiOp::None, work));
      }
      t.locations.push_back(std::move(l));
    }
    const fs::path dir = dir_ / ("waitlab_" + std::to_string(ranks));
    write_otf2(t, dir.string());
    expect_walks_to_the_end(dir);
    EXPECT_EQ(read_otf2((dir / "traces.otf2").string()).locations.back().events.size(),
              2 * static_cast<std::size_t>(pairs));
  }
}

TEST_F(Otf2Check, AnchorCountsAndSizesAreCheckedBeforeOtf2OpensIt) {
  const fs::path dir = small("anchor");
  const fs::path anchor = dir / "traces.otf2";
  const std::string good = bytes_of(anchor);
  // The number of properties (4 bytes) follows the machine name, creator and description, the
  // three strings after the 46 bytes of header, magic, formats, chunk sizes and counts.
  std::size_t count_at = 46;
  for (int i = 0; i < 3; ++i) count_at = good.find('\0', count_at) + 1;
  std::uint32_t count = 0;
  std::memcpy(&count, good.data() + count_at, 4);
  ASSERT_EQ(count, 0u);  // this writer sets none
  // The fuzzer's anchor: 1,229,018,880 properties, a calloc of 19.6 GB in OTF2_AnchorFile_Load.
  std::string bad = good;
  count = 1'229'018'880;
  std::memcpy(bad.data() + count_at, &count, 4);
  rewrite(anchor, bad);
  EXPECT_EQ(test::otf2_error_of(anchor),
            anchor.string() + ": cannot open as an OTF2 archive: the anchor file announces " +
                "1229018880 properties at byte " + std::to_string(count_at) + ", more than the " +
                std::to_string(good.size() - count_at - 4) + " bytes after it can hold");
  // An event chunk size OTF2 does not allow (the fuzzer's anchor had this one too).
  bad = good;
  const std::uint64_t chunk = 0x90000040000;
  std::memcpy(bad.data() + 12, &chunk, 8);
  rewrite(anchor, bad);
  EXPECT_EQ(test::otf2_error_of(anchor),
            anchor.string() +
                ": cannot open as an OTF2 archive: the anchor file's event chunk size at byte 12 is "
                "9895604912128 bytes (OTF2 allows 262144 to 16777216)");
  // Longer than OTF2's writer can write an anchor.
  rewrite(anchor, good + std::string(OTF2_CHUNK_SIZE_MIN, 'x'));
  EXPECT_NE(test::otf2_error_of(anchor).find(": cannot open as an OTF2 archive: the anchor file has " +
                                  std::to_string(good.size() + OTF2_CHUNK_SIZE_MIN) +
                                  " bytes, more than the 262144"),
            std::string::npos)
      << test::otf2_error_of(anchor);
  // The creator without its NUL byte, the end of the file cut off.
  const std::size_t creator_at = good.find("a careful writer");
  rewrite(anchor, good.substr(0, creator_at + 5));
  EXPECT_EQ(test::otf2_error_of(anchor), anchor.string() + ": cannot open as an OTF2 archive: the creator at byte " +
                                  std::to_string(creator_at) +
                                  " has no terminating NUL byte before the end of the anchor file at byte " +
                                  std::to_string(creator_at + 5));
  rewrite(anchor, good);
  EXPECT_EQ(test::otf2_error_of(anchor), "(no error)");
}

TEST_F(Otf2Check, ABigEndianAnchorReads) {
  // OTF2 reads each chunk in the byte order its header gives: an anchor written on a
  // big-endian machine next to little-endian files reads as the original.
  const fs::path dir = small("big_endian");
  const fs::path anchor = dir / "traces.otf2";
  std::string bytes = bytes_of(anchor);
  const auto swap = [&](std::size_t at, std::size_t n) {
    std::reverse(bytes.begin() + at, bytes.begin() + at + n);
  };
  bytes[1] = 0x23;
  for (const std::size_t at : {12, 20, 30, 38})
    swap(at, 8);  // chunk sizes, numbers of locations and definitions
  std::size_t at = 46;
  for (int i = 0; i < 3; ++i) at = bytes.find('\0', at) + 1;
  swap(at, 4);       // properties (none)
  swap(at + 4, 8);   // trace identifier
  swap(at + 12, 4);  // snapshots
  swap(at + 16, 4);  // thumbnails
  rewrite(anchor, bytes);
  otf2_check::Layout layout;
  EXPECT_EQ(otf2_check::check_anchor(anchor.string(), layout), "");
  EXPECT_EQ(layout.event_chunk, OTF2_CHUNK_SIZE_MIN);
  EXPECT_EQ(read_otf2(anchor.string()).locations.size(), 2u);
}

TEST_F(Otf2Check, MappingTableIdsBeyondTheRecordAreRefused) {
  const fs::path dir = small("mapping");
  const fs::path def = dir / "traces" / "1.def";
  const std::string good = bytes_of(def);
  // The dense table is the first record (byte 18): type 5, 0xff and an 8-byte length, the
  // mapping type, then the number of ids 02 2c 01 (300) at byte 29.
  ASSERT_EQ(good.substr(18, 2), "\x05\xff");
  ASSERT_EQ(good.substr(29, 3), "\x02\x2c\x01");
  std::uint64_t length = 0;
  std::memcpy(&length, good.data() + 20, 8);
  const std::uint64_t left = length - 1 - 3 - 1;  // after the mapping type, the number of ids and the mode
  std::string bad = good;
  bad.replace(30, 2, "\xff\xff");  // 65535 ids
  rewrite(def, bad);
  EXPECT_EQ(test::otf2_error_of(dir / "traces.otf2"),
            (dir / "traces.otf2").string() +
                ": rank 1 (traces/1.def): corrupt or truncated local definitions: "
                "the MappingTable record at byte 18 announces 65535 ids, more than "
                "its " +
                std::to_string(left) + " bytes left can hold");
  // One id more than the record holds: found by walking the ids.
  bad = good;
  bad[30] = '\x2d';  // 301
  rewrite(def, bad);
  const std::string m = test::otf2_error_of(dir / "traces.otf2");
  EXPECT_NE(m.find("the MappingTable record at byte 18 announces 301 ids, but the record ends at byte " +
                   std::to_string(28 + length) + " after 300"),
            std::string::npos)
      << m;
}

TEST_F(Otf2Check, GroupMembersBeyondTheRecordAreRefused) {
  const fs::path dir = small("group");
  const fs::path def = dir / "traces.def";
  std::string bytes = bytes_of(def);
  // The Group of 3000 members: its count 02 b8 0b, the first member 03 00 00 10.
  const std::size_t at = find_once(bytes, std::string("\x02\xb8\x0b\x03\x00\x00\x10", 7));
  bytes.replace(at + 1, 2, "\xff\xff");  // 65535 members
  rewrite(def, bytes);
  const std::string m = test::otf2_error_of(dir / "traces.otf2");
  EXPECT_EQ(m.rfind((dir / "traces.otf2").string() +
                        ": traces.def: corrupt or truncated global definitions: the Group record at byte ",
                    0),
            0u)
      << m;
  EXPECT_NE(m.find(" announces 65535 members, more than its 12003 bytes left can hold"), std::string::npos)
      << m;
}

TEST_F(Otf2Check, ProgramBeginArgumentsBeyondTheRecordAreRefused) {
  const fs::path dir = small("program_begin");
  const fs::path evt = dir / "traces" / "0.evt";
  const std::string good = bytes_of(evt);
  // After the chunk header and the first timestamp (byte 18): ProgramBegin (83) at byte 27,
  // 0xff and an 8-byte length, the program name 01 01, the number of arguments 02 2c 01.
  ASSERT_EQ(good.substr(27, 2), "\x53\xff");
  ASSERT_EQ(good.substr(37, 5), std::string("\x01\x01\x02\x2c\x01", 5));
  // As the fuzzer found it: 0xff, UINT32_MAX arguments, a malloc of 17 GB in otf2_evt_reader_read.
  std::string bad = good;
  bad.replace(39, 3, "\xff\x00\x00", 3);
  rewrite(evt, bad);
  std::string m = test::otf2_error_of(dir / "traces.otf2");
  EXPECT_EQ(
      m.rfind((dir / "traces.otf2").string() +
                  ": rank 0 (traces/0.evt): corrupt or truncated events: the ProgramBegin record at byte 27 "
                  "announces 4294967295 arguments, more than its ",
              0),
      0u)
      << m;
  // One argument more than the record holds.
  bad = good;
  bad[40] = '\x2d';
  rewrite(evt, bad);
  m = test::otf2_error_of(dir / "traces.otf2");
  EXPECT_NE(
      m.find("the ProgramBegin record at byte 27 announces 301 arguments, but the record ends at byte "),
      std::string::npos)
      << m;
}

TEST_F(Otf2Check, AttributeListEntriesBeyondTheRecordAreRefused) {
  const fs::path dir = small("attributes");
  const fs::path evt = dir / "traces" / "1.evt";
  std::string bytes = bytes_of(evt);
  // 25 attributes (01 19), the first id 0x5a5a5b (03 5b 5a 5a), in the record of type 6 whose
  // length (one byte, or 0xff and eight) is before them.
  const std::size_t at = find_once(bytes, "\x01\x19\x03\x5b\x5a\x5a");
  const std::size_t record_at = bytes[at - 2] == '\x06' ? at - 2 : at - 10;
  ASSERT_EQ(bytes[record_at], '\x06');
  bytes[at + 1] = '\xff';  // 255 attributes
  rewrite(evt, bytes);
  const std::string m = test::otf2_error_of(dir / "traces.otf2");
  EXPECT_EQ(m.rfind((dir / "traces.otf2").string() +
                        ": rank 1 (traces/1.evt): corrupt or truncated events: the attribute list at byte " +
                        std::to_string(record_at) + " announces 255 attributes, more than its ",
                    0),
            0u)
      << m;
}

}  // namespace
}  // namespace waitlab::trace
