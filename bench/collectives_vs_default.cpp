// collectives_vs_default — how waitlab's engine design changes the simulated time of every
// collective, against SMPI's default settings (docs/engine.md, "Collectives").
//
// Waitlab semantics run SimGrid with smpi/send-is-detached-thresh:0 and complete small
// point-to-point sends in the engine; the messages *inside* collective algorithms still go
// through SMPI, where threshold 0 makes every one of them a rendezvous. This tool measures
// what that costs, per collective and message size, at 64 ranks on a flat cluster:
//
//   waitlab/fast     our default: threshold 0, the "fast" tree algorithms
//   waitlab/mpi      threshold 0, the MPI-like algorithms
//   waitlab/default  threshold 0, SimGrid's default selector (same algorithms as smpi-default)
//   smpi-default     SimGrid's defaults: 64 KiB detach threshold, default selector
//
// waitlab/default vs smpi-default isolates the detach threshold (same algorithms);
// waitlab/fast vs waitlab/default isolates the algorithms.
//
// usage: collectives_vs_default [RANKS]   (default 64)
// Prints a Markdown table: the simulated time of one call, from the first rank in to the
// last rank out. Every run makes exactly one call, entered by all ranks at the same time:
// in a loop of calls, ranks that leave early (eager sends) would enter the next call early
// and the span would measure skew instead of the collective. Runs are deterministic, so
// one call per configuration is the whole measurement.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "util/error.hpp"
#include "models/workload.hpp"
#include "sim/engine.hpp"

namespace {

using waitlab::models::Action;
using waitlab::models::ActionKind;
using waitlab::trace::EventKind;
using waitlab::trace::MpiOp;

// Every rank: compute 100 us, then one collective: all ranks enter it together.
class CollectiveLoop : public waitlab::models::Workload {
 public:
  CollectiveLoop(int ranks, ActionKind kind, std::uint64_t bytes)
      : ranks_(ranks), kind_(kind), bytes_(bytes) {
    defs_.region("compute");
  }
  std::string name() const override { return "collective_loop"; }
  int ranks() const override { return ranks_; }
  int iterations() const override { return 1; }
  const waitlab::trace::Definitions& definitions() const override { return defs_; }
  std::unique_ptr<waitlab::models::ActionStream> stream(waitlab::trace::Rank) const override {
    Action c;
    c.kind = ActionKind::Compute;
    c.amount = 100e-6;
    c.iteration = 0;
    Action a;
    a.kind = kind_;
    a.bytes = bytes_;
    a.root = 0;
    a.iteration = 0;
    return std::make_unique<waitlab::models::VectorStream>(std::vector<Action>{c, a});
  }

 private:
  int ranks_;
  ActionKind kind_;
  std::uint64_t bytes_;
  waitlab::trace::Definitions defs_;
};

struct Config {
  const char* label;
  waitlab::sim::Semantics semantics;
  const char* collectives;
};

struct Measure {
  double call = 0;     // s of simulated time, first rank in to last rank out
  double in_call = 0;  // s, mean over ranks of (leave - enter): what eager sends change
  double host = 0;     // s of host time for the whole run
};

Measure measure(const waitlab::models::PlatformDesc& platform, const CollectiveLoop& w, MpiOp op,
                const Config& c) {
  waitlab::sim::RunOptions o;
  o.semantics = c.semantics;
  o.collectives = c.collectives;
  const auto r = waitlab::sim::simulate(platform, w, {}, o);
  Measure m;
  m.host = r.stats.host_seconds;
  double first_in = 1e300;
  double last_out = 0;
  for (const auto& loc : r.trace.locations) {
    double in = 0;
    for (const auto& e : loc.events) {
      if (e.kind == EventKind::CollBegin && e.op == op) {
        first_in = std::min(first_in, e.time);
        in = e.time;
      }
      if (e.kind == EventKind::CollEnd && e.op == op) {
        last_out = std::max(last_out, e.time);
        m.in_call += (e.time - in) / static_cast<double>(r.trace.locations.size());
      }
    }
  }
  m.call = last_out - first_in;
  return m;
}

std::string size_text(std::uint64_t b) {
  if (b >= 1024 && b % 1024 == 0) return std::to_string(b / 1024) + " KiB";
  return std::to_string(b) + " B";
}

}  // namespace

int main(int argc, char** argv) {
  const int ranks = argc > 1 ? std::atoi(argv[1]) : 64;
  if (ranks < 2) {
    std::fprintf(stderr, "usage: %s [RANKS>=2]\n", argv[0]);
    return 2;
  }
  waitlab::models::PlatformDesc platform;
  platform.kind = waitlab::models::PlatformKind::Cluster;
  platform.nodes = ranks;
  platform.cores = 1;
  platform.speed = 1e9;
  platform.network_link = {10e9, 1e-6};

  const std::vector<std::pair<ActionKind, MpiOp>> kinds = {
      {ActionKind::Barrier, MpiOp::Barrier},     {ActionKind::Bcast, MpiOp::Bcast},
      {ActionKind::Reduce, MpiOp::Reduce},       {ActionKind::Allreduce, MpiOp::Allreduce},
      {ActionKind::Gather, MpiOp::Gather},       {ActionKind::Scatter, MpiOp::Scatter},
      {ActionKind::Allgather, MpiOp::Allgather}, {ActionKind::Alltoall, MpiOp::Alltoall},
  };
  const std::vector<std::uint64_t> sizes = {8, 1024, 65536, 262144};
  const std::vector<Config> configs = {
      {"waitlab/fast", waitlab::sim::Semantics::Waitlab, "fast"},
      {"waitlab/mpi", waitlab::sim::Semantics::Waitlab, "mpi"},
      {"waitlab/default", waitlab::sim::Semantics::Waitlab, "default"},
      {"smpi-default", waitlab::sim::Semantics::SmpiDefault, "default"},
  };

  struct Row {
    std::string name, size;
    std::vector<Measure> m;
  };
  std::vector<Row> rows;
  double host_total = 0;
  try {
    for (const auto& [kind, op] : kinds) {
      for (std::uint64_t bytes : sizes) {
        if (kind == ActionKind::Barrier && bytes != sizes.front()) continue;
        const CollectiveLoop w(ranks, kind, kind == ActionKind::Barrier ? 0 : bytes);
        Row row{std::string(waitlab::trace::mpi_name(op)),
                kind == ActionKind::Barrier ? "-" : size_text(bytes),
                {}};
        for (const auto& c : configs) {
          row.m.push_back(measure(platform, w, op, c));
          host_total += row.m.back().host;
        }
        rows.push_back(std::move(row));
      }
    }
  } catch (const waitlab::InputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  const auto table = [&](const char* title, double Measure::*field) {
    std::printf("%s, %d ranks, flat cluster of 10 GB/s, 1 us links\n\n| collective | size |", title, ranks);
    for (const auto& c : configs) std::printf(" %s |", c.label);
    std::printf(" fast / smpi-default | default: waitlab / smpi-default |\n|---|---|");
    for (std::size_t i = 0; i < configs.size() + 2; ++i) std::printf("---:|");
    std::printf("\n");
    for (const auto& row : rows) {
      std::printf("| %s | %s |", row.name.c_str(), row.size.c_str());
      for (const auto& x : row.m) std::printf(" %.2f |", x.*field * 1e6);
      std::printf(" %.2f | %.2f |\n", row.m[0].*field / row.m[3].*field, row.m[2].*field / row.m[3].*field);
    }
    std::printf("\n");
  };
  table("Simulated time of one call in us, first rank in to last rank out", &Measure::call);
  table("Mean time a rank spends in the call in us", &Measure::in_call);
  std::printf("\nhost time of all runs: %.1f s\n", host_total);
  return 0;
}
