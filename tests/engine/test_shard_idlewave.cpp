// Idle waves on the replay engine (analysis/idlewave, issue 32 step 6): on every number of
// processes and delivery order, process 0's result is the serial one to the bit — every idle
// period, the matrix, the iterations, the topology, every wave with its fronts and fits, the
// self-synchronisation (compared field by field, doubles by their bits) — and every other
// process's is empty, on max-plus chains with a wave (measured-like, and simulated-like with
// ground truth and an injected delay, one with a slow group), max-plus grids (2D, 3D periodic),
// random traces, ALGORITHMS.md's Fixture A, a row/column grid and the Score-P test traces.
#include <gtest/gtest.h>

#include <bit>
#include <filesystem>
#include <string>
#include <type_traits>
#include <vector>

#include "../analysis/grid_trace.hpp"
#include "../analysis/max_plus_traces.hpp"
#include "../analysis/trace_builder.hpp"
#include "analysis/engine/shard.hpp"
#include "analysis/engine/shard_matching.hpp"
#include "analysis/idlewave/idlewave.hpp"
#include "analysis/trace/trace_io.hpp"
#include "processes.hpp"
#include "random_trace.hpp"

namespace waitlab::engine {
namespace {

using analysis::IdleWaveOptions;
using analysis::IdleWaveResult;

// Every field of a result as text, doubles by their bits: equal texts are equal results.
class Describe {
 public:
  Describe& operator()(double v) { return word(bits(v)); }
  Describe& operator()(float v) { return word(std::bit_cast<std::uint32_t>(v)); }
  template <typename T>
    requires std::is_integral_v<T> || std::is_enum_v<T>
  Describe& operator()(T v) {
    return word(static_cast<std::uint64_t>(v));
  }
  Describe& operator()(const analysis::LineFit& f) { return (*this)(f.slope)(f.intercept)(f.r2)(f.points); }
  Describe& operator()(const analysis::IdlePeriod& p) {
    return (*this)(p.rank)(p.start)(p.seconds)(p.iteration)(p.pattern)(p.cause_rank)(p.usual);
  }
  Describe& operator()(const analysis::FrontPoint& p) {
    return (*this)(p.rank)(p.distance)(p.time)(p.iteration)(p.amplitude);
  }
  Describe& operator()(const analysis::Front& f) {
    (*this)(f.direction)(f.axis)(f.points)(f.by_time)(f.by_iteration)(f.amplitude)(f.decay_s_per_rank);
    return (*this)(f.predicted_ranks_per_s)(f.measured_over_predicted)(f.at_once)(f.stop)(f.stop_rank)(f.met_wave);
  }
  Describe& operator()(const analysis::Wave& w) {
    (*this)(w.source_rank)(w.source_time)(w.onset)(w.source_iteration)(w.delay)(w.injected);
    return (*this)(w.down)(w.up)(w.axes)(w.reached);
  }
  Describe& operator()(const analysis::SelfSync& s) {
    (*this)(s.slow_group)(s.detected)(s.slow_ranks)(s.t_slow)(s.t_fast)(s.expected_idle)(s.fast_idle_per_iteration);
    (*this)(s.fast_idle_raw_per_iteration)(s.baseline_idle_per_iteration)(s.phase)(s.phase_spread);
    return (*this)(s.neighbour_phase_shift)(s.front);
  }
  template <typename T>
  Describe& operator()(const std::vector<T>& v) {
    word(v.size());
    for (const T& x : v) (*this)(x);
    return *this;
  }
  Describe& operator()(const IdleWaveResult& r) {
    (*this)(r.periods)(r.total_idle)(r.matrix.t0)(r.matrix.bin)(r.matrix.bins)(r.matrix.ranks)(r.matrix.idle);
    (*this)(r.iterations)(r.iterations_from_truth)(r.iteration_s)(r.t_exec_s)(r.t_comm_s)(r.metric)(r.grid);
    (*this)(r.periodic)(r.distance)(r.sigma)(r.predicted_per_s)(r.distance_inferred)(r.sigma_inferred)(r.eager);
    return (*this)(r.phased)(r.bidirectional)(r.pipeline)(r.threshold_s)(r.waves)(r.waves_left_out)(r.self_sync);
  }
  const std::string& text() const { return text_; }

 private:
  Describe& word(std::uint64_t v) {
    text_ += std::to_string(v) + ' ';
    return *this;
  }
  std::string text_;
};

std::string described(const IdleWaveResult& r) { return Describe()(r).text(); }

// The serial result of the trace; every sharded run checked against it.
IdleWaveResult expect_sharded_as_serial(const trace::Trace& tr, const std::string& name, const IdleWaveOptions& o = {}) {
  const trace::Matching matching = trace::Matching::build(tr);
  const IdleWaveResult serial = analysis::idle_waves(tr, matching, analysis::wait_states(tr, matching), o);
  const std::string expected = described(serial);
  const std::string empty = described(IdleWaveResult{});
  const auto counts = event_counts(tr);
  const auto check = [&](Transport& t, const std::string& where) {
    Shard shard = Shard::of(tr, Partition::balanced(counts, t.size()), t.self());
    match_shard(shard, t);
    const analysis::WaitStateResult waits = analysis::wait_states(shard, shard.matching, t);
    const IdleWaveResult mine = analysis::idle_waves(shard, shard.matching, waits, t, o);
    EXPECT_EQ(described(mine), t.self() == 0 ? expected : empty) << name << ", " << where << ", process " << t.self();
  };
  on_every_world(check);
  on_virtual(static_cast<int>(tr.ranks()) + 1, 5, [&](Transport& t) {
    check(t, "L + 1 processes");
    return Bytes{};
  });
  return serial;
}

namespace mp = analysis::test::max_plus;

TEST(ShardIdleWave, MaxPlusChainsHaveTheSerialWavesToTheBit) {
  const IdleWaveResult measured = expect_sharded_as_serial(mp::max_plus_chain(), "chain");
  ASSERT_EQ(measured.waves.size(), 1u);
  EXPECT_EQ(measured.waves[0].down.reach(), 4);
  EXPECT_FALSE(measured.iterations_from_truth);
  // Simulated-like: ground truth, the wave from the injected delay.
  const IdleWaveResult simulated = expect_sharded_as_serial(mp::max_plus_chain(mp::kDelta, true), "chain with truth");
  ASSERT_EQ(simulated.waves.size(), 1u);
  EXPECT_TRUE(simulated.waves[0].injected);
  EXPECT_TRUE(simulated.iterations_from_truth);
  // Rank 0 computes 5 µs less: every other rank is the slow group.
  const IdleWaveResult edge = expect_sharded_as_serial(mp::max_plus_chain(mp::kDelta, true, 5.0), "chain, edge");
  EXPECT_TRUE(edge.self_sync.slow_group);
  IdleWaveOptions o;
  o.bin_seconds = 250e-6;
  o.max_waves = 0;
  EXPECT_EQ(expect_sharded_as_serial(mp::max_plus_chain(mp::kDelta, true), "chain, options", o).waves_left_out, 1u);
}

TEST(ShardIdleWave, MaxPlusGridsHaveTheSerialWavesToTheBit) {
  mp::Grid flat{{3, 4}, false};
  const IdleWaveResult two = expect_sharded_as_serial(mp::max_plus_grid(flat, 5, 2, 14), "3×4 grid");
  EXPECT_EQ(two.grid, flat.extents);
  ASSERT_EQ(two.waves.size(), 1u);
  EXPECT_EQ(two.waves[0].reached, 11u);
  mp::Grid torus{{4, 3, 3}, true};
  const IdleWaveResult three = expect_sharded_as_serial(mp::max_plus_grid(torus, 13, 2, 14), "4×3×3 torus");
  EXPECT_EQ(three.grid, torus.extents);
  EXPECT_TRUE(three.periodic);
  ASSERT_EQ(three.waves.size(), 1u);  // enough iterations that the one idle period per rank stands out
  EXPECT_EQ(three.waves[0].reached, 35u);
}

TEST(ShardIdleWave, RandomTracesAndFixturesHaveTheSerialResult) {
  std::size_t periods = 0;
  for (std::uint64_t seed : {1u, 2u, 3u, 99u, 123u})
    for (trace::Rank locations : {2, 5, 9})
      periods += expect_sharded_as_serial(random_trace(locations, seed),
                                          std::to_string(locations) + " locations, trace seed " + std::to_string(seed))
                     .periods.size();
  EXPECT_GT(periods, 100u);
  EXPECT_GT(expect_sharded_as_serial(analysis::test::fixture_a().trace(), "Fixture A").periods.size(), 0u);
  EXPECT_GT(expect_sharded_as_serial(test::grid::row_column_trace(), "row/column grid").periods.size(), 0u);
}

TEST(ShardIdleWave, ScorePTracesHaveTheSerialResultToTheBit) {
  const std::filesystem::path data = std::filesystem::path(WAITLAB_SOURCE_DIR) / "tests/data/scorep";
  for (const char* name : {"ping-pong-otf2", "npb-is.W.16", "npb-mg.W.16"}) {
    const trace::Trace tr = trace::read_trace((data / name / "traces.otf2").string());
    EXPECT_GT(expect_sharded_as_serial(tr, name).periods.size(), 0u) << name;
  }
}

}  // namespace
}  // namespace waitlab::engine
