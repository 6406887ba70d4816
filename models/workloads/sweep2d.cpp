// sweep2d — a wavefront pipeline as in Sweep3D: a px × py process grid is swept from each
// of its four corners in turn; for each of `blocks` blocks a rank receives from its two
// upstream neighbours (blocking MPI_Recv), computes the block and sends to its two
// downstream neighbours (blocking MPI_Send). Everything happens in region `sweep`; an
// optional `fixup` compute follows the sweeps (the region imbalance models make heavy on a
// sub-block every k iterations, as Sweep3D's fixups are).
#include <array>
#include <memory>

#include "models/workloads/common.hpp"

namespace waitlab::models::synth {
namespace {

constexpr const char* kName = "sweep2d";
constexpr int kDirections = 4;
constexpr int kStepsPerBlock = 5;  // recv x, recv y, compute, send x, send y

struct Params : BasicParams {
  int px = 1, py = 1;  // == grid
  int blocks = 1;
  double fixup = 0;
  trace::RegionId sweep_region = 0;
  trace::RegionId fixup_region = 0;
  void name_regions(trace::Definitions& defs) {
    sweep_region = defs.region("sweep");
    if (fixup > 0) fixup_region = defs.region("fixup");
  }
};

// Direction d sweeps from corner (d & 1 ? px-1 : 0, d & 2 ? py-1 : 0) to the opposite one.
// A message carries tag 2·d + axis (axis 0 = x, 1 = y): each stream of blocks between two
// ranks has its own tag, so FIFO matching pairs block b with block b.
int step_x(int d) {
  return (d & 1) ? -1 : 1;
}
int step_y(int d) {
  return (d & 2) ? -1 : 1;
}

class Program {
 public:
  Program(std::shared_ptr<const Params> p, Rank r) : p_(std::move(p)), ix_(r / p_->py), iy_(r % p_->py) {}

  int steps() const { return 1 + kDirections * p_->blocks * kStepsPerBlock + 1 + (p_->fixup > 0 ? 3 : 0); }

  bool step(int k, Action& a) const {
    const Params& p = *p_;
    const int sweep_steps = kDirections * p.blocks * kStepsPerBlock;
    if (k == 0) {
      a = enter(p.sweep_region);
      return true;
    }
    if (k == sweep_steps + 1) {
      a = leave(p.sweep_region);
      return true;
    }
    if (k > sweep_steps + 1) {
      a = compute_block(k - sweep_steps - 2, p.fixup_region, Amount{p.fixup, false});
      return true;
    }
    const int j = k - 1;
    const int d = j / (p.blocks * kStepsPerBlock);
    const int sx = step_x(d), sy = step_y(d);
    switch (j % kStepsPerBlock) {
      case 0:
        return message(a, ActionKind::Recv, ix_ - sx, iy_, 2 * d);
      case 1:
        return message(a, ActionKind::Recv, ix_, iy_ - sy, 2 * d + 1);
      case 2:
        a = compute(p.sweep_region, p.compute);
        return true;
      case 3:
        return message(a, ActionKind::Send, ix_ + sx, iy_, 2 * d);
      default:
        return message(a, ActionKind::Send, ix_, iy_ + sy, 2 * d + 1);
    }
  }

 private:
  bool message(Action& a, ActionKind kind, int x, int y, std::int32_t tag) const {
    if (x < 0 || x >= p_->px || y < 0 || y >= p_->py) return false;
    a = p2p_action(kind, x * p_->py + y, tag, p_->bytes);
    return true;
  }

  std::shared_ptr<const Params> p_;
  int ix_, iy_;
};

std::unique_ptr<Workload> make(const Options& opts) {
  const Reader in(opts, kName);
  Params p;
  read_basic(in, p, {"px", "py"});
  p.px = p.grid[0];
  p.py = p.grid[1];
  p.blocks = static_cast<int>(in.integer("blocks", 1, 1 << 20));
  p.fixup = in.duration("fixup");
  return make_program_workload<Program>(kName, std::move(p));
}

}  // namespace

WorkloadEntry sweep2d_entry() {
  using units::Quantity;
  Spec s = make_spec(
      SpecKind::Workload, kName,
      "wavefront pipeline on a px × py grid (as Sweep3D): per iteration, four sweeps from the four "
      "corners; per block, blocking MPI_Recv from the upstream x and y neighbours, compute, blocking "
      "MPI_Send downstream; all in region `sweep`, then an optional compute in region `fixup`",
      {
          ranks_option(false),
          quantity_option("px", Quantity::Integer, "0",
                          "grid extent in x, the slower dimension (0 = chosen as MPI_Dims_create does)"),
          quantity_option("py", Quantity::Integer, "0",
                          "grid extent in y (0 = chosen as MPI_Dims_create does)"),
          iterations_option(),
          quantity_option("blocks", Quantity::Integer, "4",
                          "blocks per sweep (pipeline depth: more blocks, shorter fill)"),
          compute_option("100us", "compute time per block (region `sweep`)"),
          flops_option("the compute per block"),
          quantity_option("fixup", Quantity::Duration, "0s",
                          "compute per iteration after the sweeps in region `fixup` (0 = no fixup)"),
          quantity_option("bytes", Quantity::Bytes, "4KiB",
                          "size of each block message to a downstream neighbour"),
      });
  return {std::move(s), make};
}

}  // namespace waitlab::models::synth
