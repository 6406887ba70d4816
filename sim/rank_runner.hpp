// waitlab::sim (internal to sim/) — the rank runner: the SimGrid actor of one MPI rank, which
// plays the rank's action stream through SMPI's MPI API (MPI_Init, the actions, MPI_Finalize),
// records its events and compute intervals' ground truth into the run's Recording, and gives
// the online estimator what a PMPI wrapper would see (RunOptions::minprofile).
//
// Promise: the simulated clock alone makes the timestamps. Bad input (a bad action, a message
// to a rank that has finished, a collective call that can never complete) throws InputError
// naming the rank and the action; blocked() says what the rank waits for, for the deadlock
// report. The state the ranks share (definitions, buffers, the other ranks) is the
// Simulation's (sim/simulation_run.hpp), which owns the runners.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

// SimGrid's C headers need the declarations of s4u.hpp first.
// clang-format off
#include <simgrid/s4u.hpp>
#include <smpi/smpi.h>
// clang-format on

#include "analysis/minprofile/minprofile.hpp"
#include "models/perturbation.hpp"
#include "models/workload.hpp"
#include "sim/options.hpp"
#include "sim/recording.hpp"

namespace waitlab::sim::detail {

// A channel (peer, tag) of one rank, as one key.
inline std::uint64_t channel(trace::Rank peer, std::int32_t tag) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(peer)) << 32) |
         static_cast<std::uint32_t>(tag);
}

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
  trace::Rank peer = trace::kNoRank;
  std::int32_t tag = 0;
  std::uint64_t bytes = 0;
  std::uint64_t seq = 0;  // FIFO position on its channel
  std::int64_t action = 0;
  bool done = false;  // completed by the test at the entry of MPI_Wait/MPI_Waitall
  // Filled on completion:
  trace::Rank source = trace::kNoRank;
  std::uint64_t received = 0;
};

// A small send that already completed for its rank; MPI still holds its request.
struct EagerSend {
  MPI_Request req = MPI_REQUEST_NULL;
  trace::Rank dst = 0;
  std::int32_t tag = 0;
  std::uint64_t seq = 0;
  std::int64_t action = 0;
};

// MPI_Finalize synchronises, as Open MPI's and MPICH's do (and as Scalasca's clock-condition
// check and Wait at Finalize assume): every rank's Leave of its last MPI_Finalize moves to the
// last Enter of MPI_Finalize of any rank, at no cost, and so does the end of its minprofile
// span. The run's end (the latest Leave) does not move. SMPI's own MPI_Finalize returns at
// once; docs/engine.md.
// `calls[r]`: rank r's MPI_Finalize (its Enter time, the index of its Leave event among the
// rank's recorded events and the Leave's time).
struct FinalizeCall {
  static constexpr std::uint64_t kNone = ~std::uint64_t{0};
  double enter = 0;
  std::uint64_t leave = kNone;  // no MPI_Finalize left (the rank did not finish)
  double leave_time = 0;
};
void synchronise_finalize(Recording& rec, const std::vector<FinalizeCall>& calls,
                          std::vector<minprofile::RankProfile>& profiles);

class Simulation;

class RankRunner {
 public:
  RankRunner(Simulation& sim, trace::Rank rank, double speed, std::unique_ptr<models::ActionStream> stream,
             std::unique_ptr<models::RankPerturber> perturber, Recording& rec);

  // One communicator this rank is a member of (MPI_COMM_WORLD first, then by id).
  struct RankComm {
    std::uint32_t id = trace::kCommWorld;  // index into the workload's Definitions::comms
    trace::Rank local = 0;                 // this rank's rank in it
    int size = 0;                          // its number of ranks
    MPI_Comm handle = MPI_COMM_NULL;
    std::uint64_t calls = 0;  // collective calls entered on it
  };

  void run();  // the actor's body
  trace::Rank rank() const { return rank_; }
  bool finished() const { return finished_; }
  double finished_at() const { return finished_at_; }
  const std::vector<RankComm>& comms() const { return comms_; }
  std::uint64_t operations() const { return ops_; }
  std::uint64_t events() const { return events_; }
  const FinalizeCall& finalize_call() const { return finalize_call_; }
  bool received(trace::Rank src, std::int32_t tag, std::uint64_t seq) const {
    const auto it = recv_.find(channel(src, tag));
    return it != recv_.end() && it->second.done(seq);
  }
  // What this rank waits for (for the deadlock report).
  std::string blocked() const;

 private:
  double now() const;  // the simulated clock (0 until the communicators' creation ended)
  // Records an event (RunOptions::record_events false: MPI_Init's and MPI_Finalize's only)
  // and counts it.
  void event(trace::EventKind k, trace::MpiOp op, double t, std::uint32_t ref,
             trace::Rank peer = trace::kNoRank, std::int32_t tag = 0, std::uint64_t bytes = 0,
             std::uint64_t aux = 0) {
    ++events_;
    if (record_ || op == trace::MpiOp::Init || op == trace::MpiOp::Finalize)
      rec_.event(rank_, trace::make_event(t, k, op, ref, peer, tag, bytes, aux));
  }
  void enter(trace::MpiOp op, double t);
  void leave(trace::MpiOp op, double t);

  void execute(const models::Action& a);
  void compute(const models::Action& a);
  void send(const models::Action& a, bool synchronous);
  void recv(const models::Action& a);
  void isend(const models::Action& a);
  void irecv(const models::Action& a);
  void wait(const models::Action& a);
  void join(const models::Action& a);  // an in_waitall Wait: its request is one of the next Waitall's
  void waitall();
  void sendrecv(const models::Action& a);
  void collective(const models::Action& a, trace::MpiOp op);
  void vcollective(const models::Action& a, trace::MpiOp op);
  void begin_collective(trace::MpiOp op, const RankComm& cm);
  void end_collective(trace::MpiOp op, const RankComm& cm, trace::Rank root_world, bool root,
                      std::uint64_t sent, std::uint64_t got, int rc);
  void create_communicators();
  RankComm& comm_of(const models::Action& a);
  void check_root(const RankComm& cm, trace::Rank root) const;
  trace::Rank world_rank(const RankComm& cm, trace::Rank local) const;
  std::string comm_text(std::uint32_t id) const;  // " on communicator 'row 1'" ("" for MPI_COMM_WORLD)
  void finalize();

  void complete(Outstanding& o);  // blocks until o completed (eager sends: at once)
  bool test_now(Outstanding& o);  // completes o if it is complete (no simulated time)
  void received_into(Outstanding& o, const MPI_Status& st);
  void test_at_entry(std::span<Outstanding> reqs);  // the estimator's test (RunOptions::minprofile)
  void record_completion(const Outstanding& o, double t, trace::MpiOp op);
  void maybe_reap();
  bool waitlab() const;
  bool is_eager(std::uint64_t bytes) const;
  std::uint64_t next_send_seq(trace::Rank dst, std::int32_t tag);
  std::uint64_t post_recv(trace::Rank src, std::int32_t tag);
  void received_now(trace::Rank src, std::int32_t tag, std::uint64_t seq);
  friend class Simulation;

  // Checks and errors, naming rank and action.
  std::string where() const;
  [[noreturn]] void bad(const std::string& what) const;  // throws InputError
  void check(int rc, const char* call) const;
  void check_peer(trace::Rank p, const char* what) const;
  void check_receiver(trace::Rank dst) const;
  void check_collective(const RankComm& c) const;
  int count(std::uint64_t bytes) const;

  Simulation& sim_;
  trace::Rank rank_;
  double speed_;
  std::unique_ptr<models::ActionStream> stream_;
  std::unique_ptr<models::RankPerturber> perturber_;
  Recording& rec_;
  bool record_;  // every event (RunOptions::record_events), else MPI_Init's and MPI_Finalize's only
  MPI_Comm world_ = MPI_COMM_NULL;
  const char* stack_top_ = nullptr;  // near the top of this rank's actor stack (for ASan)

  std::int64_t action_ = -1;  // index of the action being executed
  models::Action current_;
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

}  // namespace waitlab::sim::detail
