// Tests of the native .wlt trace file: exact round trip, byte-identical re-write, the
// header bytes, the checksums (every single-bit flip is an error), the value checks, older
// versions, and the errors for truncated, corrupt, foreign and future files.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include "util/error.hpp"
#include "analysis/trace/wlt.hpp"
#include "tests/trace/wlt_legacy.hpp"

namespace waitlab::trace {
namespace {

// A small but complete trace: definitions, attributes, every event kind, ground truth,
// and doubles whose bits must survive (-0, denormal, 0.1, 1e-300).
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
    l.events.push_back(make_event(-0.0, EventKind::Enter, MpiOp::Init, init));
    l.events.push_back(make_event(std::numeric_limits<double>::denorm_min(), EventKind::Leave, MpiOp::Init, init));
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
    l.events.push_back(make_event(3.25, EventKind::CollEnd, MpiOp::Allreduce, kCommWorld, kNoRank, 0,
                                  std::numeric_limits<std::uint64_t>::max(), 8));
    l.events.push_back(make_event(3.5, EventKind::Leave, MpiOp::Allreduce, allreduce));
    l.events.back().flags = 0xBEEF;  // kept as written, even if unused
    ComputeTruth c;
    c.start = 1e-6;
    c.end = 0.1 + r;
    c.nominal = 0.1;
    c.injected = {r * 1.0, 1e-300, 0.5};
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
//   header 24 (its checksum 20..23) | regions u64 24..31 | comms u64 32..39 | attrs u64 40..47 |
//   checksum 48..51 | ranks u64 52..59; rank 0: i32 rank (60..63), u64 event count (64..71),
//   events from byte 72, then (with events) the block's checksum.
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
  EXPECT_TRUE(std::signbit(back.locations[0].events.front().time));
  EXPECT_EQ(back.locations[0].events[1].time, std::numeric_limits<double>::denorm_min());
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
  // header, five zero counts (regions, comms, attributes, ranks, threads), run section, two
  // checksums (after the definitions and after the run section), end marker
  EXPECT_EQ(bytes.size(), 24u + 5 * 8 + 24 + 2 * 4 + 8);
  EXPECT_EQ(from_bytes(bytes), empty);
}

TEST(Wlt, HeaderLayout) {
  const std::string b = to_bytes(sample());
  EXPECT_EQ(b.substr(0, 8), std::string("WLTRACE\0", 8));
  EXPECT_EQ(b.substr(8, 4), std::string("\x04\x00\x00\x00", 4));   // version 4, little-endian
  EXPECT_EQ(b.substr(12, 4), std::string("\x04\x03\x02\x01", 4));  // byte-order mark 0x01020304
  EXPECT_EQ(b.substr(16, 4), std::string("\x01\x00\x00\x00", 4));  // flags: has truth
  EXPECT_EQ(b.substr(b.size() - 8), std::string("WLTEND\0\0", 8));
}

TEST(Wlt, EventRecordsAre40Bytes) {
  // 3 events: 3 records and the checksum of their block.
  EXPECT_EQ(to_bytes(bare(3)).size() - to_bytes(bare(0)).size(), 3u * 40 + 4);
  // Event 1 of bare(): time 1.0 at byte 72 + 40.
  const std::string b = to_bytes(bare(2));
  EXPECT_EQ(b.substr(112, 8), std::string("\x00\x00\x00\x00\x00\x00\xf0\x3f", 8));
}

TEST(Wlt, TruncatedInsideEventArrayNamesRankAndEvent) {
  const std::string b = to_bytes(bare(4));
  // events and their block's checksum; truth, state, counter and OpenMP counts; the location's
  // checksum; thread count; run section and its checksum; end marker
  ASSERT_EQ(b.size(), 72u + 4 * 40 + 4 + 4 * 8 + 4 + 8 + 24 + 4 + 8);
  EXPECT_EQ(error_of(b.substr(0, 72 + 2 * 40 + 17)), "t.wlt: truncated at byte 169 (rank 0, event 2)");
  EXPECT_EQ(error_of(b.substr(0, 72)), "t.wlt: truncated at byte 72 (rank 0, event 0)");
  EXPECT_EQ(error_of(b.substr(0, 72 + 4 * 40 - 1)), "t.wlt: truncated at byte 231 (rank 0, event 3)");
  EXPECT_EQ(error_of(b.substr(0, 72 + 4 * 40 + 2)), "t.wlt: truncated at byte 234 (rank 0)");  // block checksum
}

TEST(Wlt, TruncatedElsewhere) {
  const std::string b = to_bytes(bare(4));
  EXPECT_EQ(error_of(b.substr(0, 0)), "t.wlt: truncated at byte 0");
  EXPECT_EQ(error_of(b.substr(0, 5)), "t.wlt: truncated at byte 5");
  EXPECT_EQ(error_of(b.substr(0, 30)), "t.wlt: truncated at byte 30");
  EXPECT_EQ(error_of(b.substr(0, 22)), "t.wlt: truncated at byte 22");  // the header's checksum
  EXPECT_EQ(error_of(b.substr(0, 50)), "t.wlt: truncated at byte 50");  // the definitions' checksum
  EXPECT_EQ(error_of(b.substr(0, 66)), "t.wlt: truncated at byte 66 (rank 0)");  // in the event count
  EXPECT_EQ(error_of(b.substr(0, 72 + 164 + 3)), "t.wlt: truncated at byte 239 (rank 0)");  // truth count
  EXPECT_EQ(error_of(b.substr(0, 72 + 164 + 24 + 1)), "t.wlt: truncated at byte 261 (rank 0)");  // OpenMP count
  EXPECT_EQ(error_of(b.substr(0, 72 + 164 + 32 + 1)), "t.wlt: truncated at byte 269 (rank 0)");  // its checksum
  EXPECT_EQ(error_of(b.substr(0, b.size() - 1)), "t.wlt: truncated at byte 315");           // end marker
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
  // rank 0: events count at 64, truth count at 72, truth records from 80 (56 bytes each).
  EXPECT_EQ(error_of(b.substr(0, 80 + 56 + 10)), "t.wlt: truncated at byte 146 (rank 0, truth record 1)");
}

TEST(Wlt, BadMagic) {
  std::string b = to_bytes(sample());
  b[0] = 'X';
  EXPECT_EQ(error_of(b), "t.wlt: not a waitlab trace (bad magic; expected \"WLTRACE\")");
  EXPECT_EQ(error_of("# a text file\n"), "t.wlt: not a waitlab trace (bad magic; expected \"WLTRACE\")");
}

TEST(Wlt, FutureVersion) {
  std::string b = to_bytes(sample());
  b[8] = 5;
  EXPECT_EQ(error_of(b),
            "t.wlt: .wlt format version 5 is newer than this waitlab reads (version 4); upgrade waitlab");
}

TEST(Wlt, ByteOrderMark) {
  std::string b = to_bytes(sample());
  b[12] = 0x01, b[13] = 0x02, b[14] = 0x03, b[15] = 0x04;  // as a big-endian writer would
  EXPECT_EQ(error_of(b),
            "t.wlt: corrupt .wlt file: byte-order mark is 0x04030201, expected 0x01020304 (little-endian)");
}

TEST(Wlt, HugeCountIsTruncationNotAllocation) {
  std::string b = to_bytes(bare(1));
  b[71] = 0x10;  // event count 2^60 + 1: what follows reads as events until the file ends
  EXPECT_EQ(error_of(b), "t.wlt: truncated at byte " + std::to_string(b.size()) + " (rank 0, event " +
                             std::to_string((b.size() - 72) / 40) + ")");
}

TEST(Wlt, TrailingGarbage) {
  EXPECT_EQ(error_of(to_bytes(bare(1)) + "x"),
            "t.wlt: corrupt .wlt file at byte 196: unexpected data after the end marker");
}

// The smallest trace whose references all resolve; its layout, by hand:
//   header 0..23 (checksum 20..23) | region count 24..31 | region "r": name 32..36, op 37,
//   file 38..41 | comm count 42..49 | comm "W": name 50..54, member count 55..62, member
//   63..66 | attr count 67..74 | checksum 75..78 | rank count 79..86 | rank 0: i32 rank
//   87..90, event count 91..98, events 99..178 (event 1 at 139), checksum 179..182, truth
//   count 183..190, truth record 191..246, checksum 247..250, state count 251..258, counter
//   count 259..266, OpenMP count 267..274, checksum 275..278 | thread count 279..286 | run
//   287..310 | checksum 311..314 | end 315..322.
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
  ASSERT_EQ(b.size(), 323u);
  EXPECT_EQ(b.substr(32, 5), std::string("\x01\x00\x00\x00r", 5));
  EXPECT_EQ(b.substr(50, 5), std::string("\x01\x00\x00\x00W", 5));
  EXPECT_EQ(b.substr(139, 8), std::string("\x00\x00\x00\x00\x00\x00\xf0\x3f", 8));  // event 1 at t = 1
  EXPECT_EQ(from_bytes(b), tiny());
}

TEST(WltReferences, LocationMustBeItsRank) {
  Trace t = tiny();
  t.locations[0].rank = 3;
  EXPECT_EQ(error_of(to_bytes(t)),
            "t.wlt: corrupt .wlt file at byte 87: location 0 is rank 3 (location i must be rank i)");
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
            "t.wlt: corrupt .wlt file at byte 139: rank 0, event 1 (Leave) refers to region 1, but the trace "
            "defines 1 region");
  t.locations[0].events[1].ref = 0;
  t.locations[0].events[0].ref = 0xFFFFFFFFu;
  EXPECT_EQ(
      error_of(to_bytes(t)),
      "t.wlt: corrupt .wlt file at byte 99: rank 0, event 0 (Enter) refers to region 4294967295, but the "
      "trace defines 1 region");
}

TEST(WltReferences, CommunicationEventsNeedADefinedCommunicator) {
  for (EventKind k : {EventKind::Send, EventKind::Recv, EventKind::IsendStart, EventKind::IrecvComplete,
                      EventKind::CollBegin, EventKind::CollEnd}) {
    Trace t = tiny();
    t.locations[0].events[1] = make_event(1, k, MpiOp::Send, 1, 0);
    EXPECT_EQ(error_of(to_bytes(t)), "t.wlt: corrupt .wlt file at byte 139: rank 0, event 1 (" +
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
            "t.wlt: corrupt .wlt file at byte 191: rank 0, truth record 0 refers to region 5, but the trace "
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
      "t.wlt: corrupt .wlt file at byte 183: rank 0 has 1 truth record but the header says the trace has "
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


// ---- version 2: threads, states, counter samples, origin, declared span ----

// sample() as a measured hybrid trace: worker threads of both ranks, not-useful states,
// counter samples (values up to 2^64 - 1), origin Extrae, a declared span, both counters.
Trace measured() {
  Trace t = sample();
  t.has_truth = false;
  for (auto& l : t.locations) l.truth.clear();
  t.origin = Origin::Extrae;
  t.span_begin = -0.25;
  t.span_end = 4.5;
  t.counters = kHasInstructions | kHasCycles;
  t.locations[0].states = {{0.5, 0.75, 12}, {0.75, 1.0, 14}, {2.0, 2.0, kStateOverhead}};
  t.locations[0].counters = {{1e-6, 100, 200}, {0.1, std::numeric_limits<std::uint64_t>::max(), 1}, {0.1, 0, 0}};
  const RegionId compute = static_cast<RegionId>(t.defs.find_region("compute"));
  for (Rank r : {0, 1})
    for (std::int32_t k : {1, 3}) {
      Location l;
      l.rank = r;
      l.thread = k;
      l.events = {make_event(0.5, EventKind::Enter, MpiOp::None, compute),
                  make_event(0.9 + k, EventKind::Leave, MpiOp::None, compute)};
      l.states = {{0, 0.5, 2}};
      l.counters = {{0.9 + k, static_cast<std::uint64_t>(1000 * k), static_cast<std::uint64_t>(2000 * k + r)}};
      t.threads.push_back(std::move(l));
    }
  return t;
}

TEST(WltV2, EveryNewFieldRoundTrips) {
  const Trace t = measured();
  const std::string b = to_bytes(t);
  const Trace back = from_bytes(b);
  EXPECT_EQ(back, t);
  EXPECT_EQ(back.origin, Origin::Extrae);
  EXPECT_EQ(back.span_begin, -0.25);
  EXPECT_EQ(back.span_end, 4.5);
  EXPECT_EQ(back.counters, kHasInstructions | kHasCycles);
  ASSERT_EQ(back.threads.size(), 4u);
  EXPECT_EQ(back.threads[3].rank, 1);
  EXPECT_EQ(back.threads[3].thread, 3);
  EXPECT_EQ(back.threads[3].counters[0].cycles, 6001u);
  EXPECT_EQ(back.locations[0].counters[1].instructions, std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(to_bytes(back), b);  // byte-identical rewrite
  // Each kind of default is kept too: a simulated trace without a declared span.
  Trace plain = sample();
  plain.origin = Origin::Unknown;
  EXPECT_EQ(from_bytes(to_bytes(plain)), plain);
  EXPECT_FALSE(from_bytes(to_bytes(sample())).has_declared_span());
}

TEST(WltV2, RecordSizes) {
  Trace t = bare(0);
  const std::size_t base = to_bytes(t).size();
  t.locations[0].states.resize(3);
  EXPECT_EQ(to_bytes(t).size() - base, 3u * 20 + 4);  // and the block's checksum
  t.locations[0].states.clear();
  t.locations[0].counters.resize(2);
  EXPECT_EQ(to_bytes(t).size() - base, 2u * 24 + 4);
  t.locations[0].counters.clear();
  t.defs.comms.push_back(Communicator{"W", {0}});
  const std::size_t with_comm = to_bytes(t).size();
  Location th;
  th.rank = 0;
  th.thread = 1;
  t.threads.push_back(th);
  // i32 rank, i32 thread, five zero counts and the location's checksum.
  EXPECT_EQ(to_bytes(t).size() - with_comm, 8u + 5 * 8 + 4);
}

TEST(WltV2, Version1FilesStillRead) {
  const Trace t = sample();
  const std::string v1 = Legacy(1).bytes(t);
  EXPECT_EQ(v1.substr(8, 4), std::string("\x01\x00\x00\x00", 4));
  const Trace back = from_bytes(v1);
  EXPECT_EQ(back, t);  // every version-1 field, and the defaults for the rest
  EXPECT_TRUE(back.threads.empty());
  EXPECT_EQ(back.origin, Origin::Simulated);
  EXPECT_FALSE(back.has_declared_span());
  EXPECT_EQ(back.counters, 0);
  // Rewritten, it is a version-4 file of the same trace.
  EXPECT_EQ(to_bytes(back), to_bytes(t));
  // A version-1 file ends after its ranks: a version-2 reader does not look for threads there.
  EXPECT_EQ(error_of(v1.substr(0, v1.size() - 1)), "t.wlt: truncated at byte " + std::to_string(v1.size() - 1));
  EXPECT_EQ(error_of(Legacy(1).bytes(tiny())), "(no error)");
}

TEST(WltV2, Version2FilesStillRead) {
  const Trace t = measured();
  const std::string v2 = Legacy(2).bytes(t);
  EXPECT_EQ(v2.substr(8, 4), std::string("\x02\x00\x00\x00", 4));
  EXPECT_EQ(from_bytes(v2), t);  // every field, threads, states and samples included
  EXPECT_EQ(to_bytes(from_bytes(v2)), to_bytes(t));
  EXPECT_EQ(error_of(v2.substr(0, v2.size() - 1)), "t.wlt: truncated at byte " + std::to_string(v2.size() - 1));
  // Without checksums, the value checks still hold: a NaN time is refused.
  Trace bad = tiny();
  bad.locations[0].events[1].time = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(error_of(Legacy(2).bytes(bad)),
            "t.wlt: corrupt .wlt file at byte 135: rank 0, event 1 (Leave) has a time that is not finite: nan");
  EXPECT_EQ(error_of(Legacy(1).bytes(bad)),
            "t.wlt: corrupt .wlt file at byte 135: rank 0, event 1 (Leave) has a time that is not finite: nan");
}

TEST(WltV2, OlderVersionsNeedTheirReservedFieldZero) {
  // A version-3 file whose version bits flipped to 2 or 1 holds its header checksum where the
  // older versions have 0.
  std::string b = to_bytes(tiny());
  for (char v : {'\x02', '\x01'}) {
    b[8] = v;
    const std::string msg = error_of(b);
    EXPECT_EQ(msg.rfind("t.wlt: corrupt .wlt file at byte 20: the reserved header field of a version " +
                            std::to_string(static_cast<int>(v)) + " file is 0x",
                        0),
              0u)
        << msg;
    EXPECT_EQ(msg.substr(msg.size() - 7), ", not 0") << msg;
  }
}

// tiny() with one thread of rank 0; the thread's record starts at byte 287 (after the thread
// count at 279): i32 rank 287, i32 thread 291, event count 295, truth count 303, state count
// 311, state 0 at 319 (its code at 335), checksum 339, counter count 343, counter 0 at 351
// (instructions at 359), checksum 375, OpenMP count 379, the location's checksum 387; run
// section at 391.
Trace tiny_thread() {
  Trace t = tiny();
  Location l;
  l.rank = 0;
  l.thread = 1;
  l.states = {{0, 1, 2}};
  l.counters = {{1, 5, 6}};
  t.threads.push_back(l);
  return t;
}

TEST(WltV2, ThreadLayoutIsAsDocumented) {
  const std::string b = to_bytes(tiny_thread());
  EXPECT_EQ(b.substr(279, 8), std::string("\x01\0\0\0\0\0\0\0", 8));  // one thread
  EXPECT_EQ(b.substr(291, 4), std::string("\x01\0\0\0", 4));          // thread 1
  EXPECT_EQ(b.substr(335, 4), std::string("\x02\0\0\0", 4));          // state 2
  EXPECT_EQ(b.substr(359, 8), std::string("\x05\0\0\0\0\0\0\0", 8));  // 5 instructions
  EXPECT_EQ(from_bytes(b), tiny_thread());
}

TEST(WltV2, ThreadsMustBelongToARankAndBeOrdered) {
  Trace t = tiny_thread();
  t.threads[0].rank = 1;
  EXPECT_EQ(error_of(to_bytes(t)),
            "t.wlt: corrupt .wlt file at byte 287: thread location 0 belongs to rank 1, but the trace has 1 rank");
  t.threads[0].rank = -1;
  EXPECT_NE(error_of(to_bytes(t)).find("belongs to rank -1"), std::string::npos);
  t = tiny_thread();
  t.threads[0].thread = 0;
  EXPECT_EQ(error_of(to_bytes(t)),
            "t.wlt: corrupt .wlt file at byte 291: thread location 0 (rank 0) has thread number 0 (worker "
            "threads are numbered from 1)");
  t = tiny_thread();
  t.threads.push_back(t.threads[0]);  // rank 0 thread 1 twice
  const std::string msg = error_of(to_bytes(t));
  EXPECT_NE(msg.find(": thread location 1 (rank 0 thread 1) does not come after rank 0 thread 1"), std::string::npos)
      << msg;
  t = tiny_thread();
  t.threads[0].events = {make_event(0, EventKind::Enter, MpiOp::None, 7)};
  EXPECT_EQ(error_of(to_bytes(t)),
            "t.wlt: corrupt .wlt file at byte 303: rank 0 thread 1, event 0 (Enter) refers to region 7, but the "
            "trace defines 1 region");
}

TEST(WltV2, StatesAndSamplesMustBeOrderedAndFinite) {
  Trace t = tiny_thread();
  t.threads[0].states = {{0, 1, 2}, {0.5, 2, 2}};
  EXPECT_EQ(error_of(to_bytes(t)),
            "t.wlt: corrupt .wlt file at byte 339: rank 0 thread 1, state interval 1 [0.5, 2] begins before the "
            "previous one ends at 1 (intervals are ordered and do not overlap)");
  t.threads[0].states = {{2, 1, 2}};
  EXPECT_EQ(error_of(to_bytes(t)),
            "t.wlt: corrupt .wlt file at byte 319: rank 0 thread 1, state interval 0 [2, 1] ends before it begins");
  t.threads[0].states = {{0, std::numeric_limits<double>::quiet_NaN(), 2}};
  EXPECT_NE(error_of(to_bytes(t)).find("state interval 0 [0, nan] has a time that is not finite"), std::string::npos);
  t = tiny();
  t.locations[0].counters = {{2, 1, 1}, {1, 1, 1}};
  EXPECT_EQ(error_of(to_bytes(t)),
            "t.wlt: corrupt .wlt file at byte 291: rank 0, counter sample 1 at 1 comes before the previous one at 2 "
            "(samples are ordered by time)");
  t.locations[0].counters = {{std::numeric_limits<double>::infinity(), 1, 1}};
  EXPECT_NE(error_of(to_bytes(t)).find("rank 0, counter sample 0 at inf has a time that is not finite"),
            std::string::npos);
}

TEST(WltV2, RunSectionIsChecked) {
  Trace t = tiny();  // run section at 287..310
  t.origin = static_cast<Origin>(4);
  EXPECT_EQ(error_of(to_bytes(t)), "t.wlt: corrupt .wlt file at byte 287: unknown trace origin 4");
  t = tiny();
  t.counters = 4;
  EXPECT_EQ(error_of(to_bytes(t)), "t.wlt: corrupt .wlt file at byte 288: unknown counters bits 4");
  t = tiny();
  t.span_end = std::numeric_limits<double>::infinity();
  EXPECT_EQ(error_of(to_bytes(t)), "t.wlt: corrupt .wlt file at byte 295: declared span [0, inf] is not finite");
}

TEST(WltV2, TruncationInsideTheNewArraysNamesTheLocationAndRecord) {
  const std::string b = to_bytes(tiny_thread());
  EXPECT_EQ(error_of(b.substr(0, 324)), "t.wlt: truncated at byte 324 (rank 0 thread 1, state interval 0)");
  EXPECT_EQ(error_of(b.substr(0, 358)), "t.wlt: truncated at byte 358 (rank 0 thread 1, counter sample 0)");
  EXPECT_EQ(error_of(b.substr(0, 293)), "t.wlt: truncated at byte 293 (rank 0)");  // in the thread number
  EXPECT_EQ(error_of(b.substr(0, 298)), "t.wlt: truncated at byte 298 (rank 0 thread 1)");  // event count
  EXPECT_EQ(error_of(b.substr(0, 314)), "t.wlt: truncated at byte 314 (rank 0 thread 1)");  // state count
  EXPECT_EQ(error_of(b.substr(0, 381)), "t.wlt: truncated at byte 381 (rank 0 thread 1)");  // OpenMP count
  EXPECT_EQ(error_of(b.substr(0, 389)), "t.wlt: truncated at byte 389 (rank 0 thread 1)");  // its checksum
}

// ---- version 3: checksums ----

std::uint32_t le32(const std::string& b, std::size_t at) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < 4; ++i) v |= static_cast<std::uint32_t>(static_cast<unsigned char>(b[at + i])) << (8 * i);
  return v;
}
std::uint32_t crc_before(const std::string& b, std::size_t at) {
  return static_cast<std::uint32_t>(crc32_z(0, reinterpret_cast<const Bytef*>(b.data()), at));
}
std::string hex(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

TEST(WltChecksums, EveryChecksumIsTheCrc32OfAllBytesBeforeIt) {
  // tiny_thread(): the documented checksum positions (see tiny() and tiny_thread()).
  const std::string b = to_bytes(tiny_thread());
  ASSERT_EQ(b.size(), 427u);
  for (std::size_t at : {20u, 75u, 179u, 247u, 275u, 339u, 375u, 387u, 415u})
    EXPECT_EQ(le32(b, at), crc_before(b, at)) << "checksum at byte " << at;
  EXPECT_EQ(b.substr(419), std::string("WLTEND\0\0", 8));
}

TEST(WltChecksums, BlocksOf16384Records) {
  // 16384 + 1 events: two blocks, each followed by its checksum.
  Trace t = tiny();
  t.locations[0].events.clear();
  for (int i = 0; i < 16385; ++i) t.locations[0].events.push_back(make_event(i, i % 2 ? EventKind::Leave : EventKind::Enter));
  const std::string b = to_bytes(t);
  const std::size_t first = 99, second = first + 16384 * 40 + 4;
  EXPECT_EQ(le32(b, second - 4), crc_before(b, second - 4));
  EXPECT_EQ(le32(b, second + 40), crc_before(b, second + 40));
  EXPECT_EQ(from_bytes(b), t);
  // A value error in the second block names the right byte: past the first block's checksum.
  t.locations[0].events[16384].time = -1;
  EXPECT_EQ(error_of(to_bytes(t)), "t.wlt: corrupt .wlt file at byte " + std::to_string(second) +
                                       ": rank 0, event 16384 (Enter) has a negative time -1");
  // A flipped bit in the second block is reported there, with the event range of the block.
  std::string flipped = b;
  flipped[second + 3] ^= 0x10;
  EXPECT_EQ(error_of(flipped), "t.wlt: corrupt .wlt file at byte " + std::to_string(second + 40) + ": checksum " +
                                   hex(le32(b, second + 40)) + " does not match bytes " + std::to_string(second) + "-" +
                                   std::to_string(second + 39) + " (rank 0, events 16384-16384), whose checksum is " +
                                   hex(crc_before(flipped, second + 40)) +
                                   ": the file was changed or damaged after it was written");
}

TEST(WltChecksums, AFlippedBitNamesTheDamagedBytes) {
  const std::string good = to_bytes(tiny());
  const auto flip = [&](std::size_t byte, int bit) {
    std::string b = good;
    b[byte] = static_cast<char>(b[byte] ^ (1 << bit));
    return b;
  };
  const auto mismatch = [&](const std::string& b, std::size_t at, std::size_t from, const std::string& what) {
    return "t.wlt: corrupt .wlt file at byte " + std::to_string(at) + ": checksum " + hex(le32(b, at)) +
           " does not match bytes " + std::to_string(from) + "-" + std::to_string(at - 1) + " (" + what +
           "), whose checksum is " + hex(crc_before(b, at)) + ": the file was changed or damaged after it was written";
  };
  // The lowest bit of event 1's time: 1.0 becomes 1.0000000000000002, a valid time.
  std::string b = flip(139, 0);
  EXPECT_EQ(error_of(b), mismatch(b, 179, 79, "rank 0, events 0-1"));
  b = flip(191 + 20, 3);  // the nominal duration of truth record 0
  EXPECT_EQ(error_of(b), mismatch(b, 247, 183, "rank 0, truth records 0-0"));
  b = flip(36, 1);  // the region's name "r" becomes "p"
  EXPECT_EQ(error_of(b), mismatch(b, 75, 24, "the definitions and attributes"));
  b = flip(16, 0);  // the truth flag
  EXPECT_EQ(error_of(b), mismatch(b, 20, 0, "the header"));
  b = flip(295, 2);  // the declared span's begin
  EXPECT_EQ(error_of(b), mismatch(b, 311, 279, "the thread count and the run section"));
  b = flip(260, 0);  // the counter count 0 becomes 256: read as counter samples to the end
  EXPECT_EQ(error_of(b), "t.wlt: truncated at byte 323 (rank 0, counter sample 2)");
  b = flip(278, 7);  // the location's checksum itself
  EXPECT_EQ(error_of(b), mismatch(b, 275, 251, "rank 0: its rank and record counts"));
  b = flip(268, 0);  // the OpenMP count 0 becomes 256: read as OpenMP intervals to the end
  EXPECT_EQ(error_of(b), "t.wlt: truncated at byte 323 (rank 0, OpenMP interval 2)");
}

// Flips every bit of a file, one at a time: each flip must be an InputError naming the file
// (never a crash, a hang, a huge allocation, another exception or a successful read).
void expect_every_flip_fails(const std::string& good) {
  std::size_t failures = 0;
  for (std::size_t byte = 0; byte < good.size(); ++byte)
    for (int bit = 0; bit < 8; ++bit) {
      std::string b = good;
      b[byte] = static_cast<char>(b[byte] ^ (1 << bit));
      const std::string msg = error_of(b);
      if (msg.rfind("t.wlt: ", 0) != 0) {
        ADD_FAILURE() << "bit " << bit << " of byte " << byte << ": " << msg;
        if (++failures > 10) return;
      }
    }
}

TEST(WltChecksums, EverySingleBitFlipIsAnInputError) {
  expect_every_flip_fails(to_bytes(tiny()));
  expect_every_flip_fails(to_bytes(tiny_thread()));
  expect_every_flip_fails(to_bytes(measured()));
  Trace big = sample();
  big.locations[1].events.resize(16384 + 3, big.locations[1].events.back());  // two blocks
  const std::string b = to_bytes(big);
  // A sample of a bigger file (656 KB): every bit of every 4099th byte.
  std::size_t failures = 0;
  for (std::size_t byte = 0; byte < b.size(); byte += 4099)
    for (int bit = 0; bit < 8; ++bit) {
      std::string f = b;
      f[byte] = static_cast<char>(f[byte] ^ (1 << bit));
      const std::string msg = error_of(f);
      if (msg.rfind("t.wlt: ", 0) != 0 && ++failures < 10) ADD_FAILURE() << "bit " << bit << " of byte " << byte;
    }
}

// ---- version 4: OpenMP intervals ----

// tiny_thread() with OpenMP intervals on both locations: they round-trip bit for bit, 24 bytes
// each; rank 0's two and their block checksum move the thread by 52 bytes, whose intervals come
// after its counter samples (count at 379 + 52, interval 0 at 387 + 52: kind at +16, id at +20).
Trace tiny_omp() {
  Trace t = tiny_thread();
  t.locations[0].omp = {{0.25, 0.75, OmpKind::ParallelRegion, 3}, {0.3, 0.7, OmpKind::ParallelFunction, 7}};
  t.threads[0].omp = {{0.3, 0.6, OmpKind::ParallelFunction, 7}};
  return t;
}

TEST(WltV4, OpenMpIntervalsRoundTrip) {
  const std::string b = to_bytes(tiny_omp());
  EXPECT_EQ(b.size() - to_bytes(tiny_thread()).size(), 3u * 24 + 2 * 4);  // and a block checksum each
  EXPECT_EQ(from_bytes(b), tiny_omp());
  EXPECT_EQ(to_bytes(from_bytes(b)), b);
  EXPECT_EQ(b.substr(379 + 52, 8), std::string("\x01\0\0\0\0\0\0\0", 8));  // the thread's count
  EXPECT_EQ(b.substr(387 + 52 + 16, 8), std::string("\x01\0\0\0\x07\0\0\0", 8));  // kind 1, 0, 0, id 7
}

TEST(WltV4, OpenMpIntervalsAreChecked) {
  Trace t = tiny_omp();
  t.threads[0].omp = {{0.3, 0.6, OmpKind::ParallelFunction, 7}, {0.5, 0.9, OmpKind::ParallelFunction, 8}};
  EXPECT_NE(error_of(to_bytes(t)).find("rank 0 thread 1, OpenMP interval 1 [0.5, 0.90000000000000002] overlaps the "
                                       "previous parallel function ending at 0.59999999999999998"),
            std::string::npos)
      << error_of(to_bytes(t));
  t.threads[0].omp = {{0.6, 0.3, OmpKind::ParallelFunction, 7}};
  EXPECT_NE(error_of(to_bytes(t)).find("ends before it begins"), std::string::npos);
  t.threads[0].omp = {{0.3, 0.6, static_cast<OmpKind>(9), 7}};
  EXPECT_NE(error_of(to_bytes(t)).find("has unknown kind 9"), std::string::npos);
  t.threads[0].omp = {{0.4, 0.6, OmpKind::ParallelFunction, 7}, {0.3, 0.35, OmpKind::Task, 1}};
  EXPECT_NE(error_of(to_bytes(t)).find("comes before the previous one"), std::string::npos);
  t.threads[0].omp = {{0.3, std::numeric_limits<double>::infinity(), OmpKind::Task, 1}};
  EXPECT_NE(error_of(to_bytes(t)).find("has a time that is not finite"), std::string::npos);
  expect_every_flip_fails(to_bytes(tiny_omp()));
}

// ---- values: what any version must hold, checksums or not ----

TEST(WltValues, EventTimesAreFiniteNonNegativeAndInOrder) {
  Trace t = tiny();  // event 0 at byte 99, event 1 at 139
  t.locations[0].events[1].time = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(error_of(to_bytes(t)),
            "t.wlt: corrupt .wlt file at byte 139: rank 0, event 1 (Leave) has a time that is not finite: nan");
  t.locations[0].events[1].time = std::numeric_limits<double>::infinity();
  EXPECT_EQ(error_of(to_bytes(t)),
            "t.wlt: corrupt .wlt file at byte 139: rank 0, event 1 (Leave) has a time that is not finite: inf");
  t.locations[0].events[1].time = 1;
  t.locations[0].events[0].time = -std::numeric_limits<double>::infinity();
  EXPECT_EQ(error_of(to_bytes(t)),
            "t.wlt: corrupt .wlt file at byte 99: rank 0, event 0 (Enter) has a time that is not finite: -inf");
  t.locations[0].events[0].time = -1e-9;
  EXPECT_EQ(error_of(to_bytes(t)), "t.wlt: corrupt .wlt file at byte 99: rank 0, event 0 (Enter) has a negative time -1.0000000000000001e-09");
  t.locations[0].events[0].time = 2;
  EXPECT_EQ(error_of(to_bytes(t)),
            "t.wlt: corrupt .wlt file at byte 139: rank 0, event 1 (Leave) at 1 goes back in time from event 0 at 2 "
            "(events are ordered by time)");
  t.locations[0].events[0].time = 1;  // equal times are in order (program order)
  EXPECT_EQ(from_bytes(to_bytes(t)), t);
  t.locations[0].events[0].time = -0.0;  // -0 is not negative
  EXPECT_EQ(from_bytes(to_bytes(t)), t);
}

TEST(WltValues, PeersAreRanksOrNone) {
  Trace t = tiny();
  t.locations[0].events[1] = make_event(1, EventKind::Send, MpiOp::Send, kCommWorld, 1, 0, 8);
  EXPECT_EQ(error_of(to_bytes(t)),
            "t.wlt: corrupt .wlt file at byte 139: rank 0, event 1 (Send) names peer 1, but the trace has 1 rank (a "
            "peer is a rank, or -1 for none)");
  t.locations[0].events[1].peer = -2;
  EXPECT_EQ(error_of(to_bytes(t)),
            "t.wlt: corrupt .wlt file at byte 139: rank 0, event 1 (Send) names peer -2, but the trace has 1 rank (a "
            "peer is a rank, or -1 for none)");
  t.locations[0].events[1].peer = std::numeric_limits<std::int32_t>::max();
  EXPECT_NE(error_of(to_bytes(t)).find("names peer 2147483647"), std::string::npos);
  t.locations[0].events[1].peer = 0;
  EXPECT_EQ(from_bytes(to_bytes(t)), t);
  t.locations[0].events[1] = make_event(1, EventKind::CollEnd, MpiOp::Bcast, kCommWorld, 3);  // the root
  EXPECT_NE(error_of(to_bytes(t)).find("rank 0, event 1 (CollEnd) names peer 3"), std::string::npos);
  // On worker threads too.
  t = tiny_thread();
  t.threads[0].events = {make_event(0, EventKind::Recv, MpiOp::Recv, kCommWorld, 5)};
  EXPECT_EQ(error_of(to_bytes(t)),
            "t.wlt: corrupt .wlt file at byte 303: rank 0 thread 1, event 0 (Recv) names peer 5, but the trace has 1 "
            "rank (a peer is a rank, or -1 for none)");
}

TEST(WltValues, UnknownEventKindOrOp) {
  Trace t = tiny();
  t.locations[0].events[1].kind = static_cast<EventKind>(99);
  EXPECT_EQ(error_of(to_bytes(t)),
            "t.wlt: corrupt .wlt file at byte 139: rank 0, event 1 has unknown kind 99 or MPI op 0");
  t = tiny();
  t.locations[0].events[0].op = MpiOp::Count_;
  EXPECT_EQ(error_of(to_bytes(t)), "t.wlt: corrupt .wlt file at byte 99: rank 0, event 0 has unknown kind 0 or MPI op " +
                                       std::to_string(static_cast<int>(MpiOp::Count_)));
}

TEST(WltValues, CommunicatorMembersAreRanks) {
  Trace t = tiny();  // member 0 of communicator 0 at byte 63
  t.defs.comms[0].members = {1};
  EXPECT_EQ(error_of(to_bytes(t)),
            "t.wlt: corrupt .wlt file at byte 63: communicator 0, member 0 is rank 1, but the trace has 1 rank");
  t.defs.comms[0].members = {-7};
  EXPECT_NE(error_of(to_bytes(t)).find("member 0 is rank -7"), std::string::npos);
  t.defs.comms[0].members = {0, kNoRank};  // a member an OTF2 archive did not resolve
  EXPECT_EQ(from_bytes(to_bytes(t)), t);
}

TEST(WltValues, TruthRecordsAreFiniteAndOrdered) {
  Trace t = tiny();  // truth record 0 at byte 191
  t.locations[0].truth[0].injected[2] = std::numeric_limits<double>::infinity();
  EXPECT_EQ(error_of(to_bytes(t)),
            "t.wlt: corrupt .wlt file at byte 191: rank 0, truth record 0 has a time or duration that is not finite");
  t = tiny();
  t.locations[0].truth[0].start = 2;
  EXPECT_EQ(error_of(to_bytes(t)), "t.wlt: corrupt .wlt file at byte 191: rank 0, truth record 0 [2, 1] ends before it begins");
  t = tiny();
  t.locations[0].truth.push_back(t.locations[0].truth[0]);
  t.locations[0].truth[0].start = 0.5;
  EXPECT_EQ(error_of(to_bytes(t)),
            "t.wlt: corrupt .wlt file at byte 247: rank 0, truth record 1 starts at 0, before the previous one at 0.5 "
            "(truth records are ordered by start)");
}

TEST(WltValues, ALeaveLeavesTheRegionOpenOnItsLocation) {
  Trace t = tiny();
  t.defs.region("s");  // region 1
  t.locations[0].events = {
      make_event(0, EventKind::Enter, MpiOp::None, 0), make_event(0.5, EventKind::Enter, MpiOp::None, 1),
      make_event(1, EventKind::Leave, MpiOp::None, 0), make_event(1, EventKind::Leave, MpiOp::None, 1)};
  const std::string b = to_bytes(t);
  const std::size_t event2 = 99 + 10 + 2 * 40;  // tiny's layout, region "s" taking 10 bytes
  ASSERT_EQ(b.substr(event2, 8), std::string("\x00\x00\x00\x00\x00\x00\xf0\x3f", 8));  // event 2 at t = 1
  EXPECT_EQ(error_of(b),
            "t.wlt: corrupt .wlt file at byte " + std::to_string(event2) +
                ": rank 0, event 2 (Leave) names region 0 'r' where region 1 's' is open (a Leave leaves "
                "the innermost region entered)");
  std::swap(t.locations[0].events[2].ref, t.locations[0].events[3].ref);  // properly nested
  EXPECT_EQ(from_bytes(to_bytes(t)), t);
  // On worker threads too; a Leave with nothing open (a trace that starts inside a region)
  // reads.
  t = tiny_thread();
  t.defs.region("s");
  t.threads[0].events = {make_event(0, EventKind::Leave, MpiOp::None, 1),
                         make_event(0, EventKind::Enter, MpiOp::None, 1),
                         make_event(1, EventKind::Leave, MpiOp::None, 1)};
  EXPECT_EQ(from_bytes(to_bytes(t)), t);
  t.threads[0].events.back().ref = 0;
  const std::string thread = error_of(to_bytes(t));
  EXPECT_NE(
      thread.find(": rank 0 thread 1, event 2 (Leave) names region 0 'r' where region 1 's' is open (a Leave "
                  "leaves the innermost region entered)"),
      std::string::npos)
      << thread;
}

TEST(WltValues, RegionNestingIsBounded) {
  Trace t = tiny();
  t.locations[0].events.clear();
  for (std::size_t i = 0; i < kMaxRegionDepth; ++i) t.locations[0].events.push_back(make_event(0, EventKind::Enter));
  EXPECT_EQ(from_bytes(to_bytes(t)), t);  // exactly the limit
  for (int i = 0; i < 10; ++i) {  // leaving and entering again stays within it
    t.locations[0].events.push_back(make_event(1, EventKind::Leave));
    t.locations[0].events.push_back(make_event(1, EventKind::Enter));
  }
  EXPECT_EQ(from_bytes(to_bytes(t)), t);
  t.locations[0].events.push_back(make_event(2, EventKind::Enter));  // event 4116, one level too deep
  EXPECT_EQ(error_of(to_bytes(t)), "t.wlt: corrupt .wlt file at byte " + std::to_string(99 + 4116 * 40) +
                                       ": rank 0, event 4116 (Enter) nests regions 4097 deep, deeper than the 4096 "
                                       "levels a trace may have");
}

}  // namespace
}  // namespace waitlab::trace
