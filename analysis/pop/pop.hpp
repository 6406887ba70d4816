// waitlab::analysis — the POP model factors of a scaling study (ALGORITHMS.md §6): runs of the
// same program at different unit counts → efficiency and scalability factors per run.
//
// Promise: pure functions of numbers (or of TimeResolvedResults); no printing, no files.
//   - The reference run is the one with the fewest units (ties: the first given); the output
//     lists the runs sorted by units (a stable sort: ties keep the input order).
//   - Per run N against the reference ref (U = Σ useful time over the units, s):
//       PE, LB, CommE, SerE, TrfE: the run's own (TimeResolvedResult::eff);
//       computation scalability: Strong U_ref / U_N; Weak U_ref·(units_N/units_ref) / U_N;
//       global efficiency = PE × computation scalability; speed-up = T_ref / T_N;
//       the run's own T, T_ideal, useful time mean (U / units), maximum, ideal maximum and U;
//       with counters (useful instructions INS and cycles CYC, both summed over the units'
//       useful stretches): IPC = INS / CYC, frequency f = CYC / U (GHz = f / 1e9),
//       IPC scalability = IPC_N / IPC_ref, instruction scalability: Strong INS_ref / INS_N,
//       Weak INS_ref·(units_N/units_ref) / INS_N, frequency scalability = f_N / f_ref.
//     So computation scalability = IPC scalability × instruction scalability × frequency
//     scalability (up to rounding) when all three are present.
//   - A factor that needs a counter absent from the run or from the reference is std::nullopt
//     (IPC and its scalability need both counters, instructions and instruction scalability
//     INS, GHz and frequency scalability CYC). A ratio with a zero denominator is 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/timeresolved/hybrid.hpp"
#include "analysis/timeresolved/timeresolved.hpp"

namespace waitlab::analysis {

// One run of the study: the numbers the model needs.
struct PopRun {
  std::string name;
  std::size_t ranks = 0;
  std::size_t units = 0;      // P of the averages (ranks, or threads)
  double elapsed = 0;         // T, s
  double ideal = 0;           // T_ideal, s: the run on an ideal network (the estimate SerE uses)
  Efficiency eff;             // LB, CommE, SerE, TrfE, PE
  double useful_sum = 0;      // Σ useful time over the units, s
  double useful_max = 0;      // max useful time of a unit, s
  double useful_ideal_max = 0;  // max useful time of a unit in the ideal run, s (SerE's numerator)
  std::optional<double> instructions;  // useful instructions (Σ over the units)
  std::optional<double> cycles;        // useful cycles
  std::optional<HybridEfficiency> hybrid;  // a hybrid MPI+OpenMP run's factors (hybrid.hpp), else none
};
// The run's numbers from a time-resolved result (useful_sum = Σ TimeResolvedResult::useful,
// ideal, useful_max and useful_ideal_max its own; counters present as UsefulCounters says).
PopRun pop_run(std::string name, const TimeResolvedResult& r);

enum class Scaling : std::uint8_t { Strong = 0, Weak };
std::string_view scaling_name(Scaling s);  // "strong", "weak"
bool parse_scaling(std::string_view s, Scaling& out);

struct PopFactors {
  std::string name;
  std::size_t ranks = 0, units = 0;
  double elapsed = 0;             // s
  double ideal = 0;               // T_ideal, s
  double useful_sum = 0;          // s
  double useful_mean = 0;         // useful_sum / units, s
  double useful_max = 0, useful_ideal_max = 0;  // s
  Efficiency eff;                 // the run's PE, LB, CommE, SerE, TrfE
  double comp_scal = 0;           // computation scalability
  double global_e = 0;            // PE × computation scalability
  double speedup = 0;             // T_ref / T_N
  std::optional<double> ipc_scal, ins_scal, freq_scal;
  std::optional<double> ipc, ghz, instructions, cycles;
  std::optional<HybridEfficiency> hybrid;  // the run's own, passed through
};

struct PopTable {
  Scaling scaling = Scaling::Strong;
  std::size_t reference = 0;      // index into runs (0 unless empty: the fewest units come first)
  std::vector<PopFactors> runs;   // sorted by units
};

PopTable pop_model(std::vector<PopRun> runs, Scaling scaling);

}  // namespace waitlab::analysis
