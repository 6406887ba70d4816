#include "analysis/trace/match.hpp"

#include <algorithm>
#include <memory>
#include <span>
#include <tuple>

namespace waitlab::trace {

CallPathId CallPaths::child(CallPathId parent, RegionId region) {
  const std::uint64_t key = (static_cast<std::uint64_t>(parent) << 32) | region;
  const auto [it, added] = index_.try_emplace(key, static_cast<CallPathId>(nodes_.size()));
  if (added) nodes_.push_back(Node{parent, region});
  return it->second;
}

std::string CallPaths::name(CallPathId id, const Definitions& defs) const {
  if (id == kNoCallPath) return "(none)";
  std::vector<RegionId> chain;
  for (CallPathId p = id; p != kNoCallPath; p = nodes_[p].parent) chain.push_back(nodes_[p].region);
  std::string s;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    if (!s.empty()) s += '/';
    s += *it < defs.regions.size() ? defs.regions[*it].name : "?";
  }
  return s;
}

namespace {

using Side = MessageSide;

struct PendingRequest {
  std::uint32_t side = 0;  // index into sends (isend) or the post (irecv)
  std::uint32_t call = 0;
  std::uint32_t order = 0;
  bool is_send = false;
};

// What the walk over the locations collects before matching: every send and receive, and per
// communicator, per global rank, the collective calls in order.
struct Sides {
  std::vector<Side> sends, recvs;
  std::vector<std::vector<std::vector<CollectiveCall>>> coll;
};

// Every array at its final size from the start (a count per location first): a vector grown by
// doubling holds up to twice its size, and three times while it moves.
void reserve_sides(const Definitions& defs, Rank first, std::span<const Location> locations, Matching& m,
                   Sides& sides) {
  auto& coll = sides.coll;
  std::size_t total_sends = 0, total_recvs = 0;
  std::vector<std::uint32_t> per_comm(coll.size(), 0);
  std::vector<CommId> touched;
  for (std::size_t i = 0; i < locations.size(); ++i) {
    const std::size_t r = static_cast<std::size_t>(first) + i;
    std::size_t mpi_enters = 0;
    for (const Event& e : locations[i].events) switch (e.kind) {
        case EventKind::Enter:
          if (e.ref < defs.regions.size() && defs.regions[e.ref].op != MpiOp::None) {
            ++mpi_enters;
            const MpiOp op = defs.regions[e.ref].op;
            if ((op == MpiOp::Init || op == MpiOp::Finalize) && !coll.empty() && per_comm[kCommWorld]++ == 0)
              touched.push_back(kCommWorld);
          }
          break;
        case EventKind::Send:
        case EventKind::IsendStart:
          ++total_sends;
          break;
        case EventKind::Recv:
        case EventKind::IrecvComplete:
          ++total_recvs;
          break;
        case EventKind::CollEnd:
          if (e.ref < coll.size() && per_comm[e.ref]++ == 0) touched.push_back(e.ref);
          break;
        default:
          break;
      }
    m.calls[r].reserve(mpi_enters);
    for (CommId c : touched) {
      coll[c][r].reserve(per_comm[c]);
      per_comm[c] = 0;
    }
    touched.clear();
  }
  sides.sends.reserve(total_sends);
  sides.recvs.reserve(total_recvs);
}

// An MPI call never left (the trace ends inside it) is not a call: what it posted, completed or
// took part in goes with it, counted as unmatched. `cur` is the call, rank r's sends and receives
// begin at sends_start and recvs_start.
void drop_open_call(std::size_t r, std::uint32_t cur, std::size_t sends_start, std::size_t recvs_start, Matching& m,
                    Sides& sides, std::unordered_map<std::uint64_t, PendingRequest>& pending) {
  auto& sends = sides.sends;
  auto& recvs = sides.recvs;
  auto& coll = sides.coll;
  const auto involves = [&](const Side& x) { return x.call == cur || x.done_call == cur; };
  const auto drop = [&](std::vector<Side>& v, std::size_t from) {
    const auto before = v.size();
    v.erase(std::remove_if(v.begin() + static_cast<std::ptrdiff_t>(from), v.end(), involves), v.end());
    return before - v.size();
  };
  m.unmatched.sends += drop(sends, sends_start);
  m.unmatched.receives += drop(recvs, recvs_start);
  for (auto& per_comm : coll)
    while (!per_comm[r].empty() && per_comm[r].back().call == cur) {
      per_comm[r].pop_back();
      ++m.unmatched.collective_calls;
    }
  std::erase_if(pending, [&](const auto& kv) {
    if (kv.second.call != cur) return false;
    ++m.unmatched.requests;
    return true;
  });
  m.calls[r].pop_back();
}

// One pass over rank r's events: its MPI calls and the call path after each event (into m), its
// sends, receives and collective calls (into sides). `pending` and `stack` are scratch space.
void walk_location(const Definitions& defs, const Location& location, std::size_t r, Matching& m, Sides& sides,
                   std::unordered_map<std::uint64_t, PendingRequest>& pending, std::vector<CallPathId>& stack) {
  auto& sends = sides.sends;
  auto& recvs = sides.recvs;
  auto& coll = sides.coll;
  const Rank rank = static_cast<Rank>(r);
  const auto& ev = location.events;
  auto& calls = m.calls[r];
  auto& after = m.path_after[r];
  after.resize(ev.size());
  pending.clear();
  stack.clear();
  const std::size_t sends_start = sends.size();
  const std::size_t recvs_start = recvs.size();
  bool in_call = false;
  std::uint32_t cur = 0;  // index of the open MPI call
  Time coll_begin = 0;
  std::uint32_t coll_begin_event = 0;
  for (std::uint32_t i = 0; i < ev.size(); ++i) {
    const Event& e = ev[i];
    const bool communication = e.kind != EventKind::Enter && e.kind != EventKind::Leave;
    if (communication && !in_call) {  // a message or collective event outside any MPI call
      ++m.unmatched.stray_events;
      after[i] = stack.empty() ? kNoCallPath : stack.back();
      continue;
    }
    switch (e.kind) {
      case EventKind::Enter: {
        const CallPathId parent = stack.empty() ? kNoCallPath : stack.back();
        const CallPathId p = m.paths.child(parent, e.ref);
        stack.push_back(p);
        const MpiOp op = e.ref < defs.regions.size() ? defs.regions[e.ref].op : MpiOp::None;
        if (op != MpiOp::None && !in_call) {
          in_call = true;
          coll_begin = e.time;  // a collective without a CollBegin begins at its Enter
          coll_begin_event = i;
          cur = static_cast<std::uint32_t>(calls.size());
          calls.push_back(Call{i, i, p, op});
          if (op == MpiOp::Init || op == MpiOp::Finalize)
            coll[kCommWorld][r].push_back({cur, op, kNoRank, e.time, e.time, i, i});
        }
        break;
      }
      case EventKind::Leave:
        if (stack.empty()) {
          ++m.unmatched.unbalanced_regions;
          break;
        }
        if (in_call && calls[cur].path == stack.back()) {
          in_call = false;
          calls[cur].leave = i;
          if (calls[cur].op == MpiOp::Init || calls[cur].op == MpiOp::Finalize) {
            coll[kCommWorld][r].back().end = e.time;
            coll[kCommWorld][r].back().end_event = i;
          }
        }
        stack.pop_back();
        break;
      case EventKind::Send:
        sends.push_back(Side{rank, e.peer, e.ref, e.tag, i, i, cur, cur});
        break;
      case EventKind::IsendStart:
        pending[e.aux] = PendingRequest{static_cast<std::uint32_t>(sends.size()), cur, i, true};
        sends.push_back(Side{rank, e.peer, e.ref, e.tag, i, i, cur, kNoCallPath});
        break;
      case EventKind::IsendComplete: {
        const auto it = pending.find(e.aux);
        if (it == pending.end() || !it->second.is_send) {
          ++m.unmatched.requests;
          break;
        }
        sends[it->second.side].done_call = cur;
        pending.erase(it);
        break;
      }
      case EventKind::Recv:
        recvs.push_back(Side{e.peer, rank, e.ref, e.tag, i, i, cur, cur});
        break;
      case EventKind::IrecvPost:
        pending[e.aux] = PendingRequest{0, cur, i, false};
        break;
      case EventKind::IrecvComplete: {
        const auto it = pending.find(e.aux);
        if (it == pending.end() || it->second.is_send) {
          ++m.unmatched.requests;
          break;
        }
        recvs.push_back(Side{e.peer, rank, e.ref, e.tag, it->second.order, i, it->second.call, cur});
        pending.erase(it);
        break;
      }
      case EventKind::CollBegin:
        coll_begin = e.time;
        coll_begin_event = i;
        break;
      case EventKind::CollEnd:
        if (e.ref < coll.size()) {
          coll[e.ref][r].push_back({cur, e.op, e.peer, coll_begin, e.time, coll_begin_event, i});
        } else {
          ++m.unmatched.collective_calls;
        }
        break;
    }
    after[i] = stack.empty() ? kNoCallPath : stack.back();
  }
  m.unmatched.unbalanced_regions += stack.size();
  if (in_call) drop_open_call(r, cur, sends_start, recvs_start, m, sides, pending);
  // Requests never completed: their sends stay unmatched (done_call unknown).
  m.unmatched.requests += pending.size();
}

// Point-to-point: the k-th send on a channel matches the k-th receive posted on it.
void match_messages(Matching& m, Sides& sides) {
  auto& sends = sides.sends;
  auto& recvs = sides.recvs;
  std::erase_if(sends, [&](const Side& s) { return s.done_call == kNoCallPath; });
  const auto by_key = [](const Side& a, const Side& b) { return a.key() < b.key(); };
  std::sort(sends.begin(), sends.end(), by_key);
  std::sort(recvs.begin(), recvs.end(), by_key);
  m.messages.reserve(std::min(sends.size(), recvs.size()));
  pair_sides(sends, recvs, m.unmatched, [&](const Side& s, const Side& rv) {
    m.messages.push_back(Message{s.src, s.dst, s.call, s.done_call, rv.call, rv.done_call, s.event, rv.event});
  });
  std::vector<Side>().swap(sends);
  std::vector<Side>().swap(recvs);
}

// Collectives: the n-th call on a communicator on every member forms instance n.
void match_collectives(const Definitions& defs, std::size_t n, Matching& m, Sides& sides) {
  auto& coll = sides.coll;
  std::size_t total_members = 0, total_instances = 0;
  for (CommId c = 0; c < coll.size(); ++c) {
    const auto& members = defs.comms[c].members;
    std::size_t count = members.empty() ? 0 : static_cast<std::size_t>(-1);
    for (Rank g : members)
      count = g < 0 || static_cast<std::size_t>(g) >= n ? 0 : std::min(count, coll[c][g].size());
    total_instances += count;
    total_members += count * members.size();
  }
  m.collectives.reserve(total_instances);
  m.members.reserve(total_members);
  for (CommId c = 0; c < coll.size(); ++c) {
    const auto& members = defs.comms[c].members;
    std::vector<char> member(n, 0);
    std::size_t count = members.empty() ? 0 : static_cast<std::size_t>(-1);
    for (Rank g : members) {
      if (g < 0 || static_cast<std::size_t>(g) >= n) {
        count = 0;
        continue;
      }
      member[g] = 1;
      count = std::min(count, coll[c][g].size());
    }
    for (std::size_t r = 0; r < n; ++r) {
      if (!member[r]) {
        m.unmatched.collective_calls += coll[c][r].size();
      } else {
        m.unmatched.collective_calls += coll[c][r].size() - count;
      }
    }
    for (std::size_t k = 0; k < count; ++k) {
      const CollectiveCall& first = coll[c][members[0]][k];
      bool agree = true;
      for (Rank g : members) agree = agree && coll[c][g][k].op == first.op;
      if (!agree) {
        m.unmatched.collective_calls += members.size();
        continue;
      }
      CollInstance inst;
      inst.comm = c;
      inst.op = first.op;
      inst.root = first.root;
      inst.first = static_cast<std::uint32_t>(m.members.size());
      inst.count = static_cast<std::uint32_t>(members.size());
      for (Rank g : members) {
        const CollectiveCall& rc = coll[c][g][k];
        m.members.push_back(CollMember{g, rc.call, rc.begin, rc.end, rc.begin_event, rc.end_event});
      }
      m.collectives.push_back(inst);
    }
    std::vector<std::vector<CollectiveCall>>().swap(coll[c]);
  }
}

}  // namespace

void pair_sides(std::span<const MessageSide> sends, std::span<const MessageSide> recvs, Unmatched& unmatched,
                const std::function<void(const MessageSide& send, const MessageSide& receive)>& matched) {
  std::size_t i = 0, j = 0;
  while (i < sends.size() && j < recvs.size()) {
    const MessageSide& s = sends[i];
    const MessageSide& rv = recvs[j];
    if (s.same_channel(rv)) {
      matched(s, rv);
      ++i;
      ++j;
    } else if (std::tie(s.src, s.dst, s.comm, s.tag) < std::tie(rv.src, rv.dst, rv.comm, rv.tag)) {
      ++unmatched.sends;
      ++i;
    } else {
      ++unmatched.receives;
      ++j;
    }
  }
  unmatched.sends += sends.size() - i;
  unmatched.receives += recvs.size() - j;
}

struct MatchWalk::State {
  Sides sides;
  std::unordered_map<std::uint64_t, PendingRequest> pending;
  std::vector<CallPathId> stack;
};

MatchWalk::MatchWalk(const Definitions& defs, std::size_t ranks, Matching& m)
    : defs_(defs), ranks_(ranks), m_(m), state_(std::make_unique<State>()) {
  m.calls.resize(ranks);
  m.path_after.resize(ranks);
  state_->sides.coll.resize(defs.comms.size());
  for (auto& c : state_->sides.coll) c.resize(ranks);
}

MatchWalk::~MatchWalk() = default;

void MatchWalk::walk(Rank first, std::span<const Location> locations) {
  reserve_sides(defs_, first, locations, m_, state_->sides);
  for (std::size_t i = 0; i < locations.size(); ++i)
    walk_location(defs_, locations[i], static_cast<std::size_t>(first) + i, m_, state_->sides, state_->pending,
                  state_->stack);
}

const std::vector<MessageSide>& MatchWalk::sends() const { return state_->sides.sends; }
const std::vector<MessageSide>& MatchWalk::receives() const { return state_->sides.recvs; }
const std::vector<std::vector<std::vector<CollectiveCall>>>& MatchWalk::collective_calls() const {
  return state_->sides.coll;
}

void MatchWalk::match() {
  match_messages(m_, state_->sides);
  match_collectives(defs_, ranks_, m_, state_->sides);
}

Matching Matching::build(const Trace& trace) {
  Matching m;
  MatchWalk walk(trace.defs, trace.ranks(), m);
  walk.walk(0, trace.locations);
  walk.match();
  return m;
}

std::size_t Matching::memory_bytes() const {
  std::size_t b = sizeof(*this) + paths.size() * (sizeof(CallPaths::Node) + 32);
  for (const auto& c : calls) b += c.capacity() * sizeof(Call);
  for (const auto& p : path_after) b += p.capacity() * sizeof(CallPathId);
  b += messages.capacity() * sizeof(Message) + collectives.capacity() * sizeof(CollInstance) +
       members.capacity() * sizeof(CollMember);
  return b;
}

}  // namespace waitlab::trace
