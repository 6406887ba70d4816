#include "app/commands.hpp"
#include "analysis/output/json_text.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

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

}  // namespace

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

}  // namespace waitlab::app
