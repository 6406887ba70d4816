// workload_to_ti — writes a synthetic workload as a SimGrid time-independent (TI) trace,
// one file per rank plus an index file, so that `smpirun -replay` can run exactly the
// same MPI calls as `waitlab run` (the benchmark's reference; see bench/README.md).
//
// usage: workload_to_ti WORKLOAD OUTDIR SPEED [key=value ...]
//   SPEED: core speed in flop/s (compute seconds become `compute` flops at this speed)
//   key=value: workload options as in a scenario (ranks=4096 iterations=100 ...)
//
// Regions are dropped (TI has none); compute in seconds becomes flops at SPEED. The rank files
// are listed relative to the index's directory: run `smpirun -replay` from there.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "util/error.hpp"
#include "analysis/trace/ti.hpp"
#include "models/replay.hpp"
#include "models/spec.hpp"
#include "models/workload.hpp"

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
    std::filesystem::create_directories(out);
    const std::string index = (out / "index.txt").string();
    waitlab::trace::write_ti(waitlab::models::ti_from_workload(*workload, speed), index);
    std::cout << index << "\n";
    return 0;
  } catch (const waitlab::InputError& e) {
    std::cerr << "workload_to_ti: error: " << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "workload_to_ti: internal error: " << e.what() << '\n';
    return 1;
  }
}
