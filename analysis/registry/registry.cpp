#include "analysis/registry/registry.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "analysis/engine/shard_matching.hpp"
#include "util/memory.hpp"
#include "util/text.hpp"

namespace waitlab::analysis {

// The analyses, in the order they run and are shown. Adding one: its folder analysis/<name>/
// (the analysis, and an entry.cpp defining <name>_entry(); docs/architecture.md) and one line
// here, after the analyses it needs.
#define WAITLAB_ANALYSES(X) \
  X(waitstate)              \
  X(delay)                  \
  X(critpath)               \
  X(minprofile)             \
  X(idlewave)               \
  X(timeresolved)           \
  X(footprint)              \
  /* one line per analysis, after those it needs */

#define WAITLAB_DECLARE_ENTRY(name) const output::Entry& name##_entry();
WAITLAB_ANALYSES(WAITLAB_DECLARE_ENTRY)
#undef WAITLAB_DECLARE_ENTRY

const std::vector<const output::Entry*>& analyses() {
#define WAITLAB_LIST_ENTRY(name) &name##_entry(),
  static const std::vector<const output::Entry*> all = {WAITLAB_ANALYSES(WAITLAB_LIST_ENTRY)};
#undef WAITLAB_LIST_ENTRY
  return all;
}

const output::Entry* find_analysis(std::string_view name) {
  for (const auto* e : analyses())
    if (e->name == name) return e;
  return nullptr;
}

namespace {

// Marks `e` and, first, what it needs.
void choose(const output::Entry& e, std::vector<std::string>& chosen) {
  if (std::find(chosen.begin(), chosen.end(), e.name) != chosen.end()) return;
  for (const auto& need : e.needs) choose(*find_analysis(need), chosen);
  chosen.push_back(e.name);
}

}  // namespace

std::vector<std::string> select_analyses(const std::vector<std::string>& names) {
  std::vector<std::string> known;
  for (const auto* e : analyses()) known.push_back(e->name);
  std::vector<std::string> chosen;
  for (const auto& item : names) {
    std::size_t start = 0;
    while (start <= item.size()) {
      std::size_t end = item.find(',', start);
      if (end == std::string::npos) end = item.size();
      std::string name = item.substr(start, end - start);
      name.erase(0, name.find_first_not_of(" \t"));
      name.erase(name.find_last_not_of(" \t") + 1);
      start = end + 1;
      if (name.empty())
        throw std::invalid_argument("'" + item + "' has an empty analysis name (write e.g. waitstate,delay; [] for none)");
      if (name == "all") {
        for (const auto* e : analyses())
          if (e->in_all) choose(*e, chosen);
        continue;
      }
      const auto* entry = find_analysis(name);
      if (entry == nullptr) {
        const std::string best = text::closest_name(name, known);
        std::string allowed;
        for (const auto& k : known) allowed += k + ", ";
        throw std::invalid_argument("unknown analysis '" + name + "'" +
                                    (best.empty() ? "" : "; did you mean '" + best + "'?") + " (allowed: " + allowed +
                                    "all)");
      }
      choose(*entry, chosen);
    }
  }
  std::vector<std::string> out;  // in registry order
  for (const auto& k : known)
    if (std::find(chosen.begin(), chosen.end(), k) != chosen.end()) out.push_back(k);
  return out;
}

std::vector<std::string> AnalysisRun::names() const {
  std::vector<std::string> n;
  for (const auto* e : ran) n.push_back(e->name);
  return n;
}

output::Context AnalysisRun::context(const trace::Trace& trace) const {
  return output::Context{{options, results}, trace, matching, path_names};
}

namespace {

// The run's analyses: the selected and what they need, in registry order.
std::vector<const output::Entry*> chosen_entries(const std::vector<std::string>& selected) {
  std::vector<std::string> chosen;
  for (const auto& name : selected) {
    const auto* e = find_analysis(name);
    if (e == nullptr) throw std::invalid_argument("unknown analysis '" + name + "'");
    choose(*e, chosen);
  }
  std::vector<const output::Entry*> ran;
  for (const auto* e : analyses())
    if (std::find(chosen.begin(), chosen.end(), e->name) != chosen.end()) ran.push_back(e);
  return ran;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void name_paths(AnalysisRun& r, const trace::Definitions& defs) {
  r.path_names.resize(r.matching.paths.size());
  for (std::size_t i = 0; i < r.path_names.size(); ++i)
    r.path_names[i] = r.matching.paths.name(static_cast<trace::CallPathId>(i), defs);
}

}  // namespace

AnalysisRun run_analyses(const trace::Trace& trace, const std::vector<std::string>& selected, output::Values options) {
  AnalysisRun r;
  r.options = std::move(options);
  r.ran = chosen_entries(selected);
  if (r.ran.empty()) return r;
  for (const auto* e : r.ran)
    if (e->check) e->check(trace, r.options);
  auto t0 = std::chrono::steady_clock::now();
  r.matching = trace::Matching::build(trace);
  r.messages = r.matching.messages.size();
  name_paths(r, trace.defs);
  r.match_seconds = seconds_since(t0);
  for (const auto* e : r.ran) {
    t0 = std::chrono::steady_clock::now();
    std::any result = e->run(r.context(trace));
    r.seconds[e->name] = seconds_since(t0);
    r.results.set(e->name, std::move(result));
  }
  return r;
}

AnalysisRun run_analyses_sharded(engine::Shard& shard, engine::Transport& transport,
                                 const std::vector<std::string>& selected, output::Values options) {
  AnalysisRun r;
  r.options = std::move(options);
  r.ran = chosen_entries(selected);
  for (const auto* e : r.ran)
    if (!e->run_sharded) throw std::invalid_argument("the " + e->name + " analysis does not run on the replay engine yet");
  if (r.ran.empty()) return r;
  auto t0 = std::chrono::steady_clock::now();
  if (!shard.matched) engine::match_shard(shard, transport);  // the clock correction matched it already
  std::uint64_t received = 0;  // each message counted once, by its receiver's process
  for (const trace::Message& m : shard.matching.messages) received += shard.owned.holds(m.receiver) ? 1 : 0;
  r.messages = transport.sum(received);
  r.match_seconds = seconds_since(t0);
  output::Values mine;  // the shard's results, which the analyses that need them read
  for (const auto* e : r.ran) {
    t0 = std::chrono::steady_clock::now();
    mine.set(e->name, e->run_sharded(output::ShardContext{{r.options, mine}, shard, shard.matching, transport}));
    r.seconds[e->name] = seconds_since(t0);
    // What the analysis freed goes back to the system before the next one runs: its temporaries
    // would stay in the process's peak beside the next one's (on process 0, beside every rank's
    // idle periods).
    util::release_freed_memory();
  }
  for (const auto* e : r.ran) {
    std::any result = mine.take(e->name);  // moved: no analysis reads the shard's results any more
    r.results.set(e->name, e->gather ? e->gather(std::move(result), transport) : std::move(result));
  }
  r.matching.paths = shard.matching.paths;
  r.matching.collectives = shard.matching.collectives;
  r.matching.unmatched = shard.matching.unmatched;
  name_paths(r, shard.defs);
  return r;
}

}  // namespace waitlab::analysis
