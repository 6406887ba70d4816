// The specs of the trace analyses (analysis/*): names and descriptions only, so that the
// scenario loader can check outputs.analyses and `waitlab list`/`describe` show them. The
// analyses themselves live in analysis/ and know nothing of this registry.
#include <algorithm>
#include <stdexcept>

#include "models/spec.hpp"

namespace waitlab::models {

void register_analyses(Registry& r) {
  r.add(make_spec(SpecKind::Analysis, "waitstate",
                  "Wait states with Scalasca 2.6 semantics: Late Sender (and wrong order), Late Receiver, Wait at "
                  "Barrier, Barrier Completion, Wait at NxN, NxN Completion, Late Broadcast, Early Reduce, Early "
                  "Scan, Wait at Init/Finalize, per pattern × call path × rank (waitstates.csv).",
                  {}));
  r.add(make_spec(SpecKind::Analysis, "delay",
                  "Root-cause delay costs (paper 002, Algorithm 1): short- and long-term costs per kind × call path "
                  "× rank of the delays that caused the wait states, and every wait state classified direct or "
                  "indirect, propagating or terminal (delay.csv). Implies waitstate.",
                  {}));
  r.add(make_spec(SpecKind::Analysis, "critpath",
                  "The critical path (critical_path.csv), its profile and imbalance per call path "
                  "(critical_path_profile.csv), and the performance-impact split. Implies waitstate.",
                  {}));
  r.add(make_spec(SpecKind::Analysis, "minprofile",
                  "The minimum-duration wait-state estimator (paper 000): everything an MPI call lasts beyond the "
                  "minimum of its category (function, log2 message size; local for point-to-point, global for "
                  "collectives) counts as waiting, per call path × pattern × rank, with the variants per_peer, "
                  "p5 and exclude_tested (minprofile.csv, minprofile.json). In `run` it is fed online during the "
                  "simulation with what a PMPI profiler sees; in `analyze` it runs on the trace.",
                  {}));
  r.add(make_spec(SpecKind::Analysis, "idlewave",
                  "Idle waves (paper 003, ALGORITHMS.md §7): idle periods per rank, the idle-period matrix (rank × "
                  "time), one wave per injected delay (or per largest idle period) with its fronts in both "
                  "directions — speed in ranks/s and ranks/iteration, amplitude decay, where they stop — against "
                  "the model σ·d/(T_exec + T_comm), and self-synchronisation behind a slow group "
                  "(idlewave.json, idlewave_fronts.csv, idle_matrix.npy; pictures idlewave_*.png/.svg). Implies "
                  "waitstate.",
                  {}));
  r.add(make_spec(SpecKind::Analysis, "timeresolved",
                  "Time-resolved efficiency (paper 004, ALGORITHMS.md §6): the POP metrics — load balance, "
                  "communication efficiency = serialisation × transfer efficiency, parallel efficiency — per time "
                  "window and cumulative, and for the whole run, against an ideal network (in `run` a re-simulation "
                  "on an ideal network, in `analyze` a Lamport-clock replay of the trace). Windows: N equal, a fixed "
                  "length or adaptive (√P events per rank and window; outputs.windows, analyze --windows). "
                  "(timeresolved.csv, timeresolved.json; picture timeresolved.png/.svg.)",
                  {}));
}

}  // namespace waitlab::models

namespace waitlab::models {

std::vector<std::string> select_analyses(const std::vector<std::string>& names) {
  std::vector<std::string> known;
  for (const auto* spec : Registry::instance().all(SpecKind::Analysis)) known.push_back(spec->name);
  std::vector<char> chosen(known.size(), 0);
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
        std::fill(chosen.begin(), chosen.end(), 1);
        continue;
      }
      const auto it = std::find(known.begin(), known.end(), name);
      if (it == known.end()) {
        const std::string best = did_you_mean(name, known);
        std::string allowed;
        for (const auto& k : known) allowed += k + ", ";
        throw std::invalid_argument("unknown analysis '" + name + "'" +
                                    (best.empty() ? "" : "; did you mean '" + best + "'?") + " (allowed: " + allowed +
                                    "all)");
      }
      chosen[static_cast<std::size_t>(it - known.begin())] = 1;
    }
  }
  // delay, critpath and idlewave are built on the wait states; minprofile and timeresolved are not.
  bool needs_waits = false;
  for (std::size_t i = 0; i < known.size(); ++i)
    needs_waits = needs_waits || (chosen[i] && (known[i] == "delay" || known[i] == "critpath" || known[i] == "idlewave"));
  std::vector<std::string> out;
  for (std::size_t i = 0; i < known.size(); ++i)
    if (chosen[i] || (needs_waits && known[i] == "waitstate")) out.push_back(known[i]);
  return out;
}

}  // namespace waitlab::models
