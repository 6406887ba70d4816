// Helpers for the engine tests: tiny hand-written workloads, platforms and event lookups.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "models/workload.hpp"
#include "sim/engine.hpp"

namespace waitlab::sim::test {

using models::Action;
using models::ActionKind;
using trace::EventKind;
using trace::MpiOp;

// A workload whose rank r executes exactly actions[r]. Region 0 is "work".
class ListWorkload : public models::Workload {
 public:
  explicit ListWorkload(std::vector<std::vector<Action>> actions) : actions_(std::move(actions)) {
    defs_.region("work");
  }
  // With communicators besides MPI_COMM_WORLD, which is comms[0] (every rank).
  ListWorkload(std::vector<std::vector<Action>> actions, std::vector<trace::Communicator> comms)
      : ListWorkload(std::move(actions)) {
    trace::Communicator world{"MPI_COMM_WORLD", {}};
    for (trace::Rank r = 0; r < ranks(); ++r) world.members.push_back(r);
    defs_.comms.push_back(world);
    for (auto& c : comms) defs_.comms.push_back(std::move(c));
  }
  std::string name() const override { return "list"; }
  int ranks() const override { return static_cast<int>(actions_.size()); }
  int iterations() const override { return 1; }
  const trace::Definitions& definitions() const override { return defs_; }
  std::unique_ptr<models::ActionStream> stream(trace::Rank r) const override {
    return std::make_unique<models::VectorStream>(actions_.at(static_cast<std::size_t>(r)));
  }
  const models::Counts* counts(std::uint32_t id) const override { return id < pool.size() ? &pool.at(id) : nullptr; }
  models::CountsPool pool;  // the v-collective actions' sizes (Action::counts)

 private:
  std::vector<std::vector<Action>> actions_;
  trace::Definitions defs_;
};

inline Action compute(double seconds, int iteration = -1) {
  Action a;
  a.kind = ActionKind::Compute;
  a.amount = seconds;
  a.region = 0;
  a.iteration = iteration;
  return a;
}
inline Action p2p(ActionKind k, trace::Rank peer, std::uint64_t bytes, int tag = 0, int request = -1) {
  Action a;
  a.kind = k;
  a.peer = peer;
  a.bytes = bytes;
  a.tag = tag;
  a.request = request;
  return a;
}
inline Action wait(int request) {
  Action a;
  a.kind = ActionKind::Wait;
  a.request = request;
  return a;
}
// A Wait that is not a call of its own: its request is one of the next Waitall's.
inline Action in_waitall(int request) {
  Action a = wait(request);
  a.in_waitall = true;
  return a;
}
inline Action waitall() {
  Action a;
  a.kind = ActionKind::Waitall;
  return a;
}
inline Action coll(ActionKind k, std::uint64_t bytes = 0, trace::Rank root = 0) {
  Action a;
  a.kind = k;
  a.bytes = bytes;
  a.root = root;
  return a;
}

// A flat cluster of `nodes` single-core nodes, each on a link of `bw` B/s and `lat` s.
inline models::PlatformDesc cluster(int nodes, double bw = 1e9, double lat = 1e-6) {
  models::PlatformDesc p;
  p.kind = models::PlatformKind::Cluster;
  p.nodes = nodes;
  p.cores = 1;
  p.speed = 1e9;
  p.network_link = {bw, lat};
  return p;
}

inline RunOptions options(Semantics s = Semantics::Waitlab) {
  RunOptions o;
  o.semantics = s;
  return o;
}

// The n-th (0-based) event of `kind` and `op` on rank r's location.
inline const trace::Event& nth(const trace::Trace& t, trace::Rank r, EventKind kind, MpiOp op, int n = 0) {
  for (const auto& e : t.locations.at(static_cast<std::size_t>(r)).events)
    if (e.kind == kind && e.op == op && n-- == 0) return e;
  throw std::runtime_error("no such event on rank " + std::to_string(r));
}
// Enter and leave time of the n-th call of MPI function `op` on rank r.
inline std::pair<double, double> call(const trace::Trace& t, trace::Rank r, MpiOp op, int n = 0) {
  return {nth(t, r, EventKind::Enter, op, n).time, nth(t, r, EventKind::Leave, op, n).time};
}

// SMPI's network model (CM02 with SMPI's factors) for one message of `bytes` alone on a
// route of total latency `lat` and bottleneck bandwidth `bw`: SMPI adds a 16-byte envelope;
// the piecewise factors (smpi/lat-factor, smpi/bw-factor defaults of SimGrid 3.32) take the
// entry with the largest threshold strictly below the payload size; the flow's rate is
// min(bw, TCP-gamma / (2 lat)) x bw-factor, with TCP-gamma = 4 MiB; time = lat x lat-factor
// + payload / rate.
inline double smpi_transfer_time(double bytes, double lat, double bw) {
  const double payload = bytes + 16;
  struct F {
    double threshold, lat, bw;
  };
  static const F table[] = {
      {0, 2.01467, 0.812084},    {257, 1.95341, 0.338112},   {732, 1.9503, 0.341987},
      {1426, 1.61075, 0.608902}, {3484, 1.88101, 0.77493},   {5776, 2.18796, 1.08739},
      {9376, 2.59299, 0.58729},  {15424, 3.48845, 0.697866}, {65472, 11.6436, 0.940694}};
  double lf = 1;
  double bf = 1;
  for (const auto& f : table)
    if (payload > f.threshold) {
      lf = f.lat;
      bf = f.bw;
    }
  const double rate = std::min(bw, 4194304.0 / (2 * lat)) * bf;
  return lat * lf + payload / rate;
}

}  // namespace waitlab::sim::test

namespace waitlab::sim::test {

using Given = std::vector<std::pair<std::string, std::string>>;

inline std::unique_ptr<models::Workload> workload(const std::string& type, const Given& given) {
  const auto* e = models::find_workload(type);
  if (!e) throw std::runtime_error("no workload " + type);
  std::vector<models::UserOption> user;
  for (const auto& [k, v] : given) user.push_back({k, v, "test"});
  return models::make_workload(type, models::make_options(e->spec, user, "test", "test"));
}

inline models::ModelContext context(const models::Workload& w, const models::PlatformDesc& p,
                                    std::uint64_t seed) {
  models::ModelContext c;
  c.ranks = w.ranks();
  c.grid = w.grid();
  c.placement = models::place(p, w.ranks());
  c.regions = &w.definitions();
  c.seed = seed;
  return c;
}

inline void add(models::Perturbations& ps, const std::string& type, const Given& given,
                const models::ModelContext& ctx) {
  const auto* e = models::find_perturbation(type);
  if (!e) throw std::runtime_error("no perturbation " + type);
  std::vector<models::UserOption> user;
  for (const auto& [k, v] : given) user.push_back({k, v, "test"});
  ps.add(models::make_perturbation(type, models::make_options(e->spec, user, "test", "test"), ctx));
}

// The largest |difference| of event times between two traces with the same events otherwise.
inline double max_time_difference(const trace::Trace& a, const trace::Trace& b) {
  EXPECT_EQ(a.locations.size(), b.locations.size());
  double worst = 0;
  for (std::size_t r = 0; r < a.locations.size() && r < b.locations.size(); ++r) {
    const auto& ea = a.locations[r].events;
    const auto& eb = b.locations[r].events;
    EXPECT_EQ(ea.size(), eb.size()) << "rank " << r;
    for (std::size_t i = 0; i < ea.size() && i < eb.size(); ++i) {
      auto x = ea[i];
      auto y = eb[i];
      worst = std::max(worst, std::abs(x.time - y.time));
      x.time = y.time = 0;
      EXPECT_EQ(x, y) << "rank " << r << " event " << i;
      if (!(x == y)) return worst;
    }
  }
  return worst;
}

}  // namespace waitlab::sim::test
