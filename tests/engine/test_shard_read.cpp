// The engine from the trace files (issue 32: each process reads only its locations): every process
// balances the ranks by trace::location_event_counts, reads its range with trace::read_trace_part,
// and matches, finds the wait states and the delay costs of its shard — the serial results (of
// read_trace and the serial analyses) to the bit, for the Score-P archives and their .wlt copies,
// an Extrae trace and a Paraver copy of NPB IS, on every number of processes and delivery order.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "analysis/delay/delay.hpp"
#include "analysis/engine/shard.hpp"
#include "analysis/engine/shard_matching.hpp"
#include "analysis/trace/trace_io.hpp"
#include "analysis/trace/wlt.hpp"
#include "processes.hpp"

namespace waitlab::engine {
namespace {

void expect_read_shards_as_serial(const std::string& path) {
  const trace::Trace whole = trace::read_trace(path);
  const trace::Matching matching = trace::Matching::build(whole);
  const analysis::WaitStateResult waits = analysis::wait_states(whole, matching);
  const analysis::DelayResult delay = analysis::delay_costs(whole, matching, waits);
  on_every_world([&](Transport& t, const std::string& where) {
    const Partition partition = Partition::balanced(trace::location_event_counts(path), t.size());
    const LocationRange range = partition.range(t.self());
    const trace::TracePart part = trace::read_trace_part(path, range.first, range.last);
    Shard shard = Shard::of_part(part, partition, t.self());
    for (Location l = range.first; l < range.last; ++l)
      EXPECT_EQ(shard.location(l), whole.locations[static_cast<std::size_t>(l)]) << path << ", " << where;
    match_shard(shard, t);
    const analysis::WaitStateResult mine = analysis::wait_states(shard, shard.matching, t);
    std::size_t owned_instances = 0;
    for (const auto& w : waits.instances) owned_instances += range.holds(w.rank) ? 1 : 0;
    EXPECT_EQ(mine.instances.size(), owned_instances) << path << ", " << where;
    EXPECT_EQ(bits(mine.total_waiting), bits(waits.total_waiting)) << path << ", " << where;
    const analysis::DelayResult costs = analysis::delay_costs(shard, shard.matching, mine, t);
    EXPECT_EQ(bits(costs.short_term), bits(delay.short_term)) << path << ", " << where;
    EXPECT_EQ(bits(costs.long_term), bits(delay.long_term)) << path << ", " << where;
    EXPECT_EQ(bits(costs.unattributed), bits(delay.unattributed)) << path << ", " << where;
    EXPECT_EQ(costs.sync_points, delay.sync_points) << path << ", " << where;
  });
  EXPECT_GT(waits.total_waiting, 0.0) << path;
}

TEST(ShardRead, EachProcessReadsItsRanksOfAnOtf2ArchiveAndAWltFile) {
  const std::filesystem::path data = std::filesystem::path(WAITLAB_SOURCE_DIR) / "tests/data/scorep";
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "waitlab-shard-read";
  std::filesystem::create_directories(dir);
  for (const char* name : {"ping-pong-otf2", "npb-is.W.16"}) {
    const std::string archive = (data / name / "traces.otf2").string();
    expect_read_shards_as_serial(archive);
    const std::string wlt = (dir / (std::string(name) + ".wlt")).string();
    trace::write_wlt(trace::read_trace(archive), wlt);
    expect_read_shards_as_serial(wlt);
  }
  std::filesystem::remove_all(dir);
}

TEST(ShardRead, EachProcessReadsItsTasksOfAParaverTrace) {
  // Paraver (trace::read_paraver_part): an Extrae trace, and waitlab's encoding of NPB IS.
  const std::filesystem::path data = std::filesystem::path(WAITLAB_SOURCE_DIR) / "tests/data";
  expect_read_shards_as_serial((data / "extrae" / "epoch_2proc.prv.gz").string());
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "waitlab-shard-read-prv";
  std::filesystem::create_directories(dir);
  const std::string prv = (dir / "npb-is.W.16.prv").string();
  trace::write_trace(trace::read_trace((data / "scorep" / "npb-is.W.16" / "traces.otf2").string()), prv);
  expect_read_shards_as_serial(prv);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace waitlab::engine
