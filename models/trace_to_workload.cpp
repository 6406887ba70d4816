// A timed trace as a workload (replay_trace, models/replay.hpp): each rank's events become
// actions, the time between MPI calls compute in the innermost user region, every MPI call the
// same call with the peers, tags, sizes, roots and requests the trace recorded, a collective
// on its own communicator; Score-P's byte counts become payloads (scorep_payload). What the
// converters share is replay_common.hpp.
#include "models/replay.hpp"

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "models/replay_common.hpp"
#include "util/error.hpp"

namespace waitlab::models {

using trace::EventKind;
using trace::MpiOp;
using detail::coll;
using detail::finish;
using detail::Notes;
using detail::RankBuilder;
using detail::ReplayWorkload;
using detail::Slots;
using detail::to_tapes;

namespace {

std::string at(Rank r, std::size_t event) {
  return "rank " + std::to_string(r) + ", event " + std::to_string(event);
}

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

  // One rank's requests: the engine names requests by slot.
  struct RankRequests {
    Slots slots;
    std::unordered_map<std::uint64_t, std::int32_t> slot_of;    // trace request id -> slot
    std::vector<std::int32_t> outstanding;                      // slots, in posting order
    std::unordered_map<std::uint64_t, std::size_t> irecv_done;  // request id -> IrecvComplete index
    bool irecv_lookup = false;
  };

  // The communication records of one MPI call (its events between Enter and Leave).
  struct CallRecords {
    const trace::Event* send = nullptr;
    const trace::Event* recv = nullptr;
    const trace::Event* coll_end = nullptr;
    std::vector<std::uint64_t> completions;  // request ids
  };

  // The Leave of the MPI call entered at event i (nested MPI regions, as PMPI layers write
  // them, are inside); ev.size() if the trace ends inside the call.
  std::size_t call_leave(const std::vector<trace::Event>& ev, std::size_t i) const {
    std::size_t end = i + 1;
    for (int depth = 1; end < ev.size(); ++end) {
      const auto& x = ev[end];
      if (x.kind == EventKind::Enter && t.defs.regions[x.ref].op != MpiOp::None) ++depth;
      if (x.kind == EventKind::Leave && t.defs.regions[x.ref].op != MpiOp::None && --depth == 0) break;
    }
    return end;
  }

  // Rank r's actions: its events from the end of MPI_Init to the start of MPI_Finalize.
  std::vector<Action> rank(Rank r) {
    const auto& ev = t.locations[static_cast<std::size_t>(r)].events;
    std::vector<Action> out;
    RankBuilder b(r, o, defs, out);
    RankRequests requests;
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
      if (region.op == MpiOp::None && o.free_mpi_without_op && region.is_mpi()) {
        // An ideal run's MPI_Comm_rank and the like: no time, no region.
        if (e.kind == EventKind::Enter) {
          gap_to(e.time);
        } else if (started) {
          last = std::max(last, e.time);
        }
        continue;
      }
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
      const std::size_t end = call_leave(ev, i);
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
      call(r, i, end, region.op, b, requests);
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
    if (!requests.outstanding.empty()) {
      Action a;
      a.kind = ActionKind::Waitall;
      b.push(a);
      notes.add("ranks with requests never completed: a final MPI_Waitall added");
    }
    if (outside) b.wrap(main_region());
    iterations = std::max(iterations, b.iterations());
    return out;
  }

  // MPI call `op` of rank r, from its Enter (event `enter`) to its Leave (event `leave`).
  void call(Rank r, std::size_t enter, std::size_t leave, MpiOp op, RankBuilder& b, RankRequests& q) {
    const CallRecords c = records(r, enter, leave, b, q);
    if (point_to_point(op, c, b)) return;
    if (!c.completions.empty()) return complete(op, c.completions, b, q);
    if (trace::is_collective(op)) {
      if (!c.coll_end) return missing(op);
      return collective(r, enter, op, *c.coll_end, b);
    }
    if (op == MpiOp::Wait || op == MpiOp::Waitall) notes.add("MPI_Wait/MPI_Waitall calls completing no request skipped");
  }

  // Reads the call's records: the requests it posts are posted as they come (in the trace's
  // order), the others are returned.
  CallRecords records(Rank r, std::size_t enter, std::size_t leave, RankBuilder& b, RankRequests& q) {
    const auto& ev = t.locations[static_cast<std::size_t>(r)].events;
    CallRecords c;
    for (std::size_t k = enter + 1; k < leave; ++k) {
      const auto& x = ev[k];
      switch (x.kind) {
        case EventKind::Send:
          c.send = &x;
          break;
        case EventKind::Recv:
          c.recv = &x;
          break;
        case EventKind::IsendStart:
          if (!reused(x, q)) post(ActionKind::Isend, x, x.peer, x.tag, x.bytes, b, q);
          break;
        case EventKind::IrecvPost:
          post_irecv(r, k, x, b, q);
          break;
        case EventKind::IsendComplete:
        case EventKind::IrecvComplete:
          c.completions.push_back(x.aux);
          break;
        case EventKind::CollEnd:
          c.coll_end = &x;
          break;
        default:
          break;
      }
    }
    return c;
  }

  // Whether posting x names a request still outstanding (the posting is then ignored).
  bool reused(const trace::Event& x, const RankRequests& q) {
    if (!q.slot_of.count(x.aux)) return false;
    notes.add("requests reused before completion ignored");
    return true;
  }

  // A request posted by record x (its id in x.aux), on the next free slot.
  void post(ActionKind k, const trace::Event& x, Rank peer, std::int32_t tag, std::uint64_t bytes, RankBuilder& b,
            RankRequests& q) {
    const auto s = q.slots.take();
    q.slot_of[x.aux] = s;
    q.outstanding.push_back(s);
    Action a = p2p_action(k, peer, tag, bytes);
    a.request = s;
    comm_check(x);
    b.push(a);
  }

  // An MPI_Irecv posted by event k of rank r: its source, tag and size from its completion
  // when the posting does not hold them.
  void post_irecv(Rank r, std::size_t k, const trace::Event& x, RankBuilder& b, RankRequests& q) {
    if (reused(x, q)) return;
    if (x.peer != trace::kNoRank) return post(ActionKind::Irecv, x, x.peer, x.tag, x.bytes, b, q);
    const auto& ev = t.locations[static_cast<std::size_t>(r)].events;
    const std::size_t j = irecv_completion(ev, k, x.aux, q);
    if (j >= ev.size()) {
      notes.add("MPI_Irecv requests never completed not replayed");
      return;
    }
    post(ActionKind::Irecv, x, ev[j].peer, ev[j].tag, ev[j].bytes, b, q);
  }

  // The completion after the posting at event k that carries the same request id (ev.size():
  // none).
  static std::size_t irecv_completion(const std::vector<trace::Event>& ev, std::size_t k, std::uint64_t id,
                                      RankRequests& q) {
    if (!q.irecv_lookup) {
      for (std::size_t j = 0; j < ev.size(); ++j)
        if (ev[j].kind == EventKind::IrecvComplete) q.irecv_done.emplace(ev[j].aux, j);
      q.irecv_lookup = true;
    }
    const auto it = q.irecv_done.find(id);
    std::size_t j = it == q.irecv_done.end() ? ev.size() : it->second;
    if (j < k) {  // request ids reused: search forward
      j = ev.size();
      for (std::size_t m = k + 1; m < ev.size(); ++m)
        if (ev[m].kind == EventKind::IrecvComplete && ev[m].aux == id) {
          j = m;
          break;
        }
    }
    return j;
  }

  // The blocking point-to-point calls, and the non-blocking ones, posted already: whether `op`
  // is one of them.
  bool point_to_point(MpiOp op, const CallRecords& c, RankBuilder& b) {
    switch (op) {
      case MpiOp::Send:
      case MpiOp::Ssend:
        if (!c.send) {
          missing(op);
          return true;
        }
        comm_check(*c.send);
        b.push(p2p_action(op == MpiOp::Send ? ActionKind::Send : ActionKind::Ssend, c.send->peer, c.send->tag,
                          c.send->bytes));
        return true;
      case MpiOp::Recv:
        if (!c.recv) {
          missing(op);
          return true;
        }
        comm_check(*c.recv);
        b.push(p2p_action(ActionKind::Recv, c.recv->peer, c.recv->tag, c.recv->bytes));
        return true;
      case MpiOp::Sendrecv: {
        // MPI_Sendrecv (and MPI_Sendrecv_replace) is a send and a receive. Extrae writes no
        // communication record for a half whose peer is MPI_PROC_NULL: the call is then the
        // one message it moves, or none (its time is not replayed, as of a skipped call).
        if (!c.send && !c.recv) {
          notes.add("MPI_Sendrecv calls without a communication record (both peers MPI_PROC_NULL) replayed without "
                    "communication");
          return true;
        }
        if (!c.send || !c.recv) {
          const trace::Event& x = c.send ? *c.send : *c.recv;
          comm_check(x);
          b.push(p2p_action(c.send ? ActionKind::Send : ActionKind::Recv, x.peer, x.tag, x.bytes));
          notes.add(std::string("MPI_Sendrecv calls with one communication record (the other peer MPI_PROC_NULL) "
                                "replayed as their one message (MPI_Send or MPI_Recv)"));
          return true;
        }
        comm_check(*c.send);
        Action a = p2p_action(ActionKind::Sendrecv, c.send->peer, c.send->tag, c.send->bytes);
        a.peer2 = c.recv->peer;
        a.tag2 = c.recv->tag;
        a.bytes2 = c.recv->bytes;
        b.push(a);
        return true;
      }
      case MpiOp::Isend:
      case MpiOp::Irecv:
        return true;  // posted by records()
      default:
        return false;
    }
  }

  // A call that completed the requests `completions` names: an MPI_Wait for one (but in an
  // MPI_Waitall), else an MPI_Waitall over them.
  void complete(MpiOp op, const std::vector<std::uint64_t>& completions, RankBuilder& b, RankRequests& q) {
    std::vector<std::int32_t> done;
    for (auto id : completions) {
      const auto it = q.slot_of.find(id);
      if (it == q.slot_of.end()) {
        notes.add("completions of unknown requests ignored");
        continue;
      }
      done.push_back(it->second);
      q.slot_of.erase(it);
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
      if (done.size() < q.outstanding.size())
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
      q.outstanding.erase(std::find(q.outstanding.begin(), q.outstanding.end(), s));
      q.slots.give_back(s);
    }
  }

  // Collective `op` of rank r (event `enter`) with its record `end`, on the same group: the
  // trace's communicator (its members in communicator-rank order).
  void collective(Rank r, std::size_t enter, MpiOp op, const trace::Event& end, RankBuilder& b) {
    const std::uint32_t w = comm_of(r, enter, op, end.ref);
    const std::uint64_t sent = end.bytes;
    const std::uint64_t got = end.aux;
    const Rank root = collective_root(r, enter, op, w, end.peer);
    const auto& comm = t.defs.comms[end.ref];
    const auto p = static_cast<std::uint64_t>(std::max<std::size_t>(comm.members.size(), 1));
    if (is_v(op)) {
      if (replay_v(r, op, root, w, end.ref, b)) return;
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

  // The root of collective `op` on workload communicator w: the trace names it by its world
  // rank (`world_root`), MPI by its rank there.
  Rank collective_root(Rank r, std::size_t enter, MpiOp op, std::uint32_t w, Rank world_root) const {
    const bool rooted = op == MpiOp::Bcast || op == MpiOp::Reduce || op == MpiOp::Gather || op == MpiOp::Scatter ||
                        op == MpiOp::Gatherv || op == MpiOp::Scatterv;
    if (!rooted || world_root == trace::kNoRank || w == trace::kCommWorld) return world_root;
    const Rank root = local(w, world_root);
    if (root == trace::kNoRank)
      throw InputError(at(r, enter) + ": " + std::string(trace::mpi_name(op)) + " with root " +
                       std::to_string(world_root) + " on communicator '" + defs.comms[w].name + "', of which rank " +
                       std::to_string(world_root) + " is not a member");
    return root;
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

}  // namespace waitlab::models
