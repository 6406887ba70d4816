#include "analysis/minprofile/estimator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <nlohmann/json.hpp>
#include <numeric>
#include <tuple>

#include "analysis/trace/csv.hpp"

namespace waitlab::minprofile {

namespace {

constexpr std::array<std::string_view, kPatternCount> kPatternNames = {
    "none", "late_sender", "late_receiver", "wait_at_nxn", "wait_at_barrier", "late_broadcast", "early_reduce",
    "early_scan"};

constexpr double kInf = std::numeric_limits<double>::infinity();

// Buckets per octave of the histograms.
constexpr double kBucketsPerOctave = 32;

// Waiting of `n` calls lasting `sum` in total against minimum `m`; 0 when the minimum is unknown.
double excess(double sum, std::uint64_t n, double m) {
  if (n == 0 || !std::isfinite(m)) return 0;
  return sum - static_cast<double>(n) * m;
}

std::string num(double v) { return fmt::format("{}", v); }


}  // namespace

std::string_view pattern_name(Pattern p) {
  const auto i = static_cast<std::size_t>(p);
  return i < kPatternCount ? kPatternNames[i] : std::string_view("unknown");
}

Pattern pattern_from_name(std::string_view name) {
  for (std::size_t i = 0; i < kPatternCount; ++i)
    if (kPatternNames[i] == name) return static_cast<Pattern>(i);
  return Pattern::Count_;
}

bool is_global(Pattern p) {
  return p == Pattern::WaitAtNxN || p == Pattern::WaitAtBarrier || p == Pattern::LateBroadcast ||
         p == Pattern::EarlyReduce || p == Pattern::EarlyScan;
}

std::string variant_name(Variant v, double percentile) {
  switch (v) {
    case Variant::Paper:
      return "paper";
    case Variant::PerPeer:
      return "per_peer";
    case Variant::Percentile:
      return fmt::format("p{}", percentile);
    case Variant::ExcludeTested:
      return "exclude_tested";
    default:
      return "unknown";
  }
}

int size_class(std::uint64_t bytes) { return bytes == 0 ? 0 : static_cast<int>(std::bit_width(bytes)); }

// ---------------------------------------------------------------------------------------
// Histogram

std::int32_t Histogram::index_of(double d) {
  if (!(d > 0)) return std::numeric_limits<std::int32_t>::min();
  return static_cast<std::int32_t>(std::floor(std::log2(d) * kBucketsPerOctave));
}

void Histogram::add(double d) {
  const std::int32_t i = index_of(d);
  auto it = std::lower_bound(b_.begin(), b_.end(), i, [](const Bucket& b, std::int32_t k) { return b.index < k; });
  if (it == b_.end() || it->index != i)
    it = b_.insert(it, Bucket{i, 0, kInf});
  ++it->count;
  it->min = std::min(it->min, d);
  ++n_;
}

void Histogram::merge(const Histogram& other) {
  for (const auto& o : other.b_) {
    auto it = std::lower_bound(b_.begin(), b_.end(), o.index,
                               [](const Bucket& b, std::int32_t k) { return b.index < k; });
    if (it == b_.end() || it->index != o.index) it = b_.insert(it, Bucket{o.index, 0, kInf});
    it->count += o.count;
    it->min = std::min(it->min, o.min);
  }
  n_ += other.n_;
}

Histogram Histogram::of_buckets(std::vector<Bucket> buckets) {
  Histogram h;
  for (const Bucket& b : buckets) h.n_ += b.count;
  h.b_ = std::move(buckets);
  return h;
}

double Histogram::quantile(double q) const {
  if (n_ == 0) return kInf;
  const auto want = std::max<std::uint64_t>(
      1, static_cast<std::uint64_t>(std::ceil(q / 100.0 * static_cast<double>(n_) - 1e-9)));
  std::uint64_t seen = 0;
  for (const auto& b : b_) {
    seen += b.count;
    if (seen >= want) return b.min;
  }
  return b_.back().min;
}

// ---------------------------------------------------------------------------------------
// RankProfile

RankProfile::RankProfile(double percentile) : q_(percentile) {}

void RankProfile::add(const CallRecord& c) {
  if (c.pattern == Pattern::None || c.pattern >= Pattern::Count_ || c.function >= kMaxFunctions) return;
  const auto cls = static_cast<std::uint8_t>(size_class(c.bytes));
  const std::uint64_t peers = is_global(c.pattern) ? 0 : c.peers;

  // Accumulator: the same call path repeats, so the last one used is checked first.
  Acc* acc = nullptr;
  const auto same = [&](const Acc& a) {
    return a.path == c.path && a.function == c.function && a.pattern == c.pattern && a.cls == cls && a.peers == peers;
  };
  if (last_acc_ < acc_.size() && same(acc_[last_acc_])) {
    acc = &acc_[last_acc_];
  } else {
    const auto it = std::find_if(acc_.begin(), acc_.end(), same);
    if (it == acc_.end()) {
      acc_.push_back(Acc{c.path, c.function, c.pattern, cls, peers});
      acc = &acc_.back();
    } else {
      acc = &*it;
    }
    last_acc_ = static_cast<std::size_t>(acc - acc_.data());
  }
  ++acc->n;
  acc->sum += c.duration;
  if (!c.tested_complete) {
    ++acc->n_untested;
    acc->sum_untested += c.duration;
  }

  auto m = std::find_if(mins_.begin(), mins_.end(), [&](const Min& x) {
    return x.function == c.function && x.pattern == c.pattern && x.cls == cls;
  });
  if (m == mins_.end()) {
    mins_.push_back(Min{c.function, c.pattern, cls, kInf, kInf, {}});
    m = mins_.end() - 1;
  }
  m->min = std::min(m->min, c.duration);
  if (!c.tested_complete) m->min_untested = std::min(m->min_untested, c.duration);
  m->hist.add(c.duration);

  if (!is_global(c.pattern)) {
    auto pm = std::find_if(peer_mins_.begin(), peer_mins_.end(), [&](const PeerMin& x) {
      return x.function == c.function && x.pattern == c.pattern && x.cls == cls && x.peers == peers;
    });
    if (pm == peer_mins_.end()) {
      peer_mins_.push_back(PeerMin{c.function, c.pattern, cls, peers, kInf});
      pm = peer_mins_.end() - 1;
    }
    pm->min = std::min(pm->min, c.duration);
  }
}

const RankProfile::Min* RankProfile::find_min(Pattern p, std::uint8_t f, std::uint8_t cls) const {
  const auto it = std::find_if(mins_.begin(), mins_.end(),
                               [&](const Min& x) { return x.function == f && x.pattern == p && x.cls == cls; });
  return it == mins_.end() ? nullptr : &*it;
}

void RankProfile::contribute_minima(GlobalMinima& g) const {
  for (const auto& m : mins_) {
    if (!is_global(m.pattern)) continue;
    const auto s = GlobalMinima::slot(m.function, m.cls);
    g.min_all[s] = std::min(g.min_all[s], m.min);
    g.min_untested[s] = std::min(g.min_untested[s], m.min_untested);
  }
}

void RankProfile::contribute_histograms(std::vector<Histogram>& hist) const {
  for (const auto& m : mins_)
    if (is_global(m.pattern)) hist[GlobalMinima::slot(m.function, m.cls)].merge(m.hist);
}

std::vector<RankRow> RankProfile::rows(const GlobalMinima& g) const {
  std::vector<RankRow> out;
  for (const auto& a : acc_) {
    std::array<double, kVariantCount> m{};
    if (is_global(a.pattern)) {
      const auto s = GlobalMinima::slot(a.function, a.cls);
      m[static_cast<std::size_t>(Variant::Paper)] = g.min_all[s];
      m[static_cast<std::size_t>(Variant::PerPeer)] = g.min_all[s];
      m[static_cast<std::size_t>(Variant::Percentile)] = g.percentile[s];
      m[static_cast<std::size_t>(Variant::ExcludeTested)] = g.min_untested[s];
    } else {
      const Min* mn = find_min(a.pattern, a.function, a.cls);
      const auto pm = std::find_if(peer_mins_.begin(), peer_mins_.end(), [&](const PeerMin& x) {
        return x.function == a.function && x.pattern == a.pattern && x.cls == a.cls && x.peers == a.peers;
      });
      m[static_cast<std::size_t>(Variant::Paper)] = mn->min;
      m[static_cast<std::size_t>(Variant::PerPeer)] = pm->min;
      m[static_cast<std::size_t>(Variant::Percentile)] = mn->hist.quantile(q_);
      m[static_cast<std::size_t>(Variant::ExcludeTested)] = mn->min_untested;
    }
    std::array<double, kVariantCount> w{};
    w[0] = excess(a.sum, a.n, m[0]);
    w[1] = excess(a.sum, a.n, m[1]);
    w[2] = std::max(0.0, excess(a.sum, a.n, m[2]));
    w[3] = excess(a.sum_untested, a.n_untested, m[3]);

    auto it = std::find_if(out.begin(), out.end(),
                           [&](const RankRow& r) { return r.path == a.path && r.pattern == a.pattern; });
    if (it == out.end()) {
      out.push_back(RankRow{a.path, a.pattern, 0, 0, {}});
      it = out.end() - 1;
    }
    it->calls += a.n;
    it->time += a.sum;
    for (std::size_t v = 0; v < kVariantCount; ++v) it->waiting[v] += w[v];
  }
  std::sort(out.begin(), out.end(),
            [](const RankRow& x, const RankRow& y) { return std::tie(x.path, x.pattern) < std::tie(y.path, y.pattern); });
  return out;
}

// ---------------------------------------------------------------------------------------
// Result

std::vector<Total> Result::totals() const {
  std::vector<Total> out;
  for (const auto& r : rows) {
    if (out.empty() || out.back().path != r.path || out.back().pattern != r.pattern)
      out.push_back(Total{r.path, r.pattern, 0, 0, {}});
    auto& t = out.back();
    t.calls += r.calls;
    t.time += r.time;
    for (std::size_t v = 0; v < kVariantCount; ++v) t.waiting[v] += r.waiting[v];
  }
  return out;
}

double Result::ratio(const Total& t, Variant v) const {
  const double denom = static_cast<double>(ranks) * wall_time;
  return denom > 0 ? t.waiting[static_cast<std::size_t>(v)] / denom : 0.0;
}

Result assemble(std::vector<std::vector<RankRow>> rows_per_rank, std::vector<double> begin, std::vector<double> end,
                const std::vector<std::string>& path_names, double percentile, bool percentile_computed) {
  Result r;
  r.percentile = percentile;
  r.computed.fill(true);
  r.computed[static_cast<std::size_t>(Variant::Percentile)] = percentile_computed;
  r.ranks = rows_per_rank.size();
  double lo = kInf, hi = -kInf;
  for (std::size_t i = 0; i < r.ranks; ++i) {
    r.rank_time.push_back(end[i] - begin[i]);
    lo = std::min(lo, begin[i]);
    hi = std::max(hi, end[i]);
  }
  r.wall_time = r.ranks > 0 ? hi - lo : 0;

  // Call paths that appear, named and sorted by name.
  std::vector<std::uint32_t> used;
  for (const auto& rows : rows_per_rank)
    for (const auto& x : rows) used.push_back(x.path);
  std::sort(used.begin(), used.end());
  used.erase(std::unique(used.begin(), used.end()), used.end());
  std::sort(used.begin(), used.end(), [&](std::uint32_t a, std::uint32_t b) { return path_names[a] < path_names[b]; });
  std::vector<std::uint32_t> index(path_names.size(), 0);
  for (std::size_t i = 0; i < used.size(); ++i) {
    index[used[i]] = static_cast<std::uint32_t>(i);
    r.paths.push_back(path_names[used[i]]);
  }
  for (std::size_t rank = 0; rank < rows_per_rank.size(); ++rank)
    for (const auto& x : rows_per_rank[rank])
      r.rows.push_back(Row{index[x.path], x.pattern, static_cast<std::int32_t>(rank), x.calls, x.time, x.waiting});
  std::sort(r.rows.begin(), r.rows.end(), [](const Row& a, const Row& b) {
    return std::tie(a.path, a.pattern, a.rank) < std::tie(b.path, b.pattern, b.rank);
  });
  if (!percentile_computed)
    for (auto& x : r.rows) x.waiting[static_cast<std::size_t>(Variant::Percentile)] = 0;
  return r;
}

void set_percentiles(GlobalMinima& g, const std::vector<Histogram>& hist, double q) {
  for (std::size_t s = 0; s < GlobalMinima::kSlots; ++s)
    if (hist[s].count() > 0) g.percentile[s] = hist[s].quantile(q);
}

Result estimate(const std::vector<RankProfile>& ranks, const std::vector<std::string>& path_names) {
  GlobalMinima g;
  std::vector<Histogram> hist(GlobalMinima::kSlots);
  for (const auto& p : ranks) {
    p.contribute_minima(g);
    p.contribute_histograms(hist);
  }
  const double q = ranks.empty() ? 5.0 : ranks.front().percentile();
  set_percentiles(g, hist, q);
  std::vector<std::vector<RankRow>> rows;
  std::vector<double> begin, end;
  for (const auto& p : ranks) {
    rows.push_back(p.rows(g));
    begin.push_back(p.begin());
    end.push_back(p.end());
  }
  return assemble(std::move(rows), std::move(begin), std::move(end), path_names, q, true);
}

// ---------------------------------------------------------------------------------------
// Output

std::string to_csv(const Result& r) {
  std::string out = "call_path,pattern,rank,calls,time_s";
  for (std::size_t v = 0; v < kVariantCount; ++v)
    out += ",wait_" + variant_name(static_cast<Variant>(v), r.percentile) + "_s";
  out += '\n';
  for (const auto& x : r.rows) {
    out += fmt::format("{},{},{},{},{}", trace::csv_field(r.paths[x.path]), pattern_name(x.pattern), x.rank, x.calls,
                       num(x.time));
    for (std::size_t v = 0; v < kVariantCount; ++v) out += r.computed[v] ? "," + num(x.waiting[v]) : ",";
    out += '\n';
  }
  return out;
}

std::string to_json(const Result& r, const std::string& source) {
  nlohmann::ordered_json j;
  j["format"] = "waitlab-minprofile 1";
  j["source"] = source;
  j["ranks"] = r.ranks;
  j["wall_time_s"] = r.wall_time;
  j["percentile"] = r.percentile;
  auto variants = nlohmann::ordered_json::array();
  for (std::size_t v = 0; v < kVariantCount; ++v)
    if (r.computed[v]) variants.push_back(variant_name(static_cast<Variant>(v), r.percentile));
  j["variants"] = variants;
  auto paths = nlohmann::ordered_json::array();
  for (const auto& t : r.totals()) {
    nlohmann::ordered_json e;
    e["call_path"] = r.paths[t.path];
    e["pattern"] = pattern_name(t.pattern);
    e["calls"] = t.calls;
    e["time_s"] = t.time;
    nlohmann::ordered_json w, ratio;
    for (std::size_t v = 0; v < kVariantCount; ++v) {
      if (!r.computed[v]) continue;
      const auto name = variant_name(static_cast<Variant>(v), r.percentile);
      w[name] = t.waiting[v];
      ratio[name] = r.ratio(t, static_cast<Variant>(v));
    }
    e["waiting_s"] = w;
    e["wait_ratio"] = ratio;
    paths.push_back(e);
  }
  j["call_paths"] = paths;
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";  // names that are not UTF-8 become U+FFFD
}

}  // namespace waitlab::minprofile
