// Tests of reading a trace per location (trace_part.hpp): for every split [first, last) of the
// test traces, the part equals the whole trace's ranks [first, last), their threads and the
// whole trace's definitions and global values; the event counts equal the whole trace's
// (.wlt; OTF2: the records announced; Paraver: the records per task, the same in every part); a
// damaged byte of location k is reported by the part that owns k, with the serial reader's
// message, and by no other (.wlt, OTF2); a part of an OTF2 archive opens no other location's
// files; a TI trace and a range beyond the trace are refused. Paraver: every split of the Extrae
// traces, the fixtures and waitlab-written traces, one whose tasks meet regions in another order
// than the file does; a part keeps its own tasks' pairs only; a malformed line fails every part
// with the whole reader's message.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/trace/otf2.hpp"
#include "analysis/trace/paraver.hpp"
#include "analysis/trace/trace_io.hpp"
#include "analysis/trace/trace_part.hpp"
#include "analysis/trace/wlt.hpp"
#include "tests/temp_dir.hpp"
#include "util/error.hpp"
#include "tests/trace/wlt_legacy.hpp"

namespace waitlab::trace {
namespace {

namespace fs = std::filesystem;

const fs::path kScoreP = fs::path(WAITLAB_SOURCE_DIR) / "tests" / "data" / "scorep";

// A location's events: nested user regions, point-to-point calls to the next rank, and
// allreduces; `n` rounds, times from `t` on, the bytes field of the first Send (event 4)
// `mark` (a pattern the corruption tests find in the file).
void fill(Location& l, Rank ranks, int n, double t, std::uint64_t mark, std::mt19937_64& rng) {
  const Rank next = (l.rank + 1) % ranks;
  for (int i = 0; i < n; ++i) {
    t += 1e-6 * static_cast<double>(rng() % 100);
    l.events.push_back(make_event(t, EventKind::Enter, MpiOp::None, 0));
    l.events.push_back(make_event(t, EventKind::Enter, MpiOp::None, 1));
    t += 1e-6;
    l.events.push_back(make_event(t, EventKind::Leave, MpiOp::None, 1));
    l.events.push_back(make_event(t, EventKind::Enter, MpiOp::Send, 2));
    l.events.push_back(make_event(t, EventKind::Send, MpiOp::Send, kCommWorld, next, i % 7, i == 0 ? mark : 8));
    l.events.push_back(make_event(t, EventKind::Leave, MpiOp::Send, 2));
    l.events.push_back(make_event(t, EventKind::Enter, MpiOp::Allreduce, 3));
    l.events.push_back(make_event(t, EventKind::CollBegin, MpiOp::Allreduce, kCommWorld));
    l.events.push_back(make_event(t, EventKind::CollEnd, MpiOp::Allreduce, kCommWorld, kNoRank, 0, 8, 8));
    l.events.push_back(make_event(t, EventKind::Leave, MpiOp::Allreduce, 3));
    l.events.push_back(make_event(t, EventKind::Leave, MpiOp::None, 0));
  }
}

// Five ranks with every kind of per-location record; rank 2 holds more than one checksummed
// block of events (16384 records), ranks 1 and 3 have worker threads.
Trace whole_trace() {
  Trace t;
  t.defs.region("main");
  t.defs.region("compute");
  t.defs.mpi_region(MpiOp::Send);
  t.defs.mpi_region(MpiOp::Allreduce);
  t.defs.comms.push_back(Communicator{"MPI_COMM_WORLD", {0, 1, 2, 3, 4}});
  t.defs.comms.push_back(Communicator{"odd", {1, 3}});
  t.attributes = {{"scenario", "parts"}, {"seed", "3"}};
  t.has_truth = true;
  t.origin = Origin::Extrae;
  t.span_begin = 0;
  t.span_end = 9;
  t.counters = kHasInstructions | kHasCycles;
  std::mt19937_64 rng(3);
  const Rank ranks = 5;
  for (Rank r = 0; r < ranks; ++r) {
    Location l;
    l.rank = r;
    fill(l, ranks, r == 2 ? 1600 : 3 + r, 0.5 * r, 0xABCD000000000000ull + static_cast<std::uint64_t>(r), rng);
    l.truth.push_back(ComputeTruth{0.1, 0.2, 0.05, {0.01, 0.02, 0.0}, 1, r});
    l.states.push_back(StateInterval{0.0, 0.1, 12});
    l.counters.push_back(CounterSample{0.3, 100u + static_cast<std::uint64_t>(r), 200});
    t.locations.push_back(std::move(l));
  }
  for (const auto& [rank, thread] : {std::pair{1, 1}, {1, 2}, {3, 1}}) {
    Location l;
    l.rank = rank;
    l.thread = thread;
    fill(l, ranks, 2, 0.25, 0xABCE000000000000ull + static_cast<std::uint64_t>(10 * rank + thread), rng);
    l.states.push_back(StateInterval{0.0, 0.2, 5});
    t.threads.push_back(std::move(l));
  }
  return t;
}

std::string bytes_of(const Trace& t) {
  std::ostringstream out(std::ios::binary);
  write_wlt(t, out);
  return out.str();
}

TracePart part_from(const std::string& bytes, Rank first, Rank last) {
  std::istringstream in(bytes, std::ios::binary);
  return read_wlt_part(in, "t.wlt", first, last);
}

template <typename F>
std::string error_of(F read) {
  try {
    read();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string serial_error(const std::string& bytes) {
  return error_of([&] {
    std::istringstream in(bytes, std::ios::binary);
    read_wlt(in, "t.wlt");
  });
}

std::string part_error(const std::string& bytes, Rank first, Rank last) {
  return error_of([&] { part_from(bytes, first, last); });
}

// Every split of the ranks of `whole`, read from `bytes`, equals the whole trace's part.
void expect_every_split(const Trace& whole, const std::string& bytes) {
  const auto ranks = static_cast<Rank>(whole.ranks());
  for (Rank first = 0; first <= ranks; ++first)
    for (Rank last = first; last <= ranks; ++last)
      EXPECT_EQ(part_from(bytes, first, last), part_of(whole, first, last)) << "[" << first << ", " << last << ")";
}

// The offset of the 8 little-endian bytes of `v` in `bytes` (it must occur once).
std::size_t find_u64(const std::string& bytes, std::uint64_t v) {
  std::string pattern;
  for (int i = 0; i < 8; ++i) pattern.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  const std::size_t at = bytes.find(pattern);
  EXPECT_NE(at, std::string::npos);
  EXPECT_EQ(bytes.find(pattern, at + 1), std::string::npos);
  return at;
}

TEST(WltPart, EverySplitEqualsTheWholeTrace) {
  const Trace whole = whole_trace();
  const std::string bytes = bytes_of(whole);
  expect_every_split(whole, bytes);
  test::ScratchDir dir("wlt_part_split");
  const std::string path = dir.path("t.wlt");
  write_wlt(whole, path);
  const TracePart all = read_trace_part(path, 0, 5);
  EXPECT_EQ(all.event_counts, (std::vector<std::uint64_t>{33, 44, 17600, 66, 77}));
  EXPECT_EQ(location_event_counts(path), all.event_counts);
  EXPECT_EQ(read_trace_part(path, 1, 3), part_of(whole, 1, 3));
  EXPECT_EQ(to_trace(read_trace_part(path, 0, 5)), whole);
  EXPECT_EQ(read_trace(path), whole);
}

TEST(WltPart, OlderVersionsSplitToo) {
  Trace whole = whole_trace();
  expect_every_split(whole, Legacy(2).bytes(whole));
  whole.threads.clear();  // version 1: no threads, states, counters or run section
  for (Location& l : whole.locations) {
    l.states.clear();
    l.counters.clear();
  }
  whole.origin = Origin::Simulated;
  whole.span_end = -1;
  whole.counters = 0;
  expect_every_split(whole, Legacy(1).bytes(whole));
}

TEST(WltPart, ScorePTracesSplit) {
  for (const char* name : {"ping-pong-otf2", "npb-is.W.16", "npb-mg.W.16"}) {
    const Trace whole = read_trace((kScoreP / name / "traces.otf2").string());
    expect_every_split(whole, bytes_of(whole));
  }
}

// A damaged byte inside the events of location k (a rank or a thread): the parts holding k
// report what the serial reader reports, the others read as from the undamaged file.
void expect_owner_reports(const Trace& whole, const std::string& damaged, Rank owner) {
  const std::string serial = serial_error(damaged);
  ASSERT_NE(serial, "(no error)");
  const auto ranks = static_cast<Rank>(whole.ranks());
  for (Rank first = 0; first <= ranks; ++first)
    for (Rank last = first; last <= ranks; ++last) {
      if (owner >= first && owner < last)
        EXPECT_EQ(part_error(damaged, first, last), serial) << "[" << first << ", " << last << ")";
      else
        EXPECT_EQ(part_from(damaged, first, last), part_of(whole, first, last)) << "[" << first << ", " << last << ")";
    }
}

TEST(WltPart, ADamagedLocationIsItsOwnersError) {
  const Trace whole = whole_trace();
  const std::string bytes = bytes_of(whole);
  for (Rank k = 0; k < 5; ++k) {
    std::string damaged = bytes;
    damaged[find_u64(bytes, 0xABCD000000000000ull + static_cast<std::uint64_t>(k)) + 2] ^= 0x10;
    expect_owner_reports(whole, damaged, k);
    EXPECT_NE(serial_error(damaged).find("checksum"), std::string::npos) << serial_error(damaged);
  }
  // A worker thread's events: the part holding its rank.
  std::string damaged = bytes;
  damaged[find_u64(bytes, 0xABCE000000000000ull + 31) + 1] ^= 0x01;
  expect_owner_reports(whole, damaged, 3);
}

TEST(WltPart, ADamagedChecksumIsItsLocationsError) {
  // The last 4 bytes of location k's record are its checksum; the part holding k + 1 seeds its
  // first checksum with the crc32 residue, not with them, so it is not concerned.
  const Trace whole = whole_trace();
  const std::string bytes = bytes_of(whole);
  for (Rank k = 0; k + 1 < 5; ++k) {
    // Location k + 1 starts with its rank (i32) and its event count (u64); the bytes field of
    // its event 4 is 8 bytes into that 40-byte record.
    const std::size_t mark_at = find_u64(bytes, 0xABCD000000000000ull + static_cast<std::uint64_t>(k + 1));
    const std::size_t next_start = mark_at - 8 - 4 * 40 - 8 - 4;
    std::string damaged = bytes;
    damaged[next_start - 1] = static_cast<char>(damaged[next_start - 1] ^ 0x40);
    EXPECT_NE(serial_error(damaged).find("rank " + std::to_string(k) + ": its rank and record counts"),
              std::string::npos)
        << serial_error(damaged);
    expect_owner_reports(whole, damaged, k);
  }
}

TEST(WltPart, ValueErrorsWithoutChecksums) {
  // Version 2 has no checksums: an unknown event kind is found by the value checks, by the owner.
  const Trace whole = whole_trace();
  const std::string bytes = Legacy(2).bytes(whole);
  for (Rank k = 0; k < 5; ++k) {
    std::string damaged = bytes;
    damaged[find_u64(bytes, 0xABCD000000000000ull + static_cast<std::uint64_t>(k)) + 16] = '\x7f';  // kind
    EXPECT_NE(serial_error(damaged).find("unknown kind 127"), std::string::npos) << serial_error(damaged);
    expect_owner_reports(whole, damaged, k);
  }
}

TEST(WltPart, PeersAreCheckedAgainstEveryRank) {
  Trace whole = whole_trace();
  whole.locations[4].events[4].peer = 5;  // the Send of rank 4's first round: no rank 5
  const std::string bytes = bytes_of(whole);
  const std::string serial = serial_error(bytes);
  EXPECT_NE(serial.find("names peer 5, but the trace has 5 ranks"), std::string::npos) << serial;
  EXPECT_EQ(part_error(bytes, 4, 5), serial);
  EXPECT_EQ(part_error(bytes, 0, 4), "(no error)");
}

TEST(WltPart, ATruncatedFileIsReportedAsTheSerialReaderReportsIt) {
  const std::string bytes = bytes_of(whole_trace());
  for (const std::size_t cut : {bytes.size() - 1, bytes.size() - 300, bytes.size() / 2}) {
    const std::string cut_bytes = bytes.substr(0, cut);
    const std::string serial = serial_error(cut_bytes);
    EXPECT_NE(serial.find("truncated"), std::string::npos) << serial;
    for (Rank first = 0; first <= 5; ++first) EXPECT_EQ(part_error(cut_bytes, first, first), serial);
  }
}

TEST(TracePart, RangesBeyondTheTraceAndTIAreRefused) {
  const std::string bytes = bytes_of(whole_trace());
  EXPECT_THROW(part_from(bytes, 0, 6), std::invalid_argument);
  EXPECT_THROW(part_from(bytes, 3, 2), std::invalid_argument);
  EXPECT_THROW(part_from(bytes, -1, 2), std::invalid_argument);
  const std::string ti = (fs::path(WAITLAB_SOURCE_DIR) / "tests" / "data" / "ti" / "smpi_calls.ti").string();
  const std::string serial = error_of([&] { read_trace(ti); });
  EXPECT_NE(serial.find("time-independent"), std::string::npos) << serial;
  EXPECT_EQ(error_of([&] { read_trace_part(ti, 0, 1); }), serial);
  EXPECT_EQ(error_of([&] { location_event_counts(ti); }), serial);
  EXPECT_THROW(to_trace(part_of(whole_trace(), 1, 5)), std::invalid_argument);
}

// ---- OTF2 ----

// The part of an archive's whole trace: its event counts are the records the definitions
// announce, and its counter kinds those of the samples its locations hold (in the archives
// here every sample carries the trace's counters: the whole trace's kinds, or none).
TracePart otf2_part_of(const Trace& whole, const std::string& anchor, Rank first, Rank last) {
  TracePart p = part_of(whole, first, last);
  p.event_counts = otf2_record_counts(anchor);
  bool samples = false;
  for (const std::vector<Location>* ls : {&p.locations, &p.threads})
    for (const Location& l : *ls) samples = samples || !l.counters.empty();
  p.counters = samples ? whole.counters : 0;
  return p;
}

TEST(Otf2Part, EverySplitEqualsTheWholeTrace) {
  for (const char* name : {"ping-pong-otf2", "npb-is.W.16", "npb-mg.W.16"}) {
    const std::string anchor = (kScoreP / name / "traces.otf2").string();
    const Trace whole = read_trace(anchor);
    const auto ranks = static_cast<Rank>(whole.ranks());
    const std::vector<std::uint64_t> counts = location_event_counts(anchor);
    ASSERT_EQ(counts.size(), whole.ranks());
    for (std::size_t r = 0; r < counts.size(); ++r) EXPECT_GE(counts[r], whole.locations[r].events.size());
    for (Rank first = 0; first <= ranks; ++first)
      for (Rank last = first; last <= ranks; ++last)
        EXPECT_EQ(read_trace_part(anchor, first, last), otf2_part_of(whole, anchor, first, last))
            << name << " [" << first << ", " << last << ")";
  }
}

TEST(Otf2Part, WaitlabArchivesCountTheirRecords) {
  Trace whole = whole_trace();
  whole.has_truth = false;
  for (Location& l : whole.locations) l.truth.clear();
  test::ScratchDir dir("otf2_part_counts");
  write_otf2(whole, dir.path("a"));
  const std::string anchor = dir.path("a/traces.otf2");
  const Trace back = read_trace(anchor);
  // One record per event, and one Metric record per counter sample.
  std::vector<std::uint64_t> records;
  for (const Location& l : back.locations) records.push_back(l.events.size() + l.counters.size());
  EXPECT_EQ(records, (std::vector<std::uint64_t>{34, 45, 17601, 67, 78}));
  EXPECT_EQ(location_event_counts(dir.path("a")), records);
  for (Rank first = 0; first <= 5; ++first)
    for (Rank last = first; last <= 5; ++last)
      EXPECT_EQ(read_trace_part(anchor, first, last), otf2_part_of(back, anchor, first, last));
}

// A copy of the Score-P archive of NPB IS (16 ranks; location i is rank i) in `dir`.
fs::path copy_of_is(const test::ScratchDir& dir) {
  const fs::path copy = dir.path("is");
  fs::copy(kScoreP / "npb-is.W.16", copy, fs::copy_options::recursive);
  return copy;
}

TEST(Otf2Part, APartOpensOnlyItsLocationsFiles) {
  test::ScratchDir dir("otf2_part_files");
  const fs::path copy = copy_of_is(dir);
  const std::string anchor = (copy / "traces.otf2").string();
  const Trace whole = read_trace(anchor);
  ASSERT_EQ(whole.locations.size(), 16u);
  // Every location outside [4, 8) loses its files (location i is rank i there): the part still
  // reads, the others fail.
  std::vector<fs::path> others;
  for (const auto& f : fs::directory_iterator(copy / "traces")) {
    const int loc = std::stoi(f.path().stem().string());
    if (loc < 4 || loc >= 8) others.push_back(f.path());
  }
  ASSERT_EQ(others.size(), 24u);  // .def and .evt of 12 locations
  for (const fs::path& f : others) fs::remove(f);
  EXPECT_EQ(read_trace_part(anchor, 4, 8), otf2_part_of(whole, anchor, 4, 8));
  EXPECT_EQ(location_event_counts(anchor), otf2_record_counts((kScoreP / "npb-is.W.16" / "traces.otf2").string()));
  EXPECT_NE(error_of([&] { read_trace_part(anchor, 3, 8); }), "(no error)");
  EXPECT_NE(error_of([&] { read_trace(anchor); }), "(no error)");
}

TEST(Otf2Part, ADamagedEventFileIsItsOwnersError) {
  test::ScratchDir dir("otf2_part_damage");
  const fs::path copy = copy_of_is(dir);
  const std::string anchor = (copy / "traces.otf2").string();
  const Trace whole = read_trace(anchor);
  // Location 5's event file loses its last bytes.
  const fs::path evt = copy / "traces" / "5.evt";
  fs::resize_file(evt, fs::file_size(evt) - 7);
  const std::string serial = error_of([&] { read_trace(anchor); });
  EXPECT_NE(serial.find("rank 5"), std::string::npos) << serial;
  for (Rank first = 0; first <= 16; first += 3)
    for (Rank last = first; last <= 16; last += 2) {
      if (5 >= first && 5 < last)
        EXPECT_EQ(error_of([&] { read_trace_part(anchor, first, last); }), serial);
      else
        EXPECT_EQ(read_trace_part(anchor, first, last), otf2_part_of(whole, anchor, first, last));
    }
}

// ---- Paraver ----

// Every range [first, last) of the tasks (so every partition, for any number of processes)
// read on its own equals the whole trace's part but for event_counts, which are the weights
// of a reading without tasks in every part, positive for every task with records; the
// skipped kinds of the two parts of every split merge into the whole reader's.
void expect_every_paraver_split(const std::string& prv) {
  SkippedKinds skipped;
  const Trace whole = read_trace(prv, &skipped);
  const std::vector<std::uint64_t> weights = location_event_counts(prv);
  ASSERT_EQ(weights.size(), whole.ranks()) << prv;
  for (std::size_t k = 0; k < weights.size(); ++k)
    if (!whole.locations[k].events.empty() || !whole.locations[k].states.empty()) {
      EXPECT_GT(weights[k], 0u) << prv << " task " << k + 1;
    }
  const auto ranks = static_cast<Rank>(whole.ranks());
  for (Rank first = 0; first <= ranks; ++first)
    for (Rank last = first; last <= ranks; ++last) {
      const TracePart p = read_trace_part(prv, first, last);
      EXPECT_EQ(p.event_counts, weights) << prv << " [" << first << ", " << last << ")";
      TracePart expected = part_of(whole, first, last);
      expected.event_counts = weights;
      EXPECT_EQ(p, expected) << prv << " [" << first << ", " << last << ")";
    }
  for (Rank m = 0; m <= ranks; ++m) {
    std::vector<SkippedKinds> parts(2);
    read_trace_part(prv, 0, m, &parts[0]);
    read_trace_part(prv, m, ranks, &parts[1]);
    EXPECT_EQ(merge_skipped(prv, parts), skipped) << prv << " split at " << m;
  }
  EXPECT_THROW(read_trace_part(prv, 0, ranks + 1), std::invalid_argument);
}

TEST(ParaverPart, EverySplitEqualsTheWholeTrace) {
  const fs::path data = fs::path(WAITLAB_SOURCE_DIR) / "tests" / "data";
  for (const fs::path& prv : {data / "fixture_d.prv", data / "grid2x2_comms.prv", data / "extrae" / "omp2.prv.gz",
                              data / "extrae" / "epoch_1proc.prv.gz", data / "extrae" / "epoch_2proc.prv.gz"})
    expect_every_paraver_split(prv.string());
}

TEST(ParaverPart, WaitlabWrittenTracesSplit) {
  // waitlab's own encoding (request events, exact region nesting), 5 and 16 tasks.
  test::ScratchDir dir("paraver_part_waitlab");
  Trace five = whole_trace();
  five.threads.clear();
  write_paraver(five, dir.path("five.prv"));
  expect_every_paraver_split(dir.path("five.prv"));
  write_paraver(read_trace((kScoreP / "npb-is.W.16" / "traces.otf2").string()), dir.path("is.prv"));
  expect_every_paraver_split(dir.path("is.prv"));
}

// Four tasks as Extrae writes them, task 2 with a worker thread, whose records meet regions in
// another order than the tasks do: unlabelled user functions 9 and 7 and an unlabelled MPI
// call (value 99) first met on task 4 and 3, then on task 1; a labelled one (MPI_Comm_rank),
// an MPI call on a worker thread; a broadcast on communicator 2 (tasks 2 and 4) rooted at
// task 4 and an allreduce rooted nowhere; messages 1 -> 3 and 4 -> 2; states and counters.
constexpr const char* kMixedPrv =
    "#Paraver (01/01/70 at 00:00):1000_ns:1(5):1:4(1:1,2:1,1:1,1:1),2\n"
    "c:1:1:4:1:2:3:4\n"
    "c:1:2:2:2:4\n"
    "1:1:1:1:1:0:100:1\n"
    "1:2:1:2:1:0:30:1\n"
    "1:3:1:2:2:0:500:7\n"
    "1:4:1:3:1:0:6:1\n"
    "1:5:1:4:1:0:5:1\n"
    "2:5:1:4:1:5:60000019:9:42000050:100\n"
    "1:5:1:4:1:5:30:2\n"
    "2:4:1:3:1:6:60000019:7:50000003:19\n"
    "1:4:1:3:1:6:9:3\n"
    "2:3:1:2:2:7:60000019:9:50000001:1\n"
    "2:5:1:4:1:8:50000003:99\n"
    "2:4:1:3:1:9:50000003:0\n"
    "2:5:1:4:1:10:50000003:0:42000050:200:42000059:300\n"
    "2:3:1:2:2:12:50000001:0\n"
    "2:1:1:1:1:13:60000019:7\n"
    "2:1:1:1:1:14:60000019:9:50000003:99\n"
    "2:1:1:1:1:15:50000003:0\n"
    "2:1:1:1:1:16:50000001:1\n"
    "3:1:1:1:1:16:17:4:1:3:1:20:22:64:5\n"
    "2:1:1:1:1:18:50000001:0\n"
    "2:4:1:3:1:20:50000001:2\n"
    "2:4:1:3:1:25:50000001:0\n"
    "2:5:1:4:1:26:50000001:1\n"
    "3:5:1:4:1:26:27:2:1:2:1:28:29:16:3\n"
    "2:5:1:4:1:27:50000001:0\n"
    "2:2:1:2:1:28:50000001:2\n"
    "2:2:1:2:1:29:50000001:0\n"
    "2:2:1:2:1:30:50000002:7:50100004:2:50100003:0:50100002:8\n"
    "1:2:1:2:1:30:35:13\n"
    "2:5:1:4:1:30:50000002:7:50100004:2:50100003:1:50100001:8\n"
    "2:2:1:2:1:35:50000002:0\n"
    "1:2:1:2:1:35:1000:1\n"
    "2:5:1:4:1:36:50000002:0\n"
    "2:1:1:1:1:40:50000002:10:50100001:4:50100002:4\n"
    "2:2:1:2:1:40:50000002:10:50100001:4:50100002:4\n"
    "2:4:1:3:1:40:50000002:10:50100001:4:50100002:4\n"
    "2:5:1:4:1:40:50000002:10:50100001:4:50100002:4\n"
    "2:1:1:1:1:45:50000002:0:60000019:0\n"
    "2:2:1:2:1:45:50000002:0\n"
    "2:4:1:3:1:45:50000002:0:60000019:0\n"
    "2:5:1:4:1:45:50000002:0:60000019:0\n"
    "2:1:1:1:1:50:60000019:0\n";
constexpr const char* kMixedPcf =
    "EVENT_TYPE\n0 60000019 User function\nVALUES\n0 End\n8 compute\n\n"
    "EVENT_TYPE\n0 50000003 MPI Other\nVALUES\n0 End\n19 MPI_Comm_rank\n\n";

void spit(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

TEST(ParaverPart, RegionsAndRootsMetOnOtherTasksAreTheWholeTracesOnes) {
  test::ScratchDir dir("paraver_part_mixed");
  const std::string prv = dir.path("mixed.prv");
  spit(prv, kMixedPrv);
  spit(dir.path("mixed.pcf"), kMixedPcf);
  const Trace whole = read_trace(prv);
  // The regions in the order the tasks meet them (task 1's 7, 9 and 99 before task 4's), not
  // the file's; a part of task 1 alone defines them all the same.
  std::vector<std::string> names;
  for (const Region& r : whole.defs.regions) names.push_back(r.name);
  EXPECT_EQ(names, (std::vector<std::string>{"compute", "function 7", "function 9", "MPI call 99", "MPI_Send",
                                             "MPI_Comm_rank", "MPI_Allreduce", "MPI_Recv", "MPI_Bcast"}));
  const auto bcast_root = [](const Location& l) {
    for (const Event& e : l.events)
      if (e.kind == EventKind::CollEnd && e.op == MpiOp::Bcast) return e.peer;
    return kNoRank - 1;
  };
  EXPECT_EQ(bcast_root(whole.locations[1]), 3);
  EXPECT_EQ(read_trace_part(prv, 1, 2).locations[0], whole.locations[1]);
  // The weights: the records naming each task (a message 1 -> 3 counts for both).
  EXPECT_EQ(location_event_counts(prv), (std::vector<std::uint64_t>{10, 13, 9, 12}));
  expect_every_paraver_split(prv);
}

TEST(ParaverPart, RequestsCompletedWithoutStartAreCountedByTheirTasksPartAndSummed) {
  // Tasks 1 and 3 complete requests never started (1 and 2 of them), task 2 none: each part
  // counts its own tasks' (pass D), and the parts of every split sum to the whole reader's.
  test::ScratchDir dir("paraver_part_requests");
  const std::string prv = dir.path("req.prv");
  spit(prv,
       "#Paraver (01/01/70 at 00:00):100_ns:0:1:3(1:1,1:1,1:1)\n"
       "2:0:1:1:1:5:50000001:5:69000001:7\n"
       "2:0:1:1:1:6:50000001:0\n"
       "2:0:1:2:1:5:50000001:1\n"
       "2:0:1:2:1:6:50000001:0\n"
       "2:0:1:3:1:7:50000001:6:69000001:2:69000001:3\n"
       "2:0:1:3:1:8:50000001:0\n");
  SkippedKinds skipped;
  read_trace(prv, &skipped);
  EXPECT_EQ(skipped, (SkippedKinds{{"event type 69000001 (unlabelled) completing a request never started", 3}}));
  EXPECT_EQ(location_event_counts(prv), (std::vector<std::uint64_t>{2, 2, 2}));
  expect_every_paraver_split(prv);
}

TEST(ParaverPart, APartKeepsTheRecordsOfItsTasksOnly) {
  // Pairs kept for pass A: none for a part without tasks, and those of the whole read split
  // exactly among the parts of one task (each keeps its own, not another's).
  test::ScratchDir dir("paraver_part_kept");
  const std::string mixed = dir.path("mixed.prv");
  spit(mixed, kMixedPrv);
  write_paraver(read_trace((kScoreP / "npb-is.W.16" / "traces.otf2").string()), dir.path("is.prv"));
  const fs::path extrae = fs::path(WAITLAB_SOURCE_DIR) / "tests" / "data" / "extrae" / "epoch_2proc.prv.gz";
  for (const std::string& prv : {mixed, dir.path("is.prv"), extrae.string()}) {
    ParaverReadStats all;
    const Trace whole = read_paraver(prv, &all);
    EXPECT_GT(all.kept_pairs, 0u) << prv;
    std::uint64_t sum = 0;
    for (Rank k = 0; k < static_cast<Rank>(whole.ranks()); ++k) {
      ParaverReadStats none, one;
      const TracePart none_part = read_paraver_part(prv, k, k, &none);
      EXPECT_EQ(none.kept_pairs, 0u) << prv;
      const TracePart p = read_paraver_part(prv, k, k + 1, &one);
      EXPECT_LT(one.kept_pairs, all.kept_pairs) << prv;
      EXPECT_EQ(p.event_counts, none_part.event_counts) << prv;
      sum += one.kept_pairs;
    }
    EXPECT_EQ(sum, all.kept_pairs) << prv;
  }
}

// The message of reading `prv` whole, and that of every part of it (each must be the same).
void expect_every_part_reports(const std::string& prv, Rank ranks, const std::string& what) {
  const std::string serial = error_of([&] { read_trace(prv); });
  EXPECT_NE(serial.find(what), std::string::npos) << serial;
  for (Rank first = 0; first <= ranks; ++first)
    for (Rank last = first; last <= ranks; ++last)
      EXPECT_EQ(error_of([&] { read_trace_part(prv, first, last); }), serial) << "[" << first << ", " << last << ")";
}

TEST(ParaverPart, AMalformedLineIsReportedByEveryPartAsTheWholeReaderReportsIt) {
  // Every part reads every task's records (they define regions and roots): a defect in one
  // task's records, or in the header or communicator lines, fails every part with the serial
  // reader's message.
  test::ScratchDir dir("paraver_part_bad");
  const std::string prv = dir.path("bad.prv");
  const std::string good = kMixedPrv;
  const std::vector<std::pair<std::string, std::string>> defects = {
      {"2:4:1:3:1:20:50000001:2\n", "2:4:1:3:1:20:50000001:\n"},       // task 3: no value
      {"2:4:1:3:1:25:50000001:0\n", "2:4:1:3:1:2:50000001:0\n"},       // task 3: backwards
      {"1:3:1:2:2:0:500:7\n", "1:3:1:2:3:0:500:7\n"},                   // task 2: no thread 3
      {"3:1:1:1:1:16:17:4:1:3:1:20:22:64:5\n", "3:1:1:1:1:16:17:4:1:3:1:20:22:-64:5\n"},
      {"c:1:2:2:2:4\n", "c:1:2:2:2:5\n"},                               // a communicator
      {"1(5):1:4(", "1(5):1:4"},                                          // the header
  };
  for (const auto& [from, to] : defects) {
    std::string bad = good;
    bad.replace(bad.find(from), from.size(), to);
    spit(prv, bad);
    expect_every_part_reports(prv, 4, "bad.prv:");
  }
}

}  // namespace
}  // namespace waitlab::trace
