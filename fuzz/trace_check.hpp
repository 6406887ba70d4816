// waitlab fuzz targets — what a Trace from a reader must hold (fuzz/README.md).
//
// Promise: check_trace(what, t) checks the invariants the event model states
// (analysis/trace/trace.hpp) and the analyses index by without checks; a Trace that breaks one is
// a finding (the reader should have thrown InputError): location i is rank i (thread 0); worker
// threads belong to a rank, are numbered >= 1 and ordered by (rank, thread); MPI_COMM_WORLD
// exists when there are ranks; communicator members are ranks of the trace; every event's ref
// names a definition; event, truth, state and counter times are finite and ordered as
// trace.hpp says; truth records only with has_truth; a declared span is finite.
#pragma once

#include <cmath>
#include <cstddef>
#include <string>

#include "analysis/trace/match.hpp"
#include "analysis/trace/trace.hpp"
#include "fuzz/fuzz_common.hpp"

namespace waitlab::fuzz {

namespace detail {

[[noreturn]] inline void broken(const char* what, const std::string& why) {
  std::fprintf(stderr,
               "\n==waitlab-fuzz== FINDING in %s: returned a Trace that breaks the event model "
               "(analysis/trace/trace.hpp): %s\n",
               what, why.c_str());
  std::fflush(stderr);
  std::abort();
}

inline std::string num(double v) {  // every digit: "backwards" may be one ulp
  char b[32];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

inline std::string loc_name(const trace::Location& l) {
  return "rank " + std::to_string(l.rank) + " thread " + std::to_string(l.thread);
}

inline void check_location(const char* what, const trace::Trace& t, const trace::Location& l) {
  const std::string who = loc_name(l);
  for (std::size_t e = 0; e < l.events.size(); ++e) {
    const auto& ev = l.events[e];
    if (!std::isfinite(ev.time)) broken(what, who + ", event " + std::to_string(e) + ": time not finite");
    if (e > 0 && ev.time < l.events[e - 1].time)
      broken(what, who + ", event " + std::to_string(e) + ": time goes backwards (" + num(ev.time) +
                       " after " + num(l.events[e - 1].time) + ")");
    if (static_cast<unsigned>(ev.kind) > static_cast<unsigned>(trace::EventKind::CollEnd) ||
        static_cast<unsigned>(ev.op) >= static_cast<unsigned>(trace::MpiOp::Count_))
      broken(what, who + ", event " + std::to_string(e) + ": unknown kind or MPI op");
    if (!t.defs.defines_ref(ev))
      broken(what,
             who + ", event " + std::to_string(e) + ": ref " + std::to_string(ev.ref) + " is not defined");
  }
  if (!t.has_truth && !l.truth.empty()) broken(what, who + ": truth records without has_truth");
  for (std::size_t k = 0; k < l.truth.size(); ++k) {
    const auto& c = l.truth[k];
    if (!std::isfinite(c.start) || !std::isfinite(c.end))
      broken(what, who + ", truth " + std::to_string(k) + ": not finite");
    if (k > 0 && c.start < l.truth[k - 1].start)
      broken(what, who + ", truth " + std::to_string(k) + ": out of order");
    if (c.region >= t.defs.regions.size())
      broken(what, who + ", truth " + std::to_string(k) + ": undefined region");
  }
  for (std::size_t k = 0; k < l.states.size(); ++k) {
    const auto& s = l.states[k];
    if (!std::isfinite(s.begin) || !std::isfinite(s.end))
      broken(what, who + ", state interval " + std::to_string(k) + ": not finite");
    if (s.end < s.begin)
      broken(what, who + ", state interval " + std::to_string(k) + ": ends before it begins");
    if (k > 0 && s.begin < l.states[k - 1].end)
      broken(what, who + ", state interval " + std::to_string(k) +
                       ": overlaps the previous one or is out of order");
  }
  for (std::size_t k = 0; k < l.counters.size(); ++k) {
    if (!std::isfinite(l.counters[k].time))
      broken(what, who + ", counter sample " + std::to_string(k) + ": not finite");
    if (k > 0 && l.counters[k].time < l.counters[k - 1].time)
      broken(what, who + ", counter sample " + std::to_string(k) + ": out of order");
  }
}

}  // namespace detail

inline void check_invariants(const char* what, const trace::Trace& t) {
  using detail::broken;
  const std::size_t ranks = t.locations.size();
  for (std::size_t i = 0; i < ranks; ++i) {
    if (t.locations[i].rank != static_cast<trace::Rank>(i) || t.locations[i].thread != 0)
      broken(what, "location " + std::to_string(i) + " is " + detail::loc_name(t.locations[i]));
    detail::check_location(what, t, t.locations[i]);
  }
  for (std::size_t i = 0; i < t.threads.size(); ++i) {
    const auto& l = t.threads[i];
    if (l.rank < 0 || static_cast<std::size_t>(l.rank) >= ranks || l.thread < 1)
      broken(what, "thread location " + std::to_string(i) + " is " + detail::loc_name(l));
    if (i > 0 && (l.rank < t.threads[i - 1].rank ||
                  (l.rank == t.threads[i - 1].rank && l.thread <= t.threads[i - 1].thread)))
      broken(what, "thread location " + std::to_string(i) + " out of (rank, thread) order");
    detail::check_location(what, t, l);
  }
  if (ranks > 0 && t.defs.comms.empty()) broken(what, "ranks but no MPI_COMM_WORLD");
  for (std::size_t c = 0; c < t.defs.comms.size(); ++c)
    for (const trace::Rank m : t.defs.comms[c].members)
      if (m < 0 || static_cast<std::size_t>(m) >= ranks)
        broken(what, "communicator " + std::to_string(c) + " has member " + std::to_string(m) + " of " +
                         std::to_string(ranks) + " ranks");
  if (t.has_declared_span() && (!std::isfinite(t.span_begin) || !std::isfinite(t.span_end)))
    broken(what, "declared span not finite");
}

// WAITLAB_FUZZ_CONTRACT_ONLY=1 skips the invariants (only the exception contract holds): to
// explore past an open finding of this kind, or to calibrate a budget while one is open.
inline void check_trace(const char* what, const trace::Trace& t) {
  static const bool skip = [] {
    const char* v = std::getenv("WAITLAB_FUZZ_CONTRACT_ONLY");
    return v && *v && *v != '0';
  }();
  if (!skip) check_invariants(what, t);
  // WAITLAB_FUZZ_MATCH=1: also build the one matcher every analysis uses (match.hpp promises
  // not to throw on a trace that holds these invariants), so that a crash, a sanitizer report
  // or a hang there is a finding too. Off by default: the CI budget was calibrated without it.
  static const bool match = [] {
    const char* v = std::getenv("WAITLAB_FUZZ_MATCH");
    return v && *v && *v != '0';
  }();
  if (match) {
    try {
      const trace::Matching m = trace::Matching::build(t);
      (void)m;
    } catch (const std::exception& e) {
      detail::broken(what, std::string("Matching::build threw on it: ") + e.what());
    }
  }
}

}  // namespace waitlab::fuzz
