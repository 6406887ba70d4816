// Every synthetic workload, at many sizes including 1 and 2 ranks, executed by a small
// rendezvous scheduler: a blocking send waits for its receive, a receive for its send, a
// collective for every rank. Checks that every send meets a receive with the same
// (source, destination, tag, bytes) in FIFO order, that nothing deadlocks even without
// eager sends (so nothing deadlocks under SMPI's eager sends either), that collectives come
// in the same order with the same arguments on every rank, that regions nest, that every
// action carries its iteration, and the exact number of messages of each pattern.
#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "test_workload_util.hpp"

namespace waitlab::models {
namespace {

using workload_test::build;
using workload_test::Given;

struct Outcome {
  std::uint64_t messages = 0;     // matched point-to-point messages
  std::uint64_t collectives = 0;  // collective instances
  std::vector<std::string> errors;
};

// The scheduler. A rank runs until it blocks; blocked ranks resume when what they wait for
// is matched. No progress with unfinished ranks is a deadlock.
Outcome execute(const Workload& w) {
  Outcome out;
  const int n = w.ranks();
  const auto& regions = w.definitions().regions;
  auto error = [&](Rank r, const std::string& what) {
    if (out.errors.size() < 20) out.errors.push_back("rank " + std::to_string(r) + ": " + what);
  };

  struct Post {
    Rank rank;
    std::int32_t request;  // -1: blocking call
    std::uint64_t bytes;
  };
  using Key = std::tuple<Rank, Rank, std::int32_t>;  // source, destination, tag
  std::map<Key, std::deque<Post>> sends, recvs;

  struct CollectiveRecord {
    ActionKind kind;
    Rank root;
    std::uint64_t bytes;
    int arrived;
  };
  std::vector<CollectiveRecord> colls;

  enum class Wait { None, Blocking, All, One, Collective };
  struct RankState {
    std::unique_ptr<ActionStream> stream;
    Wait wait = Wait::None;
    int blocking_pending = 0;
    std::map<std::int32_t, bool> requests;  // slot -> complete
    std::int32_t wait_slot = -1;
    std::size_t coll_index = 0;  // collectives entered so far
    std::vector<trace::RegionId> stack;
    std::int32_t last_iteration = 0;
    bool done = false;
  };
  std::vector<RankState> st(static_cast<std::size_t>(n));
  for (Rank r = 0; r < n; ++r) st[r].stream = w.stream(r);

  auto complete = [&](const Post& p) {
    if (p.request < 0)
      --st[p.rank].blocking_pending;
    else
      st[p.rank].requests[p.request] = true;
  };
  auto match = [&](const Key& k) {
    auto& s = sends[k];
    auto& q = recvs[k];
    while (!s.empty() && !q.empty()) {
      if (s.front().bytes != q.front().bytes)
        error(std::get<1>(k), "message from " + std::to_string(std::get<0>(k)) + " tag " +
                                  std::to_string(std::get<2>(k)) + " has " + std::to_string(s.front().bytes) +
                                  " bytes, the receive expects " + std::to_string(q.front().bytes));
      complete(s.front());
      complete(q.front());
      s.pop_front();
      q.pop_front();
      ++out.messages;
    }
  };
  auto peer_ok = [&](Rank r, Rank peer) {
    if (peer < 0 || peer >= n || peer == r) {
      error(r, "bad peer " + std::to_string(peer));
      return false;
    }
    return true;
  };
  auto post = [&](Rank r, const Action& a, bool send, std::int32_t request) {
    if (!peer_ok(r, a.peer)) return;
    if (request >= 0) {
      if (st[r].requests.count(request)) error(r, "request slot " + std::to_string(request) + " reused");
      st[r].requests[request] = false;
    } else {
      ++st[r].blocking_pending;
    }
    const Key k = send ? Key{r, a.peer, a.tag} : Key{a.peer, r, a.tag};
    (send ? sends : recvs)[k].push_back({r, request, a.bytes});
    match(k);
  };
  auto released = [&](RankState& s) {
    switch (s.wait) {
      case Wait::None:
        return true;
      case Wait::Blocking:
        return s.blocking_pending == 0;
      case Wait::One:
        return s.requests.count(s.wait_slot) && s.requests[s.wait_slot];
      case Wait::All:
        for (const auto& [slot, doneflag] : s.requests)
          if (!doneflag) return false;
        return true;
      case Wait::Collective:
        return colls[s.coll_index - 1].arrived == n;
    }
    return false;
  };

  bool progress = true;
  while (progress) {
    progress = false;
    for (Rank r = 0; r < n; ++r) {
      auto& s = st[r];
      while (!s.done) {
        if (!released(s)) break;
        if (s.wait == Wait::All) s.requests.clear();
        if (s.wait == Wait::One) s.requests.erase(s.wait_slot);
        s.wait = Wait::None;
        Action a;
        if (!s.stream->next(a)) {
          s.done = true;
          progress = true;
          if (!s.stack.empty()) error(r, "ends inside region " + regions[s.stack.back()].name);
          if (s.last_iteration != w.iterations() - 1)
            error(r, "last iteration " + std::to_string(s.last_iteration));
          break;
        }
        progress = true;
        if (a.iteration < s.last_iteration || a.iteration > s.last_iteration + 1 ||
            a.iteration >= w.iterations())
          error(r, "iteration " + std::to_string(a.iteration) + " after " + std::to_string(s.last_iteration));
        s.last_iteration = a.iteration;
        switch (a.kind) {
          case ActionKind::Enter:
            if (a.region >= regions.size() || regions[a.region].op != trace::MpiOp::None)
              error(r, "enters bad region " + std::to_string(a.region));
            s.stack.push_back(a.region);
            break;
          case ActionKind::Leave:
            if (s.stack.empty() || s.stack.back() != a.region)
              error(r, "leaves region " + std::to_string(a.region) + " it is not in");
            else
              s.stack.pop_back();
            break;
          case ActionKind::Compute:
            if (s.stack.empty() || s.stack.back() != a.region) error(r, "compute outside its region");
            if (!(a.amount >= 0)) error(r, "negative compute");
            break;
          case ActionKind::Send:
          case ActionKind::Ssend:
          case ActionKind::Recv:
            post(r, a, a.kind != ActionKind::Recv, -1);
            s.wait = Wait::Blocking;
            break;
          case ActionKind::Isend:
          case ActionKind::Irecv:
            if (a.request < 0) error(r, "non-blocking call without a request slot");
            post(r, a, a.kind == ActionKind::Isend, a.request);
            break;
          case ActionKind::Wait:
            s.wait = Wait::One;
            s.wait_slot = a.request;
            break;
          case ActionKind::Waitall:
            s.wait = Wait::All;
            break;
          case ActionKind::Sendrecv: {
            post(r, a, true, -1);
            Action rcv = a;
            rcv.peer = a.peer2;
            rcv.tag = a.tag2;
            rcv.bytes = a.bytes2;
            post(r, rcv, false, -1);
            s.wait = Wait::Blocking;
            break;
          }
          default: {  // collectives
            if (s.coll_index == colls.size()) {
              colls.push_back({a.kind, a.root, a.bytes, 0});
              ++out.collectives;
            }
            auto& c = colls[s.coll_index];
            if (c.kind != a.kind || c.root != a.root || c.bytes != a.bytes)
              error(r, "collective #" + std::to_string(s.coll_index) + " is " +
                           std::string(action_name(a.kind)) + ", others call " +
                           std::string(action_name(c.kind)));
            if (a.root < 0 || a.root >= n) error(r, "bad root");
            ++c.arrived;
            ++s.coll_index;
            s.wait = Wait::Collective;
          }
        }
      }
    }
  }
  std::ostringstream blocked;
  for (Rank r = 0; r < n; ++r)
    if (!st[r].done) blocked << " " << r;
  if (!blocked.str().empty()) out.errors.push_back("deadlock; blocked ranks:" + blocked.str());
  for (const auto* side : {&sends, &recvs})
    for (const auto& [k, q] : *side)
      if (!q.empty())
        out.errors.push_back("unmatched " + std::string(side == &sends ? "send" : "receive") + " " +
                             std::to_string(std::get<0>(k)) + "->" + std::to_string(std::get<1>(k)) +
                             " tag " + std::to_string(std::get<2>(k)));
  return out;
}

std::string describe(const std::string& type, const Given& g) {
  std::string s = type;
  for (const auto& [k, v] : g) s += " " + k + "=" + v;
  return s;
}

// Runs the scheduler and returns the message count (checks everything else).
std::uint64_t check(const std::string& type, const Given& g, std::uint64_t* collectives = nullptr) {
  auto w = build(type, g);
  auto o = execute(*w);
  std::string all;
  for (const auto& e : o.errors) all += "\n  " + e;
  EXPECT_TRUE(o.errors.empty()) << describe(type, g) << all;
  if (collectives) *collectives = o.collectives;
  return o.messages;
}

TEST(WorkloadMatching, Heat1dEveryShapeMatchesAndCannotDeadlock) {
  const std::uint64_t it = 3;
  for (int n : {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16})
    for (int d = 1; d <= 4; ++d) {
      if (d > 1 && d >= n) continue;
      for (const char* periodic : {"false", "true"})
        for (const char* mode : {"blocking", "nonblocking", "two_phase", "even_odd"})
          for (const char* direction : {"both", "right"}) {
            const bool even_odd = std::string(mode) == "even_odd";
            const Given g = {{"ranks", std::to_string(n)},
                             {"iterations", std::to_string(it)},
                             {"distance", std::to_string(d)},
                             {"periodic", periodic},
                             {"mode", even_odd ? "blocking" : mode},
                             {"order", even_odd ? "even_odd" : "send_first"},
                             {"direction", direction}};
            // Open chain: each pair (r, r+k) with k <= d exchanges two messages per iteration;
            // ring: every rank sends 2d messages (none on a single rank); one way: half.
            std::uint64_t expected = 0;
            if (std::string(periodic) == "true")
              expected = n > 1 ? 2ull * d * n * it : 0;
            else
              for (int k = 1; k <= d; ++k) expected += k < n ? 2ull * (n - k) * it : 0;
            if (std::string(direction) == "right") expected /= 2;
            EXPECT_EQ(check("heat1d", g), expected) << describe("heat1d", g);
          }
    }
}

TEST(WorkloadMatching, Halo2dAndHalo3d) {
  for (int n : {1, 2, 3, 4, 6, 12, 16})
    for (const char* periodic : {"false", "true"}) {
      const Given g = {{"ranks", std::to_string(n)}, {"iterations", "3"}, {"periodic", periodic}};
      auto w = build("halo2d", g);
      const int px = w->grid()[0], py = w->grid()[1];
      // Per dimension of extent e along `others` lines: open 2(e-1) messages per line,
      // periodic 2e (e >= 2), none for e = 1.
      auto per_line = [&](int e) {
        return e == 1 ? 0 : (std::string(periodic) == "true" ? 2 * e : 2 * (e - 1));
      };
      const auto expected = static_cast<std::uint64_t>(3 * (per_line(px) * py + per_line(py) * px));
      EXPECT_EQ(check("halo2d", g), expected) << describe("halo2d", g);
    }
  EXPECT_EQ(check("halo2d", {{"px", "1"}, {"py", "5"}, {"iterations", "2"}}), 2u * 8);
  for (int n : {1, 2, 8, 12, 27})
    for (const char* periodic : {"false", "true"})
      check("halo3d", {{"ranks", std::to_string(n)}, {"iterations", "2"}, {"periodic", periodic}});
  // 3 x 2 x 2 open: x lines 4 of extent 3 -> 4 msgs each; y and z lines 6 of extent 2 -> 2 each.
  EXPECT_EQ(check("halo3d", {{"ranks", "12"}, {"iterations", "1"}}), 4u * 4 + 6 * 2 + 6 * 2);
}

TEST(WorkloadMatching, Sweep2dPipelineCannotDeadlock) {
  for (int n : {1, 2, 3, 4, 6, 9, 12})
    for (const char* blocks : {"1", "3"})
      for (const char* fixup : {"0s", "1ms"}) {
        const Given g = {
            {"ranks", std::to_string(n)}, {"iterations", "2"}, {"blocks", blocks}, {"fixup", fixup}};
        auto w = build("sweep2d", g);
        const int px = w->grid()[0], py = w->grid()[1];
        // Each sweep sends one message per block over every grid edge.
        const auto edges = static_cast<std::uint64_t>((px - 1) * py + px * (py - 1));
        EXPECT_EQ(check("sweep2d", g), 2 * 4 * std::stoull(blocks) * edges) << describe("sweep2d", g);
      }
}

TEST(WorkloadMatching, CollectiveLoops) {
  for (int n : {1, 2, 3, 5}) {
    const auto ns = std::to_string(n);
    std::uint64_t colls = 0;
    EXPECT_EQ(check("allreduce_loop", {{"ranks", ns}, {"iterations", "3"}}, &colls), 0u);
    EXPECT_EQ(colls, 3u);
    EXPECT_EQ(check("allreduce_loop", {{"ranks", ns}, {"iterations", "3"}, {"halo", "1KiB"}}, &colls),
              n > 1 ? 3u * 2 * n : 0u);
    EXPECT_EQ(colls, 3u);
    EXPECT_EQ(
        check("bcast_reduce", {{"ranks", ns}, {"iterations", "3"}, {"root", std::to_string(n - 1)}}, &colls),
        0u);
    EXPECT_EQ(colls, 6u);
    EXPECT_EQ(check("alltoall_loop", {{"ranks", ns}, {"iterations", "3"}}, &colls), 0u);
    EXPECT_EQ(colls, 3u);
  }
}

// The checker itself must catch what it claims to catch.
TEST(WorkloadMatching, CheckerDetectsDeadlockAndMismatch) {
  class Fixed final : public Workload {
   public:
    explicit Fixed(std::vector<std::vector<Action>> s) : s_(std::move(s)) {}
    std::string name() const override { return "fixed"; }
    int ranks() const override { return static_cast<int>(s_.size()); }
    int iterations() const override { return 1; }
    const trace::Definitions& definitions() const override { return defs_; }
    std::unique_ptr<ActionStream> stream(Rank r) const override {
      return std::make_unique<VectorStream>(s_[r]);
    }

   private:
    std::vector<std::vector<Action>> s_;
    trace::Definitions defs_;
  };
  auto msg = [](ActionKind k, Rank peer, std::uint64_t bytes) {
    Action a;
    a.kind = k;
    a.peer = peer;
    a.bytes = bytes;
    a.iteration = 0;
    return a;
  };
  // Both ranks send first: fine with eager sends, a deadlock under rendezvous.
  auto dead = execute(Fixed({{msg(ActionKind::Send, 1, 8), msg(ActionKind::Recv, 1, 8)},
                             {msg(ActionKind::Send, 0, 8), msg(ActionKind::Recv, 0, 8)}}));
  ASSERT_FALSE(dead.errors.empty());
  EXPECT_EQ(dead.errors.front(), "deadlock; blocked ranks: 0 1");
  auto mismatch = execute(Fixed({{msg(ActionKind::Send, 1, 8)}, {msg(ActionKind::Recv, 0, 16)}}));
  ASSERT_EQ(mismatch.errors.size(), 1u);
  EXPECT_EQ(mismatch.errors.front(), "rank 1: message from 0 tag 0 has 8 bytes, the receive expects 16");
}

}  // namespace
}  // namespace waitlab::models
