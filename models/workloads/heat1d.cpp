// heat1d — the 1D heat equation of paper 003: compute, then exchange one halo with each
// neighbour up to distance d, blocking (MPI_Send/MPI_Recv) or non-blocking (Irecv/Isend +
// Waitall). The blocking exchange goes shift by shift, s = +1, -1, +2, -2, ...: every rank
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

struct Params : BasicParams {
  int distance = 1;
  bool periodic = false;
  bool blocking = true;
  bool even_odd = false;  // blocking order; false = send_first
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

  int steps() const { return 3 + 1 + 4 * p_->distance + (p_->blocking ? 0 : 1) + 1; }

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
    const int d = p.distance;
    if (p.blocking) {
      const int shift = j / 2;  // 0: +1, 1: -1, 2: +2, 3: -2, ...
      const int dist = shift / 2 + 1;
      const int sign = shift % 2 == 0 ? 1 : -1;
      const bool sender_first =
          p.even_odd ? (r_ / dist) % 2 == 0 : !(p.periodic && r_ < std::gcd(p.ranks, dist));
      const bool is_send = (j % 2 == 0) == sender_first;
      const Rank peer = is_send ? neighbour(sign * dist) : neighbour(-sign * dist);
      if (peer == trace::kNoRank) return false;
      a = p2p(is_send ? ActionKind::Send : ActionKind::Recv, peer, shift_tag(dist, sign), p.bytes);
      return true;
    }
    if (j == 4 * d) {
      a = Action{};
      a.kind = ActionKind::Waitall;
      return true;
    }
    const bool is_send = j >= 2 * d;
    const int jj = is_send ? j - 2 * d : j;
    const int dist = jj / 2 + 1;
    // Receives: from the left (the message shifted by +dist), then from the right.
    // Sends: to the right (shift +dist), then to the left (shift -dist).
    const int sign = jj % 2 == 0 ? 1 : -1;
    const Rank peer = is_send ? neighbour(sign * dist) : neighbour(-sign * dist);
    if (peer == trace::kNoRank) return false;
    a = p2p(is_send ? ActionKind::Isend : ActionKind::Irecv, peer, shift_tag(dist, sign), p.bytes);
    return true;
  }

 private:
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
  if (mode != "blocking" && mode != "nonblocking")
    in.fail("mode", "must be blocking or nonblocking, got " + mode);
  p.blocking = mode == "blocking";
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
      "with blocking MPI_Send/MPI_Recv, or with MPI_Irecv/MPI_Isend + MPI_Waitall",
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
          choice_option("mode", {"blocking", "nonblocking"}, "blocking",
                        "blocking: MPI_Send/MPI_Recv; nonblocking: MPI_Irecv, MPI_Isend, MPI_Waitall"),
          choice_option(
              "order", {"send_first", "even_odd"}, "send_first",
              "blocking mode, per shift: send_first = send then receive (on a ring ranks below "
              "gcd(ranks, shift) receive first so that rendezvous cannot deadlock); even_odd = ranks with "
              "even floor(rank/shift) send first, the others receive first"),
      });
  return {std::move(s), make};
}

}  // namespace waitlab::models::synth
