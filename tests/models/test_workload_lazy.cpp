// Laziness: a stream is a small state machine. Creating one is one allocation of at most
// 128 bytes and drawing actions allocates nothing, so 8192 ranks × 1000 iterations need no
// buffers. Measured by counting calls of the global operator new in this test binary (a
// replacement that only counts; the counters are the one piece of global state, and only
// this file reads them).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "test_workload_util.hpp"

namespace {
std::atomic<std::size_t> g_allocations{0};
std::atomic<std::size_t> g_allocated_bytes{0};
}  // namespace

void* operator new(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  g_allocated_bytes.fetch_add(n, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
// Not inlined: GCC would otherwise see free() meet operator new at the call sites and warn.
[[gnu::noinline]] void operator delete(void* p) noexcept {
  std::free(p);
}
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}

namespace waitlab::models {
namespace {

using workload_test::build;

struct Counted {
  std::size_t allocations;
  std::size_t bytes;
};
template <class F>
Counted count(F&& f) {
  const std::size_t a0 = g_allocations.load(), b0 = g_allocated_bytes.load();
  f();
  return {g_allocations.load() - a0, g_allocated_bytes.load() - b0};
}

TEST(WorkloadLaziness, StreamsAreSmallAndDrawingAllocatesNothing) {
  constexpr int kRanks = 8192;
  constexpr int kIterations = 1000;
  for (const auto& e : workloads()) {
    const std::string ranks = std::to_string(kRanks), iters = std::to_string(kIterations);
    workload_test::Given g = {{"ranks", ranks}, {"iterations", iters}};
    if (e.spec.name == "heat1d") g.push_back({"mode", "nonblocking"});
    if (e.spec.name == "allreduce_loop") g.push_back({"halo", "8B"});
    if (e.spec.name == "sweep2d") g.push_back({"fixup", "1us"});
    auto w = build(e.spec.name, g);

    std::vector<std::unique_ptr<ActionStream>> streams;
    streams.reserve(kRanks);
    const auto made = count([&] {
      for (Rank r = 0; r < kRanks; ++r) streams.push_back(w->stream(r));
    });
    // One allocation per stream (the stream object itself), of at most 128 bytes.
    EXPECT_EQ(made.allocations, static_cast<std::size_t>(kRanks)) << e.spec.name;
    EXPECT_LE(made.bytes, 128u * kRanks) << e.spec.name;

    Action a;
    std::uint64_t actions = 0;
    auto& middle = *streams[kRanks / 2 + 3];
    const auto drawn = count([&] {
      while (middle.next(a)) ++actions;
    });
    EXPECT_EQ(drawn.allocations, 0u) << e.spec.name;
    EXPECT_EQ(a.iteration, kIterations - 1) << e.spec.name;
    EXPECT_GE(actions, 4u * kIterations) << e.spec.name;
  }
}

TEST(WorkloadLaziness, CounterSeesAllocations) {
  const auto c = count([] {
    auto v = std::make_unique<std::vector<int>>(1000);
    asm volatile("" : : "g"(v.get()) : "memory");  // keep the compiler from eliding the allocations
  });
  EXPECT_EQ(c.allocations, 2u);
  EXPECT_GE(c.bytes, 4000u);
}

}  // namespace
}  // namespace waitlab::models
