#include "app/validate.hpp"
#include "analysis/output/json_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <limits>
#include <set>
#include <sstream>

#include "analysis/trace/atomic_file.hpp"
#include "analysis/trace/csv.hpp"
#include "util/error.hpp"
#include "analysis/waitstate/waitstate.hpp"
#include "app/analyze.hpp"
#include "app/output_dir.hpp"
#include "app/plot.hpp"
#include "app/summary.hpp"
#include "scenarios/scenario.hpp"

namespace waitlab::app {

namespace fs = std::filesystem;
using minprofile::kVariantCount;
using minprofile::Pattern;
using minprofile::Variant;
using trace::csv_field;
using trace::csv_split;

namespace {

std::string num(double v) { return fmt::format("{}", v); }

std::string function_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

double pct(double ratio) { return 100 * ratio; }
double diff_pp(const ValidationRow& r, std::size_t v) { return 100 * (r.estimate_ratio[v] - r.truth_ratio); }
double rel_diff(const ValidationRow& r, std::size_t v) {
  return (r.estimate_ratio[v] - r.truth_ratio) / r.truth_ratio;
}

std::string variant(std::size_t v, double q) { return minprofile::variant_name(static_cast<Variant>(v), q); }

std::string table_csv(const ValidateResult& res) {
  std::string out =
      "scenario,call_path,function,pattern,calls,truth_pct,variant,estimate_pct,diff_pp,rel_diff,"
      "complete_at_entry,mean_call_s,mean_truth_s,mean_rank_minimum_s\n";
  for (const auto& r : res.rows) {
    const std::string per_call = r.mean_duration_s > 0 ? fmt::format("{},{},{},{}", r.complete_at_entry,
                                                                     num(r.mean_duration_s), num(r.mean_truth_s),
                                                                     num(r.mean_minimum_s))
                                                       : ",,,";
    for (std::size_t v = 0; v < kVariantCount; ++v) {
      if (!r.computed[v]) continue;
      out += fmt::format("{},{},{},{},{},{},{},{},{},{},{}\n", csv_field(r.scenario), csv_field(r.call_path),
                         csv_field(r.function), minprofile::pattern_name(r.pattern), r.calls, num(pct(r.truth_ratio)),
                         variant(v, res.percentile), num(pct(r.estimate_ratio[v])), num(diff_pp(r, v)),
                         num(rel_diff(r, v)), per_call);
    }
  }
  return out;
}

nlohmann::ordered_json table_json(const ValidateResult& res, const std::vector<std::string>& order) {
  nlohmann::ordered_json j;
  j["schema"] = "waitlab.validation";
  j["threshold_pct"] = 100 * kValidationThreshold;
  auto variants = nlohmann::ordered_json::array();
  for (std::size_t v = 0; v < kVariantCount; ++v) variants.push_back(variant(v, res.percentile));
  j["variants"] = variants;
  auto scenarios = nlohmann::ordered_json::array();
  for (const auto& name : order) {
    nlohmann::ordered_json sc;
    sc["scenario"] = name;
    auto rows = nlohmann::ordered_json::array();
    // Largest |difference| per (pattern, function) and variant.
    std::map<std::string, nlohmann::ordered_json> worst;
    for (const auto& r : res.rows) {
      if (r.scenario != name) continue;
      nlohmann::ordered_json row;
      row["call_path"] = r.call_path;
      row["pattern"] = minprofile::pattern_name(r.pattern);
      row["calls"] = r.calls;
      row["ranks"] = r.ranks;
      row["truth_s"] = r.truth_s;
      row["truth_pct"] = pct(r.truth_ratio);
      nlohmann::ordered_json est, dpp, rel;
      const std::string group = std::string(minprofile::pattern_name(r.pattern)) + " " + r.function;
      auto& w = worst[group];
      for (std::size_t v = 0; v < kVariantCount; ++v) {
        if (!r.computed[v]) continue;
        const auto vn = variant(v, res.percentile);
        est[vn] = pct(r.estimate_ratio[v]);
        dpp[vn] = diff_pp(r, v);
        rel[vn] = rel_diff(r, v);
        auto& wv = w[vn];
        if (wv.is_null() || std::abs(diff_pp(r, v)) > std::abs(wv["diff_pp"].get<double>()))
          wv["diff_pp"] = diff_pp(r, v);
        if (!wv.contains("rel_diff") || std::abs(rel_diff(r, v)) > std::abs(wv["rel_diff"].get<double>()))
          wv["rel_diff"] = rel_diff(r, v);
      }
      row["estimate_pct"] = est;
      row["diff_pp"] = dpp;
      row["rel_diff"] = rel;
      if (r.mean_duration_s > 0)
        row["per_call"] = {{"complete_at_entry", r.complete_at_entry},
                           {"mean_duration_s", r.mean_duration_s},
                           {"mean_truth_s", r.mean_truth_s},
                           {"mean_communication_s", r.mean_duration_s - r.mean_truth_s},
                           {"mean_rank_minimum_s", r.mean_minimum_s}};
      rows.push_back(row);
    }
    sc["call_paths"] = rows;
    nlohmann::ordered_json wj;
    for (auto& [k, v] : worst) wj[k] = v;
    sc["largest_differences"] = wj;
    scenarios.push_back(sc);
  }
  j["scenarios"] = scenarios;
  return j;
}

void print_table(const ValidateResult& res, const std::string& name, std::size_t ranks, double wall,
                 std::ostream& out) {
  out << fmt::format("{} — {} ranks, {:.6g} s\n", name, ranks, wall);
  std::string head = fmt::format("  {:<40} {:<15} {:>8}", "call path", "pattern", "truth");
  for (std::size_t v = 0; v < kVariantCount; ++v) head += fmt::format(" {:>16}", variant(v, res.percentile));
  out << head << "\n";
  bool any = false;
  for (const auto& r : res.rows) {
    if (r.scenario != name) continue;
    any = true;
    std::string line = fmt::format("  {:<40} {:<15} {:>7.2f}%", r.call_path, minprofile::pattern_name(r.pattern),
                                   pct(r.truth_ratio));
    for (std::size_t v = 0; v < kVariantCount; ++v)
      line += r.computed[v] ? fmt::format(" {:>7.2f}% {:>+6.2f}pp", pct(r.estimate_ratio[v]), diff_pp(r, v))
                            : fmt::format(" {:>16}", "-");
    out << line << "\n";
  }
  if (!any) out << "  (no call path waits 0.5 % or more)\n";
}

// The per-call figures of a point-to-point row: durations, truth per call, the ranks' minima.
void per_call(const trace::Trace& t, const AnalysisReport& report, const std::string& path, ValidationRow& row) {
  const auto& w = *report.result<analysis::WaitStateResult>("waitstate");
  const auto want = row.pattern == Pattern::LateSender ? analysis::Pattern::LateSender : analysis::Pattern::LateReceiver;
  std::uint64_t n = 0;
  double dur = 0, truth = 0, minima = 0;
  std::size_t ranks = 0;
  for (std::size_t rank = 0; rank < t.ranks(); ++rank) {
    const auto& calls = report.matching.calls[rank];
    const auto& ev = t.locations[rank].events;
    double shortest = std::numeric_limits<double>::infinity();
    for (std::uint32_t i = 0; i < calls.size(); ++i) {
      if (report.path_names[calls[i].path] != path) continue;
      // The calls the row is about: for Late Sender those that complete a receive.
      bool receives = false;
      for (std::uint32_t x = calls[i].enter; x < calls[i].leave && !receives; ++x)
        receives = ev[x].kind == trace::EventKind::Recv || ev[x].kind == trace::EventKind::IrecvComplete;
      if (receives != (row.pattern == Pattern::LateSender)) continue;
      const double d = ev[calls[i].leave].time - ev[calls[i].enter].time;
      ++n;
      dur += d;
      shortest = std::min(shortest, d);
      if (ev[calls[i].enter].flags & trace::kTestedComplete) ++row.complete_at_entry;
      const auto [first, last] = w.of_call(static_cast<trace::Rank>(rank), i);
      for (std::size_t k = first; k < last; ++k)
        if (w.instances[k].pattern == want) truth += w.instances[k].seconds;
    }
    if (std::isfinite(shortest)) {
      minima += shortest;
      ++ranks;
    }
  }
  if (n == 0) return;
  row.mean_duration_s = dur / static_cast<double>(n);
  row.mean_truth_s = truth / static_cast<double>(n);
  row.mean_minimum_s = ranks > 0 ? minima / static_cast<double>(ranks) : 0;
}

}  // namespace

std::vector<std::string> compare_validation_csv(const std::string& expected, const std::string& actual) {
  constexpr std::size_t kColumns = 14;
  const auto rows = [](const std::string& text) {
    std::map<std::string, std::vector<std::string>> m;
    std::istringstream in(text);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      auto f = csv_split(line);
      if (f.size() != kColumns) {  // reported as a row of its own that the other table lacks
        m["malformed line '" + line + "'"] = std::vector<std::string>(kColumns);
        continue;
      }
      const std::string key = f[0] + " | " + f[1] + " | " + f[3] + " | " + f[6];
      m[key] = f;
    }
    return m;
  };
  const auto e = rows(expected);
  const auto a = rows(actual);
  static const char* const kCols[kColumns] = {
      "scenario", "call_path", "function", "pattern", "calls", "truth_pct", "variant", "estimate_pct",
      "diff_pp", "rel_diff", "complete_at_entry", "mean_call_s", "mean_truth_s", "mean_rank_minimum_s"};
  std::vector<std::string> diffs;
  for (const auto& [k, ev] : e) {
    const auto it = a.find(k);
    if (it == a.end()) {
      diffs.push_back(k + ": missing (expected truth " + ev[5] + " %, estimate " + ev[7] + " %)");
      continue;
    }
    const auto& av = it->second;
    for (std::size_t c = 4; c < kColumns; ++c) {
      if (c == 6 || ev[c] == av[c]) continue;
      if (ev[c].empty() || av[c].empty()) {
        diffs.push_back(k + ": " + kCols[c] + " '" + av[c] + "', expected '" + ev[c] + "'");
        continue;
      }
      const double x = std::stod(ev[c]);
      const double y = std::stod(av[c]);
      // Percentages and ratios: 1e-9 absolute is far below anything a reader sees, and
      // above the last-digit noise of differences of nearly equal numbers.
      const bool same = x == y || std::abs(x - y) <= 1e-9 * std::max(std::abs(x), std::abs(y)) ||
                        std::abs(x - y) <= 1e-9;
      if (!same) diffs.push_back(k + ": " + kCols[c] + " " + av[c] + ", expected " + ev[c]);
    }
  }
  for (const auto& [k, av] : a)
    if (!e.count(k)) diffs.push_back(k + ": not expected (truth " + av[5] + " %, estimate " + av[7] + " %)");
  return diffs;
}

ValidateResult validate(const ValidateArgs& args, std::ostream& out) {
  if (args.scenarios.empty()) throw InputError("validate: no scenario given");
  ValidateResult res;
  res.percentile = 5;
  std::error_code ec;
  // Prepared aside and put in place when everything is written (app/output_dir.hpp).
  Inputs inputs;
  for (const auto& file : args.scenarios) inputs.add(file, "the scenario");
  if (!args.expected.empty() && !args.update) inputs.add(args.expected, "the expected figures");
  OutputDir staged(args.out_dir, inputs);

  std::vector<std::string> order;
  for (const auto& file : args.scenarios) {
    scenarios::Scenario s = scenarios::load_scenario(file, args.sets);
    if (std::find(order.begin(), order.end(), s.name) != order.end())
      throw InputError(file + ": a scenario named '" + s.name + "' was already validated in this run");
    order.push_back(s.name);
    for (const char* a : {"waitstate", "minprofile"})
      if (std::find(s.outputs.analyses.begin(), s.outputs.analyses.end(), a) == s.outputs.analyses.end())
        s.outputs.analyses.emplace_back(a);
    s.run.baseline = false;
    Outcome o = simulate_scenario(s, false);
    AnalysisSelection sel;
    sel.names = {"waitstate", "minprofile"};
    const AnalysisReport report = run_analyses(o.result.trace, sel, o.result.estimate);
    const fs::path dir = fs::path(staged.path()) / s.name;
    fs::create_directories(dir, ec);
    if (ec) throw InputError(dir.string() + ": cannot create the output directory: " + ec.message());
    write_analysis_tables(dir.string(), report);

    const auto& w = *report.result<analysis::WaitStateResult>("waitstate");
    const auto& m = **report.result<minprofile::Shared>("minprofile");
    res.percentile = m.percentile;
    // Truth per (call path, pattern), subsets of Late Sender counted once (in late_sender).
    std::map<std::pair<std::string, std::string>, double> truth;
    for (const auto& e : w.table)
      if (!analysis::is_subset_pattern(e.pattern))
        truth[{report.path_names[e.path], std::string(analysis::pattern_name(e.pattern))}] += e.seconds;
    std::map<std::pair<std::string, std::string>, const minprofile::Total*> est;
    const auto totals = m.totals();
    for (const auto& t : totals) est[{m.paths[t.path], std::string(minprofile::pattern_name(t.pattern))}] = &t;

    // Early Reduce can only happen on the root: its ratio is relative to the roots' time (over
    // all ranks it would be 1/P of that, and never reach the threshold at scale).
    std::map<std::string, std::set<std::int32_t>> roots;
    for (const auto& row : m.rows)
      if (row.pattern == Pattern::EarlyReduce && row.calls > 0) roots[m.paths[row.path]].insert(row.rank);
    for (const auto& [key, seconds] : truth) {
      const Pattern p = minprofile::pattern_from_name(key.second);
      if (p == Pattern::Count_ || p == Pattern::None) continue;  // not a pattern the estimator covers
      const std::size_t ranks = p == Pattern::EarlyReduce ? std::max<std::size_t>(1, roots[key.first].size()) : w.ranks;
      const double denom = static_cast<double>(ranks) * w.wall_time;
      const double ratio = denom > 0 ? seconds / denom : 0;
      if (ratio < kValidationThreshold) continue;
      ValidationRow r;
      r.scenario = s.name;
      r.call_path = key.first;
      r.function = function_of(key.first);
      r.pattern = p;
      r.truth_s = seconds;
      r.truth_ratio = ratio;
      r.computed = m.computed;
      r.ranks = ranks;
      if (const auto it = est.find(key); it != est.end()) {
        r.calls = it->second->calls;
        for (std::size_t v = 0; v < kVariantCount; ++v)
          r.estimate_ratio[v] = denom > 0 ? it->second->waiting[v] / denom : 0;
      }
      if (p == Pattern::LateSender || p == Pattern::LateReceiver) per_call(o.result.trace, report, key.first, r);
      res.rows.push_back(r);
    }
    print_table(res, s.name, w.ranks, w.wall_time, out);
  }

  const fs::path d(staged.path());
  const std::string csv = table_csv(res);
  const std::string csv_path = (d / "validation.csv").string();
  std::vector<std::string> files = {csv_path, (d / "validation.json").string()};
  try {
    trace::write_file_atomic(csv_path, csv);
    trace::write_file_atomic((d / "validation.json").string(), output::json_text(table_json(res, order)) + "\n");
    // matplotlib rewrites a picture in place, and an old one is linked from the output
    // directory until the commit: it goes first.
    if (args.plot) {
      for (const char* ext : {".png", ".svg"}) fs::remove(d / (std::string("validation") + ext), ec);
      res.plot_problem = draw("validation", {csv_path, (d / "validation").string()});
      if (res.plot_problem.empty()) {
        files.push_back((d / "validation.png").string());
        files.push_back((d / "validation.svg").string());
      } else {
        out << "no picture: " << staged.final_text(res.plot_problem) << "\n";
      }
    }
    staged.commit();
  } catch (...) {
    staged.rethrow_final();
  }
  for (auto& f : files) f = staged.final_text(f);
  if (!args.expected.empty()) {
    if (args.update) {
      trace::write_file_atomic(args.expected, csv);
      out << "wrote " << args.expected << "\n";
    } else {
      std::ifstream in(args.expected);
      if (!in) throw InputError(args.expected + ": cannot read the expected table (create it with --update)");
      const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      res.differences = compare_validation_csv(text, csv);
      res.compared = true;
      if (res.differences.empty()) {
        out << "same as " << args.expected << "\n";
      } else {
        out << "DIFFERS from " << args.expected << ":\n";
        for (const auto& x : res.differences) out << "  " << x << "\n";
      }
    }
  }
  out << "results         ";
  for (std::size_t i = 0; i < files.size(); ++i) out << (i ? ", " : "") << files[i];
  out << "\n";
  return res;
}

}  // namespace waitlab::app
