// heat1d — the 1D heat equation of paper 003: compute, then exchange one halo with each
// neighbour up to distance d, blocking (MPI_Send/MPI_Recv), non-blocking (Irecv/Isend +
// Waitall) or in two non-blocking phases (right, then left), in both directions or to the
// right only. The blocking exchange goes shift by shift, s = +1, -1, +2, -2, ...: every rank
// sends to r+s and receives from r-s. Who sends first decides both timing and safety
// (docs/workloads.md): `send_first` (default) is the classic code — send, then receive —
// and matches the max-plus idle-wave oracle for d = 1 under eager sends; on a ring the
// ranks below gcd(ranks, |s|) receive first, which breaks the cycle of blocked sends under
// rendezvous semantics. `even_odd` lets ranks with even floor(r/|s|) send first and the
// others receive first: constant depth under rendezvous, but odd ranks forward a delay
// within the same iteration under eager sends.
#include <algorithm>
#include <memory>
#include <numeric>

#include "models/workloads/common.hpp"

namespace waitlab::models::synth {
namespace {

constexpr const char* kName = "heat1d";

enum class Mode { Blocking, Nonblocking, TwoPhase };

struct Params : BasicParams {
  int distance = 1;
  bool periodic = false;
  Mode mode = Mode::Blocking;
  bool even_odd = false;    // blocking order; false = send_first
  bool right_only = false;  // direction right: send to r+k, receive from r-k only
  trace::RegionId compute_region = 0;
  trace::RegionId exchange_region = 0;
  void name_regions(trace::Definitions& defs) {
    compute_region = defs.region("compute");
    exchange_region = defs.region("exchange");
  }
};

// A message shifted by +k carries tag 2(k-1), shifted by -k tag 2(k-1)+1: distinct per
// direction and distance, so FIFO matching never pairs a left halo with a right one.
std::int32_t shift_tag(int k, int sign) {
  return 2 * (k - 1) + (sign < 0 ? 1 : 0);
}

class Program {
 public:
  Program(std::shared_ptr<const Params> p, Rank r) : p_(std::move(p)), r_(r) {}

  // compute block (3) + enter exchange + the exchange + leave exchange
  int steps() const { return 3 + 1 + exchange_steps() + 1; }

  bool step(int k, Action& a) const {
    const Params& p = *p_;
    if (k < 4) {  // the compute block, then into the exchange
      a = k < 3 ? compute_block(k, p.compute_region, p.compute) : enter(p.exchange_region);
      return true;
    }
    if (k == steps() - 1) {
      a = leave(p.exchange_region);
      return true;
    }
    const int j = k - 4;
    switch (p.mode) {
      case Mode::Blocking: return blocking_step(j, a);
      case Mode::Nonblocking: return nonblocking_step(j, a);
      case Mode::TwoPhase: return phase_step(j / phase_steps(), j % phase_steps(), a);
    }
    return false;
  }

 private:
  int d() const { return p_->distance; }
  int directions() const { return p_->right_only ? 1 : 2; }
  // Steps of one phase of two_phase: d Irecv, d Isend, MPI_Waitall.
  int phase_steps() const { return 2 * d() + 1; }
  int exchange_steps() const {
    switch (p_->mode) {
      case Mode::Blocking: return 2 * directions() * d();          // per shift: send, receive
      case Mode::Nonblocking: return 2 * directions() * d() + 1;   // receives, sends, MPI_Waitall
      case Mode::TwoPhase: return directions() * phase_steps();
    }
    return 0;
  }

  // Shift by shift, s = +1, -1, +2, -2, ... (only +k with direction right): send to r+s and
  // receive from r-s, in the order that `order` says.
  bool blocking_step(int j, Action& a) const {
    const Params& p = *p_;
    const int shift = j / 2;  // both directions: 0: +1, 1: -1, 2: +2, 3: -2, ...; right: 0: +1, 1: +2, ...
    const int dist = p.right_only ? shift + 1 : shift / 2 + 1;
    const int sign = p.right_only || shift % 2 == 0 ? 1 : -1;
    const bool sender_first =
        p.even_odd ? (r_ / dist) % 2 == 0 : !(p.periodic && r_ < std::gcd(p.ranks, dist));
    const bool is_send = (j % 2 == 0) == sender_first;
    const Rank peer = is_send ? neighbour(sign * dist) : neighbour(-sign * dist);
    if (peer == trace::kNoRank) return false;
    a = p2p_action(is_send ? ActionKind::Send : ActionKind::Recv, peer, shift_tag(dist, sign), p.bytes);
    return true;
  }

  // Receives from r-k (and r+k), then sends to r+k (and r-k), k = 1..d, then MPI_Waitall.
  bool nonblocking_step(int j, Action& a) const {
    const Params& p = *p_;
    const int per_side = directions() * d();
    if (j == 2 * per_side) {
      a = Action{};
      a.kind = ActionKind::Waitall;
      return true;
    }
    const bool is_send = j >= per_side;
    const int jj = is_send ? j - per_side : j;
    const int dist = p.right_only ? jj + 1 : jj / 2 + 1;
    // Receives: from the left (the message shifted by +dist), then from the right.
    // Sends: to the right (shift +dist), then to the left (shift -dist).
    const int sign = p.right_only || jj % 2 == 0 ? 1 : -1;
    const Rank peer = is_send ? neighbour(sign * dist) : neighbour(-sign * dist);
    if (peer == trace::kNoRank) return false;
    a = p2p_action(is_send ? ActionKind::Isend : ActionKind::Irecv, peer, shift_tag(dist, sign), p.bytes);
    return true;
  }

  // Phase 0 moves halos to the right (receive from r-k, send to r+k), phase 1 to the left;
  // each phase: d Irecv, d Isend, MPI_Waitall.
  bool phase_step(int phase, int j, Action& a) const {
    const Params& p = *p_;
    if (j == 2 * d()) {
      a = Action{};
      a.kind = ActionKind::Waitall;
      return true;
    }
    const int sign = phase == 0 ? 1 : -1;
    const bool is_send = j >= d();
    const int dist = (is_send ? j - d() : j) + 1;
    const Rank peer = is_send ? neighbour(sign * dist) : neighbour(-sign * dist);
    if (peer == trace::kNoRank) return false;
    a = p2p_action(is_send ? ActionKind::Isend : ActionKind::Irecv, peer, shift_tag(dist, sign), p.bytes);
    return true;
  }

  // The rank at offset `off`, wrapped on a ring, or kNoRank past the ends of an open chain
  // (and for oneself: a 1-rank ring has no neighbour, as a real code copies locally).
  Rank neighbour(int off) const {
    const int n = p_->ranks;
    long long q = static_cast<long long>(r_) + off;
    if (p_->periodic) q = ((q % n) + n) % n;
    if (q < 0 || q >= n || q == r_) return trace::kNoRank;
    return static_cast<Rank>(q);
  }

  std::shared_ptr<const Params> p_;
  Rank r_;
};

std::unique_ptr<Workload> make(const Options& opts) {
  const Reader in(opts, kName);
  Params p;
  read_basic(in, p);
  const std::int64_t max_distance = p.ranks > 1 ? p.ranks - 1 : 1;
  p.distance = static_cast<int>(in.integer("distance", 1, std::min<std::int64_t>(max_distance, 1 << 20)));
  p.periodic = in.boolean("periodic");
  const auto& mode = in.choice("mode");
  if (mode != "blocking" && mode != "nonblocking" && mode != "two_phase")
    in.fail("mode", "must be blocking, nonblocking or two_phase, got " + mode);
  p.mode = mode == "blocking" ? Mode::Blocking : mode == "nonblocking" ? Mode::Nonblocking : Mode::TwoPhase;
  const auto& direction = in.choice("direction");
  if (direction != "both" && direction != "right") in.fail("direction", "must be both or right, got " + direction);
  p.right_only = direction == "right";
  const auto& order = in.choice("order");
  if (order != "send_first" && order != "even_odd")
    in.fail("order", "must be send_first or even_odd, got " + order);
  p.even_odd = order == "even_odd";
  return make_program_workload<Program>(kName, std::move(p));
}

}  // namespace

WorkloadEntry heat1d_entry() {
  using units::Quantity;
  Spec s = make_spec(
      SpecKind::Workload, kName,
      "1D heat equation (paper 003): per iteration, compute in region `compute`, then exchange one halo "
      "with each neighbour up to `distance` away in region `exchange`, shift by shift (+1, -1, +2, -2, ...) "
      "with blocking MPI_Send/MPI_Recv, with MPI_Irecv/MPI_Isend + MPI_Waitall, or in two such phases (right, then "
      "left); in both directions or to the right only",
      {
          ranks_option(true),
          iterations_option(),
          compute_option(),
          flops_option(),
          quantity_option("bytes", Quantity::Bytes, "8B",
                          "halo size sent to each neighbour (8B = one double, as in paper 003)"),
          quantity_option("distance", Quantity::Integer, "1",
                          "exchange with every rank up to this distance (1 = nearest neighbours)"),
          bool_option("periodic", "false", "ring instead of an open chain"),
          choice_option("mode", {"blocking", "nonblocking", "two_phase"}, "blocking",
                        "blocking: MPI_Send/MPI_Recv; nonblocking: MPI_Irecv, MPI_Isend, MPI_Waitall; two_phase: "
                        "per iteration two such exchanges, first to the right (receive from r-k, send to r+k), then "
                        "to the left, each completed by MPI_Waitall (the sigma = 2 case of the idle-wave model under "
                        "rendezvous)"),
          choice_option("direction", {"both", "right"}, "both",
                        "both: exchange with the neighbours on both sides; right: send only to r+k and receive only "
                        "from r-k (one-way, e.g. a pipeline; two_phase keeps its first phase)"),
          choice_option(
              "order", {"send_first", "even_odd"}, "send_first",
              "blocking mode, per shift: send_first = send then receive (on a ring ranks below "
              "gcd(ranks, shift) receive first so that rendezvous cannot deadlock); even_odd = ranks with "
              "even floor(rank/shift) send first, the others receive first"),
      });
  return {std::move(s), make};
}

}  // namespace waitlab::models::synth
