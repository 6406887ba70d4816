// allreduce_loop — a CG-like loop: an optional non-blocking halo exchange with the two ring
// neighbours (region `exchange`, as the sparse matrix-vector product needs), compute in
// region `compute`, then MPI_Allreduce (the dot products).
#include <memory>

#include "models/workloads/common.hpp"

namespace waitlab::models::synth {
namespace {

constexpr const char* kName = "allreduce_loop";
constexpr std::int32_t kToRight = 0;  // tag of a halo sent to rank+1
constexpr std::int32_t kToLeft = 1;   // tag of a halo sent to rank-1

struct Params {
  int ranks = 1;
  int iterations = 1;
  Reader::Amount compute;
  std::uint64_t bytes = 8;
  std::uint64_t halo = 0;
  trace::RegionId compute_region = 0;
  trace::RegionId exchange_region = 0;
  // The halo exchange exists with a halo size > 0 and someone to exchange with.
  bool exchanges() const { return halo > 0 && ranks > 1; }
};

class Program {
 public:
  Program(std::shared_ptr<const Params> p, Rank r)
      : p_(std::move(p)), left_((r + p_->ranks - 1) % p_->ranks), right_((r + 1) % p_->ranks) {}

  int steps() const { return (p_->exchanges() ? 7 : 0) + 4; }

  bool step(int k, Action& a) const {
    const Params& p = *p_;
    if (p.exchanges()) {
      switch (k) {
        case 0:
          a = enter(p.exchange_region);
          return true;
        case 1:
          a = p2p(ActionKind::Irecv, left_, kToRight, p.halo);
          return true;
        case 2:
          a = p2p(ActionKind::Irecv, right_, kToLeft, p.halo);
          return true;
        case 3:
          a = p2p(ActionKind::Isend, right_, kToRight, p.halo);
          return true;
        case 4:
          a = p2p(ActionKind::Isend, left_, kToLeft, p.halo);
          return true;
        case 5:
          a.kind = ActionKind::Waitall;
          return true;
        case 6:
          a = leave(p.exchange_region);
          return true;
        default:
          k -= 7;
      }
    }
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
        a = collective(ActionKind::Allreduce, p.bytes);
        return true;
    }
  }

 private:
  std::shared_ptr<const Params> p_;
  Rank left_, right_;
};

class AllreduceLoop final : public BasicWorkload {
 public:
  explicit AllreduceLoop(Params p) : BasicWorkload(kName, p.ranks, p.iterations, {p.ranks}) {
    p.compute_region = defs_.region("compute");
    if (p.exchanges()) p.exchange_region = defs_.region("exchange");
    params_ = std::make_shared<const Params>(p);
  }
  std::unique_ptr<ActionStream> stream(Rank r) const override {
    check_rank(r);
    return std::make_unique<LoopStream<Program>>(Program(params_, r), params_->iterations);
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
  p.halo = in.bytes("halo");
  return std::make_unique<AllreduceLoop>(p);
}

}  // namespace

WorkloadEntry allreduce_loop_entry() {
  Spec s;
  s.kind = SpecKind::Workload;
  s.name = kName;
  s.description =
      "CG-like loop: per iteration, an optional non-blocking halo exchange with the ring neighbours "
      "rank±1 (region `exchange`), compute in region `compute`, then MPI_Allreduce";
  s.options = {
      ranks_option(true),
      iterations_option(),
      compute_option("compute", "1ms", "compute time per iteration (region `compute`)"),
      flops_option("the compute per iteration"),
      bytes_option("bytes", "8B", "MPI_Allreduce payload per rank (8B = one double, a dot product)"),
      bytes_option("halo", "0B", "halo size sent to each ring neighbour before the compute (0B = no halo)"),
  };
  return {std::move(s), make};
}

}  // namespace waitlab::models::synth
