// waitlab::app — what the command lines of waitlab and waitlab-mpi share (app/cli_common.hpp).
#include "app/cli_common.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <new>
#include <string_view>
#include <vector>

#include "analysis/registry/registry.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace waitlab::app {

namespace {

// The one place where an error reaches the user: one line whatever the input held (binary
// bytes of a file, a newline in a --set value: text::one_line), cut after a few KB.
constexpr std::size_t kMaxErrorBytes = 4096;

// An option or argument given as '' means nothing: say so rather than take the default
// (`--out ''` would write into the scenario's outputs.dir, `--scenario ''` would use none).
const CLI::Validator kNonEmpty(
    [](std::string& value) { return value.empty() ? std::string("must not be empty") : std::string(); }, "",
    "non-empty");

}  // namespace

int print_error(std::ostream& err, const std::string& what, int code) {
  err << "waitlab: error: " << text::one_line(what, kMaxErrorBytes) << "\n";
  return code;
}

void refuse_empty_values(CLI::App& cli) {
  for (auto* sub : cli.get_subcommands([](CLI::App*) { return true; }))
    for (auto* opt : sub->get_options([](CLI::Option* o) { return o->get_type_size() != 0; })) opt->check(kNonEmpty);
}

Failure failure_of(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const AgreedInputError& x) {
    return {2, x.what(), true};
  } catch (const InputError& x) {
    return {2, x.what()};
  } catch (const std::bad_alloc&) {
    // A limit of the host (ulimit -v, the machine's memory) met by a size the checks before the
    // work did not foresee: the input asked for more than this host gives, not a bug.
    return {2,
            "out of memory: this command needed more memory than the host allows (ulimit -v, the "
            "machine's memory); give it a smaller input or more memory"};
  } catch (const std::exception& x) {
    return {1, std::string("internal failure: ") + x.what()};
  } catch (...) {
    return {1, "internal failure: an unknown exception"};
  }
}

// Paths, names and values of the command line end up in JSON outputs (summary.json,
// host.json), which must be UTF-8: an argument that is not is refused before anything runs,
// not found unprintable after a simulation.
std::string non_utf8_argument(int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const std::size_t bad = text::invalid_utf8(arg);
    if (bad == std::string_view::npos) continue;
    return fmt::format(
        "argument {} '{}' is not valid UTF-8 (byte 0x{:02x} at offset {}): waitlab writes paths and names into "
        "UTF-8 JSON files; rename the file or directory",
        i, arg, static_cast<unsigned char>(arg[bad]), bad);
  }
  return "";
}

void add_analyze_options(CLI::App& analyze, AnalyzeArgs& args) {
  auto* a = &args;
  std::vector<std::string> names;
  for (const auto* e : analysis::analyses()) names.push_back(e->name);
  analyze.add_option("trace", a->trace,
                      "Trace: a .wlt file, an OTF2 archive (anchor .otf2 or its directory) or a Paraver .prv file")
      ->required();
  analyze.add_option("--clock-correction", a->clock_correction,
                      "Clock-skew correction before analysing: auto (default: only if receives precede their sends; "
                      "the linear map only where it lowers the violations, then Scalasca's controlled logical clock), "
                      "none (Scalasca's default), linear, clc, clamp, linear+clamp (docs/clock-correction.md)");
  analyze.add_flag("--alltoallv-nxn", a->alltoallv_nxn,
                    "Count MPI_Alltoallv as an N×N synchronisation (Wait at N×N); Scalasca, and waitlab by default, "
                    "do not: ranks that exchange no data need not wait for each other (docs/analyses.md)");
  analyze.add_option("--out,-o", a->out_dir, "Output directory (default: <trace's directory>/analysis)");
  analyze.add_option("--analyses,-a", a->analyses,
                      fmt::format("Analyses to run: {} or all (default: all but footprint, which needs --twin; "
                                  "comma-separated or repeated; delay and critpath include waitstate)",
                                  fmt::join(names, ", ")))
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  analyze.add_option("--convention", a->convention,
                      "Whose definitions the efficiency metrics follow: auto (default: the trace's tool — bsc for "
                      "Extrae/Paraver, scalasca for Score-P/OTF2, waitlab for simulated runs), bsc (whole trace, "
                      "useful = Running outside MPI, every thread a unit), scalasca, waitlab (MPI_Init to "
                      "MPI_Finalize, useful = outside MPI). The critical path takes Scalasca's bounds under scalasca "
                      "(from the MPI_Init Enter to the last MPI_Finalize Enter, no jump inside MPI_Init), waitlab's "
                      "otherwise (first to last event)");
  analyze.add_option("--ideal", a->ideal,
                      "Ideal-network estimate of SerE/TrfE: lamport (Lamport-clock replay of the trace), smpi (the "
                      "trace replayed by the SMPI engine on an ideal network, as Dimemas does), both, or auto "
                      "(default: both for measured traces, lamport for simulated ones)");
  analyze.add_option("--windows", a->windows,
                      "Windows of the timeresolved analysis: N equal windows (default 50), a length (10ms) or "
                      "adaptive[:N] (merged until every rank has sqrt(P) events in each)");
  analyze.add_option("--twin", a->twin,
                      "The twin of a simulated trace: the same scenario and seed without one perturbation (waitlab "
                      "run writes it with run.footprint). Runs the footprint analysis: how far the perturbation "
                      "shifted every rank, how much of it reached the end of the run (docs/analyses.md)");
  add_cut_options(analyze, a->cut, "the timeresolved analysis");
}

void add_cut_options(CLI::App& app, CutArgs& c, const std::string& what) {
  const std::string group = "Cut (one of; " + what + " on that part of the run only, docs/analyses.md)";
  app.add_option("--time-range", c.time_range,
                 "A time range FROM:TO in the trace's time, with units (1.5s:2s; a side left empty is open)")
      ->group(group);
  app.add_option("--region", c.region,
                 "A region by name (solve, MPI_Allreduce; on an OpenMP trace also 'parallel region', 'parallel "
                 "function', 'task'): the time in which some rank or thread is inside one of its instances")
      ->group(group);
  app.add_option("--iterations", c.iterations,
                 "REGION:FIRST-LAST, the FIRST-th to the LAST-th instance of a region that marks an iteration (from "
                 "1), or FIRST-LAST, a simulated workload's iterations (from 0, from the trace's ground truth)")
      ->group(group);
}

}  // namespace waitlab::app
