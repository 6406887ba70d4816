// The critical path on the replay engine (analysis/critpath, issue 32 step 5): on every number of
// processes and delivery order, every process's result — segments, profile, start, end, length,
// impact split, jumps, completeness — is the serial one to the bit, on random traces (jumps
// between ranks of different processes, ties, walks with and without MPI_Finalize), ALGORITHMS.md's
// Fixtures A, B and C and the Score-P test traces.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "../analysis/trace_builder.hpp"
#include "analysis/critpath/critpath.hpp"
#include "analysis/engine/shard.hpp"
#include "analysis/engine/shard_matching.hpp"
#include "analysis/trace/trace_io.hpp"
#include "analysis/waitstate/waitstate.hpp"
#include "processes.hpp"
#include "random_trace.hpp"

namespace waitlab::engine {
namespace {

using analysis::CriticalPathResult;
using trace::Rank;

auto fields(const analysis::PathSegment& s) {
  return std::tuple(s.rank, s.path, bits(s.start), bits(s.end));
}
auto fields(const analysis::CallPathImpact& c) {
  return std::tuple(c.path, bits(c.on_path), bits(c.time), bits(c.waiting), bits(c.average),
                    bits(c.imbalance));
}
auto fields(const CriticalPathResult& r) {
  return std::tuple(bits(r.start), bits(r.end), bits(r.length), r.ranks, bits(r.critical_activities),
                    bits(r.critical_imbalance), bits(r.noncritical_activities), r.jumps, r.complete, r.bounds);
}

void expect_as_serial(const CriticalPathResult& mine, const CriticalPathResult& serial,
                      const std::string& where) {
  EXPECT_EQ(fields(mine), fields(serial)) << where;
  ASSERT_EQ(mine.segments.size(), serial.segments.size()) << where;
  for (std::size_t i = 0; i < serial.segments.size(); ++i)
    EXPECT_EQ(fields(mine.segments[i]), fields(serial.segments[i])) << where << ", segment " << i;
  ASSERT_EQ(mine.profile.size(), serial.profile.size()) << where;
  for (std::size_t i = 0; i < serial.profile.size(); ++i)
    EXPECT_EQ(fields(mine.profile[i]), fields(serial.profile[i])) << where << ", call path " << i;
}

// The serial result of the trace; every sharded run checked against it on every process.
CriticalPathResult expect_sharded_as_serial(const trace::Trace& tr, const std::string& name,
                                            analysis::PathBounds bounds = analysis::PathBounds::Waitlab) {
  const analysis::CriticalPathOptions options{bounds};
  const trace::Matching matching = trace::Matching::build(tr);
  const CriticalPathResult serial =
      analysis::critical_path(tr, matching, analysis::wait_states(tr, matching), options);
  const auto counts = event_counts(tr);
  const auto check = [&](Transport& t, const std::string& where) {
    Shard shard = Shard::of(tr, Partition::balanced(counts, t.size()), t.self());
    match_shard(shard, t);
    const analysis::WaitStateResult waits = analysis::wait_states(shard, shard.matching, t);
    expect_as_serial(analysis::critical_path(shard, shard.matching, waits, t, options), serial,
                     name + ", " + where + ", process " + std::to_string(t.self()));
  };
  on_every_world(check);
  on_virtual(static_cast<int>(tr.ranks()) + 1, 5, [&](Transport& t) {
    check(t, "L + 1 processes");
    return Bytes{};
  });
  return serial;
}

TEST(ShardCriticalPath, RandomTracesHaveTheSerialPathAndProfileToTheBit) {
  std::uint64_t jumps = 0, with_finalize = 0, without_finalize = 0, segments = 0, shorter = 0;
  for (std::uint64_t seed : {1u, 2u, 3u, 99u, 123u, 7u, 8u})
    for (Rank locations : {2, 5, 9}) {
      const trace::Trace tr = random_trace(locations, seed);
      const std::string name = std::to_string(locations) + " locations, trace seed " + std::to_string(seed);
      const CriticalPathResult serial = expect_sharded_as_serial(tr, name);
      const CriticalPathResult scalasca =
          expect_sharded_as_serial(tr, name + ", Scalasca's bounds", analysis::PathBounds::Scalasca);
      shorter += scalasca.end < serial.end;
      jumps += serial.jumps;
      segments += serial.segments.size();
      bool finalize = false;
      for (const auto& inst : trace::Matching::build(tr).collectives) finalize |= inst.op == MpiOp::Finalize;
      ++(finalize ? with_finalize : without_finalize);
    }
  // The walks jump between ranks, and both ways of finding the end are taken.
  EXPECT_GT(jumps, 20u);
  EXPECT_GT(segments, jumps);
  EXPECT_GT(with_finalize, 0u);
  EXPECT_GT(without_finalize, 0u);
  EXPECT_GT(shorter, 0u);  // Scalasca's bounds end some paths at an MPI_Finalize Enter
}

TEST(ShardCriticalPath, FixturesHaveTheirWorkedPathsOnEveryProcessCount) {
  const CriticalPathResult a = expect_sharded_as_serial(analysis::test::fixture_a().trace(), "Fixture A");
  EXPECT_NEAR(a.length, 6950e-6, 1e-12);
  const CriticalPathResult b = expect_sharded_as_serial(analysis::test::fixture_b().trace(), "Fixture B");
  for (const auto& s : b.segments) EXPECT_EQ(s.rank, 0);
  EXPECT_NEAR(b.length, 3050e-6, 1e-12);
  const CriticalPathResult c = expect_sharded_as_serial(analysis::test::fixture_c().trace(), "Fixture C");
  EXPECT_EQ(c.jumps, 2u);
  ASSERT_FALSE(c.segments.empty());
  EXPECT_EQ(c.segments.front().rank, 0);
  EXPECT_EQ(c.segments.back().rank, 2);
  EXPECT_EQ(c.length, 6.5);
}

TEST(ShardCriticalPath, ScorePTracesHaveTheSerialPathToTheBit) {
  const std::filesystem::path data = std::filesystem::path(WAITLAB_SOURCE_DIR) / "tests/data/scorep";
  for (const char* name : {"ping-pong-otf2", "npb-is.W.16", "npb-mg.W.16"}) {
    const trace::Trace tr = trace::read_trace((data / name / "traces.otf2").string());
    EXPECT_GT(expect_sharded_as_serial(tr, name).segments.size(), 0u) << name;
    EXPECT_GT(expect_sharded_as_serial(tr, name, analysis::PathBounds::Scalasca).segments.size(), 0u) << name;
  }
}

}  // namespace
}  // namespace waitlab::engine
