#include "app/counterfactual.hpp"
#include "analysis/output/json_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>

#include "analysis/trace/atomic_file.hpp"
#include "analysis/trace/csv.hpp"
#include "util/error.hpp"
#include "analysis/trace/trace_io.hpp"
#include "app/jobs.hpp"
#include "app/output_dir.hpp"
#include "models/perturbation.hpp"
#include "scenarios/scenario.hpp"

namespace waitlab::app {

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

std::string last_region(const std::string& call_path) {
  const auto slash = call_path.rfind('/');
  return slash == std::string::npos ? call_path : call_path.substr(slash + 1);
}

struct JobResult {
  double wall = 0;
  double waiting = 0;        // at the points the delay analysis charges: all but Wait at Init/Finalize
  double init_finalize = 0;  // Wait at Init + MPI Initialization Completion + Wait at Finalize
  std::vector<TableRow> delay;    // delay.csv
  std::string delay_path;
  std::vector<TableRow> profile;  // critical_path_profile.csv
  std::string profile_path;
  std::vector<double> imbalance_per_rank;                    // injected imbalance, from trace.wlt
};

JobResult read_job(const fs::path& dir) {
  JobResult r;
  std::ifstream in(dir / "summary.json");
  const Json s = Json::parse(in);
  r.wall = s["wall_time_s"].get<double>();
  const Json& w = s["analyses"]["waitstate"];
  r.init_finalize = w["patterns"]["wait_at_init"]["total_s"].get<double>() +
                    w["patterns"]["init_completion"]["total_s"].get<double>() +
                    w["patterns"]["wait_at_finalize"]["total_s"].get<double>();
  r.waiting = w["total_waiting_s"].get<double>() - r.init_finalize;
  r.delay_path = (dir / "delay.csv").string();
  r.delay = read_table(r.delay_path);
  r.profile_path = (dir / "critical_path_profile.csv").string();
  r.profile = read_table(r.profile_path);
  const trace::Trace t = trace::read_trace((dir / "trace.wlt").string());
  r.imbalance_per_rank.assign(t.locations.size(), 0.0);
  for (std::size_t k = 0; k < t.locations.size(); ++k)
    for (const auto& c : t.locations[k].truth)
      r.imbalance_per_rank[k] += c.injected[static_cast<std::size_t>(trace::Cause::Imbalance)];
  return r;
}

// Σ short + long delay costs of the rows `keep` accepts.
template <class Keep>
double costs(const JobResult& j, Keep keep) {
  double sum = 0;
  for (const auto& row : j.delay) {
    const auto path = row.find("call_path");
    if (path == row.end()) continue;
    if (keep(static_cast<int>(table_number(row, "rank", j.delay_path)), path->second))
      sum += table_number(row, "short_term_s", j.delay_path) + table_number(row, "long_term_s", j.delay_path);
  }
  return sum;
}

// The user regions the workload computes in (every rank's stream, once).
std::vector<std::string> compute_regions(const scenarios::Scenario& s) {
  const scenarios::Run run = scenarios::prepare(s);
  const auto& w = *run.workload;
  std::set<trace::RegionId> ids;
  for (trace::Rank r = 0; r < w.ranks(); ++r) {
    auto stream = w.stream(r);
    models::Action a;
    while (stream->next(a))
      if (a.kind == models::ActionKind::Compute) ids.insert(a.region);
  }
  std::vector<std::string> names;
  for (auto id : ids) names.push_back(w.definitions().regions[id].name);
  return names;
}

std::string safe_name(const std::string& text) {
  std::string n = text;
  for (auto& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') c = '_';
  return n;
}

// A YAML single-quoted scalar: any text, quotes doubled (a line break stays one: YAML folds
// it, so region names with line breaks cannot be rebalanced by name).
std::string yaml_quoted(const std::string& text) {
  std::string q = "'";
  for (char ch : text) {
    if (ch == '\'') q += '\'';
    q += ch;
  }
  return q + "'";
}

struct Cause {
  std::string job;     // the variant's name
  std::string change;  // remove / rebalance
  std::string target;
  trace::Cause cause = trace::Cause::Delay;
  int delayed_rank = -1;   // delay
  std::string region;      // the region it acts in ("" = every region)
};

}  // namespace

namespace {

// One scenario's counterfactual runs: its causes, and the jobs (its baseline, then one per
// cause) from `first_job` on.
struct Plan {
  scenarios::Scenario base;
  std::size_t first_job = 0;
  std::vector<Cause> causes;
};

// The causes of the scenario at `path` (every delay and imbalance removed, every imbalanced
// region rebalanced) and their jobs, appended to `jobs`; each variant is loaded, and so
// checked, before anything runs. `names`: the scenarios' names so far (each once).
Plan plan_scenario(const std::string& path, const CounterfactualArgs& args, std::set<std::string>& names,
                   std::vector<Job>& jobs) {
  Plan p;
  p.base = scenarios::load_scenario(path, args.sets);
  if (!names.insert(p.base.name).second)
    throw InputError(path + ": a second scenario named '" + p.base.name + "'");
  std::vector<std::string> extra;
  std::set<std::string> rebalanced;
  for (std::size_t i = 0; i < p.base.perturbations.size(); ++i) {
    const auto& m = p.base.perturbations[i];
    const auto* entry = models::find_perturbation(m.type);
    if (!entry || entry->cause == trace::Cause::Noise) continue;
    Cause c;
    c.job = fmt::format("cf_remove_{}_{}", i, safe_name(m.type));
    c.change = "remove";
    c.target = fmt::format("perturbations[{}] ({})", i, m.type);
    c.cause = entry->cause;
    if (m.options.has("region")) c.region = m.options.string("region");
    if (c.cause == trace::Cause::Delay) c.delayed_rank = static_cast<int>(m.options.number("rank"));
    extra.push_back(fmt::format("{{name: {}, remove: {}}}", c.job, i));
    p.causes.push_back(c);
    if (c.cause == trace::Cause::Imbalance) {
      if (!c.region.empty())
        rebalanced.insert(c.region);
      else
        for (const auto& r : compute_regions(p.base)) rebalanced.insert(r);
    }
  }
  std::size_t region_index = 0;
  for (const auto& region : rebalanced) {
    Cause c;
    // The index keeps the names unique where two region names look alike as file names.
    c.job = fmt::format("cf_rebalance_{}_{}", region_index++, safe_name(region));
    c.change = "rebalance";
    c.target = region;
    c.cause = trace::Cause::Imbalance;
    c.region = region;
    extra.push_back(fmt::format("{{name: {}, rebalance: {{region: {}, to: mean}}}}", c.job, yaml_quoted(region)));
    p.causes.push_back(c);
  }
  if (p.causes.empty())
    throw InputError(path + ": no delay or imbalance perturbation to remove (noise is not a cause one removes here)");
  const fs::path dir = fs::path(args.out_dir) / p.base.name;
  const auto add = [&](scenarios::Scenario s, const std::string& name) {
    s.outputs.trace = true;  // the ground truth says which ranks an imbalance lengthened
    jobs.push_back(study_job(p.base.name + "/" + name, std::move(s), (dir / name).string()));
  };
  p.first_job = jobs.size();
  add(scenarios::load_scenario(path, args.sets, {"", extra}), "baseline");
  // Every variant is loaded (and so checked) before anything runs.
  for (const auto& c : p.causes) add(scenarios::load_scenario(path, args.sets, {c.job, extra}), c.job);
  return p;
}

// What removing cause `c` saved against the baseline, and what the analyses attributed to it.
CounterfactualRow compare_runs(const Plan& p, const Cause& c, const JobResult& base, const JobResult& var) {
  CounterfactualRow row;
  row.scenario = p.base.name;
  row.change = c.change;
  row.target = c.target;
  row.baseline_runtime_s = base.wall;
  row.runtime_saving_s = base.wall - var.wall;
  row.waiting_saving_s = base.waiting - var.waiting;
  row.finalize_waiting_saving_s = base.init_finalize - var.init_finalize;
  const auto in_region = [&](const std::string& path) { return c.region.empty() || last_region(path) == c.region; };
  std::function<bool(int, const std::string&)> keep;
  if (c.change == "rebalance") {
    keep = [&](int, const std::string& path) { return last_region(path) == c.region; };
    row.critpath_imbalance_s = 0;
    for (const auto& r : base.profile)
      if (r.count("call_path") && last_region(r.at("call_path")) == c.region)
        row.critpath_imbalance_s += table_number(r, "imbalance_s", base.profile_path);
  } else if (c.cause == trace::Cause::Delay) {
    keep = [&](int rank, const std::string& path) { return rank == c.delayed_rank && in_region(path); };
  } else {
    // The ranks this imbalance lengthened: less injected imbalance without it.
    std::vector<char> lengthened(base.imbalance_per_rank.size(), 0);
    for (std::size_t r = 0; r < lengthened.size() && r < var.imbalance_per_rank.size(); ++r)
      lengthened[r] = base.imbalance_per_rank[r] > var.imbalance_per_rank[r] ? 1 : 0;
    keep = [lengthened, in_region](int rank, const std::string& path) {
      return rank >= 0 && static_cast<std::size_t>(rank) < lengthened.size() && lengthened[rank] && in_region(path);
    };
  }
  row.attributed_cost_s = costs(base, keep) - costs(var, keep);
  return row;
}

// counterfactual.csv and counterfactual.json.
std::pair<std::string, Json> tables(const std::vector<CounterfactualRow>& rows) {
  std::string csv =
      "scenario,change,target,baseline_runtime_s,runtime_saving_s,waiting_saving_s,finalize_waiting_saving_s,"
      "attributed_cost_s,attributed_vs_waiting_saving,critpath_imbalance_s,runtime_saving_vs_critpath\n";
  Json j;
  j["schema"] = "waitlab.counterfactual";
  j["schema_version"] = 2;  // 2: waiting_saving_s without MPI_Init/Finalize; finalize_waiting_saving_s
  Json arr = Json::array();
  const auto ratio = [](double a, double b) { return b != 0 ? a / b : 0.0; };
  for (const auto& r : rows) {
    const bool predicted = r.critpath_imbalance_s >= 0;
    csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{}\n", trace::csv_field(r.scenario), r.change,
                       trace::csv_field(r.target), r.baseline_runtime_s, r.runtime_saving_s, r.waiting_saving_s,
                       r.finalize_waiting_saving_s, r.attributed_cost_s, ratio(r.attributed_cost_s, r.waiting_saving_s),
                       predicted ? fmt::format("{}", r.critpath_imbalance_s) : "",
                       predicted ? fmt::format("{}", ratio(r.runtime_saving_s, r.critpath_imbalance_s)) : "");
    arr.push_back({{"scenario", r.scenario},
                   {"change", r.change},
                   {"target", r.target},
                   {"baseline_runtime_s", r.baseline_runtime_s},
                   {"runtime_saving_s", r.runtime_saving_s},
                   {"waiting_saving_s", r.waiting_saving_s},
                   {"finalize_waiting_saving_s", r.finalize_waiting_saving_s},
                   {"attributed_cost_s", r.attributed_cost_s},
                   {"critpath_imbalance_s", predicted ? Json(r.critpath_imbalance_s) : Json(nullptr)}});
  }
  j["rows"] = arr;
  return {csv, j};
}

void print_rows(const std::vector<CounterfactualRow>& rows, std::ostream& out) {
  out << fmt::format("\n{:<22} {:<34} {:>13} {:>13} {:>13} {:>13}\n", "scenario", "cause", "runtime saved",
                     "waiting saved", "attributed", "crit. imb.");
  for (const auto& r : rows)
    out << fmt::format("{:<22} {:<34} {:>13.6g} {:>13.6g} {:>13.6g} {:>13}\n", r.scenario, r.change + " " + r.target,
                       r.runtime_saving_s, r.waiting_saving_s, r.attributed_cost_s,
                       r.critpath_imbalance_s >= 0 ? fmt::format("{:.6g}", r.critpath_imbalance_s) : "-");
  out << "(seconds; waiting (but at MPI_Init/MPI_Finalize, which no delay cost covers) and attributed delay "
         "costs summed over ranks; crit. imb. = the critical-path "
         "imbalance indicator's prediction for rebalancing)\n";
}

}  // namespace

std::vector<CounterfactualRow> counterfactual(const CounterfactualArgs& args, std::ostream& out) {
  if (args.scenarios.empty()) throw InputError("validate --counterfactual: give at least one scenario");
  std::vector<Job> jobs;
  std::vector<Plan> plans;
  std::set<std::string> names;
  for (const auto& path : args.scenarios) {
    plans.push_back(plan_scenario(path, args, names, jobs));
  }

  out << fmt::format("counterfactual: {} runs into {}, {} at a time\n", jobs.size(), args.out_dir,
                     std::max(1, args.jobs));
  // The run directories and the tables are prepared aside and put in place together when all
  // of them succeeded (app/output_dir.hpp).
  OutputDir staged(args.out_dir, inputs_of(jobs));
  for (auto& job : jobs) {
    job.shown_dir = job.dir;
    job.dir = (fs::path(staged.path()) / fs::path(job.dir).lexically_relative(args.out_dir)).string();
  }
  const auto outcomes = run_jobs(jobs, args.jobs, out);
  for (std::size_t k = 0; k < outcomes.size(); ++k)
    if (outcomes[k].exit_code == 2) throw InputError(jobs[k].name + ": " + outcomes[k].error);
  for (std::size_t k = 0; k < outcomes.size(); ++k)
    if (outcomes[k].exit_code != 0) throw std::runtime_error(jobs[k].name + ": " + outcomes[k].error);

  std::vector<CounterfactualRow> rows;
  for (const auto& p : plans) {
    const JobResult base = read_job(jobs[p.first_job].dir);
    for (std::size_t k = 0; k < p.causes.size(); ++k) {
      const Cause& c = p.causes[k];
      const JobResult var = read_job(jobs[p.first_job + 1 + k].dir);
      rows.push_back(compare_runs(p, c, base, var));
    }
  }

  const auto [csv, j] = tables(rows);
  try {
    trace::write_file_atomic((fs::path(staged.path()) / "counterfactual.csv").string(), csv);
    trace::write_file_atomic((fs::path(staged.path()) / "counterfactual.json").string(), output::json_text(j) + "\n");
    staged.commit();
  } catch (...) {
    staged.rethrow_final();
  }
  const std::string csv_path = (fs::path(args.out_dir) / "counterfactual.csv").string();
  const std::string json_path = (fs::path(args.out_dir) / "counterfactual.json").string();

  print_rows(rows, out);
  out << "wrote " << csv_path << "\nwrote " << json_path << "\n";
  return rows;
}

}  // namespace waitlab::app
