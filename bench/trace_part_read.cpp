// trace_part_read — the memory of reading one part of a trace against reading it whole (issue 32:
// each process of the replay engine reads only its ranks).
//
// usage: trace_part_read TRACE              reads the whole trace (trace::read_trace)
//        trace_part_read TRACE FIRST LAST   reads the ranks [FIRST, LAST) (trace::read_trace_part)
//        trace_part_read TRACE counts       the ranks' weights (trace::location_event_counts: the
//                                           events of a .wlt, the records of a Paraver task, ...)
//
// Prints the ranks and events held (counts: the sum of the weights), host seconds of the read and the process's peak resident set
// (VmHWM) after it; run it under `/usr/bin/time -v` for the same peak as the system reports it.
// The process does nothing else, so the peak is the reader's (and the program's few MB).
#include <cstdio>
#include <string>
#include <vector>

#include "analysis/trace/trace_io.hpp"
#include "analysis/trace/trace_part.hpp"
#include "bench/bench_util.hpp"

int main(int argc, char** argv) {
  using namespace waitlab;
  if (argc != 2 && argc != 3 && argc != 4) {
    std::fprintf(stderr, "usage: %s TRACE [FIRST LAST | counts]\n", argv[0]);
    return 2;
  }
  const std::string path = argv[1];
  std::size_t ranks = 0, held = 0;
  std::uint64_t events = 0;
  std::string what;
  const double s = bench::seconds([&] {
    if (argc == 2) {
      const trace::Trace t = trace::read_trace(path);
      what = "whole";
      ranks = held = t.ranks();
      for (const auto* ls : {&t.locations, &t.threads})
        for (const auto& l : *ls) events += l.events.size();
    } else if (argc == 3) {
      const std::vector<std::uint64_t> counts = trace::location_event_counts(path);
      what = "counts";
      ranks = counts.size();
      for (const std::uint64_t c : counts) events += c;
    } else {
      const trace::TracePart p = trace::read_trace_part(path, std::stoi(argv[2]), std::stoi(argv[3]));
      what = "ranks [" + std::string(argv[2]) + ", " + argv[3] + ")";
      ranks = p.ranks;
      held = p.locations.size();
      for (const auto* ls : {&p.locations, &p.threads})
        for (const auto& l : *ls) events += l.events.size();
    }
  });
  std::printf("%s: %s of %zu ranks: %zu ranks held, %llu %s, %.2f s, peak %.1f MB\n", path.c_str(), what.c_str(),
              ranks, held, static_cast<unsigned long long>(events), argc == 3 ? "weight (every rank's)" : "events", s,
              bench::status_bytes("VmHWM") / 1e6);
  return 0;
}
