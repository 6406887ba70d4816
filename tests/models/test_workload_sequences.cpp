// Exact action sequences of the first, a middle and the last rank, two iterations of every
// synthetic workload, written out by hand from docs/workloads.md.
#include <gtest/gtest.h>

#include "util/error.hpp"
#include "test_workload_util.hpp"

namespace waitlab::models {
namespace {

using workload_test::build;
using workload_test::iterations;
using workload_test::shown;
using V = std::vector<std::string>;

// The exchange of heat1d's blocking mode: shift +1 (tag 0), -1 (tag 1), +2 (tag 2), -2 (tag 3).
V heat_body(const std::string& compute, const V& exchange) {
  V v = {"enter compute", "compute(compute) " + compute, "leave compute", "enter exchange"};
  v.insert(v.end(), exchange.begin(), exchange.end());
  v.push_back("leave exchange");
  return v;
}

TEST(WorkloadSequence, Heat1dBlockingOpenChain) {
  // send_first: per shift send, then receive — the classic code; the chain's ends skip the
  // partner that does not exist.
  auto w = build("heat1d", {{"ranks", "4"}, {"iterations", "2"}});
  EXPECT_EQ(shown(*w, 0), iterations(heat_body("0.001", {"send >1 t0 8", "recv <1 t1 8"}), 2));
  EXPECT_EQ(
      shown(*w, 1),
      iterations(heat_body("0.001", {"send >2 t0 8", "recv <0 t0 8", "send >0 t1 8", "recv <2 t1 8"}), 2));
  EXPECT_EQ(
      shown(*w, 2),
      iterations(heat_body("0.001", {"send >3 t0 8", "recv <1 t0 8", "send >1 t1 8", "recv <3 t1 8"}), 2));
  EXPECT_EQ(shown(*w, 3), iterations(heat_body("0.001", {"recv <2 t0 8", "send >2 t1 8"}), 2));
}

TEST(WorkloadSequence, Heat1dBlockingPeriodicDistance2) {
  // Ring of 6, distance 2: ranks below gcd(6, k) receive first in the shifts ±k — rank 0 for
  // k = 1, ranks 0 and 1 for k = 2.
  auto w = build("heat1d", {{"ranks", "6"},
                            {"iterations", "2"},
                            {"distance", "2"},
                            {"periodic", "true"},
                            {"bytes", "16B"},
                            {"compute", "2ms"}});
  EXPECT_EQ(shown(*w, 0), iterations(heat_body("0.002", {"recv <5 t0 16", "send >1 t0 16", "recv <1 t1 16",
                                                         "send >5 t1 16", "recv <4 t2 16", "send >2 t2 16",
                                                         "recv <2 t3 16", "send >4 t3 16"}),
                                     2));
  EXPECT_EQ(shown(*w, 1), iterations(heat_body("0.002", {"send >2 t0 16", "recv <0 t0 16", "send >0 t1 16",
                                                         "recv <2 t1 16", "recv <5 t2 16", "send >3 t2 16",
                                                         "recv <3 t3 16", "send >5 t3 16"}),
                                     2));
  EXPECT_EQ(shown(*w, 5), iterations(heat_body("0.002", {"send >0 t0 16", "recv <4 t0 16", "send >4 t1 16",
                                                         "recv <0 t1 16", "send >1 t2 16", "recv <3 t2 16",
                                                         "send >3 t3 16", "recv <1 t3 16"}),
                                     2));
}

TEST(WorkloadSequence, Heat1dBlockingEvenOdd) {
  // even_odd: ranks with even floor(r / k) send first in the shifts ±k, the others receive first.
  auto chain = build("heat1d", {{"ranks", "4"}, {"iterations", "2"}, {"order", "even_odd"}});
  EXPECT_EQ(shown(*chain, 0), iterations(heat_body("0.001", {"send >1 t0 8", "recv <1 t1 8"}), 2));
  EXPECT_EQ(
      shown(*chain, 1),
      iterations(heat_body("0.001", {"recv <0 t0 8", "send >2 t0 8", "recv <2 t1 8", "send >0 t1 8"}), 2));
  EXPECT_EQ(shown(*chain, 3), iterations(heat_body("0.001", {"recv <2 t0 8", "send >2 t1 8"}), 2));

  auto ring = build(
      "heat1d",
      {{"ranks", "5"}, {"iterations", "2"}, {"distance", "2"}, {"periodic", "true"}, {"order", "even_odd"}});
  // Rank 0: even for both distances.
  EXPECT_EQ(shown(*ring, 0),
            iterations(heat_body("0.001", {"send >1 t0 8", "recv <4 t0 8", "send >4 t1 8", "recv <1 t1 8",
                                           "send >2 t2 8", "recv <3 t2 8", "send >3 t3 8", "recv <2 t3 8"}),
                       2));
  // Rank 2: floor(2/1) = 2 even, floor(2/2) = 1 odd.
  EXPECT_EQ(shown(*ring, 2),
            iterations(heat_body("0.001", {"send >3 t0 8", "recv <1 t0 8", "send >1 t1 8", "recv <3 t1 8",
                                           "recv <0 t2 8", "send >4 t2 8", "recv <4 t3 8", "send >0 t3 8"}),
                       2));
  // Rank 4: floor(4/1) = 4 even, floor(4/2) = 2 even.
  EXPECT_EQ(shown(*ring, 4),
            iterations(heat_body("0.001", {"send >0 t0 8", "recv <3 t0 8", "send >3 t1 8", "recv <0 t1 8",
                                           "send >1 t2 8", "recv <2 t2 8", "send >2 t3 8", "recv <1 t3 8"}),
                       2));
}

TEST(WorkloadSequence, Heat1dNonblockingPeriodic) {
  auto w =
      build("heat1d", {{"ranks", "5"}, {"iterations", "2"}, {"periodic", "true"}, {"mode", "nonblocking"}});
  auto body = [](int left, int right) {
    const auto l = std::to_string(left), r = std::to_string(right);
    return V{"enter compute",
             "compute(compute) 0.001",
             "leave compute",
             "enter exchange",
             "irecv <" + l + " t0 8 r0",
             "irecv <" + r + " t1 8 r1",
             "isend >" + r + " t0 8 r2",
             "isend >" + l + " t1 8 r3",
             "waitall",
             "leave exchange"};
  };
  EXPECT_EQ(shown(*w, 0), iterations(body(4, 1), 2));
  EXPECT_EQ(shown(*w, 2), iterations(body(1, 3), 2));
  EXPECT_EQ(shown(*w, 4), iterations(body(3, 0), 2));
}

TEST(WorkloadSequence, Heat1dNonblockingOpenChainNumbersRequestsDensely) {
  auto w = build("heat1d", {{"ranks", "3"}, {"iterations", "2"}, {"mode", "nonblocking"}});
  const V head = {"enter compute", "compute(compute) 0.001", "leave compute", "enter exchange"};
  auto with = [&](V mid) {
    V v = head;
    v.insert(v.end(), mid.begin(), mid.end());
    v.push_back("waitall");
    v.push_back("leave exchange");
    return v;
  };
  EXPECT_EQ(shown(*w, 0), iterations(with({"irecv <1 t1 8 r0", "isend >1 t0 8 r1"}), 2));
  EXPECT_EQ(
      shown(*w, 1),
      iterations(with({"irecv <0 t0 8 r0", "irecv <2 t1 8 r1", "isend >2 t0 8 r2", "isend >0 t1 8 r3"}), 2));
  EXPECT_EQ(shown(*w, 2), iterations(with({"irecv <1 t0 8 r0", "isend >1 t1 8 r1"}), 2));
}

TEST(WorkloadSequence, Heat1dFlopsReplaceSeconds) {
  auto w = build("heat1d", {{"ranks", "1"}, {"iterations", "2"}, {"flops", "2Gf"}});
  // A single rank has no neighbour: the exchange region is empty.
  EXPECT_EQ(shown(*w, 0), iterations({"enter compute", "compute(compute) 2e+09f", "leave compute",
                                      "enter exchange", "leave exchange"},
                                     2));
}

TEST(WorkloadSequence, Halo2dOpenGrid) {
  // 6 ranks -> 3 x 2 (MPI_Dims_create); rank = x * 2 + y. Face tags: 0 = -x, 1 = +x, 2 = -y,
  // 3 = +y (the face a message leaves through).
  auto w = build("halo2d", {{"ranks", "6"}, {"iterations", "2"}, {"bytes", "1KiB"}});
  ASSERT_EQ(w->grid(), (std::vector<int>{3, 2}));
  auto with = [](V mid) {
    V v = {"enter compute", "compute(compute) 0.001", "leave compute", "enter exchange"};
    v.insert(v.end(), mid.begin(), mid.end());
    v.push_back("waitall");
    v.push_back("leave exchange");
    return v;
  };
  EXPECT_EQ(shown(*w, 0), iterations(with({"irecv <2 t0 1024 r0", "irecv <1 t2 1024 r1",
                                           "isend >2 t1 1024 r2", "isend >1 t3 1024 r3"}),
                                     2));
  EXPECT_EQ(shown(*w, 3),
            iterations(with({"irecv <1 t1 1024 r0", "irecv <5 t0 1024 r1", "irecv <2 t3 1024 r2",
                             "isend >1 t0 1024 r3", "isend >5 t1 1024 r4", "isend >2 t2 1024 r5"}),
                       2));
  EXPECT_EQ(shown(*w, 5), iterations(with({"irecv <3 t1 1024 r0", "irecv <4 t3 1024 r1",
                                           "isend >3 t0 1024 r2", "isend >4 t2 1024 r3"}),
                                     2));
}

TEST(WorkloadSequence, Halo3dPeriodicExtentTwo) {
  // 2 x 2 x 2 torus: the lower and upper neighbour in each dimension are the same rank; the
  // tags keep the two halos apart. rank = (x * 2 + y) * 2 + z.
  auto w = build("halo3d", {{"ranks", "8"}, {"iterations", "2"}, {"periodic", "true"}});
  ASSERT_EQ(w->grid(), (std::vector<int>{2, 2, 2}));
  auto body = [](int nx, int ny, int nz) {
    const auto x = std::to_string(nx), y = std::to_string(ny), z = std::to_string(nz);
    return V{"enter compute",
             "compute(compute) 0.001",
             "leave compute",
             "enter exchange",
             "irecv <" + x + " t1 8192 r0",
             "irecv <" + x + " t0 8192 r1",
             "irecv <" + y + " t3 8192 r2",
             "irecv <" + y + " t2 8192 r3",
             "irecv <" + z + " t5 8192 r4",
             "irecv <" + z + " t4 8192 r5",
             "isend >" + x + " t0 8192 r6",
             "isend >" + x + " t1 8192 r7",
             "isend >" + y + " t2 8192 r8",
             "isend >" + y + " t3 8192 r9",
             "isend >" + z + " t4 8192 r10",
             "isend >" + z + " t5 8192 r11",
             "waitall",
             "leave exchange"};
  };
  EXPECT_EQ(shown(*w, 0), iterations(body(4, 2, 1), 2));
  EXPECT_EQ(shown(*w, 5), iterations(body(1, 7, 4), 2));
  EXPECT_EQ(shown(*w, 7), iterations(body(3, 5, 6), 2));
}

// halo2d/halo3d `completion`: one MPI_Waitall (default), or one MPI_Wait per request in the
// order posted — the receives (slots 0 .. n−1), then the sends (n .. 2n−1). One iteration of
// the interior rank 4 = (1, 1) of a 3 x 3 grid: neighbours -x 1, +x 7, -y 3, +y 5.
V halo_interior_2d(const V& completion) {
  V v = {"enter compute",       "compute(compute) 0.001", "leave compute",       "enter exchange",
         "irecv <1 t1 1024 r0", "irecv <7 t0 1024 r1",    "irecv <3 t3 1024 r2", "irecv <5 t2 1024 r3",
         "isend >1 t0 1024 r4", "isend >7 t1 1024 r5",    "isend >3 t2 1024 r6", "isend >5 t3 1024 r7"};
  v.insert(v.end(), completion.begin(), completion.end());
  v.push_back("leave exchange");
  return v;
}

TEST(WorkloadSequence, Halo2dCompletionWaitallIsTheDefault) {
  const V expected = iterations(halo_interior_2d({"waitall"}), 1);
  auto dflt = build("halo2d", {{"px", "3"}, {"py", "3"}, {"iterations", "1"}, {"bytes", "1KiB"}});
  EXPECT_EQ(shown(*dflt, 4), expected);
  auto w = build("halo2d",
                 {{"px", "3"}, {"py", "3"}, {"iterations", "1"}, {"bytes", "1KiB"}, {"completion", "waitall"}});
  EXPECT_EQ(shown(*w, 4), expected);
}

TEST(WorkloadSequence, Halo2dCompletionWaitOnePerRequest) {
  auto w = build("halo2d",
                 {{"px", "3"}, {"py", "3"}, {"iterations", "2"}, {"bytes", "1KiB"}, {"completion", "wait"}});
  // Receives first, in the order posted, then the sends; the slots restart at 0 every iteration.
  EXPECT_EQ(shown(*w, 4), iterations(halo_interior_2d({"wait r0", "wait r1", "wait r2", "wait r3", "wait r4",
                                                       "wait r5", "wait r6", "wait r7"}),
                                     2));
  // Exact kinds, peers and slots, not just their printout.
  const auto actions = workload_test::draw(*w, 4);
  ASSERT_EQ(actions.size(), 2u * 21);
  for (int i = 0; i < 8; ++i) {
    const Action& a = actions[static_cast<std::size_t>(12 + i)];
    EXPECT_EQ(a.kind, ActionKind::Wait) << i;
    EXPECT_EQ(a.request, i);
    EXPECT_EQ(a.peer, trace::kNoRank);
    EXPECT_EQ(a.iteration, 0);
  }
  // A corner has two neighbours: four requests, four waits (slots stay dense).
  EXPECT_EQ(shown(*w, 0),
            iterations({"enter compute", "compute(compute) 0.001", "leave compute", "enter exchange",
                        "irecv <3 t0 1024 r0", "irecv <1 t2 1024 r1", "isend >3 t1 1024 r2",
                        "isend >1 t3 1024 r3", "wait r0", "wait r1", "wait r2", "wait r3", "leave exchange"},
                       2));
}

// prepost: the receives go first, in their own `exchange` instance, then the compute; the
// sends and the completion follow. Interior rank 4 of 3 x 3, and corner rank 0 with `wait`.
TEST(WorkloadSequence, Halo2dPrepostReceivesBeforeTheCompute) {
  auto w = build("halo2d", {{"px", "3"}, {"py", "3"}, {"iterations", "2"}, {"bytes", "1KiB"}, {"prepost", "true"}});
  EXPECT_EQ(shown(*w, 4),
            iterations({"enter exchange", "irecv <1 t1 1024 r0", "irecv <7 t0 1024 r1", "irecv <3 t3 1024 r2",
                        "irecv <5 t2 1024 r3", "leave exchange", "enter compute", "compute(compute) 0.001",
                        "leave compute", "enter exchange", "isend >1 t0 1024 r4", "isend >7 t1 1024 r5",
                        "isend >3 t2 1024 r6", "isend >5 t3 1024 r7", "waitall", "leave exchange"},
                       2));
  auto each = build("halo2d", {{"px", "3"}, {"py", "3"}, {"iterations", "1"}, {"bytes", "1KiB"},
                               {"prepost", "true"}, {"completion", "wait"}});
  EXPECT_EQ(shown(*each, 0),
            iterations({"enter exchange", "irecv <3 t0 1024 r0", "irecv <1 t2 1024 r1", "leave exchange",
                        "enter compute", "compute(compute) 0.001", "leave compute", "enter exchange",
                        "isend >3 t1 1024 r2", "isend >1 t3 1024 r3", "wait r0", "wait r1", "wait r2", "wait r3",
                        "leave exchange"},
                       1));
}

TEST(WorkloadSequence, Halo3dCompletionWait) {
  // Interior rank 13 = (1, 1, 1) of 3 x 3 x 3: neighbours -x 4, +x 22, -y 10, +y 16, -z 12, +z 14.
  auto w = build("halo3d", {{"px", "3"}, {"py", "3"}, {"pz", "3"}, {"iterations", "1"}, {"completion", "wait"}});
  V body = {"enter compute", "compute(compute) 0.001", "leave compute", "enter exchange"};
  const int peer[6] = {4, 22, 10, 16, 12, 14};
  for (int f = 0; f < 6; ++f)
    body.push_back("irecv <" + std::to_string(peer[f]) + " t" + std::to_string(f ^ 1) + " 8192 r" +
                   std::to_string(f));
  for (int f = 0; f < 6; ++f)
    body.push_back("isend >" + std::to_string(peer[f]) + " t" + std::to_string(f) + " 8192 r" +
                   std::to_string(6 + f));
  for (int s = 0; s < 12; ++s) body.push_back("wait r" + std::to_string(s));
  body.push_back("leave exchange");
  EXPECT_EQ(shown(*w, 13), iterations(body, 1));
}

TEST(WorkloadSequence, HaloCompletionRejectsUnknownValues) {
  // From the scenario text: the choice is checked against the spec.
  for (const char* type : {"halo2d", "halo3d"}) {
    try {
      build(type, {{"ranks", "4"}, {"completion", "waitany"}});
      ADD_FAILURE() << type << ": no error";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()), std::string("test: option 'completion' of workload '") + type +
                                           "': 'waitany' is not one of waitall, wait; did you mean 'waitall'?");
    }
  }
  // Options made in code bypass the spec's parser: the workload checks again.
  Options o = workload_test::options_for("halo2d", {{"ranks", "4"}}, "t.yaml: workload");
  o.set("completion", std::string("Wait"));
  try {
    make_workload("halo2d", o);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "t.yaml: workload: option 'completion' of workload halo2d: must be waitall or wait, got Wait");
  }
}

TEST(WorkloadSequence, Sweep2dFourCorners) {
  // 2 x 2 grid, rank = x * 2 + y. Direction d sweeps from corner (d&1 ? 1 : 0, d&2 ? 1 : 0);
  // tags 2d (x messages) and 2d+1 (y messages). Two blocks per sweep, then the fixup.
  auto w = build(
      "sweep2d",
      {{"px", "2"}, {"py", "2"}, {"iterations", "2"}, {"blocks", "2"}, {"bytes", "100B"}, {"fixup", "50us"}});
  ASSERT_EQ(w->ranks(), 4);
  auto body = [](std::vector<V> per_direction) {
    V v = {"enter sweep"};
    for (const auto& block : per_direction)
      for (int b = 0; b < 2; ++b) v.insert(v.end(), block.begin(), block.end());
    for (const char* s : {"leave sweep", "enter fixup", "compute(fixup) 5e-05", "leave fixup"})
      v.push_back(s);
    return v;
  };
  const std::string c = "compute(sweep) 0.0001";
  EXPECT_EQ(shown(*w, 0), iterations(body({{c, "send >2 t0 100", "send >1 t1 100"},
                                           {"recv <2 t2 100", c, "send >1 t3 100"},
                                           {"recv <1 t5 100", c, "send >2 t4 100"},
                                           {"recv <2 t6 100", "recv <1 t7 100", c}}),
                                     2));
  EXPECT_EQ(shown(*w, 1), iterations(body({{"recv <0 t1 100", c, "send >3 t0 100"},
                                           {"recv <3 t2 100", "recv <0 t3 100", c},
                                           {c, "send >3 t4 100", "send >0 t5 100"},
                                           {"recv <3 t6 100", c, "send >0 t7 100"}}),
                                     2));
  EXPECT_EQ(shown(*w, 3), iterations(body({{"recv <1 t0 100", "recv <2 t1 100", c},
                                           {"recv <2 t3 100", c, "send >1 t2 100"},
                                           {"recv <1 t4 100", c, "send >2 t5 100"},
                                           {c, "send >1 t6 100", "send >2 t7 100"}}),
                                     2));
}

TEST(WorkloadSequence, Sweep2dWithoutFixupHasNoFixupRegion) {
  auto w = build("sweep2d", {{"ranks", "1"}, {"iterations", "2"}, {"blocks", "1"}});
  EXPECT_EQ(w->definitions().find_region("fixup"), -1);
  const std::string c = "compute(sweep) 0.0001";
  EXPECT_EQ(shown(*w, 0), iterations({"enter sweep", c, c, c, c, "leave sweep"}, 2));
}

TEST(WorkloadSequence, AllreduceLoopWithHalo) {
  auto w = build("allreduce_loop", {{"ranks", "3"}, {"iterations", "2"}, {"halo", "16B"}});
  auto body = [](int left, int right) {
    const auto l = std::to_string(left), r = std::to_string(right);
    return V{"enter exchange",
             "irecv <" + l + " t0 16 r0",
             "irecv <" + r + " t1 16 r1",
             "isend >" + r + " t0 16 r2",
             "isend >" + l + " t1 16 r3",
             "waitall",
             "leave exchange",
             "enter compute",
             "compute(compute) 0.001",
             "leave compute",
             "allreduce 8"};
  };
  EXPECT_EQ(shown(*w, 0), iterations(body(2, 1), 2));
  EXPECT_EQ(shown(*w, 1), iterations(body(0, 2), 2));
  EXPECT_EQ(shown(*w, 2), iterations(body(1, 0), 2));
}

TEST(WorkloadSequence, AllreduceLoopWithoutHalo) {
  auto w = build("allreduce_loop", {{"ranks", "4"}, {"iterations", "2"}, {"bytes", "64B"}});
  EXPECT_EQ(w->definitions().find_region("exchange"), -1);
  const V body = {"enter compute", "compute(compute) 0.001", "leave compute", "allreduce 64"};
  for (Rank r : {0, 2, 3}) EXPECT_EQ(shown(*w, r), iterations(body, 2)) << "rank " << r;
}

TEST(WorkloadSequence, BcastReduce) {
  auto w = build("bcast_reduce", {{"ranks", "4"}, {"iterations", "2"}, {"root", "2"}, {"compute", "3ms"}});
  const V body = {"bcast root2 8192", "enter compute", "compute(compute) 0.003", "leave compute",
                  "reduce root2 8192"};
  for (Rank r : {0, 2, 3}) EXPECT_EQ(shown(*w, r), iterations(body, 2)) << "rank " << r;
}

TEST(WorkloadSequence, AlltoallLoop) {
  auto w = build("alltoall_loop", {{"ranks", "5"}, {"iterations", "2"}, {"bytes", "2KiB"}});
  const V body = {"enter compute", "compute(compute) 0.001", "leave compute", "alltoall 2048"};
  for (Rank r : {0, 2, 4}) EXPECT_EQ(shown(*w, r), iterations(body, 2)) << "rank " << r;
}

// The progress display's measure: a synthetic stream counts iterations and steps, 0 before the
// first action, 1 after the last, never going back, half-way at the middle iteration.
TEST(WorkloadSequence, StreamsSayHowMuchIsDone) {
  const auto w = make_workload("heat1d", workload_test::options_for("heat1d", {{"ranks", "4"}, {"iterations", "4"}}));
  auto s = w->stream(1);
  EXPECT_EQ(s->done(), 0.0);
  Action a;
  std::vector<double> seen;
  std::vector<std::int32_t> iteration;
  while (s->next(a)) {
    seen.push_back(s->done());
    iteration.push_back(a.iteration);
  }
  EXPECT_EQ(s->done(), 1.0);
  ASSERT_GT(seen.size(), 8u);
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  // After the first action of iteration 2 (of 0..3), between 2/4 and 3/4 are done.
  const auto k = static_cast<std::size_t>(std::find(iteration.begin(), iteration.end(), 2) - iteration.begin());
  ASSERT_LT(k, seen.size());
  EXPECT_GT(seen[k], 0.5);
  EXPECT_LT(seen[k], 0.75);
  EXPECT_LE(seen[k - 1], 0.5);
}

}  // namespace
}  // namespace waitlab::models
