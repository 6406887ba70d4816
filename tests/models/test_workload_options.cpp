// The workload registry, option validation with exact messages, process grids and
// determinism of the streams.
#include <gtest/gtest.h>

#include "util/error.hpp"
#include "models/workloads/common.hpp"
#include "test_workload_util.hpp"

namespace waitlab::models {
namespace {

using workload_test::build;
using workload_test::draw;
using workload_test::Given;
using workload_test::options_for;

TEST(WorkloadRegistry, ListsEveryWorkloadInOrderWithSpecs) {
  std::vector<std::string> names;
  for (const auto& e : workloads()) {
    names.push_back(e.spec.name);
    EXPECT_EQ(e.spec.kind, SpecKind::Workload) << e.spec.name;
    EXPECT_FALSE(e.spec.description.empty()) << e.spec.name;
    ASSERT_NE(e.spec.option("ranks"), nullptr) << e.spec.name;
    ASSERT_NE(e.spec.option("iterations"), nullptr) << e.spec.name;
    EXPECT_EQ(e.spec.option("iterations")->quantity, units::Quantity::Integer);
    ASSERT_NE(e.spec.option("compute"), nullptr) << e.spec.name;
    EXPECT_EQ(e.spec.option("compute")->quantity, units::Quantity::Duration);
    ASSERT_NE(e.spec.option("flops"), nullptr) << e.spec.name;
    EXPECT_EQ(e.spec.option("flops")->quantity, units::Quantity::Flops);
    EXPECT_TRUE(e.spec.option("flops")->optional);
    ASSERT_NE(e.spec.option("bytes"), nullptr) << e.spec.name;
    EXPECT_EQ(e.spec.option("bytes")->quantity, units::Quantity::Bytes);
    for (const auto& o : e.spec.options) {
      EXPECT_FALSE(o.description.empty()) << e.spec.name << "." << o.name;
      // Every option but `ranks` and the optional ones has a default.
      if (o.name != "ranks" && !o.optional) {
        EXPECT_FALSE(o.default_value.empty()) << e.spec.name << "." << o.name;
      }
    }
  }
  EXPECT_EQ(names, (std::vector<std::string>{"heat1d", "halo2d", "halo3d", "sweep2d", "allreduce_loop",
                                             "bcast_reduce", "alltoall_loop"}));
  EXPECT_EQ(find_workload("halo3d"), &workloads()[2]);
  EXPECT_EQ(find_workload("nope"), nullptr);
}

TEST(WorkloadRegistry, DefaultsBuildAWorkload) {
  for (const auto& e : workloads()) {
    auto w = build(e.spec.name, {{"ranks", "12"}});
    EXPECT_EQ(w->name(), e.spec.name);
    EXPECT_EQ(w->ranks(), 12);
    EXPECT_EQ(w->iterations(), 100);
    std::int64_t product = 1;
    for (int d : w->grid()) product *= d;
    EXPECT_EQ(product, 12) << e.spec.name;
    for (const auto& r : w->definitions().regions) EXPECT_EQ(r.op, trace::MpiOp::None) << e.spec.name;
  }
}

TEST(WorkloadRegistry, UnknownWorkloadSuggestsTheClosestName) {
  Options o("t.yaml: workload");
  try {
    make_workload("heat1x", o);
    FAIL() << "no exception";
  } catch (const InputError& e) {
    EXPECT_STREQ(
        e.what(),
        "t.yaml: workload: unknown workload 'heat1x'; did you mean 'heat1d'? (workloads: heat1d halo2d "
        "halo3d sweep2d allreduce_loop bcast_reduce alltoall_loop)");
  }
}

// Options of `type` with defaults from its spec, overridden by `given`, under the context
// "t.yaml: workload" — then the error message of make_workload.
std::string error_of(const std::string& type, const std::vector<std::pair<std::string, OptionValue>>& given) {
  // Required options get a placeholder so that the spec's defaults can be filled in.
  const bool ranks_required = !find_workload(type)->spec.option("ranks")->optional;
  const auto filled = options_for(type, ranks_required ? Given{{"ranks", "4"}} : Given{});
  Options o("t.yaml: workload");
  for (const auto& [k, v] : filled.values()) o.set(k, v);
  for (const auto& [k, v] : given) o.set(k, v);
  try {
    make_workload(type, o);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

using V = OptionValue;

TEST(WorkloadOptions, ImpossibleValuesNameTheOption) {
  const std::string p = "t.yaml: workload: option ";
  EXPECT_EQ(error_of("heat1d", {{"ranks", V(0.0)}}),
            p + "'ranks' of workload heat1d: must be between 1 and 1048576, got 0");
  EXPECT_EQ(error_of("heat1d", {{"ranks", V(4.0)}, {"iterations", V(0.0)}}),
            p + "'iterations' of workload heat1d: must be between 1 and 1073741824, got 0");
  EXPECT_EQ(error_of("heat1d", {{"ranks", V(2.5)}}),
            p + "'ranks' of workload heat1d: must be a whole number, got 2.5");
  // A value just off a whole number is shown exactly, not rounded to one.
  EXPECT_EQ(error_of("heat1d", {{"ranks", V(4.000000000000001)}}),
            p + "'ranks' of workload heat1d: must be a whole number, got 4.000000000000001");
  EXPECT_EQ(error_of("heat1d", {{"ranks", V(4.0)}, {"distance", V(4.0)}}),
            p + "'distance' of workload heat1d: must be between 1 and 3, got 4");
  EXPECT_EQ(error_of("heat1d", {{"ranks", V(4.0)}, {"compute", V(-0.001)}}),
            p + "'compute' of workload heat1d: must not be negative, got -1ms");
  EXPECT_EQ(error_of("heat1d", {{"ranks", V(4.0)}, {"flops", V(-1.0)}}),
            p + "'flops' of workload heat1d: must not be negative, got -1f");
  EXPECT_EQ(error_of("heat1d", {{"ranks", V(4.0)}, {"bytes", V(1.5)}}),
            p + "'bytes' of workload heat1d: must be a whole number of bytes, got 1.5");
  EXPECT_EQ(error_of("heat1d", {{"ranks", V(4.0)}, {"mode", V(std::string("eager"))}}),
            p + "'mode' of workload heat1d: must be blocking, nonblocking or two_phase, got eager");
  EXPECT_EQ(error_of("heat1d", {{"ranks", V(4.0)}, {"direction", V(std::string("left"))}}),
            p + "'direction' of workload heat1d: must be both or right, got left");
  EXPECT_EQ(error_of("bcast_reduce", {{"ranks", V(4.0)}, {"root", V(4.0)}}),
            p + "'root' of workload bcast_reduce: must be between 0 and 3, got 4");
  EXPECT_EQ(error_of("sweep2d", {{"ranks", V(4.0)}, {"blocks", V(0.0)}}),
            p + "'blocks' of workload sweep2d: must be between 1 and 1048576, got 0");
  EXPECT_EQ(error_of("sweep2d", {{"ranks", V(4.0)}, {"fixup", V(-1.0)}}),
            p + "'fixup' of workload sweep2d: must not be negative, got -1s");
  EXPECT_EQ(error_of("allreduce_loop", {{"ranks", V(4.0)}, {"halo", V(-8.0)}}),
            p + "'halo' of workload allreduce_loop: must not be negative, got -8B");
}

TEST(WorkloadOptions, GridMustFitTheRanks) {
  const std::string p = "t.yaml: workload: option ";
  EXPECT_EQ(error_of("halo2d", {{"ranks", V(6.0)}, {"px", V(4.0)}}),
            p + "'ranks' of workload halo2d: 6 ranks cannot be arranged as a grid 4 x *");
  EXPECT_EQ(error_of("halo2d", {{"ranks", V(6.0)}, {"px", V(2.0)}, {"py", V(2.0)}}),
            p + "'ranks' of workload halo2d: the grid 2 x 2 has 4 ranks, not 6");
  EXPECT_EQ(error_of("halo2d", {{"px", V(4.0)}}),
            p + "'ranks' of workload halo2d: is required unless every extent is given (px = 4, py = 0)");
  EXPECT_EQ(error_of("halo3d", {{"ranks", V(8.0)}, {"pz", V(-1.0)}}),
            p + "'pz' of workload halo3d: must be between 0 and 1048576, got -1");
  EXPECT_EQ(
      error_of("halo3d", {{"px", V(1048576.0)}, {"py", V(1048576.0)}, {"pz", V(2.0)}}),
      p + "'px' of workload halo3d: the grid (px = 1048576, py = 1048576, pz = 2) has more than 1048576 "
          "ranks (waitlab's limit)");
  EXPECT_EQ(error_of("sweep2d", {{"ranks", V(0.0)}}),
            p + "'ranks' of workload sweep2d: must be between 1 and 1048576, got 0");
}

// Sizes are checked against waitlab's limits before anything is allocated (issue 19): ranks
// (2^20), extents and their product (saturated, so 2^20 x 2^20 x 2^20 cannot overflow), bytes
// (an MPI int count), an alltoall's buffers (16 GiB).
TEST(WorkloadOptions, SizesAboveTheLimitsAreRefused) {
  const std::string p = "t.yaml: workload: option ";
  EXPECT_EQ(error_of("heat1d", {{"ranks", V(1e9)}}),
            p + "'ranks' of workload heat1d: must be at most 1048576 (waitlab's limit on ranks), got 1000000000");
  EXPECT_EQ(error_of("heat1d", {{"ranks", V(1048577.0)}}),
            p + "'ranks' of workload heat1d: must be at most 1048576 (waitlab's limit on ranks), got 1048577");
  EXPECT_EQ(error_of("halo3d", {{"ranks", V(1e12)}}),
            p + "'ranks' of workload halo3d: must be at most 1048576 (waitlab's limit on ranks), got 1000000000000");
  EXPECT_EQ(error_of("halo3d", {{"px", V(1048576.0)}, {"py", V(1048576.0)}, {"pz", V(1048576.0)}}),
            p + "'px' of workload halo3d: the grid (px = 1048576, py = 1048576, pz = 1048576) has more than 1048576 "
                "ranks (waitlab's limit)");
  EXPECT_EQ(error_of("halo2d", {{"px", V(2e6)}, {"py", V(1.0)}}),
            p + "'px' of workload halo2d: must be between 0 and 1048576, got 2000000");
  EXPECT_EQ(error_of("heat1d", {{"ranks", V(4.0)}, {"bytes", V(2147483648.0)}}),
            p + "'bytes' of workload heat1d: must be at most 2147483647 bytes (2GiB - 1B: MPI counts are int), got "
                "2GiB");
  EXPECT_EQ(error_of("heat1d", {{"ranks", V(4.0)}, {"iterations", V(2e9)}}),
            p + "'iterations' of workload heat1d: must be between 1 and 1073741824, got 2000000000");
  EXPECT_EQ(error_of("alltoall_loop", {{"ranks", V(65536.0)}, {"bytes", V(1048576.0)}}),
            p + "'bytes' of workload alltoall_loop: 1048576 bytes to each of 65536 ranks need buffers of more than "
                "16GiB per rank (bytes x ranks <= 16GiB)");
  EXPECT_EQ(error_of("alltoall_loop", {{"ranks", V(65536.0)}, {"bytes", V(262144.0)}}), "(no error)");
}

TEST(WorkloadOptions, GridFromExtentsAlone) {
  auto w = build("sweep2d", {{"px", "2"}, {"py", "3"}});
  EXPECT_EQ(w->ranks(), 6);
  EXPECT_EQ(w->grid(), (std::vector<int>{2, 3}));
  auto h = build("halo3d", {{"ranks", "24"}, {"pz", "4"}});
  EXPECT_EQ(h->grid(), (std::vector<int>{3, 2, 4}));
  EXPECT_EQ(build("heat1d", {{"ranks", "7"}})->grid(), (std::vector<int>{7}));
}

TEST(WorkloadGrid, DimsCreateAsMpi) {
  using synth::dims_create;
  using D = std::vector<int>;
  EXPECT_EQ(dims_create(6, {0, 0}), (D{3, 2}));
  EXPECT_EQ(dims_create(16, {0, 0}), (D{4, 4}));
  EXPECT_EQ(dims_create(7, {0, 0}), (D{7, 1}));
  EXPECT_EQ(dims_create(1, {0, 0}), (D{1, 1}));
  EXPECT_EQ(dims_create(8, {0, 0, 0}), (D{2, 2, 2}));
  EXPECT_EQ(dims_create(12, {0, 0, 0}), (D{3, 2, 2}));
  EXPECT_EQ(dims_create(24, {0, 0, 0}), (D{4, 3, 2}));
  EXPECT_EQ(dims_create(36, {0, 0, 0}), (D{4, 3, 3}));
  EXPECT_EQ(dims_create(4096, {0, 0}), (D{64, 64}));
  EXPECT_EQ(dims_create(8192, {0, 0}), (D{128, 64}));
  EXPECT_EQ(dims_create(12, {0, 3}), (D{4, 3}));
  EXPECT_EQ(dims_create(12, {2, 0, 0}), (D{2, 3, 2}));
  EXPECT_EQ(dims_create(12, {3, 4}), (D{3, 4}));
  EXPECT_THROW(dims_create(12, {5, 0}), std::invalid_argument);
  EXPECT_THROW(dims_create(12, {3, 3}), std::invalid_argument);
  try {
    dims_create(12, {1 << 30, 1 << 30, 1 << 30});  // would overflow 64 bits unsaturated
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "the grid 1073741824 x 1073741824 x 1073741824 has more than 12 ranks, not 12");
  }
}

TEST(WorkloadGrid, RowMajorNumbering) {
  const std::vector<int> dims = {3, 2, 4};
  EXPECT_EQ(grid_coords(dims, 0), (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(grid_coords(dims, 1), (std::vector<int>{0, 0, 1}));
  EXPECT_EQ(grid_coords(dims, 4), (std::vector<int>{0, 1, 0}));
  EXPECT_EQ(grid_coords(dims, 23), (std::vector<int>{2, 1, 3}));
  for (int r = 0; r < 24; ++r) EXPECT_EQ(grid_rank(dims, grid_coords(dims, r)), r);
}

bool same(const std::vector<Action>& a, const std::vector<Action>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto &x = a[i], &y = b[i];
    if (std::tie(x.kind, x.flops, x.region, x.peer, x.peer2, x.root, x.tag, x.tag2, x.request, x.iteration,
                 x.bytes, x.bytes2, x.amount) != std::tie(y.kind, y.flops, y.region, y.peer, y.peer2, y.root,
                                                          y.tag, y.tag2, y.request, y.iteration, y.bytes,
                                                          y.bytes2, y.amount))
      return false;
  }
  return true;
}

TEST(WorkloadStreams, DeterministicAndIndependent) {
  for (const auto& e : workloads()) {
    const Given g = {{"ranks", "12"}, {"iterations", "3"}};
    auto w1 = build(e.spec.name, g);
    auto w2 = build(e.spec.name, g);
    for (Rank r : {0, 5, 11}) {
      const auto a = draw(*w1, r);
      EXPECT_FALSE(a.empty());
      EXPECT_TRUE(same(a, draw(*w1, r))) << e.spec.name << " rank " << r;
      EXPECT_TRUE(same(a, draw(*w2, r))) << e.spec.name << " rank " << r;
    }
    // Interleaved drawing from two streams gives what each gives alone.
    auto s0 = w1->stream(0), s1 = w1->stream(1);
    std::vector<Action> a0, a1;
    Action a;
    bool more0 = true, more1 = true;
    while (more0 || more1) {
      if (more0 && (more0 = s0->next(a))) a0.push_back(a);
      if (more1 && (more1 = s1->next(a))) a1.push_back(a);
    }
    EXPECT_TRUE(same(a0, draw(*w1, 0))) << e.spec.name;
    EXPECT_TRUE(same(a1, draw(*w1, 1))) << e.spec.name;
    Action after;
    EXPECT_FALSE(s0->next(after)) << "a finished stream stays finished";
    EXPECT_THROW(w1->stream(12), std::out_of_range);
    EXPECT_THROW(w1->stream(-1), std::out_of_range);
  }
}

TEST(WorkloadStreams, EveryActionCarriesItsIteration) {
  auto w = build("heat1d", {{"ranks", "4"}, {"iterations", "5"}});
  const auto a = draw(*w, 1);
  ASSERT_EQ(a.size() % 5, 0u);
  const std::size_t per = a.size() / 5;
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].iteration, static_cast<std::int32_t>(i / per));
}

}  // namespace
}  // namespace waitlab::models
