// The SMPI engine proper: one MPI instance of N ranks executing action streams.
//
// Eager semantics with linear scaling (docs/engine.md): SimGrid runs with
// smpi/send-is-detached-thresh:0, so SMPI never detaches a send (detached sends sit in one
// global list that every completion scans: quadratic). A send smaller than the eager
// threshold is posted with MPI_Isend and the rank goes on at once, exactly as a detached
// send would; the request is reaped later with MPI_Wait, once the engine knows the message
// has been received (the receiver records every completed receive per channel), so the
// wait costs no simulated time. MPI_Wait — not MPI_Test — because only a wait removes the
// communication from the sender's activity list in SimGrid 3.32; a tested request stays
// there (and in memory) until the actor ends, and every later wait scans that list.
#include "sim/simulation.hpp"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <sstream>
#include <unordered_map>

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
#include "sim/thread_cputime.hpp"

extern "C" void smpi_init_options();  // exported by libsimgrid, declared in no public header

#if defined(__SANITIZE_ADDRESS__)
#include <pthread.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace sg4 = simgrid::s4u;

namespace waitlab::sim::detail {

namespace {

using models::Action;
using models::ActionKind;
using trace::EventKind;
using trace::MpiOp;
using trace::Rank;

constexpr std::uint64_t kMaxCount = static_cast<std::uint64_t>(std::numeric_limits<int>::max());
constexpr std::size_t kMaxScratch = std::size_t{1} << 34;  // 16 GiB: beyond that, refuse

// Under Waitlab semantics point-to-point payloads are never copied: the data is irrelevant
// to the timing, and skipping the copy lets every rank share one scratch buffer.
void no_copy(smx_activity_t, void*, size_t) {}

std::uint64_t channel(Rank peer, std::int32_t tag) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(peer)) << 32) |
         static_cast<std::uint32_t>(tag);
}

std::string bytes_text(std::uint64_t b) {
  return std::to_string(b) + " B";
}

// AddressSanitizer does not know SimGrid's actor stacks (Debian's SimGrid is not built
// with ASan's fiber annotations). When an exception unwinds on one (bad input is reported
// by exception), ASan refuses to clear the stale poison of the unwound frames, and the
// next landing pad trips over it: a false stack-use-after-scope. Telling ASan, right
// before anything may throw, that the current stack is this actor's stack makes it clear
// the poison as on a normal thread stack; AsanMainStack gives ASan the thread's own stack
// back when the simulation is over. No-ops without ASan.
void tell_asan_the_stack(const char* top) {
#if defined(__SANITIZE_ADDRESS__)
  // Actor stacks are 8 MiB (contexts/stack-size); staying 1 MiB inside keeps ASan from
  // unpoisoning memory beyond the stack.
  constexpr std::size_t kSize = 7 * 1024 * 1024;
  void* fake_stack = nullptr;
  __sanitizer_start_switch_fiber(&fake_stack, top - kSize, kSize);
  __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
#else
  (void)top;
#endif
}

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

// Completed receives of one channel (source, tag) at one rank, by posting sequence number:
// every seq < prefix is done, plus the few completed out of order.
struct RecvChannel {
  std::uint64_t posted = 0;
  std::uint64_t prefix = 0;
  std::vector<std::uint64_t> later;  // sorted

  void complete(std::uint64_t seq) {
    if (seq == prefix) {
      ++prefix;
      while (!later.empty() && later.front() == prefix) {
        later.erase(later.begin());
        ++prefix;
      }
    } else {
      later.insert(std::upper_bound(later.begin(), later.end(), seq), seq);
    }
  }
  bool done(std::uint64_t seq) const {
    return seq < prefix || std::binary_search(later.begin(), later.end(), seq);
  }
};

// A user request (MPI_Isend/MPI_Irecv) not yet completed by MPI_Wait/MPI_Waitall.
struct Outstanding {
  std::int32_t slot = -1;
  std::uint64_t id = 0;  // request id recorded in the trace
  MPI_Request req = MPI_REQUEST_NULL;
  bool send = false;
  bool eager = false;  // completes locally (Waitlab semantics, small message)
  Rank peer = trace::kNoRank;
  std::int32_t tag = 0;
  std::uint64_t bytes = 0;
  std::uint64_t seq = 0;  // FIFO position on its channel
  std::int64_t action = 0;
  bool done = false;  // completed by the test at the entry of MPI_Wait/MPI_Waitall
  // Filled on completion:
  Rank source = trace::kNoRank;
  std::uint64_t received = 0;
};

// A small send that already completed for its rank; MPI still holds its request.
struct EagerSend {
  MPI_Request req = MPI_REQUEST_NULL;
  Rank dst = 0;
  std::int32_t tag = 0;
  std::uint64_t seq = 0;
  std::int64_t action = 0;
};

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

class Simulation;

class RankRunner {
 public:
  RankRunner(Simulation& sim, Rank rank, double speed, std::unique_ptr<models::ActionStream> stream,
             std::unique_ptr<models::RankPerturber> perturber, Recording& rec);

  // One communicator this rank is a member of (MPI_COMM_WORLD first, then by id).
  struct RankComm {
    std::uint32_t id = trace::kCommWorld;  // index into the workload's Definitions::comms
    Rank local = 0;                        // this rank's rank in it
    int size = 0;                          // its number of ranks
    MPI_Comm handle = MPI_COMM_NULL;
    std::uint64_t calls = 0;  // collective calls entered on it
  };

  void run();  // the actor's body
  Rank rank() const { return rank_; }
  bool finished() const { return finished_; }
  double finished_at() const { return finished_at_; }
  const std::vector<RankComm>& comms() const { return comms_; }
  std::uint64_t operations() const { return ops_; }
  std::uint64_t events() const { return events_; }
  const FinalizeCall& finalize_call() const { return finalize_call_; }
  bool received(Rank src, std::int32_t tag, std::uint64_t seq) const {
    const auto it = recv_.find(channel(src, tag));
    return it != recv_.end() && it->second.done(seq);
  }
  // What this rank waits for (for the deadlock report).
  std::string blocked() const;

 private:
  double now() const;  // the simulated clock (0 until the communicators' creation ended)
  // Records an event (RunOptions::record_events false: MPI_Init's and MPI_Finalize's only)
  // and counts it.
  void event(EventKind k, MpiOp op, double t, std::uint32_t ref, Rank peer = trace::kNoRank,
             std::int32_t tag = 0, std::uint64_t bytes = 0, std::uint64_t aux = 0) {
    ++events_;
    if (record_ || op == MpiOp::Init || op == MpiOp::Finalize)
      rec_.event(rank_, trace::make_event(t, k, op, ref, peer, tag, bytes, aux));
  }
  void enter(MpiOp op, double t);
  void leave(MpiOp op, double t);

  void execute(const Action& a);
  void compute(const Action& a);
  void send(const Action& a, bool synchronous);
  void recv(const Action& a);
  void isend(const Action& a);
  void irecv(const Action& a);
  void wait(const Action& a);
  void join(const Action& a);  // an in_waitall Wait: its request is one of the next Waitall's
  void waitall();
  void sendrecv(const Action& a);
  void collective(const Action& a, MpiOp op);
  void vcollective(const Action& a, MpiOp op);
  void begin_collective(MpiOp op, const RankComm& cm);
  void end_collective(MpiOp op, const RankComm& cm, Rank root_world, bool root, std::uint64_t sent, std::uint64_t got,
                      int rc);
  void create_communicators();
  RankComm& comm_of(const Action& a);
  void check_root(const RankComm& cm, Rank root) const;
  Rank world_rank(const RankComm& cm, Rank local) const;
  std::string comm_text(std::uint32_t id) const;  // " on communicator 'row 1'" ("" for MPI_COMM_WORLD)
  void finalize();

  void complete(Outstanding& o);  // blocks until o completed (eager sends: at once)
  bool test_now(Outstanding& o);  // completes o if it is complete (no simulated time)
  void received_into(Outstanding& o, const MPI_Status& st);
  void test_at_entry(std::span<Outstanding> reqs);  // the estimator's test (RunOptions::minprofile)
  void record_completion(const Outstanding& o, double t, MpiOp op);
  void maybe_reap();
  bool waitlab() const;
  bool is_eager(std::uint64_t bytes) const;
  std::uint64_t next_send_seq(Rank dst, std::int32_t tag);
  std::uint64_t post_recv(Rank src, std::int32_t tag);
  void received_now(Rank src, std::int32_t tag, std::uint64_t seq);
  friend class Simulation;

  // Checks and errors, naming rank and action.
  std::string where() const;
  [[noreturn]] void bad(const std::string& what) const;  // throws InputError
  void check(int rc, const char* call) const;
  void check_peer(Rank p, const char* what) const;
  void check_receiver(Rank dst) const;
  void check_collective(const RankComm& c) const;
  int count(std::uint64_t bytes) const;

  Simulation& sim_;
  Rank rank_;
  double speed_;
  std::unique_ptr<models::ActionStream> stream_;
  std::unique_ptr<models::RankPerturber> perturber_;
  Recording& rec_;
  bool record_;  // every event (RunOptions::record_events), else MPI_Init's and MPI_Finalize's only
  MPI_Comm world_ = MPI_COMM_NULL;
  const char* stack_top_ = nullptr;  // near the top of this rank's actor stack (for ASan)

  std::int64_t action_ = -1;  // index of the action being executed
  Action current_;
  std::uint64_t ops_ = 0;
  std::uint64_t events_ = 0;  // recorded or not
  std::uint64_t next_request_id_ = 0;
  std::vector<Outstanding> outstanding_;
  std::vector<std::int32_t> joined_;  // slots of the in_waitall Waits before the coming Waitall
  std::vector<EagerSend> eager_;
  std::size_t calls_since_reap_ = 0;
  std::unordered_map<std::uint64_t, std::uint64_t> send_seq_;
  std::unordered_map<std::uint64_t, RecvChannel> recv_;
  std::vector<RankComm> comms_;  // sorted by id; comms_[0] is MPI_COMM_WORLD
  bool finished_ = false;
  double finished_at_ = 0;
  FinalizeCall finalize_call_;

  // The online estimator: what a PMPI wrapper sees of the call in progress.
  minprofile::RankProfile* profile_ = nullptr;  // null unless RunOptions::minprofile
  minprofile::CallFacts facts_;
  trace::CallPathId path_ = trace::kNoCallPath;  // the user call path around the current point
  std::vector<trace::CallPathId> path_stack_;
  double begin_ = 0;

  // What blocks this rank right now, for the deadlock report.
  enum class Block { None, Call, Request, Drain };
  Block block_ = Block::None;
  Outstanding block_request_;
  EagerSend block_eager_;
};

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

  RunResult run();

  const RunOptions& options() const { return options_; }
  int ranks() const { return static_cast<int>(runners_.size()); }
  const trace::Definitions& defs() const { return result_.trace.defs; }
  std::uint32_t region(MpiOp op) {
    auto& id = mpi_region_[static_cast<std::size_t>(op)];
    if (id == kUnset) id = result_.trace.defs.mpi_region(op);
    return id;
  }
  std::size_t user_regions() const { return user_regions_; }
  trace::CallPaths& paths() { return paths_; }
  bool received(Rank dst, Rank src, std::int32_t tag, std::uint64_t seq) const {
    return runners_[static_cast<std::size_t>(dst)]->received(src, tag, seq);
  }
  void forget_channel_if_idle(Rank src, Rank dst, std::int32_t tag);
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

  const RankRunner& runner(Rank r) const { return *runners_[static_cast<std::size_t>(r)]; }
  // Per communicator: the member that finished having entered the fewest collective calls on
  // it (null: none finished) and that number: a call on it beyond that can never complete.
  struct Fewest {
    const RankRunner* rank = nullptr;
    std::uint64_t calls = 0;
  };
  const Fewest& fewest_collectives(std::uint32_t comm) const { return fewest_[comm]; }
  void rank_finished(const RankRunner& r) {
    ++finished_;
    for (const auto& c : r.comms()) {
      Fewest& f = fewest_[c.id];
      if (f.rank == nullptr || c.calls < f.calls) f = Fewest{&r, c.calls};
    }
  }
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
  void set_up_communicators(const sg4::Engine& engine);
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
  std::array<std::uint32_t, static_cast<std::size_t>(MpiOp::Count_)> mpi_region_{};
  std::size_t user_regions_ = 0;
  Scratch send_scratch_;
  Scratch recv_scratch_;
  trace::CallPaths paths_;                        // the online estimator's call paths
  std::vector<minprofile::RankProfile> profiles_;  // per rank, with RunOptions::minprofile
  int finished_ = 0;
  std::vector<Fewest> fewest_;  // per communicator
  bool creates_communicators_ = false;
  int created_ = 0;  // ranks done creating their communicators
  sg4::BarrierPtr created_barrier_;
  struct SavedLink {
    sg4::Link* link;
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

  friend class RankRunner;
};

// ---------------------------------------------------------------------------------------
// RankRunner

RankRunner::RankRunner(Simulation& sim, Rank rank, double speed, std::unique_ptr<models::ActionStream> stream,
                       std::unique_ptr<models::RankPerturber> perturber, Recording& rec)
    : sim_(sim),
      rank_(rank),
      speed_(speed),
      stream_(std::move(stream)),
      perturber_(std::move(perturber)),
      rec_(rec),
      record_(sim.options().record_events || sim.options().minprofile) {
}  // the estimator flags recorded events

// The clock, with the few 1e-299 s that creating the communicators took counted as 0: the
// timestamps are those of a creation that costs nothing (a duration d started then ends at
// exactly d, the rounding of origin + d).
double RankRunner::now() const {
  const double t = sg4::Engine::get_clock();
  return t > sim_.origin() ? t : 0.0;
}

bool RankRunner::waitlab() const {
  return sim_.options().semantics == Semantics::Waitlab;
}
bool RankRunner::is_eager(std::uint64_t bytes) const {
  return waitlab() && static_cast<double>(bytes) < sim_.options().eager_threshold;
}

void RankRunner::enter(MpiOp op, double t) {
  event(EventKind::Enter, op, t, sim_.region(op));
  if (profile_ != nullptr) facts_.begin(op, t);
}
void RankRunner::leave(MpiOp op, double t) {
  event(EventKind::Leave, op, t, sim_.region(op));
  if (profile_ != nullptr) profile_->add(facts_.finish(sim_.paths().child(path_, sim_.region(op)), t));
}

std::string RankRunner::where() const {
  std::string s = "rank " + std::to_string(rank_);
  if (action_ >= 0)
    s += ", action " + std::to_string(action_) + " (" + std::string(models::action_name(current_.kind)) + ")";
  return s;
}

void RankRunner::bad(const std::string& what) const {
  tell_asan_the_stack(stack_top_);
  throw InputError(where() + ": " + what);
}

void RankRunner::check(int rc, const char* call) const {
  if (rc == MPI_SUCCESS) return;
  if (rc == MPI_ERR_TRUNCATE || rc == MPI_ERR_IN_STATUS)
    bad(std::string(call) + ": the message is larger than the receive posted for it (MPI_ERR_TRUNCATE)");
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(rc, text, &len);
  bad(std::string(call) + " failed: " + std::string(text, static_cast<std::size_t>(std::max(len, 0))));
}

void RankRunner::check_peer(Rank p, const char* what) const {
  if (p < 0 || p >= sim_.ranks())
    bad(std::string(what) + " " + std::to_string(p) + " is not a rank (the run has " +
        std::to_string(sim_.ranks()) + " ranks)");
}

// SMPI aborts ("Actor pid=N is gone??") when a message is posted to a rank whose actor has
// ended. A finished rank has completed every receive it will ever post, so such a message can
// never be received: an error in the input, said before SMPI is asked. Exact: a rank is
// marked finished in the same simulation step in which its actor ends.
void RankRunner::check_receiver(Rank dst) const {
  if (dst == rank_) return;
  const RankRunner& d = sim_.runner(dst);
  if (!d.finished()) return;
  std::ostringstream t;
  t.precision(9);
  t << d.finished_at();
  bad("destination rank " + std::to_string(dst) + " has already finished (at t=" + t.str() +
      " s, after its last action): the message can never be received");
}

// Likewise every member takes part in every collective call on a communicator: once a member
// has finished having entered k of them, the (k+1)-th can never complete.
void RankRunner::check_collective(const RankComm& c) const {
  const Simulation::Fewest& f = sim_.fewest_collectives(c.id);
  if (f.rank == nullptr || f.calls > c.calls) return;
  std::ostringstream t;
  t.precision(9);
  t << f.rank->finished_at();
  const std::string on = comm_text(c.id);
  bad("rank " + std::to_string(f.rank->rank_) + " has already finished (at t=" + t.str() + " s) after " +
      std::to_string(f.calls) + " collective call(s)" + on + ": this one, rank " + std::to_string(rank_) +
      "'s collective call " + std::to_string(c.calls + 1) + (on.empty() ? "" : " there") +
      ", can never complete");
}

std::string RankRunner::comm_text(std::uint32_t id) const {
  if (id == trace::kCommWorld || id >= sim_.defs().comms.size()) return "";
  return " on communicator '" + sim_.defs().comms[id].name + "'";
}

// A collective's root, a rank of its communicator.
void RankRunner::check_root(const RankComm& cm, Rank root) const {
  if (cm.id == trace::kCommWorld) return check_peer(root, "root");
  if (root < 0 || root >= cm.size)
    bad("root " + std::to_string(root) + " is not a rank of communicator '" + sim_.defs().comms[cm.id].name +
        "' (it has " + std::to_string(cm.size) + ")");
}

// The world rank of rank `local` of the communicator: the trace names roots by their world
// rank (the event model's convention).
Rank RankRunner::world_rank(const RankComm& cm, Rank local) const {
  return cm.id == trace::kCommWorld ? local : sim_.defs().comms[cm.id].members[static_cast<std::size_t>(local)];
}

// The communicator of a collective action, of which this rank must be a member.
RankRunner::RankComm& RankRunner::comm_of(const Action& a) {
  const auto it = std::lower_bound(comms_.begin(), comms_.end(), a.comm,
                                   [](const RankComm& c, std::uint32_t id) { return c.id < id; });
  if (it != comms_.end() && it->id == a.comm) return *it;
  const auto& comms = sim_.defs().comms;
  if (a.comm >= comms.size())
    bad("communicator " + std::to_string(a.comm) + " is not defined (the workload has " +
        std::to_string(comms.size()) + ")");
  bad("rank " + std::to_string(rank_) + " is not a member of communicator '" + comms[a.comm].name + "' (" +
      std::to_string(a.comm) + ")");
}

// Every sub-communicator this rank is a member of, in the order of their ids on every rank
// (MPI_Comm_create_group: only the members take part; SMPI's constructor agrees on the
// communicator's id with a broadcast over it, which the ideal network makes free).
void RankRunner::create_communicators() {
  block_ = Block::Call;
  MPI_Group world_group = MPI_GROUP_NULL;
  check(MPI_Comm_group(world_, &world_group), "MPI_Comm_group");
  for (RankComm& c : comms_) {
    if (c.id == trace::kCommWorld) continue;
    const auto& members = sim_.defs().comms[c.id].members;
    MPI_Group group = MPI_GROUP_NULL;
    check(MPI_Group_incl(world_group, c.size, members.data(), &group), "MPI_Group_incl");
    check(MPI_Comm_create_group(world_, group, 0, &c.handle), "MPI_Comm_create_group");
    check(MPI_Group_free(&group), "MPI_Group_free");
  }
  block_ = Block::None;
  sim_.communicators_created();
}

int RankRunner::count(std::uint64_t bytes) const {
  if (bytes > kMaxCount) bad("message of " + bytes_text(bytes) + " is larger than MPI's int count allows");
  return static_cast<int>(bytes);
}

std::uint64_t RankRunner::next_send_seq(Rank dst, std::int32_t tag) {
  if (!waitlab()) return 0;
  return send_seq_[channel(dst, tag)]++;
}

std::uint64_t RankRunner::post_recv(Rank src, std::int32_t tag) {
  if (!waitlab()) return 0;
  return recv_[channel(src, tag)].posted++;
}

void RankRunner::received_now(Rank src, std::int32_t tag, std::uint64_t seq) {
  if (!waitlab()) return;
  recv_[channel(src, tag)].complete(seq);
  sim_.forget_channel_if_idle(src, rank_, tag);
}

// Reaps eager sends whose receiver has completed the matching receive: their communication
// is done, so MPI_Wait returns at once and frees the request and SimGrid's activity. The
// scan runs at most every eager_.size()/4 calls, so its cost per call stays constant.
void RankRunner::maybe_reap() {
  if (eager_.empty() || ++calls_since_reap_ * 4 < eager_.size()) return;
  calls_since_reap_ = 0;
  auto keep = eager_.begin();
  std::vector<EagerSend> reaped;
  for (auto& e : eager_) {
    if (sim_.received(e.dst, rank_, e.tag, e.seq)) {
      check(MPI_Wait(&e.req, MPI_STATUS_IGNORE), "MPI_Wait (eager send)");
      reaped.push_back(e);
    } else {
      *keep++ = e;
    }
  }
  eager_.erase(keep, eager_.end());
  for (const auto& e : reaped) sim_.forget_channel_if_idle(rank_, e.dst, e.tag);
}

void RankRunner::run() {
  stack_top_ = static_cast<const char*>(__builtin_frame_address(0));
  const double t0 = now();
  begin_ = t0;
  enter(MpiOp::Init, t0);
  block_ = Block::Call;
  check(MPI_Init(nullptr, nullptr), "MPI_Init");
  block_ = Block::None;
  leave(MpiOp::Init, now());
  world_ = MPI_COMM_WORLD;
  comms_.front().handle = world_;
  if (sim_.creates_communicators()) create_communicators();

  Action a;
  while (tell_asan_the_stack(stack_top_), stream_->next(a)) {
    ++action_;
    current_ = a;
    execute(a);
  }
  if (!joined_.empty()) {
    action_ = -1;
    bad("the action stream ended after a Wait marked in_waitall: a Waitall must follow it");
  }
  if (!outstanding_.empty()) {
    action_ = -1;
    std::string slots;
    for (const auto& o : outstanding_) slots += (slots.empty() ? "" : ", ") + std::to_string(o.slot);
    bad("the action stream ended with " + std::to_string(outstanding_.size()) +
        " request(s) never completed (slots " + slots + "); end with MPI_Wait or MPI_Waitall");
  }
  finalize();
  finished_ = true;
  finished_at_ = now();
}

void RankRunner::execute(const Action& a) {
  if (a.kind == ActionKind::Wait && a.in_waitall) return join(a);
  if (!joined_.empty() && a.kind != ActionKind::Waitall)
    bad("a Wait marked in_waitall is followed by " + std::string(models::action_name(a.kind)) +
        ", not by the Waitall it belongs to");
  switch (a.kind) {
    case ActionKind::Enter:
    case ActionKind::Leave:
      if (a.region >= sim_.user_regions() || sim_.defs().regions[a.region].op != MpiOp::None)
        bad("region id " + std::to_string(a.region) + " is not a user region of the workload");
      event(a.kind == ActionKind::Enter ? EventKind::Enter : EventKind::Leave, MpiOp::None, now(), a.region);
      if (profile_ != nullptr) {
        if (a.kind == ActionKind::Enter) {
          path_stack_.push_back(path_);
          path_ = sim_.paths().child(path_, a.region);
        } else if (!path_stack_.empty()) {
          path_ = path_stack_.back();
          path_stack_.pop_back();
        }
      }
      return;
    case ActionKind::Compute:
      compute(a);
      return;
    default:
      break;
  }
  ++ops_;
  maybe_reap();
  switch (a.kind) {
    case ActionKind::Send:
      send(a, false);
      break;
    case ActionKind::Ssend:
      send(a, true);
      break;
    case ActionKind::Recv:
      recv(a);
      break;
    case ActionKind::Isend:
      isend(a);
      break;
    case ActionKind::Irecv:
      irecv(a);
      break;
    case ActionKind::Wait:
      wait(a);
      break;
    case ActionKind::Waitall:
      waitall();
      break;
    case ActionKind::Sendrecv:
      sendrecv(a);
      break;
    case ActionKind::Barrier:
      collective(a, MpiOp::Barrier);
      break;
    case ActionKind::Bcast:
      collective(a, MpiOp::Bcast);
      break;
    case ActionKind::Reduce:
      collective(a, MpiOp::Reduce);
      break;
    case ActionKind::Allreduce:
      collective(a, MpiOp::Allreduce);
      break;
    case ActionKind::Gather:
      collective(a, MpiOp::Gather);
      break;
    case ActionKind::Scatter:
      collective(a, MpiOp::Scatter);
      break;
    case ActionKind::Allgather:
      collective(a, MpiOp::Allgather);
      break;
    case ActionKind::Alltoall:
      collective(a, MpiOp::Alltoall);
      break;
    case ActionKind::Gatherv:
      vcollective(a, MpiOp::Gatherv);
      break;
    case ActionKind::Scatterv:
      vcollective(a, MpiOp::Scatterv);
      break;
    case ActionKind::Allgatherv:
      vcollective(a, MpiOp::Allgatherv);
      break;
    case ActionKind::Alltoallv:
      vcollective(a, MpiOp::Alltoallv);
      break;
    case ActionKind::ReduceScatter:
      vcollective(a, MpiOp::ReduceScatter);
      break;
    default:
      bad("unknown action kind " + std::to_string(static_cast<int>(a.kind)));
  }
}

void RankRunner::compute(const Action& a) {
  if (!std::isfinite(a.amount) || a.amount < 0)
    bad("compute amount must be a finite, non-negative number, got " + std::to_string(a.amount));
  if (a.region >= sim_.user_regions())
    bad("compute region id " + std::to_string(a.region) + " is not a user region");
  const double nominal = a.flops ? a.amount / speed_ : a.amount;
  models::ComputeInterval ci;
  ci.rank = rank_;
  ci.iteration = a.iteration;
  ci.region = a.region;
  ci.start = now();
  ci.nominal = nominal;
  tell_asan_the_stack(stack_top_);  // the perturbation models may reject their input
  const models::Perturbed p = perturber_->apply(ci);
  if (!std::isfinite(p.duration) || p.duration < 0)
    bad("the perturbations made a compute interval of " + std::to_string(p.duration) + " s");
  // A sleep costs SimGrid one simcall where an execution costs five, and lasts exactly
  // `duration`. Nothing is lost: ranks never share a core (one rank per core or per XML
  // host), so an execution would run at full speed all the same. But under SMPI's semantics
  // flops (a replayed TI trace's) are executed, as SMPI's replay executes them: an execution
  // ends at the same instant up to the last bit, yet SimGrid orders the events of an instant
  // by their exact dates, and a sleep's date is rounded otherwise (measured on a Sweep3D-like
  // trace at 256 ranks: 1.3e-4 late with sleeps, to the last digit with executions).
  if (p.duration > 0 && a.flops && !waitlab() && p.duration == nominal &&
      sg4::this_actor::get_host()->get_speed() == speed_) {
    sg4::this_actor::execute(a.amount);
  } else if (p.duration > 0) {
    sg4::this_actor::sleep_for(p.duration);
  } else if (a.flops && a.amount == 0) {
    // An execution of no flops, as SMPI's smpi_execute_flops(0) (a TI `compute 0`): it ends at
    // this instant but after the calls the other ranks make in it, which can change the order
    // in which messages meet (measured on a Sweep3D-like trace: without it 2.7e-5 late).
    sg4::this_actor::execute(0);
  }
  trace::ComputeTruth t;
  t.start = ci.start;
  t.end = now();
  t.nominal = nominal;
  t.injected = p.injected;
  t.region = a.region;
  t.iteration = a.iteration;
  rec_.truth(rank_, t);
}

void RankRunner::send(const Action& a, bool synchronous) {
  check_peer(a.peer, "destination");
  if (a.tag < 0) bad("tag must not be negative, got " + std::to_string(a.tag));
  check_receiver(a.peer);
  const MpiOp op = synchronous ? MpiOp::Ssend : MpiOp::Send;
  const int n = count(a.bytes);
  const double t0 = now();
  enter(op, t0);
  event(EventKind::Send, op, t0, trace::kCommWorld, a.peer, a.tag, a.bytes);
  if (profile_ != nullptr) facts_.message(false, a.peer, a.bytes);
  const std::uint64_t seq = next_send_seq(a.peer, a.tag);
  void* buf = sim_.send_buffer(a.bytes);
  if (!synchronous && is_eager(a.bytes)) {
    EagerSend e{MPI_REQUEST_NULL, a.peer, a.tag, seq, action_};
    check(MPI_Isend(buf, n, MPI_BYTE, a.peer, a.tag, world_, &e.req), "MPI_Isend");
    eager_.push_back(e);
  } else {
    block_ = Block::Call;
    check(synchronous ? MPI_Ssend(buf, n, MPI_BYTE, a.peer, a.tag, world_)
                      : MPI_Send(buf, n, MPI_BYTE, a.peer, a.tag, world_),
          synchronous ? "MPI_Ssend" : "MPI_Send");
    block_ = Block::None;
  }
  leave(op, now());
}

void RankRunner::recv(const Action& a) {
  check_peer(a.peer, "source");
  if (a.tag < 0) bad("tag must not be negative, got " + std::to_string(a.tag));
  const int n = count(a.bytes);
  enter(MpiOp::Recv, now());
  const std::uint64_t seq = post_recv(a.peer, a.tag);
  MPI_Status st;
  block_ = Block::Call;
  check(MPI_Recv(sim_.recv_buffer(a.bytes), n, MPI_BYTE, a.peer, a.tag, world_, &st), "MPI_Recv");
  block_ = Block::None;
  received_now(a.peer, a.tag, seq);
  int got = 0;
  MPI_Get_count(&st, MPI_BYTE, &got);
  const double t = now();
  event(EventKind::Recv, MpiOp::Recv, t, trace::kCommWorld, a.peer, a.tag, static_cast<std::uint64_t>(got));
  if (profile_ != nullptr) facts_.message(true, a.peer, static_cast<std::uint64_t>(got));
  leave(MpiOp::Recv, t);
}

void RankRunner::isend(const Action& a) {
  check_peer(a.peer, "destination");
  if (a.tag < 0) bad("tag must not be negative, got " + std::to_string(a.tag));
  check_receiver(a.peer);
  for (const auto& o : outstanding_)
    if (o.slot == a.request) bad("request slot " + std::to_string(a.request) + " is still in use");
  const int n = count(a.bytes);
  const double t0 = now();
  enter(MpiOp::Isend, t0);
  Outstanding o;
  o.slot = a.request;
  o.id = next_request_id_++;
  o.send = true;
  o.eager = is_eager(a.bytes);
  o.peer = a.peer;
  o.tag = a.tag;
  o.bytes = a.bytes;
  o.action = action_;
  o.seq = next_send_seq(a.peer, a.tag);
  event(EventKind::IsendStart, MpiOp::Isend, t0, trace::kCommWorld, a.peer, a.tag, a.bytes, o.id);
  check(MPI_Isend(sim_.send_buffer(a.bytes), n, MPI_BYTE, a.peer, a.tag, world_, &o.req), "MPI_Isend");
  outstanding_.push_back(o);
  leave(MpiOp::Isend, now());
}

void RankRunner::irecv(const Action& a) {
  check_peer(a.peer, "source");
  if (a.tag < 0) bad("tag must not be negative, got " + std::to_string(a.tag));
  for (const auto& o : outstanding_)
    if (o.slot == a.request) bad("request slot " + std::to_string(a.request) + " is still in use");
  const int n = count(a.bytes);
  const double t0 = now();
  enter(MpiOp::Irecv, t0);
  Outstanding o;
  o.slot = a.request;
  o.id = next_request_id_++;
  o.peer = a.peer;
  o.tag = a.tag;
  o.bytes = a.bytes;
  o.action = action_;
  o.seq = post_recv(a.peer, a.tag);
  check(MPI_Irecv(sim_.recv_buffer(a.bytes), n, MPI_BYTE, a.peer, a.tag, world_, &o.req), "MPI_Irecv");
  event(EventKind::IrecvPost, MpiOp::Irecv, t0, trace::kCommWorld, a.peer, a.tag, a.bytes, o.id);
  outstanding_.push_back(o);
  leave(MpiOp::Irecv, now());
}

void RankRunner::received_into(Outstanding& o, const MPI_Status& st) {
  received_now(o.peer, o.tag, o.seq);
  int got = 0;
  MPI_Get_count(&st, MPI_BYTE, &got);
  o.source = o.peer;
  o.received = static_cast<std::uint64_t>(got);
}

bool RankRunner::test_now(Outstanding& o) {
  if (o.done || (o.send && o.eager)) return true;  // eager sends complete locally
  int flag = 0;
  MPI_Status st;
  check(MPI_Test(&o.req, &flag, &st), "MPI_Test");
  if (flag == 0) return false;
  o.done = true;
  if (!o.send) received_into(o, st);
  return true;
}

// What a profiler's MPI_Testall before MPI_Waitall reports: marks the Enter event (the last
// event) and the call's facts when every request is already complete. smpi/test is 0: the
// test costs no simulated time, so the run's timestamps do not change.
void RankRunner::test_at_entry(std::span<Outstanding> reqs) {
  if (profile_ == nullptr) return;
  bool all = true;
  for (auto& o : reqs) all = test_now(o) && all;
  if (all) rec_.last_event(rank_).flags |= trace::kTestedComplete;
  facts_.tested_complete(all);
}

void RankRunner::complete(Outstanding& o) {
  if (o.done) return;
  if (o.send && o.eager) {
    // Completes locally, as SMPI's detached send; the engine reaps the request later.
    eager_.push_back(EagerSend{o.req, o.peer, o.tag, o.seq, o.action});
    o.req = MPI_REQUEST_NULL;
    return;
  }
  MPI_Status st;
  block_ = Block::Request;
  block_request_ = o;
  check(MPI_Wait(&o.req, &st), "MPI_Wait");
  block_ = Block::None;
  if (!o.send) received_into(o, st);
}

void RankRunner::record_completion(const Outstanding& o, double t, MpiOp op) {
  if (o.send)
    event(EventKind::IsendComplete, op, t, trace::kCommWorld, o.peer, o.tag, o.bytes, o.id);
  else
    event(EventKind::IrecvComplete, op, t, trace::kCommWorld, o.source, o.tag, o.received, o.id);
  if (profile_ != nullptr) facts_.message(!o.send, o.send ? o.peer : o.source, o.send ? o.bytes : o.received);
}

void RankRunner::wait(const Action& a) {
  const auto it = std::find_if(outstanding_.begin(), outstanding_.end(),
                               [&](const Outstanding& o) { return o.slot == a.request; });
  if (it == outstanding_.end())
    bad("MPI_Wait on request slot " + std::to_string(a.request) + ", which has no outstanding request");
  enter(MpiOp::Wait, now());
  std::vector<Outstanding> one{*it};
  outstanding_.erase(it);
  test_at_entry(one);
  Outstanding& o = one.front();
  complete(o);
  const double t = now();
  record_completion(o, t, MpiOp::Wait);
  leave(MpiOp::Wait, t);
}

void RankRunner::join(const Action& a) {
  joined_.push_back(a.request);  // checked by the Waitall
}

void RankRunner::waitall() {
  // The requests it completes, in posting order: those the in_waitall Waits before it named,
  // moved to the back, or every outstanding request. They stay in outstanding_ until the call
  // returns: forget_channel_if_idle must still see the sends among them.
  auto first = outstanding_.begin();
  if (!joined_.empty()) {
    std::sort(joined_.begin(), joined_.end());
    const auto twice = std::adjacent_find(joined_.begin(), joined_.end());
    if (twice != joined_.end()) bad("MPI_Waitall names request slot " + std::to_string(*twice) + " twice");
    first = std::stable_partition(outstanding_.begin(), outstanding_.end(), [&](const Outstanding& o) {
      return !std::binary_search(joined_.begin(), joined_.end(), o.slot);
    });
    if (static_cast<std::size_t>(outstanding_.end() - first) != joined_.size()) {
      std::int32_t missing = joined_.front();
      for (auto slot : joined_)
        if (std::none_of(first, outstanding_.end(), [&](const Outstanding& o) { return o.slot == slot; })) {
          missing = slot;
          break;
        }
      bad("MPI_Waitall on request slot " + std::to_string(missing) + ", which has no outstanding request");
    }
    joined_.clear();
  }
  const std::span<Outstanding> reqs(first, outstanding_.end());
  enter(MpiOp::Waitall, now());
  test_at_entry(reqs);
  if (waitlab()) {
    // Sequential waits end at the same time as MPI_Waitall, without SMPI's loop of waitany
    // (quadratic in the number of requests).
    for (auto& o : reqs) complete(o);
  } else if (!reqs.empty()) {
    std::vector<MPI_Request> handles;
    std::vector<MPI_Status> st(reqs.size());
    for (const auto& o : reqs) handles.push_back(o.req);
    block_ = Block::Call;
    check(MPI_Waitall(static_cast<int>(handles.size()), handles.data(), st.data()), "MPI_Waitall");
    block_ = Block::None;
    for (std::size_t i = 0; i < reqs.size(); ++i) {
      auto& o = reqs[i];
      if (!o.send && !o.done) {
        int got = 0;
        MPI_Get_count(&st[i], MPI_BYTE, &got);
        o.source = o.peer;
        o.received = static_cast<std::uint64_t>(got);
      }
    }
  }
  const double t = now();
  for (const auto& o : reqs) record_completion(o, t, MpiOp::Waitall);
  outstanding_.erase(first, outstanding_.end());
  leave(MpiOp::Waitall, t);
}

void RankRunner::sendrecv(const Action& a) {
  check_peer(a.peer, "destination");
  check_peer(a.peer2, "source");
  if (a.tag < 0 || a.tag2 < 0) bad("tags must not be negative");
  check_receiver(a.peer);
  const int ns = count(a.bytes);
  const int nr = count(a.bytes2);
  const double t0 = now();
  enter(MpiOp::Sendrecv, t0);
  event(EventKind::Send, MpiOp::Sendrecv, t0, trace::kCommWorld, a.peer, a.tag, a.bytes);
  if (profile_ != nullptr) facts_.message(false, a.peer, a.bytes);
  // With itself on both sides SMPI copies locally, in no time and without messages.
  const bool local = a.peer == rank_ && a.peer2 == rank_;
  const std::uint64_t sseq = local ? 0 : next_send_seq(a.peer, a.tag);
  const std::uint64_t rseq = local ? 0 : post_recv(a.peer2, a.tag2);
  MPI_Status st;
  void* sbuf = sim_.send_buffer(a.bytes);
  void* rbuf = sim_.recv_buffer(a.bytes2);
  block_ = Block::Call;
  if (!local && is_eager(a.bytes)) {
    // MPI_Sendrecv posts the send then the receive; an eager send part completes locally.
    EagerSend e{MPI_REQUEST_NULL, a.peer, a.tag, sseq, action_};
    check(MPI_Isend(sbuf, ns, MPI_BYTE, a.peer, a.tag, world_, &e.req), "MPI_Isend");
    eager_.push_back(e);
    check(MPI_Recv(rbuf, nr, MPI_BYTE, a.peer2, a.tag2, world_, &st), "MPI_Recv");
  } else {
    check(MPI_Sendrecv(sbuf, ns, MPI_BYTE, a.peer, a.tag, rbuf, nr, MPI_BYTE, a.peer2, a.tag2, world_, &st),
          "MPI_Sendrecv");
  }
  block_ = Block::None;
  if (!local) received_now(a.peer2, a.tag2, rseq);
  int got = 0;
  MPI_Get_count(&st, MPI_BYTE, &got);
  const double t = now();
  event(EventKind::Recv, MpiOp::Sendrecv, t, trace::kCommWorld, a.peer2, a.tag2,
        static_cast<std::uint64_t>(got));
  if (profile_ != nullptr) facts_.message(true, a.peer2, static_cast<std::uint64_t>(got));
  leave(MpiOp::Sendrecv, t);
}

void RankRunner::collective(const Action& a, MpiOp op) {
  // On the action's communicator: ranks and root in its numbering.
  RankComm& cm = comm_of(a);
  const MPI_Comm comm = cm.handle;
  const bool rooted =
      op == MpiOp::Bcast || op == MpiOp::Reduce || op == MpiOp::Gather || op == MpiOp::Scatter;
  if (rooted) check_root(cm, a.root);
  const int n = op == MpiOp::Barrier ? 0 : count(a.bytes);
  const auto ranks = static_cast<std::uint64_t>(cm.size);
  const std::uint64_t b = op == MpiOp::Barrier ? 0 : a.bytes;
  // Bytes this rank sends and receives, by the buffer arguments of the call.
  std::uint64_t sent = 0;
  std::uint64_t got = 0;
  const bool root = rooted && a.root == cm.local;
  switch (op) {
    case MpiOp::Bcast:
      sent = root ? b : 0;
      got = root ? 0 : b;
      break;
    case MpiOp::Reduce:
      sent = b;
      got = root ? b : 0;
      break;
    case MpiOp::Allreduce:
      sent = b;
      got = b;
      break;
    case MpiOp::Gather:
      sent = b;
      got = root ? b * ranks : 0;
      break;
    case MpiOp::Scatter:
      sent = root ? b * ranks : 0;
      got = b;
      break;
    case MpiOp::Allgather:
      sent = b;
      got = b * ranks;
      break;
    case MpiOp::Alltoall:
      sent = b * ranks;
      got = b * ranks;
      break;
    default:
      break;
  }
  const std::uint64_t wide = b * ranks;
  if (b != 0 && wide / ranks != b) bad("collective buffer size overflows");
  check_collective(cm);
  ++cm.calls;
  if (wide > kMaxScratch)
    bad("a " + std::string(trace::mpi_name(op)) + " of " + bytes_text(b) + " per rank on " +
        std::to_string(ranks) + " ranks needs buffers larger than 16 GiB");
  begin_collective(op, cm);
  int rc = MPI_SUCCESS;
  switch (op) {
    case MpiOp::Barrier:
      rc = MPI_Barrier(comm);
      break;
    case MpiOp::Bcast:
      rc = MPI_Bcast(sim_.recv_buffer(b), n, MPI_BYTE, a.root, comm);
      break;
    case MpiOp::Reduce:
      rc = MPI_Reduce(sim_.send_buffer(b), sim_.recv_buffer(b), n, MPI_BYTE, MPI_BAND, a.root, comm);
      break;
    case MpiOp::Allreduce:
      rc = MPI_Allreduce(sim_.send_buffer(b), sim_.recv_buffer(b), n, MPI_BYTE, MPI_BAND, comm);
      break;
    case MpiOp::Gather:
      rc = MPI_Gather(sim_.send_buffer(b), n, MPI_BYTE, sim_.recv_buffer(wide), n, MPI_BYTE, a.root, comm);
      break;
    case MpiOp::Scatter:
      rc = MPI_Scatter(sim_.send_buffer(wide), n, MPI_BYTE, sim_.recv_buffer(b), n, MPI_BYTE, a.root, comm);
      break;
    case MpiOp::Allgather:
      rc = MPI_Allgather(sim_.send_buffer(b), n, MPI_BYTE, sim_.recv_buffer(wide), n, MPI_BYTE, comm);
      break;
    case MpiOp::Alltoall:
      rc = MPI_Alltoall(sim_.send_buffer(wide), n, MPI_BYTE, sim_.recv_buffer(wide), n, MPI_BYTE, comm);
      break;
    default:
      break;
  }
  end_collective(op, cm, rooted ? world_rank(cm, a.root) : trace::kNoRank, root, sent, got, rc);
}

// A collective call starts: its Enter and CollBegin.
void RankRunner::begin_collective(MpiOp op, const RankComm& cm) {
  const double t0 = now();
  enter(op, t0);
  event(EventKind::CollBegin, op, t0, cm.id);
  block_ = Block::Call;
}

// A collective call returned `rc`: its CollEnd (the root as a world rank or kNoRank; the bytes
// the call's buffers sent and received) and Leave.
void RankRunner::end_collective(MpiOp op, const RankComm& cm, Rank root_world, bool root, std::uint64_t sent,
                                std::uint64_t got, int rc) {
  block_ = Block::None;
  check(rc, std::string(trace::mpi_name(op)).c_str());
  const double t = now();
  event(EventKind::CollEnd, op, t, cm.id, root_world, 0, sent, got);
  if (profile_ != nullptr) facts_.collective(root, sent + got);
  leave(op, t);
}

// The v-collectives and MPI_Reduce_scatter, with the per-rank sizes of the action's Counts (in
// bytes, as MPI_BYTE counts). Every displacement is 0, as in SimGrid's own replay of TI traces:
// the data is never looked at, the timing depends on the sizes only, and the buffers need the
// largest block rather than the sum (a reduce-scatter's send buffer excepted: the algorithms
// split it by the counts). CollEnd records the bytes this rank's buffer arguments send and
// receive in total.
void RankRunner::vcollective(const Action& a, MpiOp op) {
  // On the action's communicator: counts, ranks and root in its numbering.
  RankComm& cm = comm_of(a);
  const MPI_Comm comm = cm.handle;
  const auto n = static_cast<std::size_t>(cm.size);
  const bool rooted = op == MpiOp::Gatherv || op == MpiOp::Scatterv;
  if (rooted) check_root(cm, a.root);
  const bool root = rooted && a.root == cm.local;
  const models::Counts* c = sim_.counts(a.counts);
  if (c == nullptr) bad("the " + std::string(trace::mpi_name(op)) + " names no per-rank sizes (counts id " +
                        std::to_string(a.counts) + ")");
  const bool need_send = op == MpiOp::Alltoallv || (op == MpiOp::Scatterv && root);
  const bool need_recv = op == MpiOp::Alltoallv || op == MpiOp::Allgatherv || op == MpiOp::ReduceScatter ||
                         (op == MpiOp::Gatherv && root);
  const auto ints = [&](const std::vector<std::uint64_t>& v, const char* what, std::vector<int>& out,
                        std::uint64_t& total, std::uint64_t& largest) {
    if (v.size() != n)
      bad(std::string(trace::mpi_name(op)) + " with " + std::to_string(v.size()) + " " + what + " sizes on " +
          std::to_string(n) + " ranks" + comm_text(cm.id) + " (one per rank expected)");
    out.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      out[i] = count(v[i]);
      total += v[i];
      largest = std::max(largest, v[i]);
    }
  };
  std::vector<int> scounts, rcounts;
  std::uint64_t stotal = 0, rtotal = 0, smax = 0, rmax = 0;
  if (need_send) ints(c->send, "send", scounts, stotal, smax);
  if (need_recv) ints(c->recv, "receive", rcounts, rtotal, rmax);
  if (op == MpiOp::ReduceScatter && !sim_.equal_reduce_scatter().empty() &&
      std::adjacent_find(c->recv.begin(), c->recv.end(), std::not_equal_to<>()) != c->recv.end())
    bad("MPI_Reduce_scatter with unequal receive counts, which SimGrid's reduce_scatter algorithm '" +
        sim_.equal_reduce_scatter() + "' cannot take (it aborts); choose another in run.collective_algorithms");
  const std::vector<int> zeros(n, 0);  // displacements
  const int mine = op == MpiOp::Alltoallv || op == MpiOp::ReduceScatter ? 0 : count(a.bytes);
  // Bytes this rank sends and receives, by the buffer arguments of the call; buffer sizes.
  std::uint64_t sent = 0, got = 0, sbuf = 0, rbuf = 0;
  switch (op) {
    case MpiOp::Gatherv:
      sent = a.bytes;
      got = root ? rtotal : 0;
      sbuf = a.bytes;
      rbuf = rmax;
      break;
    case MpiOp::Scatterv:
      sent = root ? stotal : 0;
      got = a.bytes;
      sbuf = smax;
      rbuf = a.bytes;
      break;
    case MpiOp::Allgatherv:
      sent = a.bytes;
      got = rtotal;
      sbuf = a.bytes;
      rbuf = rmax;
      break;
    case MpiOp::Alltoallv:
      sent = stotal;
      got = rtotal;
      sbuf = smax;
      rbuf = rmax;
      break;
    case MpiOp::ReduceScatter:
      if (rtotal > kMaxCount)
        bad("MPI_Reduce_scatter of " + bytes_text(rtotal) + " in all is larger than MPI's int count allows");
      sent = rtotal;
      got = c->recv[static_cast<std::size_t>(cm.local)];
      sbuf = rtotal;
      rbuf = rtotal;
      break;
    default:
      break;
  }
  check_collective(cm);
  ++cm.calls;
  if (std::max(sbuf, rbuf) > kMaxScratch)
    bad("a " + std::string(trace::mpi_name(op)) + " of " + bytes_text(std::max(sbuf, rbuf)) +
        " needs buffers larger than 16 GiB");
  void* const sb = sim_.send_buffer(sbuf);
  void* const rb = sim_.recv_buffer(rbuf);
  begin_collective(op, cm);
  int rc = MPI_SUCCESS;
  switch (op) {
    case MpiOp::Gatherv:
      rc = MPI_Gatherv(sb, mine, MPI_BYTE, rb, root ? rcounts.data() : nullptr, zeros.data(), MPI_BYTE, a.root,
                       comm);
      break;
    case MpiOp::Scatterv:
      rc = MPI_Scatterv(sb, root ? scounts.data() : nullptr, zeros.data(), MPI_BYTE, rb, mine, MPI_BYTE, a.root,
                        comm);
      break;
    case MpiOp::Allgatherv:
      rc = MPI_Allgatherv(sb, mine, MPI_BYTE, rb, rcounts.data(), zeros.data(), MPI_BYTE, comm);
      break;
    case MpiOp::Alltoallv:
      rc = MPI_Alltoallv(sb, scounts.data(), zeros.data(), MPI_BYTE, rb, rcounts.data(), zeros.data(), MPI_BYTE,
                         comm);
      break;
    case MpiOp::ReduceScatter:
      rc = MPI_Reduce_scatter(sb, rb, rcounts.data(), MPI_BYTE, MPI_BAND, comm);
      break;
    default:
      break;
  }
  end_collective(op, cm, rooted ? world_rank(cm, a.root) : trace::kNoRank, root, sent, got, rc);
}

// MPI_Finalize is recorded returning at once here (SMPI's has no finalization barrier);
// synchronise_finalize() then moves every rank's Leave to the moment the last rank entered
// it. Small sends still in flight are the MPI library's business: the actor lingers after
// recording its Leave until they are delivered, so that SimGrid does not cancel them.
void RankRunner::finalize() {
  action_ = -1;
  const double t0 = now();
  enter(MpiOp::Finalize, t0);
  block_ = Block::Drain;
  for (auto& e : eager_) {
    block_eager_ = e;
    check(MPI_Wait(&e.req, MPI_STATUS_IGNORE), "MPI_Wait (eager send)");
  }
  eager_.clear();
  block_ = Block::Call;
  const double t1 = now();
  check(MPI_Finalize(), "MPI_Finalize");
  block_ = Block::None;
  const double end = t0 + (now() - t1);
  leave(MpiOp::Finalize, end);
  finalize_call_ = FinalizeCall{t0, rec_.events(rank_) - 1, end};
  if (profile_ != nullptr) profile_->set_span(begin_, end);
}

std::string RankRunner::blocked() const {
  auto p2p = [](const char* dir, Rank peer, std::int32_t tag, std::uint64_t bytes) {
    return std::string(dir) + " rank " + std::to_string(peer) + " tag " + std::to_string(tag) + " (" +
           bytes_text(bytes) + ")";
  };
  const std::string me = "rank " + std::to_string(rank_);
  switch (block_) {
    case Block::None:
      return me + " is not in an MPI call";
    case Block::Drain:
      return me + " reached MPI_Finalize, but its eager send to rank " + std::to_string(block_eager_.dst) +
             " tag " + std::to_string(block_eager_.tag) + " (action " + std::to_string(block_eager_.action) +
             ") was never received";
    case Block::Request: {
      const auto& o = block_request_;
      const std::string call = current_.kind == ActionKind::Waitall ? "MPI_Waitall" : "MPI_Wait";
      return me + " blocked in " + call + " (action " + std::to_string(action_) + ") on the " +
             (o.send ? "MPI_Isend " + p2p("to", o.peer, o.tag, o.bytes)
                     : "MPI_Irecv " + p2p("from", o.peer, o.tag, o.bytes)) +
             " of action " + std::to_string(o.action);
    }
    case Block::Call:
      break;
  }
  if (action_ < 0) return me + " blocked in MPI_Init/MPI_Finalize";
  const Action& a = current_;
  const std::string act = " (action " + std::to_string(action_) + ")";
  switch (a.kind) {
    case ActionKind::Send:
      return me + " blocked in MPI_Send " + p2p("to", a.peer, a.tag, a.bytes) + act;
    case ActionKind::Ssend:
      return me + " blocked in MPI_Ssend " + p2p("to", a.peer, a.tag, a.bytes) + act;
    case ActionKind::Recv:
      return me + " blocked in MPI_Recv " + p2p("from", a.peer, a.tag, a.bytes) + act;
    case ActionKind::Sendrecv:
      return me + " blocked in MPI_Sendrecv " + p2p("to", a.peer, a.tag, a.bytes) + " and " +
             p2p("from", a.peer2, a.tag2, a.bytes2) + act;
    case ActionKind::Waitall:
      return me + " blocked in MPI_Waitall" + act;
    default:
      return me + " blocked in " + std::string(trace::mpi_name(models::action_op(a.kind))) +
             (a.kind == ActionKind::Bcast || a.kind == ActionKind::Reduce || a.kind == ActionKind::Gather ||
                      a.kind == ActionKind::Scatter
                  ? " with root " + std::to_string(a.root)
                  : std::string()) +
             comm_text(a.comm) + act;
  }
}

// ---------------------------------------------------------------------------------------
// Simulation

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

RunResult Simulation::run() {
  const int n = workload_.ranks();
  if (n < 1) throw InputError("the workload has no ranks");
  mpi_region_.fill(kUnset);
  equal_reduce_scatter_ = equal_counts_reduce_scatter(options_);

  // SimGrid's own log goes to our stderr (captured by the parent); keep it to problems.
  std::vector<std::string> args = {"waitlab", "--log=root.thresh:warning"};
  for (const auto& c : simgrid_config(options_)) args.push_back("--cfg=" + c);
  const bool heap_stacks =
      unguarded_stacks(n, options_.max_map_count > 0 ? options_.max_map_count : max_map_count());
  if (heap_stacks) {
    // SimGrid gives every actor a stack of its own mapping plus a guard page of another
    // (posix_memalign + mprotect: two mappings per rank); Linux allows 65,530 per process
    // by default, so 32,768 ranks abort in SimGrid's context factory. Without the guard page
    // SimGrid callocs the stack, and with the mmap threshold above the stack size malloc
    // serves it from the heap: one mapping for all stacks, no kernel setting to change. The
    // cost: a rank that overflows its 8 MiB stack is not stopped by a guard page.
    args.emplace_back("--cfg=contexts/guard-size:0");
    mallopt(M_MMAP_THRESHOLD, kHeapStackThreshold);
  }
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

  // The trace: workload definitions first, so that action region ids stay valid.
  trace::Trace& tr = result_.trace;
  tr.defs = workload_.definitions();
  user_regions_ = tr.defs.regions.size();
  trace::Communicator world{"MPI_COMM_WORLD", {}};
  for (Rank r = 0; r < n; ++r) world.members.push_back(r);
  if (tr.defs.comms.empty())
    tr.defs.comms.push_back(world);
  else
    tr.defs.comms[0] = world;
  region(MpiOp::Init);
  region(MpiOp::Finalize);
  tr.has_truth = true;  // the locations' records go to recording_

  runners_.reserve(static_cast<std::size_t>(n));
  if (options_.minprofile)
    profiles_.assign(static_cast<std::size_t>(n), minprofile::RankProfile(options_.minprofile_percentile));
  for (Rank r = 0; r < n; ++r) {
    runners_.push_back(
        std::make_unique<RankRunner>(*this, r, platform.rank_speed[static_cast<std::size_t>(r)],
                                     workload_.stream(r), perturbations_.for_rank(r), recording_));
    if (options_.minprofile) runners_.back()->profile_ = &profiles_[static_cast<std::size_t>(r)];
  }
  set_up_communicators(engine);
  // Where no payload needs copying (copies_payloads()), none is; while the communicators are
  // created SMPI must copy (the broadcast of each one's id), communicators_created() switches then.
  if (!copies_payloads(options_) && !creates_communicators_)
    smpi_comm_set_copy_data_callback(&no_copy);
  // Heap stacks: calloc clears what the heap's top held before it grew, and the heap grows by
  // M_TOP_PAD (128 KiB) more than asked: 128 KiB of every stack would be written (and kept
  // resident). Without the pad only fresh, untouched pages follow each stack.
  if (heap_stacks) mallopt(M_TOP_PAD, 0);
  for (Rank r = 0; r < n; ++r) {
    RankRunner* runner = runners_[static_cast<std::size_t>(r)].get();
    auto actor =
        sg4::Actor::init("rank-" + std::to_string(r), platform.rank_host[static_cast<std::size_t>(r)]);
    actor->set_property("instance_id", "waitlab");
    actor->set_property("rank", std::to_string(r));
    actor->start([this, runner] {
      try {
        runner->run();
        rank_finished(*runner);
      } catch (const InputError& e) {
        fail(e.what(), true);
      } catch (const std::bad_alloc&) {
        // More than the memory estimate counted (its collective bound is measured on SimGrid's
        // default algorithms; another may take more) met the host's limit.
        fail("out of memory in the simulation of rank " + std::to_string(runner->rank()) +
                 ": it needed more memory than the host allows (ulimit -v, the machine's memory), more than the "
                 "estimate before the run counted (a collective algorithm's buffers, or WAITLAB_MEMORY_CHECK); "
                 "simulate fewer ranks or smaller messages, or give it more memory",
             true);
      } catch (const std::exception& e) {
        fail(e.what(), false);
      }
    });
  }

  if (heap_stacks) mallopt(M_TOP_PAD, kDefaultTopPad);
  sg4::Engine::on_deadlock_cb([this] { on_deadlock(); });
  if (progress_fd_ >= 0 && (options_.progress || watch_.limit > 0)) {
    tty_ = options_.progress && isatty(progress_fd_) != 0;
    start_ = last_print_ = last_memory_check_ = std::chrono::steady_clock::now();
    sg4::Engine::on_time_advance_cb([this](double) { on_time_advance(); });
  }

  const AsanMainStack main_stack;
  {
    const SkipThreadCpuTime skip;  // SMPI's benchmark timer is unused here: no system calls for it
    engine.run();
  }
  main_stack.restore();

  if (options_.progress && progress_fd_ >= 0) progress(true);
  if (!error_.empty()) {
    if (input_error_) throw InputError(error_);
    throw std::runtime_error(error_);
  }
  if (!deadlock_.empty()) throw InputError(deadlock_);
  SMPI_finalize();
  std::vector<FinalizeCall> finalize_calls;
  for (const auto& r : runners_) finalize_calls.push_back(r->finalize_call());
  synchronise_finalize(recording_, finalize_calls, profiles_);

  result_.stats.simulated_time = sg4::Engine::get_clock();
  for (const auto& r : runners_) {
    result_.stats.mpi_operations += r->operations();
    result_.stats.events += r->events();
  }

  const auto& coll = effective_collective_set(options_);
  std::ostringstream thr;
  thr << options_.eager_threshold;
  tr.attributes = {
      {"name", options_.name},
      {"seed", std::to_string(options_.seed)},
      {"ranks", std::to_string(n)},
      {"iterations", std::to_string(workload_.iterations())},
      {"workload", workload_.name()},
      {"semantics", options_.semantics == Semantics::Waitlab ? "waitlab" : "smpi-default"},
      {"collectives", coll.name},
      {"collective_algorithms", algorithms_text(effective_collective_algorithms(options_))},
      {"eager_threshold", thr.str()},
      {"platform", platform.description},
      {"perturbations", perturbations_text()},
      {"simulator", "waitlab on SimGrid " + std::to_string(SIMGRID_VERSION_MAJOR) + "." +
                        std::to_string(SIMGRID_VERSION_MINOR)},
  };
  if (!options_.network.empty()) tr.attributes.push_back({"network", network_text(options_.network)});
  if (options_.minprofile) {
    tr.attributes.push_back({analysis::kTestedAttribute, "MPI_Wait/MPI_Waitall Enter events flag requests complete at entry"});
    std::vector<std::string> names(paths_.size());
    for (std::size_t i = 0; i < names.size(); ++i) names[i] = paths_.name(static_cast<trace::CallPathId>(i), tr.defs);
    result_.estimate = minprofile::estimate(profiles_, names);
  }
  return std::move(result_);
}

}  // namespace

// ---------------------------------------------------------------------------------------

void synchronise_finalize(Recording& rec, const std::vector<FinalizeCall>& calls,
                          std::vector<minprofile::RankProfile>& profiles) {
  double last_enter = -std::numeric_limits<double>::infinity();
  for (const auto& c : calls)
    if (c.leave != FinalizeCall::kNone) last_enter = std::max(last_enter, c.enter);
  for (std::size_t r = 0; r < calls.size(); ++r) {
    const FinalizeCall& c = calls[r];
    if (c.leave == FinalizeCall::kNone) continue;
    const double t = std::max(c.leave_time, last_enter);
    rec.set_time(static_cast<Rank>(r), c.leave, t);
    if (r < profiles.size()) profiles[r].set_span(profiles[r].begin(), t);
  }
}

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
