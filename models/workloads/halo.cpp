// halo2d, halo3d — non-blocking nearest-neighbour exchange on a Cartesian process grid
// (stencil codes): per iteration, compute in region `compute`, then in region `exchange`
// MPI_Irecv from every face neighbour, MPI_Isend to every face neighbour, MPI_Waitall.
// One implementation for both; the grid is px × py (× pz), numbered as MPI_Cart_create
// numbers it (the last extent varies fastest).
#include <array>
#include <memory>

#include "models/workloads/common.hpp"

namespace waitlab::models::synth {
namespace {

constexpr int kMaxDims = 3;

struct Params {
  std::string name;
  int ndims = 2;
  std::vector<int> dims;
  int iterations = 1;
  bool periodic = false;
  Reader::Amount compute;
  std::uint64_t bytes = 0;
  trace::RegionId compute_region = 0;
  trace::RegionId exchange_region = 0;
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
      coord[dim] = (r / s) % p_->dims[dim];
      s *= p_->dims[dim];
    }
    for (int f = 0; f < 2 * nd; ++f) {
      const int dim = f / 2;
      const int extent = p_->dims[dim];
      int c = coord[dim] + ((f % 2 == 0) ? -1 : 1);
      if (p_->periodic) c = (c + extent) % extent;
      const bool outside = c < 0 || c >= extent;
      const Rank q = outside ? trace::kNoRank : r + (c - coord[dim]) * stride[dim];
      // An extent of 1 has no neighbour in it, even when periodic: a real code copies locally.
      neighbour_[f] = q == r ? trace::kNoRank : q;
    }
  }

  int steps() const { return 4 + 4 * p_->ndims + 2; }

  bool step(int k, Action& a) const {
    const Params& p = *p_;
    const int faces = 2 * p.ndims;
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
      case 3:
        a = enter(p.exchange_region);
        return true;
      default:
        break;
    }
    const int j = k - 4;
    if (j < faces) {
      if (neighbour_[j] == trace::kNoRank) return false;
      a = p2p(ActionKind::Irecv, neighbour_[j], opposite(j), p.bytes);
      return true;
    }
    if (j < 2 * faces) {
      const int f = j - faces;
      if (neighbour_[f] == trace::kNoRank) return false;
      a = p2p(ActionKind::Isend, neighbour_[f], f, p.bytes);
      return true;
    }
    if (j == 2 * faces) {
      a.kind = ActionKind::Waitall;
      return true;
    }
    a = leave(p.exchange_region);
    return true;
  }

 private:
  std::shared_ptr<const Params> p_;
  std::array<Rank, 2 * kMaxDims> neighbour_{};
};

class Halo final : public BasicWorkload {
 public:
  explicit Halo(Params p) : BasicWorkload(p.name, product(p.dims), p.iterations, p.dims) {
    p.compute_region = defs_.region("compute");
    p.exchange_region = defs_.region("exchange");
    params_ = std::make_shared<const Params>(std::move(p));
  }
  std::unique_ptr<ActionStream> stream(Rank r) const override {
    check_rank(r);
    return std::make_unique<LoopStream<Program>>(Program(params_, r), params_->iterations);
  }

 private:
  static int product(const std::vector<int>& d) {
    int n = 1;
    for (int x : d) n *= x;
    return n;
  }
  std::shared_ptr<const Params> params_;
};

std::vector<std::string> extent_names(int ndims) {
  std::vector<std::string> n = {"px", "py", "pz"};
  n.resize(static_cast<std::size_t>(ndims));
  return n;
}

std::unique_ptr<Workload> make(const Options& opts, int ndims) {
  Params p;
  p.name = ndims == 2 ? "halo2d" : "halo3d";
  const Reader in(opts, p.name);
  p.ndims = ndims;
  p.dims = in.grid(extent_names(ndims));
  p.iterations = static_cast<int>(in.integer("iterations", 1, kMaxCount));
  p.compute = in.compute();
  p.bytes = in.bytes("bytes");
  p.periodic = in.boolean("periodic");
  return std::make_unique<Halo>(std::move(p));
}

WorkloadEntry entry(int ndims) {
  Spec s;
  s.kind = SpecKind::Workload;
  s.name = ndims == 2 ? "halo2d" : "halo3d";
  const std::string grid = ndims == 2 ? "px × py" : "px × py × pz";
  s.description = std::to_string(ndims) + "D halo exchange on a " + grid +
                  " process grid: per iteration, compute in region `compute`, then in region `exchange` "
                  "MPI_Irecv from and MPI_Isend to each of the " +
                  std::to_string(2 * ndims) + " face neighbours and MPI_Waitall";
  s.options = {ranks_option(false)};
  for (const auto& n : extent_names(ndims))
    s.options.push_back(integer_option(n, "0",
                                       "ranks along " + n.substr(1) +
                                           (n == "px" ? " (the slowest-varying dimension)" : "") +
                                           "; 0 = chosen as MPI_Dims_create does"));
  s.options.push_back(iterations_option());
  s.options.push_back(compute_option("compute", "1ms", "compute time per iteration (region `compute`)"));
  s.options.push_back(flops_option("the compute per iteration"));
  s.options.push_back(bytes_option("bytes", "8KiB", "size of each face message"));
  s.options.push_back(bool_option("periodic", "false", "wrap the grid around in every dimension (torus)"));
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
