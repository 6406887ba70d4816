// The simulation: SimGrid's engine, the platform and the ranks of one run
// (sim/simulation_run.hpp), its progress and memory reports, and run_here().
#include "sim/simulation.hpp"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <sstream>

#include <fmt/format.h>

// SimGrid's C headers need the declarations of s4u.hpp first.
// clang-format off
#include <simgrid/s4u.hpp>
#include <simgrid/version.h>
#include <smpi/smpi.h>
// clang-format on

#include "analysis/minprofile/minprofile.hpp"
#include "util/error.hpp"
#include "sim/platform_build.hpp"
#include "sim/rank_runner.hpp"
#include "sim/simulation_run.hpp"
#include "sim/thread_cputime.hpp"

extern "C" void smpi_init_options();  // exported by libsimgrid, declared in no public header

#if defined(__SANITIZE_ADDRESS__)
#include <pthread.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace sg4 = simgrid::s4u;

namespace waitlab::sim::detail {

namespace {

using trace::MpiOp;
using trace::Rank;

// Under Waitlab semantics point-to-point payloads are never copied: the data is irrelevant
// to the timing, and skipping the copy lets every rank share one scratch buffer.
void no_copy(smx_activity_t, void*, size_t) {}

// AddressSanitizer is told each actor's stack as the actor may throw (tell_asan_the_stack(),
// sim/rank_runner.cpp); this gives it the thread's own stack back when the simulation is over.
class AsanMainStack {
 public:
#if defined(__SANITIZE_ADDRESS__)
  AsanMainStack() {
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
      pthread_attr_getstack(&attr, &bottom_, &size_);
      pthread_attr_destroy(&attr);
    }
  }
  void restore() const {
    if (bottom_ == nullptr) return;
    void* fake_stack = nullptr;
    __sanitizer_start_switch_fiber(&fake_stack, bottom_, size_);
    __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
  }

 private:
  void* bottom_ = nullptr;
  std::size_t size_ = 0;
#else
  void restore() const {}
#endif
};

constexpr int kDefaultTopPad = 128 * 1024;  // glibc's DEFAULT_TOP_PAD

long max_map_count() {
  std::ifstream in("/proc/sys/vm/max_map_count");
  long v = 0;
  return in >> v && v > 0 ? v : 65530;  // Linux's default
}

// RunOptions::network on every link of the built platform (SplitDuplexLink's halves and
// loopbacks included: get_all_links() lists the links SimGrid routes over). An ideal link has
// latency 0 and a bandwidth so large that 1 GiB crosses it in 1e-11 s; simgrid_config() also
// removes SMPI's per-message overheads and size factors for it.
constexpr double kIdealBandwidth = 1e20;  // bytes/s

// "allgather=GB,allgatherv=default,...": the trace attribute collective_algorithms.
std::string algorithms_text(const std::vector<std::pair<std::string, std::string>>& algorithms) {
  std::string out;
  for (const auto& [k, a] : algorithms) out += (out.empty() ? "" : ",") + k + "=" + a;
  return out;
}

std::string network_text(const NetworkChange& n) {
  if (n.ideal) return "ideal (latency 0, bandwidth 1e20 B/s, no per-message overheads)";
  std::ostringstream s;
  s << "bandwidth x" << n.bandwidth_scale << ", latency x" << n.latency_scale;
  return s.str();
}

void apply_network(const sg4::Engine& engine, const NetworkChange& n) {
  if (n.empty()) return;
  for (sg4::Link* link : engine.get_all_links()) {
    if (n.ideal) {
      link->set_latency(0);
      link->set_bandwidth(kIdealBandwidth);
    } else {
      link->set_latency(link->get_latency() * n.latency_scale);
      link->set_bandwidth(link->get_bandwidth() * n.bandwidth_scale);
    }
  }
}

}  // namespace

Simulation::~Simulation() = default;

bool Simulation::received(Rank dst, Rank src, std::int32_t tag, std::uint64_t seq) const {
  return runners_[static_cast<std::size_t>(dst)]->received(src, tag, seq);
}

const RankRunner& Simulation::runner(Rank r) const {
  return *runners_[static_cast<std::size_t>(r)];
}

void Simulation::rank_finished(const RankRunner& r) {
  ++finished_;
  for (const auto& c : r.comms()) {
    Fewest& f = fewest_[c.id];
    if (f.rank == nullptr || c.calls < f.calls) f = Fewest{&r, c.calls};
  }
}

// The FIFO bookkeeping of a channel (src -> dst, tag) is dropped once it is idle — every
// message sent has been received and reaped — so that workloads with ever new tags do not
// grow it without bound; both sides then count from 0 again, consistently. Small tables
// are left alone: re-creating entries for every message would only churn the allocator.
void Simulation::forget_channel_if_idle(Rank src, Rank dst, std::int32_t tag) {
  constexpr std::size_t kKeep = 16;
  RankRunner& s = *runners_[static_cast<std::size_t>(src)];
  RankRunner& d = *runners_[static_cast<std::size_t>(dst)];
  if (s.send_seq_.size() <= kKeep && d.recv_.size() <= kKeep) return;
  const auto si = s.send_seq_.find(channel(dst, tag));
  const auto di = d.recv_.find(channel(src, tag));
  if (si == s.send_seq_.end() || di == d.recv_.end()) return;
  const RecvChannel& ch = di->second;
  if (ch.posted != si->second || ch.prefix != ch.posted || !ch.later.empty()) return;
  for (const auto& e : s.eager_)
    if (e.dst == dst && e.tag == tag) return;
  for (const auto& o : s.outstanding_)  // an Isend not yet waited for still needs its number
    if (o.send && o.peer == dst && o.tag == tag) return;
  s.send_seq_.erase(si);
  d.recv_.erase(di);
}

// Creating communicators costs simulated time in SMPI 3.32: each one's constructor broadcasts
// its id over it (an int: 4.05 µs per communicator of two ranks on 1 GB/s, 1 µs links, and
// MPI_Comm_split more: docs/engine.md §5). On a network of latency 0 and this bandwidth the
// whole creation takes a few 1e-299 s, which no later timestamp can show (RankRunner::now()).
// Not infinity (SimGrid's solver aborts on it) nor DBL_MAX: SMPI's bandwidth factors multiply it.
constexpr double kCreationBandwidth = 1e300;  // bytes/s
constexpr double kCreationLimit = 1e-250;     // seconds: more means the network was not ideal

// Every rank is a member of MPI_COMM_WORLD (communicator 0: every rank, in order); the
// workload's other communicators list their members, which are checked here. If there are
// any, the network is ideal until they are created (communicators_created()).
void Simulation::set_up_communicators(const sg4::Engine& engine) {
  const auto& comms = result_.trace.defs.comms;
  const int n = ranks();
  fewest_.assign(std::max<std::size_t>(comms.size(), 1), Fewest{});
  for (auto& r : runners_)
    r->comms_.push_back(RankRunner::RankComm{trace::kCommWorld, r->rank_, n, MPI_COMM_NULL, 0});
  std::vector<char> seen(static_cast<std::size_t>(n));
  for (std::size_t c = 1; c < comms.size(); ++c) {
    const auto& m = comms[c].members;
    const std::string which =
        "communicator " + std::to_string(c) + " '" + comms[c].name + "' of the workload";
    std::fill(seen.begin(), seen.end(), 0);
    for (std::size_t i = 0; i < m.size(); ++i) {
      if (m[i] < 0 || m[i] >= n)
        throw InputError(which + ": member " + std::to_string(i) + " is " + std::to_string(m[i]) +
                         ", not a rank (the run has " + std::to_string(n) + " ranks)");
      if (seen[static_cast<std::size_t>(m[i])]++)
        throw InputError(which + ": rank " + std::to_string(m[i]) + " is a member twice");
      runners_[static_cast<std::size_t>(m[i])]->comms_.push_back(RankRunner::RankComm{
          static_cast<std::uint32_t>(c), static_cast<Rank>(i), static_cast<int>(m.size()), MPI_COMM_NULL, 0});
    }
    if (!m.empty()) creates_communicators_ = true;
  }
  if (!creates_communicators_) return;
  for (sg4::Link* link : engine.get_all_links()) {
    if (link->get_sharing_policy() == sg4::Link::SharingPolicy::WIFI) continue;  // has no single bandwidth
    saved_links_.push_back(SavedLink{link, link->get_latency(), link->get_bandwidth()});
    link->set_latency(0);
    link->set_bandwidth(kCreationBandwidth);
  }
  created_barrier_ = sg4::Barrier::create(static_cast<unsigned>(n));
}

// Called by every rank once it created its communicators: the last one gives the network its
// own latencies and bandwidths back (exactly the values it had) and the copy callback its
// Waitlab value; nobody goes on before that.
void Simulation::communicators_created() {
  if (++created_ == ranks()) {
    for (const SavedLink& l : saved_links_) {
      l.link->set_latency(l.latency);
      l.link->set_bandwidth(l.bandwidth);
    }
    saved_links_.clear();
    if (!copies_payloads(options_)) smpi_comm_set_copy_data_callback(&no_copy);
    origin_ = sg4::Engine::get_clock();
    if (origin_ > kCreationLimit) {
      std::ostringstream t;
      t << origin_;
      throw std::runtime_error("creating the communicators took " + t.str() +
                               " s of simulated time (a link whose cost the engine cannot remove?)");
    }
  }
  created_barrier_->wait();
}

void Simulation::fail(const std::string& message, bool input_error) {
  if (error_.empty()) {
    error_ = message;
    input_error_ = input_error;
  }
  sg4::Actor::kill_all();
}

void Simulation::on_deadlock() {
  std::vector<std::string> lines;
  for (const auto& r : runners_)
    if (!r->finished()) lines.push_back(r->blocked());
  std::ostringstream os;
  os.precision(9);
  os << "deadlock at t=" << sg4::Engine::get_clock() << " s: " << lines.size() << " of " << runners_.size()
     << " ranks can never finish: ";
  constexpr std::size_t kShown = 8;
  for (std::size_t i = 0; i < lines.size() && i < kShown; ++i) os << (i ? "; " : "") << lines[i];
  if (lines.size() > kShown) os << "; and " << lines.size() - kShown << " more";
  deadlock_ = os.str();
}

void Simulation::on_time_advance() {
  // One read of the monotonic clock (vDSO, no system call) per time step: a step costs at
  // least one simcall per rank that moves in it, far more than that.
  const auto now = std::chrono::steady_clock::now();
  watch_memory(now);
  if (options_.progress && progress_fd_ >= 0) progress(false);
}

// Every 2 s: the resident memory, against what was available when the run started.
void Simulation::watch_memory(std::chrono::steady_clock::time_point now) {
  if (memory_warned_ || progress_fd_ < 0 || watch_.limit == 0) return;
  if (std::chrono::duration<double>(now - last_memory_check_).count() < 2.0) return;
  last_memory_check_ = now;
  const std::string warning = memory_warning(resident_bytes(), watch_);
  if (warning.empty()) return;
  memory_warned_ = true;
  const std::string line = (tty_ && printed_ ? "\n" : "") + ("waitlab: warning: " + warning) + "\n";
  if (write(progress_fd_, line.data(), line.size()) < 0) progress_fd_ = -1;
}

void Simulation::progress(bool final) {
  const auto now = std::chrono::steady_clock::now();
  const double since = std::chrono::duration<double>(now - last_print_).count();
  if (!final && since < (tty_ ? 0.25 : 5.0)) return;
  last_print_ = now;
  const double wall = std::chrono::duration<double>(now - start_).count();
  // How far the ranks got through their action streams (the mean over ranks), and the wall
  // time left at the pace so far; blank while it is too early to tell.
  double sum = 0;
  bool known = !runners_.empty();
  for (const auto& r : runners_) {
    const double d = r->finished() ? 1.0 : r->stream_->done();
    if (d < 0) known = false;
    sum += d;
  }
  const double fraction = known ? sum / static_cast<double>(runners_.size()) : -1.0;
  // On a terminal the line is rewritten in place (and cleared to its end: it may get shorter).
  const std::string line = (tty_ ? "\r" : "") +
                           progress_text(sg4::Engine::get_clock(), fraction, finished_, ranks(), wall, final,
                                         resident_bytes()) +
                           (tty_ ? "\033[K" : "") + (tty_ && !final ? "" : "\n");
  if (write(progress_fd_, line.data(), line.size()) < 0) {
    progress_fd_ = -1;  // nowhere to report to; the run goes on
  }
  printed_ = true;
}

RunResult Simulation::run() {
  const int n = workload_.ranks();
  if (n < 1) throw InputError("the workload has no ranks");
  mpi_region_.fill(kUnset);
  equal_reduce_scatter_ = equal_counts_reduce_scatter(options_);

  const bool heap_stacks =
      unguarded_stacks(n, options_.max_map_count > 0 ? options_.max_map_count : max_map_count());
  std::vector<std::string> args = engine_arguments(heap_stacks);
  // SimGrid gives every actor a stack of its own mapping plus a guard page of another
  // (posix_memalign + mprotect: two mappings per rank); Linux allows 65,530 per process
  // by default, so 32,768 ranks abort in SimGrid's context factory. Without the guard page
  // SimGrid callocs the stack, and with the mmap threshold above the stack size malloc
  // serves it from the heap: one mapping for all stacks, no kernel setting to change. The
  // cost: a rank that overflows its 8 MiB stack is not stopped by a guard page.
  if (heap_stacks) mallopt(M_MMAP_THRESHOLD, kHeapStackThreshold);
  std::vector<char*> argv;
  for (auto& s : args) argv.push_back(s.data());
  int argc = static_cast<int>(argv.size());
  argv.push_back(nullptr);

  smpi_init_options();  // declares the smpi/* keys: before the engine parses --cfg
  sg4::Engine engine(&argc, argv.data());

  if (phase_) phase_("platform");
  const BuiltPlatform platform = build_platform(engine, platform_, n);
  apply_network(engine, options_.network);
  if (phase_) phase_("run");

  SMPI_init();
  SMPI_app_instance_register("waitlab", nullptr, n);
  define_trace(n);
  create_runners(platform);
  set_up_communicators(engine);
  // Where no payload needs copying (copies_payloads()), none is; while the communicators are
  // created SMPI must copy (the broadcast of each one's id), communicators_created() switches then.
  if (!copies_payloads(options_) && !creates_communicators_)
    smpi_comm_set_copy_data_callback(&no_copy);
  // Heap stacks: calloc clears what the heap's top held before it grew, and the heap grows by
  // M_TOP_PAD (128 KiB) more than asked: 128 KiB of every stack would be written (and kept
  // resident). Without the pad only fresh, untouched pages follow each stack.
  if (heap_stacks) mallopt(M_TOP_PAD, 0);
  start_ranks(platform);
  if (heap_stacks) mallopt(M_TOP_PAD, kDefaultTopPad);
  watch_run();

  const AsanMainStack main_stack;
  {
    const SkipThreadCpuTime skip;  // SMPI's benchmark timer is unused here: no system calls for it
    engine.run();
  }
  main_stack.restore();

  if (options_.progress && progress_fd_ >= 0) progress(true);
  check_outcome();
  SMPI_finalize();
  collect_results();
  describe_run(platform.description, n);
  return std::move(result_);
}

// SimGrid's command line: its own log (to our stderr, captured by the parent) kept to
// problems, the run's configuration (simgrid_config()), and no guard pages with heap stacks
// (run()).
std::vector<std::string> Simulation::engine_arguments(bool heap_stacks) const {
  std::vector<std::string> args = {"waitlab", "--log=root.thresh:warning"};
  for (const auto& c : simgrid_config(options_)) args.push_back("--cfg=" + c);
  if (heap_stacks) args.emplace_back("--cfg=contexts/guard-size:0");
  return args;
}

// The trace: workload definitions first, so that action region ids stay valid; then
// MPI_COMM_WORLD (communicator 0: every rank, in order) and the regions of MPI_Init and
// MPI_Finalize, which every rank records.
void Simulation::define_trace(int ranks) {
  trace::Trace& tr = result_.trace;
  tr.defs = workload_.definitions();
  user_regions_ = tr.defs.regions.size();
  trace::Communicator world{"MPI_COMM_WORLD", {}};
  for (Rank r = 0; r < ranks; ++r) world.members.push_back(r);
  if (tr.defs.comms.empty())
    tr.defs.comms.push_back(world);
  else
    tr.defs.comms[0] = world;
  region(MpiOp::Init);
  region(MpiOp::Finalize);
  tr.has_truth = true;  // the locations' records go to recording_
}

// One runner per rank, on its core's speed, with its action stream, its perturbations and,
// with RunOptions::minprofile, its profile.
void Simulation::create_runners(const BuiltPlatform& platform) {
  const int n = workload_.ranks();
  runners_.reserve(static_cast<std::size_t>(n));
  if (options_.minprofile)
    profiles_.assign(static_cast<std::size_t>(n), minprofile::RankProfile(options_.minprofile_percentile));
  for (Rank r = 0; r < n; ++r) {
    runners_.push_back(
        std::make_unique<RankRunner>(*this, r, platform.rank_speed[static_cast<std::size_t>(r)],
                                     workload_.stream(r), perturbations_.for_rank(r), recording_));
    if (options_.minprofile) runners_.back()->profile_ = &profiles_[static_cast<std::size_t>(r)];
  }
}

// Every rank's actor on its host, as SMPI's instance "waitlab" knows it.
void Simulation::start_ranks(const BuiltPlatform& platform) {
  for (Rank r = 0; r < ranks(); ++r) {
    RankRunner* runner = runners_[static_cast<std::size_t>(r)].get();
    auto actor =
        sg4::Actor::init("rank-" + std::to_string(r), platform.rank_host[static_cast<std::size_t>(r)]);
    actor->set_property("instance_id", "waitlab");
    actor->set_property("rank", std::to_string(r));
    actor->start([this, runner] { run_rank(*runner); });
  }
}

// A rank's actor: its run, then its end; the first error of any rank ends the simulation
// (fail()).
void Simulation::run_rank(RankRunner& runner) {
  try {
    runner.run();
    rank_finished(runner);
  } catch (const InputError& e) {
    fail(e.what(), true);
  } catch (const std::bad_alloc&) {
    // More than the memory estimate counted (its collective bound is measured on SimGrid's
    // default algorithms; another may take more) met the host's limit.
    fail("out of memory in the simulation of rank " + std::to_string(runner.rank()) +
             ": it needed more memory than the host allows (ulimit -v, the machine's memory), more than the "
             "estimate before the run counted (a collective algorithm's buffers, or WAITLAB_MEMORY_CHECK); "
             "simulate fewer ranks or smaller messages, or give it more memory",
         true);
  } catch (const std::exception& e) {
    fail(e.what(), false);
  }
}

// The engine's callbacks: the deadlock report, and with somewhere to write to, progress lines
// and the memory watch at every time step.
void Simulation::watch_run() {
  sg4::Engine::on_deadlock_cb([this] { on_deadlock(); });
  if (progress_fd_ >= 0 && (options_.progress || watch_.limit > 0)) {
    tty_ = options_.progress && isatty(progress_fd_) != 0;
    start_ = last_print_ = last_memory_check_ = std::chrono::steady_clock::now();
    sg4::Engine::on_time_advance_cb([this](double) { on_time_advance(); });
  }
}

// The first rank's error (fail()), else the deadlock, as the run's exception.
void Simulation::check_outcome() const {
  if (!error_.empty()) {
    if (input_error_) throw InputError(error_);
    throw std::runtime_error(error_);
  }
  if (!deadlock_.empty()) throw InputError(deadlock_);
}

// After the run: MPI_Finalize synchronised (synchronise_finalize()), the statistics, and the
// online estimate with RunOptions::minprofile.
void Simulation::collect_results() {
  std::vector<FinalizeCall> finalize_calls;
  for (const auto& r : runners_) finalize_calls.push_back(r->finalize_call());
  synchronise_finalize(recording_, finalize_calls, profiles_);

  result_.stats.simulated_time = sg4::Engine::get_clock();
  for (const auto& r : runners_) {
    result_.stats.mpi_operations += r->operations();
    result_.stats.events += r->events();
  }
  if (options_.minprofile) {
    const trace::Trace& tr = result_.trace;
    std::vector<std::string> names(paths_.size());
    for (std::size_t i = 0; i < names.size(); ++i) names[i] = paths_.name(static_cast<trace::CallPathId>(i), tr.defs);
    result_.estimate = minprofile::estimate(profiles_, names);
  }
}

// The trace's attributes: what was run, on what, and how.
void Simulation::describe_run(const std::string& platform, int ranks) {
  trace::Trace& tr = result_.trace;
  const auto& coll = effective_collective_set(options_);
  std::ostringstream thr;
  thr << options_.eager_threshold;
  tr.attributes = {
      {"name", options_.name},
      {"seed", std::to_string(options_.seed)},
      {"ranks", std::to_string(ranks)},
      {"iterations", std::to_string(workload_.iterations())},
      {"workload", workload_.name()},
      {"semantics", options_.semantics == Semantics::Waitlab ? "waitlab" : "smpi-default"},
      {"collectives", coll.name},
      {"collective_algorithms", algorithms_text(effective_collective_algorithms(options_))},
      {"eager_threshold", thr.str()},
      {"platform", platform},
      {"perturbations", perturbations_text()},
      {"simulator", "waitlab on SimGrid " + std::to_string(SIMGRID_VERSION_MAJOR) + "." +
                        std::to_string(SIMGRID_VERSION_MINOR)},
  };
  if (!options_.network.empty()) tr.attributes.push_back({"network", network_text(options_.network)});
  if (options_.minprofile)
    tr.attributes.push_back({analysis::kTestedAttribute, "MPI_Wait/MPI_Waitall Enter events flag requests complete at entry"});
}

// ---------------------------------------------------------------------------------------

std::string memory_warning(std::uint64_t resident, const MemoryWatch& watch) {
  const std::uint64_t own = resident > watch.base ? resident - watch.base : 0;
  if (watch.limit == 0 || own < watch.limit / 10 * 9) return "";
  return "the simulation has grown to " + human_bytes(own) + " of memory, 90 % of the " + human_bytes(watch.limit) +
         " available when it started (estimated need: " + human_bytes(watch.estimate) +
         "); it may swap or be killed by the out-of-memory killer";
}

std::string progress_text(double simulated, double fraction, int finished, int ranks, double wall, bool final,
                          std::uint64_t resident) {
  std::string done;
  if (fraction >= 0) {
    const double f = std::min(fraction, 1.0);
    if (final || f >= 1)
      done = fmt::format("{:.0f} % done, ", 100 * f);
    else if (f >= 0.005 && wall >= 1 && wall * (1 - f) / f < 0.5)
      done = fmt::format("{:.1f} % done, less than 1 s left, ", 100 * f);
    else if (f >= 0.005 && wall >= 1)
      done = fmt::format("{:.1f} % done, about {:.0f} s left, ", 100 * f, wall * (1 - f) / f);
    else
      done = fmt::format("{:.1f} % done, ", 100 * f);
  }
  return fmt::format("simulated {:.6f} s, {}{}/{} ranks finished, {:.1f} s wall{}", simulated, done, finished, ranks,
                     wall, resident > 0 ? ", " + human_bytes(resident) + " memory" : std::string());
}

RunResult run_here(const models::PlatformDesc& platform, const models::Workload& workload,
                   const models::Perturbations& perturbations, const RunOptions& options, int progress_fd,
                   Recording& recording, const std::function<void(const char*)>& phase,
                   const MemoryWatch& watch) {
  Simulation sim(platform, workload, perturbations, options, progress_fd, phase, watch, recording);
  return sim.run();
}

}  // namespace waitlab::sim::detail
