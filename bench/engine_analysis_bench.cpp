// engine_analysis_bench — the analyses on the replay engine over Open MPI (issue 32): each process
// reads only its ranks of a trace, corrects its clocks (auto) and replays them.
//
// usage: mpirun -np P engine_analysis_bench TRACE
//
// Every process balances the ranks by their event counts (trace::location_event_counts), reads its
// range (trace::read_trace_part), corrects the clocks (clock::correct_clocks, auto) and runs
// every analysis (wait states, delay costs, critical path, minimum-duration estimate, idle
// waves, time-resolved efficiency: the registry's run_analyses_sharded, matching included) on
// its shard over an MpiTransport. Process 0 prints,
// per process: the events it owns, host seconds of reading, matching and each analysis, its peak
// resident set (VmHWM) and the bytes it sent to other processes (parcels and collectives), and
// figures the analyses found (equal for every P: the engine's promise). With P = 1 it is the
// serial analysis of the same code.
#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

#include "analysis/clock/correct.hpp"
#include "analysis/critpath/critpath.hpp"
#include "analysis/delay/delay.hpp"
#include "analysis/engine/mpi/mpi_transport.hpp"
#include "analysis/engine/shard.hpp"
#include "analysis/registry/registry.hpp"
#include "analysis/trace/trace_io.hpp"
#include "bench/bench_util.hpp"

namespace {

using namespace waitlab;
using bench::seconds;
using bench::status_bytes;

// One process's figures, gathered to process 0.
struct Figures {
  double events = 0, locations = 0;
  double read_s = 0, clock_s = 0, match_s = 0, waitstate_s = 0, delay_s = 0, critpath_s = 0, minprofile_s = 0,
         idlewave_s = 0, timeresolved_s = 0;
  double peak_bytes = 0;
  double bytes_sent = 0, parcels_sent = 0, collective_bytes = 0;
  double messages_here = 0;
};

int run(const std::string& path) {
  engine::MpiTransport t;
  Figures f;
  const double t0 = MPI_Wtime();
  const std::vector<std::uint64_t> counts = trace::location_event_counts(path);
  const engine::Partition partition = engine::Partition::balanced(counts, t.size());
  const engine::LocationRange range = partition.range(t.self());
  trace::TracePart part;
  f.read_s = seconds([&] { part = trace::read_trace_part(path, range.first, range.last); });
  for (const auto& l : part.locations) f.events += static_cast<double>(l.events.size());
  f.locations = static_cast<double>(range.size());
  engine::Shard shard = engine::Shard::of_part(part, partition, t.self());
  f.clock_s = seconds([&] { clock::correct_clocks(shard, t); });  // auto, as waitlab analyze
  const analysis::AnalysisRun run = analysis::run_analyses_sharded(
      shard, t, {"waitstate", "delay", "critpath", "minprofile", "idlewave", "timeresolved"});
  f.messages_here = static_cast<double>(shard.matching.messages.size());
  f.match_s = run.match_seconds;
  f.waitstate_s = run.seconds.at("waitstate");
  f.delay_s = run.seconds.at("delay");
  f.critpath_s = run.seconds.at("critpath");
  f.minprofile_s = run.seconds.at("minprofile");
  f.idlewave_s = run.seconds.at("idlewave");
  f.timeresolved_s = run.seconds.at("timeresolved");
  f.peak_bytes = status_bytes("VmHWM");
  f.bytes_sent = static_cast<double>(t.traffic().bytes_sent);
  f.parcels_sent = static_cast<double>(t.traffic().parcels_sent);
  f.collective_bytes = static_cast<double>(t.traffic().collective_bytes);
  const double wall = MPI_Wtime() - t0;
  std::vector<Figures> all(static_cast<std::size_t>(t.size()));
  MPI_Gather(&f, sizeof f, MPI_BYTE, all.data(), sizeof f, MPI_BYTE, 0, MPI_COMM_WORLD);
  double slowest = 0;
  MPI_Reduce(&wall, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (t.self() != 0) return 0;
  std::printf("trace %s: %zu ranks, %d processes\n", path.c_str(), part.ranks, t.size());
  std::printf("%4s %6s %11s %7s %7s %7s %7s %7s %7s %7s %7s %7s %9s %10s %9s %10s %8s\n", "proc", "ranks", "events",
              "read_s", "clock_s", "match_s", "wait_s", "delay_s", "cpath_s", "minp_s", "idle_s", "tres_s", "ev/s(M)",
              "peak_MB", "sent_MB", "parcels", "B/event");
  double events = 0, sent = 0;
  for (std::size_t p = 0; p < all.size(); ++p) {
    const Figures& x = all[p];
    const double analysis_s = x.clock_s + x.match_s + x.waitstate_s + x.delay_s + x.critpath_s + x.minprofile_s +
                              x.idlewave_s + x.timeresolved_s;
    events += x.events;
    sent += x.bytes_sent + x.collective_bytes;
    std::printf("%4zu %6.0f %11.0f %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f %9.2f %10.1f %9.2f %10.0f %8.2f\n",
                p, x.locations, x.events, x.read_s, x.clock_s, x.match_s, x.waitstate_s, x.delay_s, x.critpath_s,
                x.minprofile_s, x.idlewave_s, x.timeresolved_s,
                analysis_s > 0 ? x.events / analysis_s / 1e6 : 0.0, x.peak_bytes / 1e6,
                (x.bytes_sent + x.collective_bytes) / 1e6, x.parcels_sent,
                x.events > 0 ? (x.bytes_sent + x.collective_bytes) / x.events : 0.0);
  }
  std::printf("slowest process: %.2f s from the first read to the last analysis; %.2f M events/s overall; "
              "%.2f B sent per event, %.2f B per message (%llu messages)\n",
              slowest, events / slowest / 1e6, events > 0 ? sent / events : 0.0,
              run.messages > 0 ? sent / static_cast<double>(run.messages) : 0.0,
              static_cast<unsigned long long>(run.messages));
  const auto& w = *run.results.get<analysis::WaitStateResult>("waitstate");
  const auto& d = *run.results.get<analysis::DelayResult>("delay");
  const auto& c = *run.results.get<analysis::CriticalPathResult>("critpath");
  std::printf("results: waiting %.9g s (%llu Late Sender), delay short-term %.9g s, long-term %.9g s, "
              "unattributed %.9g s; critical path %.9g s, %llu jumps\n",
              w.total_waiting, static_cast<unsigned long long>(w.count[0]), d.short_term, d.long_term,
              d.unattributed, c.length, static_cast<unsigned long long>(c.jumps));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int code = 0;
  if (argc != 2) {
    std::fprintf(stderr, "usage: mpirun -np P engine_analysis_bench TRACE\n");
    code = 2;
  } else {
    try {
      code = run(argv[1]);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "engine_analysis_bench: %s\n", e.what());
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  MPI_Finalize();
  return code;
}
