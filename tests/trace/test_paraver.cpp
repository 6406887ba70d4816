// Tests of the Paraver writer and reader: an exact round trip of every event kind,
// byte-identical re-writes, what the writer reports as lost, Fixture D as Extrae writes it,
// Extrae's request rule without waitlab's events, and the errors for malformed input.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "util/error.hpp"
#include "analysis/trace/paraver.hpp"
#include "analysis/trace/trace_io.hpp"
#include "tests/temp_dir.hpp"

namespace waitlab::trace {
namespace {

namespace fs = std::filesystem;

const std::string kData = WAITLAB_SOURCE_DIR "/tests/data/";

// A scratch directory per test (tests/temp_dir.hpp).
struct TempDir : test::ScratchDir {
  explicit TempDir(const std::string& name) : test::ScratchDir("paraver_" + name) {}
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void spit(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary);
  out << content;
}

constexpr Time us(double v) {
  return v * 1e-6;
}

// Builds a trace event by event, with the fields the simulator records.
struct Builder {
  Trace t;
  explicit Builder(int ranks) {
    for (Rank r = 0; r < ranks; ++r) { Location l; l.rank = r; t.locations.push_back(std::move(l)); }
  }
  void add(Rank r, Event e) { t.locations[static_cast<std::size_t>(r)].events.push_back(e); }
  void enter(Rank r, Time at, MpiOp op) { add(r, make_event(at, EventKind::Enter, op, t.defs.mpi_region(op))); }
  void leave(Rank r, Time at, MpiOp op) { add(r, make_event(at, EventKind::Leave, op, t.defs.mpi_region(op))); }
  void user(Rank r, Time at, bool in, RegionId id) {
    add(r, make_event(at, in ? EventKind::Enter : EventKind::Leave, MpiOp::None, id));
  }
  void send(Rank r, Time at, Time until, MpiOp op, Rank to, std::int32_t tag, std::uint64_t bytes) {
    enter(r, at, op);
    add(r, make_event(at, EventKind::Send, op, kCommWorld, to, tag, bytes));
    leave(r, until, op);
  }
  void recv(Rank r, Time at, Time until, Rank from, std::int32_t tag, std::uint64_t bytes) {
    enter(r, at, MpiOp::Recv);
    add(r, make_event(until, EventKind::Recv, MpiOp::Recv, kCommWorld, from, tag, bytes));
    leave(r, until, MpiOp::Recv);
  }
  void coll(Rank r, Time at, Time until, MpiOp op, CommId comm, Rank root, std::uint64_t sent, std::uint64_t got) {
    enter(r, at, op);
    add(r, make_event(at, EventKind::CollBegin, op, comm));
    add(r, make_event(until, EventKind::CollEnd, op, comm, root, 0, sent, got));
    leave(r, until, op);
  }
};

// Three ranks; every event kind; user regions nested and interleaved with MPI region ids;
// a collective on a sub-communicator listed out of rank order.
Trace every_kind() {
  Builder b(3);
  Definitions& d = b.t.defs;
  d.mpi_region(MpiOp::Init);
  const RegionId main = d.region("main");
  const RegionId solve = d.region("solve");
  d.mpi_region(MpiOp::Finalize);
  d.region("never used");
  d.comms.push_back(Communicator{"MPI_COMM_WORLD", {0, 1, 2}});
  d.comms.push_back(Communicator{"communicator 2", {2, 0}});
  for (Rank r = 0; r < 3; ++r) {
    b.enter(r, 0, MpiOp::Init);
    b.leave(r, us(10), MpiOp::Init);
    b.user(r, us(10), true, main);
    b.user(r, us(12), true, solve);
  }
  // rank 0
  b.send(0, us(20), us(25), MpiOp::Send, 1, 1, 100);
  b.send(0, us(30), us(45), MpiOp::Ssend, 2, 2, 200);
  b.enter(0, us(50), MpiOp::Isend);
  b.add(0, make_event(us(50), EventKind::IsendStart, MpiOp::Isend, kCommWorld, 1, 3, 300, 0));
  b.leave(0, us(51), MpiOp::Isend);
  b.enter(0, us(52), MpiOp::Irecv);
  b.add(0, make_event(us(52), EventKind::IrecvPost, MpiOp::Irecv, kCommWorld, 1, 4, 400, 1));
  b.leave(0, us(53), MpiOp::Irecv);
  b.enter(0, us(54), MpiOp::Wait);
  b.add(0, make_event(us(60), EventKind::IsendComplete, MpiOp::Wait, kCommWorld, 1, 3, 300, 0));
  b.leave(0, us(60), MpiOp::Wait);
  b.enter(0, us(61), MpiOp::Waitall);
  b.add(0, make_event(us(70), EventKind::IrecvComplete, MpiOp::Waitall, kCommWorld, 1, 4, 400, 1));
  b.leave(0, us(70), MpiOp::Waitall);
  b.enter(0, us(80), MpiOp::Sendrecv);
  b.add(0, make_event(us(80), EventKind::Send, MpiOp::Sendrecv, kCommWorld, 2, 5, 500));
  b.add(0, make_event(us(90), EventKind::Recv, MpiOp::Sendrecv, kCommWorld, 2, 6, 600));
  b.leave(0, us(90), MpiOp::Sendrecv);
  // rank 1
  b.recv(1, us(15), us(25), 0, 1, 100);
  b.enter(1, us(40), MpiOp::Irecv);
  b.add(1, make_event(us(40), EventKind::IrecvPost, MpiOp::Irecv, kCommWorld, 0, 3, 300, 5));
  b.leave(1, us(41), MpiOp::Irecv);
  b.enter(1, us(42), MpiOp::Isend);
  b.add(1, make_event(us(42), EventKind::IsendStart, MpiOp::Isend, kCommWorld, 0, 4, 400, 6));
  b.leave(1, us(43), MpiOp::Isend);
  b.enter(1, us(44), MpiOp::Waitall);
  b.add(1, make_event(us(58), EventKind::IrecvComplete, MpiOp::Waitall, kCommWorld, 0, 3, 300, 5));
  b.add(1, make_event(us(58), EventKind::IsendComplete, MpiOp::Waitall, kCommWorld, 0, 4, 400, 6));
  b.leave(1, us(58), MpiOp::Waitall);
  // rank 2
  b.recv(2, us(35), us(45), 0, 2, 200);
  b.enter(2, us(70), MpiOp::Sendrecv);
  b.add(2, make_event(us(70), EventKind::Send, MpiOp::Sendrecv, kCommWorld, 0, 6, 600));
  b.add(2, make_event(us(85), EventKind::Recv, MpiOp::Sendrecv, kCommWorld, 0, 5, 500));
  b.leave(2, us(85), MpiOp::Sendrecv);
  // collectives
  const Time barrier[3] = {us(100), us(105), us(96)};
  const Time bcast[3] = {us(120), us(115), us(118)};
  const Time allreduce[3] = {us(140), us(145), us(142)};
  for (Rank r = 0; r < 3; ++r) {
    b.user(r, us(95), false, solve);
    b.coll(r, barrier[r], us(110), MpiOp::Barrier, kCommWorld, kNoRank, 0, 0);
    b.coll(r, bcast[r], us(130), MpiOp::Bcast, kCommWorld, 0, r == 0 ? 1000 : 0, r == 0 ? 0 : 1000);
    b.coll(r, allreduce[r], us(150), MpiOp::Allreduce, kCommWorld, kNoRank, 8, 8);
  }
  b.coll(2, us(155), us(170), MpiOp::Reduce, 1, 2, 16, 16);  // root: global rank 2, local rank 0
  b.coll(0, us(160), us(170), MpiOp::Reduce, 1, 2, 16, 0);
  for (Rank r = 0; r < 3; ++r) {
    b.user(r, us(180), false, main);
    b.enter(r, us(180 + r), MpiOp::Finalize);
    b.leave(r, us(190), MpiOp::Finalize);
  }
  return b.t;
}

// Every field equal, times within 1 ns.
void expect_same_events(const Trace& back, const Trace& t, bool compare_aux = true) {
  ASSERT_EQ(back.ranks(), t.ranks());
  for (std::size_t r = 0; r < t.ranks(); ++r) {
    const auto& a = back.locations[r].events;
    const auto& b = t.locations[r].events;
    EXPECT_EQ(back.locations[r].rank, static_cast<Rank>(r));
    ASSERT_EQ(a.size(), b.size()) << "rank " << r;
    for (std::size_t i = 0; i < a.size(); ++i) {
      SCOPED_TRACE("rank " + std::to_string(r) + ", event " + std::to_string(i) + " (" +
                   std::string(event_kind_name(b[i].kind)) + ")");
      EXPECT_NEAR(a[i].time, b[i].time, 1e-9);
      EXPECT_EQ(a[i].kind, b[i].kind);
      EXPECT_EQ(a[i].op, b[i].op);
      EXPECT_EQ(a[i].ref, b[i].ref);
      EXPECT_EQ(a[i].peer, b[i].peer);
      EXPECT_EQ(a[i].tag, b[i].tag);
      EXPECT_EQ(a[i].bytes, b[i].bytes);
      if (compare_aux) {
        EXPECT_EQ(a[i].aux, b[i].aux);
      }
      EXPECT_EQ(a[i].flags, b[i].flags);
    }
  }
}

TEST(Paraver, RoundTripKeepsEveryEventKind) {
  TempDir dir("roundtrip");
  const Trace t = every_kind();
  const auto lost = write_paraver(t, dir.path("t.prv"));
  EXPECT_TRUE(lost.empty()) << lost.front();
  ParaverReadStats st;
  const Trace back = read_paraver(dir.path("t.prv"), &st);
  // Paraver keeps everything of this trace (no ground truth, no attributes); times are
  // integer nanoseconds.
  EXPECT_EQ(back.defs, t.defs);
  EXPECT_FALSE(back.has_truth);
  EXPECT_TRUE(back.attributes.empty());
  expect_same_events(back, t);
  EXPECT_TRUE(st.waitlab_events);
  EXPECT_EQ(st.skipped_events, 0u);
  EXPECT_EQ(st.skipped_records, 0u);
  EXPECT_EQ(st.unmatched_comms, 0u);
  EXPECT_EQ(st.unknown_communicators, 0u);
  // 6 messages; states and events as written.
  const std::string prv = slurp(dir.path("t.prv"));
  EXPECT_EQ(prv.substr(0, prv.find('\n')), "#Paraver (01/01/70 at 00:00):190000_ns:1(3):1:3(1:1,1:1,1:1),2");
  EXPECT_NE(prv.find("\nc:1:1:3:1:2:3\nc:1:2:2:3:1\n"), std::string::npos);
  EXPECT_NE(prv.find("\n3:1:1:1:1:20000:20000:2:1:2:1:15000:25000:100:1\n"), std::string::npos);
  EXPECT_NE(prv.find("\n1:1:1:1:1:20000:25000:4\n"), std::string::npos);         // MPI_Send: blocking send
  EXPECT_NE(prv.find("\n2:1:1:1:1:20000:50000001:1:69000007:2:69000008:1\n"), std::string::npos);
  EXPECT_NE(prv.find("\n2:3:1:3:1:155000:50000002:9:50100001:16:50100002:16:50100004:2:50100003:1\n"),
            std::string::npos);  // MPI_Reduce on the root
  EXPECT_NE(prv.find("\n2:1:1:1:1:95000:60000019:2:69000006:3\n"), std::string::npos);  // solve left, main again
  EXPECT_EQ(read_paraver(dir.path("t.prv")), back);
}

TEST(Paraver, WritingTwiceGivesIdenticalFiles) {
  TempDir dir("twice");
  const Trace t = every_kind();
  write_paraver(t, dir.path("a.prv"));
  write_paraver(t, dir.path("b.prv"));
  for (const char* ext : {".prv", ".pcf", ".row"}) {
    const std::string a = slurp(dir.path(std::string("a") + ext));
    EXPECT_FALSE(a.empty()) << ext;
    EXPECT_EQ(a, slurp(dir.path(std::string("b") + ext))) << ext;
  }
  // Re-writing what was read gives the same files too.
  write_paraver(read_paraver(dir.path("a.prv")), dir.path("c.prv"));
  for (const char* ext : {".prv", ".pcf", ".row"})
    EXPECT_EQ(slurp(dir.path(std::string("c") + ext)), slurp(dir.path(std::string("a") + ext))) << ext;
  EXPECT_EQ(slurp(dir.path("a.row")),
            "LEVEL CPU SIZE 3\n1.waitlab\n2.waitlab\n3.waitlab\n\nLEVEL NODE SIZE 1\nwaitlab\n\n"
            "LEVEL THREAD SIZE 3\nTHREAD 1.1.1\nTHREAD 1.2.1\nTHREAD 1.3.1\n");
  const std::string pcf = slurp(dir.path("a.pcf"));
  EXPECT_NE(pcf.find("\n0    60000019    User function\nVALUES\n0      End\n2      main\n3      solve\n"
                     "5      never used\n"),
            std::string::npos);
  EXPECT_NE(pcf.find("\n13    Group Communication\n"), std::string::npos);
  EXPECT_NE(pcf.find("\n16    {66,66,66}\n"), std::string::npos);
}

TEST(Paraver, WriterReportsWhatParaverCannotHold) {
  TempDir dir("lost");
  Builder b(2);
  const RegionId main = b.t.defs.region("main");
  b.t.defs.comms.push_back(Communicator{"world", {0, 1}});
  b.t.attributes = {{"scenario", "demo"}};
  b.t.has_truth = true;
  b.user(0, 0, true, main);
  b.send(0, us(1), us(2), MpiOp::Send, 1, 9, 64);  // never received
  b.user(0, us(3), false, main);
  b.recv(1, us(1), us(4), 0, 3, 8);  // never sent
  ComputeTruth c;
  c.start = 0;
  c.end = us(1);
  b.t.locations[0].truth.push_back(c);
  const auto lost = write_paraver(b.t, dir.path("t.prv"));
  const std::vector<std::string> expected = {
      "ground truth: 1 compute intervals (not written)",
      "attributes: 1 (not written)",
      "1 communicator names (Paraver has none; read back as MPI_COMM_WORLD / \"communicator <id>\")",
      "1 point-to-point sends without a matching receive (lost: no communication record)",
      "1 point-to-point receives without a matching send (lost: no communication record)"};
  EXPECT_EQ(lost, expected);
  // What is left reads back: the calls without their lost events.
  const Trace back = read_paraver(dir.path("t.prv"));
  ASSERT_EQ(back.locations[0].events.size(), 4u);
  EXPECT_EQ(back.locations[0].events[1].kind, EventKind::Enter);
  EXPECT_EQ(back.locations[0].events[2].kind, EventKind::Leave);
  EXPECT_EQ(back.defs.comms[0].name, "MPI_COMM_WORLD");
}

TEST(Paraver, ALineLongerThan64MiBIsRefusedBeforeItIsHeld) {
  // One 4 GiB line in a 4 MB .prv.gz took 6.2 GB: the reader stops at 64 MiB.
  TempDir dir("longline");
  {
    std::ofstream f(dir.path("t.prv"), std::ios::binary);
    f << "#Paraver (01/01/2025 at 00:00):1000_ns:1(1):1:1(1:1)\n";
    f << "1:1:1:1:1:0:1000:1\n";
    const std::string chunk(std::size_t{1} << 20, 'x');
    for (int i = 0; i < 65; ++i) f << chunk;
    f << "\n";
  }
  try {
    (void)read_paraver(dir.path("t.prv"));
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), dir.path("t.prv") + ":3: a line longer than 64 MiB: a Paraver record is a few "
                                                          "hundred bytes");
  }
}

TEST(Paraver, WriterRejectsWhatItCannotWrite) {
  TempDir dir("reject");
  Builder b(1);
  b.t.defs.comms.push_back(Communicator{"MPI_COMM_WORLD", {0}});
  b.enter(0, -1, MpiOp::Init);
  try {
    write_paraver(b.t, dir.path("t.prv"));
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("t.prv: rank 0, event 0: time"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir.path("t.prv")));
  EXPECT_THROW(write_paraver(Trace{}, dir.path("t.prv")), InputError);
  Builder unsorted(1);
  unsorted.enter(0, 2, MpiOp::Init);
  unsorted.leave(0, 1, MpiOp::Init);
  EXPECT_THROW(write_paraver(unsorted.t, dir.path("t.prv")), InputError);
}

// Useful time of a rank: the time from its first to its last event minus the time inside
// MPI calls (Enter to Leave of regions with an MPI operation); T: from the earliest first
// event to the latest last event.
std::vector<double> useful(const Trace& t) {
  std::vector<double> u;
  for (const auto& l : t.locations) {
    double mpi = 0, entered = 0;
    for (const Event& e : l.events) {
      if ((e.kind != EventKind::Enter && e.kind != EventKind::Leave) || t.defs.regions[e.ref].op == MpiOp::None)
        continue;
      if (e.kind == EventKind::Enter) entered = e.time;
      else mpi += e.time - entered;
    }
    u.push_back(l.events.back().time - l.events.front().time - mpi);
  }
  return u;
}

TEST(Paraver, FixtureDAsExtraeWritesIt) {
  ParaverReadStats st;
  const Trace t = read_paraver(kData + "fixture_d.prv", &st);
  ASSERT_EQ(t.ranks(), 2u);
  const RegionId main = 0, send = 1, recv = 2;  // main from the .pcf, MPI regions as met
  ASSERT_EQ(t.defs.regions.size(), 3u);
  EXPECT_EQ(t.defs.regions[main], (Region{"main", MpiOp::None, ""}));
  EXPECT_EQ(t.defs.regions[send], (Region{"MPI_Send", MpiOp::Send, "MPI"}));
  EXPECT_EQ(t.defs.regions[recv], (Region{"MPI_Recv", MpiOp::Recv, "MPI"}));
  ASSERT_EQ(t.defs.comms.size(), 1u);
  EXPECT_EQ(t.defs.comms[0], (Communicator{"MPI_COMM_WORLD", {0, 1}}));
  const std::vector<Event> r0 = {
      make_event(0, EventKind::Enter, MpiOp::None, main),
      make_event(0.5, EventKind::Enter, MpiOp::Send, send),
      make_event(0.5, EventKind::Send, MpiOp::Send, kCommWorld, 1, 7, 1048576),
      make_event(0.51, EventKind::Leave, MpiOp::Send, send),
      make_event(0.6, EventKind::Leave, MpiOp::None, main)};
  const std::vector<Event> r1 = {
      make_event(0, EventKind::Enter, MpiOp::None, main),
      make_event(0.2, EventKind::Enter, MpiOp::Recv, recv),
      make_event(0.52, EventKind::Recv, MpiOp::Recv, kCommWorld, 0, 7, 1048576),
      make_event(0.52, EventKind::Leave, MpiOp::Recv, recv),
      make_event(0.62, EventKind::Leave, MpiOp::None, main)};
  // ns / 1e9 is the double nearest to each decimal time, so == holds.
  EXPECT_EQ(t.locations[0].events, r0);
  EXPECT_EQ(t.locations[1].events, r1);
  const auto u = useful(t);
  ASSERT_EQ(u.size(), 2u);
  EXPECT_NEAR(u[0], 0.59, 1e-12);
  EXPECT_NEAR(u[1], 0.30, 1e-12);
  EXPECT_NEAR(t.end_time() - t.begin_time(), 0.62, 1e-12);
  EXPECT_EQ(st.records, 15u);          // 6 state, 8 event, 1 communication
  EXPECT_EQ(st.skipped_events, 4u);    // the 40000001 "Application" events
  EXPECT_EQ(st.skipped_records, 0u);
  EXPECT_EQ(st.unmatched_comms, 0u);
  EXPECT_FALSE(st.waitlab_events);
}

// Removes the pairs of the given types from every event line (and lines left empty).
std::string without_types(const std::string& prv, const std::vector<std::string>& types) {
  std::istringstream in(prv);
  std::string out, line;
  while (std::getline(in, line)) {
    if (line.rfind("2:", 0) != 0) {
      out += line + "\n";
      continue;
    }
    std::vector<std::string> f;
    std::stringstream ls(line);
    for (std::string x; std::getline(ls, x, ':');) f.push_back(x);
    std::string kept;
    for (std::size_t i = 6; i + 1 < f.size(); i += 2)
      if (std::find(types.begin(), types.end(), f[i]) == types.end()) kept += ":" + f[i] + ":" + f[i + 1];
    if (kept.empty()) continue;
    for (std::size_t i = 0; i < 6; ++i) out += (i ? ":" : "") + f[i];
    out += kept + "\n";
  }
  return out;
}

TEST(Paraver, RequestsCompleteByExtraesRuleWithoutWaitlabEvents) {
  TempDir dir("fallback");
  const Trace t = every_kind();
  write_paraver(t, dir.path("t.prv"));
  spit(dir.path("x.prv"), without_types(slurp(dir.path("t.prv")), {"69000001", "69000002"}));
  fs::copy_file(dir.path("t.pcf"), dir.path("x.pcf"));
  ParaverReadStats st;
  const Trace back = read_paraver(dir.path("x.prv"), &st);
  EXPECT_FALSE(st.waitlab_events);
  // An Isend completes in the next wait that completes no receive (rank 0's MPI_Wait, at its
  // Leave), or in the next MPI_Waitall; an Irecv where its message arrives (rank 0's
  // MPI_Waitall at 70 us, rank 1's at 58 us). Only the request ids differ: numbered per rank.
  expect_same_events(back, t, false);
  const auto aux = [&](std::size_t r, EventKind k) {
    std::vector<std::uint64_t> v;
    for (const Event& e : back.locations[r].events)
      if (e.kind == k) v.push_back(e.aux);
    return v;
  };
  EXPECT_EQ(aux(0, EventKind::IsendStart), std::vector<std::uint64_t>{0});
  EXPECT_EQ(aux(0, EventKind::IrecvComplete), std::vector<std::uint64_t>{1});
  EXPECT_EQ(aux(1, EventKind::IrecvPost), std::vector<std::uint64_t>{0});
  EXPECT_EQ(aux(1, EventKind::IsendComplete), std::vector<std::uint64_t>{1});
}

TEST(Paraver, ExtraThreadsAreReadAsThreadLocations) {
  TempDir dir("threads");
  spit(dir.path("t.prv"),
       "#Paraver (01/01/70 at 00:00):100:0:1:2(2:1,1:1)\n"
       "1:1:1:1:2:0:100:1\n"
       "2:1:1:1:2:5:50000001:1\n"
       "2:1:1:1:1:10:50000003:31\n"
       "4:1:1:1:1:10:whatever\n"
       "# a comment\n"
       "\n"
       "2:1:1:1:2:15:50000001:0\n"
       "2:1:1:1:1:20:50000003:0\n");
  ParaverReadStats st;
  const Trace t = read_paraver(dir.path("t.prv"), &st);
  EXPECT_EQ(st.locations, 3u);
  EXPECT_EQ(st.worker_mpi_calls, 1u);
  EXPECT_EQ(st.skipped_records, 1u);  // the global op
  ASSERT_EQ(st.skipped.size(), 1u);
  EXPECT_EQ(st.skipped[0], (std::pair<std::string, std::uint64_t>{"global-op records (type 4)", 1}));
  ASSERT_EQ(t.ranks(), 2u);
  ASSERT_EQ(t.locations[0].events.size(), 2u);
  EXPECT_DOUBLE_EQ(t.locations[0].events[0].time, 10e-6);  // no unit: microseconds
  EXPECT_EQ(t.defs.regions[t.locations[0].events[0].ref].name, "MPI_Init");
  EXPECT_TRUE(t.locations[1].events.empty());
  // Thread 2 of task 1: its MPI_Send as a region, no message.
  ASSERT_EQ(t.threads.size(), 1u);
  EXPECT_EQ(t.threads[0].rank, 0);
  EXPECT_EQ(t.threads[0].thread, 1);
  ASSERT_EQ(t.threads[0].events.size(), 2u);
  EXPECT_EQ(t.threads[0].events[0], make_event(5e-6, EventKind::Enter, MpiOp::Send, t.threads[0].events[0].ref));
  EXPECT_EQ(t.threads[0].events[1], make_event(15e-6, EventKind::Leave, MpiOp::Send, t.threads[0].events[0].ref));
  EXPECT_EQ(t.defs.regions[t.threads[0].events[0].ref].name, "MPI_Send");
  // Time no state record covers is kStateNoRecord: task 1 thread 1 and task 2 have none.
  EXPECT_EQ(t.locations[0].states, (std::vector<StateInterval>{{0, 100e-6, kStateNoRecord}}));
  EXPECT_TRUE(t.threads[0].states.empty());  // Running throughout
  EXPECT_EQ(t.origin, Origin::Extrae);
  EXPECT_DOUBLE_EQ(t.span_end, 100e-6);
  EXPECT_EQ(t.defs.comms.size(), 1u);  // MPI_COMM_WORLD synthesized
}

std::string read_error(const std::string& path) {
  try {
    read_paraver(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

// A trace whose records stop well before the end its header declares (cut at a line end)
// reads, with a warning: more than 1 % of the declared end.
TEST(Paraver, RecordsStoppingBeforeTheDeclaredEndAreAWarning) {
  TempDir dir("ends_early");
  const std::string prv = slurp(kData + "fixture_d.prv");
  const std::string header = "620000000_ns";
  ASSERT_NE(prv.find(header), std::string::npos);
  const auto with_end = [&](const std::string& end) {
    std::string p = prv;
    p.replace(p.find(header), header.size(), end + "_ns");
    const std::string path = dir.path(end + ".prv");
    spit(path, p);
    ParaverReadStats st;
    (void)read_paraver(path, &st);
    return std::make_pair(path, st);
  };
  // As written: the last records (state ends, events) are at the declared end.
  ParaverReadStats st;
  (void)read_paraver(kData + "fixture_d.prv", &st);
  EXPECT_EQ(st.declared_end, 0.62);
  EXPECT_EQ(st.last_record_time, 0.62);
  EXPECT_FALSE(st.ends_early);
  EXPECT_EQ(paraver_ends_early(kData + "fixture_d.prv", st), "");
  // 80 ms of 700 ms without records.
  const auto [path, late] = with_end("700000000");
  EXPECT_EQ(late.declared_end, 0.7);
  EXPECT_EQ(late.last_record_time, 0.62);
  EXPECT_TRUE(late.ends_early);
  EXPECT_EQ(
      paraver_ends_early(path, late),
      path +
          ": the records stop at 0.62 s, 0.08 s (11.4286 %) before the end time the header declares (0.7 s): "
          "the trace may have been cut short, and its metrics count the time after its last record as idle");
  // read_trace() passes it on.
  std::vector<std::string> warnings;
  (void)read_trace(path, nullptr, &warnings);
  EXPECT_EQ(warnings, std::vector<std::string>{paraver_ends_early(path, late)});
  warnings.clear();
  (void)read_trace(kData + "fixture_d.prv", nullptr, &warnings);
  EXPECT_TRUE(warnings.empty());
  // The threshold: 6.2 ms of 626.2 ms (0.99 %) is not well before, 6.3 ms of 626.3 ms (1.006 %) is.
  EXPECT_FALSE(with_end("626200000").second.ends_early);
  EXPECT_TRUE(with_end("626300000").second.ends_early);
}

TEST(Paraver, BadHeader) {
  const std::string msg = read_error(kData + "paraver_bad_header.prv");
  EXPECT_NE(msg.find("paraver_bad_header.prv:1: bad Paraver header"), std::string::npos) << msg;
  EXPECT_NE(msg.find("as many as the number of tasks"), std::string::npos) << msg;
}

TEST(Paraver, MalformedLinesNameFileAndLine) {
  TempDir dir("bad");
  const std::string head = "#Paraver (01/01/70 at 00:00):1000_ns:1(2):1:2(1:1,1:1),1\nc:1:1:2:1:2\n";
  struct Case {
    std::string body;
    std::string line;
    std::string what;
  };
  const std::vector<Case> cases = {
      {"1:1:1:1:1:0:10\n", "3", "expected 8 fields"},
      {"2:1:1:1:1:0:50000001\n", "3", "an even number of at least 8 fields"},
      {"2:1:1:1:1:0:50000001:1:7\n", "3", "an even number of at least 8 fields"},
      {"3:1:1:1:1:0:0:2:1:2:1:0:5:8\n", "3", "expected 15 fields"},
      {"2:1:1:1:1:0:50000001:1\n9:1:1\n", "4", "unknown record type '9'"},
      {"2:1:1:1:1:x1:50000001:1\n", "3", "expected the time (an integer), found 'x1'"},
      {"2:1:1:1:1:10:50000001:\n", "3", "expected an event value (an integer), found ''"},
      {"2:1:1:3:1:10:50000001:1\n", "3", "task 3 out of range (the header declares 2 tasks)"},
      {"2:1:1:0:1:10:50000001:1\n", "3", "task 0 out of range"},
      {"2:1:1:1:2:10:50000001:1\n", "3", "thread 2 out of range"},
      {"2:1:2:1:1:10:50000001:1\n", "3", "application 2 out of range"},
      {"2:9:1:1:1:10:50000001:1\n", "3", "CPU 9 out of range"},
      {"2:1:1:1:1:20:50000001:1\n2:1:1:1:1:10:50000001:0\n", "4", "time 10 goes backwards"},
      {"1:1:1:1:1:20:10:1\n", "3", "end time 10 before the begin time 20"},
      {"2:1:1:1:1:-5:50000001:1\n", "3", "the time -5 is negative"},
      {"2:1:1:1:1:99999999999999999999:50000001:1\n", "3", "the time out of range"},
      {"3:1:1:1:1:0:0:1:1:2:1:0:5:-8:1\n", "3", "negative size"},
      {"c:1:2:1:1\n", "3", "communicator line after the records"},
  };
  for (const auto& c : cases) {
    const std::string path = dir.path("bad.prv");
    spit(path, head + c.body);
    const std::string msg = read_error(path);
    EXPECT_NE(msg.find(path + ":" + c.line + ": "), std::string::npos) << c.body << " -> " << msg;
    EXPECT_NE(msg.find(c.what), std::string::npos) << c.body << " -> " << msg;
  }
  const std::vector<Case> headers = {
      {"", "1", "empty file"},
      {"1:1:1:1:1:0:10:1\n", "1", "it does not start with '#Paraver'"},
      {"#Paraver (01/01/70 at 00:00):1000_xs:0:1:1(1:0)\n", "1", "unknown time unit"},
      {"#Paraver (01/01/70 at 00:00):1000_ns:0:2:1(1:0):1(1:0)\n", "1", "exactly one application"},
      {"#Paraver (01/01/70 at 00:00):1000_ns:0:1:1(1:0),2\nc:1:1:1:1\n2:1:1:1:1:0:1:1\n", "3",
       "expected a communicator line"},
      {"#Paraver (01/01/70 at 00:00):1000_ns:0:1:1(1:0),1\n", "2", "expected 1 communicator lines"},
      {"#Paraver (01/01/70 at 00:00):1000_ns:0:1:1(1:0),1\nc:1:1:1:2\n", "2", "task 2 out of range"},
      {"#Paraver (01/01/70 at 00:00):1000_ns:0:1:1(1:0),1\nc:1:1:2:1\n", "2", "expected 2 tasks after the count"},
      {"#Paraver (01/01/70 at 00:00):1000_ns:0:1:2(1:0,1:0),2\nc:1:1:1:1\nc:1:1:1:2\n", "3", "declared twice"},
      {"#Paraver (01/01/70 at 00:00):1000_ns:0:1:2(1:0,1:0)junk\n", "1", "expected ','"},
  };
  for (const auto& c : headers) {
    const std::string path = dir.path("hdr.prv");
    spit(path, c.body);
    const std::string msg = read_error(path);
    EXPECT_NE(msg.find(path + ":" + c.line + ": "), std::string::npos) << c.body << " -> " << msg;
    EXPECT_NE(msg.find(c.what), std::string::npos) << c.body << " -> " << msg;
  }
}

TEST(Paraver, MissingFileIsNamed) {
  const std::string path = "/nonexistent/waitlab/trace.prv";
  const std::string msg = read_error(path);
  EXPECT_NE(msg.find("cannot read " + path), std::string::npos) << msg;
}

TEST(Paraver, TruncatedFilesFailCleanlyOrReadTheCompleteLines) {
  TempDir dir("truncated");
  write_paraver(every_kind(), dir.path("t.prv"));
  const std::string prv = slurp(dir.path("t.prv"));
  const std::string path = dir.path("cut.prv");
  int errors = 0, reads = 0;
  for (std::size_t n = 0; n < prv.size(); n += 5) {
    spit(path, prv.substr(0, n));
    try {
      const Trace t = read_paraver(path);
      ++reads;
      EXPECT_EQ(t.ranks(), 3u);
    } catch (const InputError& e) {
      ++errors;
      EXPECT_NE(std::string(e.what()).find(path + ":"), std::string::npos) << e.what();
    }
  }
  EXPECT_GT(errors, 0);
  EXPECT_GT(reads, 0);
  // A cut in the middle of a number of the last line reads that shorter number: the record
  // is complete as far as the format can tell, or fails its field count.
  spit(path, prv.substr(0, prv.rfind('\n', prv.size() - 2) + 1));
  EXPECT_NO_THROW(read_paraver(path));
}

TEST(Paraver, CorruptedFilesNeverCrash) {
  TempDir dir("corrupt");
  write_paraver(every_kind(), dir.path("t.prv"));
  const std::string prv = slurp(dir.path("t.prv"));
  const std::string path = dir.path("bad.prv");
  fs::copy_file(dir.path("t.pcf"), dir.path("bad.pcf"));
  std::mt19937 rng(12345);
  const std::string alphabet = "0123456789:-\n2134cx ";
  int errors = 0;
  for (int round = 0; round < 400; ++round) {
    std::string s = prv;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < edits; ++k) {
      const std::size_t at = rng() % s.size();
      switch (rng() % 3) {
        case 0: s[at] = alphabet[rng() % alphabet.size()]; break;
        case 1: s.erase(at, 1 + rng() % 8); break;
        default: s.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
      }
    }
    spit(path, s);
    try {
      read_paraver(path);
    } catch (const InputError& e) {
      ++errors;
      EXPECT_NE(std::string(e.what()).find(path + ":"), std::string::npos) << e.what();
    }
  }
  EXPECT_GT(errors, 100);
}

TEST(Paraver, DeepRegionNestingIsRefusedAtItsLine) {
  TempDir dir("deep");
  const std::string head = "#Paraver (01/01/70 at 00:00):1000_ns:0:1:1(1:0)\n";
  const std::string path = dir.path("deep.prv");
  // A million nested user regions on one line: refused where they pass the limit's depth.
  std::string line = "2:1:1:1:1:10";
  for (int i = 0; i < 1000000; ++i) line += ":60000019:" + std::to_string(i % 50 + 1);
  spit(path, head + line + "\n");
  EXPECT_EQ(read_error(path), path +
                                  ":2: event record: user regions (event type 60000019) of task 1 thread 1 nested "
                                  "1000000 deep, deeper than the 4096 levels a trace may have");
  // One more level per line: refused at the line that passes kMaxRegionDepth.
  std::string body;
  for (std::size_t i = 0; i <= kMaxRegionDepth; ++i) body += "2:1:1:1:1:" + std::to_string(i) + ":60000019:7\n";
  spit(path, head + body);
  EXPECT_EQ(read_error(path), path + ":" + std::to_string(kMaxRegionDepth + 2) +
                                  ": event record: user regions (event type 60000019) of task 1 thread 1 nested 4097 "
                                  "deep, deeper than the 4096 levels a trace may have");
  // Exactly the limit reads, and so does a long line of regions entered and left.
  body.clear();
  for (std::size_t i = 0; i < kMaxRegionDepth; ++i) body += "2:1:1:1:1:" + std::to_string(i) + ":60000019:7\n";
  spit(path, head + body);
  EXPECT_EQ(read_paraver(path).locations[0].events.size(), kMaxRegionDepth);
  line = "2:1:1:1:1:10";
  for (int i = 0; i < 100000; ++i) line += ":60000019:3:60000019:0";
  spit(path, head + line + "\n");
  EXPECT_EQ(read_paraver(path).locations[0].events.size(), 200000u);
  // waitlab's own Leave lines (60000019 naming the enclosing region, 69000006 the one left)
  // leave a level: deep recursion that returns stays within the limit.
  body.clear();
  for (int round = 0; round < 3; ++round)
    for (std::size_t i = 0; i < kMaxRegionDepth; ++i) {
      const std::size_t t = (round * 2 * kMaxRegionDepth + 2 * i) * 10;
      body += "2:1:1:1:1:" + std::to_string(t) + ":60000019:7\n";
      body += "2:1:1:1:1:" + std::to_string(t + 10) + ":60000019:0:69000006:7\n";
    }
  spit(path, head + body);
  EXPECT_EQ(read_paraver(path).locations[0].events.size(), 6 * kMaxRegionDepth);
}

TEST(Paraver, HugeNumbersAreOutOfRangeNotWrapped) {
  TempDir dir("huge");
  const std::string head = "#Paraver (01/01/70 at 00:00):1000_ns:0:1:1(1:0)\n";
  struct Case {
    std::string text;
    std::string error;  // after "<path>:"
  };
  const std::string n30 = "123456789012345678901234567890";
  const std::vector<Case> cases = {
      {head + "2:1:1:1:1:10:" + n30 + ":1\n", "2: event record: an event type out of range: '" + n30 + "'"},
      {head + "2:1:1:1:1:10:50000001:" + n30 + "\n", "2: event record: an event value out of range: '" + n30 + "'"},
      {head + "2:1:1:1:1:10:50000001:-" + n30 + "\n", "2: event record: an event value out of range: '-" + n30 + "'"},
      {head + "2:1:1:" + n30 + ":1:10:50000001:1\n", "2: event record: a task out of range: '" + n30 + "'"},
      {head + "2:" + n30 + ":1:1:1:10:50000001:1\n", "2: event record: a CPU out of range: '" + n30 + "'"},
      {head + "1:1:1:1:1:0:" + n30 + ":1\n", "2: state record: the end time out of range: '" + n30 + "'"},
      {head + "1:1:1:1:1:0:10:" + n30 + "\n", "2: state record: a state out of range: '" + n30 + "'"},
      {head + "1:1:1:1:1:0:10:4294967296\n", "2: state record: state 4294967296 out of range"},
      {head + "3:1:1:1:1:0:0:1:1:1:1:0:5:" + n30 + ":1\n",
       "2: communication record: the size out of range: '" + n30 + "'"},
      {head + "3:1:1:1:1:0:0:1:1:1:1:0:5:8:2147483648\n", "2: communication record: tag 2147483648 out of range"},
  };
  const std::string path = dir.path("huge.prv");
  for (const auto& c : cases) {
    spit(path, c.text);
    EXPECT_EQ(read_error(path), path + ":" + c.error) << c.text;
  }
  // Header fields: the end time, a thread count, the communicator count.
  const std::vector<std::string> headers = {
      "#Paraver (01/01/70 at 00:00):" + n30 + "_ns:0:1:1(1:0)\n",
      "#Paraver (01/01/70 at 00:00):1000_ns:0:1:1(" + n30 + ":0)\n",
      "#Paraver (01/01/70 at 00:00):1000_ns:0:1:1(1:0)," + n30 + "\n",
      "#Paraver (01/01/70 at 00:00):1000_ns:" + n30 + "(1):1:1(1:0)\n",
  };
  for (const auto& h : headers) {
    spit(path, h);
    const std::string msg = read_error(path);
    EXPECT_EQ(msg.rfind(path + ":1: bad Paraver header", 0), 0u) << msg;
    EXPECT_NE(msg.find("out of range: '" + n30 + "'"), std::string::npos) << msg;
  }
  // A thread count in range that no file could fill: refused before anything is allocated.
  spit(path, "#Paraver (01/01/70 at 00:00):1000_ns:0:1:1(1000000000000:0)\n");
  EXPECT_EQ(read_error(path), path + ":1: the header declares more than 1048576 threads in all");
  // The largest end time reads as a finite span.
  spit(path, "#Paraver (01/01/70 at 00:00):9223372036854775807_ns:0:1:1(1:0)\n2:1:1:1:1:9223372036854775807:60000019:1\n");
  const Trace t = read_paraver(path);
  EXPECT_TRUE(std::isfinite(t.span_end));
  EXPECT_TRUE(std::isfinite(t.locations[0].events[0].time));
}

TEST(Paraver, HostilePcfIsIgnoredInLinearTime) {
  TempDir dir("pcf");
  const std::string path = dir.path("t.prv");
  spit(path, "#Paraver (01/01/70 at 00:00):1000_ns:0:1:1(1:0)\n2:1:1:1:1:10:60000019:5\n2:1:1:1:1:20:60000019:0\n");
  // 50,000 type lines and 50,000 value lines in one block (each value once per type would be
  // 2.5e9 steps), labels of 30-digit numbers, and lines that do not parse.
  std::string pcf = "EVENT_TYPE\n";
  for (int i = 0; i < 50000; ++i) pcf += "0 60000019 User function\n";
  pcf += "VALUES\n";
  for (int i = 0; i < 50000; ++i) pcf += std::to_string(i) + " f" + std::to_string(i) + "\n";
  pcf += "123456789012345678901234567890 too big\n\nEVENT_TYPE\n0 123456789012345678901234567890 huge\n9 x\n"
         "VALUES\n1 :\n";
  spit(dir.path("t.pcf"), pcf);
  const Trace t = read_paraver(path);
  const auto id = t.defs.find_region("f5");
  ASSERT_GE(id, 0);
  EXPECT_EQ(t.locations[0].events[0].ref, static_cast<RegionId>(id));
}

}  // namespace
}  // namespace waitlab::trace
