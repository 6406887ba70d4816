#include "analysis/timeresolved/cut.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "analysis/engine/bytes.hpp"
#include "analysis/engine/serial_transport.hpp"
#include "analysis/engine/shard.hpp"
#include "analysis/engine/transport.hpp"
#include "util/error.hpp"
#include "util/units.hpp"

namespace waitlab::analysis {

using trace::Time;

namespace {

constexpr Time kInf = std::numeric_limits<Time>::infinity();

CutSpec spec_of(CutKind kind, const std::string& option, const std::string& text) {
  CutSpec s;
  s.kind = kind;
  s.option = option;
  s.text = text;
  return s;
}

// Pieces as the engine's bytes carry them: start, end, start, end, ...
std::vector<Time> flat(const std::vector<Piece>& p) {
  std::vector<Time> v;
  for (const auto& [a, b] : p) v.push_back(a), v.push_back(b);
  return v;
}
std::vector<Piece> pieces_of(const std::vector<Time>& v) {
  std::vector<Piece> p;
  for (std::size_t i = 0; i + 1 < v.size(); i += 2) p.emplace_back(v[i], v[i + 1]);
  return p;
}

std::string quoted(const CutSpec& s) {
  return s.option + " " + s.text;
}

bool parse_index(const std::string& s, std::uint64_t& n) {
  if (s.empty() || s.size() > 18 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return false;
  n = std::stoull(s);
  return true;
}

Time parse_side(const std::string& side, Time open, const CutSpec& s) {
  if (side.empty()) return open;
  try {
    return units::parse_duration(side);
  } catch (const std::exception& e) {
    throw InputError(quoted(s) + ": '" + side + "' is not a time (" + e.what() +
                     "; write a duration with its unit, such as 1.5s, 20ms or 4943782149ns)");
  }
}

}  // namespace

std::string_view cut_kind_name(CutKind k) {
  switch (k) {
    case CutKind::None: return "none";
    case CutKind::TimeRange: return "time_range";
    case CutKind::Region: return "region";
    case CutKind::Iterations: return "iterations";
  }
  return "?";
}

CutSpec parse_time_range(const std::string& text, const std::string& option) {
  CutSpec s = spec_of(CutKind::TimeRange, option, text);
  const auto colon = text.find(':');
  if (colon == std::string::npos || text.find(':', colon + 1) != std::string::npos)
    throw InputError(quoted(s) + ": expected FROM:TO, two times with their unit (1.5s:2s; a side left empty is open: "
                     "2s: is from 2 s to the end)");
  s.from = parse_side(text.substr(0, colon), -kInf, s);
  s.to = parse_side(text.substr(colon + 1), kInf, s);
  if (!(s.to > s.from)) throw InputError(quoted(s) + ": the range ends before it starts");
  return s;
}

CutSpec parse_region(const std::string& text, const std::string& option) {
  CutSpec s = spec_of(CutKind::Region, option, text);
  if (text.empty()) throw InputError(option + ": give the name of a region (as the trace names it: solve, MPI_Allreduce)");
  s.region = text;
  return s;
}

CutSpec parse_iterations(const std::string& text, const std::string& option) {
  CutSpec s = spec_of(CutKind::Iterations, option, text);
  const auto colon = text.rfind(':');
  std::string range = text;
  if (colon != std::string::npos) {
    s.region = text.substr(0, colon);
    range = text.substr(colon + 1);
  }
  const auto dash = range.find('-');
  const bool ok = dash == std::string::npos ? parse_index(range, s.first) && parse_index(range, s.last)
                                            : parse_index(range.substr(0, dash), s.first) &&
                                                  parse_index(range.substr(dash + 1), s.last);
  if (!ok || (colon != std::string::npos && s.region.empty()))
    throw InputError(quoted(s) +
                     ": expected REGION:FIRST-LAST (the FIRST-th to the LAST-th instance of a region that marks an "
                     "iteration, from 1) or FIRST-LAST (a simulated workload's iterations, from 0)");
  if (s.first > s.last) throw InputError(quoted(s) + ": the first iteration comes after the last");
  if (!s.region.empty() && s.first == 0)
    throw InputError(quoted(s) + ": a region's instances count from 1");
  return s;
}

CutSpec parse_cut(const std::string& time_range, const std::string& region, const std::string& iterations) {
  const int given = !time_range.empty() + !region.empty() + !iterations.empty();
  if (given > 1) throw InputError("--time-range, --region and --iterations each cut the run: give one of them");
  if (!time_range.empty()) return parse_time_range(time_range);
  if (!region.empty()) return parse_region(region);
  if (!iterations.empty()) return parse_iterations(iterations);
  return {};
}

double cut_length(const std::vector<Piece>& pieces) {
  double l = 0;
  for (const auto& [a, b] : pieces) l += b - a;
  return l;
}

std::vector<Piece> clip_cut(const Cut& cut, Time t0, Time t1) {
  std::vector<Piece> out;
  for (const auto& [a, b] : cut.pieces) {
    const Time x = std::max(a, t0), y = std::min(b, t1);
    if (y > x) out.emplace_back(x, y);
  }
  if (out.empty())  // the span is every process's: all throw
    throw AgreedInputError(fmt::format("{}: the cut leaves nothing of the run, which spans {:.12g} s to {:.12g} s",
                                 quoted(cut.spec), t0, t1));
  return out;
}

namespace {

// What a region's name stands for: the regions of that name, or else an OpenMP construct by its
// kind's name ("parallel region", "parallel function", "task": Location::omp).
struct RegionMatch {
  std::vector<trace::RegionId> ids;
  bool omp = false;
  trace::OmpKind kind = trace::OmpKind::ParallelRegion;
  bool any() const { return omp || !ids.empty(); }
};

RegionMatch regions_named(const trace::Definitions& defs, const std::string& name) {
  RegionMatch m;
  for (std::size_t i = 0; i < defs.regions.size(); ++i)
    if (defs.regions[i].name == name) m.ids.push_back(static_cast<trace::RegionId>(i));
  for (std::uint8_t k = 0; m.ids.empty() && k < static_cast<std::uint8_t>(trace::OmpKind::Count_); ++k)
    if (trace::omp_kind_name(static_cast<trace::OmpKind>(k)) == name) {
      m.omp = true;
      m.kind = static_cast<trace::OmpKind>(k);
    }
  return m;
}

// A location's outermost instances of the region, in order.
std::vector<Piece> instances_of(const trace::Location& l, const RegionMatch& match) {
  std::vector<Piece> out;
  if (match.omp) {  // ordered by begin: one inside the one before is not outermost
    for (const trace::OmpInterval& o : l.omp)
      if (o.kind == match.kind && (out.empty() || o.begin >= out.back().second)) out.emplace_back(o.begin, o.end);
    return out;
  }
  const auto& ids = match.ids;
  int depth = 0;
  Time start = 0;
  for (const auto& e : l.events) {
    if ((e.kind != trace::EventKind::Enter && e.kind != trace::EventKind::Leave) ||
        std::find(ids.begin(), ids.end(), e.ref) == ids.end())
      continue;
    if (e.kind == trace::EventKind::Enter) {
      if (depth++ == 0) start = e.time;
    } else if (depth > 0 && --depth == 0) {
      out.emplace_back(start, e.time);
    }
  }
  if (depth > 0) out.emplace_back(start, l.events.back().time);
  return out;
}

// Ordered, disjoint: pieces that overlap or touch are one.
std::vector<Piece> merged(std::vector<Piece> p) {
  std::sort(p.begin(), p.end());
  std::vector<Piece> m;
  for (const auto& x : p) {
    if (x.second <= x.first) continue;
    if (!m.empty() && x.first <= m.back().second)
      m.back().second = std::max(m.back().second, x.second);
    else
      m.push_back(x);
  }
  return m;
}

// Every owned rank and thread.
template <typename F>
void for_each_location(const engine::Shard& shard, F&& f) {
  for (const auto* list : {&shard.locations, &shard.threads})
    for (const trace::Location& l : *list) f(l);
}

std::string region_names(const trace::Definitions& defs) {
  std::vector<std::string> names;
  for (const auto& r : defs.regions)
    if (!r.is_mpi()) names.push_back(r.name);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  const std::string omp = "; or an OpenMP construct: parallel region, parallel function, task";
  if (names.empty()) return "it has only MPI regions" + omp;
  if (names.size() > 12) names.resize(12), names.push_back("…");
  return "its user regions: " + fmt::format("{}", fmt::join(names, ", ")) + omp;
}

// Process 0's verdict on every process: an error to throw, or the pieces and counts.
Cut agreed(const CutSpec& spec, std::string error, Cut cut, engine::Transport& transport) {
  engine::ByteWriter w;
  w.put(std::vector<char>(error.begin(), error.end())).put(flat(cut.pieces)).put(cut.instances).put(cut.locations);
  const engine::Bytes b = transport.broadcast(w.bytes());
  engine::ByteReader in(b);
  const auto e = in.get_vector<char>();
  if (!e.empty()) throw AgreedInputError(std::string(e.begin(), e.end()));
  Cut out;
  out.spec = spec;
  out.pieces = pieces_of(in.get_vector<Time>());
  out.instances = in.get<std::uint64_t>();
  out.locations = in.get<std::uint64_t>();
  return out;
}

Cut region_cut(const engine::Shard& shard, const CutSpec& spec, const RegionMatch& ids,
               engine::Transport& transport) {
  std::vector<Piece> mine;
  std::uint64_t instances = 0, locations = 0;
  for_each_location(shard, [&](const trace::Location& l) {
    const auto p = instances_of(l, ids);
    instances += p.size();
    locations += p.empty() ? 0 : 1;
    mine.insert(mine.end(), p.begin(), p.end());
  });
  Cut cut;
  cut.instances = transport.sum(instances);
  cut.locations = transport.sum(locations);
  std::vector<Piece> all;
  for (const engine::Bytes& part : transport.gather(engine::encode(flat(merged(std::move(mine)))))) {
    const auto some = pieces_of(engine::decode<std::vector<Time>>(part));
    all.insert(all.end(), some.begin(), some.end());
  }
  cut.pieces = merged(std::move(all));
  std::string error;
  if (cut.instances == 0) error = quoted(spec) + ": no rank or thread enters " + spec.region;
  return agreed(spec, error, std::move(cut), transport);
}

Cut iteration_cut(const engine::Shard& shard, const CutSpec& spec, const RegionMatch& ids,
                  engine::Transport& transport) {
  Time from = kInf, to = -kInf;
  std::uint64_t most = 0, locations = 0;
  for_each_location(shard, [&](const trace::Location& l) {
    const auto p = instances_of(l, ids);
    most = std::max<std::uint64_t>(most, p.size());
    if (p.size() < spec.last) return;
    ++locations;
    from = std::min(from, p[spec.first - 1].first);
    to = std::max(to, p[spec.last - 1].second);
  });
  Cut cut;
  cut.locations = transport.sum(locations);
  cut.instances = cut.locations * (spec.last - spec.first + 1);
  from = transport.min(from);
  to = transport.max(to);
  most = static_cast<std::uint64_t>(transport.max(static_cast<double>(most)));
  std::string error;
  if (cut.locations == 0)
    error = fmt::format("{}: no rank or thread has {} instances of {} (at most {})", quoted(spec), spec.last,
                        spec.region, most);
  else
    cut.pieces = merged({{from, to}});
  return agreed(spec, error, std::move(cut), transport);
}

// The simulated workload's iterations first..last, from the ground truth of its computations.
Cut truth_iteration_cut(const engine::Shard& shard, const CutSpec& spec, engine::Transport& transport) {
  Time from = kInf, to = -kInf;
  double highest = -1;
  std::uint64_t locations = 0;
  for (const trace::Location& l : shard.locations) {
    bool here = false;
    for (const trace::ComputeTruth& c : l.truth) {
      highest = std::max(highest, static_cast<double>(c.iteration));
      if (c.iteration < 0 || static_cast<std::uint64_t>(c.iteration) < spec.first ||
          static_cast<std::uint64_t>(c.iteration) > spec.last)
        continue;
      from = std::min(from, c.start);
      to = std::max(to, c.end);
      here = true;
    }
    locations += here ? 1 : 0;
  }
  Cut cut;
  cut.locations = transport.sum(locations);
  from = transport.min(from);
  to = transport.max(to);
  highest = transport.max(highest);
  std::string error;
  if (!shard.has_truth)
    error = quoted(spec) + ": the trace has no ground truth of a simulated workload's iterations (a measured trace: "
                           "give the region that marks an iteration, REGION:FIRST-LAST)";
  else if (cut.locations == 0 || !(to > from) || highest < static_cast<double>(spec.last))
    error = highest < 0 ? quoted(spec) + ": the workload's computations carry no iteration numbers"
                        : fmt::format("{}: the workload has iterations 0..{}", quoted(spec), highest);
  else
    cut.pieces = {{from, to}};
  return agreed(spec, error, std::move(cut), transport);
}

}  // namespace

Cut resolve_cut(const engine::Shard& shard, const CutSpec& spec, engine::Transport& transport) {
  Cut cut;
  cut.spec = spec;
  switch (spec.kind) {
    case CutKind::None: return cut;
    case CutKind::TimeRange: cut.pieces = {{spec.from, spec.to}}; return cut;
    case CutKind::Region:
    case CutKind::Iterations: break;
  }
  if (spec.kind == CutKind::Iterations && spec.region.empty()) return truth_iteration_cut(shard, spec, transport);
  const RegionMatch ids = regions_named(shard.defs, spec.region);
  if (!ids.any())  // the definitions are every process's: all throw
    throw AgreedInputError(quoted(spec) + ": the trace has no region named " + spec.region + "; " + region_names(shard.defs));
  return spec.kind == CutKind::Region ? region_cut(shard, spec, ids, transport)
                                      : iteration_cut(shard, spec, ids, transport);
}

Cut resolve_cut(const trace::Trace& trace, const CutSpec& spec) {
  const engine::Shard shard = engine::Shard::whole(trace);
  engine::SerialTransport transport;
  return resolve_cut(shard, spec, transport);
}

std::string cut_text(const Cut& cut) {
  if (!cut.any()) return "the whole run";
  const char* kind = cut.spec.kind == CutKind::TimeRange ? "time range" : cut.spec.kind == CutKind::Region ? "region" : "iterations";
  const std::string what = std::string(kind) + " " + cut.spec.text;
  const double length = cut_length(cut.pieces);
  std::string s = what + ": ";
  if (cut.spec.kind == CutKind::Region || (cut.spec.kind == CutKind::Iterations && !cut.spec.region.empty()))
    s += fmt::format("{} instance{} on {} {}, ", cut.instances, cut.instances == 1 ? "" : "s", cut.locations,
                     cut.locations == 1 ? "rank or thread" : "ranks and threads");
  else if (cut.spec.kind == CutKind::Iterations)
    s += fmt::format("{} ranks, ", cut.locations);
  s += fmt::format("{} piece{} from {:.12g} s to {:.12g} s, {:.12g} s in all", cut.pieces.size(),
                   cut.pieces.size() == 1 ? "" : "s", cut.pieces.empty() ? 0.0 : cut.pieces.front().first,
                   cut.pieces.empty() ? 0.0 : cut.pieces.back().second, length);
  return s;
}

}  // namespace waitlab::analysis
