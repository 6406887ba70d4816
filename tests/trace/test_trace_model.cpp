// The event model's helpers (analysis/trace/trace.hpp): MPI names and their inverse, the
// op classes, begin/end time, event counts, attributes and region definitions.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "analysis/trace/trace.hpp"

namespace waitlab::trace {
namespace {

constexpr auto kOps = static_cast<std::size_t>(MpiOp::Count_);

TEST(MpiNames, RoundTripForEveryOp) {
  std::set<std::string_view> seen;
  for (std::size_t i = 1; i < kOps; ++i) {
    const auto op = static_cast<MpiOp>(i);
    const std::string_view name = mpi_name(op);
    EXPECT_EQ(name.substr(0, 4), "MPI_") << i;
    EXPECT_EQ(mpi_op_from_name(name), op) << name;
    EXPECT_TRUE(seen.insert(name).second) << "duplicate name " << name;
  }
  EXPECT_EQ(seen.size(), kOps - 1);
}

TEST(MpiNames, SpotChecksAndUnknowns) {
  EXPECT_EQ(mpi_name(MpiOp::Init), "MPI_Init");
  EXPECT_EQ(mpi_name(MpiOp::Sendrecv), "MPI_Sendrecv");
  EXPECT_EQ(mpi_name(MpiOp::ReduceScatter), "MPI_Reduce_scatter");
  EXPECT_EQ(mpi_name(MpiOp::None), "");
  EXPECT_EQ(mpi_name(MpiOp::Count_), "");
  EXPECT_EQ(mpi_name(static_cast<MpiOp>(200)), "");
  EXPECT_EQ(mpi_op_from_name(""), MpiOp::None);
  EXPECT_EQ(mpi_op_from_name("MPI_send"), MpiOp::None);  // case matters
  EXPECT_EQ(mpi_op_from_name("MPI_Sendx"), MpiOp::None);
  EXPECT_EQ(mpi_op_from_name("compute"), MpiOp::None);
}

TEST(MpiNames, EveryCommunicatingOpIsExactlyOneClass) {
  for (std::size_t i = 0; i < kOps; ++i) {
    const auto op = static_cast<MpiOp>(i);
    const bool bookkeeping = op == MpiOp::None || op == MpiOp::Init || op == MpiOp::Finalize;
    EXPECT_EQ(is_collective(op) + is_point_to_point(op), bookkeeping ? 0 : 1) << mpi_name(op);
  }
  EXPECT_TRUE(is_collective(MpiOp::Alltoall));
  EXPECT_TRUE(is_point_to_point(MpiOp::Waitall));
  EXPECT_FALSE(is_collective(MpiOp::Count_));
}

TEST(Names, EventKindsAndCauses) {
  EXPECT_EQ(event_kind_name(EventKind::Enter), "Enter");
  EXPECT_EQ(event_kind_name(EventKind::IrecvComplete), "IrecvComplete");
  EXPECT_EQ(event_kind_name(EventKind::CollEnd), "CollEnd");
  EXPECT_EQ(event_kind_name(static_cast<EventKind>(99)), "?");
  EXPECT_EQ(cause_name(Cause::Imbalance), "imbalance");
  EXPECT_EQ(cause_name(Cause::Noise), "noise");
  EXPECT_EQ(cause_name(Cause::Delay), "delay");
  EXPECT_EQ(cause_name(Cause::Count_), "?");
}

Event at(Time t) {
  Event e;
  e.time = t;
  return e;
}

TEST(TraceTimes, BeginAndEndOverAllLocations) {
  Trace t;
  EXPECT_EQ(t.begin_time(), 0.0);
  EXPECT_EQ(t.end_time(), 0.0);
  EXPECT_EQ(t.event_count(), 0u);
  t.locations.resize(3);
  EXPECT_EQ(t.begin_time(), 0.0);  // locations without events count for nothing
  EXPECT_EQ(t.end_time(), 0.0);
  t.locations[0].events = {at(0.5), at(2.0)};
  t.locations[2].events = {at(0.25), at(1.5), at(3.0)};
  EXPECT_EQ(t.begin_time(), 0.25);
  EXPECT_EQ(t.end_time(), 3.0);
  EXPECT_EQ(t.event_count(), 5u);
  EXPECT_EQ(t.ranks(), 3u);
  // Only the first and last event of each location are looked at (they are ordered by time).
  t.locations[1].events = {at(-1.0)};
  EXPECT_EQ(t.begin_time(), -1.0);
  EXPECT_EQ(t.end_time(), 3.0);
}

TEST(TraceAttributes, LookupAndAbsence) {
  Trace t;
  t.attributes = {{"seed", "42"}, {"empty", ""}, {"seed", "shadowed"}};
  EXPECT_EQ(t.attribute("seed"), "42");  // the first one wins
  EXPECT_EQ(t.attribute("empty"), "");
  EXPECT_EQ(t.attribute("missing"), "");
}

TEST(Definitions, RegionDedupesByNameAndOp) {
  Definitions d;
  const RegionId compute = d.region("compute");
  const RegionId send = d.mpi_region(MpiOp::Send);
  EXPECT_EQ(compute, 0u);
  EXPECT_EQ(send, 1u);
  EXPECT_EQ(d.region("compute"), compute);
  EXPECT_EQ(d.region("compute", MpiOp::None), compute);
  EXPECT_EQ(d.mpi_region(MpiOp::Send), send);
  EXPECT_EQ(d.region("MPI_Send", MpiOp::Send), send);
  // Same name, other op: a different region (a user region may be called like an MPI call).
  const RegionId user_send = d.region("MPI_Send");
  EXPECT_EQ(user_send, 2u);
  EXPECT_EQ(d.regions.size(), 3u);
  EXPECT_EQ(d.regions[compute], (Region{"compute", MpiOp::None, ""}));
  EXPECT_EQ(d.regions[send], (Region{"MPI_Send", MpiOp::Send, "MPI"}));
  EXPECT_EQ(d.regions[user_send], (Region{"MPI_Send", MpiOp::None, ""}));
  EXPECT_EQ(d.find_region("compute"), 0);
  EXPECT_EQ(d.find_region("MPI_Send"), 1);  // the first of that name
  EXPECT_EQ(d.find_region("fixup"), -1);
}

}  // namespace
}  // namespace waitlab::trace
