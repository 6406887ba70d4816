// The simulation's records kept on disk (sim/recording.hpp): whatever goes through the spill
// file comes back bit for bit, and the .wlt written from it is the one the in-memory trace gives.
#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <filesystem>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/trace/totals.hpp"
#include "analysis/trace/wlt.hpp"
#include "sim/recording.hpp"

namespace waitlab::sim {
namespace {

using trace::ComputeTruth;
using trace::Event;
using trace::EventKind;
using trace::MpiOp;

std::string spill_path() {
  static int n = 0;
  return (std::filesystem::temp_directory_path() /
          ("waitlab-test-records-" + std::to_string(::getpid()) + "-" + std::to_string(n++)))
      .string();
}

std::string bytes_of(const trace::Trace& t) {
  std::ostringstream out;
  trace::write_wlt(t, out);
  return out.str();
}

// Records at the edges of every field: -0.0, NaN with a payload, infinities, times going back,
// the largest integers, negative peers and tags, every flag bit.
std::vector<Event> odd_events() {
  const double nan = std::bit_cast<double>(0x7ff8000000abcdefull);
  std::vector<Event> v;
  v.push_back(trace::make_event(0.0, EventKind::Enter, MpiOp::Init, 3));
  v.push_back(trace::make_event(-0.0, EventKind::Send, MpiOp::Send, 0, 7, -5, ~std::uint64_t{0}, 0));
  v.push_back(trace::make_event(nan, EventKind::IsendStart, MpiOp::Isend, 4294967295u,
                                std::numeric_limits<std::int32_t>::min(),
                                std::numeric_limits<std::int32_t>::max(), 1, ~std::uint64_t{0}));
  v.push_back(trace::make_event(std::numeric_limits<double>::infinity(), EventKind::CollEnd, MpiOp::Alltoallv,
                                2, trace::kNoRank, 0, 12345, 67890));
  v.push_back(trace::make_event(1e-300, EventKind::Leave, MpiOp::Count_, 1));
  v.push_back(trace::make_event(-1.5, EventKind::IrecvComplete, MpiOp::Irecv, 0, 3, 9, 8, 2));
  v.back().flags = 0xFFFF;
  return v;
}

std::vector<ComputeTruth> odd_truth() {
  std::vector<ComputeTruth> v(3);
  v[0].start = 0.5;
  v[0].end = 0.25;  // ends before it starts: kept as given
  v[0].nominal = -0.0;
  v[0].injected = {0.0, -0.0, std::bit_cast<double>(0x7ff0000000000001ull)};
  v[0].region = 4294967295u;
  v[0].iteration = std::numeric_limits<std::int32_t>::min();
  v[1].start = std::numeric_limits<double>::max();
  v[1].end = 1.0;
  v[1].injected = {1e-9, 2e-9, 3e-9};
  v[2].iteration = std::numeric_limits<std::int32_t>::max();
  return v;
}

// A head and the same trace in memory, and a Recording of it; `buffer` bytes of buffers.
struct Both {
  trace::Trace memory;
  trace::Trace head;
};

Both random_trace(std::size_t ranks, std::size_t per_rank, unsigned seed) {
  std::mt19937_64 rng(seed);
  Both b;
  b.head.has_truth = true;
  b.head.defs.region("work");
  b.head.defs.comms.push_back({"MPI_COMM_WORLD", {}});
  for (std::size_t r = 0; r < ranks; ++r) b.head.defs.comms[0].members.push_back(static_cast<trace::Rank>(r));
  b.head.attributes = {{"name", "spill"}, {"ranks", std::to_string(ranks)}};
  b.memory = b.head;
  b.memory.locations.resize(ranks);
  for (std::size_t r = 0; r < ranks; ++r) {
    auto& l = b.memory.locations[r];
    l.rank = static_cast<trace::Rank>(r);
    double t = 0;
    const std::size_t n = per_rank + rng() % (per_rank + 1);  // uneven ranks
    for (std::size_t k = 0; k < n; ++k) {
      t += static_cast<double>(rng() % 1000) * 1e-7;
      Event e =
          trace::make_event(t, static_cast<EventKind>(rng() % 10), static_cast<MpiOp>(rng() % 27),
                            static_cast<std::uint32_t>(rng() % 5), static_cast<trace::Rank>(rng() % ranks),
                            static_cast<std::int32_t>(rng() % 100) - 50, rng() % (1u << 20), rng() % 1000);
      l.events.push_back(e);
      if (k % 3 == 0) {
        ComputeTruth c;
        c.start = t;
        c.end = t + 1e-6 * static_cast<double>(rng() % 7);
        c.nominal = 1e-6;
        if (rng() % 4 == 0) c.injected[rng() % 3] = 1e-7 * static_cast<double>(1 + rng() % 9);
        c.iteration = static_cast<std::int32_t>(k / 3);
        l.truth.push_back(c);
      }
    }
  }
  return b;
}

void record(Recording& rec, const trace::Trace& t) {
  // Interleaved across ranks, as the simulation appends them.
  std::vector<std::size_t> e(t.locations.size()), c(t.locations.size());
  for (bool more = true; more;) {
    more = false;
    for (std::size_t r = 0; r < t.locations.size(); ++r) {
      const auto& l = t.locations[r];
      if (e[r] < l.events.size()) rec.event(static_cast<trace::Rank>(r), l.events[e[r]++]);
      if (c[r] < l.truth.size()) rec.truth(static_cast<trace::Rank>(r), l.truth[c[r]++]);
      more = more || e[r] < l.events.size() || c[r] < l.truth.size();
    }
  }
}

std::string written(Recording& rec, const trace::Trace& head, trace::RecordTotals* totals = nullptr) {
  std::ostringstream out;
  const trace::RecordTotals t = rec.write_wlt(head, out);
  if (totals != nullptr) *totals = t;
  return out.str();
}

TEST(RecordSpill, EveryFieldComesBackBitForBit) {
  trace::Trace head;
  head.has_truth = true;
  head.defs.comms.push_back({"MPI_COMM_WORLD", {0}});
  trace::Trace memory = head;
  memory.locations.resize(1);
  memory.locations[0].events = odd_events();
  memory.locations[0].truth = odd_truth();
  Recording rec(spill_path(), 1, 1);  // two records a buffer: everything but the tail goes to disk
  EXPECT_EQ(rec.event_capacity(), 2u);
  record(rec, memory);
  EXPECT_GT(rec.spilled_bytes(), 0u);
  EXPECT_EQ(written(rec, head), bytes_of(memory));
  // Read twice (totals() after write_wlt): the same records (NaN injected: compared bit for bit).
  const trace::RecordTotals got = rec.totals();
  const trace::RecordTotals want = trace::totals(memory);
  EXPECT_EQ(got.compute_intervals, 3u);
  EXPECT_EQ(std::bit_cast<std::uint64_t>(got.last_event), std::bit_cast<std::uint64_t>(want.last_event));
  EXPECT_EQ(std::bit_cast<std::uint64_t>(got.first_event), std::bit_cast<std::uint64_t>(want.first_event));
  for (std::size_t k = 0; k < trace::kCauseCount; ++k)
    EXPECT_EQ(std::bit_cast<std::uint64_t>(got.injected_by_rank[k][0]),
              std::bit_cast<std::uint64_t>(want.injected_by_rank[k][0]));
}

TEST(RecordSpill, ManyRanksThroughTinyAndDefaultBuffersWriteTheSameFile) {
  const Both b = random_trace(37, 300, 11);
  const std::string expected = bytes_of(b.memory);
  for (const std::size_t buffer : {std::size_t{1}, std::size_t{37 * 40 * 7}, Recording::kBufferBytes}) {
    SCOPED_TRACE("buffer " + std::to_string(buffer));
    Recording rec(spill_path(), 37, buffer);
    record(rec, b.memory);
    if (buffer < Recording::kBufferBytes) {
      EXPECT_GT(rec.spilled_bytes(), 0u);
    } else {
      EXPECT_EQ(rec.spilled_bytes(), 0u);  // 300–600 events a rank fit the default buffers
    }
    trace::RecordTotals totals;
    EXPECT_EQ(written(rec, b.head, &totals), expected);
    EXPECT_TRUE(totals == trace::totals(b.memory));
    EXPECT_TRUE(rec.totals() == totals);
  }
}

TEST(RecordSpill, SpilledRecordsTakeFarLessThanTheirFileRecords) {
  // Times a microsecond apart, small peers, tags and sizes: a simulation's events.
  const Both b = random_trace(8, 5000, 3);
  Recording rec(spill_path(), 8, 1);
  record(rec, b.memory);
  std::size_t truths = 0;
  for (const auto& l : b.memory.locations) truths += l.truth.size();
  const double file =
      static_cast<double>(b.memory.event_count() * sizeof(Event) + truths * sizeof(ComputeTruth));
  // An event: 2 B kind and op, ~6 B time, 1 B communicator, peer and tag, 3 B size, 2 B
  // request: ~16 B of its 40; a truth record ~22 B of its 56.
  EXPECT_LT(static_cast<double>(rec.spilled_bytes()), 0.5 * file);
  EXPECT_GT(static_cast<double>(rec.spilled_bytes()), 0.3 * file);
}

TEST(RecordSpill, TimesChangedLaterAndTheLastEventAreApplied) {
  Both b = random_trace(3, 50, 5);
  Recording rec(spill_path(), 3, 1);
  record(rec, b.memory);
  // An event long spilled, one still buffered, one changed twice (the later value wins).
  for (trace::Rank r = 0; r < 3; ++r) {
    auto& ev = b.memory.locations[static_cast<std::size_t>(r)].events;
    ASSERT_EQ(rec.events(r), ev.size());
    const std::uint64_t last = ev.size() - 1;
    rec.set_time(r, 4, 42.0 + r);
    ev[4].time = 42.0 + r;
    rec.set_time(r, last, 7.0);
    rec.set_time(r, 1, 1.0);
    rec.set_time(r, 1, 2.0);
    ev[last].time = 7.0;
    ev[1].time = 2.0;
    rec.last_event(r).flags |= trace::kTestedComplete;
    ev[last].flags |= trace::kTestedComplete;
  }
  EXPECT_EQ(written(rec, b.head), bytes_of(b.memory));
}

TEST(RecordSpill, AnUnwritableSpillFileIsAnErrorNamingIt) {
  try {
    Recording rec("/nonexistent-dir/records", 2);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(
        std::string(e.what()).find("cannot create the simulation's record file /nonexistent-dir/records"),
        std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace waitlab::sim
