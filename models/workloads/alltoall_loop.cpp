// alltoall_loop — an FFT-like loop: compute in region `compute` (the 1D FFTs), then
// MPI_Alltoall (the transpose).
#include <memory>

#include "models/workloads/common.hpp"

namespace waitlab::models::synth {
namespace {

constexpr const char* kName = "alltoall_loop";

struct Params : BasicParams {
  trace::RegionId compute_region = 0;
  void name_regions(trace::Definitions& defs) { compute_region = defs.region("compute"); }
};

class Program {
 public:
  Program(std::shared_ptr<const Params> p, Rank) : p_(std::move(p)) {}
  int steps() const { return 4; }
  bool step(int k, Action& a) const {
    const Params& p = *p_;
    a = k < 3 ? compute_block(k, p.compute_region, p.compute) : collective(ActionKind::Alltoall, p.bytes);
    return true;
  }

 private:
  std::shared_ptr<const Params> p_;
};

std::unique_ptr<Workload> make(const Options& opts) {
  const Reader in(opts, kName);
  Params p;
  read_basic(in, p);
  // Each rank's send and receive buffers hold `bytes` for every rank: the engine refuses
  // buffers above 16 GiB when the first MPI_Alltoall runs; say so before anything runs.
  constexpr std::uint64_t kMaxBuffer = std::uint64_t{1} << 34;
  if (p.bytes * static_cast<std::uint64_t>(p.ranks) > kMaxBuffer)
    in.fail("bytes", std::to_string(p.bytes) + " bytes to each of " + std::to_string(p.ranks) +
                         " ranks need buffers of more than 16GiB per rank (bytes x ranks <= 16GiB)");
  return make_program_workload<Program>(kName, std::move(p));
}

}  // namespace

WorkloadEntry alltoall_loop_entry() {
  Spec s =
      make_spec(SpecKind::Workload, kName,
                "FFT-like loop: per iteration, compute in region `compute`, then MPI_Alltoall (a transpose)",
                {
                    ranks_option(true),
                    iterations_option(),
                    compute_option(),
                    flops_option(),
                    quantity_option("bytes", units::Quantity::Bytes, "1KiB",
                                    "bytes sent to each rank (per pair) by MPI_Alltoall"),
                });
  return {std::move(s), make};
}

}  // namespace waitlab::models::synth
