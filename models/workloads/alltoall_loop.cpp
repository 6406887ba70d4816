// alltoall_loop — an FFT-like loop: compute in region `compute` (the 1D FFTs), then
// MPI_Alltoall (the transpose).
#include <memory>

#include "models/workloads/common.hpp"

namespace waitlab::models::synth {
namespace {

constexpr const char* kName = "alltoall_loop";

struct Params {
  int ranks = 1;
  int iterations = 1;
  Reader::Amount compute;
  std::uint64_t bytes = 0;
  trace::RegionId compute_region = 0;
};

class Program {
 public:
  explicit Program(std::shared_ptr<const Params> p) : p_(std::move(p)) {}
  int steps() const { return 4; }
  bool step(int k, Action& a) const {
    const Params& p = *p_;
    switch (k) {
      case 0:
        a = enter(p.compute_region);
        return true;
      case 1:
        a = compute(p.compute_region, p.compute);
        return true;
      case 2:
        a = leave(p.compute_region);
        return true;
      default:
        a = collective(ActionKind::Alltoall, p.bytes);
        return true;
    }
  }

 private:
  std::shared_ptr<const Params> p_;
};

class AlltoallLoop final : public BasicWorkload {
 public:
  explicit AlltoallLoop(Params p) : BasicWorkload(kName, p.ranks, p.iterations, {p.ranks}) {
    p.compute_region = defs_.region("compute");
    params_ = std::make_shared<const Params>(p);
  }
  std::unique_ptr<ActionStream> stream(Rank r) const override {
    check_rank(r);
    return std::make_unique<LoopStream<Program>>(Program(params_), params_->iterations);
  }

 private:
  std::shared_ptr<const Params> params_;
};

std::unique_ptr<Workload> make(const Options& opts) {
  const Reader in(opts, kName);
  Params p;
  p.ranks = static_cast<int>(in.integer("ranks", 1, kMaxCount));
  p.iterations = static_cast<int>(in.integer("iterations", 1, kMaxCount));
  p.compute = in.compute();
  p.bytes = in.bytes("bytes");
  return std::make_unique<AlltoallLoop>(p);
}

}  // namespace

WorkloadEntry alltoall_loop_entry() {
  Spec s;
  s.kind = SpecKind::Workload;
  s.name = kName;
  s.description =
      "FFT-like loop: per iteration, compute in region `compute`, then MPI_Alltoall (a transpose)";
  s.options = {
      ranks_option(true),
      iterations_option(),
      compute_option("compute", "1ms", "compute time per iteration (region `compute`)"),
      flops_option("the compute per iteration"),
      bytes_option("bytes", "1KiB", "bytes sent to each rank (per pair) by MPI_Alltoall"),
  };
  return {std::move(s), make};
}

}  // namespace waitlab::models::synth
