// A TI trace as a workload (replay_ti, replay_ti_file; models/replay.hpp): each rank's records
// become actions as SMPI's replayer runs them — requests found by (source, destination, tag),
// a waitall completing the outstanding requests no later wait record names (WaitLookahead),
// MPI_ANY_SOURCE receives given the sources of the sends left over for them, every collective
// on MPI_COMM_WORLD. The records come from a TiTrace in memory or a TiReader (TiSource). What
// the converters share is replay_common.hpp.
#include "models/replay.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>

#include "models/replay_common.hpp"
#include "util/error.hpp"

namespace waitlab::models {

using trace::TiOp;
using trace::TiRecord;
using detail::coll;
using detail::finish;
using detail::Notes;
using detail::RankBuilder;
using detail::ReplayWorkload;
using detail::RequestKey;
using detail::RequestKeyHash;
using detail::Slots;
using detail::to_tapes;

namespace {

// The look-ahead of a TI `waitall N`: which of a rank's requests a later record names.
// SMPI records for MPI_Waitall only the count the application passed (null requests
// included), not which requests; the `wait SRC DST TAG` records that follow name the requests
// they complete, which were therefore still pending at the waitall and are not its. Fed the
// rank's records in order, this numbers the postings (isend, Issend, irecv) from 0 and marks
// those a later record completes: a `wait` names the oldest pending posting with its key (a
// `wait` without a key, and a `waitAny`/`waitsome`, the oldest pending posting, as the replay
// then completes it). A posting still pending at a waitall that no record has named yet stays
// nameable until its key is posted again: then the waitall completed it (an application that
// re-posts a request of the same peer and tag has finished the old one). Bounded: two bits per
// posting; the working state is the pending postings, and once more than kMaxPending
// are pending, the oldest that crossed a waitall is given to that waitall (counted in
// `bounded`). Time: amortised O(1) per record.
class WaitLookahead {
 public:
  static constexpr std::size_t kMaxPending = std::size_t{1} << 16;

  void post(const RequestKey& k) {
    auto& q = by_key_[k];
    while (!q.empty() && q.front() < boundary_) {  // crossed a waitall, key posted again
      finish(q.front());
      q.pop_front();
    }
    const std::uint64_t n = named_.size();
    named_.push_back(false);
    done_.push_back(false);
    q.push_back(n);
    order_.emplace_back(n, k);
    ++pending_;
    while (pending_ > kMaxPending) {
      drop_stale();
      const auto [o, key] = order_.front();
      if (o >= boundary_) break;  // every pending posting came after the last waitall
      pop_front_of(key);          // the oldest pending posting is the oldest of its key
      finish(o);
      ++bounded;
    }
  }
  // A `wait` naming `k` (null: a wait without a key, or a waitAny).
  void wait(const RequestKey* k) {
    if (k == nullptr) {
      drop_stale();
      if (order_.empty()) return;
      const auto [o, key] = order_.front();
      pop_front_of(key);
      name(o);
      return;
    }
    const auto it = by_key_.find(*k);
    if (it == by_key_.end()) return;
    const std::uint64_t o = it->second.front();
    it->second.pop_front();
    if (it->second.empty()) by_key_.erase(it);
    name(o);
  }
  void waitall() { boundary_ = named_.size(); }
  // Whether a later record completes posting `n` (then a waitall before it does not).
  bool named(std::uint64_t n) const { return n < named_.size() && named_[n]; }

  std::uint64_t bounded = 0;  // postings given to their waitall by the kMaxPending bound

 private:
  void finish(std::uint64_t o) {
    done_[o] = true;
    --pending_;
  }
  void name(std::uint64_t o) {
    named_[o] = true;
    finish(o);
  }
  void pop_front_of(const RequestKey& key) {
    const auto it = by_key_.find(key);
    it->second.pop_front();
    if (it->second.empty()) by_key_.erase(it);
  }
  // Drops finished postings from the front of order_, and compacts it when finished ones
  // behind a long-pending front outnumber the pending ones.
  void drop_stale() {
    while (!order_.empty() && done_[order_.front().first]) order_.pop_front();
    if (order_.size() > 2 * pending_ + 1024)
      std::erase_if(order_, [&](const auto& e) { return done_[e.first]; });
  }

  std::vector<bool> named_;  // per posting
  std::vector<bool> done_;   // per posting: named, or given to a waitall
  // Pending postings per key, oldest first; and all of them (and some finished ones) in order.
  std::unordered_map<RequestKey, std::deque<std::uint64_t>, RequestKeyHash> by_key_;
  std::deque<std::pair<std::uint64_t, RequestKey>> order_;
  std::uint64_t boundary_ = 0;  // postings before the last waitall crossed it
  std::size_t pending_ = 0;
};

// Every collective record of every rank, by instance: the k-th collective of each rank.
bool is_ti_collective(TiOp op) {
  return op >= TiOp::Barrier && op <= TiOp::Exscan;
}

// Where a TI conversion reads its records: a TiTrace in memory (whose ranks may be freed as
// they are converted) or a TiReader parsing one rank's file at a time.
class TiSource {
 public:
  virtual ~TiSource() = default;
  virtual std::size_t ranks() const = 0;
  virtual const std::vector<std::string>& files() const = 0;
  // Rank r's records, valid until records() of another rank or done(r).
  virtual const std::vector<TiRecord>& records(std::size_t r) = 0;
  virtual void done(std::size_t /*r*/) {}  // rank r is converted
};

class MemorySource : public TiSource {
 public:
  MemorySource(const trace::TiTrace& ti, trace::TiTrace* release) : ti_(ti), release_(release) {}
  std::size_t ranks() const override { return ti_.ranks.size(); }
  const std::vector<std::string>& files() const override { return ti_.files; }
  const std::vector<TiRecord>& records(std::size_t r) override { return ti_.ranks[r]; }
  void done(std::size_t r) override {
    if (release_ != nullptr) std::vector<TiRecord>().swap(release_->ranks[r]);
  }

 private:
  const trace::TiTrace& ti_;
  trace::TiTrace* release_;
};

class ReaderSource : public TiSource {
 public:
  explicit ReaderSource(const std::string& path) : reader_(path) {}
  std::size_t ranks() const override { return reader_.ranks(); }
  const std::vector<std::string>& files() const override { return reader_.files(); }
  const std::vector<TiRecord>& records(std::size_t r) override { return reader_.records(r); }

 private:
  trace::TiReader reader_;
};

struct TiConverter {
  TiSource& ti;
  const ReplayOptions& o;
  trace::Definitions defs;
  Notes notes;
  int iterations = 0;
  // Resolved sources of ANY_SOURCE receives, per rank in program order.
  std::vector<std::deque<Rank>> any_sources;
  // The v-collectives' per-rank sizes, each distinct vector stored once for the workload.
  CountsPool pool;

  TiConverter(TiSource& t, const ReplayOptions& opt) : ti(t), o(opt) {
    defs.region("main");
    any_sources.assign(ti.ranks(), {});
    const bool any = harmonise_collectives();
    if (any) resolve_any_source();
  }

  std::string where(Rank r, std::uint32_t line) const {
    const auto& files = ti.files();
    const std::string file = files.size() == ti.ranks() ? files[static_cast<std::size_t>(r)]
                             : files.empty()            ? std::string("TI trace")
                                                        : files.front();
    return file + ":" + std::to_string(line) + " (rank " + std::to_string(r) + ")";
  }
  std::string where(Rank r, const TiRecord& rec) const { return where(r, rec.line); }

  static bool any_source_receive(const TiRecord& rec) {
    return ((rec.op == TiOp::Recv || rec.op == TiOp::Irecv) && rec.peer == trace::kAnySource) ||
           (rec.op == TiOp::Sendrecv && rec.peer2 == trace::kAnySource);
  }

  // Sends to each (receiver, tag) per source, minus the receives that name that source: what
  // is left is what the ANY_SOURCE receives of that receiver and tag take, round robin over
  // the sources in rank order. (A pass over every rank's records; only for traces that have
  // such receives.)
  void resolve_any_source() {
    const auto n = ti.ranks();
    std::map<std::tuple<Rank, std::int32_t, Rank>, std::int64_t> left;  // (dst, tag, src) -> sends - receives
    // Per receiver: the tags and lines of its ANY_SOURCE receives, in program order.
    std::vector<std::vector<std::pair<std::int32_t, std::uint32_t>>> wanted(n);
    for (std::size_t s = 0; s < n; ++s) {
      for (const auto& rec : ti.records(s)) {
        const auto src = static_cast<Rank>(s);
        if (rec.op == TiOp::Send || rec.op == TiOp::Ssend || rec.op == TiOp::Isend || rec.op == TiOp::Issend)
          ++left[{rec.peer, rec.tag, src}];
        if (rec.op == TiOp::Sendrecv) ++left[{rec.peer, 0, src}];
        if ((rec.op == TiOp::Recv || rec.op == TiOp::Irecv) && rec.peer != trace::kAnySource)
          --left[{src, rec.tag, rec.peer}];
        if (rec.op == TiOp::Sendrecv && rec.peer2 != trace::kAnySource) --left[{src, 0, rec.peer2}];
        if (any_source_receive(rec)) wanted[s].emplace_back(rec.op == TiOp::Sendrecv ? 0 : rec.tag, rec.line);
      }
    }
    for (std::size_t d = 0; d < n; ++d) {
      std::map<std::int32_t, std::size_t> turn;  // per tag: where the round robin stands
      for (const auto& [tag, line] : wanted[d]) {
        const auto dst = static_cast<Rank>(d);
        Rank chosen = trace::kNoRank;
        for (std::size_t k = 0; k < n && chosen == trace::kNoRank; ++k) {
          const auto src = static_cast<Rank>((turn[tag] + k) % n);
          auto it = left.find({dst, tag, src});
          if (it != left.end() && it->second > 0) {
            --it->second;
            chosen = src;
            turn[tag] = (static_cast<std::size_t>(src) + 1) % n;
          }
        }
        if (chosen == trace::kNoRank)
          throw InputError(where(dst, line) + ": a receive from MPI_ANY_SOURCE (-333) with tag " + std::to_string(tag) +
                           " that no send to rank " + std::to_string(d) + " is left for");
        any_sources[d].push_back(chosen);
        notes.add("MPI_ANY_SOURCE receives given the source of a send left over for them (round robin)");
      }
    }
  }

  // Every rank calls the same collectives in the same order (a TI trace records no
  // communicator: all are on MPI_COMM_WORLD). One pass over every rank's records, keeping rank
  // 0's sequence; returns whether some rank receives from MPI_ANY_SOURCE.
  bool harmonise_collectives() {
    struct Call {
      TiOp op;
      std::uint32_t line;
    };
    std::vector<Call> first;                       // rank 0's collectives
    std::vector<std::size_t> count(ti.ranks(), 0);  // per rank
    std::vector<std::uint32_t> last(ti.ranks(), 0);  // line of each rank's last collective
    struct Mismatch {
      std::size_t k;
      TiOp op;
      std::uint32_t line;
    };
    std::vector<std::optional<Mismatch>> mismatch(ti.ranks());  // each rank's first differing collective
    bool any = false;
    for (std::size_t r = 0; r < ti.ranks(); ++r) {
      for (const auto& rec : ti.records(r)) {
        any = any || any_source_receive(rec);
        if (!is_ti_collective(rec.op)) continue;
        const std::size_t k = count[r]++;
        last[r] = rec.line;
        if (r == 0) first.push_back({rec.op, rec.line});
        else if (!mismatch[r] && k < first.size() && first[k].op != rec.op) mismatch[r] = Mismatch{k, rec.op, rec.line};
      }
    }
    const std::size_t instances = *std::max_element(count.begin(), count.end());
    for (std::size_t r = 0; r < count.size(); ++r) {
      if (count[r] != instances)
        throw InputError((count[r] > 0 ? where(static_cast<Rank>(r), last[r]) : "rank " + std::to_string(r)) +
                         ": rank " + std::to_string(r) + " calls " + std::to_string(count[r]) +
                         " collectives, other ranks " + std::to_string(instances) +
                         " (every collective of a TI trace is on MPI_COMM_WORLD)");
      if (mismatch[r]) {
        const Mismatch& m = *mismatch[r];
        throw InputError(where(static_cast<Rank>(r), m.line) + ": collective " + std::to_string(m.k) + " is '" +
                         std::string(trace::ti_op_name(m.op)) + "' here but '" +
                         std::string(trace::ti_op_name(first[m.k].op)) + "' on rank 0 (" +
                         where(0, first[m.k].line) + ")");
      }
    }
    return any;
  }

  // The look-ahead of the rank's waitalls: its records read once before the conversion.
  WaitLookahead lookahead(Rank r) {
    WaitLookahead look;
    const auto& recs = ti.records(static_cast<std::size_t>(r));
    // Without wait or waitAny records nothing is named later: every waitall completes all.
    if (std::none_of(recs.begin(), recs.end(),
                     [](const TiRecord& rec) { return rec.op == TiOp::Wait || rec.op == TiOp::Waitany; }))
      return look;
    for (const auto& rec : recs) {
      switch (rec.op) {
        case TiOp::Isend:
        case TiOp::Issend:
          look.post(RequestKey{r, rec.peer, rec.tag});
          break;
        case TiOp::Irecv:
          look.post(RequestKey{rec.peer, r, rec.tag});
          break;
        case TiOp::Wait:
          if (rec.peer2 != trace::kNoRank) {
            const RequestKey key{rec.peer, rec.peer2, rec.tag};
            look.wait(&key);
          } else {
            look.wait(nullptr);
          }
          break;
        case TiOp::Waitany:
          look.wait(nullptr);
          break;
        case TiOp::Waitall:
          look.waitall();
          break;
        default:
          break;
      }
    }
    if (look.bounded)
      notes.add("requests pending at a waitall given to it without a look-ahead (more than " +
                    std::to_string(WaitLookahead::kMaxPending) + " requests of the rank pending)",
                look.bounded);
    return look;
  }

  // A request of the rank, outstanding.
  struct Pending {
    RequestKey key;
    std::int32_t slot;
    std::uint64_t posting;  // numbered as WaitLookahead numbers them
  };
  // One rank's requests: the engine names them by slot.
  struct RankRequests {
    Slots slots;
    WaitLookahead look;
    std::vector<Pending> outstanding;  // in posting order
    std::uint64_t postings = 0;
    std::uint64_t fewer = 0;  // waitalls completing fewer than all outstanding requests
  };

  std::vector<Action> rank(Rank r) {
    std::vector<Action> out;
    RankBuilder b(r, o, defs, out);
    const trace::RegionId main = defs.region("main");
    RankRequests q;
    q.look = lookahead(r);
    for (const auto& rec : ti.records(static_cast<std::size_t>(r))) {
      switch (rec.op) {
        case TiOp::Compute:
          b.compute(rec.amount, true, main);
          break;
        case TiOp::Sleep:
          b.compute(rec.amount, false, main);
          break;
        case TiOp::Send:
          b.push(p2p_action(ActionKind::Send, rec.peer, rec.tag, rec.bytes));
          break;
        case TiOp::Ssend:
          b.push(p2p_action(ActionKind::Ssend, rec.peer, rec.tag, rec.bytes));
          break;
        case TiOp::Isend:
        case TiOp::Issend:
          if (rec.op == TiOp::Issend) notes.add("MPI_Issend replayed as MPI_Isend (the engine has no Issend)");
          post(ActionKind::Isend, rec.peer, rec, RequestKey{r, rec.peer, rec.tag}, b, q);
          break;
        case TiOp::Recv:
          b.push(p2p_action(ActionKind::Recv, source(r, rec.peer), rec.tag, rec.bytes));
          break;
        case TiOp::Irecv:
          // SMPI files an ANY_SOURCE request under the source it was traced with (-333).
          post(ActionKind::Irecv, source(r, rec.peer), rec, RequestKey{rec.peer, r, rec.tag}, b, q);
          break;
        case TiOp::Wait:
          wait(rec, b, q);
          break;
        case TiOp::Test:
          notes.add("test records replayed as no-ops (a later wait or waitall completes the request)");
          break;
        case TiOp::Waitall:
          waitall(b, q);
          break;
        case TiOp::Waitany:
          if (q.outstanding.empty()) break;
          notes.add("waitAny/waitsome records replayed as MPI_Wait on the oldest outstanding request");
          complete(0, b, q);
          break;
        case TiOp::Testany:
          notes.add("testany/testall/testsome records replayed as no-ops");
          break;
        case TiOp::CommNoop:
          notes.add("comm_size/comm_split/comm_dup records replayed as no-ops (TI records no communicator)");
          break;
        case TiOp::Sendrecv: {
          Action a = p2p_action(ActionKind::Sendrecv, rec.peer, 0, rec.bytes);
          a.peer2 = source(r, rec.peer2);
          a.tag2 = 0;
          a.bytes2 = rec.bytes2;
          b.push(a);
          break;
        }
        default: {
          notes.add("collectives assumed on MPI_COMM_WORLD (TI records no communicator)");
          collective(r, rec, b, main);
          break;
        }
      }
    }
    if (q.fewer)
      notes.add("waitall records completing only the outstanding requests no later wait record names "
                "(SMPI's replay completes all)",
                q.fewer);
    if (!q.outstanding.empty()) {
      Action a;
      a.kind = ActionKind::Waitall;
      b.push(a);
      notes.add("ranks with requests never waited for: a final MPI_Waitall added");
    }
    b.wrap(main);  // TI has no regions: the computation is in `main`
    iterations = std::max(iterations, b.iterations());
    return out;
  }

  // The source of rank r's receive from `peer`: an MPI_ANY_SOURCE receive takes the next of
  // those resolve_any_source() found for the rank.
  Rank source(Rank r, Rank peer) {
    if (peer != trace::kAnySource) return peer;
    auto& any = any_sources[static_cast<std::size_t>(r)];
    const Rank s = any.front();
    any.pop_front();
    return s;
  }

  // A request posted by record `rec`, filed under `key`, on the next free slot.
  void post(ActionKind k, Rank peer, const TiRecord& rec, RequestKey key, RankBuilder& b, RankRequests& q) {
    Action a = p2p_action(k, peer, rec.tag, rec.bytes);
    a.request = q.slots.take();
    q.outstanding.push_back(Pending{key, a.request, q.postings++});
    b.push(a);
  }

  // An MPI_Wait on outstanding request `idx`.
  void complete(std::size_t idx, RankBuilder& b, RankRequests& q) {
    Action a;
    a.kind = ActionKind::Wait;
    a.request = q.outstanding[idx].slot;
    q.slots.give_back(a.request);
    q.outstanding.erase(q.outstanding.begin() + static_cast<std::ptrdiff_t>(idx));
    b.push(a);
  }

  // A `wait` record: the oldest outstanding request with its key (without a key, the oldest).
  void wait(const TiRecord& rec, RankBuilder& b, RankRequests& q) {
    if (q.outstanding.empty()) {
      notes.add("wait records with no outstanding request skipped (completed by an earlier test, as SMPI assumes)");
      return;
    }
    std::size_t idx = 0;
    if (rec.peer2 != trace::kNoRank) {
      const RequestKey key{rec.peer, rec.peer2, rec.tag};
      idx = q.outstanding.size();
      for (std::size_t k = 0; k < q.outstanding.size(); ++k)
        if (q.outstanding[k].key == key) {
          idx = k;
          break;
        }
      if (idx == q.outstanding.size()) {
        notes.add("wait records with no outstanding request skipped (completed by an earlier test, as SMPI assumes)");
        return;
      }
    }
    complete(idx, b, q);
  }

  // A `waitall` record: the outstanding requests no later record names (look-ahead); all when
  // none is named.
  void waitall(RankBuilder& b, RankRequests& q) {
    auto& outstanding = q.outstanding;
    if (outstanding.empty()) return;
    const auto mine = [&](const Pending& p) { return !q.look.named(p.posting); };
    Action a;
    a.kind = ActionKind::Waitall;
    if (std::all_of(outstanding.begin(), outstanding.end(), mine)) {
      b.push(a);
      for (const auto& p : outstanding) q.slots.give_back(p.slot);
      outstanding.clear();
      return;
    }
    ++q.fewer;
    // Its requests to the front, the named ones after them, each in posting order.
    const auto end = std::stable_partition(outstanding.begin(), outstanding.end(), mine);
    if (end == outstanding.begin()) return;  // every one is completed later: no call
    for (auto it = outstanding.begin(); it != end; ++it) {
      Action w;
      w.kind = ActionKind::Wait;
      w.request = it->slot;
      w.in_waitall = true;
      b.push(w);
      q.slots.give_back(it->slot);
    }
    b.push(a);
    outstanding.erase(outstanding.begin(), end);
  }

  // A v-collective with the sizes of its record (in bytes; SMPI's replayer reads them as
  // element counts of the record's datatypes, which comes to the same bytes).
  Action vcoll(ActionKind k, std::uint64_t bytes, Rank root, std::vector<std::uint64_t> send,
               std::vector<std::uint64_t> recv) {
    Action a = coll(k, bytes, root);
    a.counts = pool.intern(Counts{std::move(send), std::move(recv)});
    return a;
  }

  void collective(Rank r, const TiRecord& rec, RankBuilder& b, trace::RegionId main) {
    switch (rec.op) {
      case TiOp::Barrier:
        b.push(coll(ActionKind::Barrier, 0));
        break;
      case TiOp::Bcast:
        b.push(coll(ActionKind::Bcast, rec.bytes, rec.root));
        break;
      case TiOp::Reduce:
        b.push(coll(ActionKind::Reduce, rec.bytes, rec.root));
        break;
      case TiOp::Allreduce:
        b.push(coll(ActionKind::Allreduce, rec.bytes));
        break;
      case TiOp::Gather:
        b.push(coll(ActionKind::Gather, rec.bytes, rec.root));
        break;
      case TiOp::Scatter:
        b.push(coll(ActionKind::Scatter, rec.bytes2, rec.root));
        break;
      case TiOp::Allgather:
        b.push(coll(ActionKind::Allgather, rec.bytes));
        break;
      case TiOp::Alltoall:
        b.push(coll(ActionKind::Alltoall, rec.bytes));
        break;
      // The receive counts of a gatherv only count at its root, the send counts of a
      // scatterv only at its root (SMPI writes zeros elsewhere).
      case TiOp::Gatherv:
        b.push(vcoll(ActionKind::Gatherv, rec.bytes, rec.root, {},
                     rec.root == r ? rec.counts : std::vector<std::uint64_t>{}));
        break;
      case TiOp::Scatterv:
        b.push(vcoll(ActionKind::Scatterv, rec.bytes2, rec.root,
                     rec.root == r ? rec.counts : std::vector<std::uint64_t>{}, {}));
        break;
      case TiOp::Allgatherv:
        b.push(vcoll(ActionKind::Allgatherv, rec.bytes, 0, {}, rec.counts));
        break;
      case TiOp::Alltoallv: {
        const auto half = static_cast<std::ptrdiff_t>(rec.counts.size() / 2);
        b.push(vcoll(ActionKind::Alltoallv, 0, 0, {rec.counts.begin(), rec.counts.begin() + half},
                     {rec.counts.begin() + half, rec.counts.end()}));
        break;
      }
      case TiOp::ReduceScatter:
        b.push(vcoll(ActionKind::ReduceScatter, 0, 0, {}, rec.counts));
        break;
      case TiOp::Scan:
      case TiOp::Exscan:
        notes.add("scan/exscan replayed as MPI_Allreduce of the same size");
        b.push(coll(ActionKind::Allreduce, rec.bytes));
        break;
      default:
        break;
    }
    // SMPI's replayer executes a reduction's flops after the collective, none too (an
    // execution of no flops).
    // (SMPI does not replay scans: waitlab's allreduce for them takes their flops if any.)
    if (rec.op == TiOp::Reduce || rec.op == TiOp::Allreduce || rec.op == TiOp::ReduceScatter ||
        ((rec.op == TiOp::Scan || rec.op == TiOp::Exscan) && rec.amount > 0))
      b.compute(rec.amount, true, main);
  }
};

// A TI trace's ranks are converted in turn, each from its records as the source gives them,
// and then let go (source.done()).
std::unique_ptr<Workload> replay_ti_records(TiSource& source, const std::string& name, const ReplayOptions& o,
                                            ReplayReport* report) {
  if (source.ranks() == 0) throw InputError(name + ": the TI trace has no ranks to replay");
  TiConverter c(source, o);
  std::uint64_t n = 0;
  auto tapes = to_tapes(
      source.ranks(), [&](Rank r) { return c.rank(r); }, [&](std::size_t r) { source.done(r); }, n);
  c.notes.flush(report);
  return finish(std::make_unique<ReplayWorkload>(name, std::move(c.defs), std::move(tapes), c.iterations,
                                                 std::move(c.pool)),
                o, report, n);
}

}  // namespace

std::unique_ptr<Workload> replay_ti(const trace::TiTrace& ti, const std::string& name, const ReplayOptions& o,
                                    ReplayReport* report) {
  MemorySource source(ti, nullptr);
  return replay_ti_records(source, name, o, report);
}

std::unique_ptr<Workload> replay_ti(trace::TiTrace&& ti, const std::string& name, const ReplayOptions& o,
                                    ReplayReport* report) {
  MemorySource source(ti, &ti);
  return replay_ti_records(source, name, o, report);
}

std::unique_ptr<Workload> replay_ti_file(const std::string& path, const std::string& name, const ReplayOptions& o,
                                         ReplayReport* report) {
  ReaderSource source(path);
  return replay_ti_records(source, name, o, report);
}

}  // namespace waitlab::models
