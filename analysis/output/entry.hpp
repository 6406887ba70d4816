// waitlab::output — what an analysis is to the rest of waitlab: one Entry, defined in the
// analysis's own folder (analysis/<name>/entry.cpp) and listed once in analysis/registry.
//
// Promise: an Entry says everything the commands need to run an analysis and present it —
// its name and description (`waitlab list`, `describe`, docs/analyses.md's list), the analyses
// it needs (run before it, their results in its Context), how it runs (a pure function of the
// trace, its Matching, its options and the results it needs), its summary.json section
// (analyses.<name>), the files it writes in the output directory (and removes when it does not
// run), its lines on the terminal, its report section, key-figure cards and tables, and its
// pictures (drawn by a plot script of the command line, app/plots/<script>.py). Results and
// options travel type-erased (std::any), each of the type its entry names; nothing outside the
// analysis's folder and the command line's caller of it knows that type.
#pragma once

#include <any>
#include <filesystem>
#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/output/html.hpp"
#include "analysis/trace/match.hpp"
#include "analysis/trace/trace.hpp"

namespace waitlab::engine {
struct Shard;
class Transport;
}  // namespace waitlab::engine

namespace waitlab::output {

// Values by analysis name: the results of the analyses that ran, or the options of each.
class Values {
 public:
  template <class T>
  const T* get(std::string_view name) const {
    const auto it = values_.find(name);
    return it == values_.end() ? nullptr : std::any_cast<T>(&it->second);
  }
  template <class T>
  T* get(std::string_view name) {
    const auto it = values_.find(name);
    return it == values_.end() ? nullptr : std::any_cast<T>(&it->second);
  }
  const std::any* find(std::string_view name) const {
    const auto it = values_.find(name);
    return it == values_.end() ? nullptr : &it->second;
  }
  void set(std::string_view name, std::any value) { values_.insert_or_assign(std::string(name), std::move(value)); }
  // The value moved out and its name removed (an empty value if there is none).
  std::any take(std::string_view name) {
    const auto it = values_.find(name);
    if (it == values_.end()) return {};
    std::any value = std::move(it->second);
    values_.erase(it);
    return value;
  }
  bool has(std::string_view name) const { return values_.find(name) != values_.end(); }

 private:
  std::map<std::string, std::any, std::less<>> values_;
};

// What every analysis is given besides its input: the options, by analysis name (an analysis
// without any runs with its defaults), and the results of the analyses that ran before it.
struct Given {
  const Values& options;
  const Values& results;
  // The option of analysis `name`, or `fallback` when none was given (a copy: the fallback
  // is often a temporary).
  template <class T>
  T option(std::string_view name, const T& fallback) const {
    const T* o = options.template get<T>(name);
    return o != nullptr ? *o : fallback;
  }
  // The result of an analysis this one needs (Entry::needs): always there.
  template <class T>
  const T& result(std::string_view name) const {
    return *results.template get<T>(name);
  }
};

// What one run of the analyses gives each of them.
struct Context : Given {
  const trace::Trace& trace;
  const trace::Matching& matching;
  const std::vector<std::string>& path_names;  // "main/compute/MPI_Recv" per call path id
};

// What one process of the replay engine (issue 32; docs/analyses.md, "The replay engine") gives an
// analysis: its shard of the trace, the shard's matching (engine::match_shard), the transport to
// the other processes, and (Given) the options and the shard's results of the analyses it needs.
struct ShardContext : Given {
  const engine::Shard& shard;
  const trace::Matching& matching;
  engine::Transport& transport;
};

// What a report section is made from: summary.json (all of it) and the directory it lies in.
struct ReportContext {
  const Json& summary;
  bool is_run;  // `waitlab run`'s summary, else `waitlab analyze`'s
  const std::filesystem::path& dir;
  const std::vector<Picture>& pictures;  // every picture of the directory
  // The run's or the trace's ranks.
  std::optional<double> ranks() const { return number(is_run ? at(summary, {"ranks"}) : at(summary, {"trace", "ranks"})); }
};

// A picture an analysis draws (DIR/<stem>.png and .svg).
struct PictureSpec {
  const char* stem;
  const char* id;  // the <img> id in report.html
  const char* title;
  const char* caption;
};

struct Entry {
  std::string name;
  std::string description;
  std::vector<std::string> needs;  // analyses it needs (run first; selecting it selects them)
  // Whether `all` selects it: not for an analysis that needs an input only some commands make
  // (footprint: a twin run).
  bool in_all = true;

  // Runs it; returns its result. Throws InputError for an option the trace cannot satisfy.
  std::function<std::any(const Context&)> run;
  // Runs it on the replay engine: every process calls it with its shard (a collective) and gets
  // its shard's result; `run` is this with one process holding every rank. Empty: the analysis
  // does not run on the engine yet.
  std::function<std::any(const ShardContext&)> run_sharded;
  // Makes a shard's result (of run_sharded) what summary, write and print read, on process 0 —
  // the result `run` gives on the whole trace, as far as they read it (a collective). Empty:
  // the shard's result already is.
  std::function<std::any(std::any shard_result, engine::Transport&)> gather;
  // Checks what can be checked before the trace is analysed (options against the trace), so
  // that a bad option is said before any work and before the output directory is made.
  std::function<void(const trace::Trace&, const Values& options)> check;
  // analyses.<name> of summary.json.
  std::function<Json(const Context&, const std::any& result)> summary;
  // Writes its files into `dir` atomically, or removes them when `result` is null (it did not
  // run: an old file would describe another run); returns the paths written.
  std::function<std::vector<std::string>(const std::string& dir, const Context&, const std::any* result)> write;
  // Its lines of the terminal summary.
  std::function<void(const Context&, const std::any& result, std::ostream&)> print;

  // The report: its section (from analyses.<name>, or null when summary.json has none but
  // `shown_without_summary` holds, e.g. pictures left in the directory), its key-figure cards,
  // its tables, the titles of its table columns.
  const char* section_id = nullptr;
  const char* section_title = nullptr;
  std::function<std::string(const Json* section, const ReportContext&)> section_html;
  std::function<bool(const ReportContext&)> shown_without_summary;
  std::function<std::string(const Json& section, const ReportContext&)> cards;
  std::vector<TableSpec> tables;
  std::vector<ColumnLabel> column_labels;

  // Its pictures, drawn by app/plots/<plot_script>.py from the files `plot_input` names.
  const char* plot_script = nullptr;
  const char* plot_input = nullptr;   // e.g. "idlewave.json": without it there is nothing to draw
  const char* not_drawn = nullptr;    // "the idle-wave pictures were not drawn" (then ": why")
  std::vector<PictureSpec> pictures;
};

// Rows of the "top" lists in summary.json and on the terminal.
inline constexpr std::size_t kTopRows = 10;

// DIR/file written atomically when `present`, else an old one removed; appends its path to
// `written` when written (Entry::write's common case).
void write_table(const std::string& dir, const char* file, bool present,
                 const std::function<void(std::ostream&)>& rows, std::vector<std::string>& written);

}  // namespace waitlab::output
