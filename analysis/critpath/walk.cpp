// waitlab::analysis — the critical path's walk as a token between processes (walk.hpp).
#include "analysis/critpath/walk.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>

#include "analysis/engine/bytes.hpp"

namespace waitlab::analysis {

using engine::ByteReader;
using engine::Bytes;
using engine::ByteWriter;
using trace::Matching;

namespace {

// The call on a rank whose Enter..Leave range holds event k (k < Leave), or -1.
std::int64_t call_of(const std::vector<trace::Call>& calls, std::uint32_t k) {
  auto it = std::upper_bound(calls.begin(), calls.end(), k,
                             [](std::uint32_t e, const trace::Call& c) { return e < c.enter; });
  if (it == calls.begin()) return -1;
  --it;
  return k < it->leave ? it - calls.begin() : -1;
}

// What the walk carries from process to process: where it stands, its counters and the latest
// segment (still growing backwards).
struct Token {
  Rank rank = trace::kNoRank;
  std::uint32_t k = 0;
  Time t = 0;
  Time end = 0;
  std::uint64_t budget = 0;
  std::uint64_t jumps = 0;
  std::uint64_t stored = 0;  // segments finished so far (each kept where it was emitted)
  std::uint32_t stop_k = 0;  // the walk ends at this event of its rank (its first, or its MPI_Init Enter)
  PathSegment open{};
  bool has_open = false;
  bool complete = true;
};

// The walk's event k: its time and the call path after it, and — when it lies in a call with a
// wait state with a cause — what the jump needs besides the cause call's Enter; jt is the moment
// the walk lands at (once decided).
struct Candidate {
  Time tk = 0;
  CallPathId path = trace::kNoCallPath;
  Time leave = 0;  // of the waiting call
  double seconds = 0;
  Rank cause_rank = trace::kNoRank;
  std::uint32_t cause_call = 0;
  std::uint32_t call_enter = 0;  // event index of the waiting call's Enter
  Time jt = 0;
};

// One event of a waiting call, lent to the cause rank's owner: its time, the call path after it.
struct Step {
  Time time = 0;
  CallPathId path = trace::kNoCallPath;
};

// The states of the walk on a process. Walk: the next step back at (token.rank, token.k). Decide:
// the candidate's cause rank is here; decide the jump. Land: jump into the cause call (here).
// Back: no jump; take the activity after event k. Done: the walk has ended (the token is final).
// Only Walk (to the rank's owner), Decide (to the cause rank's owner, with the waiting call's
// events up to k) and Done travel.
enum class Kind : std::uint8_t { Walk, Decide, Land, Back, Done };

struct Stored {
  std::uint64_t index = 0;  // in emission order (the path backwards)
  PathSegment segment;
};

class Walker {
 public:
  Walker(const engine::Shard& shard, const Matching& m, const WaitStateResult& w,
         engine::Transport& transport, PathBounds bounds)
      : shard_(shard), m_(m), w_(w), transport_(transport), bounds_(bounds) {}

  // Takes part in the walk until it ends; the final token.
  Token run(Rank end_rank, std::uint32_t end_call, std::uint64_t budget) {
    std::optional<Token> done;
    if (shard_.owned.holds(end_rank)) {
      const auto& ev = shard_.location(end_rank).events;
      Token start;
      start.rank = end_rank;
      start.k = static_cast<std::uint32_t>(ev.size() - 1);
      start.t = start.end = ev.back().time;
      if (bounds_ == PathBounds::Scalasca && end_call != kNoCall) {  // up to the MPI_Finalize Enter
        const std::uint32_t enter = m_.calls[static_cast<std::size_t>(end_rank)][end_call].enter;
        start.k = enter > 0 ? enter - 1 : 0;
        start.t = start.end = ev[enter].time;
      }
      start.stop_k = stop_event(end_rank);
      start.budget = budget;
      done = advance(Kind::Walk, start, {});
    }
    while (!done) {
      const Bytes parcel = transport_.receive(kCriticalPathChannel).bytes;
      ByteReader in(parcel);
      const auto kind = in.get<Kind>();
      const auto token = in.get<Token>();
      const auto candidate = in.get<Candidate>();
      if (kind == Kind::Done) return token;
      if (kind == Kind::Decide)
        lent_ = Lent{token.rank, candidate.call_enter, in.get_vector<Step>(), candidate};
      done = advance(kind, token, candidate);
    }
    const Bytes final_note = ByteWriter().put(Kind::Done).put(*done).put(Candidate{}).bytes();
    for (int p = 0; p < transport_.size(); ++p)
      if (p != transport_.self()) transport_.post(p, kCriticalPathChannel, final_note);
    transport_.flush();
    return *done;
  }

  const std::vector<Stored>& stored() const { return stored_; }

 private:
  // A waiting call's events lent by its rank's owner (Decide): the walk goes on through them here
  // without the token coming back until it leaves the call.
  struct Lent {
    Rank rank = trace::kNoRank;
    std::uint32_t first = 0;  // event index of steps[0]
    std::vector<Step> steps;
    Candidate candidate;
    bool holds(Rank r, std::uint32_t k) const { return r == rank && k >= first && k - first < steps.size(); }
  };

  // Runs the walk here while it stays here: the final token if it ends here, nothing once it has
  // gone to another process.
  std::optional<Token> advance(Kind kind, Token tok, Candidate c) {
    while (true) {
      switch (kind) {
        case Kind::Walk:
          if (!shard_.owned.holds(tok.rank) && !lent_.holds(tok.rank, tok.k)) return pass(Kind::Walk, tok, c);
          if (tok.budget-- == 0) {
            tok.complete = false;
            return finish(tok);
          }
          if (!load(tok, c)) {
            kind = Kind::Back;
            break;
          }
          if (!shard_.owned.holds(c.cause_rank)) return pass(Kind::Decide, tok, c);
          kind = Kind::Decide;
          break;
        case Kind::Decide:
          kind = decide(tok, c, enter(c.cause_rank, c.cause_call)) ? Kind::Land : Kind::Back;
          break;
        case Kind::Land:
          if (!land(tok, c)) return finish(tok);
          kind = Kind::Walk;
          break;
        case Kind::Back:
          if (step_back(tok, c.path, c.tk)) return finish(tok);
          kind = Kind::Walk;
          break;
        case Kind::Done:
          throw std::logic_error("critpath: a walk after its end");
      }
    }
  }

  // The walk's event (token.rank, token.k) into c: true if it lies in a call with a wait state with
  // a cause (the largest such instance of the call), from this shard or from the lent call.
  bool load(const Token& tok, Candidate& c) {
    if (!shard_.owned.holds(tok.rank)) {
      const Step& s = lent_.steps[tok.k - lent_.first];
      c = lent_.candidate;
      c.tk = s.time;
      c.path = s.path;
      return true;
    }
    const auto r = static_cast<std::size_t>(tok.rank);
    c.tk = shard_.time(tok.rank, tok.k);
    c.path = m_.path_after[r][tok.k];
    const std::int64_t call = call_of(m_.calls[r], tok.k);
    const WaitState* j = jump_of(tok.rank, call);
    if (!j) return false;
    const trace::Call& waiting = m_.calls[r][static_cast<std::size_t>(call)];
    c.leave = shard_.time(tok.rank, waiting.leave);
    c.seconds = j->seconds;
    c.cause_rank = j->cause_rank;
    c.cause_call = j->cause_call;
    c.call_enter = waiting.enter;
    return true;
  }

  // The jump rule: the walk jumps if the wait state ends after the event and the walk is
  // still inside it; if so, the segment up to the jump is emitted and c.jt set.
  bool decide(Token& tok, Candidate& c, Time cause_enter) {
    const Time wait_end = std::min(cause_enter, c.leave);
    const Time wait_start = wait_end - c.seconds;
    const Time jt = std::min(tok.t, wait_end);
    if (!(tok.t > wait_start && jt >= c.tk)) return false;
    emit(tok, tok.rank, c.path, jt, tok.t);
    c.jt = jt;
    return true;
  }

  // Continues on the delaying rank at the moment the waiting ended: the last event at or before
  // it inside the cause call, else in the whole trace of that rank; false if there is none.
  bool land(Token& tok, const Candidate& c) {
    const auto& cev = shard_.location(c.cause_rank).events;
    const trace::Call& cc = m_.calls[static_cast<std::size_t>(c.cause_rank)][c.cause_call];
    const auto later = [](Time v, const trace::Event& e) { return v < e.time; };
    auto lo = cev.begin() + cc.enter, hi = cev.begin() + cc.leave + 1;
    auto it = std::upper_bound(lo, hi, c.jt, later);
    if (it == lo) {
      it = std::upper_bound(cev.begin(), cev.end(), c.jt, later);
      if (it == cev.begin()) {
        tok.complete = false;
        return false;
      }
    }
    tok.rank = c.cause_rank;
    tok.k = static_cast<std::uint32_t>((it - cev.begin()) - 1);
    tok.t = c.jt;
    tok.stop_k = stop_event(c.cause_rank);
    ++tok.jumps;
    return true;
  }

  // No jump at event k: the activity after it is on the path; true if the walk has ended.
  bool step_back(Token& tok, CallPathId path, Time tk) {
    emit(tok, tok.rank, path, tk, tok.t);
    tok.t = tk;
    if (tok.k <= tok.stop_k) return true;
    --tok.k;
    return false;
  }

  void emit(Token& tok, Rank r, CallPathId path, Time lo, Time hi) {
    if (!(hi > lo) || path == trace::kNoCallPath) return;
    if (tok.has_open && tok.open.rank == r && tok.open.path == path && tok.open.start == hi) {
      tok.open.start = lo;
      return;
    }
    if (tok.has_open) stored_.push_back(Stored{tok.stored++, tok.open});
    tok.open = PathSegment{r, path, lo, hi};
    tok.has_open = true;
  }

  Token finish(Token& tok) {
    if (tok.has_open) stored_.push_back(Stored{tok.stored++, tok.open});
    tok.has_open = false;
    return tok;
  }

  // Sends the walk on: Walk to the owner of the token's rank; Decide to the owner of the cause
  // rank, with the waiting call's events from its Enter to k.
  std::optional<Token> pass(Kind kind, const Token& tok, const Candidate& c) {
    ByteWriter note;
    note.put(kind).put(tok).put(c);
    std::vector<Step> steps;
    if (kind == Kind::Decide)
      for (std::uint32_t e = c.call_enter; e <= tok.k; ++e)
        steps.push_back(Step{shard_.time(tok.rank, e), m_.path_after[static_cast<std::size_t>(tok.rank)][e]});
    note.put(steps);
    const Rank to = kind == Kind::Walk ? tok.rank : c.cause_rank;
    transport_.post(shard_.partition.owner(to), kCriticalPathChannel, note.bytes());
    transport_.flush();
    lent_ = Lent{};
    return std::nullopt;
  }

  // The instance of (rank, call) the path jumps at: the largest one with a cause. Looked up once
  // per call the walk enters, not once per event of it.
  const WaitState* jump_of(Rank r, std::int64_t call) {
    if (call < 0) return nullptr;
    if (r == cached_rank_ && call == cached_call_) return cached_;
    cached_rank_ = r;
    cached_call_ = call;
    cached_ = nullptr;
    const auto [lo, hi] = w_.of_call(r, static_cast<std::uint32_t>(call));
    for (std::size_t i = lo; i < hi; ++i) {
      const WaitState& x = w_.instances[i];
      if (bounds_ == PathBounds::Scalasca && (x.pattern == Pattern::WaitAtInit || x.pattern == Pattern::WaitAtFinalize ||
                                              x.pattern == Pattern::EarlyScan))
        continue;  // scout's critical path jumps at none of these
      if (has_cause(x.pattern) && x.cause_rank != trace::kNoRank &&
          (!cached_ || x.seconds > cached_->seconds))
        cached_ = &x;
    }
    return cached_;
  }

  // Where the walk ends on owned rank r: the Enter of its first MPI_Init under Scalasca's bounds
  // (the walk has come back to it), else (or without one) its first event.
  std::uint32_t stop_event(Rank r) const {
    if (bounds_ != PathBounds::Scalasca) return 0;
    for (const trace::Call& c : m_.calls[static_cast<std::size_t>(r)])
      if (c.op == trace::MpiOp::Init) return c.enter;
    return 0;
  }

  Time enter(Rank r, std::uint32_t call) const {
    return shard_.time(r, m_.calls[static_cast<std::size_t>(r)][call].enter);
  }

  const engine::Shard& shard_;
  const Matching& m_;
  const WaitStateResult& w_;
  engine::Transport& transport_;
  PathBounds bounds_;
  std::vector<Stored> stored_;
  Lent lent_;
  Rank cached_rank_ = trace::kNoRank;
  std::int64_t cached_call_ = -1;
  const WaitState* cached_ = nullptr;
};

// Every process's segments in time order (the reverse of emission order), on every process.
std::vector<PathSegment> gather_segments(engine::Transport& transport, const std::vector<Stored>& mine,
                                         std::uint64_t count) {
  const std::vector<Bytes> parts = transport.gather(engine::encode(mine));
  std::vector<PathSegment> segments;
  if (transport.self() == 0) {
    segments.resize(static_cast<std::size_t>(count));
    std::vector<bool> seen(segments.size(), false);
    for (const Bytes& part : parts)
      for (const Stored& s : engine::decode<std::vector<Stored>>(part)) {
        if (s.index >= count || seen[s.index])
          throw std::logic_error("critpath: a segment is missing or twice");
        seen[s.index] = true;
        segments[static_cast<std::size_t>(count - 1 - s.index)] = s.segment;
      }
    if (std::find(seen.begin(), seen.end(), false) != seen.end())
      throw std::logic_error("critpath: a segment is missing or twice");
  }
  return engine::decode<std::vector<PathSegment>>(transport.broadcast(engine::encode(segments)));
}

}  // namespace

WalkedPath walk_path(const engine::Shard& shard, const Matching& m, const WaitStateResult& w,
                     engine::Transport& transport, Rank end_rank, std::uint32_t end_call, std::uint64_t budget,
                     PathBounds bounds) {
  Walker walker(shard, m, w, transport, bounds);
  const Token last = walker.run(end_rank, end_call, budget);
  WalkedPath path;
  path.segments = gather_segments(transport, walker.stored(), last.stored);
  path.start = last.t;
  path.end = last.end;
  path.jumps = last.jumps;
  path.complete = last.complete;
  return path;
}

}  // namespace waitlab::analysis
