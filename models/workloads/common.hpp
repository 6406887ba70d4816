// waitlab::models::synth — what every synthetic workload is built from (internal).
//
// Promise: a workload is a per-rank *program* for one iteration, addressed by step index,
// repeated `iterations` times by LoopStream. A program is a tiny value (a rank, a few
// neighbour ranks, a shared pointer to the immutable parameters) that computes the action
// at step k on demand, so a stream costs a few dozen bytes and drawing actions allocates
// nothing — 8192 ranks × 1000 iterations need no buffers. ProgramWorkload holds the
// per-workload boilerplate; read_basic reads the options every workload has; the Reader
// checks ranges and throws InputError naming the scenario context, the workload and the option.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/error.hpp"
#include "models/action.hpp"
#include "models/platform.hpp"
#include "models/spec.hpp"
#include "models/workload.hpp"

namespace waitlab::models::synth {

// Upper bound for iterations and per-iteration counts: far beyond any simulation, low enough
// that step arithmetic cannot overflow an int. Ranks and grid extents are bounded by
// models::kMaxRanks (models/platform.hpp).
inline constexpr std::int64_t kMaxCount = 1 << 30;
// The most bytes one MPI call of a workload may move: MPI counts are `int`.
inline constexpr std::int64_t kMaxMessageBytes = 2147483647;

// ---- registration (one function per workload file; listed once in models/workload.cpp) ----
WorkloadEntry heat1d_entry();
WorkloadEntry halo2d_entry();
WorkloadEntry halo3d_entry();
WorkloadEntry sweep2d_entry();
WorkloadEntry allreduce_loop_entry();
WorkloadEntry bcast_reduce_entry();
WorkloadEntry alltoall_loop_entry();

// ---- option specs shared by several workloads (generic builders: models/spec.hpp) ----
OptionSpec ranks_option(bool required);  // required = false: derived from the grid if absent
OptionSpec iterations_option(std::string default_value = "100");
// `compute`: the compute time (default 1ms per iteration, in region `compute`).
OptionSpec compute_option(std::string default_value = "1ms",
                          std::string description = "compute time per iteration (region `compute`)");
OptionSpec flops_option(std::string what = "the compute per iteration");  // optional; replaces `compute`

// A compute amount: seconds, or flops executed at the host's speed.
struct Amount {
  double amount = 0;
  bool flops = false;
};

// ---- option reader: OptionReader's range checks plus the workload quantities ----
class Reader : public OptionReader {
 public:
  Reader(const Options& opts, std::string workload)
      : OptionReader(opts, SpecKind::Workload, std::move(workload)) {}

  // A whole number of bytes from 0 to kMaxMessageBytes (MPI's int count).
  std::uint64_t bytes(std::string_view name) const;
  double duration(std::string_view name) const;      // finite, >= 0 seconds
  int rank_count(std::string_view name) const;       // a number of ranks, 1 to kMaxRanks
  // `compute` in seconds, or `flops` when that optional option is set.
  Amount compute(std::string_view seconds_name = "compute", std::string_view flops_name = "flops") const;

  // The process grid: `ranks` (optional) and the named extents (0 = choose, as
  // MPI_Dims_create does). Returns the extents, slowest dimension first.
  std::vector<int> grid(const std::vector<std::string>& extent_names) const;
};

// What every workload reads: its process grid, `iterations`, `compute` (or `flops`) and `bytes`.
struct BasicParams {
  int ranks = 1;
  std::vector<int> grid;  // slowest dimension first; product == ranks
  int iterations = 1;
  Amount compute;
  std::uint64_t bytes = 0;
};

// Fills `out` from the options: `ranks` as a 1-D grid when `extent_names` is empty, else the
// grid of Reader::grid; then iterations, compute/flops and bytes.
void read_basic(const Reader& in, BasicParams& out, const std::vector<std::string>& extent_names = {});

// MPI_Dims_create: fills the zero entries of `dims` with a factorisation of
// n / product(non-zero entries) whose factors are as close to each other as possible, in
// non-increasing order. Throws std::invalid_argument if the fixed entries do not divide n.
// (The numbering of a grid is models::grid_coords / grid_rank in models/workload.hpp.)
std::vector<int> dims_create(int n, std::vector<int> dims);

// ---- action builders ----
inline Action enter(trace::RegionId region) {
  Action a;
  a.kind = ActionKind::Enter;
  a.region = region;
  return a;
}
inline Action leave(trace::RegionId region) {
  Action a;
  a.kind = ActionKind::Leave;
  a.region = region;
  return a;
}
inline Action compute(trace::RegionId region, const Amount& c) {
  Action a;
  a.kind = ActionKind::Compute;
  a.region = region;
  a.amount = c.amount;
  a.flops = c.flops;
  return a;
}
// Step k (0, 1 or 2) of a compute block: enter `region`, compute `c`, leave `region`.
inline Action compute_block(int k, trace::RegionId region, const Amount& c) {
  return k == 0 ? enter(region) : k == 1 ? compute(region, c) : leave(region);
}
inline Action collective(ActionKind kind, std::uint64_t bytes, Rank root = 0) {
  Action a;
  a.kind = kind;
  a.bytes = bytes;
  a.root = root;
  return a;
}

// ---- the generic lazy stream ----
// A Program is a small copyable value with
//   int steps() const;                    // step indices per iteration (same for every iteration)
//   bool step(int k, Action& a) const;    // fill `a` (default-constructed) or return false when
//                                         // step k is empty for this rank (e.g. no left neighbour)
// LoopStream stamps the iteration number on every action and numbers the request slots of
// Isend/Irecv from 0 in each iteration: every program completes its non-blocking calls
// before the iteration ends (MPI_Waitall, or MPI_Wait on every slot it numbered), so the
// slots are free again at the next iteration.
template <class Program>
class LoopStream final : public ActionStream {
 public:
  LoopStream(Program program, int iterations)
      : program_(std::move(program)), iterations_(iterations), steps_(program_.steps()) {}

  bool next(Action& a) override {
    while (iteration_ < iterations_) {
      if (step_ == steps_) {
        ++iteration_;
        step_ = 0;
        request_ = 0;
        continue;
      }
      a = Action{};
      if (program_.step(step_++, a)) {
        a.iteration = iteration_;
        if (a.kind == ActionKind::Isend || a.kind == ActionKind::Irecv) a.request = request_++;
        return true;
      }
    }
    return false;
  }
  double done() const override {
    if (iterations_ <= 0 || iteration_ >= iterations_) return 1.0;
    return (iteration_ + (steps_ > 0 ? static_cast<double>(step_) / steps_ : 0.0)) / iterations_;
  }

 private:
  Program program_;
  int iterations_;
  int steps_;
  int iteration_ = 0;
  int step_ = 0;
  std::int32_t request_ = 0;
};

// What every synthetic workload shares: name, sizes, grid and user regions.
class BasicWorkload : public Workload {
 public:
  BasicWorkload(std::string name, int ranks, int iterations, std::vector<int> grid)
      : name_(std::move(name)), ranks_(ranks), iterations_(iterations), grid_(std::move(grid)) {}
  std::string name() const override { return name_; }
  int ranks() const override { return ranks_; }
  int iterations() const override { return iterations_; }
  const trace::Definitions& definitions() const override { return defs_; }
  std::vector<int> grid() const override { return grid_; }

 protected:
  // Throws std::out_of_range for a rank outside [0, ranks): a programming error, not bad input.
  void check_rank(Rank r) const;
  trace::Definitions defs_;

 private:
  std::string name_;
  int ranks_;
  int iterations_;
  std::vector<int> grid_;
};

// A workload whose stream for rank r is a LoopStream of Program(params, r). `Params` derives
// from BasicParams and has `void name_regions(trace::Definitions&)`, which defines its user
// regions (and keeps their ids for the actions); the parameters are then shared, immutable,
// by every stream.
template <class Params, class Program>
class ProgramWorkload final : public BasicWorkload {
 public:
  ProgramWorkload(std::string name, Params p)
      : BasicWorkload(std::move(name), p.ranks, p.iterations, p.grid) {
    p.name_regions(defs_);
    params_ = std::make_shared<const Params>(std::move(p));
  }
  std::unique_ptr<ActionStream> stream(Rank r) const override {
    check_rank(r);
    return std::make_unique<LoopStream<Program>>(Program(params_, r), params_->iterations);
  }

 private:
  std::shared_ptr<const Params> params_;
};

template <class Program, class Params>
std::unique_ptr<Workload> make_program_workload(std::string name, Params p) {
  return std::make_unique<ProgramWorkload<Params, Program>>(std::move(name), std::move(p));
}

}  // namespace waitlab::models::synth
