// waitlab::analysis — the registry of the trace analyses, and running them.
//
// Promise: analyses() lists every analysis once, in the order they run and appear in
// summary.json, the terminal summary, report.html, `waitlab list` and docs/analyses.md; each is
// its folder's Entry (analysis/output/entry.hpp). select_analyses() reads what users write
// (outputs.analyses, analyze --analyses): names, comma-separated lists, `all` (every analysis
// whose entry is in_all); it adds the
// analyses a chosen one needs and throws std::invalid_argument with a "did you mean" for an
// unknown name. run_analyses() checks the options of the selected analyses against the trace
// (Entry::check, before any work), builds the trace's one Matching, then runs each selected
// analysis after those it needs, keeping each result by name; host seconds per step are kept
// apart (host.json only, never in a deterministic output).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/engine/shard.hpp"
#include "analysis/engine/transport.hpp"
#include "analysis/output/entry.hpp"
#include "analysis/trace/match.hpp"
#include "analysis/trace/trace.hpp"

namespace waitlab::analysis {

const std::vector<const output::Entry*>& analyses();
const output::Entry* find_analysis(std::string_view name);  // nullptr if there is none

std::vector<std::string> select_analyses(const std::vector<std::string>& names);

// The selected analyses run on one trace: their results by name, and what they share.
struct AnalysisRun {
  std::vector<const output::Entry*> ran;  // in registry order
  trace::Matching matching;
  std::vector<std::string> path_names;  // "main/compute/MPI_Recv" per call path id, for every output
  output::Values options;               // by analysis name, as given to run_analyses
  output::Values results;               // by analysis name
  std::uint64_t messages = 0;           // the trace's matched messages (matching.messages on one process)
  double match_seconds = 0;             // host seconds (host.json only)
  std::map<std::string, double> seconds;  // host seconds per analysis that ran

  bool any() const { return !ran.empty(); }
  bool has(std::string_view name) const { return results.has(name); }
  std::vector<std::string> names() const;
  // The context every entry's outputs are made in.
  output::Context context(const trace::Trace& trace) const;
};

// `selected`: analysis names (what they need runs too, whatever the order given; an unknown
// name is std::invalid_argument).
// `options`: by analysis name (e.g. "waitstate" → WaitStateOptions); the rest run with defaults.
AnalysisRun run_analyses(const trace::Trace& trace, const std::vector<std::string>& selected,
                         output::Values options = {});

// The same on the replay engine (issue 32): every process calls it with its shard, which it
// matches (engine::match_shard) unless it is matched already (Shard::matched: the clock
// correction leaves it matched, with the corrected times); each analysis runs its run_sharded after those it needs, then its
// gather. On process 0 the run then holds what run_analyses gives on the whole trace, as far as
// the outputs read it (summary, write, print: byte for byte), with `matching` holding the global
// call paths, collective instances and unmatched counts and `messages` the trace's messages; the
// other processes hold their shards' parts. An analysis that does not run on the engine yet is
// refused (std::invalid_argument naming it) before any work.
AnalysisRun run_analyses_sharded(engine::Shard& shard, engine::Transport& transport,
                                 const std::vector<std::string>& selected, output::Values options = {});

}  // namespace waitlab::analysis
