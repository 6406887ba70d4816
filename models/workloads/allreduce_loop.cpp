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

struct Params : BasicParams {
  std::uint64_t halo = 0;
  trace::RegionId compute_region = 0;
  trace::RegionId exchange_region = 0;
  // The halo exchange exists with a halo size > 0 and someone to exchange with.
  bool exchanges() const { return halo > 0 && ranks > 1; }
  void name_regions(trace::Definitions& defs) {
    compute_region = defs.region("compute");
    if (exchanges()) exchange_region = defs.region("exchange");
  }
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
          a = p2p_action(ActionKind::Irecv, left_, kToRight, p.halo);
          return true;
        case 2:
          a = p2p_action(ActionKind::Irecv, right_, kToLeft, p.halo);
          return true;
        case 3:
          a = p2p_action(ActionKind::Isend, right_, kToRight, p.halo);
          return true;
        case 4:
          a = p2p_action(ActionKind::Isend, left_, kToLeft, p.halo);
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
    a = k < 3 ? compute_block(k, p.compute_region, p.compute) : collective(ActionKind::Allreduce, p.bytes);
    return true;
  }

 private:
  std::shared_ptr<const Params> p_;
  Rank left_, right_;
};

std::unique_ptr<Workload> make(const Options& opts) {
  const Reader in(opts, kName);
  Params p;
  read_basic(in, p);
  p.halo = in.bytes("halo");
  return make_program_workload<Program>(kName, std::move(p));
}

}  // namespace

WorkloadEntry allreduce_loop_entry() {
  using units::Quantity;
  Spec s = make_spec(
      SpecKind::Workload, kName,
      "CG-like loop: per iteration, an optional non-blocking halo exchange with the ring neighbours "
      "rank±1 (region `exchange`), compute in region `compute`, then MPI_Allreduce",
      {
          ranks_option(true),
          iterations_option(),
          compute_option(),
          flops_option(),
          quantity_option("bytes", Quantity::Bytes, "8B",
                          "MPI_Allreduce payload per rank (8B = one double, a dot product)"),
          quantity_option("halo", Quantity::Bytes, "0B",
                          "halo size sent to each ring neighbour before the compute (0B = no halo)"),
      });
  return {std::move(s), make};
}

}  // namespace waitlab::models::synth
