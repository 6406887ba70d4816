// waitlab::sim (internal to sim/) — the simulation: one run of SMPI inside this process, the
// SimGrid engine and platform it sets up, and the state its ranks share.
//
// Promise: run() configures SimGrid (sim/smpi_config.hpp), builds the platform
// (sim/platform_build.hpp), starts one rank runner per rank (sim/rank_runner.hpp), runs the
// engine, reports progress and memory on the way, and returns the trace's definitions and
// attributes with the run's statistics and online estimate (run_here() in
// sim/simulation.hpp is its caller). The runners call back into it for what they share: the
// trace definitions, the scratch buffers, the other ranks' progress on a channel, the
// creation of the communicators, and the first error, which ends the run.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <simgrid/s4u.hpp>

#include "analysis/minprofile/minprofile.hpp"
#include "models/perturbation.hpp"
#include "models/platform.hpp"
#include "models/workload.hpp"
#include "sim/options.hpp"
#include "sim/platform_build.hpp"
#include "sim/recording.hpp"
#include "sim/resources.hpp"

namespace waitlab::sim::detail {

// A buffer shared by all ranks; payloads are never looked at. Grown by replacement: old
// buffers stay alive because other ranks may still be in a call that uses them.
class Scratch {
 public:
  void* get(std::size_t bytes) {
    if (pool_.empty() || bytes > size_) {
      size_ = std::max<std::size_t>({bytes, 2 * size_, 4096});
      pool_.push_back(std::make_unique<char[]>(size_));
    }
    return pool_.back().get();
  }

 private:
  std::vector<std::unique_ptr<char[]>> pool_;
  std::size_t size_ = 0;
};

class RankRunner;

class Simulation {
 public:
  Simulation(const models::PlatformDesc& platform, const models::Workload& workload,
             const models::Perturbations& perturbations, const RunOptions& options, int progress_fd,
             const std::function<void(const char*)>& phase, const MemoryWatch& watch, Recording& recording)
      : platform_(platform),
        workload_(workload),
        perturbations_(perturbations),
        options_(options),
        progress_fd_(progress_fd),
        phase_(phase),
        watch_(watch),
        recording_(recording) {}
  ~Simulation();

  RunResult run();

  const RunOptions& options() const { return options_; }
  int ranks() const { return static_cast<int>(runners_.size()); }
  const trace::Definitions& defs() const { return result_.trace.defs; }
  std::uint32_t region(trace::MpiOp op) {
    auto& id = mpi_region_[static_cast<std::size_t>(op)];
    if (id == kUnset) id = result_.trace.defs.mpi_region(op);
    return id;
  }
  std::size_t user_regions() const { return user_regions_; }
  trace::CallPaths& paths() { return paths_; }
  bool received(trace::Rank dst, trace::Rank src, std::int32_t tag, std::uint64_t seq) const;
  void forget_channel_if_idle(trace::Rank src, trace::Rank dst, std::int32_t tag);
  // Scratch buffers shared by all ranks (payloads are never looked at). Grown by
  // replacement; old ones stay alive because other ranks may still be using them.
  void* send_buffer(std::size_t bytes) { return send_scratch_.get(bytes); }
  void* recv_buffer(std::size_t bytes) { return recv_scratch_.get(bytes); }
  // A v-collective action's sizes (null: the workload holds none under that id).
  const models::Counts* counts(std::uint32_t id) const {
    return id == models::kNoCounts ? nullptr : workload_.counts(id);
  }
  // The reduce-scatter algorithm takes equal receive counts only (SimGrid asserts it).
  const std::string& equal_reduce_scatter() const { return equal_reduce_scatter_; }

  const RankRunner& runner(trace::Rank r) const;
  // Per communicator: the member that finished having entered the fewest collective calls on
  // it (null: none finished) and that number: a call on it beyond that can never complete.
  struct Fewest {
    const RankRunner* rank = nullptr;
    std::uint64_t calls = 0;
  };
  const Fewest& fewest_collectives(std::uint32_t comm) const { return fewest_[comm]; }
  void rank_finished(const RankRunner& r);
  // Sub-communicators (docs/engine.md §5): created by their members after MPI_Init, on a
  // network made ideal for the purpose; the last rank to finish restores it, and every rank
  // waits for that. The clock has then moved by a few 1e-299 s: origin().
  bool creates_communicators() const { return creates_communicators_; }
  void communicators_created();
  double origin() const { return origin_; }
  void fail(const std::string& message, bool input_error);
  void on_deadlock();
  void on_time_advance();

 private:
  static constexpr std::uint32_t kUnset = std::numeric_limits<std::uint32_t>::max();
  void progress(bool final);
  void watch_memory(std::chrono::steady_clock::time_point now);
  // The steps of run(), in order.
  std::vector<std::string> engine_arguments(bool heap_stacks) const;
  void define_trace(int ranks);
  void create_runners(const BuiltPlatform& platform);
  void set_up_communicators(const simgrid::s4u::Engine& engine);
  void start_ranks(const BuiltPlatform& platform);
  void run_rank(RankRunner& runner);
  void watch_run();
  void check_outcome() const;
  void collect_results();
  void describe_run(const std::string& platform, int ranks);
  std::string perturbations_text() const {
    std::string out;
    for (const auto& p : perturbations_.models()) out += (out.empty() ? "" : "; ") + p->describe();
    return out.empty() ? "none" : out;
  }

  const models::PlatformDesc& platform_;
  const models::Workload& workload_;
  const models::Perturbations& perturbations_;
  const RunOptions& options_;
  int progress_fd_;
  const std::function<void(const char*)>& phase_;
  const MemoryWatch watch_;
  Recording& recording_;

  RunResult result_;
  std::vector<std::unique_ptr<RankRunner>> runners_;
  std::array<std::uint32_t, static_cast<std::size_t>(trace::MpiOp::Count_)> mpi_region_{};
  std::size_t user_regions_ = 0;
  Scratch send_scratch_;
  Scratch recv_scratch_;
  trace::CallPaths paths_;                         // the online estimator's call paths
  std::vector<minprofile::RankProfile> profiles_;  // per rank, with RunOptions::minprofile
  int finished_ = 0;
  std::vector<Fewest> fewest_;  // per communicator
  bool creates_communicators_ = false;
  int created_ = 0;  // ranks done creating their communicators
  simgrid::s4u::BarrierPtr created_barrier_;
  struct SavedLink {
    simgrid::s4u::Link* link;
    double latency;
    double bandwidth;
  };
  std::vector<SavedLink> saved_links_;  // the network as built, while it is ideal
  double origin_ = 0;
  std::string equal_reduce_scatter_;  // the run's reduce-scatter algorithm if it needs equal counts, else ""
  std::string error_;
  bool input_error_ = false;
  std::string deadlock_;

  // Progress output.
  bool tty_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_print_;
  bool printed_ = false;
  // Memory watch: read every few seconds, one warning at most.
  std::chrono::steady_clock::time_point last_memory_check_;
  bool memory_warned_ = false;
};

}  // namespace waitlab::sim::detail
