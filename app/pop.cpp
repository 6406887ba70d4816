#include "app/pop.hpp"
#include "analysis/output/json_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "analysis/pop/pop.hpp"
#include "analysis/timeresolved/timeresolved.hpp"
#include "analysis/trace/atomic_file.hpp"
#include "analysis/trace/clock.hpp"
#include "util/error.hpp"
#include "analysis/trace/match.hpp"
#include "analysis/trace/trace_io.hpp"
#include "app/ideal_replay.hpp"
#include "app/output_dir.hpp"
#include "app/plot.hpp"
#include "app/report.hpp"
#include "analysis/timeresolved/output.hpp"
#include "app/version.hpp"

namespace waitlab::app {

namespace fs = std::filesystem;

// 2: the rows of BSC's modelfactors (`rows`; runtime_us, useful_duration_*_us, useful_instructions_total and
// useful_cycles_total replace elapsed_s, useful_s and instructions). 3: the hybrid MPI+OpenMP rows
// (hybrid_parallel_efficiency ... omp_scheduling_efficiency; null for a run without threads).
constexpr int kPopSchemaVersion = 3;

namespace {

struct Input {
  std::string label;  // the run's name in the table
  std::string path;   // the trace
};

std::string stem_of(const std::string& path) {
  std::string name = fs::path(path).filename().string();
  if (name == "traces.otf2" || name == "trace.wlt") name = fs::path(path).parent_path().filename().string();
  for (const std::string ext : {".gz", ".prv", ".wlt", ".otf2"})
    if (name.size() > ext.size() && name.compare(name.size() - ext.size(), ext.size(), ext) == 0)
      name.resize(name.size() - ext.size());
  return name;
}

// A trace file or archive, a run directory (DIR/trace.wlt), or a sweep directory (its point_* runs).
void expand(const std::string& in, std::vector<Input>& out) {
  std::error_code ec;
  const fs::path p(in);
  if (fs::is_directory(p, ec)) {
    if (fs::exists(p / "traces.otf2", ec)) {
      out.push_back({p.filename().string(), in});
      return;
    }
    if (fs::exists(p / "trace.wlt", ec)) {
      out.push_back({p.filename().string(), (p / "trace.wlt").string()});
      return;
    }
    std::vector<fs::path> points;
    for (const auto& e : fs::directory_iterator(p, ec))
      if (e.is_directory() && e.path().filename().string().rfind("point_", 0) == 0 &&
          fs::exists(e.path() / "trace.wlt"))
        points.push_back(e.path());
    std::sort(points.begin(), points.end());
    if (points.empty())
      throw InputError(in + ": a directory without traces.otf2, trace.wlt or point_*/trace.wlt (a pop study needs "
                            "traces: .prv(.gz), OTF2, .wlt, or run and sweep directories whose scenario writes the "
                            "trace, outputs.trace: true)");
    for (const auto& pt : points) out.push_back({p.filename().string() + "/" + pt.filename().string(),
                                                 (pt / "trace.wlt").string()});
    return;
  }
  if (!fs::exists(p, ec)) throw InputError(in + ": no such trace or directory");
  out.push_back({stem_of(in), in});
}

struct Analysed {
  analysis::PopRun run;
  analysis::TimeResolvedResult tr;
  std::string origin;
  std::vector<std::string> warnings;
};

Analysed analyse(const Input& in, const PopArgs& args, const analysis::CutSpec& spec) {
  std::vector<std::string> read_warnings;  // a trace cut short: its factors are suspect
  trace::Trace t = trace::read_trace(in.path, nullptr, &read_warnings);
  analysis::Convention conv = analysis::default_convention(t.origin);
  if (args.convention != "auto") analysis::parse_convention(args.convention, conv);
  trace::ClockOptions clock;
  trace::correct_clocks(t, clock);
  const trace::Matching m = trace::Matching::build(t);
  const analysis::IdealReference ref = analysis::lamport_reference(t, m);
  analysis::WindowOptions one;
  one.rule = analysis::WindowRule::Count;
  one.count = 1;
  Analysed a;
  try {
    a.tr = analysis::time_resolved(t, ref, one, conv, analysis::resolve_cut(t, spec));
  } catch (const InputError& e) {  // a cut that finds nothing in this trace
    throw InputError(in.path + ": " + e.what());
  }
  a.origin = std::string(trace::origin_name(t.origin));
  for (const auto& w : read_warnings)  // the trace named by its label, as the other warnings
    a.warnings.push_back(w.rfind(in.path, 0) == 0 ? in.label + w.substr(in.path.size()) : in.label + ": " + w);
  if (!a.tr.mpi) a.warnings.push_back(in.label + ": the trace has no MPI calls");
  if (args.ideal == "smpi") {
    const SmpiIdealRun ideal = smpi_ideal_run(t, in.path, a.tr);
    if (ideal.ok) {
      a.tr.estimates.insert(a.tr.estimates.begin(), ideal.estimate);
      a.tr.eff.ser_e = ideal.estimate.ser_e;
      a.tr.eff.trf_e = ideal.estimate.trf_e;
      a.tr.ideal = ideal.estimate.t_ideal;
      a.tr.source = ideal.estimate.source;
    } else {
      a.warnings.push_back(in.label + ": no SMPI ideal-network estimate (" + ideal.why + "); Lamport replay used");
    }
  }
  a.run = analysis::pop_run(in.label, a.tr);
  // The hybrid factors over the same time (the cut's, or the whole run).
  if (const analysis::HybridEfficiency h = analysis::hybrid_of(t, a.tr); h.hybrid) a.run.hybrid = h;
  return a;
}

std::string num(double v) {
  return std::isfinite(v) ? fmt::format("{}", v) : std::string();
}

nlohmann::ordered_json jnum(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
}

// The rows of BSC's modelfactors table, in waitlab's tree order: key (pop.csv, pop.json), the
// row's name in modelfactors (its units: efficiencies in %, times in µs), the indent of the
// tree on the terminal, accessor (NaN: not available; efficiencies as fractions, times in µs).
enum class Kind : std::uint8_t { Efficiency, Number, Microseconds, Count };
struct Column {
  const char* key;
  const char* title;   // modelfactors' row name
  int indent;          // the terminal's tree
  double (*get)(const analysis::PopFactors&);
  Kind kind;
  bool hybrid = false;  // a hybrid MPI+OpenMP row: shown when some run has threads
};

double opt(const std::optional<double>& v) {
  return v ? *v : NAN;
}

// A hybrid factor of the run, NaN without one (and the TALP split without parallel regions).
double hyb(const analysis::PopFactors& f, double analysis::HybridEfficiency::*field, bool talp = false) {
  return f.hybrid && (!talp || f.hybrid->talp) ? (*f.hybrid).*field : NAN;
}
double hyb(const analysis::PopFactors& f, analysis::Efficiency analysis::HybridEfficiency::*part,
           double analysis::Efficiency::*field) {
  return f.hybrid ? ((*f.hybrid).*part).*field : NAN;
}

const std::vector<Column>& columns() {
  using F = analysis::PopFactors;
  using H = analysis::HybridEfficiency;
  using E = analysis::Efficiency;
  constexpr double us = 1e6;
  static const std::vector<Column> c = {
      {"global_efficiency", "Global efficiency", 0, [](const F& f) { return f.global_e; }, Kind::Efficiency},
      {"parallel_efficiency", "Parallel efficiency", 1, [](const F& f) { return f.eff.pe; }, Kind::Efficiency},
      {"load_balance", "Load balance", 2, [](const F& f) { return f.eff.lb; }, Kind::Efficiency},
      {"communication_efficiency", "Communication efficiency", 2, [](const F& f) { return f.eff.comm_e; },
       Kind::Efficiency},
      {"serialisation_efficiency", "Serialization efficiency", 3, [](const F& f) { return f.eff.ser_e; },
       Kind::Efficiency},
      {"transfer_efficiency", "Transfer efficiency", 3, [](const F& f) { return f.eff.trf_e; }, Kind::Efficiency},
      // BSC's hybrid table (basicanalysis' hybridmetrics) and TALP's split of OpenMP PE (hybrid.hpp).
      {"hybrid_parallel_efficiency", "Hybrid Parallel efficiency", 2, [](const F& f) { return hyb(f, &H::hybrid_pe); },
       Kind::Efficiency, true},
      {"mpi_parallel_efficiency", "MPI Parallel efficiency", 3, [](const F& f) { return hyb(f, &H::mpi, &E::pe); },
       Kind::Efficiency, true},
      {"mpi_load_balance", "MPI Load balance", 4, [](const F& f) { return hyb(f, &H::mpi, &E::lb); }, Kind::Efficiency,
       true},
      {"mpi_communication_efficiency", "MPI Communication efficiency", 4,
       [](const F& f) { return hyb(f, &H::mpi, &E::comm_e); }, Kind::Efficiency, true},
      {"mpi_serialisation_efficiency", "MPI Serialization efficiency", 5,
       [](const F& f) { return hyb(f, &H::mpi, &E::ser_e); }, Kind::Efficiency, true},
      {"mpi_transfer_efficiency", "MPI Transfer efficiency", 5, [](const F& f) { return hyb(f, &H::mpi, &E::trf_e); },
       Kind::Efficiency, true},
      {"omp_parallel_efficiency", "OpenMP Parallel efficiency", 3, [](const F& f) { return hyb(f, &H::omp, &E::pe); },
       Kind::Efficiency, true},
      {"omp_load_balance", "OpenMP Load balance", 4, [](const F& f) { return hyb(f, &H::omp, &E::lb); },
       Kind::Efficiency, true},
      {"omp_communication_efficiency", "OpenMP Communication efficiency", 4,
       [](const F& f) { return hyb(f, &H::omp, &E::comm_e); }, Kind::Efficiency, true},
      {"omp_serial_efficiency", "OpenMP Serial Efficiency", 4, [](const F& f) { return hyb(f, &H::omp_serialisation, true); },
       Kind::Efficiency, true},
      {"omp_talp_load_balance", "OpenMP Load Balance", 4, [](const F& f) { return hyb(f, &H::omp_load_balance, true); },
       Kind::Efficiency, true},
      {"omp_scheduling_efficiency", "OpenMP Scheduling Efficiency", 4,
       [](const F& f) { return hyb(f, &H::omp_scheduling, true); }, Kind::Efficiency, true},
      {"computation_scalability", "Computation scalability", 1, [](const F& f) { return f.comp_scal; },
       Kind::Efficiency},
      {"ipc_scalability", "IPC scalability", 2, [](const F& f) { return opt(f.ipc_scal); }, Kind::Efficiency},
      {"instruction_scalability", "Instruction scalability", 2, [](const F& f) { return opt(f.ins_scal); },
       Kind::Efficiency},
      {"frequency_scalability", "Frequency scalability", 2, [](const F& f) { return opt(f.freq_scal); },
       Kind::Efficiency},
      {"speedup", "Speedup", 0, [](const F& f) { return f.speedup; }, Kind::Number},
      {"ipc", "Average IPC", 0, [](const F& f) { return opt(f.ipc); }, Kind::Number},
      {"frequency_ghz", "Average frequency (GHz)", 0, [](const F& f) { return opt(f.ghz); }, Kind::Number},
      {"runtime_us", "Runtime (us)", 0, [](const F& f) { return f.elapsed * us; }, Kind::Microseconds},
      {"runtime_ideal_us", "Runtime (ideal)", 0, [](const F& f) { return f.ideal * us; }, Kind::Microseconds},
      {"useful_duration_average_us", "Useful duration (average)", 0, [](const F& f) { return f.useful_mean * us; },
       Kind::Microseconds},
      {"useful_duration_maximum_us", "Useful duration (maximum)", 0, [](const F& f) { return f.useful_max * us; },
       Kind::Microseconds},
      {"useful_duration_total_us", "Useful duration (total)", 0, [](const F& f) { return f.useful_sum * us; },
       Kind::Microseconds},
      {"useful_duration_ideal_max_us", "Useful duration (ideal, max)", 0,
       [](const F& f) { return f.useful_ideal_max * us; }, Kind::Microseconds},
      {"useful_instructions_total", "Useful instructions (total)", 0, [](const F& f) { return opt(f.instructions); },
       Kind::Count},
      {"useful_cycles_total", "Useful cycles (total)", 0, [](const F& f) { return opt(f.cycles); }, Kind::Count},
  };
  return c;
}

std::string_view unit_of(Kind k) {
  switch (k) {
    case Kind::Efficiency: return "fraction";
    case Kind::Microseconds: return "us";
    case Kind::Count: return "count";
    case Kind::Number: break;
  }
  return "";
}

// The terminal's cell: efficiencies in % and the others as modelfactors prints them.
std::string cell_text(const Column& c, double v) {
  if (!std::isfinite(v)) return "—";
  switch (c.kind) {
    case Kind::Efficiency: return fmt::format("{:.2f} %", 100 * v);
    case Kind::Number: return fmt::format("{:.2f}", v);
    case Kind::Microseconds: return fmt::format("{:.2f}", v);
    case Kind::Count: return fmt::format("{:.0f}", v);
  }
  return "";
}

// modelfactors.csv's cell: BSC's layout (efficiencies in % and the other factors with 6
// decimals, the '#' rows with 2); empty where a counter is missing.
std::string bsc_cell(const Column& c, double v) {
  if (!std::isfinite(v)) return "";
  if (c.kind == Kind::Efficiency) return fmt::format("{:.6f}", 100 * v);
  if (c.kind == Kind::Number) return fmt::format("{:.6f}", v);
  return fmt::format("{:.2f}", v);
}

bool any_hybrid(const std::vector<analysis::PopFactors>& factors) {
  return std::any_of(factors.begin(), factors.end(), [](const analysis::PopFactors& f) { return f.hybrid.has_value(); });
}

// modelfactors.csv as BSC's modelfactors writes it: ';'-separated, the factors first (in its
// order), then the '#' rows; one column per run.
std::string modelfactors_csv(const std::vector<analysis::PopFactors>& factors) {
  static const char* kOrder[] = {"parallel_efficiency", "load_balance", "communication_efficiency",
                                 "serialisation_efficiency", "transfer_efficiency", "computation_scalability",
                                 "global_efficiency", "ipc_scalability", "instruction_scalability",
                                 "frequency_scalability", "speedup", "ipc", "frequency_ghz"};
  std::string s = "Number of processes";
  for (const auto& f : factors) s += fmt::format(";{}", f.ranks);
  s += "\n";
  const auto row = [&](const Column& c, const char* prefix) {
    s += std::string(prefix) + c.title;
    for (const auto& f : factors) s += ";" + bsc_cell(c, c.get(f));
    s += "\n";
  };
  for (const char* k : kOrder)
    for (const auto& c : columns())
      if (std::string_view(c.key) == k) row(c, "");
  // BSC's hybrid rows, only when a run has threads.
  if (any_hybrid(factors))
    for (const auto& c : columns())
      if (c.hybrid) row(c, "");
  s += "#\n";
  for (const auto& c : columns())
    if (c.kind == Kind::Microseconds || c.kind == Kind::Count) row(c, "#");
  return s;
}

}  // namespace


void pop_command(const PopArgs& args, std::ostream& out) {
  analysis::Scaling scaling{};
  if (!analysis::parse_scaling(args.scaling, scaling))
    throw InputError("--scaling: unknown scaling '" + args.scaling + "' (allowed: strong, weak)");
  analysis::Convention conv{};
  if (args.convention != "auto" && !analysis::parse_convention(args.convention, conv))
    throw InputError("--convention: unknown convention '" + args.convention + "' (allowed: auto, bsc, scalasca, waitlab)");
  if (args.ideal != "lamport" && args.ideal != "smpi")
    throw InputError("--ideal: unknown estimate '" + args.ideal + "' (allowed: lamport, smpi)");
  if (args.inputs.empty()) throw InputError("pop: no traces given");
  const analysis::CutSpec cut = analysis::parse_cut(args.cut.time_range, args.cut.region, args.cut.iterations);
  if (cut.any() && args.ideal == "smpi")
    throw InputError("--ideal smpi: the SMPI replay estimates the whole run, not a cut (" + cut.option +
                     "); the cut's ideal time comes from the Lamport replay");

  std::vector<Input> inputs;
  for (const auto& in : args.inputs) expand(in, inputs);
  Inputs read;  // before any trace is opened
  for (const auto& a : args.inputs) read.add(a, "the input");  // a run directory given is an input too
  for (const auto& in : inputs) read.add_trace(in.path);
  read.check_output_dir(args.out_dir);
  std::vector<Analysed> runs;
  runs.reserve(inputs.size());
  for (const auto& in : inputs) runs.push_back(analyse(in, args, cut));
  // pop_model orders the runs by units (stably); so do the analyses and inputs beside them.
  std::vector<std::size_t> order(runs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return runs[a].run.units < runs[b].run.units; });
  std::vector<analysis::PopRun> pr;
  for (const std::size_t i : order) pr.push_back(runs[i].run);
  const analysis::PopTable table = analysis::pop_model(pr, scaling);
  const std::vector<analysis::PopFactors>& factors = table.runs;

  // Written aside and put in place when complete (app/output_dir.hpp): a failure leaves the
  // directory as it was.
  OutputDir staged(args.out_dir, read);
  const fs::path d(staged.path());
  std::vector<std::string> files;
  std::ostringstream problems;  // on standard error once the outputs are in place
  std::string reference;
  try {
    // pop.csv: one row per run, in the order of the factors (by units).
    std::string csv = "run,origin,convention,ranks,units";
    for (const auto& c : columns()) csv += std::string(",") + c.key;
    csv += "\n";
    nlohmann::ordered_json jruns = nlohmann::ordered_json::array();
    for (std::size_t k = 0; k < factors.size(); ++k) {
      const auto& f = factors[k];
      const Analysed& a = runs[order[k]];
      csv += fmt::format("{},{},{},{},{}", f.name, a.origin, analysis::convention_name(a.tr.convention), f.ranks, f.units);
      nlohmann::ordered_json jr;
      jr["run"] = f.name;
      jr["trace"] = inputs[order[k]].path;
      jr["origin"] = a.origin;
      jr["convention"] = analysis::convention_json(a.tr);
      jr["ideal"] = a.tr.source;
      jr["ranks"] = f.ranks;
      jr["units"] = f.units;
      jr["cut"] = analysis::cut_json(a.tr);
      for (const auto& c : columns()) {
        csv += "," + num(c.get(f));
        jr[c.key] = jnum(c.get(f));
      }
      jr["warnings"] = a.warnings;
      csv += "\n";
      jruns.push_back(jr);
    }
    nlohmann::ordered_json j;
    j["schema"] = "waitlab.pop";
    j["schema_version"] = kPopSchemaVersion;
    j["generator"] = std::string("waitlab ") + kVersion;
    j["scaling"] = args.scaling;
    j["reference"] = factors.empty() ? std::string() : factors[table.reference].name;
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();  // each key's row in modelfactors
    for (const auto& c : columns())
      rows.push_back({{"key", c.key}, {"modelfactors", c.title}, {"unit", unit_of(c.kind)}, {"indent", c.indent},
                      {"hybrid", c.hybrid}});
    j["rows"] = rows;
    j["runs"] = jruns;
    const std::string text = output::json_text(j) + "\n";
    trace::write_file_atomic((d / "pop.csv").string(), csv);
    trace::write_file_atomic((d / "pop.json").string(), text);
    trace::write_file_atomic((d / "modelfactors.csv").string(), modelfactors_csv(factors));
    nlohmann::ordered_json summary;
    summary["schema"] = "waitlab.pop";
    summary["schema_version"] = kPopSchemaVersion;
    summary["generator"] = j["generator"];
    summary["pop"] = j;
    trace::write_file_atomic((d / "summary.json").string(), output::json_text(summary) + "\n");
    files = {(d / "pop.csv").string(), (d / "pop.json").string(), (d / "modelfactors.csv").string()};
    std::error_code ec;
    for (const char* stem : {"pop", "pop_speedup"})  // another study's
      for (const char* ext : {".png", ".svg"}) fs::remove(d / (std::string(stem) + ext), ec);
    if (const std::string why = draw("pop", {staged.path()}); !why.empty()) {
      problems << "waitlab: the POP pictures were not drawn: " << staged.final_text(why) << "\n";
    } else {
      files.push_back((d / "pop.png").string());
      files.push_back((d / "pop_speedup.png").string());
    }
    fs::remove(d / "report.html", ec);
    try {
      files.push_back(write_report(staged.path()));
    } catch (const std::exception& e) {
      problems << "waitlab: report.html was not written: " << staged.final_text(e.what()) << "\n";
    }
    reference = j["reference"].get<std::string>();
    staged.commit();
  } catch (...) {
    staged.rethrow_final();
  }
  for (auto& f : files) f = staged.final_text(f);
  std::cerr << problems.str();

  // The table on the terminal: factors as rows, runs as columns (as POP reports print it).
  out << fmt::format("POP model factors, {} scaling, reference {} ({} runs)\n", args.scaling, reference,
                     factors.size());
  // modelfactors' rows and units (times in µs); the factors indented as their tree.
  const bool hybrid = any_hybrid(factors);
  const std::size_t width = hybrid ? 44 : 36;  // the hybrid rows nest deeper
  std::string head = fmt::format("{:<{}}", "", width);
  for (const auto& f : factors) head += fmt::format(" {:>15}", f.units == f.ranks ? fmt::format("{} ranks", f.ranks)
                                                                              : fmt::format("{}×{}", f.ranks, f.units / std::max<std::size_t>(f.ranks, 1)));
  out << head << "\n";
  for (const auto& c : columns()) {
    if (c.hybrid && !hybrid) continue;  // the hybrid block only when some run has threads
    const std::string title = c.indent == 0 ? std::string(c.title)
                                            : std::string(static_cast<std::size_t>(3 * c.indent - 3), ' ') + "– " + c.title;
    std::string line = fmt::format("{:<{}}", title, width);
    for (const auto& f : factors) line += fmt::format(" {:>15}", cell_text(c, c.get(f)));
    out << line << "\n";
  }
  for (const auto& a : runs)
    for (const auto& w : a.warnings) out << "warning         " << w << "\n";
  for (std::size_t k = 0; k < factors.size(); ++k)  // what each run's factors are of
    if (const auto& tr = runs[order[k]].tr; tr.cut.any())
      out << fmt::format("cut             {}: {} — {:.2f} % of its {:.6g} s\n", factors[k].name, analysis::cut_text(tr.cut),
                         tr.run_t1 > tr.run_t0 ? 100 * tr.elapsed / (tr.run_t1 - tr.run_t0) : 0.0,
                         tr.run_t1 - tr.run_t0);
  // One line per convention (and ideal estimate) used, naming its runs.
  std::vector<std::pair<std::string, std::string>> used;  // line, runs
  for (std::size_t k = 0; k < factors.size(); ++k) {
    const Analysed& a = runs[order[k]];
    const std::string line = fmt::format("{} — span: {}; useful: {}; ideal: {}", analysis::convention_name(a.tr.convention),
                                         analysis::convention_span_text(a.tr.convention),
                                         analysis::convention_useful_text(a.tr.convention), analysis::estimate_title(a.tr.source));
    auto it = std::find_if(used.begin(), used.end(), [&](const auto& u) { return u.first == line; });
    if (it == used.end()) used.emplace_back(line, factors[k].name);
    else it->second += ", " + factors[k].name;
  }
  for (const auto& [line, names] : used) out << "conventions     " << line << " (" << names << ")\n";
  out << "results         ";
  for (std::size_t i = 0; i < files.size(); ++i) out << (i ? ", " : "") << files[i];
  out << "\n";
}

}  // namespace waitlab::app
