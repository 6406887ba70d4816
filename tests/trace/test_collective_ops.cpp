// Every collective op of the event model — the v-collectives (MPI_Gatherv, MPI_Scatterv,
// MPI_Allgatherv, MPI_Alltoallv) included — survives a round trip through the native .wlt
// file, OTF2 and Paraver with its op, root and byte totals; the analyses see a v-collective
// as the collective it synchronises like.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/trace/match.hpp"
#include "analysis/trace/trace_io.hpp"
#include "tests/temp_dir.hpp"

namespace waitlab::trace {
namespace {

constexpr Time us(double v) {
  return v * 1e-6;
}

// Three ranks; one instance of every collective op, rooted ones at rank 1; rank r sends
// 100 * (r + 1) + op bytes and receives 1000 + op.
Trace every_collective() {
  Trace t;
  t.defs.comms.push_back(Communicator{"MPI_COMM_WORLD", {0, 1, 2}});
  t.defs.mpi_region(MpiOp::Init);
  t.defs.mpi_region(MpiOp::Finalize);
  for (Rank r = 0; r < 3; ++r) {
    Location l;
    l.rank = r;
    const auto add = [&](Event e) { l.events.push_back(e); };
    add(make_event(0, EventKind::Enter, MpiOp::Init, t.defs.mpi_region(MpiOp::Init)));
    add(make_event(us(10), EventKind::Leave, MpiOp::Init, t.defs.mpi_region(MpiOp::Init)));
    Time now = us(10);
    for (std::size_t i = 1; i < static_cast<std::size_t>(MpiOp::Count_); ++i) {
      const auto op = static_cast<MpiOp>(i);
      if (!is_collective(op)) continue;
      const MpiOp base = base_collective(op);
      const bool rooted = base == MpiOp::Bcast || base == MpiOp::Reduce || base == MpiOp::Gather ||
                          base == MpiOp::Scatter;
      const auto region = t.defs.mpi_region(op);
      add(make_event(now + us(r), EventKind::Enter, op, region));
      add(make_event(now + us(r), EventKind::CollBegin, op, kCommWorld));
      add(make_event(now + us(5), EventKind::CollEnd, op, kCommWorld, rooted ? 1 : kNoRank, 0,
                     op == MpiOp::Barrier ? 0 : 100 * (static_cast<std::uint64_t>(r) + 1) + i,
                     op == MpiOp::Barrier ? 0 : 1000 + i));
      add(make_event(now + us(5), EventKind::Leave, op, region));
      now += us(10);
    }
    add(make_event(now, EventKind::Enter, MpiOp::Finalize, t.defs.mpi_region(MpiOp::Finalize)));
    add(make_event(now + us(1), EventKind::Leave, MpiOp::Finalize, t.defs.mpi_region(MpiOp::Finalize)));
    t.locations.push_back(std::move(l));
  }
  return t;
}

void expect_same_collectives(const Trace& back, const Trace& t, const std::string& format) {
  SCOPED_TRACE(format);
  ASSERT_EQ(back.ranks(), t.ranks());
  for (std::size_t r = 0; r < t.ranks(); ++r) {
    std::vector<const Event*> a, b;
    for (const auto& e : back.locations[r].events)
      if (e.kind == EventKind::CollEnd) a.push_back(&e);
    for (const auto& e : t.locations[r].events)
      if (e.kind == EventKind::CollEnd) b.push_back(&e);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      SCOPED_TRACE(std::string(mpi_name(b[i]->op)) + " on rank " + std::to_string(r));
      EXPECT_EQ(a[i]->op, b[i]->op);
      EXPECT_EQ(a[i]->peer, b[i]->peer);
      EXPECT_EQ(a[i]->bytes, b[i]->bytes);
      EXPECT_EQ(a[i]->aux, b[i]->aux);
      EXPECT_NEAR(a[i]->time, b[i]->time, 1e-9);
    }
    // The regions keep their names (MPI_Alltoallv is not read back as MPI_Alltoall).
    for (const auto& e : back.locations[r].events) {
      if (e.kind == EventKind::Enter) {
        EXPECT_EQ(back.defs.regions[e.ref].name, mpi_name(back.defs.regions[e.ref].op));
      }
    }
  }
}

TEST(CollectiveOps, VCollectivesAreNamedAndClassified) {
  EXPECT_EQ(mpi_name(MpiOp::Gatherv), "MPI_Gatherv");
  EXPECT_EQ(mpi_name(MpiOp::Scatterv), "MPI_Scatterv");
  EXPECT_EQ(mpi_name(MpiOp::Allgatherv), "MPI_Allgatherv");
  EXPECT_EQ(mpi_name(MpiOp::Alltoallv), "MPI_Alltoallv");
  EXPECT_EQ(base_collective(MpiOp::Gatherv), MpiOp::Gather);
  EXPECT_EQ(base_collective(MpiOp::Scatterv), MpiOp::Scatter);
  EXPECT_EQ(base_collective(MpiOp::Allgatherv), MpiOp::Allgather);
  EXPECT_EQ(base_collective(MpiOp::Alltoallv), MpiOp::Alltoall);
  EXPECT_EQ(base_collective(MpiOp::ReduceScatter), MpiOp::ReduceScatter);
  EXPECT_EQ(base_collective(MpiOp::Send), MpiOp::Send);
  for (const MpiOp op : {MpiOp::Gatherv, MpiOp::Scatterv, MpiOp::Allgatherv, MpiOp::Alltoallv})
    EXPECT_TRUE(is_collective(op)) << mpi_name(op);
}

TEST(CollectiveOps, EveryCollectiveRoundTripsThroughEveryTimedFormat) {
  test::ScratchDir dir("collective_ops");
  const Trace t = every_collective();
  const auto m = Matching::build(t);
  EXPECT_EQ(m.collectives.size(), 17u);  // Init, 15 collectives, Finalize
  for (const std::string file : {"t.wlt", "t.prv", "t_otf2"}) {
    const auto lost = write_trace(t, dir.path(file));
    const std::string in = file == "t_otf2" ? dir.path(file) + "/traces.otf2" : dir.path(file);
    const Trace back = read_trace(in);
    expect_same_collectives(back, t, file);
    EXPECT_EQ(Matching::build(back).collectives.size(), m.collectives.size()) << file;
  }
}

}  // namespace
}  // namespace waitlab::trace
