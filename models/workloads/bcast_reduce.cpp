// bcast_reduce — a root-centred (master/worker-like) loop: MPI_Bcast from the root, compute
// in region `compute`, MPI_Reduce back to the root.
#include <memory>

#include "models/workloads/common.hpp"

namespace waitlab::models::synth {
namespace {

constexpr const char* kName = "bcast_reduce";

struct Params {
  int ranks = 1;
  int iterations = 1;
  Rank root = 0;
  Reader::Amount compute;
  std::uint64_t bytes = 0;
  trace::RegionId compute_region = 0;
};

class Program {
 public:
  explicit Program(std::shared_ptr<const Params> p) : p_(std::move(p)) {}
  int steps() const { return 5; }
  bool step(int k, Action& a) const {
    const Params& p = *p_;
    switch (k) {
      case 0:
        a = collective(ActionKind::Bcast, p.bytes, p.root);
        return true;
      case 1:
        a = enter(p.compute_region);
        return true;
      case 2:
        a = compute(p.compute_region, p.compute);
        return true;
      case 3:
        a = leave(p.compute_region);
        return true;
      default:
        a = collective(ActionKind::Reduce, p.bytes, p.root);
        return true;
    }
  }

 private:
  std::shared_ptr<const Params> p_;
};

class BcastReduce final : public BasicWorkload {
 public:
  explicit BcastReduce(Params p) : BasicWorkload(kName, p.ranks, p.iterations, {p.ranks}) {
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
  p.root = static_cast<Rank>(in.integer("root", 0, p.ranks - 1));
  p.compute = in.compute();
  p.bytes = in.bytes("bytes");
  return std::make_unique<BcastReduce>(p);
}

}  // namespace

WorkloadEntry bcast_reduce_entry() {
  Spec s;
  s.kind = SpecKind::Workload;
  s.name = kName;
  s.description =
      "root-centred loop: per iteration, MPI_Bcast from `root`, compute in region `compute`, MPI_Reduce "
      "to `root`";
  s.options = {
      ranks_option(true),
      iterations_option(),
      integer_option("root", "0", "rank that broadcasts and receives the reduction (< ranks)"),
      compute_option("compute", "1ms", "compute time per iteration (region `compute`)"),
      flops_option("the compute per iteration"),
      bytes_option("bytes", "8KiB", "payload of MPI_Bcast and of MPI_Reduce"),
  };
  return {std::move(s), make};
}

}  // namespace waitlab::models::synth
