// workload_to_ti — writes a synthetic workload as a SimGrid time-independent (TI) trace,
// one file per rank plus an index file, so that `smpirun -replay` can run exactly the
// same MPI calls as `waitlab run` (the benchmark's reference; see bench/README.md).
//
// usage: workload_to_ti WORKLOAD OUTDIR SPEED [key=value ...]
//   SPEED: core speed in flop/s (compute seconds become `compute` flops at this speed)
//   key=value: workload options as in a scenario (ranks=4096 iterations=100 ...)
//
// Regions are dropped (TI has none); compute in seconds becomes flops at SPEED.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "analysis/trace/error.hpp"
#include "models/spec.hpp"
#include "models/workload.hpp"

namespace {

using waitlab::models::Action;
using waitlab::models::ActionKind;

// One TI line for an action, or "" for actions TI does not express (regions).
std::string ti_line(int rank, const Action& a, double speed) {
  char buf[256];
  auto line = [&](const char* fmt, auto... args) {
    std::snprintf(buf, sizeof buf, fmt, rank, args...);
    return std::string(buf);
  };
  const auto bytes = static_cast<unsigned long long>(a.bytes);
  switch (a.kind) {
    case ActionKind::Enter:
    case ActionKind::Leave:
      return {};
    case ActionKind::Compute:
      return line("%d compute %.17g", a.flops ? a.amount : a.amount * speed);
    case ActionKind::Send:
    case ActionKind::Ssend:
      return line("%d send %d %d %llu", a.peer, a.tag, bytes);
    case ActionKind::Recv:
      return line("%d recv %d %d %llu", a.peer, a.tag, bytes);
    case ActionKind::Isend:
      return line("%d isend %d %d %llu", a.peer, a.tag, bytes);
    case ActionKind::Irecv:
      return line("%d irecv %d %d %llu", a.peer, a.tag, bytes);
    case ActionKind::Wait:
      throw std::runtime_error("workload_to_ti: MPI_Wait on a single request is not exported");
    case ActionKind::Waitall:
      return line("%d waitall");
    case ActionKind::Sendrecv:
      return line("%d sendRecv %llu %d %llu %d", bytes, a.peer, static_cast<unsigned long long>(a.bytes2),
                  a.peer2);
    case ActionKind::Barrier:
      return line("%d barrier");
    case ActionKind::Bcast:
      return line("%d bcast %llu %d", bytes, a.root);
    case ActionKind::Reduce:
      return line("%d reduce %llu 0 %d", bytes, a.root);
    case ActionKind::Allreduce:
      return line("%d allreduce %llu 0", bytes);
    case ActionKind::Gather:
      return line("%d gather %llu %llu %d", bytes, bytes, a.root);
    case ActionKind::Scatter:
      return line("%d scatter %llu %llu %d", bytes, bytes, a.root);
    case ActionKind::Allgather:
      return line("%d allgather %llu %llu", bytes, bytes);
    case ActionKind::Alltoall:
      return line("%d alltoall %llu %llu", bytes, bytes);
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::cerr << "usage: workload_to_ti WORKLOAD OUTDIR SPEED [key=value ...]\n";
    return 2;
  }
  try {
    const std::string type = argv[1];
    const std::filesystem::path out = argv[2];
    const double speed = std::stod(argv[3]);
    const auto* entry = waitlab::models::find_workload(type);
    if (!entry) throw waitlab::InputError("unknown workload '" + type + "'");
    std::vector<waitlab::models::UserOption> given;
    for (int i = 4; i < argc; ++i) {
      std::string kv = argv[i];
      auto eq = kv.find('=');
      if (eq == std::string::npos) throw waitlab::InputError("expected key=value, got '" + kv + "'");
      given.push_back({kv.substr(0, eq), kv.substr(eq + 1), "argument " + std::to_string(i)});
    }
    auto opts = waitlab::models::make_options(entry->spec, given, "workload " + type, "command line");
    auto workload = waitlab::models::make_workload(type, opts);
    std::filesystem::create_directories(out / "ranks");
    std::ofstream index(out / "index.txt");
    for (int r = 0; r < workload->ranks(); ++r) {
      const auto file = out / "ranks" / ("rank" + std::to_string(r) + ".txt");
      index << std::filesystem::absolute(file).string() << '\n';
      std::ofstream f(file);
      f << r << " init\n";
      auto stream = workload->stream(r);
      Action a;
      while (stream->next(a)) {
        auto l = ti_line(r, a, speed);
        if (!l.empty()) f << l << '\n';
      }
      f << r << " finalize\n";
      if (!f) throw std::runtime_error("cannot write " + file.string());
    }
    std::cout << out.string() << "/index.txt\n";
    return 0;
  } catch (const waitlab::InputError& e) {
    std::cerr << "workload_to_ti: error: " << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "workload_to_ti: internal error: " << e.what() << '\n';
    return 1;
  }
}
