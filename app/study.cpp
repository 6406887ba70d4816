#include "app/study.hpp"
#include "analysis/output/html.hpp"
#include "analysis/output/json_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <iostream>
#include <sstream>

#include "analysis/trace/atomic_file.hpp"
#include "analysis/trace/csv.hpp"
#include "util/error.hpp"
#include "app/jobs.hpp"
#include "app/output_dir.hpp"
#include "app/plot.hpp"
#include "app/report.hpp"
#include "scenarios/scenario.hpp"

namespace waitlab::app {

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

constexpr std::size_t kTopDelays = 5;

Json read_json_file(const fs::path& p) {
  std::ifstream in(p);
  if (!in) throw InputError(p.string() + ": cannot read");
  try {
    return Json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(p.string() + ": not JSON: " + e.what());
  }
}

double number_at(const Json& j, std::initializer_list<const char*> keys) {
  const Json* v = &j;
  for (const char* k : keys) {
    if (!v->is_object() || !v->contains(k)) return 0;
    v = &(*v)[k];
  }
  return v->is_number() ? v->get<double>() : 0.0;
}

// One finished job as a record (docs/whatif.md): everything the study's outputs show.
Json record_of(std::size_t index, const std::string& name, const Json& params, const std::vector<std::string>& changes,
               const fs::path& dir) {
  const Json s = read_json_file(dir / "summary.json");
  Json r;
  r["job"] = index;
  r["name"] = name;
  r["params"] = params;
  r["changes"] = changes;
  Json f;
  f["wall_time_s"] = number_at(s, {"wall_time_s"});
  f["simulated_time_s"] = number_at(s, {"simulated_time_s"});
  f["mpi_operations"] = number_at(s, {"mpi_operations"});
  f["nominal_compute_s"] = number_at(s, {"nominal_compute_s"});
  f["injected_s"] = number_at(s, {"injected", "total_s"});
  const Json& a = s.contains("analyses") ? s["analyses"] : Json();
  f["total_waiting_s"] = number_at(a, {"waitstate", "total_waiting_s"});
  f["wait_ratio"] = number_at(a, {"waitstate", "wait_ratio"});
  Json by_pattern = Json::object();
  if (a.is_object() && a.contains("waitstate") && a["waitstate"].contains("patterns"))
    for (const auto& [p, v] : a["waitstate"]["patterns"].items()) by_pattern[p] = number_at(v, {"total_s"});
  f["waiting_by_pattern_s"] = by_pattern;
  f["delay_short_term_s"] = number_at(a, {"delay", "short_term_s"});
  f["delay_long_term_s"] = number_at(a, {"delay", "long_term_s"});
  f["critical_path_s"] = number_at(a, {"critpath", "length_s"});
  f["critical_imbalance_s"] = number_at(a, {"critpath", "impact", "critical_imbalance_s"});
  r["figures"] = f;
  Json top = Json::array();
  if (a.is_object() && a.contains("delay") && a["delay"].is_object())
    for (const auto& t : a["delay"]["top"]) {
      if (top.size() == kTopDelays) break;
      top.push_back(t);
    }
  r["top_delay_costs"] = top;
  // The critical-path profile: call path, time on the path, imbalance (critical_path_profile.csv).
  Json profile = Json::array();
  const std::string table = (dir / "critical_path_profile.csv").string();
  for (const auto& row : read_table(table))
    profile.push_back({{"call_path", row.count("call_path") ? row.at("call_path") : std::string()},
                       {"on_path_s", table_number(row, "on_path_s", table)},
                       {"imbalance_s", table_number(row, "imbalance_s", table)}});
  r["critical_path_profile"] = profile;
  return r;
}

std::string num(double v) { return fmt::format("{}", v); }

// The CSV of a study: one row per record, the same columns for every row.
std::string study_csv(const std::vector<Json>& records, const std::vector<std::string>& param_keys, bool whatif) {
  std::vector<std::string> patterns;
  for (const auto& r : records)
    for (const auto& [p, v] : r["figures"]["waiting_by_pattern_s"].items())
      if (std::find(patterns.begin(), patterns.end(), p) == patterns.end()) patterns.push_back(p);
  const double base_wall = records.empty() ? 0.0 : records.front()["figures"]["wall_time_s"].get<double>();
  std::ostringstream o;
  o << "job,name";
  for (const auto& k : param_keys) o << "," << trace::csv_field(k);
  if (whatif) o << ",changes";
  o << ",wall_time_s";
  if (whatif) o << ",speedup";
  o << ",simulated_time_s,total_waiting_s,wait_ratio";
  for (const auto& p : patterns) o << "," << p << "_s";
  o << ",delay_short_term_s,delay_long_term_s,critical_path_s,critical_imbalance_s,injected_s,nominal_compute_s\n";
  for (const auto& r : records) {
    const Json& f = r["figures"];
    o << r["job"].get<std::size_t>() << "," << trace::csv_field(r["name"].get<std::string>());
    for (const auto& k : param_keys)
      o << "," << trace::csv_field(r["params"].contains(k) ? r["params"][k].get<std::string>() : "");
    if (whatif) {
      std::string changes;
      for (const auto& c : r["changes"]) changes += (changes.empty() ? "" : "; ") + c.get<std::string>();
      o << "," << trace::csv_field(changes);
    }
    const double wall = f["wall_time_s"].get<double>();
    o << "," << num(wall);
    if (whatif) o << "," << num(wall > 0 ? base_wall / wall : 0.0);
    o << "," << num(f["simulated_time_s"].get<double>()) << "," << num(f["total_waiting_s"].get<double>()) << ","
      << num(f["wait_ratio"].get<double>());
    for (const auto& p : patterns)
      o << "," << num(f["waiting_by_pattern_s"].contains(p) ? f["waiting_by_pattern_s"][p].get<double>() : 0.0);
    for (const char* k : {"delay_short_term_s", "delay_long_term_s", "critical_path_s", "critical_imbalance_s",
                          "injected_s", "nominal_compute_s"})
      o << "," << num(f[k].get<double>());
    o << "\n";
  }
  return o.str();
}

// ---- whatif.html: the variants side by side ----


std::string whatif_html(const std::string& scenario, const std::vector<Json>& records, const fs::path& png) {
  std::string h =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>waitlab what-if: " + output::html_escape(scenario) +
      "</title>\n<style>body{font-family:sans-serif;margin:2em;max-width:80em}table{border-collapse:collapse;"
      "margin:1em 0}th,td{border:1px solid #bbb;padding:.3em .6em}td.num{text-align:right;font-variant-numeric:"
      "tabular-nums}th{background:#eee}.better{color:#060}.worse{color:#a00}img{max-width:100%}</style></head>\n"
      "<body>\n<h1>What if … — " +
      output::html_escape(scenario) + "</h1>\n";
  const auto head = [&](const std::string& first) {
    std::string t = "<table><thead><tr><th>" + first + "</th>";
    for (const auto& r : records) t += "<th>" + output::html_escape(r["name"].get<std::string>()) + "</th>";
    return t + "</tr></thead><tbody>\n";
  };
  const double base_wall = records.front()["figures"]["wall_time_s"].get<double>();
  h += "<h2>Runtime</h2>\n" + head("");
  h += "<tr><th>changes</th>";
  for (const auto& r : records) {
    std::string c;
    for (const auto& x : r["changes"]) c += (c.empty() ? "" : "<br>") + output::html_escape(x.get<std::string>());
    h += "<td>" + (c.empty() ? std::string("as written") : c) + "</td>";
  }
  h += "</tr>\n<tr><th>runtime</th>";
  for (const auto& r : records) h += "<td class=\"num\">" + output::readable_seconds(r["figures"]["wall_time_s"].get<double>()) + "</td>";
  h += "</tr>\n<tr><th>speed-up vs baseline</th>";
  for (const auto& r : records) {
    const double w = r["figures"]["wall_time_s"].get<double>();
    const double sp = w > 0 ? base_wall / w : 0;
    h += "<td class=\"num " + std::string(sp > 1.0005 ? "better" : sp < 0.9995 ? "worse" : "") + "\">" +
         fmt::format("{:.3f}×", sp) + "</td>";
  }
  h += "</tr>\n<tr><th>total waiting</th>";
  for (const auto& r : records)
    h += "<td class=\"num\">" + output::readable_seconds(r["figures"]["total_waiting_s"].get<double>()) + "</td>";
  h += "</tr>\n<tr><th>critical path</th>";
  for (const auto& r : records)
    h += "<td class=\"num\">" + output::readable_seconds(r["figures"]["critical_path_s"].get<double>()) + "</td>";
  h += "</tr>\n</tbody></table>\n";

  // Waiting by pattern: the patterns any record has.
  std::vector<std::string> patterns;
  for (const auto& r : records)
    for (const auto& [p, v] : r["figures"]["waiting_by_pattern_s"].items())
      if (v.get<double>() > 0 && std::find(patterns.begin(), patterns.end(), p) == patterns.end())
        patterns.push_back(p);
  h += "<h2>Waiting time by pattern (all ranks)</h2>\n" + head("pattern");
  for (const auto& p : patterns) {
    h += "<tr><th>" + output::html_escape(p) + "</th>";
    for (const auto& r : records) {
      const auto& w = r["figures"]["waiting_by_pattern_s"];
      h += "<td class=\"num\">" + output::readable_seconds(w.contains(p) ? w[p].get<double>() : 0.0) + "</td>";
    }
    h += "</tr>\n";
  }
  h += "</tbody></table>\n";

  // Critical-path profile: the call paths on any record's path.
  std::vector<std::string> paths;
  for (const auto& r : records)
    for (const auto& p : r["critical_path_profile"])
      if (p["on_path_s"].get<double>() > 0 &&
          std::find(paths.begin(), paths.end(), p["call_path"].get<std::string>()) == paths.end())
        paths.push_back(p["call_path"].get<std::string>());
  h += "<h2>Critical-path profile (time on the path)</h2>\n" + head("call path");
  for (const auto& path : paths) {
    h += "<tr><th>" + output::html_escape(path) + "</th>";
    for (const auto& r : records) {
      double v = 0;
      for (const auto& p : r["critical_path_profile"])
        if (p["call_path"] == path) v = p["on_path_s"].get<double>();
      h += "<td class=\"num\">" + output::readable_seconds(v) + "</td>";
    }
    h += "</tr>\n";
  }
  h += "</tbody></table>\n<h2>Top delay costs (short + long term)</h2>\n";
  for (const auto& r : records) {
    h += "<h3>" + output::html_escape(r["name"].get<std::string>()) +
         "</h3>\n<table><thead><tr><th>rank</th><th>call path</th><th>kind</th><th>short term</th><th>long "
         "term</th></tr></thead><tbody>\n";
    for (const auto& t : r["top_delay_costs"])
      h += "<tr><td class=\"num\">" + output::json_text(t["rank"], -1) + "</td><td>" + output::html_escape(t["call_path"].get<std::string>()) +
           "</td><td>" + output::html_escape(t["kind"].get<std::string>()) + "</td><td class=\"num\">" +
           output::readable_seconds(t["short_term_s"].get<double>()) + "</td><td class=\"num\">" + output::readable_seconds(t["long_term_s"].get<double>()) +
           "</td></tr>\n";
    h += "</tbody></table>\n";
  }
  std::ifstream pic(png, std::ios::binary);
  if (pic) {
    std::ostringstream b;
    b << pic.rdbuf();
    h += "<h2>Picture</h2>\n<img id=\"whatif\" alt=\"runtime and waiting per variant\" src=\"data:image/png;base64," +
         output::base64(b.str()) + "\">\n";
  }
  h += "<p>Each column is its own simulation; its full report is <code>&lt;name&gt;/report.html</code>.</p>\n"
       "</body></html>\n";
  return h;
}

// ---- running a study ----

struct StudyPlan {
  std::string kind;                       // "whatif" or "sweep"
  std::string scenario;                   // name, for titles
  std::string dir;                        // the study's output directory
  std::vector<Job> jobs;
  std::vector<Json> params;               // per job
  std::vector<std::vector<std::string>> changes;
  std::vector<std::string> param_keys;    // sweep: the grid keys
};

void write_records(const std::string& path, const std::vector<Json>& records) {
  std::string text;
  for (const auto& r : records) text += output::json_text(r, -1) + "\n";
  trace::write_file_atomic(path, text);
}

// Whether `r` has every key the outputs read, with the right types ("" = it does).
std::string record_problem(const Json& r) {
  const auto is_num = [](const Json& j, const char* k) { return j.is_object() && j.contains(k) && j[k].is_number(); };
  const auto is_str = [](const Json& j, const char* k) { return j.is_object() && j.contains(k) && j[k].is_string(); };
  const auto all_of = [](const Json& j, const char* k, auto ok) {
    if (!j.is_object() || !j.contains(k)) return false;
    for (const auto& x : j[k]) if (!ok(x)) return false;
    return true;
  };
  if (!r.is_object() || !r.contains("job") || !r["job"].is_number_unsigned()) return "no job index";
  if (!is_str(r, "name")) return "no name";
  if (!r.contains("params") || !r["params"].is_object() ||
      !all_of(r, "params", [](const Json& x) { return x.is_string(); }))
    return "no params";
  if (!r.contains("changes") || !r["changes"].is_array() ||
      !all_of(r, "changes", [](const Json& x) { return x.is_string(); }))
    return "no changes";
  if (!r.contains("figures") || !r["figures"].is_object()) return "no figures";
  for (const char* k : {"wall_time_s", "simulated_time_s", "total_waiting_s", "wait_ratio", "delay_short_term_s",
                        "delay_long_term_s", "critical_path_s", "critical_imbalance_s", "injected_s",
                        "nominal_compute_s"})
    if (!is_num(r["figures"], k)) return std::string("no figures.") + k;
  if (!r["figures"].contains("waiting_by_pattern_s") || !r["figures"]["waiting_by_pattern_s"].is_object() ||
      !all_of(r["figures"], "waiting_by_pattern_s", [](const Json& x) { return x.is_number(); }))
    return "no figures.waiting_by_pattern_s";
  if (!r.contains("top_delay_costs") || !r["top_delay_costs"].is_array() ||
      !all_of(r, "top_delay_costs", [&](const Json& x) {
        return x.is_object() && x.contains("rank") && is_str(x, "call_path") && is_str(x, "kind") &&
               is_num(x, "short_term_s") && is_num(x, "long_term_s");
      }))
    return "no top_delay_costs";
  if (!r.contains("critical_path_profile") || !r["critical_path_profile"].is_array() ||
      !all_of(r, "critical_path_profile", [&](const Json& x) {
        return is_str(x, "call_path") && is_num(x, "on_path_s") && is_num(x, "imbalance_s");
      }))
    return "no critical_path_profile";
  return "";
}

std::vector<Json> read_records(const std::vector<std::string>& files) {
  std::vector<Json> records;
  for (const auto& f : files) {
    std::ifstream in(f);
    if (!in) throw InputError(f + ": cannot read the record file");
    std::string line;
    std::size_t n = 0;
    while (std::getline(in, line)) {
      ++n;
      if (line.empty()) continue;
      try {
        records.push_back(Json::parse(line));
      } catch (const nlohmann::json::exception& e) {
        throw InputError(f + ":" + std::to_string(n) + ": not a study record: " + e.what());
      }
      if (const std::string why = record_problem(records.back()); !why.empty())
        throw InputError(f + ":" + std::to_string(n) + ": not a study record (" + why + ")");
    }
  }
  std::sort(records.begin(), records.end(),
            [](const Json& a, const Json& b) { return a["job"].get<std::size_t>() < b["job"].get<std::size_t>(); });
  return records;
}

// The study's own outputs, into `staged` (the study's directory, not yet committed).
void write_outputs(const StudyPlan& plan, const std::vector<Json>& records, const OutputDir& staged,
                   std::ostream& out) {
  if (records.size() != plan.jobs.size())
    throw InputError(fmt::format("the records hold {} of the study's {} jobs", records.size(), plan.jobs.size()));
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (records[i]["job"].get<std::size_t>() != i) throw InputError(fmt::format("the records lack job {}", i));
    if (records[i]["name"] != plan.jobs[i].name || records[i]["params"] != plan.params[i])
      throw InputError(fmt::format("the record of job {} ('{}') is not of this study (expected '{}')", i,
                                   records[i]["name"].get<std::string>(), plan.jobs[i].name));
  }
  const bool whatif = plan.kind == "whatif";
  const fs::path d(staged.path());
  std::error_code ec;
  const std::string csv = (d / (plan.kind + ".csv")).string();
  trace::write_file_atomic(csv, study_csv(records, plan.param_keys, whatif));
  Json j;
  j["schema"] = "waitlab." + plan.kind;
  j["schema_version"] = 1;
  j["scenario"] = plan.scenario;
  j["parameters"] = plan.param_keys;
  j["runs"] = records;
  trace::write_file_atomic((d / (plan.kind + ".json")).string(), output::json_text(j) + "\n");
  // matplotlib rewrites a picture in place, and the old one is linked from the output
  // directory until the commit: it goes first.
  for (const char* ext : {".png", ".svg"}) fs::remove(d / (plan.kind + ext), ec);
  const std::string why = draw(plan.kind, {csv, (d / plan.kind).string()});
  if (!why.empty()) out << "note: no " << plan.kind << ".png: " << why << "\n";
  std::vector<std::string> files = {csv, (d / (plan.kind + ".json")).string()};
  if (whatif) {
    const std::string html = (d / "whatif.html").string();
    trace::write_file_atomic(html, whatif_html(plan.scenario, records, d / "whatif.png"));
    files.push_back(html);
  }
  // The terminal: one line per run.
  const double base = records.front()["figures"]["wall_time_s"].get<double>();
  out << fmt::format("\n{:<28} {:>14} {:>9} {:>14} {:>14}\n", whatif ? "variant" : "run", "runtime",
                     whatif ? "speed-up" : "vs first", "waiting", "critical imb.");
  for (const auto& r : records) {
    const auto& f = r["figures"];
    const double w = f["wall_time_s"].get<double>();
    out << fmt::format("{:<28} {:>14} {:>8.3f}× {:>14} {:>14}\n", r["name"].get<std::string>(), output::readable_seconds(w),
                       w > 0 ? base / w : 0.0, output::readable_seconds(f["total_waiting_s"].get<double>()),
                       output::readable_seconds(f["critical_imbalance_s"].get<double>()));
  }
  out << "\n";
  for (const auto& f : files) out << "wrote " << staged.final_text(f) << "\n";
}

int run_plan(const StudyPlan& plan, const StudyArgs& args, std::ostream& out) {
  if (!args.merge.empty() && (!args.share.empty() || !args.records.empty()))
    throw InputError("--merge makes the outputs from record files; it takes no --share or --records");
  if (!args.share.empty() && args.records.empty())
    throw InputError("--share needs --records FILE (this share's results, for the process that merges them)");
  if (!args.merge.empty()) {
    Inputs inputs = inputs_of(plan.jobs);
    for (const auto& f : args.merge) inputs.add(f, "the record file");
    const std::vector<Json> records = read_records(args.merge);
    OutputDir staged(plan.dir, inputs);
    std::ostringstream said;  // on the terminal once the outputs are in place
    try {
      write_outputs(plan, records, staged, said);
      staged.commit();
    } catch (...) {
      staged.rethrow_final();
    }
    out << said.str();
    return 0;
  }
  const Share share = args.share.empty() ? Share{} : parse_share(args.share, "--share");
  // Every run directory and the study's tables are prepared aside and put in place together
  // when all of them succeeded (app/output_dir.hpp): a failed study replaces nothing.
  OutputDir staged(plan.dir, inputs_of(plan.jobs));
  std::vector<Job> mine;
  std::vector<std::size_t> index;
  for (std::size_t i = 0; i < plan.jobs.size(); ++i)
    if (share.mine(i)) {
      Job job = plan.jobs[i];
      job.shown_dir = job.dir;
      job.dir = (fs::path(staged.path()) / fs::path(job.dir).filename()).string();
      mine.push_back(std::move(job));
      index.push_back(i);
    }
  out << fmt::format("{}: {} runs{} into {}, {} at a time\n", plan.kind, mine.size(),
                     args.share.empty() ? "" : " (share " + args.share + " of " + std::to_string(plan.jobs.size()) + ")",
                     plan.dir, std::max(1, args.jobs));
  const auto outcomes = run_jobs(mine, args.jobs, out);
  int code = 0;
  std::vector<std::size_t> failed;
  for (std::size_t k = 0; k < outcomes.size(); ++k)
    if (outcomes[k].exit_code != 0) {
      failed.push_back(k);
      code = std::max(code, outcomes[k].exit_code);
    }
  if (code != 0) {
    // One line on standard error, as every error of waitlab: the first failure (already one
    // line, run_jobs), and the other runs that failed by name (their lines are in the table above).
    std::string others;
    for (std::size_t i = 1; i < failed.size() && i <= 8; ++i) others += (i > 1 ? ", " : "") + mine[failed[i]].name;
    if (failed.size() > 9) others += ", ...";
    out.flush();
    std::cerr << "waitlab: error: " << mine[failed[0]].name << ": " << outcomes[failed[0]].error
              << (failed.size() > 1 ? fmt::format(" (and {} more of the {} runs failed: {})", failed.size() - 1,
                                                  outcomes.size(), others)
                                    : std::string())
              << "\n";
    return code;
  }
  std::vector<Json> records;
  std::ostringstream said;  // on the terminal once the outputs are in place
  try {
    for (std::size_t k = 0; k < mine.size(); ++k) {
      const std::size_t i = index[k];
      records.push_back(record_of(i, plan.jobs[i].name, plan.params[i], plan.changes[i], mine[k].dir));
    }
    if (args.records.empty()) write_outputs(plan, records, staged, said);
    staged.commit();
  } catch (...) {
    staged.rethrow_final();
  }
  if (!args.records.empty()) {
    write_records(args.records, records);
    return 0;
  }
  out << said.str();
  return 0;
}

// A run directory names its scenario in host.json (absolute path) and its overrides in summary.json.
void resolve_target(const std::string& target, std::string& scenario, std::vector<std::string>& sets) {
  std::error_code ec;
  if (!fs::is_directory(target, ec)) {
    scenario = target;
    return;
  }
  const fs::path d(target);
  if (!fs::exists(d / "summary.json") || !fs::exists(d / "host.json"))
    throw InputError(target + ": not a run directory (no summary.json and host.json) and not a scenario file");
  const Json host = read_json_file(d / "host.json");
  if (!host.contains("scenario_path") || !host["scenario_path"].is_string())
    throw InputError(target + "/host.json: names no scenario file (a run of `waitlab replay`, or an older run); "
                              "give the scenario file instead");
  scenario = host["scenario_path"].get<std::string>();
  const Json summary = read_json_file(d / "summary.json");
  if (summary.contains("scenario") && summary["scenario"].contains("variant"))
    throw InputError(target + ": the run of variant '" + summary["scenario"]["variant"].get<std::string>() +
                     "' of a study; give the scenario file (" + scenario + ") or the run of the scenario itself");
  std::vector<std::string> run_sets;
  if (summary.contains("scenario") && summary["scenario"].contains("overrides"))
    for (const auto& o : summary["scenario"]["overrides"]) run_sets.push_back(o.get<std::string>());
  sets.insert(sets.begin(), run_sets.begin(), run_sets.end());
}

// Comma-separated lists, possibly repeated (`--only a,b --only c`). An empty entry ("a,,b",
// "", a trailing comma) is an error naming `what`: it would be dropped, or mean nothing.
std::vector<std::string> split_list(const std::vector<std::string>& items, const std::string& what) {
  std::vector<std::string> out;
  for (const auto& item : items) {
    std::size_t start = 0;
    while (start <= item.size()) {
      std::size_t end = item.find(',', start);
      if (end == std::string::npos) end = item.size();
      if (end == start)
        throw InputError(what + ": '" + item + "' has an empty entry (write NAME,NAME,...)");
      out.push_back(item.substr(start, end - start));
      start = end + 1;
    }
  }
  return out;
}

// The first entry of `items` that an earlier one repeats, or "".
std::string repeated(const std::vector<std::string>& items) {
  std::set<std::string> seen;
  for (const auto& i : items)
    if (!seen.insert(i).second) return i;
  return "";
}

}  // namespace

int whatif_command(const WhatifArgs& args, std::ostream& out) {
  std::string scenario_path;
  std::vector<std::string> sets = args.sets;
  resolve_target(args.target, scenario_path, sets);
  const scenarios::VariantChoice all{"", args.variants};
  const scenarios::Scenario base = scenarios::load_scenario(scenario_path, sets, all);
  std::vector<std::string> names;
  for (const auto& v : base.variants) names.push_back(v.name);
  const std::vector<std::string> only = split_list(args.only, "--only");
  if (const std::string twice = repeated(only); !twice.empty())
    throw InputError("--only: the variant '" + twice + "' is named twice");
  for (const auto& o : only)
    if (std::find(names.begin(), names.end(), o) == names.end())
      throw InputError("--only: no variant '" + o + "' in " + scenario_path + " (variants: " +
                       (names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", "))) + ")");
  if (names.empty())
    throw InputError(scenario_path +
                     ": no variants to run (add a `variants` section, or --variant '{name: ideal, network: ideal}')");
  StudyPlan plan;
  plan.kind = "whatif";
  plan.scenario = base.name;
  plan.dir = args.out_dir.empty() ? (fs::path(base.outputs.dir) / "whatif").string() : args.out_dir;
  const auto add = [&](scenarios::Scenario s, const std::string& name, std::vector<std::string> changes) {
    plan.params.push_back(Json::object());
    plan.changes.push_back(std::move(changes));
    plan.jobs.push_back(study_job(name, std::move(s), (fs::path(plan.dir) / name).string()));
  };
  add(base, "baseline", {});
  // Every variant is loaded (and so checked) before anything runs.
  for (const auto& name : names) {
    if (!only.empty() && std::find(only.begin(), only.end(), name) == only.end()) continue;
    scenarios::Scenario v = scenarios::load_scenario(scenario_path, sets, {name, args.variants});
    std::vector<std::string> changes;
    for (const auto& info : v.variants)
      if (info.name == name) changes = info.changes;
    add(std::move(v), name, changes);
  }
  return run_plan(plan, args, out);
}

int sweep_command(const SweepArgs& args, std::ostream& out) {
  if (args.grid.empty()) throw InputError("sweep: give at least one --grid KEY=V1,V2,...");
  std::vector<std::string> keys;
  std::vector<std::vector<std::string>> values;
  for (const auto& g : args.grid) {
    const auto eq = g.find('=');
    if (eq == std::string::npos || eq == 0)
      throw InputError("--grid " + g + ": expected KEY=V1,V2,... (e.g. perturbations[0].duration=1ms,5ms)");
    const std::string key = g.substr(0, eq);
    if (std::find(keys.begin(), keys.end(), key) != keys.end())
      throw InputError("--grid " + g + ": '" + key + "' is swept twice");
    if (eq + 1 == g.size()) throw InputError("--grid " + g + ": no values");
    std::vector<std::string> v = split_list({g.substr(eq + 1)}, "--grid " + g);
    if (const std::string twice = repeated(v); !twice.empty())
      throw InputError("--grid " + g + ": the value '" + twice + "' is given twice");
    // A --set of the same key would be overridden at every grid point: it would change nothing.
    for (const auto& set : args.sets)
      if (set.substr(0, set.find('=')) == key)
        throw InputError("--set " + set + ": '" + key + "' is swept by --grid " + g +
                         ", which overrides it at every grid point");
    keys.push_back(key);
    values.push_back(std::move(v));
  }
  const scenarios::Scenario base = scenarios::load_scenario(args.scenario, args.sets);
  StudyPlan plan;
  plan.kind = "sweep";
  plan.scenario = base.name;
  plan.param_keys = keys;
  plan.dir = args.out_dir.empty() ? (fs::path(base.outputs.dir) / "sweep").string() : args.out_dir;
  std::size_t total = 1;
  for (const auto& v : values) {
    if (total > 10000 / v.size()) throw InputError("sweep: more than 10000 grid points");
    total *= v.size();
  }
  for (std::size_t i = 0; i < total; ++i) {
    std::vector<std::string> sets = args.sets;
    Json params = Json::object();
    std::size_t rest = i;
    std::vector<std::string> picked(keys.size());
    for (std::size_t k = keys.size(); k-- > 0;) {
      picked[k] = values[k][rest % values[k].size()];
      rest /= values[k].size();
    }
    for (std::size_t k = 0; k < keys.size(); ++k) {
      sets.push_back(keys[k] + "=" + picked[k]);
      params[keys[k]] = picked[k];
    }
    // Every grid point is loaded (and so checked) before anything runs.
    scenarios::Scenario s = scenarios::load_scenario(args.scenario, sets);
    const std::string name = fmt::format("point_{:04}", i);
    plan.params.push_back(params);
    plan.changes.push_back({});
    plan.jobs.push_back(study_job(name, std::move(s), (fs::path(plan.dir) / name).string()));
  }
  return run_plan(plan, args, out);
}

}  // namespace waitlab::app
