// waitlab::analysis — the delay-cost replay on the engine's processes (internal to analysis/delay).
//
// Promise: Replay runs delay_costs on one shard, every process its own (issue 32; plan §3.3). A
// synchronisation point S lives twice: on the process owning its waiting rank r (WaiterPoint: the
// interval's start, r's profile, the classes of its wait) and on the process owning its delaying
// rank d (DelayerPoint: d's profile, the scale, the short- and long-term costs). What one side needs
// of the other travels in exchange rounds (intervals.cpp) and, for γ_long, in a backward replay in
// the serial key order (gamma.cpp). Every value is computed by the same expression, on the same
// operands, in the same order as the serial passes did, so the result is the serial one to the bit
// for any number of processes (rules D1–D5).
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <tuple>
#include <utility>
#include <vector>

#include "analysis/delay/delay.hpp"
#include "analysis/engine/exchange.hpp"
#include "analysis/engine/shard.hpp"
#include "analysis/engine/transport.hpp"
#include "analysis/trace/cells.hpp"

namespace waitlab::analysis::delay_replay {

inline constexpr std::uint32_t kNone = 0xffffffffu;
inline constexpr engine::Channel kDelayChannel = 0xFE20;       // the exchange rounds
inline constexpr engine::Channel kGammaChannel = 0xFE21;       // the backward replay

using Kinds = std::array<double, kDelayKindCount>;

struct PathValue {
  CallPathId path;
  double value;
};

bool is_nxn_sync(Pattern p);
bool charged(const WaitState& x);
bool is_p2p_pattern(Pattern p);
bool is_sync_wait(const WaitState& x);
bool is_interval_wait(Pattern p);

// The serial backward order of the points: (cause Enter, wait Enter, rank, call), latest first.
struct GammaKey {
  trace::Time cause_enter = 0, wait_enter = 0;
  Rank rank = 0;
  std::uint32_t call = 0;
  auto tie() const { return std::tie(cause_enter, wait_enter, rank, call); }
  bool later_than(const GammaKey& o) const { return tie() > o.tie(); }
};

// A point on its waiting rank's process.
struct WaiterPoint {
  std::uint32_t instance = 0;  // index into the shard's wait-state instances
  std::uint32_t r_prev = kNone, d_prev = kNone;  // the pair's calls at their previous synchronisation
  std::uint32_t nxn_instance = kNone;  // the previous synchronisation is this collective (d_prev asked of d)
  trace::Time t0 = 0;          // I_S starts here on r (−∞: at the start of the trace) …
  trace::Time t0_d = 0;        // … and on d: both min(Leave_r, Leave_d) after a message, each its
                               // own Leave − completion after a collective (Scalasca's rule)
  trace::Time cause_enter = 0, wait_enter = 0;
  std::uint32_t r_first = 0, r_count = 0;  // r's profile in Replay::rbuf_
  double direct = 0, indirect = 0;         // from the delaying side
  trace::Time lr_gap = 0;  // I_S starts at a Late Receiver whose sender left this much after the receiver
};

// A point on its delaying rank's process.
struct DelayerPoint {
  Rank r = 0;
  std::uint32_t call = 0, cause_call = 0;
  Rank d = 0;
  double w = 0;
  Pattern pattern = Pattern::LateSender;
  std::uint32_t d_prev = kNone;
  trace::Time t0_d = 0, wait_enter = 0, cause_enter = 0;  // I_S starts at t0_d on d
  std::uint32_t p_first = 0, p_count = 0;  // the waiting rank's profile in Replay::pbuf_
  // The scales: s of the wait itself (capped at a message, s·w ≤ 1; not at a collective), s_long
  // of the long-term cost it carries (never capped): Scalasca's scale_w and scale_c.
  double s = 0, s_long = 0, denom = 0, w_d = 0;
  std::uint32_t waits_first = 0, waits_end = 0;  // d's instances in I_S
  std::uint32_t d_first = 0, d_count = 0;        // s_long·Δ[c] in Replay::dbuf_
  Kinds gamma{};                                 // γ_long of S's wait, final (pass 4)
  GammaKey key() const { return {cause_enter, wait_enter, r, call}; }
  bool capped() const { return s_long > 0 && s != s_long; }
};

class Replay {
 public:
  Replay(const engine::Shard& shard, const trace::Matching& m, const WaitStateResult& w, engine::Transport& t);
  DelayResult run();

 private:
  // intervals.cpp
  void find_sync_points();
  void exchange_causes(engine::Exchange& ex);
  void mark_sync_collectives();
  void find_previous_syncs(engine::Exchange& ex);
  void waiting_side();
  void send_to_delayers(engine::Exchange& ex);
  std::pair<std::uint32_t, std::uint32_t> previous_sync(const WaitState& x, WaiterPoint& pt,
                                                        trace::Time& d_start) const;
  std::uint32_t collective_of(Rank r, std::uint32_t call) const;  // the owned call's instance, or kNone
  // Where an interval that starts at owned call `call` of r starts on r: its Leave, less — at a
  // collective other than a scan — r's completion time there (Scalasca's mCompletion).
  trace::Time sync_start(Rank r, std::uint32_t call) const;
  void find_completions();
  std::pair<std::uint32_t, std::uint32_t> profile(Rank r, std::uint32_t from, trace::Time t0, std::uint32_t to,
                                                  double* waiting);
  void touch(CallPathId c);
  void clear();
  trace::Time enter(Rank r, std::uint32_t call) const;
  trace::Time leave(Rank r, std::uint32_t call) const;
  // delay.cpp
  void delaying_side();
  WaiterPoint& point_of(Rank r, std::uint32_t call);
  void return_classes(engine::Exchange& ex);
  void long_term_costs(engine::Exchange& ex);
  void totals(DelayResult& res);
  void scalasca_collective_loss();
  // gamma.cpp
  void propagate_gamma(std::vector<std::pair<GammaKey, double>>& unattributed);

  const engine::Shard& shard_;
  const trace::Matching& m_;
  const WaitStateResult& w_;
  engine::Transport& transport_;

  // Per owned rank (from owned.first): its pairwise synchronisation points (peer, its call, the
  // peer's call, where an interval starting there starts on the peer: its sync_start), and the
  // synchronising N-to-N collectives it took part in (call, instance), both sorted.
  struct PeerCall {
    Rank peer;
    std::uint32_t call;
    std::uint32_t peer_call;
    trace::Time peer_start;
    trace::Time lr_gap = 0;  // a Late Receiver whose sender left last: by how much (Scalasca drops it)
    auto key() const { return std::tie(peer, call); }
  };
  std::vector<std::vector<PeerCall>> peers_;
  std::vector<std::vector<std::uint32_t>> member_of_;  // per owned rank, per call: its index in m_.members, or kNone
  std::vector<std::uint32_t> member_instance_;         // per member: its collective instance
  // Per collective instance: the earliest end among its synchronising members and the begin
  // that bounds a member's completion (Scalasca's ci.earliest_end and ci.root / ci.latest).
  std::vector<std::pair<trace::Time, trace::Time>> completion_refs_;
  // Per collective instance: whether every member synchronised with every other whether or not
  // one waited (a barrier, MPI_Init, MPI_Finalize, an N-to-N collective in which every member
  // began before the first ended: scout's cb_pre_sync_coll, cb_pre_init_finalize, cb_pre_coll_n2n).
  std::vector<std::uint8_t> always_sync_;
  std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> nxn_;
  std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> nxn_by_instance_;  // (instance, call)
  std::vector<std::vector<Rank>> comm_members_;  // per communicator, sorted
  std::vector<WaiterPoint> pts_;        // in instance order
  std::vector<DelayerPoint> dpts_;      // sorted by (d, cause_call, r, call)
  std::vector<PathValue> rbuf_, dbuf_, pbuf_;
  std::vector<Kinds> gamma_;            // per owned instance
  std::vector<double> propagated_;
  double sync_waiting_ = 0, unattributed_pass2_ = 0;
  std::vector<double> lr_at_stake_;        // per owned rank (waiting): Scalasca's Late Receiver defect, at stake
  std::vector<double> collective_lost_;    // per owned rank (delaying): its collective defect's loss
  trace::CellTable<std::pair<double, double>> costs_;
  std::vector<double> prof_;
  std::vector<std::uint8_t> mark_;
  std::vector<CallPathId> touched_;
};

}  // namespace waitlab::analysis::delay_replay
