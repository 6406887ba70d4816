// bcast_reduce — a root-centred (master/worker-like) loop: MPI_Bcast from the root, compute
// in region `compute`, MPI_Reduce back to the root.
#include <memory>

#include "models/workloads/common.hpp"

namespace waitlab::models::synth {
namespace {

constexpr const char* kName = "bcast_reduce";

struct Params : BasicParams {
  Rank root = 0;
  trace::RegionId compute_region = 0;
  void name_regions(trace::Definitions& defs) { compute_region = defs.region("compute"); }
};

class Program {
 public:
  Program(std::shared_ptr<const Params> p, Rank) : p_(std::move(p)) {}
  int steps() const { return 5; }
  bool step(int k, Action& a) const {
    const Params& p = *p_;
    if (k == 0)
      a = collective(ActionKind::Bcast, p.bytes, p.root);
    else if (k < 4)
      a = compute_block(k - 1, p.compute_region, p.compute);
    else
      a = collective(ActionKind::Reduce, p.bytes, p.root);
    return true;
  }

 private:
  std::shared_ptr<const Params> p_;
};

std::unique_ptr<Workload> make(const Options& opts) {
  const Reader in(opts, kName);
  Params p;
  read_basic(in, p);
  p.root = static_cast<Rank>(in.integer("root", 0, p.ranks - 1));
  return make_program_workload<Program>(kName, std::move(p));
}

}  // namespace

WorkloadEntry bcast_reduce_entry() {
  using units::Quantity;
  Spec s = make_spec(
      SpecKind::Workload, kName,
      "root-centred loop: per iteration, MPI_Bcast from `root`, compute in region `compute`, MPI_Reduce "
      "to `root`",
      {
          ranks_option(true),
          iterations_option(),
          quantity_option("root", Quantity::Integer, "0",
                          "rank that broadcasts and receives the reduction (< ranks)"),
          compute_option(),
          flops_option(),
          quantity_option("bytes", Quantity::Bytes, "8KiB", "payload of MPI_Bcast and of MPI_Reduce"),
      });
  return {std::move(s), make};
}

}  // namespace waitlab::models::synth
