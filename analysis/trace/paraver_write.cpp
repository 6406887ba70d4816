// Paraver traces: the writer (see paraver.hpp and docs/formats.md, "Paraver"; the reader is
// paraver_read.cpp).
//
// Writing walks each rank once with a small generator that yields that rank's records in
// time order (state records at their begin, event lines at their time, communication
// records right after the Enter line of the call that sends); a heap merges the ranks by
// (time, task), so memory stays proportional to the ranks, not to the events.
#include "analysis/trace/paraver.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <ostream>
#include <queue>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/trace/atomic_file.hpp"
#include "analysis/trace/match.hpp"
#include "analysis/trace/paraver_common.hpp"
#include "util/error.hpp"

namespace waitlab::trace {

namespace {

using detail::base_of;
using detail::comm_name;
using detail::op_code;
using detail::OpCode;
using detail::sends;
using detail::waits;

struct StateDef {
  const char* label;
  const char* color;
};
constexpr std::array<StateDef, 17> kStates = {{
    {"Idle", "{117,195,255}"},
    {"Running", "{0,0,255}"},
    {"Not created", "{255,255,255}"},
    {"Waiting a message", "{255,0,0}"},
    {"Blocking Send", "{255,0,174}"},
    {"Synchronization", "{179,0,0}"},
    {"Test/Probe", "{0,255,0}"},
    {"Scheduling and Fork/Join", "{255,255,0}"},
    {"Wait/WaitAll", "{235,0,0}"},
    {"Blocked", "{0,162,0}"},
    {"Immediate Send", "{255,0,255}"},
    {"Immediate Receive", "{100,100,177}"},
    {"I/O", "{172,174,41}"},
    {"Group Communication", "{255,144,26}"},
    {"Tracing Disabled", "{2,255,177}"},
    {"Others", "{192,224,0}"},
    {"Send Receive", "{66,66,66}"},
}};

constexpr std::string_view kHeaderDate = "01/01/70 at 00:00";  // fixed: output must not depend on the clock
constexpr std::string_view kNodeName = "waitlab";

// Appends text to a buffer that is flushed to the stream in large pieces.
class Out {
 public:
  explicit Out(std::ostream& os) : os_(os) { buf_.reserve(kFlush + 4096); }
  ~Out() = default;
  Out(const Out&) = delete;
  Out& operator=(const Out&) = delete;

  void str(std::string_view s) {
    buf_.append(s);
    maybe_flush();
  }
  void ch(char c) { buf_.push_back(c); }
  void num(std::int64_t v) {
    char tmp[24];
    const auto r = std::to_chars(tmp, tmp + sizeof tmp, v);
    buf_.append(tmp, static_cast<std::size_t>(r.ptr - tmp));
  }
  void unum(std::uint64_t v) {
    char tmp[24];
    const auto r = std::to_chars(tmp, tmp + sizeof tmp, v);
    buf_.append(tmp, static_cast<std::size_t>(r.ptr - tmp));
  }
  void end_line() {
    buf_.push_back('\n');
    maybe_flush();
  }
  void finish() {
    flush();
    os_.flush();
  }

 private:
  static constexpr std::size_t kFlush = 1 << 20;
  void maybe_flush() {
    if (buf_.size() >= kFlush) flush();
  }
  void flush() {
    os_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
  }
  std::ostream& os_;
  std::string buf_;
};

// What the files cannot hold, counted by kind.
struct Losses {
  std::uint64_t unmatched_sends = 0;
  std::uint64_t unmatched_recvs = 0;
  std::uint64_t size_mismatch = 0;
  std::uint64_t p2p_comm = 0;
  std::uint64_t stray = 0;
  std::uint64_t nested = 0;
  std::uint64_t user_in_mpi = 0;
  std::uint64_t unbalanced = 0;
  std::uint64_t misplaced = 0;
  std::uint64_t coll_missing = 0;
  std::uint64_t coll_time = 0;
  std::uint64_t coll_root = 0;
  std::uint64_t requests = 0;
  std::uint64_t fields = 0;
};

// One point-to-point message as a communication record.
struct CommRec {
  Rank src = 0;
  Rank dst = 0;
  std::int64_t lsend = 0;
  std::int64_t psend = 0;
  std::int64_t lrecv = 0;
  std::int64_t precv = 0;
  std::uint64_t size = 0;
  std::int32_t tag = 0;
};


std::int64_t to_ns(Time t) {
  return static_cast<std::int64_t>(std::llround(t * 1e9));
}

// One output record of a rank.
struct Rec {
  enum Kind : std::uint8_t { State, Event, Comm } kind = Event;
  std::uint8_t pairs = 0;
  std::int64_t time = 0;
  std::int64_t end = 0;    // State: end; Comm: index into the messages
  std::int64_t state = 0;
  std::array<std::pair<std::int64_t, std::int64_t>, 6> pv{};
  void add(std::int64_t type, std::int64_t value) {
    if (pairs < pv.size()) pv[pairs++] = {type, value};
  }
};

// Yields one rank's records in time order (program order for equal times).
class RankRecords {
 public:
  RankRecords(const Trace& t, Rank r, const std::vector<std::pair<std::uint32_t, std::uint32_t>>& sends_of_rank)
      : t_(t), ev_(t.locations[r].events), rank_(r), sends_(sends_of_rank) {
    if (!ev_.empty()) last_ns_ = to_ns(ev_.back().time);
  }

  // Makes sure a record is available; false when the rank is done.
  bool ready() {
    while (head_ >= buf_.size()) {
      buf_.clear();
      head_ = 0;
      if (i_ >= ev_.size()) return false;
      step();
    }
    return true;
  }
  const Rec& front() const { return buf_[head_]; }
  void pop() { ++head_; }
  Rank rank() const { return rank_; }

 private:
  bool mpi_region(RegionId id) const { return t_.defs.regions[id].op != MpiOp::None; }

  // Time of the next MPI Enter at or after index `from`, or the rank's last time.
  std::int64_t next_call_time(std::size_t from) {
    if (!next_enter_valid_ || next_enter_ < from) {
      next_enter_valid_ = true;
      next_enter_ = from;
      while (next_enter_ < ev_.size() &&
             !(ev_[next_enter_].kind == EventKind::Enter && mpi_region(ev_[next_enter_].ref)))
        ++next_enter_;
    }
    return next_enter_ < ev_.size() ? to_ns(ev_[next_enter_].time) : last_ns_;
  }

  void running_from(std::int64_t begin, std::size_t from) {
    const std::int64_t end = next_call_time(from);
    if (end > begin) state(begin, end, 1);
  }
  void state(std::int64_t begin, std::int64_t end, std::int64_t value) {
    Rec r;
    r.kind = Rec::State;
    r.time = begin;
    r.end = end;
    r.state = value;
    buf_.push_back(r);
  }

  void enter_call(const Event& e, std::int64_t ns) {
    const MpiOp op = t_.defs.regions[e.ref].op;
    const OpCode code = op_code(op);
    // The call's extent and the events it holds.
    std::size_t j = i_ + 1;
    int depth = 1;
    const Event* send = nullptr;
    const Event* recv = nullptr;
    const Event* coll_end = nullptr;
    std::vector<std::uint32_t> send_events;
    for (; j < ev_.size(); ++j) {
      const Event& x = ev_[j];
      if (x.kind == EventKind::Enter && mpi_region(x.ref)) {
        ++depth;
      } else if (x.kind == EventKind::Leave && mpi_region(x.ref)) {
        if (--depth == 0) break;
      } else if (depth == 1) {
        if ((x.kind == EventKind::Send || x.kind == EventKind::IsendStart) && !send) send = &x;
        if (x.kind == EventKind::Recv && !recv) recv = &x;
        if (x.kind == EventKind::CollEnd && !coll_end) coll_end = &x;
        if (x.kind == EventKind::Send || x.kind == EventKind::IsendStart)
          send_events.push_back(static_cast<std::uint32_t>(j));
      }
    }
    const std::int64_t leave = j < ev_.size() ? to_ns(ev_[j].time) : last_ns_;
    if (leave > ns) state(ns, leave, code.state);
    Rec r;
    r.kind = Rec::Event;
    r.time = ns;
    r.add(code.type, code.value);
    if (is_collective(op) && coll_end) {
      r.add(kPrvCollSendSize, static_cast<std::int64_t>(coll_end->bytes));
      r.add(kPrvCollRecvSize, static_cast<std::int64_t>(coll_end->aux));
      r.add(kPrvCollComm, static_cast<std::int64_t>(coll_end->ref) + 1);
      if (coll_end->peer == rank_) r.add(kPrvCollRoot, 1);
    }
    if (sends(op) && send) {
      r.add(kPrvSendDest, send->peer == kNoRank ? 0 : static_cast<std::int64_t>(send->peer) + 1);
      r.add(kPrvSendTag, send->tag);
    }
    if ((op == MpiOp::Recv || op == MpiOp::Sendrecv) && recv) {
      r.add(kPrvRecvSource, recv->peer == kNoRank ? 0 : static_cast<std::int64_t>(recv->peer) + 1);
      r.add(kPrvRecvTag, recv->tag);
    }
    buf_.push_back(r);
    for (std::uint32_t s : send_events) {
      const auto it = std::lower_bound(sends_.begin(), sends_.end(), std::make_pair(s, std::uint32_t{0}));
      if (it == sends_.end() || it->first != s) continue;
      Rec c;
      c.kind = Rec::Comm;
      c.time = ns;
      c.end = it->second;
      buf_.push_back(c);
    }
  }

  void event(std::int64_t ns, std::int64_t type, std::int64_t value) {
    Rec r;
    r.kind = Rec::Event;
    r.time = ns;
    r.add(type, value);
    buf_.push_back(r);
  }

  void step() {
    const Event& e = ev_[i_];
    const std::int64_t ns = to_ns(e.time);
    if (i_ == 0 && !(e.kind == EventKind::Enter && mpi_region(e.ref))) running_from(ns, 0);
    switch (e.kind) {
      case EventKind::Enter:
        if (mpi_region(e.ref)) {
          if (depth_ == 0) enter_call(e, ns);
          ++depth_;
        } else if (depth_ == 0) {
          ustack_.push_back(e.ref);
          event(ns, kPrvUserFunction, static_cast<std::int64_t>(e.ref) + 1);
        }
        break;
      case EventKind::Leave:
        if (mpi_region(e.ref)) {
          if (depth_ == 1) {
            event(ns, op_code(t_.defs.regions[e.ref].op).type, 0);
            running_from(ns, i_ + 1);
          }
          if (depth_ > 0) --depth_;
        } else if (depth_ == 0) {
          const auto it = std::find(ustack_.rbegin(), ustack_.rend(), e.ref);
          if (it != ustack_.rend()) ustack_.erase(std::next(it).base());
          Rec r;
          r.kind = Rec::Event;
          r.time = ns;
          r.add(kPrvUserFunction, ustack_.empty() ? 0 : static_cast<std::int64_t>(ustack_.back()) + 1);
          r.add(kPrvUserExit, static_cast<std::int64_t>(e.ref) + 1);
          buf_.push_back(r);
        }
        break;
      case EventKind::IsendStart:
        if (depth_ > 0) event(ns, kPrvRequestStarted, static_cast<std::int64_t>(e.aux + 1));
        break;
      case EventKind::IrecvPost:
        if (depth_ > 0) {
          Rec r;
          r.kind = Rec::Event;
          r.time = ns;
          r.add(kPrvRequestStarted, static_cast<std::int64_t>(e.aux + 1));
          r.add(kPrvRecvSource, e.peer == kNoRank ? 0 : static_cast<std::int64_t>(e.peer) + 1);
          r.add(kPrvRecvTag, e.tag);
          r.add(kPrvRecvSize, static_cast<std::int64_t>(e.bytes));
          buf_.push_back(r);
        }
        break;
      case EventKind::IsendComplete:
      case EventKind::IrecvComplete:
        if (depth_ > 0) event(ns, kPrvRequestCompleted, static_cast<std::int64_t>(e.aux + 1));
        break;
      default:  // Send, Recv: communication records; CollBegin/CollEnd: the call's Enter/Leave
        break;
    }
    ++i_;
  }

  const Trace& t_;
  const std::vector<Event>& ev_;
  Rank rank_;
  const std::vector<std::pair<std::uint32_t, std::uint32_t>>& sends_;  // (send event, message)
  std::size_t i_ = 0;
  std::size_t next_enter_ = 0;
  bool next_enter_valid_ = false;
  int depth_ = 0;
  std::int64_t last_ns_ = 0;
  std::vector<RegionId> ustack_;
  std::vector<Rec> buf_;
  std::size_t head_ = 0;
};

// Checks what the writer relies on; throws InputError naming the file and the event.
void validate(const Trace& t, const std::string& path) {
  const std::size_t n = t.ranks();
  if (n == 0) throw InputError(path + ": cannot write a Paraver trace of a trace without ranks");
  for (std::size_t c = 0; c < t.defs.comms.size(); ++c) {
    std::vector<char> seen(n, 0);
    for (Rank m : t.defs.comms[c].members) {
      if (m < 0 || static_cast<std::size_t>(m) >= n)
        throw InputError(path + ": communicator " + std::to_string(c) + " names rank " + std::to_string(m) +
                         ", but the trace has " + std::to_string(n) + " ranks");
      if (seen[static_cast<std::size_t>(m)]++)
        throw InputError(path + ": communicator " + std::to_string(c) + " names rank " + std::to_string(m) +
                         " twice");
    }
  }
  constexpr double kMaxTime = 9.0e9;  // seconds; in ns this still fits a signed 64-bit integer
  for (std::size_t r = 0; r < n; ++r) {
    const auto& ev = t.locations[r].events;
    double prev = 0;
    for (std::size_t i = 0; i < ev.size(); ++i) {
      const Event& e = ev[i];
      const auto where = [&] { return path + ": rank " + std::to_string(r) + ", event " + std::to_string(i) + ": "; };
      if (!std::isfinite(e.time) || e.time < 0 || e.time > kMaxTime)
        throw InputError(where() + "time " + std::to_string(e.time) +
                         " cannot be written (Paraver times are non-negative integer nanoseconds)");
      if (i > 0 && e.time < prev)
        throw InputError(where() + "events are not in time order (" + std::to_string(e.time) + " after " +
                         std::to_string(prev) + ")");
      prev = e.time;
      if (!t.defs.defines_ref(e))
        throw InputError(where() + std::string(ref_kind_name(ref_kind(e.kind))) + " " + std::to_string(e.ref) +
                         " is not defined");
    }
  }
}

bool shape_fits(EventKind k, MpiOp op) {
  switch (k) {
    case EventKind::Send: return op == MpiOp::Send || op == MpiOp::Ssend || op == MpiOp::Sendrecv;
    case EventKind::Recv: return op == MpiOp::Recv || op == MpiOp::Sendrecv;
    case EventKind::IsendStart: return op == MpiOp::Isend;
    case EventKind::IrecvPost: return op == MpiOp::Irecv;
    case EventKind::IsendComplete:
    case EventKind::IrecvComplete: return waits(op);
    case EventKind::CollBegin:
    case EventKind::CollEnd: return is_collective(op);
    default: return true;
  }
}

// Per communicator, per rank: the root each collective call names (for the is-root check).
using CallRoots = std::vector<std::vector<std::vector<Rank>>>;

// Walks the ranks' events for pair_messages and counts what the files cannot hold of the
// MPI calls' shapes: the call open, the events it has held so far and the requests started
// and not yet completed. The root each collective call names goes to roots[comm][rank].
class CallShapes {
 public:
  CallShapes(const Trace& t, Losses& loss, CallRoots& roots)
      : t_(t), n_(t.ranks()), loss_(loss), roots_(roots) {}

  // Counts what rank r's events lose (the request maps keep their buckets from rank to rank).
  void rank(std::size_t r) {
    const auto& ev = t_.locations[r].events;
    posts_.clear();
    starts_.clear();
    depth_ = 0;
    call_begin_ = 0;
    call_op_ = MpiOp::None;
    n_send_ = n_recv_ = n_start_ = n_post_ = n_begin_ = n_end_ = 0;
    call_first_ = 0;
    for (std::size_t i = 0; i < ev.size(); ++i) {
      const Event& e = ev[i];
      switch (e.kind) {
        case EventKind::Enter:
        case EventKind::Leave:
          region(r, i);
          break;
        default:
          inside(e);
          break;
      }
    }
  }

 private:
  struct Start {
    Rank peer;
    std::int32_t tag;
    std::uint64_t bytes;
  };

  // An Enter or Leave (event i of rank r): opens or closes an MPI call.
  void region(std::size_t r, std::size_t i) {
    const auto& ev = t_.locations[r].events;
    const Event& e = ev[i];
    const Region& reg = t_.defs.regions[e.ref];
    const MpiOp rop = reg.op;
    if (e.op != rop || e.peer != kNoRank || e.tag != 0 || e.bytes != 0 || e.aux != 0 || e.flags != 0)
      ++loss_.fields;
    if (rop == MpiOp::None) {
      if (depth_ > 0) ++loss_.user_in_mpi;
      return;
    }
    if (e.kind == EventKind::Enter) {
      if (depth_ == 0) {
        call_begin_ = e.time;
        call_op_ = rop;
        n_send_ = n_recv_ = n_start_ = n_post_ = n_begin_ = n_end_ = 0;
        call_first_ = i;
      } else {
        ++loss_.nested;
      }
      ++depth_;
      return;
    }
    if (depth_ == 0) {
      ++loss_.unbalanced;
      return;
    }
    if (--depth_ == 0 && is_collective(call_op_)) {
      // The collective's detail events sit on its Enter; CollBegin/CollEnd are read
      // back at the call's Enter/Leave.
      const Event* end = nullptr;
      for (std::size_t j = call_first_ + 1; j < i; ++j) {
        const Event& x = ev[j];
        if (x.kind == EventKind::CollBegin && x.time != call_begin_) ++loss_.coll_time;
        if (x.kind == EventKind::CollEnd) {
          if (!end) end = &x;
          if (x.time != e.time) ++loss_.coll_time;
        }
      }
      if (n_begin_ != 1 || n_end_ != 1) ++loss_.coll_missing;
      const CommId comm = end ? end->ref : kCommWorld;
      if (comm < roots_.size()) roots_[comm][r].push_back(end ? end->peer : kNoRank);
    }
  }

  // Any other event: a communication event of the open MPI call.
  void inside(const Event& e) {
    if (depth_ == 0) {
      ++loss_.stray;
      return;
    }
    if (depth_ > 1 || !shape_fits(e.kind, call_op_)) {
      ++loss_.misplaced;
      return;
    }
    if (e.op != call_op_ || e.flags != 0) ++loss_.fields;
    switch (e.kind) {
      case EventKind::Send:
      case EventKind::IsendStart: {
        if ((e.kind == EventKind::Send ? n_send_ : n_start_)++ > 0) {
          ++loss_.misplaced;
          break;
        }
        if (e.ref != kCommWorld) ++loss_.p2p_comm;
        if (e.kind == EventKind::Send && e.aux != 0) ++loss_.fields;
        if (e.kind == EventKind::IsendStart) {
          if (e.aux >= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) ++loss_.fields;
          starts_[e.aux] = Start{e.peer, e.tag, e.bytes};
        }
        break;
      }
      case EventKind::Recv:
        if (n_recv_++ > 0) {
          ++loss_.misplaced;
          break;
        }
        if (e.ref != kCommWorld) ++loss_.p2p_comm;
        if (e.aux != 0) ++loss_.fields;
        break;
      case EventKind::IrecvPost:
        if (n_post_++ > 0) {
          ++loss_.misplaced;
          break;
        }
        if (e.ref != kCommWorld || e.peer < kNoRank ||
            (e.peer != kNoRank && static_cast<std::size_t>(e.peer) >= n_) ||
            e.aux >= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) ||
            e.bytes > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
          ++loss_.fields;
        posts_[e.aux] = true;
        break;
      case EventKind::IrecvComplete: {
        const auto it = posts_.find(e.aux);
        if (it == posts_.end()) {
          ++loss_.requests;
          break;
        }
        if (e.ref != kCommWorld) ++loss_.p2p_comm;
        posts_.erase(it);
        break;
      }
      case EventKind::IsendComplete: {
        const auto it = starts_.find(e.aux);
        if (it == starts_.end()) {
          ++loss_.requests;
          break;
        }
        if (e.ref != kCommWorld || e.peer != it->second.peer || e.tag != it->second.tag ||
            e.bytes != it->second.bytes)
          ++loss_.fields;
        starts_.erase(it);
        break;
      }
      case EventKind::CollBegin:
        if (n_begin_++ > 0) ++loss_.misplaced;
        if (e.peer != kNoRank || e.tag != 0 || e.bytes != 0 || e.aux != 0) ++loss_.fields;
        break;
      case EventKind::CollEnd:
        if (n_end_++ > 0) ++loss_.misplaced;
        if (e.tag != 0 || e.bytes > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) ||
            e.aux > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
          ++loss_.fields;
        break;
      default:
        break;
    }
  }

  const Trace& t_;
  std::size_t n_;
  Losses& loss_;
  CallRoots& roots_;
  std::unordered_map<std::uint64_t, bool> posts_;
  std::unordered_map<std::uint64_t, Start> starts_;
  int depth_ = 0;
  Time call_begin_ = 0;
  MpiOp call_op_ = MpiOp::None;
  // Per call: events seen, to check the call's shape.
  int n_send_ = 0, n_recv_ = 0, n_start_ = 0, n_post_ = 0, n_begin_ = 0, n_end_ = 0;
  std::size_t call_first_ = 0;
};

// Collective roots: the reader gives instance k of a communicator the root of the first
// rank whose k-th call is flagged as root (50100003 = 1 where CollEnd.peer is the rank).
void count_root_losses(const CallRoots& roots, std::size_t n, Losses& loss) {
  for (std::size_t c = 0; c < roots.size(); ++c) {
    std::size_t most = 0;
    for (const auto& v : roots[c]) most = std::max(most, v.size());
    for (std::size_t k = 0; k < most; ++k) {
      Rank root = kNoRank;
      for (std::size_t r = 0; r < n && root == kNoRank; ++r)
        if (k < roots[c][r].size() && roots[c][r][k] == static_cast<Rank>(r)) root = static_cast<Rank>(r);
      for (std::size_t r = 0; r < n; ++r)
        if (k < roots[c][r].size() && roots[c][r][k] != root) ++loss.coll_root;
    }
  }
}

// The messages, as the matcher pairs them, and a count of what cannot be written. Returns
// the messages; sends_of[r] lists (send event index, message) of rank r.
std::vector<CommRec> pair_messages(const Trace& t, Losses& loss,
                                   std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>>& sends_of) {
  const std::size_t n = t.ranks();
  CallRoots roots(t.defs.comms.size(), std::vector<std::vector<Rank>>(n));
  CallShapes shapes(t, loss, roots);
  for (std::size_t r = 0; r < n; ++r) shapes.rank(r);
  count_root_losses(roots, n, loss);

  const Matching m = Matching::build(t);
  loss.unmatched_sends += m.unmatched.sends;
  loss.unmatched_recvs += m.unmatched.receives;
  std::vector<CommRec> msgs;
  msgs.reserve(m.messages.size());
  sends_of.assign(n, {});
  for (const Message& msg : m.messages) {
    const Event& s = t.locations[msg.sender].events[msg.send_event];
    const Event& r = t.locations[msg.receiver].events[msg.recv_event];
    if (s.bytes != r.bytes || s.bytes > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      ++loss.size_mismatch;
    sends_of[static_cast<std::size_t>(msg.sender)].emplace_back(msg.send_event, static_cast<std::uint32_t>(msgs.size()));
    msgs.push_back(CommRec{msg.sender, msg.receiver, to_ns(m.enter(t, msg.sender, msg.send_call)), to_ns(s.time),
                           to_ns(m.enter(t, msg.receiver, msg.recv_post_call)), to_ns(r.time), s.bytes, s.tag});
  }
  for (auto& v : sends_of) std::sort(v.begin(), v.end());
  return msgs;
}

bool label_safe(const std::string& s) {
  if (s.find_first_of("\r\n") != std::string::npos) return false;
  if (!s.empty() && (std::isspace(static_cast<unsigned char>(s.front())) ||
                     std::isspace(static_cast<unsigned char>(s.back()))))
    return false;
  return true;
}

std::string label_of(const std::string& s) {
  std::string l = s;
  for (char& c : l)
    if (c == '\n' || c == '\r') c = ' ';
  return l;
}

void write_pcf(std::ostream& os, const Trace& t) {
  Out o(os);
  o.str(
      "DEFAULT_OPTIONS\n\n"
      "LEVEL               THREAD\n"
      "UNITS               NANOSEC\n"
      "LOOK_BACK           100\n"
      "SPEED               1\n"
      "FLAG_ICONS          ENABLED\n"
      "NUM_OF_STATE_COLORS 1000\n"
      "YMAX_SCALE          37\n\n\n"
      "DEFAULT_SEMANTIC\n\n"
      "THREAD_FUNC          State As Is\n\n\n"
      "STATES\n");
  for (std::size_t i = 0; i < kStates.size(); ++i) {
    o.unum(i);
    o.str("    ");
    o.str(kStates[i].label);
    o.end_line();
  }
  o.str("\n\nSTATES_COLOR\n");
  for (std::size_t i = 0; i < kStates.size(); ++i) {
    o.unum(i);
    o.str("    ");
    o.str(kStates[i].color);
    o.end_line();
  }
  struct TypeDef {
    std::int64_t type;
    const char* label;
  };
  const std::array<TypeDef, 3> mpi_types = {{{kPrvMpiPointToPoint, "MPI Point-to-point"},
                                             {kPrvMpiCollective, "MPI Collective Comm"},
                                             {kPrvMpiOther, "MPI Other"}}};
  for (const auto& td : mpi_types) {
    o.str("\n\nEVENT_TYPE\n9    ");
    o.num(td.type);
    o.str("    ");
    o.str(td.label);
    o.str("\nVALUES\n0   Outside MPI\n");
    std::vector<std::pair<std::int64_t, MpiOp>> vals;
    for (std::size_t k = 1; k < static_cast<std::size_t>(MpiOp::Count_); ++k) {
      const auto op = static_cast<MpiOp>(k);
      if (op_code(op).type == td.type) vals.emplace_back(op_code(op).value, op);
    }
    std::sort(vals.begin(), vals.end());
    for (const auto& [v, op] : vals) {
      o.num(v);
      o.str("   ");
      o.str(mpi_name(op));
      o.end_line();
    }
  }
  o.str(
      "\n\nEVENT_TYPE\n"
      "1    50100001    Send Size in MPI Global OP\n"
      "1    50100002    Recv Size in MPI Global OP\n"
      "1    50100003    Root in MPI Global OP\n"
      "1    50100004    Communicator in MPI Global OP\n");
  o.str("\n\nEVENT_TYPE\n0    60000019    User function\nVALUES\n0      End\n");
  for (std::size_t i = 0; i < t.defs.regions.size(); ++i) {
    if (t.defs.regions[i].op != MpiOp::None) continue;
    o.unum(i + 1);
    o.str("      ");
    o.str(label_of(t.defs.regions[i].name));
    o.end_line();
  }
  o.str(
      "\n\nEVENT_TYPE\n"
      "0    69000001    waitlab: request completed (request id + 1)\n"
      "0    69000002    waitlab: request started (request id + 1)\n"
      "0    69000003    waitlab: receive source (task, 0 = any)\n"
      "0    69000004    waitlab: receive tag\n"
      "0    69000005    waitlab: receive size\n"
      "0    69000006    waitlab: user function left (region id + 1)\n"
      "0    69000007    waitlab: send destination (task)\n"
      "0    69000008    waitlab: send tag\n");
  o.str("\n\nEVENT_TYPE\n0    69000010    waitlab: MPI region\nVALUES\n");
  for (std::size_t i = 0; i < t.defs.regions.size(); ++i) {
    if (t.defs.regions[i].op == MpiOp::None) continue;
    o.unum(i + 1);
    o.str("      ");
    o.str(label_of(t.defs.regions[i].name));
    o.end_line();
  }
  o.finish();
}

void write_row(std::ostream& os, std::size_t n) {
  Out o(os);
  o.str("LEVEL CPU SIZE ");
  o.unum(n);
  o.end_line();
  for (std::size_t i = 1; i <= n; ++i) {
    o.unum(i);
    o.ch('.');
    o.str(kNodeName);
    o.end_line();
  }
  o.str("\nLEVEL NODE SIZE 1\n");
  o.str(kNodeName);
  o.str("\n\nLEVEL THREAD SIZE ");
  o.unum(n);
  o.end_line();
  for (std::size_t i = 1; i <= n; ++i) {
    o.str("THREAD 1.");
    o.unum(i);
    o.str(".1");
    o.end_line();
  }
  o.finish();
}

void write_prv(std::ostream& os, const Trace& t, const std::vector<CommRec>& msgs,
               const std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>>& sends_of) {
  const std::size_t n = t.ranks();
  Out o(os);
  std::int64_t end = 0;
  for (const auto& l : t.locations)
    if (!l.events.empty()) end = std::max(end, to_ns(l.events.back().time));
  o.str("#Paraver (");
  o.str(kHeaderDate);
  o.str("):");
  o.num(end);
  o.str("_ns:1(");
  o.unum(n);
  o.str("):1:");
  o.unum(n);
  o.ch('(');
  for (std::size_t i = 0; i < n; ++i) o.str(i == 0 ? "1:1" : ",1:1");
  o.str("),");
  o.unum(t.defs.comms.size());
  o.end_line();
  for (std::size_t c = 0; c < t.defs.comms.size(); ++c) {
    const auto& m = t.defs.comms[c].members;
    o.str("c:1:");
    o.unum(c + 1);
    o.ch(':');
    o.unum(m.size());
    for (Rank r : m) {
      o.ch(':');
      o.num(static_cast<std::int64_t>(r) + 1);
    }
    o.end_line();
  }

  std::vector<std::unique_ptr<RankRecords>> gens;
  gens.reserve(n);
  using Key = std::pair<std::int64_t, std::uint32_t>;  // (time, rank)
  std::priority_queue<Key, std::vector<Key>, std::greater<>> heap;
  for (std::size_t r = 0; r < n; ++r) {
    gens.push_back(std::make_unique<RankRecords>(t, static_cast<Rank>(r), sends_of[r]));
    if (gens.back()->ready()) heap.emplace(gens.back()->front().time, static_cast<std::uint32_t>(r));
  }
  const auto thread = [&o](std::int64_t task) {
    o.num(task);  // cpu = task
    o.str(":1:");
    o.num(task);
    o.str(":1:");
  };
  while (!heap.empty()) {
    const std::uint32_t r = heap.top().second;
    heap.pop();
    RankRecords& g = *gens[r];
    const Rec& rec = g.front();
    const std::int64_t task = static_cast<std::int64_t>(r) + 1;
    switch (rec.kind) {
      case Rec::State:
        o.str("1:");
        thread(task);
        o.num(rec.time);
        o.ch(':');
        o.num(rec.end);
        o.ch(':');
        o.num(rec.state);
        break;
      case Rec::Event:
        o.str("2:");
        thread(task);
        o.num(rec.time);
        for (std::size_t k = 0; k < rec.pairs; ++k) {
          o.ch(':');
          o.num(rec.pv[k].first);
          o.ch(':');
          o.num(rec.pv[k].second);
        }
        break;
      case Rec::Comm: {
        const CommRec& m = msgs[static_cast<std::size_t>(rec.end)];
        o.str("3:");
        thread(static_cast<std::int64_t>(m.src) + 1);
        o.num(m.lsend);
        o.ch(':');
        o.num(m.psend);
        o.ch(':');
        thread(static_cast<std::int64_t>(m.dst) + 1);
        o.num(m.lrecv);
        o.ch(':');
        o.num(m.precv);
        o.ch(':');
        o.unum(m.size);
        o.ch(':');
        o.num(m.tag);
        break;
      }
    }
    o.end_line();
    g.pop();
    if (g.ready()) heap.emplace(g.front().time, r);
  }
  o.finish();
}

std::vector<std::string> describe(const Trace& t, const Losses& l) {
  std::vector<std::string> out;
  const auto add = [&out](std::uint64_t count, const std::string& what) {
    if (count > 0) out.push_back(std::to_string(count) + " " + what);
  };
  if (t.has_truth || std::any_of(t.locations.begin(), t.locations.end(), [](const Location& x) { return !x.truth.empty(); })) {
    std::uint64_t n = 0;
    for (const auto& x : t.locations) n += x.truth.size();
    out.push_back("ground truth: " + std::to_string(n) + " compute intervals (not written)");
  }
  if (!t.attributes.empty())
    out.push_back("attributes: " + std::to_string(t.attributes.size()) + " (not written)");
  // Of a measured trace: one thread per task is written, its states made from its MPI calls.
  std::uint64_t states = 0, samples = 0, omp = 0;
  for (const auto* v : {&t.locations, &t.threads})
    for (const auto& x : *v) {
      states += x.states.size();
      samples += x.counters.size();
      omp += x.omp.size();
    }
  add(t.threads.size(), "worker threads with their events, states and counters (not written: one thread per task)");
  add(states, "state intervals (not written: the states are made from the MPI calls)");
  add(samples, "hardware-counter samples (not written)");
  add(omp, "OpenMP intervals: parallel regions, parallel functions, tasks (not written)");
  std::uint64_t names = 0;
  if (t.defs.comms.empty()) {
    out.push_back("no communicators: MPI_COMM_WORLD is synthesized when reading");
  } else {
    std::vector<char> all(t.ranks(), 0);
    for (Rank m : t.defs.comms[0].members) all[static_cast<std::size_t>(m)] = 1;
    if (std::find(all.begin(), all.end(), 0) != all.end())
      out.push_back("communicator 0 does not hold every rank (read back in another order, or a synthesized MPI_COMM_WORLD)");
    for (std::size_t c = 0; c < t.defs.comms.size(); ++c)
      if (t.defs.comms[c].name != (c == 0 ? std::string("MPI_COMM_WORLD") : comm_name(static_cast<std::int64_t>(c) + 1)))
        ++names;
  }
  add(names, "communicator names (Paraver has none; read back as MPI_COMM_WORLD / \"communicator <id>\")");
  std::uint64_t files = 0, labels = 0, mpi_names = 0;
  std::array<int, static_cast<std::size_t>(MpiOp::Count_)> per_op{};
  for (const auto& r : t.defs.regions) {
    if (r.file != (r.op == MpiOp::None ? std::string() : std::string("MPI"))) ++files;
    if (!label_safe(r.name)) ++labels;
    if (r.op != MpiOp::None && (r.name != mpi_name(r.op) || per_op[static_cast<std::size_t>(r.op)]++ > 0)) ++mpi_names;
  }
  add(files, "region source files (not written)");
  add(labels, "region names with line breaks or surrounding blanks (changed in the .pcf labels)");
  add(mpi_names, "MPI regions that are not the first with the canonical name of their operation (read back as it)");
  add(l.unmatched_sends, "point-to-point sends without a matching receive (lost: no communication record)");
  add(l.unmatched_recvs, "point-to-point receives without a matching send (lost: no communication record)");
  add(l.size_mismatch, "messages whose receive size differs from the send size (read back with the send size)");
  add(l.p2p_comm, "point-to-point events on a communicator other than MPI_COMM_WORLD (read back on it)");
  add(l.stray, "communication events outside any MPI call (lost)");
  add(l.nested, "MPI calls inside MPI calls (lost)");
  add(l.user_in_mpi, "user region events inside MPI calls (lost)");
  add(l.unbalanced, "MPI Leave events without an Enter (lost)");
  add(l.misplaced, "communication events an MPI call of that kind cannot hold (lost)");
  add(l.coll_missing, "collective calls without exactly one CollBegin and CollEnd (read back with one each)");
  add(l.coll_time, "CollBegin/CollEnd events not at their call's Enter/Leave (read back there)");
  add(l.coll_root, "collective calls whose root Extrae's is-root flag cannot express (read back with another root)");
  add(l.requests, "request completions without a started request (lost)");
  add(l.fields, "events with fields Paraver does not keep (op, flags, unused or out-of-range fields)");
  return out;
}

}  // namespace

std::vector<std::string> write_paraver(const Trace& trace, const std::string& prv_path) {
  validate(trace, prv_path);
  Losses loss;
  std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> sends_of;
  const std::vector<CommRec> msgs = pair_messages(trace, loss, sends_of);
  const std::string base = base_of(prv_path);
  write_file_atomic(base + ".pcf", [&](std::ostream& os) { write_pcf(os, trace); });
  write_file_atomic(base + ".row", [&](std::ostream& os) { write_row(os, trace.ranks()); });
  write_file_atomic(prv_path, [&](std::ostream& os) { write_prv(os, trace, msgs, sends_of); });
  return describe(trace, loss);
}

}  // namespace waitlab::trace
