#include "app/commands.hpp"
#include "analysis/output/json_text.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <new>
#include <fstream>
#include <iostream>
#include <ostream>
#include <sstream>

#include "analysis/trace/atomic_file.hpp"
#include "util/error.hpp"
#include "analysis/trace/wlt.hpp"
#include "app/analyze.hpp"
#include "app/counterfactual.hpp"
#include "app/output_dir.hpp"
#include "app/plot.hpp"
#include "app/pop.hpp"
#include "app/run_command.hpp"
#include "app/report.hpp"
#include "app/study.hpp"
#include "analysis/trace/ti.hpp"
#include "analysis/trace/trace_io.hpp"
#include "app/summary.hpp"
#include "app/validate.hpp"
#include "app/version.hpp"
#include "models/perturbation.hpp"
#include "models/replay.hpp"
#include "models/spec.hpp"
#include "util/text.hpp"
#include "util/units.hpp"
#include "analysis/registry/registry.hpp"
#include "analysis/timeresolved/windows.hpp"
#include "models/workload.hpp"
#include "scenarios/scenario.hpp"
#include "sim/engine.hpp"

namespace waitlab::app {

namespace fs = std::filesystem;

namespace {

std::string first_sentence(const std::string& text, std::size_t max) {
  std::size_t end = text.size();
  for (std::size_t p = text.find(". "); p != std::string::npos; p = text.find(". ", p + 1)) {
    const bool abbreviation =
        p >= 3 && (text.compare(p - 3, 3, "e.g") == 0 || text.compare(p - 3, 3, "i.e") == 0);
    if (!abbreviation) {
      end = p;
      break;
    }
  }
  std::string s = text.substr(0, end);
  if (s.size() > max) {
    const auto cut = s.rfind(' ', max - 4);
    s = s.substr(0, cut == std::string::npos || cut < max / 2 ? max - 4 : cut) + " ...";
  }
  return s;
}

// Every name `waitlab describe` knows: the models' specs (platforms, workloads, perturbations)
// and the analyses.
std::vector<std::string> all_names() {
  std::vector<std::string> names;
  for (const auto& s : models::Registry::instance().specs()) names.push_back(s.name);
  for (const auto* a : analysis::analyses()) names.push_back(a->name);
  return names;
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot read");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(path + ": not valid JSON: " + e.what());
  }
}

// `waitlab plot DIR`: the pictures drawn again and report.html rewritten aside, then put in
// place together (app/output_dir.hpp): an interrupted or failed drawing leaves DIR as it was.
void plot_command(const std::string& dir, std::ostream& out) {
  std::vector<const output::Entry*> drawable;  // the analyses with pictures whose files are in DIR
  std::vector<std::string> inputs, names;
  for (const auto* a : analysis::analyses())
    if (a->plot_script != nullptr) {
      inputs.push_back(a->plot_input);
      names.push_back(a->name);
      if (fs::exists(fs::path(dir) / a->plot_input)) drawable.push_back(a);
    }
  if (drawable.empty())
    throw InputError(fmt::format("{}: no {} (run the {} analysis first: outputs.analyses or `waitlab analyze TRACE "
                                 "-a {}`)",
                                 dir, fmt::join(inputs, " and no "), fmt::join(names, " or "), fmt::join(names, ",")));
  OutputDir staged(dir, Inputs{});  // it reads the results in DIR, which it rewrites
  std::vector<std::string> drawn;
  std::string report_path;
  try {
    const fs::path d(staged.path());
    for (const auto* a : drawable) {
      if (const std::string why = draw_pictures(*a, staged.path()); !why.empty()) throw InputError(why);
      for (const auto& p : a->pictures)
        if (fs::exists(d / (std::string(p.stem) + ".png"))) drawn.push_back((d / p.stem).string());
    }
    report_path = try_write_report(staged.path(), &staged);
    staged.commit();
  } catch (...) {
    staged.rethrow_final();
  }
  for (const auto& p : drawn) out << "drew " << staged.final_text(p) << ".png, .svg\n";
  if (!report_path.empty()) out << "wrote " << staged.final_text(report_path) << "\n";
}

}  // namespace

namespace {

fs::path absolute_path(const std::string& p) {
  std::error_code ec;
  fs::path a = fs::weakly_canonical(fs::absolute(p), ec);
  if (ec) a = fs::absolute(p).lexically_normal();
  if (a.has_relative_path() && a.filename().empty()) a = a.parent_path();
  return a;
}

// What a conversion writes: the path and its companions.
std::vector<std::string> written_by(const std::string& out_path, const trace::FormatDescriptor& to) {
  std::vector<std::string> w = {out_path};
  for (auto& side : to.side_files(out_path)) w.push_back(std::move(side));
  return w;
}

std::vector<std::string> convert_into(const std::string& in, const trace::FormatDescriptor& from,
                                      const std::string& out_path, const trace::FormatDescriptor& to,
                                      const std::string& shown, double speed, std::ostream& out);

}  // namespace

std::vector<std::string> convert_command(const std::string& in, const std::string& out_path, double speed,
                                         std::ostream& out) {
  if (!(speed > 0) || !std::isfinite(speed)) throw InputError("--speed: must be > 0 flop/s");
  const trace::FormatDescriptor& from = trace::descriptor(trace::format_of_input(in));
  const trace::FormatDescriptor& to = trace::descriptor(trace::format_of_output(out_path));
  // An output that is, holds or lies inside anything the conversion reads would destroy its
  // own input (`waitlab convert r/trace.wlt r` replaced the run directory r; a TI index
  // listing absolute paths, converted into the directory of its rank files, replaced them).
  Inputs inputs;
  inputs.add_trace(in);
  for (const auto& w : written_by(out_path, to)) inputs.check_output(w);
  // Written beside the destination first and moved in at the end: a conversion that fails
  // leaves nothing behind and replaces nothing (app/output_dir.hpp).
  fs::path parent = fs::path(out_path).parent_path();
  fs::path leaf = fs::path(out_path).filename();
  if (leaf.empty() || leaf == "." || leaf == "..") {
    parent = absolute_path(out_path).parent_path();
    leaf = absolute_path(out_path).filename();
  }
  OutputDir staged(parent.empty() ? std::string(".") : parent.string(), inputs, OutputDir::Mode::Entries);
  try {
    std::ostringstream said;  // on the terminal once the output is in place
    const std::vector<std::string> lost =
        convert_into(in, from, (fs::path(staged.path()) / leaf).string(), to, out_path, speed, said);
    staged.commit();
    out << staged.final_text(said.str());
    return lost;
  } catch (...) {
    staged.rethrow_final();
  }
}

namespace {

// convert_command's work: reads `in`, writes `out_path` (in the staging directory), prints
// what was written under the name `shown`. A format without timestamps is SMPI's action
// records (TI, analysis/trace/ti.hpp): converted through a replay of its actions (a timed
// output gets logical times) or of the timed trace's (its compute as flops at `speed`).
std::vector<std::string> convert_into(const std::string& in, const trace::FormatDescriptor& from,
                                      const std::string& out_path, const trace::FormatDescriptor& to,
                                      const std::string& shown, double speed, std::ostream& out) {
  std::vector<std::string> lost;
  std::size_t ranks = 0;
  std::string count;
  const std::string name = fs::path(in).filename().string();
  const std::string speed_text = units::format(speed, units::Quantity::Speed);
  if (!from.timestamps) {
    trace::TiTrace ti = trace::read_ti(in);
    ranks = ti.ranks.size();
    count = std::to_string(ti.record_count()) + " " + std::string(from.name) + " records";
    if (!to.timestamps) {
      lost = trace::write_ti(ti, out_path);
    } else {
      models::ReplayReport rep;
      const auto w = models::replay_ti(ti, name, {}, &rep);
      const trace::Trace t = models::logical_trace(*w, speed);
      lost = trace::write_trace(t, out_path);
      lost.insert(lost.begin(), "times: " + std::string(from.name) +
                                    " has none; the output's are logical (compute at " + speed_text +
                                    ", MPI calls take no time) — `waitlab replay` gives simulated times");
      for (auto& n : rep.notes) lost.push_back("approximated: " + n);
      count += ", " + std::to_string(t.event_count()) + " events";
    }
  } else {
    const trace::Trace t = trace::read_trace(in);
    ranks = t.ranks();
    count = std::to_string(t.event_count()) + " events";
    if (!to.timestamps) {
      models::ReplayReport rep;
      const auto w = models::replay_trace(t, name, {}, &rep);
      trace::TiTrace ti = models::ti_from_workload(*w, speed, &lost);
      lost.insert(lost.begin(), "timestamps and MPI call durations: " + std::string(to.name) + " holds only the calls "
                                "and the compute between them (as flops at " + speed_text + ")");
      bool comms = t.defs.comms.size() > 1;
      if (comms) lost.push_back(std::to_string(t.defs.comms.size() - 1) +
                                " communicators other than MPI_COMM_WORLD: " + std::string(to.name) + " has none");
      std::size_t truth = 0;
      for (const auto& l : t.locations) truth += l.truth.size();
      if (truth) lost.push_back("the ground truth of " + std::to_string(truth) + " compute intervals");
      for (auto& n : rep.notes) lost.push_back("approximated: " + n);
      for (auto& n : trace::write_ti(ti, out_path)) lost.push_back(std::move(n));
      count += " -> " + std::to_string(ti.record_count()) + " " + std::string(to.name) + " records";
    } else {
      lost = trace::write_trace(t, out_path);
    }
  }
  out << "wrote " << to.shown_path(shown, out_path) << " (" << to.name << ", " << ranks << " ranks, " << count << ")\n";
  for (const auto& l : lost) out << "not in the output: " << l << "\n";
  return lost;
}

}  // namespace

namespace {

// "  head  a, b, c, ..." wrapped at `width` columns, continuation lines indented like `head`.
std::string wrapped_list(const std::string& head, const std::vector<std::string>& items, std::size_t width) {
  std::string out = head;
  std::size_t col = head.size();
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string item = items[i] + (i + 1 < items.size() ? "," : "");
    if (col > head.size() && col + 1 + item.size() > width) {
      out += "\n" + std::string(head.size(), ' ');
      col = head.size();
    } else if (col > head.size()) {
      out += " ";
      ++col;
    }
    out += item;
    col += item.size();
  }
  return out + "\n";
}

}  // namespace

void list_command(std::ostream& out) {
  using Item = std::pair<std::string, std::string>;  // name, description
  const auto section = [&](const char* title, const std::vector<Item>& items) {
    if (items.empty()) return;
    out << title << ":\n";
    std::size_t width = 0;
    for (const auto& [name, description] : items) width = std::max(width, name.size());
    for (const auto& [name, description] : items)
      out << fmt::format("  {:<{}}  {}\n", name, width, first_sentence(description, 100 - width));
    out << "\n";
  };
  const auto models_of = [](models::SpecKind kind) {
    std::vector<Item> items;
    for (const auto* s : models::Registry::instance().all(kind)) items.emplace_back(s->name, s->description);
    return items;
  };
  section("platforms", models_of(models::SpecKind::Platform));
  section("workloads", models_of(models::SpecKind::Workload));
  section("perturbations", models_of(models::SpecKind::Perturbation));
  std::vector<Item> analyses;
  for (const auto* a : analysis::analyses()) analyses.emplace_back(a->name, a->description);
  section("analyses", analyses);
  out << "collective sets (run.collectives):\n";
  for (const auto& c : sim::collective_sets()) out << fmt::format("  {:<7}  {}\n", c.name, c.description);
  out << "\ncollective algorithms (run.collective_algorithms, SimGrid 3.32's names that waitlab runs):\n";
  for (const auto& c : sim::collective_algorithms()) {
    std::vector<std::string> names;
    for (const auto& a : c.algorithms)
      if (sim::collective_algorithm_error(c.collective, a).empty()) names.push_back(a);
    out << wrapped_list(fmt::format("  {:<14}  ", c.collective), names, 100);
  }
  out << "\nUse `waitlab describe NAME` for the options of one of them (of a collective set or collective: its "
         "algorithms).\n";
}

void describe_command(const std::string& name, std::ostream& out) {
  if (const auto* spec = models::Registry::instance().find_any(name)) {
    out << models::describe(*spec);
    return;
  }
  if (const auto* a = analysis::find_analysis(name)) {  // an analysis has no options of its own
    out << a->name << " (analysis)\n  " << a->description << "\n\nno options\n";
    return;
  }
  for (const auto& c : sim::collective_sets())
    if (c.name == name) {
      out << "collective set " << c.name << ": " << c.description << "\n";
      sim::RunOptions o;
      o.collectives = c.name;
      for (const auto& [key, algo] : sim::effective_collective_algorithms(o))
        out << fmt::format("  {:<14}  {}{}\n", key, algo,
                           algo == "default" ? " (SimGrid's default selector)" : std::string());
      out << "run.collective_algorithms changes single collectives on top of it (`waitlab describe alltoall`).\n";
      return;
    }
  for (const auto& c : sim::collective_algorithms())
    if (c.collective == name) {
      out << "collective " << c.collective << ": the algorithms of SimGrid 3.32 (run.collective_algorithms."
          << c.collective << ": NAME)\n";
      std::size_t width = 0;
      for (const auto& a : c.algorithms) width = std::max(width, a.size());
      for (const auto& a : c.algorithms) {
        std::vector<std::string> notes;
        std::vector<std::string> sets;
        for (const auto& s : sim::collective_sets())
          for (const auto& [k, v] : s.algorithms)
            if (k == c.collective && v == a) sets.push_back(s.name);
        if (a == "default") notes.push_back("SimGrid's default selector");
        if (a == "default") sets.push_back("default");
        if (!sets.empty()) notes.push_back(fmt::format("in run.collectives: {}", fmt::join(sets, ", ")));
        if (const std::string why = sim::unsupported_algorithm(c.collective, a); !why.empty())
          notes.push_back("waitlab cannot run it: " + why);
        else if (!sim::payload_free(c.collective, a))
          notes.push_back("its messages' data matters: payloads are copied");
        if (notes.empty())
          out << "  " << a << "\n";
        else
          out << fmt::format("  {:<{}}  {}\n", a, width, fmt::join(notes, "; "));
      }
      return;
    }
  auto names = all_names();
  for (const auto& c : sim::collective_sets()) names.push_back(c.name);
  for (const auto& c : sim::collective_algorithms()) names.push_back(c.collective);
  const std::string best = models::did_you_mean(name, names);
  throw InputError("unknown name '" + name + "'" + (best.empty() ? "" : "; did you mean '" + best + "'?") +
                   " (`waitlab list` shows every name)");
}

std::string expected_path(const std::string& scenario_path, const std::string& scenario_name) {
  return (fs::path(scenario_path).parent_path() / "expected" / (scenario_name + ".json")).string();
}

CheckResult check_scenario(const std::string& path, bool update, const std::vector<std::string>& sets) {
  const scenarios::Scenario s = scenarios::load_scenario(path, sets);
  CheckResult r;
  r.scenario = s.name;
  r.expected_file = expected_path(path, s.name);
  const Outcome o = simulate_scenario(s, false);
  const auto actual = expected_json(s, o);
  if (update) {
    std::error_code ec;
    fs::create_directories(fs::path(r.expected_file).parent_path(), ec);
    trace::write_file_atomic(r.expected_file, output::json_text(actual) + "\n");
    r.updated = true;
    return r;
  }
  if (!fs::exists(r.expected_file)) {
    r.missing = true;
    return r;
  }
  r.differences = compare_expected(read_json(r.expected_file), nlohmann::json::parse(output::json_text(actual, -1)));
  return r;
}

namespace {

// The one place where an error reaches the user: one line whatever the input held (binary
// bytes of a file, a newline in a --set value: text::one_line), cut after a few KB.
constexpr std::size_t kMaxErrorBytes = 4096;

int print_error(std::ostream& err, const std::string& what, int code) {
  err << "waitlab: error: " << text::one_line(what, kMaxErrorBytes) << "\n";
  return code;
}

// An option or argument given as '' means nothing: say so rather than take the default
// (`--out ''` would write into the scenario's outputs.dir, `--scenario ''` would use none).
const CLI::Validator kNonEmpty(
    [](std::string& value) { return value.empty() ? std::string("must not be empty") : std::string(); }, "",
    "non-empty");

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

}  // namespace

int main(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  CLI::App cli{
      "waitlab: simulate MPI workloads on thousands of virtual ranks with SimGrid's SMPI, perturb them, "
      "and record what happened as an event trace with ground truth.",
      "waitlab"};
  cli.set_version_flag("--version", std::string("waitlab ") + kVersion);
  cli.require_subcommand(1);

  RunArgs run_args;
  bool no_progress = false;
  auto* run = cli.add_subcommand("run", "Simulate a scenario; write DIR/summary.json and DIR/trace.wlt");
  run->add_option("scenario", run_args.scenario, "Scenario file (YAML; docs/scenarios.md)")->required();
  run->add_option("--out,-o", run_args.out_dir, "Output directory (default: the scenario's outputs.dir)");
  run->add_option("--set,-s", run_args.sets,
                  "Override one scenario value: key=value, e.g. workload.iterations=10, run.seed=3, "
                  "perturbations[0].duration=5ms (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  run->add_flag("--no-progress", no_progress, "Do not show progress on the terminal");

  bool update = false;
  std::vector<std::string> check_files;
  std::vector<std::string> check_sets;
  auto* check = cli.add_subcommand(
      "check", "Simulate scenarios and compare their key figures with <dir>/expected/<name>.json");
  check->add_option("scenarios", check_files, "Scenario files")->required();
  check->add_flag("--update", update, "Rewrite the expected figures instead of comparing");
  check->add_option("--set,-s", check_sets, "Override one scenario value (as for run; repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);

  AnalyzeArgs analyze_args;
  auto* analyze = cli.add_subcommand(
      "analyze", "Run the trace analyses on a trace (.wlt, OTF2, Paraver); write DIR/summary.json and one CSV per table");
  analyze->add_option("trace", analyze_args.trace,
                      "Trace: a .wlt file, an OTF2 archive (anchor .otf2 or its directory) or a Paraver .prv file")
      ->required();
  analyze->add_option("--clock-correction", analyze_args.clock_correction,
                      "Clock-skew correction before analysing: auto (default: only if receives precede their sends; "
                      "the linear map only where it lowers the violations, then Scalasca's controlled logical clock), "
                      "none (Scalasca's default), linear, clc, clamp, linear+clamp (docs/clock-correction.md)");
  analyze->add_flag("--alltoallv-nxn", analyze_args.alltoallv_nxn,
                    "Count MPI_Alltoallv as an N×N synchronisation (Wait at N×N); Scalasca, and waitlab by default, "
                    "do not: ranks that exchange no data need not wait for each other (docs/analyses.md)");
  analyze->add_option("--out,-o", analyze_args.out_dir, "Output directory (default: <trace's directory>/analysis)");
  analyze->add_option("--analyses,-a", analyze_args.analyses,
                      "Analyses to run: waitstate, delay, critpath, minprofile, idlewave, timeresolved or all "
                      "(default: all; comma-separated or repeated; delay and critpath include waitstate)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  analyze->add_option("--convention", analyze_args.convention,
                      "Whose definitions the efficiency metrics follow: auto (default: the trace's tool — bsc for "
                      "Extrae/Paraver, scalasca for Score-P/OTF2, waitlab for simulated runs), bsc (whole trace, "
                      "useful = Running outside MPI, every thread a unit), scalasca, waitlab (MPI_Init to "
                      "MPI_Finalize, useful = outside MPI)");
  analyze->add_option("--ideal", analyze_args.ideal,
                      "Ideal-network estimate of SerE/TrfE: lamport (Lamport-clock replay of the trace), smpi (the "
                      "trace replayed by the SMPI engine on an ideal network, as Dimemas does), both, or auto "
                      "(default: both for measured traces, lamport for simulated ones)");
  analyze->add_option("--windows", analyze_args.windows,
                      "Windows of the timeresolved analysis: N equal windows (default 50), a length (10ms) or "
                      "adaptive[:N] (merged until every rank has sqrt(P) events in each)");

  PopArgs pop_args;
  auto* pop_cmd = cli.add_subcommand(
      "pop", "POP model factors of a scaling study: traces of one program at several rank counts -> "
             "DIR/pop.csv, pop.json, pop.png and report.html (docs/pop.md)");
  pop_cmd->add_option("traces", pop_args.inputs,
                      "Traces of the runs: Extrae .prv/.prv.gz, OTF2 archives, .wlt, run directories (DIR/trace.wlt) "
                      "or a sweep directory (its point_* runs)")
      ->required();
  pop_cmd->add_option("--out,-o", pop_args.out_dir, "Output directory (default: pop)");
  pop_cmd->add_option("--scaling", pop_args.scaling,
                      "strong (default: the same problem on more units) or weak (the problem grows with the units)");
  pop_cmd->add_option("--convention", pop_args.convention, "As for analyze: auto (default), bsc, scalasca, waitlab");
  pop_cmd->add_option("--ideal", pop_args.ideal,
                      "Ideal-network estimate of SerE/TrfE: lamport (default) or smpi (every trace replayed by the SMPI "
                      "engine on an ideal network)");

  std::string convert_in, convert_out, convert_speed = "1Gf";
  auto* convert = cli.add_subcommand(
      "convert", "Convert a trace between .wlt, OTF2, Paraver (.prv) and SMPI time-independent (TI) traces; "
                 "says what the target cannot hold");
  convert->add_option("in", convert_in,
                      "Input trace: X.wlt, an OTF2 archive (anchor .otf2 or its directory), X.prv, or a TI trace "
                      "(index or single file)")
      ->required();
  convert->add_option("out", convert_out,
                      "Output: X.wlt, X.prv (+ .pcf, .row), X.ti or X.txt (TI index + X_files/), anything else a "
                      "directory for an OTF2 archive (DIR/traces.otf2)")
      ->required();
  convert->add_option("--speed", convert_speed,
                      "Core speed for TI's flops: compute seconds become flops at this speed and back (default 1Gf)");

  ReplayArgs replay_args;
  bool replay_no_progress = false;
  auto* replay = cli.add_subcommand(
      "replay", "Simulate a measured or simulated trace on a modelled platform (outputs as for run)");
  replay->add_option("trace", replay_args.trace, "Trace: .wlt, OTF2, .prv or TI (index or single file)")->required();
  replay->add_option("--platform,-p", replay_args.platform,
                     "A SimGrid XML platform file, or a platform type (cluster, hierarchical) whose options come "
                     "by --set platform.KEY=VALUE (default: a flat cluster, one core per rank)");
  replay->add_option("--scenario", replay_args.scenario,
                     "Take platform, perturbations, run and outputs from this scenario (its workload is replaced)");
  replay->add_option("--compute-scale", replay_args.compute_scales,
                     "Scale compute: FACTOR, REGION=FACTOR, @RANKS=FACTOR or REGION@RANKS=FACTOR (RANKS: N or "
                     "N-M); repeatable, factors multiply")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  replay->add_option("--iterations-from", replay_args.iterations_from,
                     "Region whose n-th entry starts iteration n (for perturbations that name iterations)");
  replay->add_option("--speed", replay_args.speed,
                     "Replay compute as flops at this speed (e.g. 2Gf), run at the platform's core speed (OTF2, Paraver, "
                     ".wlt: a TI trace's compute is flops already)");
  replay->add_option("--set,-s", replay_args.sets, "Override one scenario value (as for run; repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  replay->add_option("--out,-o", replay_args.out_dir, "Output directory (default: out/replay-<trace name>)");
  replay->add_flag("--no-progress", replay_no_progress, "Do not show progress on the terminal");

  ValidateArgs validate_args;
  bool validate_no_plot = false;
  auto* validate_cmd = cli.add_subcommand(
      "validate",
      "Simulate scenarios and compare the minimum-duration wait-state estimator (what a PMPI profiler sees) with "
      "the trace-based truth: DIR/validation.csv, validation.json, validation.png/.svg (docs/validation.md)");
  validate_cmd->add_option("scenarios", validate_args.scenarios, "Scenario files")->required();
  validate_cmd->add_option("--out,-o", validate_args.out_dir, "Output directory (default: out/validation)");
  validate_cmd->add_option("--set,-s", validate_args.sets, "Override one value in every scenario (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  validate_cmd->add_option("--expected", validate_args.expected,
                           "Compare validation.csv with this checked-in table (exit 3 if it differs)");
  validate_cmd->add_flag("--update", validate_args.update, "With --expected: rewrite the table instead");
  validate_cmd->add_flag("--no-plot", validate_no_plot, "Do not draw the scatter plot");
  bool counterfactual_mode = false;
  int counterfactual_jobs = 1;
  validate_cmd->add_flag(
      "--counterfactual", counterfactual_mode,
      "Instead: remove each injected cause (every delay and imbalance; every imbalanced region rebalanced) in a "
      "simulation of its own and compare the measured saving with the delay costs and the critical-path "
      "imbalance the analyses attribute to it: DIR/counterfactual.csv/.json (default DIR out/counterfactual)");
  validate_cmd->add_option("--jobs,-j", counterfactual_jobs, "With --counterfactual: simulations at once")
      ->check(CLI::Range(1, 256));

  std::string report_dir;
  auto* report_cmd = cli.add_subcommand(
      "report", "Write DIR/report.html from the outputs of `run` or `analyze` in DIR: one self-contained page with "
                "the scenario, key figures, pictures and tables (run and analyze write it too)");
  report_cmd->add_option("dir", report_dir, "Output directory of `waitlab run` or `waitlab analyze` (with its summary.json)")
      ->required();

  std::string plot_dir;
  auto* plot_cmd = cli.add_subcommand(
      "plot", "Draw the pictures of the analyses whose results are in DIR again (the idle-wave heat map, amplitude "
              "and self-synchronisation pictures from idlewave.json and idle_matrix.npy; the efficiency over time from "
              "timeresolved.csv), then rewrite report.html");
  plot_cmd->add_option("dir", plot_dir, "Output directory of `waitlab run` or `waitlab analyze`")->required();

  // Options every study (whatif, sweep) has.
  const auto study_options = [](CLI::App* c, StudyArgs& a) {
    c->add_option("--set,-s", a.sets, "Override one scenario value in every run (repeatable)")
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    c->add_option("--out,-o", a.out_dir, "Output directory (default: <outputs.dir>/" + c->get_name() + ")");
    c->add_option("--jobs,-j", a.jobs, "Simulations at once, each in its own process (default 1)")
        ->check(CLI::Range(1, 256));
    c->add_option("--share", a.share,
                  "R/N: run only the jobs i with i mod N = R (waitlab-mpi gives each MPI rank its share)");
    c->add_option("--records", a.records, "Write this share's results as records to FILE instead of the outputs");
    c->add_option("--merge", a.merge, "Make the outputs from these record files; simulate nothing")
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  };
  WhatifArgs whatif_args;
  auto* whatif_cmd = cli.add_subcommand(
      "whatif",
      "Simulate a scenario's variants (what if region X were balanced, the network ideal, the noise gone, ...) "
      "side by side with the baseline: DIR/whatif.csv, whatif.json, whatif.html, one run directory per variant "
      "(docs/whatif.md)");
  whatif_cmd->add_option("target", whatif_args.target, "Scenario file, or the output directory of a `waitlab run`")
      ->required();
  whatif_cmd->add_option("--variant,-V", whatif_args.variants,
                         "One more variant as a YAML mapping, e.g. '{name: ideal, network: ideal}' (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  whatif_cmd->add_option("--only", whatif_args.only, "Run only these variants (comma-separated) and the baseline")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  study_options(whatif_cmd, whatif_args);
  SweepArgs sweep_args;
  auto* sweep_cmd = cli.add_subcommand(
      "sweep",
      "Simulate a scenario over a grid of values (--grid KEY=V1,V2,...; the Cartesian product of all grids): "
      "DIR/sweep.csv, sweep.json and sweep.png/.svg (docs/whatif.md)");
  sweep_cmd->add_option("scenario", sweep_args.scenario, "Scenario file")->required();
  sweep_cmd->add_option("--grid,-g", sweep_args.grid,
                        "KEY=V1,V2,...: a scenario key (as for --set) and its values (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  study_options(sweep_cmd, sweep_args);

  cli.add_subcommand("list", "List every platform, workload, perturbation, analysis and collective set");
  std::string describe_name;
  auto* describe = cli.add_subcommand("describe", "Show one model's description and options");
  describe->add_option("name", describe_name, "Name shown by `waitlab list`")->required();

  // Every option and argument that takes a value refuses an empty one.
  for (auto* sub : cli.get_subcommands([](CLI::App*) { return true; }))
    for (auto* opt : sub->get_options([](CLI::Option* o) { return o->get_type_size() != 0; })) opt->check(kNonEmpty);

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
    if (run->parsed()) {
      run_args.progress = !no_progress;
      run_command(run_args, out);
    } else if (check->parsed()) {
      int status = 0;
      for (const auto& f : check_files) {
        const CheckResult r = check_scenario(f, update, check_sets);
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
    } else if (convert->parsed()) {
      // --speed converts between TI's flops and seconds: elsewhere it would change nothing.
      if (convert->count("--speed") > 0 && trace::descriptor(trace::format_of_output(convert_out)).timestamps &&
          trace::descriptor(trace::format_of_input(convert_in)).timestamps)
        throw InputError("--speed: only for conversions from or to a TI trace (" + convert_in + " -> " + convert_out +
                         " keeps the times)");
      double speed = 0;
      try {
        speed = units::parse(convert_speed, units::Quantity::Speed);
      } catch (const units::UnitError& e) {
        throw InputError(std::string("--speed: ") + e.what());
      }
      convert_command(convert_in, convert_out, speed, out);
    } else if (replay->parsed()) {
      replay_args.progress = !replay_no_progress;
      replay_command(replay_args, out);
    } else if (pop_cmd->parsed()) {
      pop_command(pop_args, out);
    } else if (analyze->parsed()) {
      analyze_command(analyze_args, out);
    } else if (validate_cmd->parsed() && counterfactual_mode) {
      if (validate_no_plot) throw InputError("--no-plot: --counterfactual draws no picture");
      if (!validate_args.expected.empty() || validate_args.update)
        throw InputError("--counterfactual: --expected and --update compare the estimator's table; not here");
      CounterfactualArgs ca;
      ca.scenarios = validate_args.scenarios;
      ca.sets = validate_args.sets;
      ca.jobs = counterfactual_jobs;
      if (validate_cmd->count("--out") > 0) ca.out_dir = validate_args.out_dir;
      (void)counterfactual(ca, out);
    } else if (validate_cmd->parsed()) {
      if (validate_cmd->count("--jobs") > 0)
        throw InputError("--jobs: only with --counterfactual (validate simulates its scenarios one after the other)");
      validate_args.plot = !validate_no_plot;
      if (validate_args.update && validate_args.expected.empty()) throw InputError("--update needs --expected FILE");
      const ValidateResult r = validate(validate_args, out);
      if (r.compared && !r.differences.empty()) return 3;
    } else if (report_cmd->parsed()) {
      const std::string written = write_report(report_dir);  // nothing on the terminal before it is
      out << "wrote " << written << "\n";
    } else if (plot_cmd->parsed()) {
      plot_command(plot_dir, out);
    } else if (whatif_cmd->parsed()) {
      return whatif_command(whatif_args, out);
    } else if (sweep_cmd->parsed()) {
      return sweep_command(sweep_args, out);
    } else if (cli.got_subcommand("list")) {
      list_command(out);
    } else if (describe->parsed()) {
      describe_command(describe_name, out);
    }
  } catch (const InputError& e) {
    return print_error(err, e.what(), 2);
  } catch (const std::bad_alloc&) {
    // A limit of the host (ulimit -v, the machine's memory) met by a size the checks before the
    // work did not foresee: the input asked for more than this host gives, not a bug.
    return print_error(err,
                       "out of memory: this command needed more memory than the host allows (ulimit -v, the "
                       "machine's memory); give it a smaller input or more memory",
                       2);
  } catch (const std::exception& e) {
    return print_error(err, std::string("internal failure: ") + e.what(), 1);
  }
  return 0;
}

}  // namespace waitlab::app
