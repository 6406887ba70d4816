// Tests of the native .wlt trace file: exact round trip, byte-identical re-write, the
// header bytes, and the errors for truncated, corrupt, foreign and future files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include "analysis/trace/error.hpp"
#include "analysis/trace/wlt.hpp"

namespace waitlab::trace {
namespace {

// A small but complete trace: definitions, attributes, every event kind, ground truth,
// and doubles whose bits must survive (denormal, -0, 0.1, infinity).
Trace sample() {
  Trace t;
  const RegionId main = t.defs.region("main");
  const RegionId compute = t.defs.region("compute");
  const RegionId init = t.defs.mpi_region(MpiOp::Init);
  const RegionId send = t.defs.mpi_region(MpiOp::Send);
  const RegionId recv = t.defs.mpi_region(MpiOp::Recv);
  const RegionId allreduce = t.defs.mpi_region(MpiOp::Allreduce);
  t.defs.comms.push_back(Communicator{"MPI_COMM_WORLD", {0, 1}});
  t.defs.comms.push_back(Communicator{"row 0 \xc3\xa9", {1}});
  t.attributes = {{"scenario", "demo"}, {"seed", "42"}, {"empty", ""}};
  t.has_truth = true;
  for (Rank r = 0; r < 2; ++r) {
    Location l;
    l.rank = r;
    l.events.push_back(make_event(0, EventKind::Enter, MpiOp::Init, init));
    l.events.push_back(make_event(1e-6, EventKind::Leave, MpiOp::Init, init));
    l.events.push_back(make_event(1e-6, EventKind::Enter, MpiOp::None, main));
    l.events.push_back(make_event(1e-6, EventKind::Enter, MpiOp::None, compute));
    l.events.push_back(make_event(0.1 + r, EventKind::Leave, MpiOp::None, compute));
    if (r == 0) {
      l.events.push_back(make_event(0.1, EventKind::Enter, MpiOp::Send, send));
      l.events.push_back(make_event(0.1, EventKind::Send, MpiOp::Send, kCommWorld, 1, 7, 8));
      l.events.push_back(make_event(0.1000042, EventKind::Leave, MpiOp::Send, send));
    } else {
      l.events.push_back(make_event(1.1, EventKind::Enter, MpiOp::Recv, recv));
      l.events.push_back(make_event(1.1000001, EventKind::Recv, MpiOp::Recv, kCommWorld, 0, 7, 8));
      l.events.push_back(make_event(1.1000001, EventKind::Leave, MpiOp::Recv, recv));
    }
    l.events.push_back(make_event(2, EventKind::IsendStart, MpiOp::Isend, 0, 1 - r, -5, 1u << 20, 3));
    l.events.push_back(make_event(2, EventKind::IsendComplete, MpiOp::Wait, 0, kNoRank, 0, 0, 3));
    l.events.push_back(make_event(2, EventKind::IrecvPost, MpiOp::Irecv, 0, 1 - r, 9, 0, 4));
    l.events.push_back(make_event(2.5, EventKind::IrecvComplete, MpiOp::Wait, 0, 1 - r, 9, 16, 4));
    l.events.push_back(make_event(3, EventKind::Enter, MpiOp::Allreduce, allreduce));
    l.events.push_back(make_event(3, EventKind::CollBegin, MpiOp::Allreduce, kCommWorld));
    l.events.push_back(make_event(std::numeric_limits<double>::denorm_min(), EventKind::CollEnd, MpiOp::Allreduce,
                          kCommWorld, kNoRank, 0, std::numeric_limits<std::uint64_t>::max(), 8));
    l.events.push_back(make_event(-0.0, EventKind::Leave, MpiOp::Allreduce, allreduce));
    l.events.back().flags = 0xBEEF;  // kept as written, even if unused
    ComputeTruth c;
    c.start = 1e-6;
    c.end = 0.1 + r;
    c.nominal = 0.1;
    c.injected = {r * 1.0, 1e-300, std::numeric_limits<double>::infinity()};
    c.region = compute;
    c.iteration = r == 0 ? -1 : 2147483647;
    l.truth.push_back(c);
    t.locations.push_back(std::move(l));
  }
  return t;
}

std::string to_bytes(const Trace& t) {
  std::ostringstream out(std::ios::binary);
  write_wlt(t, out);
  return out.str();
}

Trace from_bytes(const std::string& bytes, const std::string& name = "t.wlt") {
  std::istringstream in(bytes, std::ios::binary);
  return read_wlt(in, name);
}

std::string error_of(const std::string& bytes) {
  try {
    from_bytes(bytes);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

// A trace with no definitions: its layout is easy to compute by hand.
//   header 24 | regions u64 | comms u64 | attrs u64 | ranks u64 = 56 bytes;
//   rank 0: i32 rank (56..59), u64 event count (60..67), events from byte 68.
Trace bare(int events) {
  Trace t;
  Location l;
  l.rank = 0;
  for (int i = 0; i < events; ++i) l.events.push_back(make_event(i, EventKind::Enter));
  t.locations.push_back(l);
  return t;
}

TEST(Wlt, RoundTripIsExact) {
  const Trace t = sample();
  const Trace back = from_bytes(to_bytes(t));
  EXPECT_EQ(back, t);
  // operator== on doubles would accept -0 == 0; the bits must survive too.
  EXPECT_TRUE(std::signbit(back.locations[0].events.back().time));
  EXPECT_EQ(back.locations[1].truth[0].injected[1], 1e-300);
  EXPECT_EQ(back.locations[0].events.back().flags, 0xBEEF);
}

TEST(Wlt, RewriteIsByteIdentical) {
  const std::string first = to_bytes(sample());
  EXPECT_EQ(to_bytes(from_bytes(first)), first);
}

TEST(Wlt, EmptyTraceRoundTrips) {
  const Trace empty;
  const std::string bytes = to_bytes(empty);
  EXPECT_EQ(bytes.size(), 24u + 4 * 8 + 8);  // header, four zero counts, end marker
  EXPECT_EQ(from_bytes(bytes), empty);
}

TEST(Wlt, HeaderLayout) {
  const std::string b = to_bytes(sample());
  EXPECT_EQ(b.substr(0, 8), std::string("WLTRACE\0", 8));
  EXPECT_EQ(b.substr(8, 4), std::string("\x01\x00\x00\x00", 4));   // version 1, little-endian
  EXPECT_EQ(b.substr(12, 4), std::string("\x04\x03\x02\x01", 4));  // byte-order mark 0x01020304
  EXPECT_EQ(b.substr(16, 4), std::string("\x01\x00\x00\x00", 4));  // flags: has truth
  EXPECT_EQ(b.substr(b.size() - 8), std::string("WLTEND\0\0", 8));
}

TEST(Wlt, EventRecordsAre40Bytes) {
  EXPECT_EQ(to_bytes(bare(3)).size() - to_bytes(bare(0)).size(), 3u * 40);
  // Event 1 of bare(): time 1.0 at byte 68 + 40.
  const std::string b = to_bytes(bare(2));
  EXPECT_EQ(b.substr(108, 8), std::string("\x00\x00\x00\x00\x00\x00\xf0\x3f", 8));
}

TEST(Wlt, TruncatedInsideEventArrayNamesRankAndEvent) {
  const std::string b = to_bytes(bare(4));
  ASSERT_EQ(b.size(), 68u + 4 * 40 + 8 + 8);  // events, truth count, end marker
  EXPECT_EQ(error_of(b.substr(0, 68 + 2 * 40 + 17)), "t.wlt: truncated at byte 165 (rank 0, event 2)");
  EXPECT_EQ(error_of(b.substr(0, 68)), "t.wlt: truncated at byte 68 (rank 0, event 0)");
  EXPECT_EQ(error_of(b.substr(0, 68 + 4 * 40 - 1)), "t.wlt: truncated at byte 227 (rank 0, event 3)");
}

TEST(Wlt, TruncatedElsewhere) {
  const std::string b = to_bytes(bare(4));
  EXPECT_EQ(error_of(b.substr(0, 0)), "t.wlt: truncated at byte 0");
  EXPECT_EQ(error_of(b.substr(0, 5)), "t.wlt: truncated at byte 5");
  EXPECT_EQ(error_of(b.substr(0, 30)), "t.wlt: truncated at byte 30");
  EXPECT_EQ(error_of(b.substr(0, 62)), "t.wlt: truncated at byte 62 (rank 0)");  // in the event count
  EXPECT_EQ(error_of(b.substr(0, 68 + 160 + 3)), "t.wlt: truncated at byte 231 (rank 0)");  // truth count
  EXPECT_EQ(error_of(b.substr(0, b.size() - 1)), "t.wlt: truncated at byte 243");           // end marker
}

TEST(Wlt, EveryTruncationIsAnInputError) {
  const std::string b = to_bytes(sample());
  for (std::size_t n = 0; n < b.size(); n += 7) {
    const std::string msg = error_of(b.substr(0, n));
    EXPECT_NE(msg.find("t.wlt: truncated at byte " + std::to_string(n)), std::string::npos) << msg;
  }
}

TEST(Wlt, TruthRecordTruncation) {
  Trace t = bare(0);
  t.has_truth = true;
  t.locations[0].truth.resize(2);
  const std::string b = to_bytes(t);
  // rank 0: events count at 60, truth count at 68, truth records from 76 (56 bytes each).
  EXPECT_EQ(error_of(b.substr(0, 76 + 56 + 10)), "t.wlt: truncated at byte 142 (rank 0, truth record 1)");
}

TEST(Wlt, BadMagic) {
  std::string b = to_bytes(sample());
  b[0] = 'X';
  EXPECT_EQ(error_of(b), "t.wlt: not a waitlab trace (bad magic; expected \"WLTRACE\")");
  EXPECT_EQ(error_of("# a text file\n"), "t.wlt: not a waitlab trace (bad magic; expected \"WLTRACE\")");
}

TEST(Wlt, FutureVersion) {
  std::string b = to_bytes(sample());
  b[8] = 2;
  EXPECT_EQ(error_of(b),
            "t.wlt: .wlt format version 2 is newer than this waitlab reads (version 1); upgrade waitlab");
}

TEST(Wlt, ByteOrderMark) {
  std::string b = to_bytes(sample());
  b[12] = 0x01, b[13] = 0x02, b[14] = 0x03, b[15] = 0x04;  // as a big-endian writer would
  EXPECT_EQ(error_of(b),
            "t.wlt: corrupt .wlt file: byte-order mark is 0x04030201, expected 0x01020304 (little-endian)");
}

TEST(Wlt, CorruptEventKind) {
  std::string b = to_bytes(bare(3));
  b[68 + 40 + 24] = 99;  // kind byte of event 1
  EXPECT_EQ(error_of(b),
            "t.wlt: corrupt .wlt file at byte 108: rank 0, event 1 has unknown kind 99 or MPI op 0");
}

TEST(Wlt, HugeCountIsTruncationNotAllocation) {
  std::string b = to_bytes(bare(1));
  b[67] = 0x10;  // event count 2^60 + 1
  EXPECT_EQ(error_of(b), "t.wlt: truncated at byte " + std::to_string(b.size()) + " (rank 0, event 1)");
}

TEST(Wlt, TrailingGarbage) {
  EXPECT_EQ(error_of(to_bytes(bare(1)) + "x"),
            "t.wlt: corrupt .wlt file at byte 124: unexpected data after the end marker");
}

// The smallest trace whose references all resolve; its layout, by hand:
//   header 0..23 | region count 24..31 | region "r": name 32..36, op 37, file 38..41 |
//   comm count 42..49 | comm "W": name 50..54, member count 55..62, member 63..66 |
//   attr count 67..74 | rank count 75..82 | rank 0: i32 rank 83..86, event count 87..94,
//   events 95..174 (event 1 at 135), truth count 175..182, truth record 183..238 | end.
Trace tiny() {
  Trace t;
  t.defs.region("r");
  t.defs.comms.push_back(Communicator{"W", {0}});
  t.has_truth = true;
  Location l;
  l.rank = 0;
  l.events = {make_event(0, EventKind::Enter, MpiOp::None, 0), make_event(1, EventKind::Leave, MpiOp::None, 0)};
  ComputeTruth c;
  c.end = 1;
  c.nominal = 1;
  l.truth.push_back(c);
  t.locations.push_back(l);
  return t;
}

TEST(WltReferences, TinyTraceIsValidAndLaidOutAsDocumented) {
  const std::string b = to_bytes(tiny());
  ASSERT_EQ(b.size(), 239u + 8);
  EXPECT_EQ(b.substr(32, 5), std::string("\x01\x00\x00\x00r", 5));
  EXPECT_EQ(b.substr(50, 5), std::string("\x01\x00\x00\x00W", 5));
  EXPECT_EQ(b.substr(135, 8), std::string("\x00\x00\x00\x00\x00\x00\xf0\x3f", 8));  // event 1 at t = 1
  EXPECT_EQ(from_bytes(b), tiny());
}

TEST(WltReferences, LocationMustBeItsRank) {
  Trace t = tiny();
  t.locations[0].rank = 3;
  EXPECT_EQ(error_of(to_bytes(t)),
            "t.wlt: corrupt .wlt file at byte 83: location 0 is rank 3 (location i must be rank i)");
  // Two ranks in the wrong order: the first location that is not its rank is named.
  Trace two = sample();
  std::swap(two.locations[0].rank, two.locations[1].rank);
  const std::string msg = error_of(to_bytes(two));
  EXPECT_NE(msg.find(": location 0 is rank 1 (location i must be rank i)"), std::string::npos) << msg;
}

TEST(WltReferences, EnterAndLeaveNeedADefinedRegion) {
  Trace t = tiny();
  t.locations[0].events[1].ref = 1;
  EXPECT_EQ(error_of(to_bytes(t)),
            "t.wlt: corrupt .wlt file at byte 135: rank 0, event 1 (Leave) refers to region 1, but the trace "
            "defines 1 region");
  t.locations[0].events[1].ref = 0;
  t.locations[0].events[0].ref = 0xFFFFFFFFu;
  EXPECT_EQ(
      error_of(to_bytes(t)),
      "t.wlt: corrupt .wlt file at byte 95: rank 0, event 0 (Enter) refers to region 4294967295, but the "
      "trace defines 1 region");
}

TEST(WltReferences, CommunicationEventsNeedADefinedCommunicator) {
  for (EventKind k : {EventKind::Send, EventKind::Recv, EventKind::IsendStart, EventKind::IrecvComplete,
                      EventKind::CollBegin, EventKind::CollEnd}) {
    Trace t = tiny();
    t.locations[0].events[1] = make_event(1, k, MpiOp::Send, 1, 0);
    EXPECT_EQ(error_of(to_bytes(t)), "t.wlt: corrupt .wlt file at byte 135: rank 0, event 1 (" +
                                         std::string(event_kind_name(k)) +
                                         ") refers to communicator 1, but the trace defines 1 communicator");
    t.locations[0].events[1].ref = 0;
    EXPECT_EQ(from_bytes(to_bytes(t)), t) << event_kind_name(k);
  }
  // Request-completion events are identified by their request id; ref is free.
  for (EventKind k : {EventKind::IsendComplete, EventKind::IrecvPost}) {
    Trace t = tiny();
    t.locations[0].events[1] = make_event(1, k, MpiOp::Wait, 77, kNoRank, 0, 0, 5);
    EXPECT_EQ(from_bytes(to_bytes(t)), t) << event_kind_name(k);
  }
}

TEST(WltReferences, TruthRecordNeedsADefinedRegion) {
  Trace t = tiny();
  t.locations[0].truth[0].region = 5;
  EXPECT_EQ(error_of(to_bytes(t)),
            "t.wlt: corrupt .wlt file at byte 183: rank 0, truth record 0 refers to region 5, but the trace "
            "defines 1 region");
}

TEST(WltReferences, RanksNeedCommWorld) {
  Trace t = tiny();
  t.defs.comms.clear();
  EXPECT_EQ(error_of(to_bytes(t)),
            "t.wlt: corrupt .wlt file at byte 42: 1 rank but no communicator (communicator 0 must be "
            "MPI_COMM_WORLD)");
  t.locations.clear();  // no ranks, nothing to refer to: valid
  EXPECT_EQ(from_bytes(to_bytes(t)), t);
}

TEST(WltReferences, TruthRecordsNeedTheTruthFlag) {
  Trace t = tiny();
  t.has_truth = false;
  EXPECT_EQ(
      error_of(to_bytes(t)),
      "t.wlt: corrupt .wlt file at byte 175: rank 0 has 1 truth record but the header says the trace has "
      "no ground truth");
  t.locations[0].truth.clear();  // a measured trace: no flag, no records
  EXPECT_EQ(from_bytes(to_bytes(t)), t);
}

TEST(WltReferences, StructureIsCheckedBeforeReferences) {
  // A file that is both truncated and wrong in its references reports the truncation.
  Trace t = tiny();
  t.locations[0].events[0].ref = 9;
  const std::string b = to_bytes(t);
  EXPECT_EQ(error_of(b.substr(0, 200)), "t.wlt: truncated at byte 200 (rank 0, truth record 0)");
}

TEST(Wlt, FileWriteIsAtomicAndReadable) {
  const auto dir = std::filesystem::temp_directory_path() / ("wlt_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "t.wlt").string();
  write_wlt(sample(), path);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  EXPECT_EQ(read_wlt(path), sample());
  std::filesystem::remove_all(dir);
  try {
    read_wlt(path);
    FAIL() << "reading a missing file must fail";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path + ": cannot open", 0), 0u) << e.what();
  }
  EXPECT_THROW(write_wlt(sample(), (dir / "no" / "such" / "t.wlt").string()), InputError);
}

}  // namespace
}  // namespace waitlab::trace
