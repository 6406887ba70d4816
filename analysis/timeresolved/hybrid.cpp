#include "analysis/timeresolved/hybrid.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "analysis/engine/bytes.hpp"
#include "analysis/engine/serial_transport.hpp"
#include "analysis/engine/shard.hpp"
#include "analysis/engine/transport.hpp"
#include "analysis/timeresolved/intervals.hpp"

namespace waitlab::analysis {

using intervals::Interval;
using trace::Time;

namespace {

// What one rank gives the sums (its master and its worker threads), in this order.
enum Fact : std::size_t {
  kUnits = 0,        // M_i: its units (threads with an event or a state interval)
  kOutside,          // O_i = |X_i|
  kUsefulSum,        // Σ_j U_ij
  kUsefulMax,        // max_j U_ij
  kUsefulOutside,    // Σ_j U'_ij
  kIdleSerial,       // Σ_j idle outside the parallel regions
  kIdleImbalance,    // Σ_p Σ_j (I_ijp − min_j I_ijp)
  kIdleScheduling,   // Σ_p M_i·min_j I_ijp
  kRegions,          // 1 when its master has a parallel region
  kHybrid,           // 1 when it has a worker thread in the units or an OpenMP interval
  kFacts
};

bool active(const trace::Location& l) {
  return !l.events.empty() || !l.states.empty();
}

double ratio(double a, double b) {
  return b > 0 ? a / b : 0.0;
}

// The useful stretches of a unit inside the cut: outside MPI calls and outside its state
// intervals (Bsc's and Scalasca's useful time).
std::vector<Interval> useful_of(const trace::Definitions& defs, const trace::Location& l,
                                const std::vector<Interval>& cut) {
  const std::vector<Interval> u = intervals::outside_mpi(defs, l, cut.front().a, cut.back().b);
  return intervals::intersect(intervals::subtract(u, intervals::state_union(l.states)), cut);
}

// The length of u inside each of the ordered, disjoint `regions`.
std::vector<double> per_region(const std::vector<Interval>& u, const std::vector<Interval>& regions) {
  std::vector<double> in(regions.size(), 0.0);
  std::size_t j = 0;
  for (std::size_t k = 0; k < regions.size(); ++k) {
    while (j < u.size() && u[j].b <= regions[k].a) ++j;
    for (std::size_t x = j; x < u.size() && u[x].a < regions[k].b; ++x)
      in[k] += std::max(0.0, std::min(u[x].b, regions[k].b) - std::max(u[x].a, regions[k].a));
  }
  return in;
}

// Rank i's facts: `master` its MPI thread, `threads` its worker threads.
std::vector<double> rank_facts(const trace::Definitions& defs, const trace::Location& master,
                               const std::vector<const trace::Location*>& threads, const std::vector<Interval>& cut) {
  std::vector<double> f(kFacts, 0.0);
  const std::vector<Interval> x = intervals::intersect(intervals::outside_mpi(defs, master, cut.front().a, cut.back().b), cut);
  const double outside = intervals::length(x);
  f[kOutside] = outside;
  std::vector<Interval> regions;
  for (const trace::OmpInterval& o : master.omp)
    if (o.kind == trace::OmpKind::ParallelRegion && o.end > o.begin) regions.push_back({o.begin, o.end});
  f[kRegions] = regions.empty() ? 0.0 : 1.0;
  regions = intervals::intersect(regions, x);
  const std::vector<double> region_length = per_region(regions, regions);
  double regions_total = 0;
  for (const double r : region_length) regions_total += r;
  std::vector<const trace::Location*> units;
  if (active(master)) units.push_back(&master);
  for (const trace::Location* t : threads) {
    if (active(*t)) units.push_back(t);
    if (!t->omp.empty()) f[kHybrid] = 1;
  }
  if (units.size() > 1 || !master.omp.empty()) f[kHybrid] = 1;
  f[kUnits] = static_cast<double>(units.size());
  std::vector<std::vector<double>> idle;  // per unit, per region: I_ijp
  for (const trace::Location* l : units) {
    const std::vector<Interval> u = useful_of(defs, *l, cut);
    const double total = intervals::length(u);
    const std::vector<Interval> inside = intervals::intersect(u, x);
    const double in_x = intervals::length(inside);
    const std::vector<double> in_regions = per_region(inside, regions);
    double in_regions_total = 0;
    auto& i = idle.emplace_back(regions.size());
    for (std::size_t p = 0; p < regions.size(); ++p) {
      in_regions_total += in_regions[p];
      i[p] = region_length[p] - in_regions[p];
    }
    f[kUsefulSum] += total;
    f[kUsefulMax] = std::max(f[kUsefulMax], total);
    f[kUsefulOutside] += in_x;
    f[kIdleSerial] += (outside - regions_total) - (in_x - in_regions_total);
  }
  for (std::size_t p = 0; p < regions.size() && !units.empty(); ++p) {
    double least = idle[0][p];
    for (const auto& i : idle) least = std::min(least, i[p]);
    for (const auto& i : idle) f[kIdleImbalance] += i[p] - least;
    f[kIdleScheduling] += static_cast<double>(units.size()) * least;
  }
  return f;
}

std::vector<Interval> checked_cut(const std::vector<std::pair<Time, Time>>& in) {
  std::vector<Interval> cut;
  for (const auto& [a, b] : in) {
    if (!(std::isfinite(a) && std::isfinite(b) && b >= a) || (!cut.empty() && a < cut.back().b))
      throw std::invalid_argument("hybrid_efficiency: the intervals must be finite, sorted and disjoint");
    cut.push_back({a, b});
  }
  return cut;
}

// The factors from every rank's facts (in rank order).
HybridEfficiency combine(const std::vector<double>& facts, const std::vector<Interval>& cut, double t_ideal,
                         double useful_ideal_max) {
  HybridEfficiency h;
  h.length = intervals::length(cut);
  const double T = h.length;
  double units = 0, weighted = 0, idle_serial = 0, idle_lb = 0, idle_sched = 0;
  for (std::size_t k = 0; k + kFacts <= facts.size(); k += kFacts) {
    const double* f = facts.data() + k;
    ++h.ranks;
    units += f[kUnits];
    weighted += f[kUnits] * f[kOutside];
    h.outside_mpi_max = std::max(h.outside_mpi_max, f[kOutside]);
    h.useful_sum += f[kUsefulSum];
    h.useful_max = std::max(h.useful_max, f[kUsefulMax]);
    h.useful_outside_mpi += f[kUsefulOutside];
    idle_serial += f[kIdleSerial];
    idle_lb += f[kIdleImbalance];
    idle_sched += f[kIdleScheduling];
    h.hybrid = h.hybrid || f[kHybrid] != 0;
    h.talp = h.talp || f[kRegions] != 0;
  }
  h.units = static_cast<std::size_t>(units);
  if (!h.hybrid) return h;
  h.outside_mpi_weighted = weighted;
  const double mean_u = ratio(h.useful_sum, units);
  h.all.lb = h.useful_max > 0 ? mean_u / h.useful_max : 1.0;
  h.all.comm_e = ratio(h.useful_max, T);
  h.all.pe = ratio(mean_u, T);
  const double mean_o = ratio(weighted, units);
  h.mpi.lb = h.outside_mpi_max > 0 ? mean_o / h.outside_mpi_max : 1.0;
  h.mpi.comm_e = ratio(h.outside_mpi_max, T);
  h.mpi.pe = ratio(mean_o, T);
  h.mpi.ser_e = ratio(useful_ideal_max, t_ideal);
  h.mpi.trf_e = ratio(h.mpi.comm_e, h.mpi.ser_e);
  h.omp.lb = ratio(h.all.lb, h.mpi.lb);
  h.omp.comm_e = ratio(h.all.comm_e, h.mpi.comm_e);
  h.omp.pe = ratio(h.all.pe, h.mpi.pe);
  h.hybrid_pe = h.mpi.pe * h.omp.pe;
  if (!h.talp) return h;
  h.idle_serial = idle_serial;
  h.idle_imbalance = idle_lb;
  h.idle_scheduling = idle_sched;
  const double B = weighted;
  h.omp_serialisation = ratio(B - idle_serial, B);
  h.omp_load_balance = ratio(B - idle_serial - idle_lb, B - idle_serial);
  h.omp_scheduling = ratio(B - idle_serial - idle_lb - idle_sched, B - idle_serial - idle_lb);
  return h;
}

}  // namespace

HybridEfficiency hybrid_efficiency(const engine::Shard& shard, Convention convention,
                                   const std::vector<std::pair<Time, Time>>& intervals, double t_ideal,
                                   double useful_ideal_max, engine::Transport& transport) {
  const std::vector<Interval> cut = checked_cut(intervals);
  std::vector<double> mine;
  if (convention != Convention::Waitlab && !cut.empty()) {
    std::size_t t = 0;
    for (const trace::Location& master : shard.locations) {
      std::vector<const trace::Location*> threads;
      while (t < shard.threads.size() && shard.threads[t].rank < master.rank) ++t;
      for (; t < shard.threads.size() && shard.threads[t].rank == master.rank; ++t) threads.push_back(&shard.threads[t]);
      const std::vector<double> f = rank_facts(shard.defs, master, threads, cut);
      mine.insert(mine.end(), f.begin(), f.end());
    }
  }
  std::vector<double> all;
  for (const engine::Bytes& part : transport.gather(engine::encode(mine))) {
    const auto some = engine::decode<std::vector<double>>(part);
    all.insert(all.end(), some.begin(), some.end());
  }
  if (transport.self() != 0) return HybridEfficiency{};
  HybridEfficiency h = combine(all, cut, t_ideal, useful_ideal_max);
  h.ranks = static_cast<std::size_t>(shard.ranks);
  return h;
}

HybridEfficiency hybrid_of(const engine::Shard& shard, const TimeResolvedResult& r, engine::Transport& transport) {
  std::vector<Time> mine;  // process 0's: the convention, the mpi flag, the ideal figures, the pieces
  if (transport.self() == 0) {
    mine = {static_cast<Time>(r.convention), r.mpi ? 1.0 : 0.0, r.ideal, r.useful_ideal_max};
    if (r.cut.any())
      for (const auto& [a, b] : r.cut.pieces) mine.push_back(a), mine.push_back(b);
    else
      mine.push_back(r.t0), mine.push_back(r.t1);
  }
  const auto v = engine::decode<std::vector<Time>>(transport.broadcast(engine::encode(mine)));
  std::vector<std::pair<Time, Time>> pieces;
  for (std::size_t k = 4; k + 1 < v.size(); k += 2) pieces.emplace_back(v[k], v[k + 1]);
  HybridEfficiency h =
      hybrid_efficiency(shard, static_cast<Convention>(static_cast<int>(v[0])), pieces, v[2], v[3], transport);
  if (v[1] == 0) h.mpi.ser_e = h.mpi.trf_e = NAN;
  return h;
}

HybridEfficiency hybrid_of(const trace::Trace& trace, const TimeResolvedResult& r) {
  const engine::Shard shard = engine::Shard::whole(trace);
  engine::SerialTransport transport;
  return hybrid_of(shard, r, transport);
}

HybridEfficiency hybrid_efficiency(const trace::Trace& trace, Convention convention,
                                   const std::vector<std::pair<Time, Time>>& intervals, double t_ideal,
                                   double useful_ideal_max) {
  const engine::Shard shard = engine::Shard::whole(trace);
  engine::SerialTransport transport;
  return hybrid_efficiency(shard, convention, intervals, t_ideal, useful_ideal_max, transport);
}

}  // namespace waitlab::analysis
