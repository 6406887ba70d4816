// Time-resolved efficiency on the replay engine (analysis/timeresolved, issue 32 step 6): on every
// number of processes and delivery order, each process's Lamport ideal times are the serial ones
// of the ranks it owns and the relaxed sends and unresolved dependencies the serial counts, and
// process 0's result — span, units, useful times, counters, every window, the whole run's factors
// and estimate (compared field by field, doubles by their bits) — is the serial one for the three
// conventions and the three window rules, every other process's empty; on random traces (also
// with every send large, so that cycles of sends are let go and inconsistent receives left
// unresolved), ALGORITHMS.md's Fixtures A–C, a row/column grid, the Score-P test traces and the
// Extrae ones (Paraver: states, threads, counters). The ideal-network reference is checked too.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "../analysis/grid_trace.hpp"
#include "../analysis/trace_builder.hpp"
#include "analysis/engine/shard.hpp"
#include "analysis/engine/shard_matching.hpp"
#include "analysis/timeresolved/timeresolved.hpp"
#include "analysis/trace/trace_io.hpp"
#include "processes.hpp"
#include "util/error.hpp"
#include "random_trace.hpp"

namespace waitlab::engine {
namespace {

using analysis::Convention;
using analysis::IdealReference;
using analysis::TimeResolvedResult;
using analysis::WindowOptions;
using analysis::WindowRule;

// Every field of a result, doubles by their bits: equal lists are equal results.
std::vector<std::uint64_t> fields(const TimeResolvedResult& r) {
  std::vector<std::uint64_t> f;
  const auto d = [&](double x) { f.push_back(bits(x)); };
  const auto eff = [&](const analysis::Efficiency& e) {
    d(e.lb), d(e.comm_e), d(e.ser_e), d(e.trf_e), d(e.pe);
  };
  f.push_back(static_cast<std::uint64_t>(r.convention));
  f.push_back(r.units);
  f.push_back(r.mpi);
  const auto& k = r.counters;
  f.push_back(k.instructions), f.push_back(k.cycles);
  d(k.useful_instructions), d(k.useful_cycles), d(k.ipc), d(k.frequency_hz);
  for (const auto& e : r.estimates) {
    f.insert(f.end(), e.source.begin(), e.source.end());
    d(e.t_ideal), d(e.useful_max), d(e.ser_e), d(e.trf_e);
  }
  f.push_back(r.ranks);
  d(r.t0), d(r.t1), d(r.elapsed), d(r.ideal), d(r.ideal_unclamped), d(r.useful_max), d(r.useful_mean);
  f.push_back(r.useful.size());
  for (double u : r.useful) d(u);
  eff(r.eff);
  f.insert(f.end(), r.source.begin(), r.source.end());
  f.push_back(r.relaxed_sends), f.push_back(r.unresolved);
  f.push_back(static_cast<std::uint64_t>(r.windows_rule.rule)), d(r.windows_rule.length),
      f.push_back(r.windows_rule.count);
  f.push_back(r.min_events);
  d(r.run_t0), d(r.run_t1);
  f.push_back(static_cast<std::uint64_t>(r.cut.spec.kind));
  for (const auto& [a, b] : r.cut.pieces) d(a), d(b);
  f.push_back(r.windows.size());
  for (const auto& w : r.windows) {
    d(w.start), d(w.end), f.push_back(w.events), d(w.useful_max), d(w.useful_mean), d(w.ideal),
        d(w.ideal_end);
    eff(w.eff);
    d(w.cum_useful_max), d(w.cum_useful_mean), d(w.cum_ideal);
    eff(w.cum);
  }
  return f;
}

// The conventions with a window rule each, and cuts of two pieces (the second reaches past
// the end of the run).
struct Setting {
  Convention convention;
  WindowOptions windows;
  analysis::Cut cut = {};
};
std::vector<Setting> settings(const trace::Trace& tr) {
  double first = 0, last = 0;
  for (const auto& l : tr.locations)
    if (!l.events.empty())
      first = std::min(first, l.events.front().time), last = std::max(last, l.events.back().time);
  const double length = last > first ? (last - first) / 7.5 : 1.0;
  analysis::Cut cut;
  cut.spec.kind = analysis::CutKind::Region;
  cut.pieces = {{first + 0.1 * (last - first), first + 0.35 * (last - first)},
                {first + 0.5 * (last - first), last + 1}};
  std::vector<Setting> all = {{Convention::Waitlab, {WindowRule::Count, 0, 13}},
                              {Convention::Bsc, {WindowRule::Adaptive, 0, 20}},
                              {Convention::Scalasca, {WindowRule::Fixed, length, 0}},
                              {Convention::Waitlab, {WindowRule::Adaptive, 0, 30}}};
  if (last > first)  // a trace with events (omp2 has only states)
    for (const Setting& s : {Setting{Convention::Bsc, {WindowRule::Count, 0, 9}, cut},
                             Setting{Convention::Waitlab, {WindowRule::Adaptive, 0, 20}, cut},
                             Setting{Convention::Scalasca, {WindowRule::Fixed, length, 0}, cut}})
      all.push_back(s);
  return all;
}

// The serial results; every sharded run checked against them. Returns the serial reference.
IdealReference expect_sharded_as_serial(const trace::Trace& tr, const std::string& name,
                                        const trace::Trace* ideal = nullptr) {
  const trace::Matching matching = trace::Matching::build(tr);
  IdealReference serial = analysis::lamport_reference(tr, matching);
  std::string why;
  IdealReference network;
  const bool networked = ideal != nullptr && analysis::network_reference(tr, *ideal, network, why);
  const IdealReference& used = networked ? network : serial;
  std::vector<std::vector<std::uint64_t>> results;
  for (const Setting& s : settings(tr))
    results.push_back(fields(analysis::time_resolved(tr, used, s.windows, s.convention, s.cut)));
  const auto counts = event_counts(tr);
  const auto check = [&](Transport& t, const std::string& where) {
    Shard shard = Shard::of(tr, Partition::balanced(counts, t.size()), t.self());
    match_shard(shard, t);
    IdealReference ref = analysis::lamport_reference(shard, shard.matching, t);
    EXPECT_EQ(ref.relaxed_sends, serial.relaxed_sends) << name << ", " << where;
    EXPECT_EQ(ref.unresolved, serial.unresolved) << name << ", " << where;
    EXPECT_EQ(ref.source, "lamport");
    ASSERT_EQ(ref.times.size(), static_cast<std::size_t>(shard.owned.size())) << name << ", " << where;
    for (Location r = shard.owned.first; r < shard.owned.last; ++r) {
      const auto& mine = ref.times[static_cast<std::size_t>(r - shard.owned.first)];
      const auto& all = serial.times[static_cast<std::size_t>(r)];
      ASSERT_EQ(mine.size(), all.size()) << name << ", " << where << ", rank " << r;
      for (std::size_t k = 0; k < all.size(); ++k)
        ASSERT_EQ(bits(mine[k]), bits(all[k])) << name << ", " << where << ", rank " << r << ", event " << k;
    }
    if (ideal != nullptr) {
      IdealReference net;
      std::string why_here;
      ASSERT_EQ(analysis::network_reference(shard, *ideal, net, why_here, t), networked)
          << name << ", " << where;
      EXPECT_EQ(why_here, why) << name << ", " << where;
      if (networked) ref = std::move(net);
    }
    const auto all = settings(tr);
    for (std::size_t i = 0; i < all.size(); ++i) {
      const TimeResolvedResult mine =
          analysis::time_resolved(shard, ref, all[i].windows, all[i].convention, t, all[i].cut);
      if (t.self() == 0)
        EXPECT_EQ(fields(mine), results[i]) << name << ", " << where << ", setting " << i;
      else
        EXPECT_TRUE(mine.windows.empty() && mine.useful.empty() && mine.units == 0) << name << ", " << where;
    }
  };
  on_every_world(check);
  on_virtual(static_cast<int>(tr.ranks()) + 1, 5, [&](Transport& t) {
    check(t, "L + 1 processes");
    return Bytes{};
  });
  return serial;
}

// Every send of the trace at 64 KiB: each waits for its receive to be posted (cycles of them are
// let go), and receives in a crossed order leave dependencies unresolved.
trace::Trace with_large_sends(trace::Trace tr) {
  for (trace::Location& loc : tr.locations)
    for (trace::Event& e : loc.events)
      if (e.kind == EventKind::Send || e.kind == EventKind::IsendStart) e.bytes = 64 * 1024;
  return tr;
}

TEST(ShardTimeResolved, RandomTracesHaveTheSerialResultToTheBit) {
  std::uint64_t relaxed = 0, unresolved = 0;
  for (std::uint64_t seed : {1u, 2u, 3u, 99u, 123u})
    for (trace::Rank locations : {2, 5, 9}) {
      const std::string name = std::to_string(locations) + " locations, trace seed " + std::to_string(seed);
      expect_sharded_as_serial(random_trace(locations, seed), name);
      const IdealReference large =
          expect_sharded_as_serial(with_large_sends(random_trace(locations, seed)), name + ", large sends");
      relaxed += large.relaxed_sends;
      unresolved += large.unresolved;
    }
  EXPECT_GT(relaxed, 10u);    // cycles of large sends were let go
  EXPECT_GT(unresolved, 0u);  // and receives crossed
}

// Two ranks each start two large sends to the other, complete both in one MPI_Waitall and only
// then receive: the Waitall's Leave waits for two receives posted after the other's Waitall. The
// replay lets rank 0's first send go, then its second (the first comes back), then, going round,
// both at once: each counted once.
trace::Trace crossed_waitalls() {
  trace::Trace tr;
  tr.defs.comms = {{"MPI_COMM_WORLD", {0, 1}}};
  for (trace::Rank r = 0; r < 2; ++r) {
    trace::Location loc;
    loc.rank = r;
    double t = r;
    const trace::Rank peer = 1 - r;
    mpi_call(tr, loc, t, MpiOp::Isend,
             {make_event(0, EventKind::IsendStart, MpiOp::None, 0, peer, 0, 65536, 1)});
    mpi_call(tr, loc, t, MpiOp::Isend,
             {make_event(0, EventKind::IsendStart, MpiOp::None, 0, peer, 0, 65536, 2)});
    mpi_call(tr, loc, t, MpiOp::Waitall,
             {make_event(0, EventKind::IsendComplete, MpiOp::None, 0, trace::kNoRank, 0, 0, 1),
              make_event(0, EventKind::IsendComplete, MpiOp::None, 0, trace::kNoRank, 0, 0, 2)});
    for (int k = 0; k < 2; ++k)
      mpi_call(tr, loc, t, MpiOp::Recv, {make_event(0, EventKind::Recv, MpiOp::None, 0, peer, 0, 65536)});
    tr.locations.push_back(std::move(loc));
  }
  return tr;
}

TEST(ShardTimeResolved, CrossedWaitallsOfLargeSendsEnd) {
  const IdealReference ref = expect_sharded_as_serial(crossed_waitalls(), "crossed Waitalls");
  EXPECT_EQ(ref.relaxed_sends, 2u);
  EXPECT_EQ(ref.unresolved, 0u);
  // Events: Isend 0–2, Isend 3–5, Waitall 6–9, Recv 10–12, Recv 13–15. Rank 0's Waitall ends
  // without waiting (its sends let go); rank 1's waits for rank 0's two receives to be posted.
  EXPECT_EQ(ref.times[0][9], ref.times[0][6]);
  EXPECT_EQ(ref.times[1][9], ref.times[0][13]);
  EXPECT_GT(ref.times[1][9], ref.times[1][6]);
}

TEST(ShardTimeResolved, FixturesAndAGridHaveTheSerialResult) {
  expect_sharded_as_serial(analysis::test::fixture_a().trace(), "Fixture A");
  expect_sharded_as_serial(analysis::test::fixture_b().trace(), "Fixture B");
  expect_sharded_as_serial(analysis::test::fixture_c().trace(), "Fixture C");
  expect_sharded_as_serial(test::grid::row_column_trace(), "row/column grid");
}

TEST(ShardTimeResolved, AnIdealNetworkRunIsTakenOrRefusedAsSerially) {
  const trace::Trace tr = random_trace(5, 7);
  trace::Trace ideal = tr;  // the same events, other times: it corresponds
  for (trace::Location& loc : ideal.locations)
    for (trace::Event& e : loc.events) e.time *= 0.5;
  expect_sharded_as_serial(tr, "ideal network", &ideal);
  trace::Trace shorter = ideal;  // rank 3 lost an event: it does not
  shorter.locations[3].events.pop_back();
  shorter.locations[4].events.pop_back();
  expect_sharded_as_serial(tr, "ideal network, a rank short", &shorter);
}

TEST(ShardTimeResolved, ScorePTracesHaveTheSerialResultToTheBit) {
  const std::filesystem::path data = std::filesystem::path(WAITLAB_SOURCE_DIR) / "tests/data/scorep";
  for (const char* name : {"ping-pong-otf2", "npb-is.W.16", "npb-mg.W.16"})
    expect_sharded_as_serial(trace::read_trace((data / name / "traces.otf2").string()), name);
}

// A region's instances and a range of them, and a simulated workload's iterations, found on
// every number of processes as serially: the same pieces and counts, or the same error.
TEST(ShardTimeResolved, CutsAreResolvedAsSerially) {
  const std::filesystem::path data = std::filesystem::path(WAITLAB_SOURCE_DIR) / "tests/data/scorep";
  const trace::Trace mg = trace::read_trace((data / "npb-mg.W.16" / "traces.otf2").string());
  const auto same = [](const trace::Trace& tr, const analysis::CutSpec& spec, const std::string& name) {
    std::string serial_error;
    analysis::Cut serial;
    try {
      serial = analysis::resolve_cut(tr, spec);
    } catch (const InputError& e) {
      serial_error = e.what();
    }
    const auto counts = event_counts(tr);
    on_every_world([&](Transport& t, const std::string& where) {
      const Shard shard = Shard::of(tr, Partition::balanced(counts, t.size()), t.self());
      try {
        const analysis::Cut mine = analysis::resolve_cut(shard, spec, t);
        EXPECT_EQ(mine.pieces, serial.pieces) << name << ", " << where;
        EXPECT_EQ(mine.instances, serial.instances) << name << ", " << where;
        EXPECT_EQ(mine.locations, serial.locations) << name << ", " << where;
        EXPECT_EQ(serial_error, "") << name << ", " << where;
      } catch (const InputError& e) {
        EXPECT_EQ(e.what(), serial_error) << name << ", " << where;
      }
    });
    return serial;
  };
  const analysis::Cut all = same(mg, analysis::parse_region("MPI_Allreduce"), "npb-mg, MPI_Allreduce");
  EXPECT_EQ(all.instances, 1408u);  // 88 per rank
  EXPECT_EQ(all.locations, 16u);
  EXPECT_EQ(all.pieces.size(), 6u);
  const analysis::Cut some = same(mg, analysis::parse_iterations("MPI_Allreduce:3-5"), "npb-mg, MPI_Allreduce 3-5");
  EXPECT_EQ(some.pieces.size(), 1u);
  EXPECT_EQ(some.instances, 48u);
  same(mg, analysis::parse_iterations("MPI_Allreduce:3-500"), "npb-mg, too many");
  same(mg, analysis::parse_iterations("2-3"), "npb-mg, no ground truth");
  same(analysis::test::fixture_a().trace(), analysis::parse_region("main"), "Fixture A, main");
}

TEST(ShardTimeResolved, ExtraeTracesHaveTheSerialResultToTheBit) {
  const std::filesystem::path data = std::filesystem::path(WAITLAB_SOURCE_DIR) / "tests/data/extrae";
  for (const char* name : {"epoch_2proc", "omp2"}) {
    const trace::Trace tr = trace::read_trace((data / (std::string(name) + ".prv.gz")).string());
    ASSERT_NE(tr.counters, 0) << name;
    expect_sharded_as_serial(tr, name);
  }
}

}  // namespace
}  // namespace waitlab::engine
