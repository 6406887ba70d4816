// halo2d, halo3d — non-blocking nearest-neighbour exchange on a Cartesian process grid
// (stencil codes): per iteration, compute in region `compute`, then in region `exchange`
// MPI_Irecv from every face neighbour, MPI_Isend to every face neighbour, then MPI_Waitall
// (`completion: waitall`) or one MPI_Wait per request in the order the requests were posted
// — the receives, then the sends (`completion: wait`). With `prepost: true` the receives are
// posted before the compute, in their own `exchange` region instance (as codes that overlap
// communication with computation do): messages of early neighbours then arrive during the
// compute and the completion finds them delivered.
// One implementation for both; the grid is px × py (× pz), numbered as MPI_Cart_create
// numbers it (the last extent varies fastest).
#include <array>
#include <memory>

#include "models/workloads/common.hpp"

namespace waitlab::models::synth {
namespace {

constexpr int kMaxDims = 3;

struct Params : BasicParams {
  int ndims = 2;  // == grid.size()
  bool periodic = false;
  bool wait_each = false;  // completion: one MPI_Wait per request instead of MPI_Waitall
  bool prepost = false;    // MPI_Irecv before the compute
  trace::RegionId compute_region = 0;
  trace::RegionId exchange_region = 0;
  void name_regions(trace::Definitions& defs) {
    compute_region = defs.region("compute");
    exchange_region = defs.region("exchange");
  }
};

// Face f = 2·dim + (0 for the lower neighbour, 1 for the upper). A message carries the face
// it leaves through as its tag, so a receive from the lower neighbour in `dim` expects the
// tag of that neighbour's upper face: left and right halos stay apart even when they come
// from the same rank (extent 2, periodic).
constexpr std::int32_t opposite(int face) {
  return face ^ 1;
}

class Program {
 public:
  Program(std::shared_ptr<const Params> p, Rank r) : p_(std::move(p)) {
    // Row-major strides: moving one step along `dim` changes the rank by stride[dim]
    // (computed here without temporaries, so making a stream allocates only the stream).
    const int nd = p_->ndims;
    std::array<int, kMaxDims> stride{}, coord{};
    int s = 1;
    for (int dim = nd - 1; dim >= 0; --dim) {
      stride[dim] = s;
      coord[dim] = (r / s) % p_->grid[dim];
      s *= p_->grid[dim];
    }
    for (int f = 0; f < 2 * nd; ++f) {
      const int dim = f / 2;
      const int extent = p_->grid[dim];
      int c = coord[dim] + ((f % 2 == 0) ? -1 : 1);
      if (p_->periodic) c = (c + extent) % extent;
      const bool outside = c < 0 || c >= extent;
      const Rank q = outside ? trace::kNoRank : r + (c - coord[dim]) * stride[dim];
      // An extent of 1 has no neighbour in it, even when periodic: a real code copies locally.
      neighbour_[f] = q == r ? trace::kNoRank : q;
      if (neighbour_[f] != trace::kNoRank) ++neighbours_;
    }
  }

  // compute block + enter, Irecv and Isend per face, the completion (one MPI_Waitall, or one
  // MPI_Wait per possible request), leave; with prepost, enter, Irecv per face, leave first,
  // then the compute block, enter, Isend per face, the completion, leave.
  int steps() const {
    const int faces = 2 * p_->ndims;
    const int completion = p_->wait_each ? 2 * faces : 1;
    return p_->prepost ? (faces + 2) + 3 + 1 + faces + completion + 1 : 4 + 2 * faces + completion + 1;
  }

  bool step(int k, Action& a) const {
    const Params& p = *p_;
    const int faces = 2 * p.ndims;
    const auto irecv = [&](int f) {
      if (neighbour_[f] == trace::kNoRank) return false;
      a = p2p_action(ActionKind::Irecv, neighbour_[f], opposite(f), p.bytes);
      return true;
    };
    int j = 0;  // position in the exchange after the compute, from its first MPI call
    if (p.prepost) {
      if (k == 0 || k == faces + 5) {
        a = enter(p.exchange_region);
        return true;
      }
      if (k <= faces) return irecv(k - 1);
      if (k == faces + 1) {
        a = leave(p.exchange_region);
        return true;
      }
      if (k < faces + 5) {
        a = compute_block(k - faces - 2, p.compute_region, p.compute);
        return true;
      }
      j = k - (faces + 6) + faces;  // continue as after the receives below
    } else {
      if (k < 4) {  // the compute block, then into the exchange
        a = k < 3 ? compute_block(k, p.compute_region, p.compute) : enter(p.exchange_region);
        return true;
      }
      j = k - 4;
      if (j < faces) return irecv(j);
    }
    if (j < 2 * faces) {
      const int f = j - faces;
      if (neighbour_[f] == trace::kNoRank) return false;
      a = p2p_action(ActionKind::Isend, neighbour_[f], f, p.bytes);
      return true;
    }
    if (p.wait_each) {
      // LoopStream numbers the requests in call order: the receives hold slots
      // 0 .. neighbours−1, the sends neighbours .. 2·neighbours−1. Wait on them in that order.
      const int w = j - 2 * faces;
      if (w < 2 * faces) {
        if (w >= 2 * neighbours_) return false;
        a.kind = ActionKind::Wait;
        a.request = w;
        return true;
      }
    } else if (j == 2 * faces) {
      a.kind = ActionKind::Waitall;
      return true;
    }
    a = leave(p.exchange_region);
    return true;
  }

 private:
  std::shared_ptr<const Params> p_;
  std::array<Rank, 2 * kMaxDims> neighbour_{};
  int neighbours_ = 0;  // faces with a neighbour: requests per iteration = 2 · neighbours_
};

std::vector<std::string> extent_names(int ndims) {
  std::vector<std::string> n = {"px", "py", "pz"};
  n.resize(static_cast<std::size_t>(ndims));
  return n;
}

std::string workload_name(int ndims) {
  return ndims == 2 ? "halo2d" : "halo3d";
}

std::unique_ptr<Workload> make(const Options& opts, int ndims) {
  const Reader in(opts, workload_name(ndims));
  Params p;
  read_basic(in, p, extent_names(ndims));
  p.ndims = ndims;
  p.periodic = in.boolean("periodic");
  const auto& completion = in.choice("completion");
  if (completion != "waitall" && completion != "wait")
    in.fail("completion", "must be waitall or wait, got " + completion);
  p.wait_each = completion == "wait";
  p.prepost = in.boolean("prepost");
  return make_program_workload<Program>(in.model(), std::move(p));
}

WorkloadEntry entry(int ndims) {
  using units::Quantity;
  const std::string grid = ndims == 2 ? "px × py" : "px × py × pz";
  std::vector<OptionSpec> options = {ranks_option(false)};
  for (const auto& n : extent_names(ndims))
    options.push_back(quantity_option(n, Quantity::Integer, "0",
                                      "ranks along " + n.substr(1) +
                                          (n == "px" ? " (the slowest-varying dimension)" : "") +
                                          "; 0 = chosen as MPI_Dims_create does"));
  options.push_back(iterations_option());
  options.push_back(compute_option());
  options.push_back(flops_option());
  options.push_back(quantity_option("bytes", Quantity::Bytes, "8KiB", "size of each face message"));
  options.push_back(bool_option("periodic", "false", "wrap the grid around in every dimension (torus)"));
  options.push_back(choice_option("completion", {"waitall", "wait"}, "waitall",
                                  "waitall: one MPI_Waitall for all requests; wait: one MPI_Wait per "
                                  "request, the receives first, then the sends, each in the order posted"));
  options.push_back(bool_option("prepost", "false",
                                "post the receives before the compute (overlap), in their own `exchange` "
                                "region instance; the sends and the completion follow the compute"));
  Spec s = make_spec(SpecKind::Workload, workload_name(ndims),
                     std::to_string(ndims) + "D halo exchange on a " + grid +
                         " process grid: per iteration, compute in region `compute`, then in region "
                         "`exchange` MPI_Irecv from and MPI_Isend to each of the " +
                         std::to_string(2 * ndims) +
                         " face neighbours, then MPI_Waitall (or one MPI_Wait per request)",
                     std::move(options));
  return {std::move(s), [ndims](const Options& o) { return make(o, ndims); }};
}

}  // namespace

WorkloadEntry halo2d_entry() {
  return entry(2);
}
WorkloadEntry halo3d_entry() {
  return entry(3);
}

}  // namespace waitlab::models::synth
