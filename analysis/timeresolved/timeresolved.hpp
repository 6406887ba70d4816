// waitlab::analysis — time-resolved efficiency metrics (ALGORITHMS.md §6; paper 004; the POP
// definitions).
//
// Promise: pure functions of a Trace (no printing, no files, no SimGrid).
//   - An MPI call is a region with Region::is_mpi() (an op, or file "MPI": MPI_Comm_rank and the
//     like are MPI too), at any depth: the time from the Enter of an outermost MPI call to its
//     Leave is in MPI.
//   - The span and the units depend on the Convention (below):
//     Waitlab: rank p is "in the run" from start_p = the Leave of its MPI_Init (its first event
//       if it has none) to end_p = the Enter of its MPI_Finalize (its last event if none);
//       T0 = min_p start_p, T1 = max_p end_p. Units: the ranks with events. States ignored.
//     Bsc, Scalasca: [T0, T1] = the declared span (Trace::has_declared_span()), else the first
//       to the last event over every location and thread; every unit spans all of [T0, T1].
//       Units: the ranks, then Trace::threads, each with an event or a state interval.
//     T = T1 − T0.
//   - Useful time U_u of unit u: the time of its span outside every MPI call; Bsc and Scalasca
//     also take out the union of the unit's state intervals (Location::states). Before a unit's
//     first event and after its last it is in no MPI call. A trace without any MPI call (`mpi`
//     false) thus has all of its span's time useful but its states.
//   - Whole run (P = units): LB = mean_u U_u / max_u U_u (1 when all are 0), CommE = max U / T,
//     PE = LB·CommE = Σ U_u / (P·T), SerE = max U / T_ideal, TrfE = T_ideal / T, so CommE =
//     SerE·TrfE. T_ideal = I(T1) − I(T0) (below), clamped to [max U_ideal, T]. estimates[0] =
//     make_estimate(source, T_ideal, max U_ideal, CommE), max U_ideal the largest useful time
//     of the ideal run: compute keeps its length on an ideal network, so it is the measured
//     max U — except under Bsc with MPI calls, where it is BSC's (Dimemas replays every stretch
//     outside MPI as computation, states included): max over the ranks of the time outside MPI
//     calls from T0 to where the rank's records end (below). Bsc: eff.ser_e and eff.trf_e are
//     estimates[0]'s (SerE = max U_ideal / T_ideal, TrfE = CommE / SerE).
//   - An ideal reference gives every event of every rank (not of Trace::threads) an ideal
//     timestamp: lamport_reference() replays the trace on an ideal network (a Lamport clock per
//     rank; time outside MPI calls keeps its length — before MPI_Init and after MPI_Finalize
//     too —, time inside them is 0 except for waiting: a receive completes at max(own clock,
//     the send's posting), a send of ≥ 32 KiB completes (at the Leave of the call that
//     completes it) at max(own clock, the posting of its receive), a collective (MPI_Init and
//     MPI_Finalize included) ends at its latest entry); network_reference() takes the
//     timestamps of a re-simulation on an ideal network (event k of rank p ↔ event k of rank p).
//   - I(t) = max_p ideal_p(t) over the ranks with events; ideal_p interpolates linearly between
//     consecutive events of p. Waitlab: constant before the first and after the last event,
//     I(T0) = min_p ideal(start_p), I(T1) = max_p ideal(end_p). Bsc, Scalasca: before the first
//     and after the last event the time keeps its length (ideal_p(t) = ideal(first) − (first −
//     t), ideal(last) + (t − last)), so that a trace of ranks that only compute has T_ideal =
//     T; with no rank event at all the ideal run is the run. Bsc: a rank ends where its
//     records end, as in Dimemas' replay — at the start of its trailing trace::kStateNoRecord
//     stretch (the Paraver reader's time no record covers), or at its last event or counter
//     sample if later: ideal_p(t) = ideal_p(stop_p) for t ≥ stop_p (no such stretch: no stop).
//     I is made non-decreasing.
//   - Windows w = [a, b): L_w = b − a, U_{u,w} = U_u clipped to w, Ideal_w = I(b) − I(a)
//     clamped to [max_u U_{u,w}, L_w]; LB_w, CommE_w, SerE_w = max U_{u,w} / Ideal_w, TrfE_w =
//     Ideal_w / L_w, PE_w as above. The unclamped I(b) − I(a) of all windows sum to T_ideal
//     (I(b) − I(T0) is reported per window). Cumulative metrics use [T0, b): the same formulas
//     with U_u clipped to [T0, b) and I(b) − I(T0); at the last window they are the whole-run
//     values (Bsc's TrfE up to rounding). Only PE aggregates linearly: T·PE = Σ_w L_w·PE_w.
//   - A cut (cut.hpp: a time range, a region's instances, a range of iterations) restricts all of
//     the above to its pieces inside [T0, T1] (a_k, b_k): T0 and T1 become the first piece's start
//     and the last one's end, T = Σ_k (b_k − a_k), U_u = U_u clipped to the pieces (counter samples
//     likewise), T_ideal = Σ_k I(b_k) − I(a_k) with I(t) = max_p ideal_p(t) at every piece end
//     (Bsc: a rank's useful time in the ideal run, the time outside MPI calls in the pieces up to
//     where its records end). Windows lie on the cut's time axis — the pieces laid end to end —
//     so that L_w is the time of the pieces in w, and Ideal_w = Σ over the pieces' parts in w of
//     I(end) − I(start); events count in a window only inside a piece. Without a cut this is the
//     single piece [T0, T1]: the same numbers to the bit.
//   - Windows: fixed length, N equal windows, or adaptive: N equal base windows merged left to
//     right while any unit with events has fewer than ⌈√P'⌉ events in the merged window (P' =
//     the units with events; a deficient last window is merged into the one before). Events
//     are counted in [a, b) (the last window includes T1); Window::events counts the units'.
//   - Counters (Trace::counters says which): a CounterSample at time t of a unit counts when
//     the time just before t (t − ε) is useful for the unit: some useful stretch (a, b] holds t
//     — for Bsc and Scalasca, the unit is in no MPI call and in no state interval at t − ε,
//     inside the span — and it is the unit's first sample at t (a later one at the same time
//     counted over an empty stretch: Extrae's MPI_Cart_create, Enter and Leave in one
//     nanosecond, both with PAPI values; Paraver gives the burst the first one's). Sums over
//     the units; ipc = instructions / cycles, frequency_hz = cycles / Σ_u U_u.
// Cost: O(events + states + samples + units·windows) time; O(units + windows) memory besides the
// ideal timestamps and one unit's useful stretches.
// On the replay engine (issue 32) every process replays the ranks it owns: the Lamport replay is
// the engine's causal forward replay (engine/causal.hpp: a receive gets its send's ideal time, a
// large send its receive's posting, a collective's members their latest entry), each unit's
// facts for the span go to process 0, and the per-window sums, maxima, events, ideal boundary
// times and counter totals are folded along the units in unit order (ranks, then threads) — the
// serial loops' bits for any number of processes. The one-process run is the serial function.
// The engine's types are only declared here: the simulator includes this header.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/timeresolved/cut.hpp"
#include "analysis/trace/match.hpp"
#include "analysis/trace/trace.hpp"
#include "analysis/engine/fwd.hpp"

namespace waitlab::analysis {

// Which time is the run and which time is useful (ALGORITHMS.md §6): each tool's convention.
//   Waitlab  — span: per rank from the Leave of MPI_Init to the Enter of MPI_Finalize (T0 = min,
//              T1 = max); useful: outside MPI calls inside that span; units: the ranks.
//   Bsc      — (Paraver's modelfactors, pypop) span: the whole trace, the declared span when the
//              trace has one ([0, header end] for Paraver), else first to last event of all
//              locations; useful: outside MPI calls and outside every not-useful state
//              (Location::states: only Paraver's Running counts); units: every thread of every
//              rank (Trace::locations and Trace::threads).
//   Scalasca — (Cube's POP metrics on Score-P traces) span: the declared span, else first to last
//              event of all locations; useful: outside MPI calls and outside measurement overhead
//              (Location::states); units: every location (ranks and threads).
// An MPI call is any region with Region::is_mpi() (MPI_Comm_rank and the like included).
enum class Convention : std::uint8_t { Waitlab = 0, Bsc, Scalasca };
std::string_view convention_name(Convention c);   // "waitlab", "bsc", "scalasca"
bool parse_convention(std::string_view s, Convention& c);
Convention default_convention(trace::Origin o);   // Simulated/Unknown → Waitlab, Extrae → Bsc, ScoreP → Scalasca
std::string convention_span_text(Convention c);   // one line for people: which span
std::string convention_useful_text(Convention c); // one line for people: which time is useful

// Ideal timestamps of every event (times[rank][event index]) and where they come from.
struct IdealReference {
  std::string source;  // "lamport" or "ideal_network"
  std::vector<std::vector<trace::Time>> times;
  // Lamport replay only: large sends let go without their receive (a cycle of sends waiting for
  // receives that real buffering resolved), and dependencies left unresolved (inconsistent
  // trace): each counted, the event then keeps its own clock.
  std::uint64_t relaxed_sends = 0;
  std::uint64_t unresolved = 0;
};

inline constexpr std::uint64_t kLamportEagerLimit = 32 * 1024;  // bytes: smaller sends complete at once

IdealReference lamport_reference(const trace::Trace& trace, const trace::Matching& matching);
// The replay engine's run, called by every process with its shard and the shard's matching: the
// owned ranks' ideal times (times[r − shard.owned.first]), relaxed_sends and unresolved the whole
// trace's on every process.
inline constexpr std::uint16_t kLamportChannel = 0xFE50;  // which large sends an owned rank receives
IdealReference lamport_reference(const engine::Shard& shard, const trace::Matching& matching,
                                 engine::Transport& transport);

// The timestamps of `ideal` (a re-simulation of `trace` on an ideal network). Returns false and
// says why in `why` when the two do not correspond: a different number of ranks or of events on
// a rank, or an event of another kind (the completions inside one MPI_Waitall may come in
// another order).
bool network_reference(const trace::Trace& trace, const trace::Trace& ideal, IdealReference& out, std::string& why);
// The same on the replay engine (every process, `ideal` whole on each): `out` holds the owned
// ranks' times; `why` names the lowest rank that does not correspond, on every process.
bool network_reference(const engine::Shard& shard, const trace::Trace& ideal, IdealReference& out, std::string& why,
                       engine::Transport& transport);

enum class WindowRule : std::uint8_t { Fixed = 0, Count, Adaptive };
std::string_view window_rule_name(WindowRule r);  // "fixed", "count", "adaptive"

struct WindowOptions {
  WindowRule rule = WindowRule::Count;
  double length = 0;     // s, Fixed
  std::size_t count = 50;  // Count: windows; Adaptive: base windows before merging
};

// The POP metrics of one interval. Fractions in [0, 1].
struct Efficiency {
  double lb = 0, comm_e = 0, ser_e = 0, trf_e = 0, pe = 0;
};

struct Window {
  trace::Time start = 0, end = 0;
  std::uint64_t events = 0;   // events of all ranks in [start, end)
  double useful_max = 0;      // max_p U_{p,w}, s
  double useful_mean = 0;     // mean_p U_{p,w}, s
  double ideal = 0;           // Ideal_w (clamped), s
  double ideal_end = 0;       // I(end) − I(T0), unclamped, s
  Efficiency eff;
  double cum_useful_max = 0, cum_useful_mean = 0, cum_ideal = 0;  // over [T0, end)
  Efficiency cum;
};

// The whole run on an ideal network by one estimate: the Lamport replay (the reference the
// windows use) or a re-simulation of the trace by the SMPI engine on an ideal network (Dimemas'
// way, `waitlab analyze --ideal smpi`). BSC's definitions: SerE = useful_max / t_ideal where
// useful_max is the largest useful time *of the ideal run*, TrfE = CommE / SerE.
struct IdealEstimate {
  std::string source;       // "lamport", "ideal_network", "smpi_replay"
  double t_ideal = 0;       // s
  double useful_max = 0;    // max useful time of a unit in the ideal run, s
  double ser_e = 0, trf_e = 0;
};
// Where a location's records end (Bsc's ideal run ends a rank there): the start of its trailing
// trace::kStateNoRecord stretch (the Paraver reader's time no record covers, up to the declared
// end), or its last event or counter sample if later; +∞ when it has no such stretch (its
// records reach the span's end, or it has no states).
trace::Time records_end(const trace::Location& l);
// The time location l spends in [a, b] outside every MPI call (any depth): a unit's useful time
// in an ideal run, where computation keeps its length and MPI takes none.
double time_outside_mpi(const trace::Definitions& defs, const trace::Location& l, trace::Time a, trace::Time b);

// SerE and TrfE of an ideal run against the measured CommE (fractions; 0 when t_ideal is 0).
IdealEstimate make_estimate(std::string source, double t_ideal, double useful_max, double comm_e);

// Hardware-counter totals over the useful stretches of every unit (a CounterSample counts when the
// stretch that ends at its time is useful). Zero without counters.
struct UsefulCounters {
  bool instructions = false, cycles = false;  // which the trace has
  double useful_instructions = 0;             // Σ over units
  double useful_cycles = 0;
  double ipc = 0;            // instructions / cycles (both present)
  double frequency_hz = 0;   // cycles / Σ useful time (cycles present)
};

struct TimeResolvedResult {
  Convention convention = Convention::Waitlab;
  std::size_t units = 0;      // P of the averages: ranks, or threads of every rank (Bsc, Scalasca)
  bool mpi = true;            // the trace has MPI calls (false: every unit is all useful time; say so)
  UsefulCounters counters;
  std::vector<IdealEstimate> estimates;  // [0]: the reference of the windows; more added by the caller
  std::size_t ranks = 0;
  trace::Time t0 = 0, t1 = 0;
  double elapsed = 0;          // T
  double ideal = 0;            // T_ideal (clamped to [max U, T])
  double ideal_unclamped = 0;  // max_p ideal(end_p) − min_p ideal(start_p)
  double useful_max = 0, useful_mean = 0;
  // The largest useful time of a unit in the ideal run: Bsc with MPI calls, BSC's (max over the
  // ranks of the time outside MPI calls from T0 to where the rank's records end); otherwise
  // useful_max.
  double useful_ideal_max = 0;
  std::vector<double> useful;  // U_p per unit (ranks first, then Trace::threads in order)
  Efficiency eff;
  std::string source;
  std::uint64_t relaxed_sends = 0, unresolved = 0;
  WindowOptions windows_rule;
  std::uint64_t min_events = 0;  // adaptive: ⌈√P⌉
  std::vector<Window> windows;
  // The cut (none: the whole run), its pieces clipped to the run's span [run_t0, run_t1].
  Cut cut;
  trace::Time run_t0 = 0, run_t1 = 0;
};

// Throws std::invalid_argument when the reference does not have one time per event, or the
// window options are not usable (length ≤ 0, count 0); InputError when the cut leaves nothing of
// the run's span.
TimeResolvedResult time_resolved(const trace::Trace& trace, const IdealReference& reference,
                                 const WindowOptions& options = {}, Convention convention = Convention::Waitlab,
                                 const Cut& cut = {});
// The replay engine's run, called by every process with its shard and the owned ranks' part of
// the reference (times[r − shard.owned.first]; relaxed_sends, unresolved the whole trace's).
// Process 0 gets the whole result, the serial one to the bit; every other process an empty one.
// `cut` must be the same on every process (resolve_cut on the shard makes it so).
TimeResolvedResult time_resolved(const engine::Shard& shard, const IdealReference& reference,
                                 const WindowOptions& options, Convention convention, engine::Transport& transport,
                                 const Cut& cut = {});

}  // namespace waitlab::analysis
