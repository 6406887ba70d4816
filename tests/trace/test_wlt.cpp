// Tests of the native .wlt trace file: exact round trip, byte-identical re-write, the
// header bytes, and the errors for truncated, corrupt, foreign and future files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
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
  // header, five zero counts (regions, comms, attributes, ranks, threads), run section, end marker
  EXPECT_EQ(bytes.size(), 24u + 5 * 8 + 24 + 8);
  EXPECT_EQ(from_bytes(bytes), empty);
}

TEST(Wlt, HeaderLayout) {
  const std::string b = to_bytes(sample());
  EXPECT_EQ(b.substr(0, 8), std::string("WLTRACE\0", 8));
  EXPECT_EQ(b.substr(8, 4), std::string("\x02\x00\x00\x00", 4));   // version 2, little-endian
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
  // events; truth, state and counter counts; thread count; run section; end marker
  ASSERT_EQ(b.size(), 68u + 4 * 40 + 3 * 8 + 8 + 24 + 8);
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
  EXPECT_EQ(error_of(b.substr(0, b.size() - 1)), "t.wlt: truncated at byte 291");           // end marker
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
  b[8] = 3;
  EXPECT_EQ(error_of(b),
            "t.wlt: .wlt format version 3 is newer than this waitlab reads (version 2); upgrade waitlab");
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
  b[67] = 0x10;  // event count 2^60 + 1: what follows reads as events until the file ends
  EXPECT_EQ(error_of(b), "t.wlt: truncated at byte " + std::to_string(b.size()) + " (rank 0, event " +
                             std::to_string((b.size() - 68) / 40) + ")");
}

TEST(Wlt, TrailingGarbage) {
  EXPECT_EQ(error_of(to_bytes(bare(1)) + "x"),
            "t.wlt: corrupt .wlt file at byte 172: unexpected data after the end marker");
}

// The smallest trace whose references all resolve; its layout, by hand:
//   header 0..23 | region count 24..31 | region "r": name 32..36, op 37, file 38..41 |
//   comm count 42..49 | comm "W": name 50..54, member count 55..62, member 63..66 |
//   attr count 67..74 | rank count 75..82 | rank 0: i32 rank 83..86, event count 87..94,
//   events 95..174 (event 1 at 135), truth count 175..182, truth record 183..238, state count
//   239..246, counter count 247..254 | thread count 255..262 | run 263..286 | end.
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
  ASSERT_EQ(b.size(), 287u + 8);
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
  EXPECT_EQ(to_bytes(t).size() - base, 3u * 20);
  t.locations[0].states.clear();
  t.locations[0].counters.resize(2);
  EXPECT_EQ(to_bytes(t).size() - base, 2u * 24);
  t.locations[0].counters.clear();
  t.defs.comms.push_back(Communicator{"W", {0}});
  const std::size_t with_comm = to_bytes(t).size();
  Location th;
  th.rank = 0;
  th.thread = 1;
  t.threads.push_back(th);
  // i32 rank, i32 thread and four zero counts.
  EXPECT_EQ(to_bytes(t).size() - with_comm, 8u + 4 * 8);
}

// The layout of version 1, written field by field here (independently of wlt.cpp): header,
// regions, comms, attributes, ranks as (i32 rank, events, truth), end marker.
class V1 {
 public:
  std::string bytes(const Trace& t) {
    b_ = std::string("WLTRACE\0", 8);
    u(1u, 4);
    u(0x01020304u, 4);
    u(t.has_truth ? 1u : 0u, 4);
    u(0, 4);
    u(t.defs.regions.size(), 8);
    for (const Region& r : t.defs.regions) {
      str(r.name);
      u(static_cast<std::uint64_t>(r.op), 1);
      str(r.file);
    }
    u(t.defs.comms.size(), 8);
    for (const Communicator& c : t.defs.comms) {
      str(c.name);
      u(c.members.size(), 8);
      for (Rank m : c.members) u(static_cast<std::uint32_t>(m), 4);
    }
    u(t.attributes.size(), 8);
    for (const Attribute& a : t.attributes) {
      str(a.key);
      str(a.value);
    }
    u(t.locations.size(), 8);
    for (const Location& l : t.locations) {
      u(static_cast<std::uint32_t>(l.rank), 4);
      u(l.events.size(), 8);
      for (const Event& e : l.events) {
        f(e.time);
        u(e.bytes, 8);
        u(e.aux, 8);
        u(static_cast<std::uint64_t>(e.kind), 1);
        u(static_cast<std::uint64_t>(e.op), 1);
        u(e.flags, 2);
        u(e.ref, 4);
        u(static_cast<std::uint32_t>(e.peer), 4);
        u(static_cast<std::uint32_t>(e.tag), 4);
      }
      u(l.truth.size(), 8);
      for (const ComputeTruth& c : l.truth) {
        f(c.start);
        f(c.end);
        f(c.nominal);
        for (double d : c.injected) f(d);
        u(c.region, 4);
        u(static_cast<std::uint32_t>(c.iteration), 4);
      }
    }
    b_ += std::string("WLTEND\0\0", 8);
    return b_;
  }

 private:
  void u(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) b_.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  }
  void f(double d) { u(std::bit_cast<std::uint64_t>(d), 8); }
  void str(const std::string& s) {
    u(s.size(), 4);
    b_ += s;
  }
  std::string b_;
};

TEST(WltV2, Version1FilesStillRead) {
  const Trace t = sample();
  const std::string v1 = V1().bytes(t);
  EXPECT_EQ(v1.substr(8, 4), std::string("\x01\x00\x00\x00", 4));
  const Trace back = from_bytes(v1);
  EXPECT_EQ(back, t);  // every version-1 field, and the defaults for the rest
  EXPECT_TRUE(back.threads.empty());
  EXPECT_EQ(back.origin, Origin::Simulated);
  EXPECT_FALSE(back.has_declared_span());
  EXPECT_EQ(back.counters, 0);
  // Rewritten, it is a version-2 file of the same trace.
  EXPECT_EQ(to_bytes(back), to_bytes(t));
  // A version-1 file ends after its ranks: a version-2 reader does not look for threads there.
  EXPECT_EQ(error_of(v1.substr(0, v1.size() - 1)), "t.wlt: truncated at byte " + std::to_string(v1.size() - 1));
  EXPECT_EQ(error_of(V1().bytes(tiny())), "(no error)");
}

// tiny() with one thread of rank 0; the thread's record starts at byte 263 (after the thread
// count): i32 rank 263, i32 thread 267, event count 271, truth count 279, state count 287,
// state 0 at 295 (its code at 311), counter count 315, counter 0 at 323 (instructions at 331).
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
  EXPECT_EQ(b.substr(255, 8), std::string("\x01\0\0\0\0\0\0\0", 8));  // one thread
  EXPECT_EQ(b.substr(267, 4), std::string("\x01\0\0\0", 4));          // thread 1
  EXPECT_EQ(b.substr(311, 4), std::string("\x02\0\0\0", 4));          // state 2
  EXPECT_EQ(b.substr(331, 8), std::string("\x05\0\0\0\0\0\0\0", 8));  // 5 instructions
  EXPECT_EQ(from_bytes(b), tiny_thread());
}

TEST(WltV2, ThreadsMustBelongToARankAndBeOrdered) {
  Trace t = tiny_thread();
  t.threads[0].rank = 1;
  EXPECT_EQ(error_of(to_bytes(t)),
            "t.wlt: corrupt .wlt file at byte 263: thread location 0 belongs to rank 1, but the trace has 1 rank");
  t.threads[0].rank = -1;
  EXPECT_NE(error_of(to_bytes(t)).find("belongs to rank -1"), std::string::npos);
  t = tiny_thread();
  t.threads[0].thread = 0;
  EXPECT_EQ(error_of(to_bytes(t)),
            "t.wlt: corrupt .wlt file at byte 267: thread location 0 (rank 0) has thread number 0 (worker "
            "threads are numbered from 1)");
  t = tiny_thread();
  t.threads.push_back(t.threads[0]);  // rank 0 thread 1 twice
  const std::string msg = error_of(to_bytes(t));
  EXPECT_NE(msg.find(": thread location 1 (rank 0 thread 1) does not come after rank 0 thread 1"), std::string::npos)
      << msg;
  t = tiny_thread();
  t.threads[0].events = {make_event(0, EventKind::Enter, MpiOp::None, 7)};
  EXPECT_EQ(error_of(to_bytes(t)),
            "t.wlt: corrupt .wlt file at byte 279: rank 0 thread 1, event 0 (Enter) refers to region 7, but the "
            "trace defines 1 region");
}

TEST(WltV2, StatesAndSamplesMustBeOrderedAndFinite) {
  Trace t = tiny_thread();
  t.threads[0].states = {{0, 1, 2}, {0.5, 2, 2}};
  EXPECT_EQ(error_of(to_bytes(t)),
            "t.wlt: corrupt .wlt file at byte 315: rank 0 thread 1, state interval 1 [0.5, 2] begins before the "
            "previous one ends at 1 (intervals are ordered and do not overlap)");
  t.threads[0].states = {{2, 1, 2}};
  EXPECT_EQ(error_of(to_bytes(t)),
            "t.wlt: corrupt .wlt file at byte 295: rank 0 thread 1, state interval 0 [2, 1] ends before it begins");
  t.threads[0].states = {{0, std::numeric_limits<double>::quiet_NaN(), 2}};
  EXPECT_NE(error_of(to_bytes(t)).find("state interval 0 [0, nan] has a time that is not finite"), std::string::npos);
  t = tiny();
  t.locations[0].counters = {{2, 1, 1}, {1, 1, 1}};
  EXPECT_EQ(error_of(to_bytes(t)),
            "t.wlt: corrupt .wlt file at byte 279: rank 0, counter sample 1 at 1 comes before the previous one at 2 "
            "(samples are ordered by time)");
  t.locations[0].counters = {{std::numeric_limits<double>::infinity(), 1, 1}};
  EXPECT_NE(error_of(to_bytes(t)).find("rank 0, counter sample 0 at inf has a time that is not finite"),
            std::string::npos);
}

TEST(WltV2, RunSectionIsChecked) {
  const std::string good = to_bytes(tiny());  // run section at 263..286
  std::string b = good;
  b[263] = 4;
  EXPECT_EQ(error_of(b), "t.wlt: corrupt .wlt file at byte 263: unknown trace origin 4");
  b = good;
  b[264] = 4;
  EXPECT_EQ(error_of(b), "t.wlt: corrupt .wlt file at byte 264: unknown counters bits 4");
  Trace t = tiny();
  t.span_end = std::numeric_limits<double>::infinity();
  EXPECT_EQ(error_of(to_bytes(t)), "t.wlt: corrupt .wlt file at byte 271: declared span [0, inf] is not finite");
}

TEST(WltV2, TruncationInsideTheNewArraysNamesTheLocationAndRecord) {
  const std::string b = to_bytes(tiny_thread());
  EXPECT_EQ(error_of(b.substr(0, 300)), "t.wlt: truncated at byte 300 (rank 0 thread 1, state interval 0)");
  EXPECT_EQ(error_of(b.substr(0, 330)), "t.wlt: truncated at byte 330 (rank 0 thread 1, counter sample 0)");
  EXPECT_EQ(error_of(b.substr(0, 270)), "t.wlt: truncated at byte 270 (rank 0)");  // in the thread number
  EXPECT_EQ(error_of(b.substr(0, 275)), "t.wlt: truncated at byte 275 (rank 0 thread 1)");  // event count
  EXPECT_EQ(error_of(b.substr(0, 290)), "t.wlt: truncated at byte 290 (rank 0 thread 1)");  // state count
}

}  // namespace
}  // namespace waitlab::trace
