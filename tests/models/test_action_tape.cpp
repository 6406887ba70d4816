// models/action_tape.hpp: every Action comes back exactly as pushed, and a tape is a fraction
// of the Actions' 64 bytes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "models/action_tape.hpp"

namespace waitlab::models {
namespace {

bool same(const Action& a, const Action& b) {
  std::uint64_t x = 0, y = 0;
  std::memcpy(&x, &a.amount, sizeof x);
  std::memcpy(&y, &b.amount, sizeof y);
  return a.kind == b.kind && a.flops == b.flops && a.in_waitall == b.in_waitall && a.comm == b.comm &&
         a.region == b.region && a.peer == b.peer && a.peer2 == b.peer2 && a.root == b.root && a.tag == b.tag &&
         a.tag2 == b.tag2 && a.request == b.request && a.iteration == b.iteration && a.counts == b.counts &&
         a.bytes == b.bytes && a.bytes2 == b.bytes2 && x == y;
}

std::vector<Action> round_trip(const std::vector<Action>& in, ActionTape* keep = nullptr) {
  ActionTape t;
  for (const Action& a : in) t.push(a);
  EXPECT_EQ(t.size(), in.size());
  std::vector<Action> out;
  TapeReader r(t);
  for (Action a; r.next(a);) out.push_back(a);
  EXPECT_EQ(r.position(), in.size());
  if (keep) *keep = t;
  return out;
}

TEST(ActionTape, EveryFieldAtItsExtremesComesBackBitForBit) {
  std::vector<Action> in;
  in.push_back(Action{});  // every field at its default: kind and mask only
  Action full;
  full.kind = ActionKind::Sendrecv;
  full.flops = true;
  full.in_waitall = true;
  full.comm = 65535;
  full.region = std::numeric_limits<trace::RegionId>::max();
  full.peer = std::numeric_limits<Rank>::max();
  full.peer2 = std::numeric_limits<Rank>::min();
  full.root = -2;
  full.tag = std::numeric_limits<std::int32_t>::min();
  full.tag2 = std::numeric_limits<std::int32_t>::max();
  full.request = 0;  // differs from the default −1
  full.iteration = 0;
  full.counts = 0;
  full.bytes = std::numeric_limits<std::uint64_t>::max();
  full.bytes2 = 1;
  full.amount = -0.0;  // equal to the default 0 as a number, not as bits
  in.push_back(full);
  Action nan;
  nan.amount = std::nan("0x5ca1ab1e");
  in.push_back(nan);
  Action tiny;
  tiny.kind = ActionKind::ReduceScatter;
  tiny.amount = std::numeric_limits<double>::denorm_min();
  tiny.peer = -333;  // MPI_ANY_SOURCE as TI writes it
  in.push_back(tiny);
  for (int k = 0; k <= static_cast<int>(ActionKind::ReduceScatter); ++k) {
    Action a;
    a.kind = static_cast<ActionKind>(k);
    a.bytes = 1ull << (k * 2);
    a.tag = -k;
    in.push_back(a);
  }
  const auto out = round_trip(in);
  ASSERT_EQ(out.size(), in.size());
  for (std::size_t i = 0; i < in.size(); ++i) EXPECT_TRUE(same(in[i], out[i])) << "action " << i;
  EXPECT_TRUE(std::signbit(out[1].amount));
}

// A halo exchange step as a replay stores it: 9 bytes or so per call, 12 per compute interval.
TEST(ActionTape, AnExchangeTakesAFractionOfTheActionsBytes) {
  std::vector<Action> in;
  for (int it = 0; it < 1000; ++it) {
    Action c;
    c.kind = ActionKind::Compute;
    c.flops = true;
    c.amount = 1e6 + it;
    c.iteration = it;
    in.push_back(c);
    for (int k = 0; k < 4; ++k) {
      Action a;
      a.kind = k % 2 ? ActionKind::Isend : ActionKind::Irecv;
      a.peer = 1000 + k;
      a.tag = 7;
      a.bytes = 16384;
      a.request = k;
      in.push_back(a);
    }
    Action w;
    w.kind = ActionKind::Waitall;
    in.push_back(w);
  }
  ActionTape t;
  const auto out = round_trip(in, &t);
  for (std::size_t i = 0; i < in.size(); ++i) ASSERT_TRUE(same(in[i], out[i])) << "action " << i;
  EXPECT_EQ(t.computes(), 1000u);
  // Compute: kind 1 + mask 1 + iteration ≤ 2 + amount 8 = 12; isend/irecv: kind 1 + mask 1 + peer 2
  // + tag 1 + request 1 + bytes 3 = 9; waitall: kind and mask, 2.
  EXPECT_EQ(t.bytes(), 1000u * (12 + 4 * 9 + 2) - 64);  // iterations 0–63 take one byte
  EXPECT_LT(t.bytes() * 5, in.size() * sizeof(Action));
}

}  // namespace
}  // namespace waitlab::models
