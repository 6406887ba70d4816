// waitlab::app — the command line: every subcommand's options and what it does, and main().
//
// Promise: each subcommand is one function below (define_<name>) that declares its options on
// CLI11's parser and returns what to do once they are parsed; main() declares them in the
// order `waitlab --help` shows them, parses, runs the one chosen and turns every failure into
// one line on standard error: exit 2 for bad input (InputError, a parse error, an empty value,
// an argument or working directory that is not UTF-8, out of memory), 1 for an internal failure.
#include "app/commands.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <new>
#include <ostream>

#include "analysis/registry/registry.hpp"
#include "analysis/trace/trace_io.hpp"
#include "app/analyze.hpp"
#include "app/cli_common.hpp"
#include "app/ideal_replay.hpp"
#include "app/waitlab_child.hpp"
#include "analysis/trace/atomic_file.hpp"
#include "analysis/trace/clock.hpp"
#include "app/counterfactual.hpp"
#include "app/pop.hpp"
#include "app/report.hpp"
#include "app/run_command.hpp"
#include "app/study.hpp"
#include "app/validate.hpp"
#include "app/version.hpp"
#include "util/error.hpp"
#include "util/text.hpp"
#include "util/units.hpp"

namespace waitlab::app {

namespace fs = std::filesystem;

namespace {

// `waitlab nosuch ...`: the first argument that is not a flag names the command (the program
// itself has only --help and --version). CLI11 would answer "A subcommand is required", or
// print the main help for `nosuch --help`.
std::string unknown_command(int argc, const char* const* argv, const CLI::App& cli) {
  std::vector<std::string> names;
  for (const auto* c : cli.get_subcommands([](const CLI::App*) { return true; })) names.push_back(c->get_name());
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (!arg.empty() && arg.front() == '-') continue;
    if (std::find(names.begin(), names.end(), arg) != names.end()) return "";
    const std::string best = models::did_you_mean(arg, names);
    return "unknown command '" + arg + "'" + (best.empty() ? std::string(" (see waitlab --help)") : "; did you mean '" + best + "'?");
  }
  return "";
}

// Commands that record absolute paths (host.json's scenario_path; a replay's trace and
// platform file) need a working directory whose name is UTF-8: refuse it up front rather
// than fail to write JSON after the simulation.
std::string non_utf8_working_directory(const CLI::App& cli) {
  bool records_paths = false;
  for (const char* name : {"run", "replay", "whatif", "sweep", "validate"})
    records_paths = records_paths || cli.get_subcommand(name)->parsed();
  if (!records_paths) return "";
  std::error_code ec;
  const std::string cwd = fs::current_path(ec).string();
  const std::size_t bad = text::invalid_utf8(cwd);
  if (ec || bad == std::string::npos) return "";
  return fmt::format(
      "the working directory '{}' is not valid UTF-8 (byte 0x{:02x} at offset {}): waitlab records absolute paths in "
      "its JSON outputs, which are UTF-8; run it from another directory",
      cwd, static_cast<unsigned char>(cwd[bad]), bad);
}

// A subcommand: its parser, and what it does once parsed (its exit status).
struct Command {
  CLI::App* app;
  std::function<int(std::ostream&)> run;
};

// Options of type T that live as long as the command's action (the parser writes into them).
template <class T>
std::shared_ptr<T> options() {
  return std::make_shared<T>();
}

void repeatable(CLI::Option* o) {
  o->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

Command define_run(CLI::App& cli) {
  struct Options {
    RunArgs args;
    bool no_progress = false;
    std::string footprint;
  };
  auto o = options<Options>();
  auto* run = cli.add_subcommand("run", "Simulate a scenario; write DIR/summary.json and DIR/trace.wlt");
  run->add_option("scenario", o->args.scenario, "Scenario file (YAML; docs/scenarios.md)")->required();
  run->add_option("--out,-o", o->args.out_dir, "Output directory (default: the scenario's outputs.dir)");
  repeatable(run->add_option("--set,-s", o->args.sets,
                             "Override one scenario value: key=value, e.g. workload.iterations=10, run.seed=3, "
                             "perturbations[0].duration=5ms (repeatable)"));
  run->add_option("--footprint", o->footprint,
                  "Also simulate the twin without this perturbation (a cause: delay, noise, imbalance, all; a type; "
                  "an index) and measure the perturbation's counterfactual footprint: how far it shifted every rank, "
                  "how much of it reached the end of the run (= --set run.footprint=SEL; docs/analyses.md)");
  run->add_flag("--no-progress", o->no_progress, "Do not show progress on the terminal");
  return {run, [o](std::ostream& out) {
            o->args.progress = !o->no_progress;
            if (!o->footprint.empty()) o->args.sets.push_back("run.footprint=" + o->footprint);
            run_command(o->args, out);
            return 0;
          }};
}

Command define_check(CLI::App& cli) {
  struct Options {
    bool update = false;
    std::vector<std::string> files, sets;
  };
  auto o = options<Options>();
  auto* check = cli.add_subcommand(
      "check", "Simulate scenarios and compare their key figures with <dir>/expected/<name>.json");
  check->add_option("scenarios", o->files, "Scenario files")->required();
  check->add_flag("--update", o->update, "Rewrite the expected figures instead of comparing");
  repeatable(check->add_option("--set,-s", o->sets, "Override one scenario value (as for run; repeatable)"));
  return {check, [o](std::ostream& out) {
            int status = 0;
            for (const auto& f : o->files) {
              const CheckResult r = check_scenario(f, o->update, o->sets);
              if (r.updated) {
                out << r.scenario << ": wrote " << r.expected_file << "\n";
              } else if (r.missing) {
                out << r.scenario << ": no expected figures at " << r.expected_file << " (run with --update)\n";
                status = 3;
              } else if (r.differences.empty()) {
                out << r.scenario << ": ok\n";
              } else {
                out << r.scenario << ": DIFFERS from " << r.expected_file << "\n";
                for (const auto& d : r.differences) out << "  " << d << "\n";
                status = 3;
              }
            }
            return status;
          }};
}

Command define_analyze(CLI::App& cli) {
  auto a = options<AnalyzeArgs>();
  auto* analyze = cli.add_subcommand(
      "analyze", "Run the trace analyses on a trace (.wlt, OTF2, Paraver); write DIR/summary.json and one CSV per table");
  add_analyze_options(*analyze, *a);
  return {analyze, [a](std::ostream& out) {
            analyze_command(*a, out, [](const ReadTrace& rt, const AnalyzeArgs& args,
                                        const analysis::TimeResolvedResult& measured) {
              return smpi_ideal_run(rt.trace, args.trace, measured);
            });
            return 0;
          }};
}

// For waitlab-mpi analyze (app/waitlab_child.hpp), which cannot run SMPI itself: the SMPI
// ideal-network replay of a trace, as `analyze` runs it, into a record file. Not listed.
Command define_smpi_ideal(CLI::App& cli) {
  struct Options {
    std::string trace, clock_correction = "auto", measured, record;
  };
  auto o = options<Options>();
  auto* c = cli.add_subcommand("smpi-ideal", "");
  c->group("");
  c->add_option("trace", o->trace)->required();
  c->add_option("--clock-correction", o->clock_correction);
  c->add_option("--measured", o->measured)->required();
  c->add_option("--record", o->record)->required();
  return {c, [o](std::ostream&) {
            trace::ClockOptions clock;
            if (!trace::parse_clock_mode(o->clock_correction, clock.mode))
              throw InputError("--clock-correction: unknown mode '" + o->clock_correction + "'");
            const analysis::TimeResolvedResult measured = parse_measured(o->measured);
            trace::Trace t = trace::read_trace(o->trace);
            trace::correct_clocks(t, clock);
            trace::write_file_atomic(o->record, smpi_ideal_record(smpi_ideal_run(t, o->trace, measured)));
            return 0;
          }};
}

Command define_pop(CLI::App& cli) {
  auto a = options<PopArgs>();
  auto* pop = cli.add_subcommand(
      "pop", "POP model factors of a scaling study: traces of one program at several rank counts -> "
             "DIR/pop.csv, pop.json, modelfactors.csv (BSC's modelfactors table: its rows, names and units), "
             "pop.png, pop_speedup.png and report.html (docs/pop.md)");
  pop->add_option("traces", a->inputs,
                  "Traces of the runs: Extrae .prv/.prv.gz, OTF2 archives, .wlt, run directories (DIR/trace.wlt) "
                  "or a sweep directory (its point_* runs)")
      ->required();
  pop->add_option("--out,-o", a->out_dir, "Output directory (default: pop)");
  pop->add_option("--scaling", a->scaling,
                  "strong (default: the same problem on more units) or weak (the problem grows with the units)");
  pop->add_option("--convention", a->convention, "As for analyze: auto (default), bsc, scalasca, waitlab");
  pop->add_option("--ideal", a->ideal,
                  "Ideal-network estimate of SerE/TrfE: lamport (default) or smpi (every trace replayed by the SMPI "
                  "engine on an ideal network)");
  add_cut_options(*pop, a->cut, "the factors of every run");
  return {pop, [a](std::ostream& out) {
            pop_command(*a, out);
            return 0;
          }};
}

Command define_convert(CLI::App& cli) {
  struct Options {
    std::string in, out, speed = "1Gf";
  };
  auto o = options<Options>();
  auto* convert = cli.add_subcommand(
      "convert", "Convert a trace between .wlt, OTF2, Paraver (.prv) and SMPI time-independent (TI) traces; "
                 "says what the target cannot hold");
  convert->add_option("in", o->in,
                      "Input trace: X.wlt, an OTF2 archive (anchor .otf2 or its directory), X.prv, or a TI trace "
                      "(index or single file)")
      ->required();
  convert->add_option("out", o->out,
                      "Output: X.wlt, X.prv (+ .pcf, .row), X.ti or X.txt (TI index + X_files/), anything else a "
                      "directory for an OTF2 archive (DIR/traces.otf2)")
      ->required();
  convert->add_option("--speed", o->speed,
                      "Core speed for TI's flops: compute seconds become flops at this speed and back (default 1Gf)");
  return {convert, [o, convert](std::ostream& out) {
            // --speed converts between TI's flops and seconds: elsewhere it would change nothing.
            if (convert->count("--speed") > 0 && trace::descriptor(trace::format_of_output(o->out)).timestamps &&
                trace::descriptor(trace::format_of_input(o->in)).timestamps)
              throw InputError("--speed: only for conversions from or to a TI trace (" + o->in + " -> " + o->out +
                               " keeps the times)");
            double speed = 0;
            try {
              speed = units::parse(o->speed, units::Quantity::Speed);
            } catch (const units::UnitError& e) {
              throw InputError(std::string("--speed: ") + e.what());
            }
            convert_command(o->in, o->out, speed, out);
            return 0;
          }};
}

Command define_replay(CLI::App& cli) {
  struct Options {
    ReplayArgs args;
    bool no_progress = false;
  };
  auto o = options<Options>();
  auto& a = o->args;
  auto* replay = cli.add_subcommand(
      "replay", "Simulate a measured or simulated trace on a modelled platform (outputs as for run)");
  replay->add_option("trace", a.trace, "Trace: .wlt, OTF2, .prv or TI (index or single file)")->required();
  replay->add_option("--platform,-p", a.platform,
                     "A SimGrid XML platform file, or a platform type (cluster, hierarchical) whose options come "
                     "by --set platform.KEY=VALUE (default: a flat cluster, one core per rank)");
  replay->add_option("--scenario", a.scenario,
                     "Take platform, perturbations, run and outputs from this scenario (its workload is replaced)");
  replay->add_option("--compute-scale", a.compute_scales,
                     "Scale compute: FACTOR, REGION=FACTOR, @RANKS=FACTOR or REGION@RANKS=FACTOR (RANKS: N or "
                     "N-M); repeatable, factors multiply")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  replay->add_option("--iterations-from", a.iterations_from,
                     "Region whose n-th entry starts iteration n (for perturbations that name iterations)");
  replay->add_option("--speed", a.speed,
                     "Replay compute as flops at this speed (e.g. 2Gf), run at the platform's core speed (OTF2, Paraver, "
                     ".wlt: a TI trace's compute is flops already)");
  repeatable(replay->add_option("--set,-s", a.sets, "Override one scenario value (as for run; repeatable)"));
  replay->add_option("--out,-o", a.out_dir, "Output directory (default: out/replay-<trace name>)");
  replay->add_flag("--no-progress", o->no_progress, "Do not show progress on the terminal");
  return {replay, [o](std::ostream& out) {
            o->args.progress = !o->no_progress;
            replay_command(o->args, out);
            return 0;
          }};
}

Command define_validate(CLI::App& cli) {
  struct Options {
    ValidateArgs args;
    bool no_plot = false;
    bool counterfactual = false;
    int jobs = 1;
  };
  auto o = options<Options>();
  auto& a = o->args;
  auto* validate_cmd = cli.add_subcommand(
      "validate",
      "Simulate scenarios and compare the minimum-duration wait-state estimator (what a PMPI profiler sees) with "
      "the trace-based truth: DIR/validation.csv, validation.json, validation.png/.svg (docs/validation.md)");
  validate_cmd->add_option("scenarios", a.scenarios, "Scenario files")->required();
  validate_cmd->add_option("--out,-o", a.out_dir, "Output directory (default: out/validation)");
  repeatable(validate_cmd->add_option("--set,-s", a.sets, "Override one value in every scenario (repeatable)"));
  validate_cmd->add_option("--expected", a.expected,
                           "Compare validation.csv with this checked-in table (exit 3 if it differs)");
  validate_cmd->add_flag("--update", a.update, "With --expected: rewrite the table instead");
  validate_cmd->add_flag("--no-plot", o->no_plot, "Do not draw the scatter plot");
  validate_cmd->add_flag(
      "--counterfactual", o->counterfactual,
      "Instead: remove each injected cause (every delay and imbalance; every imbalanced region rebalanced) in a "
      "simulation of its own and compare the measured saving with the delay costs and the critical-path "
      "imbalance the analyses attribute to it: DIR/counterfactual.csv/.json (default DIR out/counterfactual)");
  validate_cmd->add_option("--jobs,-j", o->jobs, "With --counterfactual: simulations at once")
      ->check(CLI::Range(1, 256));
  return {validate_cmd, [o, validate_cmd](std::ostream& out) {
            auto& args = o->args;
            if (o->counterfactual) {
              if (o->no_plot) throw InputError("--no-plot: --counterfactual draws no picture");
              if (!args.expected.empty() || args.update)
                throw InputError("--counterfactual: --expected and --update compare the estimator's table; not here");
              CounterfactualArgs ca;
              ca.scenarios = args.scenarios;
              ca.sets = args.sets;
              ca.jobs = o->jobs;
              if (validate_cmd->count("--out") > 0) ca.out_dir = args.out_dir;
              (void)counterfactual(ca, out);
              return 0;
            }
            if (validate_cmd->count("--jobs") > 0)
              throw InputError("--jobs: only with --counterfactual (validate simulates its scenarios one after the other)");
            args.plot = !o->no_plot;
            if (args.update && args.expected.empty()) throw InputError("--update needs --expected FILE");
            const ValidateResult r = validate(args, out);
            return r.compared && !r.differences.empty() ? 3 : 0;
          }};
}

Command define_report(CLI::App& cli) {
  auto dir = options<std::string>();
  auto* report = cli.add_subcommand(
      "report", "Write DIR/report.html from the outputs of `run` or `analyze` in DIR: one self-contained page with "
                "the scenario, key figures, pictures and tables (run and analyze write it too)");
  report->add_option("dir", *dir, "Output directory of `waitlab run` or `waitlab analyze` (with its summary.json)")
      ->required();
  return {report, [dir](std::ostream& out) {
            const std::string written = write_report(*dir);  // nothing on the terminal before it is
            out << "wrote " << written << "\n";
            return 0;
          }};
}

Command define_plot(CLI::App& cli) {
  auto dir = options<std::string>();
  auto* plot = cli.add_subcommand(
      "plot", "Draw the pictures of the analyses whose results are in DIR again (the idle-wave heat map, amplitude "
              "and self-synchronisation pictures from idlewave.json and idle_matrix.npy; the efficiency over time from "
              "timeresolved.csv), then rewrite report.html");
  plot->add_option("dir", *dir, "Output directory of `waitlab run` or `waitlab analyze`")->required();
  return {plot, [dir](std::ostream& out) {
            plot_command(*dir, out);
            return 0;
          }};
}

// Options every study (whatif, sweep) has.
void study_options(CLI::App* c, StudyArgs& a) {
  repeatable(c->add_option("--set,-s", a.sets, "Override one scenario value in every run (repeatable)"));
  c->add_option("--out,-o", a.out_dir, "Output directory (default: <outputs.dir>/" + c->get_name() + ")");
  c->add_option("--jobs,-j", a.jobs, "Simulations at once, each in its own process (default 1)")
      ->check(CLI::Range(1, 256));
  c->add_option("--share", a.share, "R/N: run only the jobs i with i mod N = R (waitlab-mpi gives each MPI rank its share)");
  c->add_option("--records", a.records, "Write this share's results as records to FILE instead of the outputs");
  repeatable(c->add_option("--merge", a.merge, "Make the outputs from these record files; simulate nothing"));
}

Command define_whatif(CLI::App& cli) {
  auto a = options<WhatifArgs>();
  auto* whatif = cli.add_subcommand(
      "whatif",
      "Simulate a scenario's variants (what if region X were balanced, the network ideal, the noise gone, ...) "
      "side by side with the baseline: DIR/whatif.csv, whatif.json, whatif.html, one run directory per variant "
      "(docs/whatif.md)");
  whatif->add_option("target", a->target, "Scenario file, or the output directory of a `waitlab run`")->required();
  repeatable(whatif->add_option("--variant,-V", a->variants,
                                "One more variant as a YAML mapping, e.g. '{name: ideal, network: ideal}' (repeatable)"));
  repeatable(whatif->add_option("--only", a->only, "Run only these variants (comma-separated) and the baseline"));
  study_options(whatif, *a);
  return {whatif, [a](std::ostream& out) { return whatif_command(*a, out); }};
}

Command define_sweep(CLI::App& cli) {
  auto a = options<SweepArgs>();
  auto* sweep = cli.add_subcommand(
      "sweep",
      "Simulate a scenario over a grid of values (--grid KEY=V1,V2,...; the Cartesian product of all grids): "
      "DIR/sweep.csv, sweep.json and sweep.png/.svg (docs/whatif.md)");
  sweep->add_option("scenario", a->scenario, "Scenario file")->required();
  repeatable(sweep->add_option("--grid,-g", a->grid,
                               "KEY=V1,V2,...: a scenario key (as for --set) and its values (repeatable)"));
  study_options(sweep, *a);
  return {sweep, [a](std::ostream& out) { return sweep_command(*a, out); }};
}

Command define_list(CLI::App& cli) {
  return {cli.add_subcommand("list", "List every platform, workload, perturbation, analysis and collective set"),
          [](std::ostream& out) {
            list_command(out);
            return 0;
          }};
}

Command define_describe(CLI::App& cli) {
  auto name = options<std::string>();
  auto* describe = cli.add_subcommand("describe", "Show one model's description and options");
  describe->add_option("name", *name, "Name shown by `waitlab list`")->required();
  return {describe, [name](std::ostream& out) {
            describe_command(*name, out);
            return 0;
          }};
}

}  // namespace

int main(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  CLI::App cli{
      "waitlab: simulate MPI workloads on thousands of virtual ranks with SimGrid's SMPI, perturb them, "
      "and record what happened as an event trace with ground truth.",
      "waitlab"};
  cli.set_version_flag("--version", std::string("waitlab ") + kVersion);
  cli.require_subcommand(1);
  // In the order `waitlab --help` lists them.
  const std::vector<Command> commands = {
      define_run(cli),      define_check(cli),  define_analyze(cli), define_pop(cli),    define_convert(cli),
      define_replay(cli),   define_validate(cli), define_report(cli), define_plot(cli),  define_whatif(cli),
      define_sweep(cli),    define_list(cli),   define_describe(cli), define_smpi_ideal(cli)};

  // Every option and argument that takes a value refuses an empty one.
  refuse_empty_values(cli);

  if (const std::string why = non_utf8_argument(argc, argv); !why.empty()) return print_error(err, why, 2);
  if (const std::string why = unknown_command(argc, argv, cli); !why.empty())
    return print_error(err, why, 2);
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return cli.exit(e, out, err);  // --help, --version
    return print_error(err, std::string(e.what()) + " (see waitlab --help)", 2);
  }

  try {
    if (const std::string why = non_utf8_working_directory(cli); !why.empty()) throw InputError(why);
    for (const auto& c : commands)
      if (c.app->parsed()) return c.run(out);
  } catch (...) {
    const Failure f = failure_of(std::current_exception());
    return print_error(err, f.message, f.code);
  }
  return 0;
}

}  // namespace waitlab::app
