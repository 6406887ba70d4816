// The rank runner: one rank's action stream played through SMPI's MPI API.
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
#include "sim/rank_runner.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <sstream>

#include "sim/simulation_run.hpp"
#include "util/error.hpp"

#if defined(__SANITIZE_ADDRESS__)
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

std::string bytes_text(std::uint64_t b) {
  return std::to_string(b) + " B";
}

// AddressSanitizer does not know SimGrid's actor stacks (Debian's SimGrid is not built
// with ASan's fiber annotations). When an exception unwinds on one (bad input is reported
// by exception), ASan refuses to clear the stale poison of the unwound frames, and the
// next landing pad trips over it: a false stack-use-after-scope. Telling ASan, right
// before anything may throw, that the current stack is this actor's stack makes it clear
// the poison as on a normal thread stack; AsanMainStack (sim/simulation.cpp) gives ASan the
// thread's own stack back when the simulation is over. No-ops without ASan.
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

}  // namespace

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

}  // namespace waitlab::sim::detail
