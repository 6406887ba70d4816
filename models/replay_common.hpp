// Internal to models (not a public header): what the converters of models/replay.hpp share.
// A replayed trace's workload (ReplayWorkload: each rank's actions on a tape) and what the
// trace and TI converters build it with (RankBuilder, Slots, Notes, to_tapes, finish); the key
// SMPI files a request under (the TI converter and the TI export); a communicator rank's world
// rank (the TI export and the logical trace).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "models/action_tape.hpp"
#include "models/replay.hpp"

namespace waitlab::models::detail {

// Counts of approximations, written as notes at the end.
class Notes {
 public:
  void add(const std::string& what, std::uint64_t n = 1) { counts_[what] += n; }
  void flush(ReplayReport* report) const {
    if (!report) return;
    for (const auto& [what, n] : counts_) report->notes.push_back(std::to_string(n) + " × " + what);
  }

 private:
  std::map<std::string, std::uint64_t> counts_;
};

// A replayed trace's actions, each rank's on a compact tape (models/action_tape.hpp: about 8
// bytes a call instead of 64). Two things are applied as the actions are read rather than
// stored: the final numbering of communicators (known once every rank is converted) and the
// iterations found in the loop structure (each rank's compute intervals split evenly).
class ReplayWorkload : public Workload {
 public:
  ReplayWorkload(std::string name, trace::Definitions defs, std::vector<ActionTape> tapes, int iterations,
                 CountsPool counts = {}, std::vector<std::uint16_t> comm_ids = {})
      : name_(std::move(name)),
        defs_(std::move(defs)),
        tapes_(std::move(tapes)),
        iterations_(iterations),
        counts_(std::move(counts)),
        comm_ids_(std::move(comm_ids)) {}
  std::string name() const override { return name_; }
  int ranks() const override { return static_cast<int>(tapes_.size()); }
  int iterations() const override { return iterations_; }
  const trace::Definitions& definitions() const override { return defs_; }
  std::unique_ptr<ActionStream> stream(Rank r) const override {
    const auto i = static_cast<std::size_t>(r);
    return std::make_unique<Stream>(*this, tapes_[i], split_.empty() ? 0 : split_[i]);
  }
  const Counts* counts(std::uint32_t id) const override { return id < counts_.size() ? &counts_.at(id) : nullptr; }
  const ActionTape& tape(Rank r) const { return tapes_[static_cast<std::size_t>(r)]; }
  // Compute actions get iteration min(k / per_rank[r], iterations − 1), k their index on the rank.
  void split_iterations(std::vector<std::int32_t> per_rank, int iterations) {
    split_ = std::move(per_rank);
    iterations_ = iterations;
  }

 private:
  class Stream : public ActionStream {
   public:
    Stream(const ReplayWorkload& w, const ActionTape& t, std::int32_t per) : w_(w), t_(t), reader_(t), per_(per) {}
    bool next(Action& out) override {
      if (!reader_.next(out)) return false;
      if (!w_.comm_ids_.empty() && out.comm != 0) out.comm = w_.comm_ids_[out.comm];
      if (per_ > 0 && out.kind == ActionKind::Compute) out.iteration = std::min(interval_++ / per_, w_.iterations_ - 1);
      return true;
    }
    double done() const override {
      return t_.size() == 0 ? 1.0 : static_cast<double>(reader_.position()) / static_cast<double>(t_.size());
    }

   private:
    const ReplayWorkload& w_;
    const ActionTape& t_;
    TapeReader reader_;
    std::int32_t per_;
    std::int32_t interval_ = 0;
  };
  std::string name_;
  trace::Definitions defs_;
  std::vector<ActionTape> tapes_;
  int iterations_;
  CountsPool counts_;                  // the v-collectives' sizes, each distinct vector once
  std::vector<std::uint16_t> comm_ids_;  // stored communicator id -> the workload's (empty: the same)
  std::vector<std::int32_t> split_;      // per rank: compute intervals per iteration (empty: as stored)
};

// Request slots of one rank: the engine names requests by slot; a slot is free again once
// its request completed.
class Slots {
 public:
  std::int32_t take() {
    if (!free_.empty()) {
      const auto s = free_.back();
      free_.pop_back();
      return s;
    }
    return next_++;
  }
  void give_back(std::int32_t s) { free_.push_back(s); }

 private:
  std::vector<std::int32_t> free_;
  std::int32_t next_ = 0;
};

// Builds one rank's actions: compute intervals with their region, scale and iteration.
class RankBuilder {
 public:
  RankBuilder(Rank rank, const ReplayOptions& o, trace::Definitions& defs, std::vector<Action>& out)
      : rank_(rank), o_(o), defs_(defs), out_(out) {}

  // Compute of `amount` seconds, or flops. No time is nothing to replay, but for flops: a TI
  // `compute 0` is a call of smpi_execute_flops(0), which SMPI's replay (and the traced run)
  // executes as an execution of no flops — it ends after the other ranks' calls of the same
  // instant — so it is kept, and the engine executes it likewise.
  void compute(double amount, bool flops, trace::RegionId region) {
    if (!(amount > 0) && !(flops && amount == 0)) return;
    double f = 1;
    for (const auto& s : o_.scales)
      if (s.applies(defs_.regions[region].name, rank_)) f *= s.factor;
    Action a;
    a.kind = ActionKind::Compute;
    a.region = region;
    if (!flops && o_.speed > 0) {
      a.flops = true;
      a.amount = amount * f * o_.speed;
    } else {
      a.flops = flops;
      a.amount = amount * f;
    }
    a.iteration = o_.iteration_region.empty() ? intervals_++ : region_iteration_;
    iterations_ = std::max(iterations_, a.iteration + 1);
    out_.push_back(a);
  }
  void enter(trace::RegionId region) {
    if (!o_.iteration_region.empty() && defs_.regions[region].name == o_.iteration_region) ++region_iteration_;
    Action a;
    a.kind = ActionKind::Enter;
    a.region = region;
    out_.push_back(a);
  }
  void leave(trace::RegionId region) {
    Action a;
    a.kind = ActionKind::Leave;
    a.region = region;
    out_.push_back(a);
  }
  void push(const Action& a) { out_.push_back(a); }
  int iterations() const { return iterations_; }
  // Puts the whole stream inside `region` (after MPI_Init, before MPI_Finalize, which the
  // engine adds): the computation outside every region of the trace is then in a region, as
  // the analyses need it (a compute interval outside every region is on no call path).
  void wrap(trace::RegionId region) {
    Action a;
    a.kind = ActionKind::Enter;
    a.region = region;
    out_.insert(out_.begin(), a);
    a.kind = ActionKind::Leave;
    out_.push_back(a);
  }

 private:
  Rank rank_;
  const ReplayOptions& o_;
  trace::Definitions& defs_;
  std::vector<Action>& out_;
  std::int32_t intervals_ = 0;
  std::int32_t region_iteration_ = -1;
  std::int32_t iterations_ = 0;
};

// A collective action of `bytes` on communicator `comm` (a negative root: 0).
inline Action coll(ActionKind k, std::uint64_t bytes, Rank root = 0, std::uint32_t comm = trace::kCommWorld) {
  Action a;
  a.kind = k;
  a.bytes = bytes;
  a.root = root < 0 ? 0 : root;
  a.comm = static_cast<std::uint16_t>(comm);  // < kMaxComms: comm_of() refuses more
  return a;
}

// The p2p key SMPI's replayer files requests under.
struct RequestKey {
  Rank src, dst;
  std::int32_t tag;
  bool operator==(const RequestKey&) const = default;
};
struct RequestKeyHash {
  std::size_t operator()(const RequestKey& k) const {
    const auto a = static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.src)) << 32 |
                   static_cast<std::uint32_t>(k.dst);
    return std::hash<std::uint64_t>()(a * 0x9e3779b97f4a7c15ULL ^ static_cast<std::uint32_t>(k.tag));
  }
};

// The world rank of rank `local` of communicator `comm` of the definitions (itself on
// MPI_COMM_WORLD, or when the definitions do not say).
inline Rank world_rank(const trace::Definitions& d, std::uint32_t comm, Rank local) {
  if (comm == trace::kCommWorld || comm >= d.comms.size() || local < 0) return local;
  const auto& m = d.comms[comm].members;
  return static_cast<std::size_t>(local) < m.size() ? m[static_cast<std::size_t>(local)] : local;
}

// Converts every rank with `convert(r)` (its actions) onto a tape, one rank at a time: a
// replay holds its tapes, never every rank's Actions at once. `done(r)` may free what rank r
// was converted from.
template <class Convert, class Done>
std::vector<ActionTape> to_tapes(std::size_t ranks, Convert&& convert, Done&& done, std::uint64_t& actions) {
  std::vector<ActionTape> tapes(ranks);
  for (std::size_t r = 0; r < ranks; ++r) {
    for (const Action& a : convert(static_cast<Rank>(r))) tapes[r].push(a);
    tapes[r].shrink_to_fit();
    actions += tapes[r].size();
    done(r);
  }
  return tapes;
}

// The replay's last step: the report's count of actions, and without an iteration region the
// iterations the loop structure of the calls gives (models/loops.hpp; replay_common.cpp).
std::unique_ptr<Workload> finish(std::unique_ptr<ReplayWorkload> w, const ReplayOptions& o, ReplayReport* report,
                                 std::uint64_t actions);

}  // namespace waitlab::models::detail
