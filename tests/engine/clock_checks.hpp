// Clock correction's promise on the engine as a check on any transport (the virtual one in
// test_shard_clock.cpp, MPI's in mpi/test_mpi_transport.cpp): a shard corrected by
// clock::correct_clocks holds, for its owned locations, the times trace::correct_clocks gives the
// whole trace (events and ground-truth intervals, to the bit), its matching carries the corrected
// times, and its report is the one-process report, field by field; and the random traces with
// skewed clocks the checks run on.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <tuple>

#include "analysis/clock/correct.hpp"
#include "analysis/engine/shard.hpp"
#include "analysis/trace/clock.hpp"
#include "processes.hpp"

namespace waitlab::engine::clock_checks {

using trace::ClockOptions;
using trace::ClockReport;

inline auto fields(const ClockReport& r) {
  return std::tuple(r.violations_before, r.violations_after_linear, r.violations_after, r.ranks_linear,
                    r.events_moved, bits(r.max_offset), bits(r.max_drift), bits(r.max_shift),
                    r.constraints_dropped, r.method, r.reason);
}

// Rank r's clock: t ↦ a_r + (1 + d_r)·t + w_r·sin(t / scale), rank 0's the reference; and each rank a
// ground-truth compute interval between each pair of its events, so that their moves are checked.
inline trace::Trace skewed(trace::Trace tr, std::uint64_t seed, double scale) {
  std::mt19937_64 gen(seed);
  const auto uniform = [&](double half) { return (static_cast<double>(gen() % 2001) - 1000) / 1000 * half; };
  for (trace::Location& loc : tr.locations) {
    const double a = loc.rank == 0 ? 0 : uniform(3 * scale), d = loc.rank == 0 ? 0 : uniform(0.02);
    const double w = loc.rank == 0 ? 0 : uniform(0.6 * scale);
    for (trace::Event& e : loc.events) e.time = a + (1 + d) * e.time + w * std::sin(e.time / scale);
    for (std::size_t i = 0; i + 1 < loc.events.size(); i += 3) {
      trace::ComputeTruth ct;
      ct.start = loc.events[i].time + (loc.events[i + 1].time - loc.events[i].time) / 4;
      ct.end = loc.events[i + 1].time;
      loc.truth.push_back(ct);
    }
  }
  return tr;
}

// Corrects this process's shard of `tr` and checks it against `serial`, the whole trace corrected
// by trace::correct_clocks with the same options, which reported `expected`.
inline void expect_shard_as_serial(Transport& t, const trace::Trace& tr, const trace::Trace& serial,
                                   const ClockReport& expected, const ClockOptions& options,
                                   const std::string& what, const std::string& where) {
  Shard shard = Shard::of(tr, Partition::balanced(event_counts(tr), t.size()), t.self());
  const ClockReport report = clock::correct_clocks(shard, t, options);
  EXPECT_EQ(fields(report), fields(expected)) << what << ", " << where;
  for (Location l = shard.owned.first; l < shard.owned.last; ++l) {
    const trace::Location& mine = shard.location(l);
    const trace::Location& all = serial.locations[static_cast<std::size_t>(l)];
    ASSERT_EQ(mine.events.size(), all.events.size()) << what;
    for (std::size_t i = 0; i < all.events.size(); ++i)
      ASSERT_EQ(bits(mine.events[i].time), bits(all.events[i].time))
          << what << ", " << where << ", location " << l << ", event " << i;
    ASSERT_EQ(mine.truth.size(), all.truth.size()) << what;
    for (std::size_t i = 0; i < all.truth.size(); ++i)
      ASSERT_EQ(std::tuple(bits(mine.truth[i].start), bits(mine.truth[i].end)),
                std::tuple(bits(all.truth[i].start), bits(all.truth[i].end)))
          << what << ", " << where << ", location " << l << ", interval " << i;
  }
  // The shard's matching is the corrected one: its members carry the corrected times.
  for (const trace::CollMember& mem : shard.matching.members)
    EXPECT_EQ(
        std::tuple(bits(mem.begin), bits(mem.end)),
        std::tuple(bits(shard.time(mem.rank, mem.begin_event)), bits(shard.time(mem.rank, mem.end_event))))
        << what << ", " << where;
}

}  // namespace waitlab::engine::clock_checks
