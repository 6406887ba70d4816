// trace_io_throughput — write and read throughput of the trace formats on one synthetic trace.
//
// usage: trace_io_throughput OUTDIR [EVENTS=10000000] [RANKS=256] [REPEAT=1] [FORMATS=all]
//        (FORMATS: comma-separated names from kFormats, e.g. otf2 or wlt,otf2)
//
// Builds a Trace of about EVENTS events directly in memory (no simulation): RANKS ranks, each
// iterating compute (a user region), MPI_Send to the next rank, MPI_Recv from the previous one,
// and an MPI_Allreduce on MPI_COMM_WORLD every 10 iterations, inside main and
// MPI_Init/MPI_Finalize. Then, for every format of kFormats, writes it under OUTDIR and reads it
// back REPEAT times (the best time is kept), checks that the events came back, and prints
// events per second for both directions, the size on disk, and the memory of reading: the
// growth of the resident set from just before the read to its peak during it (VmHWM, reset by
// writing 5 to /proc/self/clear_refs) and to after it (what the Trace holds), per event.
// Reads come from the page cache (the files were just written); writes are not synced.
// Adding a format is one row of kFormats. TI rows count the trace's events per second too, but
// what is written and read back are TI records (MPI calls and compute between them).
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "util/error.hpp"
#include "analysis/trace/otf2.hpp"
#include "analysis/trace/paraver.hpp"
#include "analysis/trace/ti.hpp"
#include "analysis/trace/wlt.hpp"
#include "bench/bench_util.hpp"
#include "models/replay.hpp"

namespace {

using namespace waitlab;
using trace::Event;
using trace::EventKind;
using trace::MpiOp;
using trace::Trace;
namespace fs = std::filesystem;

// What a read returned: how many items (events; TI records for TI) and the data itself, held
// until the memory is measured.
struct Back {
  std::size_t items = 0;
  std::shared_ptr<void> data;
};

template <class T>
Back hold(T&& value, std::size_t items) {
  return {items, std::make_shared<std::decay_t<T>>(std::forward<T>(value))};
}

// A format: where it goes under OUTDIR, how to write it there (returning the items written)
// and read it back.
struct Format {
  const char* name;
  std::string (*path)(const std::string& outdir);
  std::size_t (*write)(const Trace& t, const std::string& path);
  Back (*read)(const std::string& path);
};

// TI holds MPI calls and the compute between them, not events: the trace goes through the
// replay's action streams (models/replay.hpp) as `waitlab convert` does, compute at 1 Gf/s.
std::size_t write_ti(const Trace& t, const std::string& p) {
  const auto w = models::replay_trace(t, "bench", {});
  const trace::TiTrace ti = models::ti_from_workload(*w, 1e9);
  trace::write_ti(ti, p);
  return ti.record_count();
}

const Format kFormats[] = {
    {"wlt", [](const std::string& d) { return d + "/trace.wlt"; },
     [](const Trace& t, const std::string& p) {
       trace::write_wlt(t, p);
       return t.event_count();
     },
     [](const std::string& p) {
       Trace t = trace::read_wlt(p);
       const auto n = t.event_count();
       return hold(std::move(t), n);
     }},
    {"otf2", [](const std::string& d) { return d + "/otf2"; },
     [](const Trace& t, const std::string& p) {
       trace::write_otf2(t, p);
       return t.event_count();
     },
     [](const std::string& p) {
       Trace t = trace::read_otf2(p + "/traces.otf2");
       const auto n = t.event_count();
       return hold(std::move(t), n);
     }},
    {"paraver", [](const std::string& d) { return d + "/trace.prv"; },
     [](const Trace& t, const std::string& p) {
       trace::write_paraver(t, p);
       return t.event_count();
     },
     [](const std::string& p) {
       Trace t = trace::read_paraver(p);
       const auto n = t.event_count();
       return hold(std::move(t), n);
     }},
    {"ti", [](const std::string& d) { return d + "/trace.ti"; }, write_ti,
     [](const std::string& p) {
       trace::TiTrace t = trace::read_ti(p);
       const auto n = t.record_count();
       return hold(std::move(t), n);
     }},
};

using waitlab::bench::seconds;
using waitlab::bench::status_bytes;

std::uintmax_t disk_bytes(const fs::path& p) {
  if (fs::is_regular_file(p)) return fs::file_size(p);
  std::uintmax_t n = 0;
  for (const auto& e : fs::recursive_directory_iterator(p))
    if (e.is_regular_file()) n += e.file_size();
  return n;
}

Trace synthetic(std::size_t events, std::size_t ranks) {
  constexpr std::size_t kAllreduceEvery = 10;
  // 8 events per iteration, 4 more every kAllreduceEvery-th; 8 around the loop.
  const double per_iteration = 8.0 + 4.0 / kAllreduceEvery;
  const std::size_t iterations =
      std::max<std::size_t>(1, static_cast<std::size_t>(static_cast<double>(events) / static_cast<double>(ranks) / per_iteration));
  Trace t;
  const auto main_region = t.defs.region("main"), compute = t.defs.region("compute");
  const auto init = t.defs.mpi_region(MpiOp::Init), finalize = t.defs.mpi_region(MpiOp::Finalize),
             send = t.defs.mpi_region(MpiOp::Send), recv = t.defs.mpi_region(MpiOp::Recv),
             allreduce = t.defs.mpi_region(MpiOp::Allreduce);
  trace::Communicator world{"MPI_COMM_WORLD", {}};
  for (std::size_t r = 0; r < ranks; ++r) world.members.push_back(static_cast<trace::Rank>(r));
  t.defs.comms.push_back(world);
  t.locations.resize(ranks);
  const auto n = static_cast<trace::Rank>(ranks);
  for (trace::Rank r = 0; r < n; ++r) {
    auto& ev = t.locations[static_cast<std::size_t>(r)].events;
    t.locations[static_cast<std::size_t>(r)].rank = r;
    ev.reserve(static_cast<std::size_t>(static_cast<double>(iterations) * per_iteration) + 16);
    double now = 1e-6 * r;
    const auto at = [&](double dt) { return now += dt; };
    const auto call = [&](trace::RegionId region, MpiOp op) {
      ev.push_back(trace::make_event(at(1e-7), EventKind::Enter, op, region));
    };
    const auto done = [&](trace::RegionId region, MpiOp op) {
      ev.push_back(trace::make_event(at(2e-6), EventKind::Leave, op, region));
    };
    call(main_region, MpiOp::None);
    call(init, MpiOp::Init);
    done(init, MpiOp::Init);
    for (std::size_t i = 0; i < iterations; ++i) {
      call(compute, MpiOp::None);
      done(compute, MpiOp::None);
      now += 1e-4 * (1.0 + 0.01 * static_cast<double>((i * 7 + static_cast<std::size_t>(r)) % 13));
      call(send, MpiOp::Send);
      ev.push_back(trace::make_event(at(1e-7), EventKind::Send, MpiOp::Send, trace::kCommWorld, (r + 1) % n, 1, 8192));
      done(send, MpiOp::Send);
      call(recv, MpiOp::Recv);
      ev.push_back(
          trace::make_event(at(3e-6), EventKind::Recv, MpiOp::Recv, trace::kCommWorld, (r + n - 1) % n, 1, 8192));
      done(recv, MpiOp::Recv);
      if (i % kAllreduceEvery == kAllreduceEvery - 1) {
        call(allreduce, MpiOp::Allreduce);
        ev.push_back(trace::make_event(at(1e-7), EventKind::CollBegin, MpiOp::Allreduce, trace::kCommWorld));
        ev.push_back(trace::make_event(at(5e-6), EventKind::CollEnd, MpiOp::Allreduce, trace::kCommWorld,
                                       trace::kNoRank, 0, 8, 8));
        done(allreduce, MpiOp::Allreduce);
      }
    }
    call(finalize, MpiOp::Finalize);
    done(finalize, MpiOp::Finalize);
    done(main_region, MpiOp::None);
  }
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: trace_io_throughput OUTDIR [EVENTS=10000000] [RANKS=256] [REPEAT=1] [FORMATS=all]\n";
    return 2;
  }
  try {
    const std::string outdir = argv[1];
    const std::size_t events = argc > 2 ? std::stoull(argv[2]) : 10'000'000;
    const std::size_t ranks = argc > 3 ? std::stoull(argv[3]) : 256;
    const int repeat = argc > 4 ? std::max(1, std::stoi(argv[4])) : 1;
    const std::string only = argc > 5 ? "," + std::string(argv[5]) + "," : std::string("all");
    fs::create_directories(outdir);
    Trace t;
    const double build = seconds([&] { t = synthetic(events, ranks); });
    const double n = static_cast<double>(t.event_count());
    std::printf("synthetic trace: %zu ranks, %.0f events (%.1f MB in memory), built in %.2f s\n", t.ranks(), n,
                n * sizeof(Event) / 1e6, build);
    std::printf("| format | on disk, MB | B/event | write s | M events/s | read s | M events/s | read peak B/event "
                "| read held B/event | items written |\n");
    std::printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (const Format& f : kFormats) {
      if (only != "all" && only.find("," + std::string(f.name) + ",") == std::string::npos) continue;
      const std::string path = f.path(outdir);
      double write_s = 1e300, read_s = 1e300, peak = 0, held = 0;
      std::size_t written = 0;
      for (int k = 0; k < repeat; ++k) write_s = std::min(write_s, seconds([&] { written = f.write(t, path); }));
      const double bytes = static_cast<double>(disk_bytes(outdir));  // every file of the format (.pcf, rank files)
      for (int k = 0; k < repeat; ++k) {
        malloc_trim(0);  // give freed memory back, so the resident set does not hide reuse
        { std::ofstream("/proc/self/clear_refs") << "5"; }  // VmHWM := VmRSS
        const double rss0 = status_bytes("VmRSS");
        Back back;
        read_s = std::min(read_s, seconds([&] { back = f.read(path); }));
        peak = std::max(peak, status_bytes("VmHWM") - rss0);
        held = std::max(held, status_bytes("VmRSS") - rss0);
        if (back.items != written) {
          std::cerr << f.name << ": read " << back.items << " items, wrote " << written << "\n";
          return 1;
        }
      }
      std::printf("| %s | %.1f | %.1f | %.2f | %.2f | %.2f | %.2f | %.1f | %.1f | %zu |\n", f.name, bytes / 1e6,
                  bytes / n, write_s, n / write_s / 1e6, read_s, n / read_s / 1e6, peak / n, held / n, written);
      std::fflush(stdout);
      fs::remove_all(outdir);
      fs::create_directories(outdir);
    }
    return 0;
  } catch (const InputError& e) {
    std::cerr << "trace_io_throughput: error: " << e.what() << "\n";
    return 2;
  }
}
