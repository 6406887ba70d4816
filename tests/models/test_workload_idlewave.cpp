// The timing claims of docs/workloads.md, checked on a zero-latency eager model (a send
// never waits; a receive completes when both its call and the matching send have
// happened; compute advances the rank's clock). A one-off delay δ on rank r0 in iteration
// i0 must make exactly the ranks inside the max-plus cone of ALGORITHMS.md §7 late by δ at
// the start of iteration i: |r - r0| <= d·(i - i0) for heat1d (non-blocking for any d;
// blocking send_first for d = 1), and Manhattan grid distance <= i - i0 for halo2d. The
// even_odd order forwards a delay further within one iteration, as documented.
#include <gtest/gtest.h>

#include <cmath>
#include <deque>
#include <map>
#include <tuple>

#include "test_workload_util.hpp"

namespace waitlab::models {
namespace {

using workload_test::build;

// starts[r][i] = time rank r enters iteration i's first region.
using Starts = std::vector<std::vector<double>>;

Starts run_eager(const Workload& w, Rank delayed_rank, int delayed_iteration, double delta) {
  const int n = w.ranks();
  using Key = std::tuple<Rank, Rank, std::int32_t>;
  struct Channel {
    std::deque<double> messages;                        // send times not yet bound to a receive
    std::deque<std::pair<Rank, std::int32_t>> waiting;  // receives not yet bound: rank, slot (-1 blocking)
  };
  std::map<Key, Channel> channels;
  struct RankState {
    std::unique_ptr<ActionStream> stream;
    double t = 0;
    std::map<std::int32_t, double> bound;  // slot -> send time (slot -1 = the blocking receive)
    int unbound = 0;                       // receives posted but not yet bound
    bool waiting_all = false, waiting_one = false, done = false;
  };
  std::vector<RankState> st(static_cast<std::size_t>(n));
  Starts starts(static_cast<std::size_t>(n));
  for (Rank r = 0; r < n; ++r) st[r].stream = w.stream(r);

  auto bind = [&](Rank r, std::int32_t slot, double sent) {
    st[r].bound[slot] = sent;
    --st[r].unbound;
  };
  auto send = [&](Rank r, const Action& a) {
    auto& c = channels[{r, a.peer, a.tag}];
    if (!c.waiting.empty()) {
      bind(a.peer, c.waiting.front().second, st[r].t);
      c.waiting.pop_front();
    } else {
      c.messages.push_back(st[r].t);
    }
  };
  auto post_recv = [&](Rank r, const Action& a, std::int32_t slot) {
    auto& c = channels[{a.peer, r, a.tag}];
    ++st[r].unbound;
    if (!c.messages.empty()) {
      bind(r, slot, c.messages.front());
      c.messages.pop_front();
    } else {
      c.waiting.push_back({r, slot});
    }
  };
  bool progress = true;
  while (progress) {
    progress = false;
    for (Rank r = 0; r < n; ++r) {
      auto& s = st[r];
      while (!s.done) {
        if (s.waiting_one || s.waiting_all) {
          if (s.unbound > 0) break;
          for (const auto& [slot, sent] : s.bound) s.t = std::max(s.t, sent);
          s.bound.clear();
          s.waiting_one = s.waiting_all = false;
        }
        Action a;
        if (!s.stream->next(a)) {
          s.done = true;
          progress = true;
          break;
        }
        progress = true;
        switch (a.kind) {
          case ActionKind::Enter:
            if (starts[r].size() == static_cast<std::size_t>(a.iteration)) starts[r].push_back(s.t);
            break;
          case ActionKind::Leave:
            break;
          case ActionKind::Compute:
            s.t += a.amount + (r == delayed_rank && a.iteration == delayed_iteration ? delta : 0);
            break;
          case ActionKind::Send:
          case ActionKind::Isend:
            send(r, a);
            break;
          case ActionKind::Recv:
            post_recv(r, a, -1);
            s.waiting_one = true;
            break;
          case ActionKind::Irecv:
            post_recv(r, a, a.request);
            break;
          case ActionKind::Waitall:
            s.waiting_all = true;
            break;
          default:
            ADD_FAILURE() << "unexpected " << action_name(a.kind);
        }
      }
    }
  }
  for (Rank r = 0; r < n; ++r) EXPECT_TRUE(st[r].done) << "rank " << r << " never finished";
  return starts;
}

// Lateness of every (rank, iteration) in the perturbed run; `inside(r, i)` says where the
// cone predicts exactly δ (elsewhere 0). Returns the number of mismatches.
template <class Inside>
int compare_with_cone(const Workload& w, Rank r0, int i0, double delta, Inside inside) {
  const auto base = run_eager(w, -1, -1, 0);
  const auto late = run_eager(w, r0, i0, delta);
  int bad = 0;
  for (Rank r = 0; r < w.ranks(); ++r)
    for (int i = 1; i < w.iterations(); ++i) {
      const double lateness = late[r][i] - base[r][i];
      const double expected = inside(r, i) ? delta : 0.0;
      if (std::abs(lateness - expected) > 1e-12) {
        if (++bad <= 5) ADD_FAILURE() << "rank " << r << " iteration " << i << ": late " << lateness;
      }
    }
  return bad;
}

TEST(WorkloadIdleWave, Heat1dNonblockingFollowsTheMaxPlusCone) {
  for (int d : {1, 2, 3}) {
    auto w = build(
        "heat1d",
        {{"ranks", "40"}, {"iterations", "12"}, {"distance", std::to_string(d)}, {"mode", "nonblocking"}});
    // The delay is in the compute of iteration 2 (before its exchange): iteration 3 starts
    // late on every rank within d of rank 20, iteration 4 within 2d, ...
    EXPECT_EQ(compare_with_cone(*w, 20, 2, 5e-4,
                                [d](Rank r, int i) { return i >= 3 && std::abs(r - 20) <= d * (i - 2); }),
              0)
        << "distance " << d;
  }
}

TEST(WorkloadIdleWave, Heat1dBlockingSendFirstFollowsTheCone) {
  auto w = build("heat1d", {{"ranks", "40"}, {"iterations", "12"}});
  EXPECT_EQ(
      compare_with_cone(*w, 17, 2, 5e-4, [](Rank r, int i) { return i >= 3 && std::abs(r - 17) <= i - 2; }),
      0);
}

TEST(WorkloadIdleWave, Heat1dBlockingEvenOddForwardsWithinAnIteration) {
  // Odd ranks receive before they send: a delay on rank 16 (even) reaches rank 18 in the
  // same iteration, outside the d = 1 cone.
  auto w = build("heat1d", {{"ranks", "40"}, {"iterations", "6"}, {"order", "even_odd"}});
  const auto base = run_eager(*w, -1, -1, 0);
  const auto late = run_eager(*w, 16, 2, 5e-4);
  EXPECT_DOUBLE_EQ(late[18][3] - base[18][3], 5e-4);
  EXPECT_DOUBLE_EQ(late[19][3] - base[19][3], 0.0);
}

TEST(WorkloadIdleWave, Halo2dSpreadsAsADiamond) {
  auto w = build("halo2d", {{"px", "9"}, {"py", "11"}, {"iterations", "10"}});
  const int x0 = 4, y0 = 5, r0 = x0 * 11 + y0;
  EXPECT_EQ(compare_with_cone(*w, r0, 1, 3e-4,
                              [&](Rank r, int i) {
                                const int x = r / 11, y = r % 11;
                                return i >= 2 && std::abs(x - x0) + std::abs(y - y0) <= i - 1;
                              }),
            0);
}

}  // namespace
}  // namespace waitlab::models
