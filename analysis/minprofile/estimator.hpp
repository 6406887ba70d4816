// waitlab::minprofile — the minimum-duration wait-state estimator (ALGORITHMS.md §5, paper 000).
//
// Promise: a RankProfile sees one rank's MPI calls one at a time, as a PMPI wrapper does
// (call path, MPI function, bytes moved, duration; the caller classifies each call by the
// wait-state pattern it can hold) and keeps only accumulators per category: O(categories)
// memory, one pass, no trace. estimate() turns the profiles of all ranks into waiting time
// per [call path × pattern × rank]: for every call, everything beyond the minimum duration
// of its category — (pattern, function, log2 size class) — counts as waiting:
//   - point-to-point patterns (Late Sender, Late Receiver) use the rank's own minimum;
//   - collective patterns (Wait at NxN, Wait at Barrier, Late Broadcast on non-root ranks,
//     Early Reduce on the root, Early Scan) use the minimum over all ranks, which a
//     profiler computes with one reduction at the end (GlobalMinima::slot()).
// The same accumulators give the variants (all computed in the same pass):
//   paper           the estimator as the paper defines it;
//   per_peer        point-to-point minima per peer set as well (collectives as paper);
//   p<Q>            the Q-th percentile of the category's durations instead of its minimum
//                   (a sparse log-histogram per category, 1/32-octave buckets, exact at the
//                   bucket's smallest value); waiting per accumulator is max(0, Σd − n·P_Q);
//   exclude_tested  calls whose requests a test at entry found complete are left out of the
//                   minimum and of the waiting time (the paper's tried fix for MPI_Waitall).
// Nothing here knows traces, SimGrid or MPI: the simulator, the trace analysis and the PMPI
// profiler (profiler/) all feed the same class.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace waitlab::minprofile {

// The wait-state patterns the estimator quantifies. Names equal analysis::pattern_name's.
enum class Pattern : std::uint8_t {
  None = 0,  // a call that cannot wait (MPI_Isend, MPI_Bcast on the root, ...): not estimated
  LateSender,
  LateReceiver,
  WaitAtNxN,
  WaitAtBarrier,
  LateBroadcast,
  EarlyReduce,
  EarlyScan,
  Count_
};
inline constexpr std::size_t kPatternCount = static_cast<std::size_t>(Pattern::Count_);
std::string_view pattern_name(Pattern p);  // "late_sender", ...; "none"
// Inverse of pattern_name; Pattern::Count_ for an unknown name.
Pattern pattern_from_name(std::string_view name);
// Collective patterns use the minimum over all ranks.
bool is_global(Pattern p);

enum class Variant : std::uint8_t { Paper = 0, PerPeer, Percentile, ExcludeTested, Count_ };
inline constexpr std::size_t kVariantCount = static_cast<std::size_t>(Variant::Count_);
// "paper", "per_peer", "p5" (with the percentile), "exclude_tested".
std::string variant_name(Variant v, double percentile);

// Message-size class on a log2 scale: 0 for 0 bytes, else floor(log2(bytes)) + 1 (1..64).
int size_class(std::uint64_t bytes);
inline constexpr int kSizeClasses = 65;
inline constexpr int kMaxFunctions = 32;  // function ids are < 32

// One MPI call as a PMPI wrapper sees it.
struct CallRecord {
  std::uint32_t path = 0;      // call-path id in the caller's numbering
  std::uint8_t function = 0;   // MPI function id (< kMaxFunctions; waitlab uses trace::MpiOp)
  Pattern pattern = Pattern::None;
  std::uint64_t bytes = 0;     // bytes the call moves (sent + received)
  std::uint64_t peers = 0;     // identity of the call's peer set (per_peer); 0 for collectives
  double duration = 0;         // s
  bool tested_complete = false;  // a test at entry found every request of the call complete
};

// A sparse histogram of durations: buckets of 1/32 octave, each with its count and the
// smallest duration in it, so that quantiles are exact up to one bucket and the minimum is exact.
class Histogram {
 public:
  struct Bucket {
    std::int32_t index;
    std::uint64_t count;
    double min;
  };
  void add(double d);
  void merge(const Histogram& other);
  // The smallest value of the bucket holding the ceil(q/100 · n)-th smallest duration
  // (at least the first); +inf when empty.
  double quantile(double q) const;
  std::uint64_t count() const { return n_; }
  std::size_t buckets() const { return b_.size(); }
  // The buckets, sorted by index, and a histogram of such buckets (its count their counts' sum):
  // what travels between the processes of the replay engine (analysis/minprofile/minprofile.cpp).
  const std::vector<Bucket>& bucket_list() const { return b_; }
  static Histogram of_buckets(std::vector<Bucket> buckets);

 private:
  static std::int32_t index_of(double d);
  std::vector<Bucket> b_;  // sorted by index
  std::uint64_t n_ = 0;
};

// The minima of the collective categories over all ranks. A profiler fills `min_all` and
// `min_untested` with one MPI_Allreduce(MPI_MIN) over 2 × kSlots doubles; the simulator and
// the trace analysis merge in memory, which also gives the percentiles (NaN when not known:
// the percentile variant is then not computed for collective patterns).
struct GlobalMinima {
  static constexpr std::size_t kSlots = static_cast<std::size_t>(kMaxFunctions) * kSizeClasses;
  static std::size_t slot(std::uint8_t function, int size_class) {
    return static_cast<std::size_t>(function) * kSizeClasses + static_cast<std::size_t>(size_class);
  }
  std::vector<double> min_all = std::vector<double>(kSlots, std::numeric_limits<double>::infinity());
  std::vector<double> min_untested = std::vector<double>(kSlots, std::numeric_limits<double>::infinity());
  std::vector<double> percentile = std::vector<double>(kSlots, std::numeric_limits<double>::quiet_NaN());
};

// Waiting time of one [call path × pattern] on one rank, per variant.
struct RankRow {
  std::uint32_t path = 0;
  Pattern pattern = Pattern::None;
  std::uint64_t calls = 0;
  double time = 0;  // total duration of those calls, s
  std::array<double, kVariantCount> waiting{};
};

class RankProfile {
 public:
  explicit RankProfile(double percentile = 5.0);

  void add(const CallRecord& c);  // Pattern::None calls are ignored
  // The rank's execution time (MPI_Init entry to MPI_Finalize exit), for its wait ratios.
  void set_span(double begin, double end) {
    begin_ = begin;
    end_ = end;
  }
  double begin() const { return begin_; }
  double end() const { return end_; }
  double percentile() const { return q_; }

  // Folds this rank's collective minima into `g` (min_all, min_untested only).
  void contribute_minima(GlobalMinima& g) const;
  // Folds this rank's collective histograms into `hist` (kSlots entries; in-memory merging).
  void contribute_histograms(std::vector<Histogram>& hist) const;
  // Waiting per [call path × pattern], given the collective minima of all ranks; sorted by
  // (path, pattern). A variant whose minimum is unknown (no call left, NaN percentile) gives 0.
  std::vector<RankRow> rows(const GlobalMinima& g) const;
  // Number of categories held (accumulators + minimum statistics), for the memory claim.
  std::size_t categories() const { return acc_.size() + mins_.size() + peer_mins_.size(); }

 private:
  struct Acc {  // one (path, function, pattern, size class, peer set)
    std::uint32_t path;
    std::uint8_t function;
    Pattern pattern;
    std::uint8_t cls;
    std::uint64_t peers;
    std::uint64_t n = 0, n_untested = 0;
    double sum = 0, sum_untested = 0;
  };
  struct Min {  // one (pattern, function, size class)
    std::uint8_t function;
    Pattern pattern;
    std::uint8_t cls;
    double min = std::numeric_limits<double>::infinity();
    double min_untested = std::numeric_limits<double>::infinity();
    Histogram hist;
  };
  struct PeerMin {  // one (pattern, function, size class, peer set), point-to-point only
    std::uint8_t function;
    Pattern pattern;
    std::uint8_t cls;
    std::uint64_t peers;
    double min = std::numeric_limits<double>::infinity();
  };
  const Min* find_min(Pattern p, std::uint8_t f, std::uint8_t cls) const;
  double q_;
  double begin_ = 0, end_ = 0;
  std::vector<Acc> acc_;  // small, searched from the most recently used entry
  std::vector<Min> mins_;
  std::vector<PeerMin> peer_mins_;
  std::size_t last_acc_ = 0;
};

// The estimate of a whole run.
struct Row {
  std::uint32_t path = 0;  // index into Result::paths
  Pattern pattern = Pattern::None;
  std::int32_t rank = 0;
  std::uint64_t calls = 0;
  double time = 0;
  std::array<double, kVariantCount> waiting{};
};
struct Total {  // one [call path × pattern], summed over ranks
  std::uint32_t path = 0;
  Pattern pattern = Pattern::None;
  std::uint64_t calls = 0;
  double time = 0;
  std::array<double, kVariantCount> waiting{};
};
struct Result {
  double percentile = 5;
  std::array<bool, kVariantCount> computed{};  // the percentile needs histograms of all ranks
  std::size_t ranks = 0;
  double wall_time = 0;            // latest rank end − earliest rank begin
  std::vector<double> rank_time;   // per rank, end − begin
  std::vector<std::string> paths;  // call-path names, sorted
  std::vector<Row> rows;           // sorted by (path, pattern, rank)
  std::vector<Total> totals() const;  // sorted by (path, pattern)
  // Σ waiting / (ranks × wall_time): the paper's wait ratio of a call path.
  double ratio(const Total& t, Variant v) const;
};
// A result held once and shared (the registry's minprofile result, analysis/minprofile/entry.cpp).
using Shared = std::shared_ptr<const Result>;

// Sets g.percentile from the merged collective histograms (kSlots entries): the q-th percentile
// of each slot that holds a duration.
void set_percentiles(GlobalMinima& g, const std::vector<Histogram>& hist, double q);

// Estimates from the profiles of all ranks (index = rank); `path_names[id]` names the
// callers' call-path ids. Merges minima and histograms in memory.
Result estimate(const std::vector<RankProfile>& ranks, const std::vector<std::string>& path_names);
// The same from rows computed rank by rank (the profiler's gather).
Result assemble(std::vector<std::vector<RankRow>> rows_per_rank, std::vector<double> begin,
                std::vector<double> end, const std::vector<std::string>& path_names, double percentile,
                bool percentile_computed);

// The result format shared by `waitlab run`, `waitlab validate` and libwaitlab-profiler:
// minprofile.csv (one row per call path × pattern × rank) and minprofile.json (metadata and
// one entry per call path × pattern with its wait ratio per variant). docs/minprofile.md.
std::string to_csv(const Result& r);
std::string to_json(const Result& r, const std::string& source);

}  // namespace waitlab::minprofile
