// analysis_throughput — host time and memory of the trace analyses on one large trace.
//
// usage: analysis_throughput TRACE.wlt
//        analysis_throughput SCENARIO.yaml [key=value ...]   (simulates it first; `--set` overrides)
//
// Prints, for the matcher, wait states, delay costs and the critical path, the host seconds
// and events per second (single-threaded), and the memory they hold per event: the
// matcher's own bytes, and the growth of the process's resident set from before the
// analyses to its peak during them (the peak is reset after the trace is loaded).
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "analysis/critpath/critpath.hpp"
#include "analysis/idlewave/idlewave.hpp"
#include "analysis/delay/delay.hpp"
#include "util/error.hpp"
#include "analysis/trace/wlt.hpp"
#include "bench/bench_util.hpp"
#include "app/summary.hpp"
#include "scenarios/scenario.hpp"

namespace {

using waitlab::bench::seconds;
using waitlab::bench::status_bytes;

}  // namespace

int main(int argc, char** argv) {
  using namespace waitlab;
  if (argc < 2) {
    std::cerr << "usage: analysis_throughput TRACE.wlt | SCENARIO.yaml [key=value ...]\n";
    return 2;
  }
  try {
    const std::string input = argv[1];
    trace::Trace t;
    if (input.size() > 5 && input.substr(input.size() - 5) == ".yaml") {
      const std::vector<std::string> sets(argv + 2, argv + argc);
      const auto s = scenarios::load_scenario(input, sets);
      const double sim = seconds([&] { t = app::simulate_scenario(s, false).result.trace; });
      std::printf("simulated %s in %.1f s of host time\n", input.c_str(), sim);
    } else {
      t = trace::read_wlt(input);
    }
    const double events = static_cast<double>(t.event_count());
    std::printf("trace: %zu ranks, %.0f events (%.1f MB of events)\n", t.ranks(), events,
                events * sizeof(trace::Event) / 1e6);

    { std::ofstream("/proc/self/clear_refs") << "5"; }  // reset the peak resident set
    const double rss0 = status_bytes("VmRSS");
    trace::Matching m;
    analysis::WaitStateResult w;
    analysis::DelayResult d;
    analysis::CriticalPathResult c;
    const double tm = seconds([&] { m = trace::Matching::build(t); });
    const double tw = seconds([&] { w = analysis::wait_states(t, m); });
    const double td = seconds([&] { d = analysis::delay_costs(t, m, w); });
    const double tc = seconds([&] { c = analysis::critical_path(t, m, w); });
    analysis::IdleWaveResult iw;
    const double ti = seconds([&] { iw = analysis::idle_waves(t, m, w); });
    const double peak = status_bytes("VmHWM") - rss0;
    const double held = status_bytes("VmRSS") - rss0;

    const auto row = [&](const char* name, double s) {
      std::printf("  %-22s %8.2f s  %7.2f M events/s\n", name, s, events / s / 1e6);
    };
    std::printf("analysis                 host time   throughput\n");
    row("matching", tm);
    row("wait states", tw);
    row("delay costs", td);
    row("critical path", tc);
    row("all four", tm + tw + td + tc);
    row("idle waves", ti);
    std::printf("memory per event: matcher %.1f B; resident growth %.1f B held, %.1f B at the peak\n",
                static_cast<double>(m.memory_bytes()) / events, held / events, peak / events);
    std::printf("results: %zu wait states (%.6g s), %llu synchronisation points, delay %.6g + %.6g s (+%.6g "
                "unattributed), critical path %.6g s in %zu segments\n",
                w.instances.size(), w.total_waiting, static_cast<unsigned long long>(d.sync_points), d.short_term,
                d.long_term, d.unattributed, c.length, c.segments.size());
    std::printf("idle waves: %zu idle periods, %zu waves, matrix %zu x %zu\n", iw.periods.size(), iw.waves.size(),
                iw.matrix.ranks, iw.matrix.bins);
    return 0;
  } catch (const InputError& e) {
    std::cerr << "analysis_throughput: error: " << e.what() << "\n";
    return 2;
  }
}
