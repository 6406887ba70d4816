#include "models/replay.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <deque>
#include <map>
#include <optional>
#include <unordered_map>

#include "util/error.hpp"
#include "models/action_tape.hpp"
#include "models/loops.hpp"

namespace waitlab::models {

using trace::EventKind;
using trace::MpiOp;
using trace::TiOp;
using trace::TiRecord;

namespace {

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

Action coll(ActionKind k, std::uint64_t bytes, Rank root = 0, std::uint32_t comm = trace::kCommWorld) {
  Action a;
  a.kind = k;
  a.bytes = bytes;
  a.root = root < 0 ? 0 : root;
  a.comm = static_cast<std::uint16_t>(comm);  // < kMaxComms: comm_of() refuses more
  return a;
}

std::string number(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string at(Rank r, std::size_t event) {
  return "rank " + std::to_string(r) + ", event " + std::to_string(event);
}

// ---------------------------------------------------------------- timed traces ----

struct TraceConverter {
  const trace::Trace& t;
  const ReplayOptions& o;
  trace::Definitions defs;                 // the workload's user regions and communicators
  std::vector<trace::RegionId> region_map; // trace region id -> workload region id (user regions)
  // Trace communicator id -> workload communicator id (0: MPI_COMM_WORLD; kUnmapped until a
  // collective uses it). The workload keeps the communicators its collectives use, with their
  // names and members, in the order of their trace ids (renumber_comms(), at the end).
  static constexpr std::uint32_t kUnmapped = 0xffffffffu;
  std::vector<std::uint32_t> comm_map;
  std::vector<std::uint32_t> trace_comm;  // per workload communicator: its trace id
  // Per workload communicator: its members as (world rank, communicator rank), sorted.
  std::vector<std::vector<std::pair<Rank, Rank>>> local_rank;
  Notes notes;
  int iterations = 0;
  // A Score-P trace: its collective records count bytes in Score-P's way (scorep_payload).
  const bool scorep;

  TraceConverter(const trace::Trace& tr, const ReplayOptions& opt)
      : t(tr), o(opt), scorep(tr.origin == trace::Origin::ScoreP) {
    region_map.assign(t.defs.regions.size(), 0);
    for (std::size_t i = 0; i < t.defs.regions.size(); ++i)
      if (t.defs.regions[i].op == MpiOp::None) region_map[i] = defs.region(t.defs.regions[i].name);
    comm_map.assign(t.defs.comms.size(), kUnmapped);
    if (!comm_map.empty()) comm_map[trace::kCommWorld] = trace::kCommWorld;
    collect_vcollectives();
  }

  // The workload communicator of trace communicator `c`, on which rank r (event `enter`)
  // calls `op`: checked on first use (members are distinct ranks of the trace) and for r's
  // membership. Communicator 0 is MPI_COMM_WORLD.
  std::uint32_t comm_of(Rank r, std::size_t enter, MpiOp op, std::uint32_t c) {
    if (c == trace::kCommWorld) return trace::kCommWorld;
    const auto call = [&] {
      return at(r, enter) + ": " + std::string(trace::mpi_name(op)) + " on communicator ";
    };
    if (c >= t.defs.comms.size())
      throw InputError(call() + std::to_string(c) + ", which the trace does not define");
    const trace::Communicator& comm = t.defs.comms[c];
    const std::string name = "'" + comm.name + "' (" + std::to_string(c) + ")";
    if (comm_map[c] == kUnmapped) {
      if (comm.members.empty())
        throw InputError(call() + name + ", which has no members (MPI_COMM_SELF: every rank alone)");
      std::vector<std::pair<Rank, Rank>> locals;
      for (std::size_t i = 0; i < comm.members.size(); ++i) {
        const Rank m = comm.members[i];
        if (m < 0 || static_cast<std::size_t>(m) >= t.ranks())
          throw InputError(call() + name + ": its member " + std::to_string(i) + " is " + std::to_string(m) +
                           ", not a rank of the trace (" + std::to_string(t.ranks()) + " ranks)");
        locals.emplace_back(m, static_cast<Rank>(i));
      }
      std::sort(locals.begin(), locals.end());
      for (std::size_t i = 1; i < locals.size(); ++i)
        if (locals[i].first == locals[i - 1].first)
          throw InputError(call() + name + ": rank " + std::to_string(locals[i].first) +
                           " is a member twice");
      if (defs.comms.empty()) {
        trace::Communicator world{"MPI_COMM_WORLD", {}};
        for (std::size_t m = 0; m < t.ranks(); ++m) world.members.push_back(static_cast<Rank>(m));
        defs.comms.push_back(std::move(world));
        local_rank.emplace_back();  // MPI_COMM_WORLD: the communicator rank is the world rank
        trace_comm.push_back(trace::kCommWorld);
      }
      if (defs.comms.size() >= kMaxComms)
        throw InputError(call() + name + ": the trace's collectives use more than " + std::to_string(kMaxComms) +
                         " communicators, more than a replay holds");
      comm_map[c] = static_cast<std::uint32_t>(defs.comms.size());
      defs.comms.push_back(comm);
      local_rank.push_back(std::move(locals));
      trace_comm.push_back(c);
    }
    const std::uint32_t w = comm_map[c];
    if (local(w, r) == trace::kNoRank)
      throw InputError(call() + name + ", of which rank " + std::to_string(r) + " is not a member");
    return w;
  }
  // The workload's communicators in the order of their trace ids (they were added in the order
  // the ranks first used them); returns the collectives' new ids by their old (empty: the same),
  // which the workload applies as it reads them.
  std::vector<std::uint16_t> renumber_comms() {
    if (defs.comms.size() <= 2) return {};
    std::vector<std::uint32_t> order(defs.comms.size());
    for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin() + 1, order.end(),
              [&](std::uint32_t a, std::uint32_t b) { return trace_comm[a] < trace_comm[b]; });
    std::vector<std::uint16_t> new_id(order.size());
    std::vector<trace::Communicator> comms(order.size());
    for (std::uint32_t i = 0; i < order.size(); ++i) {
      new_id[order[i]] = static_cast<std::uint16_t>(i);  // < kMaxComms: comm_of() refuses more
      comms[i] = std::move(defs.comms[order[i]]);
    }
    defs.comms = std::move(comms);
    return new_id;
  }

  // Rank g's rank in workload communicator w, or kNoRank if it is not a member.
  Rank local(std::uint32_t w, Rank g) const {
    if (w == trace::kCommWorld) return g;
    const auto& v = local_rank[w];
    const auto it = std::lower_bound(v.begin(), v.end(), std::make_pair(g, Rank{0}));
    return it != v.end() && it->first == g ? it->second : trace::kNoRank;
  }

  // The v-collectives (and MPI_Reduce_scatter) of every rank, in order, per communicator: a
  // timed trace holds each call's totals only (CollEnd: bytes sent, received), but those of all
  // members are the counts of a gatherv, scatterv, allgatherv or reduce-scatter. The k-th such
  // call on a communicator of each of its members is one instance.
  struct VCall {
    MpiOp op;
    std::uint64_t sent, got;
  };
  struct VComm {
    std::vector<std::vector<VCall>> calls;  // per world rank
    std::vector<std::size_t> next;          // per world rank: its next v-collective there
  };
  std::map<std::uint32_t, VComm> vcalls;  // by trace communicator id
  CountsPool pool;

  static bool is_v(MpiOp op) { return trace::base_collective(op) != op || op == MpiOp::ReduceScatter; }

  void collect_vcollectives() {
    for (std::size_t r = 0; r < t.ranks(); ++r)
      for (const auto& e : t.locations[r].events)
        if (e.kind == EventKind::CollEnd && is_v(e.op)) {
          VComm& v = vcalls[e.ref];
          if (v.calls.empty()) {
            v.calls.resize(t.ranks());
            v.next.assign(t.ranks(), 0);
          }
          v.calls[r].push_back({e.op, e.bytes, e.aux});
        }
  }

  // The totals of every member of trace communicator c (in its rank order) at rank r's next
  // v-collective `op` there, or nothing when the members do not agree on it (the call is then
  // approximated). comm_of() has checked c's members.
  std::optional<std::vector<VCall>> instance(Rank r, MpiOp op, std::uint32_t c) {
    VComm& v = vcalls.at(c);
    const std::size_t k = v.next[static_cast<std::size_t>(r)]++;
    std::vector<VCall> members;
    const auto add = [&](Rank m) {
      const auto& calls = v.calls[static_cast<std::size_t>(m)];
      if (k >= calls.size() || calls[k].op != op) return false;
      members.push_back(calls[k]);
      return true;
    };
    if (c == trace::kCommWorld) {
      for (std::size_t m = 0; m < t.ranks(); ++m)
        if (!add(static_cast<Rank>(m))) return std::nullopt;
    } else {
      for (const Rank m : t.defs.comms[c].members)
        if (!add(m)) return std::nullopt;
    }
    return members;
  }

  Action vaction(ActionKind k, std::uint64_t bytes, Rank root, std::uint32_t w, std::vector<std::uint64_t> send,
                 std::vector<std::uint64_t> recv) {
    Action a = coll(k, bytes, root, w);
    a.counts = pool.intern(Counts{std::move(send), std::move(recv)});
    return a;
  }

  // A v-collective with the counts the members' totals give: exact for gatherv (the root
  // receives what each member sent), scatterv, allgatherv and reduce-scatter (each member's
  // block is what it received); an alltoallv's pairs are not in the trace: rank i sends
  // floor(sent_i × received_j / total) to rank j, the same number rank j expects (noted).
  // `root` and the counts are in the numbering of workload communicator w (trace's c).
  bool replay_v(Rank r, MpiOp op, Rank root, std::uint32_t w, std::uint32_t c, RankBuilder& b) {
    const auto members = instance(r, op, c);
    if (!members) return false;
    const auto n = members->size();
    const Rank me_local = local(w, r);
    const auto& me = (*members)[static_cast<std::size_t>(me_local)];
    std::vector<std::uint64_t> sent(n), got(n);
    for (std::size_t i = 0; i < n; ++i) {
      sent[i] = (*members)[i].sent;
      got[i] = (*members)[i].got;
    }
    // Score-P counts an MPI_Allgatherv's send as going to every member (P x the rank's block)
    // and an MPI_Reduce_scatter's receive as P x the rank's block.
    const auto per_member = [&](std::vector<std::uint64_t>& v) {
      for (auto& x : v) x = n > 0 && x % n == 0 ? x / n : x;
    };
    if (scorep && op == MpiOp::Allgatherv) per_member(sent);
    if (scorep && op == MpiOp::ReduceScatter) per_member(got);
    switch (op) {
      case MpiOp::Gatherv:
        b.push(vaction(ActionKind::Gatherv, me.sent, root, w, {},
                       me_local == root ? sent : std::vector<std::uint64_t>{}));
        return true;
      case MpiOp::Scatterv:
        b.push(vaction(ActionKind::Scatterv, me.got, root, w,
                       me_local == root ? got : std::vector<std::uint64_t>{}, {}));
        return true;
      case MpiOp::Allgatherv:
        b.push(vaction(ActionKind::Allgatherv, sent[static_cast<std::size_t>(me_local)], 0, w, {}, sent));
        return true;
      case MpiOp::ReduceScatter:
        b.push(vaction(ActionKind::ReduceScatter, 0, 0, w, {}, got));
        return true;
      case MpiOp::Alltoallv: {
        long double total = 0;
        for (const auto g : got) total += static_cast<long double>(g);
        std::vector<std::uint64_t> to(n, 0), from(n, 0);
        const auto i = static_cast<std::size_t>(me_local);
        if (total > 0)
          for (std::size_t j = 0; j < n; ++j) {
            to[j] = static_cast<std::uint64_t>(static_cast<long double>(sent[i]) * got[j] / total);
            from[j] = static_cast<std::uint64_t>(static_cast<long double>(sent[j]) * got[i] / total);
          }
        notes.add("MPI_Alltoallv calls replayed with per-pair sizes in proportion to each rank's totals (the trace "
                  "holds only those)");
        b.push(vaction(ActionKind::Alltoallv, 0, 0, w, std::move(to), std::move(from)));
        return true;
      }
      default:
        return false;
    }
  }

  // "main", for compute outside every region: added to the definitions on first use only.
  trace::RegionId main_region() {
    if (!main_id) main_id = defs.region("main");
    return *main_id;
  }
  std::optional<trace::RegionId> main_id;

  std::vector<Action> rank(Rank r) {
    const auto& ev = t.locations[static_cast<std::size_t>(r)].events;
    std::vector<Action> out;
    RankBuilder b(r, o, defs, out);
    Slots slots;
    std::unordered_map<std::uint64_t, std::int32_t> slot_of;  // trace request id -> slot
    std::vector<std::int32_t> outstanding;                    // slots, in posting order
    std::unordered_map<std::uint64_t, std::size_t> irecv_done;  // request id -> IrecvComplete index
    bool irecv_lookup = false;
    std::vector<trace::RegionId> stack;  // workload region ids of open user regions
    bool started = false;
    double last = 0;

    bool finalized = false;  // MPI_Finalize reached: the replay ends there
    bool outside = false;  // computation outside every region of the trace: in `main`
    const auto gap_to = [&](double time) {
      if (!started) return;
      if (stack.empty() && time > last) outside = true;
      b.compute(time - last, false, stack.empty() ? main_region() : stack.back());
      last = time;
    };
    for (std::size_t i = 0; i < ev.size(); ++i) {
      const auto& e = ev[i];
      if (e.kind != EventKind::Enter && e.kind != EventKind::Leave) {
        notes.add("communication events outside any MPI call ignored");
        continue;
      }
      const auto& region = t.defs.regions[e.ref];
      if (region.op == MpiOp::None) {
        if (!started) {
          started = true;
          last = e.time;
        }
        gap_to(e.time);
        const auto w = region_map[e.ref];
        if (e.kind == EventKind::Enter) {
          stack.push_back(w);
          b.enter(w);
        } else if (!stack.empty() && stack.back() == w) {
          stack.pop_back();
          b.leave(w);
        } else {
          notes.add("region exits without a matching entry ignored");
        }
        continue;
      }
      if (e.kind == EventKind::Leave) {
        notes.add("MPI call exits without a matching entry ignored");
        continue;
      }
      // An MPI call: find its Leave (nested MPI regions, as PMPI layers write them, are inside).
      std::size_t end = i + 1;
      for (int depth = 1; end < ev.size(); ++end) {
        const auto& x = ev[end];
        if (x.kind == EventKind::Enter && t.defs.regions[x.ref].op != MpiOp::None) ++depth;
        if (x.kind == EventKind::Leave && t.defs.regions[x.ref].op != MpiOp::None && --depth == 0) break;
      }
      if (end >= ev.size()) {
        notes.add("MPI calls never left (the trace ends inside them) not replayed");
        break;
      }
      if (region.op == MpiOp::Init) {
        started = true;
        last = ev[end].time;
        i = end;
        continue;
      }
      if (region.op == MpiOp::Finalize) {
        gap_to(e.time);
        finalized = true;
        break;
      }
      if (!started) {
        started = true;
        last = e.time;
      }
      gap_to(e.time);
      call(r, i, end, region.op, b, slots, slot_of, outstanding, irecv_done, irecv_lookup);
      last = ev[end].time;
      i = end;
    }
    // The regions around MPI_Finalize (main, Score-P's program region) end with the replay;
    // others were never left in the trace.
    while (!stack.empty()) {
      b.leave(stack.back());
      stack.pop_back();
      if (!finalized) notes.add("regions still open at the end closed");
    }
    if (!outstanding.empty()) {
      Action a;
      a.kind = ActionKind::Waitall;
      b.push(a);
      notes.add("ranks with requests never completed: a final MPI_Waitall added");
    }
    if (outside) b.wrap(main_region());
    iterations = std::max(iterations, b.iterations());
    return out;
  }

  void call(Rank r, std::size_t enter, std::size_t leave, MpiOp op, RankBuilder& b, Slots& slots,
            std::unordered_map<std::uint64_t, std::int32_t>& slot_of, std::vector<std::int32_t>& outstanding,
            std::unordered_map<std::uint64_t, std::size_t>& irecv_done, bool& irecv_lookup) {
    const auto& ev = t.locations[static_cast<std::size_t>(r)].events;
    const trace::Event* send = nullptr;
    const trace::Event* recv = nullptr;
    const trace::Event* coll_end = nullptr;
    std::vector<std::uint64_t> completions;
    for (std::size_t k = enter + 1; k < leave; ++k) {
      const auto& x = ev[k];
      switch (x.kind) {
        case EventKind::Send:
          send = &x;
          break;
        case EventKind::Recv:
          recv = &x;
          break;
        case EventKind::IsendStart: {
          if (slot_of.count(x.aux)) {
            notes.add("requests reused before completion ignored");
            break;
          }
          const auto s = slots.take();
          slot_of[x.aux] = s;
          outstanding.push_back(s);
          Action a = p2p_action(ActionKind::Isend, x.peer, x.tag, x.bytes);
          a.request = s;
          comm_check(x);
          b.push(a);
          break;
        }
        case EventKind::IrecvPost: {
          if (slot_of.count(x.aux)) {
            notes.add("requests reused before completion ignored");
            break;
          }
          Rank src = x.peer;
          std::int32_t tag = x.tag;
          std::uint64_t bytes = x.bytes;
          if (src == trace::kNoRank) {
            if (!irecv_lookup) {
              for (std::size_t j = 0; j < ev.size(); ++j)
                if (ev[j].kind == EventKind::IrecvComplete) irecv_done.emplace(ev[j].aux, j);
              irecv_lookup = true;
            }
            // The completion after this posting that carries the same request id.
            const auto it = irecv_done.find(x.aux);
            std::size_t j = it == irecv_done.end() ? ev.size() : it->second;
            if (j < k) {  // request ids reused: search forward
              j = ev.size();
              for (std::size_t m = k + 1; m < ev.size(); ++m)
                if (ev[m].kind == EventKind::IrecvComplete && ev[m].aux == x.aux) {
                  j = m;
                  break;
                }
            }
            if (j >= ev.size()) {
              notes.add("MPI_Irecv requests never completed not replayed");
              break;
            }
            src = ev[j].peer;
            tag = ev[j].tag;
            bytes = ev[j].bytes;
          }
          const auto s = slots.take();
          slot_of[x.aux] = s;
          outstanding.push_back(s);
          Action a = p2p_action(ActionKind::Irecv, src, tag, bytes);
          a.request = s;
          comm_check(x);
          b.push(a);
          break;
        }
        case EventKind::IsendComplete:
        case EventKind::IrecvComplete:
          completions.push_back(x.aux);
          break;
        case EventKind::CollEnd:
          coll_end = &x;
          break;
        default:
          break;
      }
    }
    switch (op) {
      case MpiOp::Send:
      case MpiOp::Ssend:
        if (!send) return missing(op);
        comm_check(*send);
        b.push(p2p_action(op == MpiOp::Send ? ActionKind::Send : ActionKind::Ssend, send->peer, send->tag, send->bytes));
        return;
      case MpiOp::Recv:
        if (!recv) return missing(op);
        comm_check(*recv);
        b.push(p2p_action(ActionKind::Recv, recv->peer, recv->tag, recv->bytes));
        return;
      case MpiOp::Sendrecv: {
        if (!send || !recv) return missing(op);
        comm_check(*send);
        Action a = p2p_action(ActionKind::Sendrecv, send->peer, send->tag, send->bytes);
        a.peer2 = recv->peer;
        a.tag2 = recv->tag;
        a.bytes2 = recv->bytes;
        b.push(a);
        return;
      }
      case MpiOp::Isend:
      case MpiOp::Irecv:
        return;  // pushed above
      default:
        break;
    }
    if (!completions.empty()) {
      std::vector<std::int32_t> done;
      for (auto id : completions) {
        const auto it = slot_of.find(id);
        if (it == slot_of.end()) {
          notes.add("completions of unknown requests ignored");
          continue;
        }
        done.push_back(it->second);
        slot_of.erase(it);
      }
      if (done.empty()) return;
      if (op != MpiOp::Waitall && done.size() == 1) {
        Action a;
        a.kind = ActionKind::Wait;
        a.request = done.front();
        b.push(a);
      } else {
        // `done` are distinct outstanding slots: as many as outstanding means all of them;
        // fewer, exactly those (in_waitall Waits name them), the others stay outstanding.
        if (done.size() < outstanding.size())
          for (auto s : done) {
            Action a;
            a.kind = ActionKind::Wait;
            a.request = s;
            a.in_waitall = true;
            b.push(a);
          }
        Action a;
        a.kind = ActionKind::Waitall;
        b.push(a);
      }
      for (auto s : done) {
        outstanding.erase(std::find(outstanding.begin(), outstanding.end(), s));
        slots.give_back(s);
      }
      return;
    }
    if (trace::is_collective(op)) {
      if (!coll_end) return missing(op);
      // On the same group: the trace's communicator (its members in communicator-rank
      // order); the trace names the root by its world rank, MPI by its rank there.
      const std::uint32_t w = comm_of(r, enter, op, coll_end->ref);
      const std::uint64_t sent = coll_end->bytes;
      const std::uint64_t got = coll_end->aux;
      const bool rooted = op == MpiOp::Bcast || op == MpiOp::Reduce || op == MpiOp::Gather || op == MpiOp::Scatter ||
                          op == MpiOp::Gatherv || op == MpiOp::Scatterv;
      Rank root = coll_end->peer;
      if (rooted && root != trace::kNoRank && w != trace::kCommWorld) {
        root = local(w, coll_end->peer);
        if (root == trace::kNoRank)
          throw InputError(at(r, enter) + ": " + std::string(trace::mpi_name(op)) + " with root " +
                           std::to_string(coll_end->peer) + " on communicator '" + defs.comms[w].name +
                           "', of which rank " + std::to_string(coll_end->peer) + " is not a member");
      }
      const auto& comm = t.defs.comms[coll_end->ref];
      const auto p = static_cast<std::uint64_t>(std::max<std::size_t>(comm.members.size(), 1));
      if (is_v(op)) {
        if (replay_v(r, op, root, w, coll_end->ref, b)) return;
        notes.add(std::string(trace::mpi_name(op)) + " calls the ranks do not agree on replayed as " +
                  std::string(trace::mpi_name(trace::base_collective(op))) + " of the rank's own size");
      }
      // The payload (bytes per rank; per pair for MPI_Alltoall) from the record's totals: a
      // Score-P trace counts what the call moves in all, not its payload (scorep_payload):
      // the root of MPI_Bcast "sends" the payload to every member, MPI_Allreduce and
      // MPI_Allgather send and receive it P times. Replayed as payloads, SMPI moved P times the
      // data and reported MPI_ERR_TRUNCATE on the root's tree children.
      const MpiOp base = trace::base_collective(op);
      const bool at_root = root != trace::kNoRank && local(w, r) == root;
      const auto payload = [&](std::uint64_t own) {
        if (scorep)
          if (const auto s = scorep_payload(base, sent, got, p, at_root)) return *s;
        return own;
      };
      switch (base) {
        case MpiOp::Barrier:
          b.push(coll(ActionKind::Barrier, 0, 0, w));
          return;
        case MpiOp::Bcast:
          b.push(coll(ActionKind::Bcast, payload(std::max(sent, got)), root, w));
          return;
        case MpiOp::Reduce:
          b.push(coll(ActionKind::Reduce, payload(sent), root, w));
          return;
        case MpiOp::Allreduce:
          b.push(coll(ActionKind::Allreduce, payload(sent), 0, w));
          return;
        case MpiOp::Gather:
          b.push(coll(ActionKind::Gather, payload(sent), root, w));
          return;
        case MpiOp::Scatter:
          b.push(coll(ActionKind::Scatter, payload(got), root, w));
          return;
        case MpiOp::Allgather:
          b.push(coll(ActionKind::Allgather, payload(sent), 0, w));
          return;
        case MpiOp::Alltoall:
          b.push(coll(ActionKind::Alltoall, payload(sent / p), 0, w));
          return;
        default:
          notes.add(std::string(trace::mpi_name(op)) + " calls replayed as MPI_Allreduce of their send size");
          b.push(coll(ActionKind::Allreduce, sent, 0, w));
          return;
      }
    }
    if (op == MpiOp::Wait || op == MpiOp::Waitall) notes.add("MPI_Wait/MPI_Waitall calls completing no request skipped");
  }

  // The payload (bytes per rank; per pair for MPI_Alltoall) of a Score-P collective record
  // of `sent` and `got` bytes on P ranks (`at_root`: this rank is the root). Score-P's
  // conventions (its MPI adapter, scorep_mpi_coll_bytes_*; docs/formats.md): Bcast: the root
  // sends P x and receives 1 x the payload, the others receive it; Reduce and Gather: every
  // rank sends it, the root receives P x; Scatter: the root sends P x, every rank receives
  // it; Allreduce, Allgather, Alltoall: P x sent and received. With MPI_IN_PLACE the root's
  // (or every rank's) own share is left out: (P − 1) x, or 0 where it was 1 x. Nothing for
  // the others (the v-collectives' blocks: replay_v).
  static std::optional<std::uint64_t> scorep_payload(MpiOp op, std::uint64_t sent, std::uint64_t got, std::uint64_t p,
                                                     bool at_root) {
    // total = P x payload, or (P − 1) x in place: a total both divide is taken as P x (an
    // in-place allreduce of such a size would be replayed (P − 1)/P as large).
    const auto share = [p](std::uint64_t total) {
      if (p <= 1 || total % p == 0) return total / p;
      return total % (p - 1) == 0 ? total / (p - 1) : total / p;
    };
    // A root that sends (receives) nothing passed MPI_IN_PLACE: (P − 1) x the payload.
    const auto others = [p](std::uint64_t total) { return p > 1 ? total / (p - 1) : total; };
    switch (op) {
      case MpiOp::Bcast: return got > 0 ? got : share(sent);
      case MpiOp::Reduce:
      case MpiOp::Gather: return sent > 0 || !at_root ? sent : others(got);
      case MpiOp::Scatter: return got > 0 || !at_root ? got : others(sent);
      case MpiOp::Allreduce:
      case MpiOp::Allgather:
      case MpiOp::Alltoall: return share(std::max(sent, got));
      default: return std::nullopt;
    }
  }

  void missing(MpiOp op) {
    notes.add(std::string(trace::mpi_name(op)) + " calls without their communication record skipped");
  }

  void comm_check(const trace::Event& e) {
    if (e.ref != trace::kCommWorld) notes.add("point-to-point messages on other communicators replayed on MPI_COMM_WORLD");
  }
};

// ---------------------------------------------------------------- TI traces ----

// The p2p key SMPI's replayer files requests under.
struct Key {
  Rank src, dst;
  std::int32_t tag;
  bool operator==(const Key&) const = default;
};
struct KeyHash {
  std::size_t operator()(const Key& k) const {
    const auto a = static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.src)) << 32 |
                   static_cast<std::uint32_t>(k.dst);
    return std::hash<std::uint64_t>()(a * 0x9e3779b97f4a7c15ULL ^ static_cast<std::uint32_t>(k.tag));
  }
};

// The look-ahead of a TI `waitall N`: which of a rank's requests a later record names.
// SMPI records for MPI_Waitall only the count the application passed (null requests
// included), not which requests; the `wait SRC DST TAG` records that follow name the requests
// they complete, which were therefore still pending at the waitall and are not its. Fed the
// rank's records in order, this numbers the postings (isend, Issend, irecv) from 0 and marks
// those a later record completes: a `wait` names the oldest pending posting with its key (a
// `wait` without a key, and a `waitAny`/`waitsome`, the oldest pending posting, as the replay
// then completes it). A posting still pending at a waitall that no record has named yet stays
// nameable until its key is posted again: then the waitall completed it (an application that
// re-posts a request of the same peer and tag has finished the old one). Bounded: two bits per
// posting; the working state is the pending postings, and once more than kMaxPending
// are pending, the oldest that crossed a waitall is given to that waitall (counted in
// `bounded`). Time: amortised O(1) per record.
class WaitLookahead {
 public:
  static constexpr std::size_t kMaxPending = std::size_t{1} << 16;

  void post(const Key& k) {
    auto& q = by_key_[k];
    while (!q.empty() && q.front() < boundary_) {  // crossed a waitall, key posted again
      finish(q.front());
      q.pop_front();
    }
    const std::uint64_t n = named_.size();
    named_.push_back(false);
    done_.push_back(false);
    q.push_back(n);
    order_.emplace_back(n, k);
    ++pending_;
    while (pending_ > kMaxPending) {
      drop_stale();
      const auto [o, key] = order_.front();
      if (o >= boundary_) break;  // every pending posting came after the last waitall
      pop_front_of(key);          // the oldest pending posting is the oldest of its key
      finish(o);
      ++bounded;
    }
  }
  // A `wait` naming `k` (null: a wait without a key, or a waitAny).
  void wait(const Key* k) {
    if (k == nullptr) {
      drop_stale();
      if (order_.empty()) return;
      const auto [o, key] = order_.front();
      pop_front_of(key);
      name(o);
      return;
    }
    const auto it = by_key_.find(*k);
    if (it == by_key_.end()) return;
    const std::uint64_t o = it->second.front();
    it->second.pop_front();
    if (it->second.empty()) by_key_.erase(it);
    name(o);
  }
  void waitall() { boundary_ = named_.size(); }
  // Whether a later record completes posting `n` (then a waitall before it does not).
  bool named(std::uint64_t n) const { return n < named_.size() && named_[n]; }

  std::uint64_t bounded = 0;  // postings given to their waitall by the kMaxPending bound

 private:
  void finish(std::uint64_t o) {
    done_[o] = true;
    --pending_;
  }
  void name(std::uint64_t o) {
    named_[o] = true;
    finish(o);
  }
  void pop_front_of(const Key& key) {
    const auto it = by_key_.find(key);
    it->second.pop_front();
    if (it->second.empty()) by_key_.erase(it);
  }
  // Drops finished postings from the front of order_, and compacts it when finished ones
  // behind a long-pending front outnumber the pending ones.
  void drop_stale() {
    while (!order_.empty() && done_[order_.front().first]) order_.pop_front();
    if (order_.size() > 2 * pending_ + 1024)
      std::erase_if(order_, [&](const auto& e) { return done_[e.first]; });
  }

  std::vector<bool> named_;  // per posting
  std::vector<bool> done_;   // per posting: named, or given to a waitall
  // Pending postings per key, oldest first; and all of them (and some finished ones) in order.
  std::unordered_map<Key, std::deque<std::uint64_t>, KeyHash> by_key_;
  std::deque<std::pair<std::uint64_t, Key>> order_;
  std::uint64_t boundary_ = 0;  // postings before the last waitall crossed it
  std::size_t pending_ = 0;
};

// Every collective record of every rank, by instance: the k-th collective of each rank.
bool is_ti_collective(TiOp op) {
  return op >= TiOp::Barrier && op <= TiOp::Exscan;
}

// Where a TI conversion reads its records: a TiTrace in memory (whose ranks may be freed as
// they are converted) or a TiReader parsing one rank's file at a time.
class TiSource {
 public:
  virtual ~TiSource() = default;
  virtual std::size_t ranks() const = 0;
  virtual const std::vector<std::string>& files() const = 0;
  // Rank r's records, valid until records() of another rank or done(r).
  virtual const std::vector<TiRecord>& records(std::size_t r) = 0;
  virtual void done(std::size_t /*r*/) {}  // rank r is converted
};

class MemorySource : public TiSource {
 public:
  MemorySource(const trace::TiTrace& ti, trace::TiTrace* release) : ti_(ti), release_(release) {}
  std::size_t ranks() const override { return ti_.ranks.size(); }
  const std::vector<std::string>& files() const override { return ti_.files; }
  const std::vector<TiRecord>& records(std::size_t r) override { return ti_.ranks[r]; }
  void done(std::size_t r) override {
    if (release_ != nullptr) std::vector<TiRecord>().swap(release_->ranks[r]);
  }

 private:
  const trace::TiTrace& ti_;
  trace::TiTrace* release_;
};

class ReaderSource : public TiSource {
 public:
  explicit ReaderSource(const std::string& path) : reader_(path) {}
  std::size_t ranks() const override { return reader_.ranks(); }
  const std::vector<std::string>& files() const override { return reader_.files(); }
  const std::vector<TiRecord>& records(std::size_t r) override { return reader_.records(r); }

 private:
  trace::TiReader reader_;
};

struct TiConverter {
  TiSource& ti;
  const ReplayOptions& o;
  trace::Definitions defs;
  Notes notes;
  int iterations = 0;
  // Resolved sources of ANY_SOURCE receives, per rank in program order.
  std::vector<std::deque<Rank>> any_sources;
  // The v-collectives' per-rank sizes, each distinct vector stored once for the workload.
  CountsPool pool;

  TiConverter(TiSource& t, const ReplayOptions& opt) : ti(t), o(opt) {
    defs.region("main");
    any_sources.assign(ti.ranks(), {});
    const bool any = harmonise_collectives();
    if (any) resolve_any_source();
  }

  std::string where(Rank r, std::uint32_t line) const {
    const auto& files = ti.files();
    const std::string file = files.size() == ti.ranks() ? files[static_cast<std::size_t>(r)]
                             : files.empty()            ? std::string("TI trace")
                                                        : files.front();
    return file + ":" + std::to_string(line) + " (rank " + std::to_string(r) + ")";
  }
  std::string where(Rank r, const TiRecord& rec) const { return where(r, rec.line); }

  static bool any_source_receive(const TiRecord& rec) {
    return ((rec.op == TiOp::Recv || rec.op == TiOp::Irecv) && rec.peer == trace::kAnySource) ||
           (rec.op == TiOp::Sendrecv && rec.peer2 == trace::kAnySource);
  }

  // Sends to each (receiver, tag) per source, minus the receives that name that source: what
  // is left is what the ANY_SOURCE receives of that receiver and tag take, round robin over
  // the sources in rank order. (A pass over every rank's records; only for traces that have
  // such receives.)
  void resolve_any_source() {
    const auto n = ti.ranks();
    std::map<std::tuple<Rank, std::int32_t, Rank>, std::int64_t> left;  // (dst, tag, src) -> sends - receives
    // Per receiver: the tags and lines of its ANY_SOURCE receives, in program order.
    std::vector<std::vector<std::pair<std::int32_t, std::uint32_t>>> wanted(n);
    for (std::size_t s = 0; s < n; ++s) {
      for (const auto& rec : ti.records(s)) {
        const auto src = static_cast<Rank>(s);
        if (rec.op == TiOp::Send || rec.op == TiOp::Ssend || rec.op == TiOp::Isend || rec.op == TiOp::Issend)
          ++left[{rec.peer, rec.tag, src}];
        if (rec.op == TiOp::Sendrecv) ++left[{rec.peer, 0, src}];
        if ((rec.op == TiOp::Recv || rec.op == TiOp::Irecv) && rec.peer != trace::kAnySource)
          --left[{src, rec.tag, rec.peer}];
        if (rec.op == TiOp::Sendrecv && rec.peer2 != trace::kAnySource) --left[{src, 0, rec.peer2}];
        if (any_source_receive(rec)) wanted[s].emplace_back(rec.op == TiOp::Sendrecv ? 0 : rec.tag, rec.line);
      }
    }
    for (std::size_t d = 0; d < n; ++d) {
      std::map<std::int32_t, std::size_t> turn;  // per tag: where the round robin stands
      for (const auto& [tag, line] : wanted[d]) {
        const auto dst = static_cast<Rank>(d);
        Rank chosen = trace::kNoRank;
        for (std::size_t k = 0; k < n && chosen == trace::kNoRank; ++k) {
          const auto src = static_cast<Rank>((turn[tag] + k) % n);
          auto it = left.find({dst, tag, src});
          if (it != left.end() && it->second > 0) {
            --it->second;
            chosen = src;
            turn[tag] = (static_cast<std::size_t>(src) + 1) % n;
          }
        }
        if (chosen == trace::kNoRank)
          throw InputError(where(dst, line) + ": a receive from MPI_ANY_SOURCE (-333) with tag " + std::to_string(tag) +
                           " that no send to rank " + std::to_string(d) + " is left for");
        any_sources[d].push_back(chosen);
        notes.add("MPI_ANY_SOURCE receives given the source of a send left over for them (round robin)");
      }
    }
  }

  // Every rank calls the same collectives in the same order (a TI trace records no
  // communicator: all are on MPI_COMM_WORLD). One pass over every rank's records, keeping rank
  // 0's sequence; returns whether some rank receives from MPI_ANY_SOURCE.
  bool harmonise_collectives() {
    struct Call {
      TiOp op;
      std::uint32_t line;
    };
    std::vector<Call> first;                       // rank 0's collectives
    std::vector<std::size_t> count(ti.ranks(), 0);  // per rank
    std::vector<std::uint32_t> last(ti.ranks(), 0);  // line of each rank's last collective
    struct Mismatch {
      std::size_t k;
      TiOp op;
      std::uint32_t line;
    };
    std::vector<std::optional<Mismatch>> mismatch(ti.ranks());  // each rank's first differing collective
    bool any = false;
    for (std::size_t r = 0; r < ti.ranks(); ++r) {
      for (const auto& rec : ti.records(r)) {
        any = any || any_source_receive(rec);
        if (!is_ti_collective(rec.op)) continue;
        const std::size_t k = count[r]++;
        last[r] = rec.line;
        if (r == 0) first.push_back({rec.op, rec.line});
        else if (!mismatch[r] && k < first.size() && first[k].op != rec.op) mismatch[r] = Mismatch{k, rec.op, rec.line};
      }
    }
    const std::size_t instances = *std::max_element(count.begin(), count.end());
    for (std::size_t r = 0; r < count.size(); ++r) {
      if (count[r] != instances)
        throw InputError((count[r] > 0 ? where(static_cast<Rank>(r), last[r]) : "rank " + std::to_string(r)) +
                         ": rank " + std::to_string(r) + " calls " + std::to_string(count[r]) +
                         " collectives, other ranks " + std::to_string(instances) +
                         " (every collective of a TI trace is on MPI_COMM_WORLD)");
      if (mismatch[r]) {
        const Mismatch& m = *mismatch[r];
        throw InputError(where(static_cast<Rank>(r), m.line) + ": collective " + std::to_string(m.k) + " is '" +
                         std::string(trace::ti_op_name(m.op)) + "' here but '" +
                         std::string(trace::ti_op_name(first[m.k].op)) + "' on rank 0 (" +
                         where(0, first[m.k].line) + ")");
      }
    }
    return any;
  }

  // The look-ahead of the rank's waitalls: its records read once before the conversion.
  WaitLookahead lookahead(Rank r) {
    WaitLookahead look;
    const auto& recs = ti.records(static_cast<std::size_t>(r));
    // Without wait or waitAny records nothing is named later: every waitall completes all.
    if (std::none_of(recs.begin(), recs.end(),
                     [](const TiRecord& rec) { return rec.op == TiOp::Wait || rec.op == TiOp::Waitany; }))
      return look;
    for (const auto& rec : recs) {
      switch (rec.op) {
        case TiOp::Isend:
        case TiOp::Issend:
          look.post(Key{r, rec.peer, rec.tag});
          break;
        case TiOp::Irecv:
          look.post(Key{rec.peer, r, rec.tag});
          break;
        case TiOp::Wait:
          if (rec.peer2 != trace::kNoRank) {
            const Key key{rec.peer, rec.peer2, rec.tag};
            look.wait(&key);
          } else {
            look.wait(nullptr);
          }
          break;
        case TiOp::Waitany:
          look.wait(nullptr);
          break;
        case TiOp::Waitall:
          look.waitall();
          break;
        default:
          break;
      }
    }
    if (look.bounded)
      notes.add("requests pending at a waitall given to it without a look-ahead (more than " +
                    std::to_string(WaitLookahead::kMaxPending) + " requests of the rank pending)",
                look.bounded);
    return look;
  }

  std::vector<Action> rank(Rank r) {
    std::vector<Action> out;
    RankBuilder b(r, o, defs, out);
    const trace::RegionId main = defs.region("main");
    Slots slots;
    const WaitLookahead look = lookahead(r);
    struct Pending {
      Key key;
      std::int32_t slot;
      std::uint64_t posting;  // numbered as WaitLookahead numbers them
    };
    std::vector<Pending> outstanding;  // in posting order
    std::uint64_t postings = 0;
    std::uint64_t fewer = 0;  // waitalls completing fewer than all outstanding requests
    auto& any = any_sources[static_cast<std::size_t>(r)];
    const auto source = [&](Rank peer) {
      if (peer != trace::kAnySource) return peer;
      const Rank s = any.front();
      any.pop_front();
      return s;
    };
    const auto post = [&](ActionKind k, Rank peer, const TiRecord& rec, Key key) {
      Action a = p2p_action(k, peer, rec.tag, rec.bytes);
      a.request = slots.take();
      outstanding.push_back(Pending{key, a.request, postings++});
      b.push(a);
    };
    const auto complete = [&](std::size_t idx) {
      Action a;
      a.kind = ActionKind::Wait;
      a.request = outstanding[idx].slot;
      slots.give_back(a.request);
      outstanding.erase(outstanding.begin() + static_cast<std::ptrdiff_t>(idx));
      b.push(a);
    };
    for (const auto& rec : ti.records(static_cast<std::size_t>(r))) {
      switch (rec.op) {
        case TiOp::Compute:
          b.compute(rec.amount, true, main);
          break;
        case TiOp::Sleep:
          b.compute(rec.amount, false, main);
          break;
        case TiOp::Send:
          b.push(p2p_action(ActionKind::Send, rec.peer, rec.tag, rec.bytes));
          break;
        case TiOp::Ssend:
          b.push(p2p_action(ActionKind::Ssend, rec.peer, rec.tag, rec.bytes));
          break;
        case TiOp::Isend:
        case TiOp::Issend:
          if (rec.op == TiOp::Issend) notes.add("MPI_Issend replayed as MPI_Isend (the engine has no Issend)");
          post(ActionKind::Isend, rec.peer, rec, Key{r, rec.peer, rec.tag});
          break;
        case TiOp::Recv:
          b.push(p2p_action(ActionKind::Recv, source(rec.peer), rec.tag, rec.bytes));
          break;
        case TiOp::Irecv:
          // SMPI files an ANY_SOURCE request under the source it was traced with (-333).
          post(ActionKind::Irecv, source(rec.peer), rec, Key{rec.peer, r, rec.tag});
          break;
        case TiOp::Wait: {
          if (outstanding.empty()) {
            notes.add("wait records with no outstanding request skipped (completed by an earlier test, as SMPI assumes)");
            break;
          }
          std::size_t idx = 0;
          if (rec.peer2 != trace::kNoRank) {
            const Key key{rec.peer, rec.peer2, rec.tag};
            idx = outstanding.size();
            for (std::size_t k = 0; k < outstanding.size(); ++k)
              if (outstanding[k].key == key) {
                idx = k;
                break;
              }
            if (idx == outstanding.size()) {
              notes.add("wait records with no outstanding request skipped (completed by an earlier test, as SMPI assumes)");
              break;
            }
          }
          complete(idx);
          break;
        }
        case TiOp::Test:
          notes.add("test records replayed as no-ops (a later wait or waitall completes the request)");
          break;
        case TiOp::Waitall: {
          if (outstanding.empty()) break;
          // The outstanding requests no later record names (look-ahead); all when none is named.
          const auto mine = [&](const Pending& p) { return !look.named(p.posting); };
          Action a;
          a.kind = ActionKind::Waitall;
          if (std::all_of(outstanding.begin(), outstanding.end(), mine)) {
            b.push(a);
            for (const auto& p : outstanding) slots.give_back(p.slot);
            outstanding.clear();
            break;
          }
          ++fewer;
          // Its requests to the front, the named ones after them, each in posting order.
          const auto end = std::stable_partition(outstanding.begin(), outstanding.end(), mine);
          if (end == outstanding.begin()) break;  // every one is completed later: no call
          for (auto it = outstanding.begin(); it != end; ++it) {
            Action w;
            w.kind = ActionKind::Wait;
            w.request = it->slot;
            w.in_waitall = true;
            b.push(w);
            slots.give_back(it->slot);
          }
          b.push(a);
          outstanding.erase(outstanding.begin(), end);
          break;
        }
        case TiOp::Waitany:
          if (outstanding.empty()) break;
          notes.add("waitAny/waitsome records replayed as MPI_Wait on the oldest outstanding request");
          complete(0);
          break;
        case TiOp::Testany:
          notes.add("testany/testall/testsome records replayed as no-ops");
          break;
        case TiOp::CommNoop:
          notes.add("comm_size/comm_split/comm_dup records replayed as no-ops (TI records no communicator)");
          break;
        case TiOp::Sendrecv: {
          Action a = p2p_action(ActionKind::Sendrecv, rec.peer, 0, rec.bytes);
          a.peer2 = source(rec.peer2);
          a.tag2 = 0;
          a.bytes2 = rec.bytes2;
          b.push(a);
          break;
        }
        default: {
          notes.add("collectives assumed on MPI_COMM_WORLD (TI records no communicator)");
          collective(r, rec, b, main);
          break;
        }
      }
    }
    if (fewer)
      notes.add("waitall records completing only the outstanding requests no later wait record names "
                "(SMPI's replay completes all)",
                fewer);
    if (!outstanding.empty()) {
      Action a;
      a.kind = ActionKind::Waitall;
      b.push(a);
      notes.add("ranks with requests never waited for: a final MPI_Waitall added");
    }
    b.wrap(main);  // TI has no regions: the computation is in `main`
    iterations = std::max(iterations, b.iterations());
    return out;
  }

  // A v-collective with the sizes of its record (in bytes; SMPI's replayer reads them as
  // element counts of the record's datatypes, which comes to the same bytes).
  Action vcoll(ActionKind k, std::uint64_t bytes, Rank root, std::vector<std::uint64_t> send,
               std::vector<std::uint64_t> recv) {
    Action a = coll(k, bytes, root);
    a.counts = pool.intern(Counts{std::move(send), std::move(recv)});
    return a;
  }

  void collective(Rank r, const TiRecord& rec, RankBuilder& b, trace::RegionId main) {
    switch (rec.op) {
      case TiOp::Barrier:
        b.push(coll(ActionKind::Barrier, 0));
        break;
      case TiOp::Bcast:
        b.push(coll(ActionKind::Bcast, rec.bytes, rec.root));
        break;
      case TiOp::Reduce:
        b.push(coll(ActionKind::Reduce, rec.bytes, rec.root));
        break;
      case TiOp::Allreduce:
        b.push(coll(ActionKind::Allreduce, rec.bytes));
        break;
      case TiOp::Gather:
        b.push(coll(ActionKind::Gather, rec.bytes, rec.root));
        break;
      case TiOp::Scatter:
        b.push(coll(ActionKind::Scatter, rec.bytes2, rec.root));
        break;
      case TiOp::Allgather:
        b.push(coll(ActionKind::Allgather, rec.bytes));
        break;
      case TiOp::Alltoall:
        b.push(coll(ActionKind::Alltoall, rec.bytes));
        break;
      // The receive counts of a gatherv only count at its root, the send counts of a
      // scatterv only at its root (SMPI writes zeros elsewhere).
      case TiOp::Gatherv:
        b.push(vcoll(ActionKind::Gatherv, rec.bytes, rec.root, {},
                     rec.root == r ? rec.counts : std::vector<std::uint64_t>{}));
        break;
      case TiOp::Scatterv:
        b.push(vcoll(ActionKind::Scatterv, rec.bytes2, rec.root,
                     rec.root == r ? rec.counts : std::vector<std::uint64_t>{}, {}));
        break;
      case TiOp::Allgatherv:
        b.push(vcoll(ActionKind::Allgatherv, rec.bytes, 0, {}, rec.counts));
        break;
      case TiOp::Alltoallv: {
        const auto half = static_cast<std::ptrdiff_t>(rec.counts.size() / 2);
        b.push(vcoll(ActionKind::Alltoallv, 0, 0, {rec.counts.begin(), rec.counts.begin() + half},
                     {rec.counts.begin() + half, rec.counts.end()}));
        break;
      }
      case TiOp::ReduceScatter:
        b.push(vcoll(ActionKind::ReduceScatter, 0, 0, {}, rec.counts));
        break;
      case TiOp::Scan:
      case TiOp::Exscan:
        notes.add("scan/exscan replayed as MPI_Allreduce of the same size");
        b.push(coll(ActionKind::Allreduce, rec.bytes));
        break;
      default:
        break;
    }
    // SMPI's replayer executes a reduction's flops after the collective, none too (an
    // execution of no flops).
    // (SMPI does not replay scans: waitlab's allreduce for them takes their flops if any.)
    if (rec.op == TiOp::Reduce || rec.op == TiOp::Allreduce || rec.op == TiOp::ReduceScatter ||
        ((rec.op == TiOp::Scan || rec.op == TiOp::Exscan) && rec.amount > 0))
      b.compute(rec.amount, true, main);
  }
};

std::string scale_error(const std::string& where, const std::string& text, const std::string& why) {
  return where + ": compute scale '" + text + "': " + why +
         " (expected FACTOR, REGION=FACTOR, @RANKS=FACTOR or REGION@RANKS=FACTOR; RANKS is N or N-M)";
}

}  // namespace

ComputeScale parse_compute_scale(const std::string& text, const std::string& where) {
  ComputeScale s;
  std::string factor = text;
  const auto eq = text.rfind('=');
  if (eq != std::string::npos) {
    factor = text.substr(eq + 1);
    std::string target = text.substr(0, eq);
    const auto atp = target.find('@');
    if (atp != std::string::npos) {
      const std::string ranks = target.substr(atp + 1);
      target = target.substr(0, atp);
      const auto dash = ranks.find('-');
      const std::string a = ranks.substr(0, dash);
      const std::string z = dash == std::string::npos ? a : ranks.substr(dash + 1);
      long long lo = 0, hi = 0;
      const auto ra = std::from_chars(a.data(), a.data() + a.size(), lo);
      const auto rz = std::from_chars(z.data(), z.data() + z.size(), hi);
      if (a.empty() || z.empty() || ra.ec != std::errc() || ra.ptr != a.data() + a.size() || rz.ec != std::errc() ||
          rz.ptr != z.data() + z.size() || lo < 0 || hi < lo || hi > (1 << 30))
        throw InputError(scale_error(where, text, "bad rank range '" + ranks + "'"));
      s.first = static_cast<Rank>(lo);
      s.last = static_cast<Rank>(hi);
    }
    if (target.empty() && atp == std::string::npos) throw InputError(scale_error(where, text, "nothing before '='"));
    s.region = target;
  }
  double f = 0;
  const auto r = std::from_chars(factor.data(), factor.data() + factor.size(), f);
  if (factor.empty() || r.ec != std::errc() || r.ptr != factor.data() + factor.size() || !std::isfinite(f) || f < 0)
    throw InputError(scale_error(where, text, "the factor must be a finite number >= 0"));
  s.factor = f;
  return s;
}

namespace {

// The world rank of rank `local` of communicator `comm` of the definitions (itself on
// MPI_COMM_WORLD, or when the definitions do not say).
Rank world_rank(const trace::Definitions& d, std::uint32_t comm, Rank local) {
  if (comm == trace::kCommWorld || comm >= d.comms.size() || local < 0) return local;
  const auto& m = d.comms[comm].members;
  return static_cast<std::size_t>(local) < m.size() ? m[static_cast<std::size_t>(local)] : local;
}

// Without an iteration region, iterations follow the loop structure of the calls
// (models/loops.hpp); the replay notes say what was found. The sampled ranks' actions are
// read back from the workload's tapes.
void loop_iterations(ReplayWorkload& w, ReplayReport* report) {
  const Loop loop = find_loop(w.ranks(), [&](int r) {
    std::vector<Action> out;
    out.reserve(w.tape(r).size());
    Action a;
    for (auto s = w.stream(r); s->next(a);) out.push_back(a);
    return out;
  });
  if (loop.period == 0) {
    if (report)
      report->notes.push_back("iterations: no repeating pattern of calls found (on " +
                              std::to_string(loop.ranks_sampled) +
                              " sampled ranks): each compute interval is taken as an iteration; analyses "
                              "that need iterations (idlewave) may not find the program's");
    return;
  }
  std::vector<std::size_t> intervals;
  for (Rank r = 0; r < w.ranks(); ++r) intervals.push_back(w.tape(r).computes());
  IterationSplit split = split_iterations(intervals, loop.iterations);
  if (report && (loop.period > 1 || split.uneven > 0))
    report->notes.push_back("iterations: the calls repeat every " + std::to_string(loop.period) +
                            " compute interval(s) (" + std::to_string(loop.ranks_agreeing) + " of " +
                            std::to_string(loop.ranks_sampled) + " sampled ranks): " +
                            std::to_string(split.iterations) +
                            " iterations, each rank's compute intervals split evenly among them" +
                            (split.uneven > 0 ? " (" + std::to_string(split.uneven) +
                                                    " rank(s) with intervals left over, put in their last iteration)"
                                              : std::string()));
  w.split_iterations(std::move(split.per_rank), split.iterations);
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

std::unique_ptr<Workload> finish(std::unique_ptr<ReplayWorkload> w, const ReplayOptions& o, ReplayReport* report,
                                 std::uint64_t actions) {
  if (report) report->actions = actions;
  if (o.iteration_region.empty()) loop_iterations(*w, report);
  return w;
}

}  // namespace

std::unique_ptr<Workload> replay_trace(const trace::Trace& t, const std::string& name, const ReplayOptions& o,
                                       ReplayReport* report) {
  if (t.ranks() == 0) throw InputError(name + ": the trace has no ranks to replay");
  TraceConverter c(t, o);
  std::uint64_t n = 0;
  auto tapes = to_tapes(t.ranks(), [&](Rank r) { return c.rank(r); }, [](std::size_t) {}, n);
  auto comm_ids = c.renumber_comms();
  c.notes.flush(report);
  return finish(std::make_unique<ReplayWorkload>(name, std::move(c.defs), std::move(tapes), c.iterations,
                                                 std::move(c.pool), std::move(comm_ids)),
                o, report, n);
}

namespace {

// A TI trace's ranks are converted in turn, each from its records as the source gives them,
// and then let go (source.done()).
std::unique_ptr<Workload> replay_ti_records(TiSource& source, const std::string& name, const ReplayOptions& o,
                                            ReplayReport* report) {
  if (source.ranks() == 0) throw InputError(name + ": the TI trace has no ranks to replay");
  TiConverter c(source, o);
  std::uint64_t n = 0;
  auto tapes = to_tapes(
      source.ranks(), [&](Rank r) { return c.rank(r); }, [&](std::size_t r) { source.done(r); }, n);
  c.notes.flush(report);
  return finish(std::make_unique<ReplayWorkload>(name, std::move(c.defs), std::move(tapes), c.iterations,
                                                 std::move(c.pool)),
                o, report, n);
}

}  // namespace

std::unique_ptr<Workload> replay_ti(const trace::TiTrace& ti, const std::string& name, const ReplayOptions& o,
                                    ReplayReport* report) {
  MemorySource source(ti, nullptr);
  return replay_ti_records(source, name, o, report);
}

std::unique_ptr<Workload> replay_ti(trace::TiTrace&& ti, const std::string& name, const ReplayOptions& o,
                                    ReplayReport* report) {
  MemorySource source(ti, &ti);
  return replay_ti_records(source, name, o, report);
}

std::unique_ptr<Workload> replay_ti_file(const std::string& path, const std::string& name, const ReplayOptions& o,
                                         ReplayReport* report) {
  ReaderSource source(path);
  return replay_ti_records(source, name, o, report);
}

trace::TiTrace ti_from_workload(const Workload& w, double speed, std::vector<std::string>* lost) {
  trace::TiTrace ti;
  ti.ranks.resize(static_cast<std::size_t>(w.ranks()));
  std::uint64_t regions = 0;
  std::uint64_t seconds = 0;
  std::uint64_t sub_comm = 0;
  for (Rank r = 0; r < w.ranks(); ++r) {
    auto& out = ti.ranks[static_cast<std::size_t>(r)];
    std::unordered_map<std::int32_t, Key> requests;  // slot -> (src, dst, tag)
    std::vector<std::int32_t> joined;                // slots of the Waitall to come (in_waitall)
    auto s = w.stream(r);
    Action a;
    while (s->next(a)) {
      TiRecord rec;
      switch (a.kind) {
        case ActionKind::Enter:
        case ActionKind::Leave:
          ++regions;
          continue;
        case ActionKind::Compute:
          rec.op = TiOp::Compute;
          rec.amount = a.flops ? a.amount : a.amount * speed;
          if (!a.flops) ++seconds;
          break;
        case ActionKind::Send:
        case ActionKind::Ssend:
        case ActionKind::Recv:
        case ActionKind::Isend:
        case ActionKind::Irecv:
          rec.op = a.kind == ActionKind::Send    ? TiOp::Send
                   : a.kind == ActionKind::Ssend ? TiOp::Ssend
                   : a.kind == ActionKind::Recv  ? TiOp::Recv
                   : a.kind == ActionKind::Isend ? TiOp::Isend
                                                 : TiOp::Irecv;
          rec.peer = a.peer;
          rec.tag = a.tag;
          rec.bytes = a.bytes;
          if (a.kind == ActionKind::Isend) requests[a.request] = Key{r, a.peer, a.tag};
          if (a.kind == ActionKind::Irecv) requests[a.request] = Key{a.peer, r, a.tag};
          break;
        case ActionKind::Wait: {
          if (a.in_waitall) {  // part of the Waitall that follows
            joined.push_back(a.request);
            continue;
          }
          rec.op = TiOp::Wait;
          const auto it = requests.find(a.request);
          if (it != requests.end()) {
            rec.peer = it->second.src;
            rec.peer2 = it->second.dst;
            rec.tag = it->second.tag;
            requests.erase(it);
          }
          break;
        }
        case ActionKind::Waitall:
          rec.op = TiOp::Waitall;
          if (joined.empty()) {
            rec.count = static_cast<std::uint32_t>(requests.size());
            requests.clear();
          } else {  // over some requests: the others are waited for later, as SMPI writes it
            rec.count = static_cast<std::uint32_t>(joined.size());
            for (auto slot : joined) requests.erase(slot);
            joined.clear();
          }
          break;
        case ActionKind::Sendrecv:
          rec.op = TiOp::Sendrecv;
          rec.peer = a.peer;
          rec.bytes = a.bytes;
          rec.peer2 = a.peer2;
          rec.bytes2 = a.bytes2;
          break;
        case ActionKind::Barrier:
          rec.op = TiOp::Barrier;
          break;
        case ActionKind::Bcast:
        case ActionKind::Reduce:
          rec.op = a.kind == ActionKind::Bcast ? TiOp::Bcast : TiOp::Reduce;
          rec.bytes = a.bytes;
          rec.root = a.root;
          break;
        case ActionKind::Allreduce:
          rec.op = TiOp::Allreduce;
          rec.bytes = a.bytes;
          break;
        case ActionKind::Gather:
        case ActionKind::Scatter:
          rec.op = a.kind == ActionKind::Gather ? TiOp::Gather : TiOp::Scatter;
          rec.bytes = rec.bytes2 = a.bytes;
          rec.root = a.root;
          break;
        case ActionKind::Allgather:
        case ActionKind::Alltoall:
          rec.op = a.kind == ActionKind::Allgather ? TiOp::Allgather : TiOp::Alltoall;
          rec.bytes = rec.bytes2 = a.bytes;
          break;
        case ActionKind::Gatherv:
        case ActionKind::Scatterv:
        case ActionKind::Allgatherv:
        case ActionKind::Alltoallv:
        case ActionKind::ReduceScatter: {
          // One size per rank; where the call takes none (a non-root's counts), zeros, as SMPI
          // writes them. On a sub-communicator, each member's size at its world rank and zeros
          // for the other ranks.
          const Counts* c = w.counts(a.counts);
          const auto ranks = static_cast<std::size_t>(w.ranks());
          const std::vector<Rank>* members =
              a.comm == trace::kCommWorld ? nullptr : &w.definitions().comms[a.comm].members;
          const auto sizes = [&](const std::vector<std::uint64_t>* v) {
            std::vector<std::uint64_t> world(ranks, 0);
            if (v != nullptr && members == nullptr && v->size() == ranks) world = *v;
            if (v != nullptr && members != nullptr && v->size() == members->size())
              for (std::size_t i = 0; i < v->size(); ++i) world[static_cast<std::size_t>((*members)[i])] = (*v)[i];
            return world;
          };
          const std::vector<std::uint64_t>* send = c ? &c->send : nullptr;
          const std::vector<std::uint64_t>* recv = c ? &c->recv : nullptr;
          rec.root = a.root;
          switch (a.kind) {
            case ActionKind::Gatherv:
              rec.op = TiOp::Gatherv;
              rec.bytes = a.bytes;
              rec.counts = sizes(recv);
              break;
            case ActionKind::Scatterv:
              rec.op = TiOp::Scatterv;
              rec.bytes2 = a.bytes;
              rec.counts = sizes(send);
              break;
            case ActionKind::Allgatherv:
              rec.op = TiOp::Allgatherv;
              rec.bytes = a.bytes;
              rec.counts = sizes(recv);
              rec.root = trace::kNoRank;
              break;
            case ActionKind::Alltoallv:
              rec.op = TiOp::Alltoallv;
              rec.counts = sizes(send);
              for (const auto v : sizes(recv)) rec.counts.push_back(v);
              rec.root = trace::kNoRank;
              break;
            default:
              rec.op = TiOp::ReduceScatter;
              rec.counts = sizes(recv);
              rec.root = trace::kNoRank;
              break;
          }
          break;
        }
      }
      if (a.comm != trace::kCommWorld && trace::is_collective(action_op(a.kind))) {
        ++sub_comm;
        rec.root = world_rank(w.definitions(), a.comm, a.root);
      }
      out.push_back(std::move(rec));
    }
  }
  if (lost) {
    if (regions) lost->push_back(std::to_string(regions) + " region entries and exits: TI has no regions");
    if (sub_comm)
      lost->push_back(std::to_string(sub_comm) +
                      " collective calls on sub-communicators written as calls on MPI_COMM_WORLD (TI has no "
                      "communicators; roots as world ranks)");
    if (seconds)
      lost->push_back(std::to_string(seconds) + " compute intervals in seconds written as flops at " +
                      number(speed) + " flop/s");
  }
  return ti;
}

trace::Trace logical_trace(const Workload& w, double speed) {
  trace::Trace t;
  t.defs = w.definitions();
  trace::Communicator world{"MPI_COMM_WORLD", {}};
  for (Rank r = 0; r < w.ranks(); ++r) world.members.push_back(r);
  if (t.defs.comms.empty())
    t.defs.comms.push_back(world);
  else
    t.defs.comms[trace::kCommWorld] = world;
  t.locations.resize(static_cast<std::size_t>(w.ranks()));
  // The size of a collective's communicator (its members; MPI_COMM_WORLD: every rank).
  const auto comm_size = [&](const Action& a) {
    return static_cast<std::uint64_t>(a.comm < t.defs.comms.size() ? t.defs.comms[a.comm].members.size() : 0);
  };
  // Rank r's rank in a collective's communicator (its size if r is not a member).
  const auto local_rank = [&](const Action& a, Rank r) -> std::size_t {
    if (a.comm == trace::kCommWorld) return static_cast<std::size_t>(r);
    if (a.comm >= t.defs.comms.size()) return 0;
    const auto& m = t.defs.comms[a.comm].members;
    return static_cast<std::size_t>(std::find(m.begin(), m.end(), r) - m.begin());
  };
  for (Rank r = 0; r < w.ranks(); ++r) {
    auto& loc = t.locations[static_cast<std::size_t>(r)];
    loc.rank = r;
    auto& ev = loc.events;
    double now = 0;
    std::uint64_t next_request = 0;
    std::unordered_map<std::int32_t, std::pair<std::uint64_t, Action>> open;  // slot -> (request id, posting)
    std::vector<std::int32_t> joined;  // slots of the Waitall to come (in_waitall Waits), sorted there
    const auto call = [&](MpiOp op, auto&& body) {
      ev.push_back(trace::make_event(now, EventKind::Enter, op, t.defs.mpi_region(op)));
      body();
      ev.push_back(trace::make_event(now, EventKind::Leave, op, t.defs.mpi_region(op)));
    };
    const auto complete = [&](std::int32_t slot) {
      const auto it = open.find(slot);
      if (it == open.end()) return;
      const auto& [id, a] = it->second;
      if (a.kind == ActionKind::Isend)
        ev.push_back(trace::make_event(now, EventKind::IsendComplete, MpiOp::None, trace::kCommWorld, a.peer, a.tag,
                                       a.bytes, id));
      else
        ev.push_back(trace::make_event(now, EventKind::IrecvComplete, MpiOp::None, trace::kCommWorld, a.peer, a.tag,
                                       a.bytes, id));
      open.erase(it);
    };
    call(MpiOp::Init, [] {});
    auto s = w.stream(r);
    Action a;
    while (s->next(a)) {
      const MpiOp op = action_op(a.kind);
      switch (a.kind) {
        case ActionKind::Enter:
        case ActionKind::Leave:
          ev.push_back(trace::make_event(now, a.kind == ActionKind::Enter ? EventKind::Enter : EventKind::Leave,
                                         MpiOp::None, a.region));
          break;
        case ActionKind::Compute:
          now += a.flops ? a.amount / speed : a.amount;
          break;
        case ActionKind::Send:
        case ActionKind::Ssend:
          call(op, [&] {
            ev.push_back(trace::make_event(now, EventKind::Send, op, trace::kCommWorld, a.peer, a.tag, a.bytes));
          });
          break;
        case ActionKind::Recv:
          call(op, [&] {
            ev.push_back(trace::make_event(now, EventKind::Recv, op, trace::kCommWorld, a.peer, a.tag, a.bytes));
          });
          break;
        case ActionKind::Isend:
        case ActionKind::Irecv:
          call(op, [&] {
            const auto id = next_request++;
            open[a.request] = {id, a};
            ev.push_back(trace::make_event(now, a.kind == ActionKind::Isend ? EventKind::IsendStart : EventKind::IrecvPost,
                                           op, trace::kCommWorld, a.peer, a.tag, a.bytes, id));
          });
          break;
        case ActionKind::Wait:
          if (a.in_waitall) {  // part of the Waitall that follows
            joined.push_back(a.request);
            break;
          }
          call(op, [&] { complete(a.request); });
          break;
        case ActionKind::Waitall:
          std::sort(joined.begin(), joined.end());
          call(op, [&] {
            std::vector<std::pair<std::uint64_t, std::int32_t>> order;  // in posting order
            for (const auto& [slot, v] : open)
              if (joined.empty() || std::binary_search(joined.begin(), joined.end(), slot))
                order.emplace_back(v.first, slot);
            std::sort(order.begin(), order.end());
            for (const auto& [id, slot] : order) complete(slot);
          });
          joined.clear();
          break;
        case ActionKind::Sendrecv:
          call(op, [&] {
            ev.push_back(trace::make_event(now, EventKind::Send, op, trace::kCommWorld, a.peer, a.tag, a.bytes));
            ev.push_back(trace::make_event(now, EventKind::Recv, op, trace::kCommWorld, a.peer2, a.tag2, a.bytes2));
          });
          break;
        default: {
          // The engine's byte convention for collectives (sim/simulation.cpp).
          const bool rooted = a.kind == ActionKind::Bcast || a.kind == ActionKind::Reduce ||
                              a.kind == ActionKind::Gather || a.kind == ActionKind::Scatter ||
                              a.kind == ActionKind::Gatherv || a.kind == ActionKind::Scatterv;
          const Rank root_rank = world_rank(t.defs, a.comm, a.root);  // the trace names roots by world rank
          const bool root = rooted && root_rank == r;
          const std::uint64_t ranks = comm_size(a);
          const std::uint64_t b = a.bytes;
          std::uint64_t sent = b, got = b;
          const Counts* c = w.counts(a.counts);
          const auto sum = [](const std::vector<std::uint64_t>* v) {
            std::uint64_t total = 0;
            if (v != nullptr)
              for (const auto x : *v) total += x;
            return total;
          };
          const std::vector<std::uint64_t>* send = c ? &c->send : nullptr;
          const std::vector<std::uint64_t>* recv = c ? &c->recv : nullptr;
          switch (a.kind) {
            case ActionKind::Barrier:
              sent = got = 0;
              break;
            case ActionKind::Bcast:
              sent = root ? b : 0;
              got = root ? 0 : b;
              break;
            case ActionKind::Reduce:
              got = root ? b : 0;
              break;
            case ActionKind::Gather:
              got = root ? b * ranks : 0;
              break;
            case ActionKind::Scatter:
              sent = root ? b * ranks : 0;
              break;
            case ActionKind::Allgather:
              got = b * ranks;
              break;
            case ActionKind::Alltoall:
              sent = got = b * ranks;
              break;
            case ActionKind::Gatherv:
              got = root ? sum(recv) : 0;
              break;
            case ActionKind::Scatterv:
              sent = root ? sum(send) : 0;
              break;
            case ActionKind::Allgatherv:
              got = sum(recv);
              break;
            case ActionKind::Alltoallv:
              sent = sum(send);
              got = sum(recv);
              break;
            case ActionKind::ReduceScatter:
              sent = sum(recv);
              got = recv != nullptr && local_rank(a, r) < recv->size() ? (*recv)[local_rank(a, r)] : 0;
              break;
            default:
              break;
          }
          call(op, [&] {
            ev.push_back(trace::make_event(now, EventKind::CollBegin, op, a.comm));
            ev.push_back(trace::make_event(now, EventKind::CollEnd, op, a.comm,
                                           rooted ? root_rank : trace::kNoRank, 0, sent, got));
          });
          break;
        }
      }
    }
    call(MpiOp::Finalize, [] {});
  }
  t.attributes.push_back({"times", "logical: compute at its duration, MPI calls take no time"});
  return t;
}

}  // namespace waitlab::models
