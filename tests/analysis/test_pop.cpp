// The POP model factors of a scaling study (analysis/pop/pop.hpp) with numbers computed by
// hand, the identity computation scalability = IPC × instruction × frequency scalability, and
// a run taken from a time-resolved result (a 1-rank trace has LB 1).
#include <gtest/gtest.h>

#include "analysis/pop/pop.hpp"
#include "trace_builder.hpp"

namespace waitlab::analysis {
namespace {

PopRun run(std::string name, std::size_t units, double elapsed, double useful, std::optional<double> ins,
           std::optional<double> cyc) {
  PopRun r;
  r.name = std::move(name);
  r.ranks = units;
  r.units = units;
  r.elapsed = elapsed;
  r.useful_sum = useful;
  r.eff.pe = useful / (static_cast<double>(units) * elapsed);
  r.eff.lb = 0.9;  // passed through as given
  r.eff.comm_e = r.eff.pe / r.eff.lb;
  r.eff.ser_e = 1;
  r.eff.trf_e = r.eff.comm_e;
  r.instructions = ins;
  r.cycles = cyc;
  return r;
}

// 1 rank: T 10 s, ΣU 9 s, 9e9 instructions, 1.8e10 cycles → IPC 0.5, 2 GHz.
// 2 ranks: T 6 s, ΣU 9.6 s (PE 0.8), 1.08e10 ins, 2.4e10 cyc → IPC 0.45, 2.5 GHz.
// 4 ranks: T 4 s, ΣU 12 s (PE 0.75), 1.2e10 ins, 2.4e10 cyc → IPC 0.5, 2 GHz.
std::vector<PopRun> series() {
  return {run("r4", 4, 4, 12, 1.2e10, 2.4e10), run("r1", 1, 10, 9, 9e9, 1.8e10),
          run("r2", 2, 6, 9.6, 1.08e10, 2.4e10), run("r2b", 2, 5, 8, std::nullopt, std::nullopt)};
}

void expect_product(const PopFactors& f) {
  ASSERT_TRUE(f.ipc_scal && f.ins_scal && f.freq_scal);
  EXPECT_NEAR(f.comp_scal, *f.ipc_scal * *f.ins_scal * *f.freq_scal, 1e-12);
}

TEST(Pop, StrongScalingFactors) {
  const auto t = pop_model(series(), Scaling::Strong);
  EXPECT_EQ(t.scaling, Scaling::Strong);
  ASSERT_EQ(t.runs.size(), 4u);
  EXPECT_EQ(t.reference, 0u);
  // Sorted by units; the tie at 2 keeps the input order.
  EXPECT_EQ(t.runs[0].name, "r1");
  EXPECT_EQ(t.runs[1].name, "r2");
  EXPECT_EQ(t.runs[2].name, "r2b");
  EXPECT_EQ(t.runs[3].name, "r4");
  const auto& ref = t.runs[0];
  EXPECT_EQ(ref.comp_scal, 1.0);
  EXPECT_EQ(ref.speedup, 1.0);
  EXPECT_NEAR(ref.global_e, 0.9, 1e-15);
  EXPECT_NEAR(*ref.ipc, 0.5, 1e-15);
  EXPECT_NEAR(*ref.ghz, 2.0, 1e-15);
  EXPECT_EQ(*ref.instructions, 9e9);
  const auto& r2 = t.runs[1];
  EXPECT_NEAR(r2.eff.pe, 0.8, 1e-15);
  EXPECT_NEAR(r2.comp_scal, 9 / 9.6, 1e-15);  // 0.9375
  EXPECT_NEAR(*r2.ipc_scal, 0.9, 1e-12);
  EXPECT_NEAR(*r2.ins_scal, 9e9 / 1.08e10, 1e-12);
  EXPECT_NEAR(*r2.freq_scal, 1.25, 1e-12);
  EXPECT_NEAR(*r2.ghz, 2.5, 1e-12);
  EXPECT_NEAR(r2.global_e, 0.75, 1e-12);  // 0.8 × 0.9375
  EXPECT_NEAR(r2.speedup, 10.0 / 6, 1e-15);
  expect_product(r2);
  const auto& r4 = t.runs[3];
  EXPECT_NEAR(r4.comp_scal, 0.75, 1e-15);
  EXPECT_NEAR(*r4.ipc_scal, 1.0, 1e-12);
  EXPECT_NEAR(*r4.ins_scal, 0.75, 1e-12);
  EXPECT_NEAR(*r4.freq_scal, 1.0, 1e-12);
  EXPECT_NEAR(r4.global_e, 0.5625, 1e-12);
  EXPECT_NEAR(r4.speedup, 2.5, 1e-15);
  EXPECT_EQ(r4.eff.lb, 0.9);
  expect_product(r4);
  // Without counters: the time factors only.
  const auto& nc = t.runs[2];
  EXPECT_NEAR(nc.comp_scal, 9.0 / 8, 1e-15);
  EXPECT_NEAR(nc.speedup, 2.0, 1e-15);
  EXPECT_FALSE(nc.ipc || nc.ghz || nc.instructions || nc.ipc_scal || nc.ins_scal || nc.freq_scal);
}

TEST(Pop, WeakScalingFactors) {
  const auto t = pop_model(series(), Scaling::Weak);
  ASSERT_EQ(t.runs.size(), 4u);
  const auto& r2 = t.runs[1];
  EXPECT_NEAR(r2.comp_scal, 9 * 2 / 9.6, 1e-15);  // 1.875
  EXPECT_NEAR(*r2.ins_scal, 9e9 * 2 / 1.08e10, 1e-12);
  EXPECT_NEAR(*r2.ipc_scal, 0.9, 1e-12);
  EXPECT_NEAR(r2.global_e, 0.8 * 1.875, 1e-12);
  expect_product(r2);
  const auto& r4 = t.runs[3];
  EXPECT_NEAR(r4.comp_scal, 3.0, 1e-15);  // 9·4 / 12
  EXPECT_NEAR(*r4.ins_scal, 3.0, 1e-12);
  expect_product(r4);
  Scaling s = Scaling::Strong;
  ASSERT_TRUE(parse_scaling(scaling_name(Scaling::Weak), s));
  EXPECT_EQ(s, Scaling::Weak);
  EXPECT_FALSE(parse_scaling("Weak", s));
  EXPECT_EQ(scaling_name(Scaling::Strong), "strong");
}

// The reference is the first run given among those with the fewest units; a counter missing
// from the reference takes its factors away from every run.
TEST(Pop, ReferenceAndMissingCounters) {
  auto a = run("a", 1, 10, 9, 9e9, std::nullopt);
  auto b = run("b", 1, 8, 7, 7e9, std::nullopt);
  auto c = run("c", 2, 5, 9, 9e9, 1.8e10);
  const auto t = pop_model({c, b, a}, Scaling::Strong);
  ASSERT_EQ(t.runs.size(), 3u);
  EXPECT_EQ(t.runs[0].name, "b");
  EXPECT_EQ(t.runs[1].name, "a");
  EXPECT_NEAR(t.runs[1].comp_scal, 7.0 / 9, 1e-15);
  EXPECT_NEAR(t.runs[1].speedup, 0.8, 1e-15);
  const auto& fc = t.runs[2];
  EXPECT_NEAR(*fc.ins_scal, 7.0 / 9, 1e-15);
  EXPECT_FALSE(fc.freq_scal.has_value());  // the reference has no cycles
  EXPECT_FALSE(fc.ipc_scal.has_value());
  EXPECT_NEAR(*fc.ipc, 0.5, 1e-15);  // its own IPC and frequency are known
  EXPECT_NEAR(*fc.ghz, 2.0, 1e-15);
  EXPECT_TRUE(pop_model({}, Scaling::Strong).runs.empty());
}

// From time-resolved results: a 1-rank run (LB 1) and a 2-rank run of BSC's convention.
// 1 rank: main 0–10, MPI_Barrier 8–9 → ΣU = 9, T = 10; samples (8: 900 ins, 1800 cyc),
// (10: 100, 200) useful, (9: 50, 50) in MPI → INS 1000, CYC 2000.
// 2 ranks: main 0–5, barrier 3–4 (rank 0) and 2–4 (rank 1) → ΣU = 4 + 3 = 7, T = 5; samples
// (3: 600, 1500) on rank 0, (2: 400, 1000) on rank 1 → INS 1000, CYC 2500.
TEST(Pop, FromTimeResolvedResults) {
  using test::TraceBuilder;
  TraceBuilder one(1, 1.0);
  one.enter(0, 0, "main").coll(0, trace::MpiOp::Barrier, 8, 9).leave(0, 10, "main");
  trace::Trace t1 = one.trace();
  t1.counters = trace::kHasInstructions | trace::kHasCycles;
  t1.locations[0].counters = {{8, 900, 1800}, {9, 50, 50}, {10, 100, 200}};
  TraceBuilder two(2, 1.0);
  two.enter(0, 0, "main").coll(0, trace::MpiOp::Barrier, 3, 4).leave(0, 5, "main");
  two.enter(1, 0, "main").coll(1, trace::MpiOp::Barrier, 2, 4).leave(1, 5, "main");
  trace::Trace t2 = two.trace();
  t2.counters = trace::kHasInstructions | trace::kHasCycles;
  t2.locations[0].counters = {{3, 600, 1500}};
  t2.locations[1].counters = {{2, 400, 1000}};
  const auto analyse = [](const trace::Trace& t) {
    return time_resolved(t, lamport_reference(t, trace::Matching::build(t)), {}, Convention::Bsc);
  };
  const PopRun p1 = pop_run("one", analyse(t1));
  EXPECT_EQ(p1.units, 1u);
  EXPECT_EQ(p1.eff.lb, 1.0);
  EXPECT_NEAR(p1.useful_sum, 9, 1e-12);
  EXPECT_EQ(*p1.instructions, 1000.0);
  EXPECT_EQ(*p1.cycles, 2000.0);
  const PopRun p2 = pop_run("two", analyse(t2));
  EXPECT_EQ(p2.ranks, 2u);
  EXPECT_NEAR(p2.useful_sum, 7, 1e-12);
  EXPECT_NEAR(p2.eff.pe, 0.7, 1e-12);
  const auto t = pop_model({p2, p1}, Scaling::Strong);
  EXPECT_EQ(t.runs[0].eff.lb, 1.0);
  const auto& f = t.runs[1];
  EXPECT_NEAR(f.comp_scal, 9.0 / 7, 1e-12);
  EXPECT_NEAR(f.global_e, 0.7 * 9 / 7, 1e-12);
  EXPECT_NEAR(f.speedup, 2.0, 1e-12);
  EXPECT_NEAR(*f.ipc_scal, 0.4 / 0.5, 1e-12);
  EXPECT_NEAR(*f.ins_scal, 1.0, 1e-12);
  EXPECT_NEAR(*f.freq_scal, (2500.0 / 7) / (2000.0 / 9), 1e-12);
  expect_product(f);
  const PopRun none = pop_run("none", analyse(two.trace()));
  EXPECT_FALSE(none.instructions || none.cycles);
}

}  // namespace
}  // namespace waitlab::analysis
