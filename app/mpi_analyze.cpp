// waitlab::app — `waitlab-mpi analyze` (app/mpi_analyze.hpp): the steps of `waitlab analyze`
// (app/analyze.hpp) with the trace read per process and the analyses on the replay engine.
#include "app/mpi_analyze.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <limits>
#include <cstdint>
#include <exception>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "analysis/clock/correct.hpp"
#include "analysis/engine/bytes.hpp"
#include "analysis/engine/mpi/mpi_transport.hpp"
#include "analysis/engine/partition.hpp"
#include "analysis/engine/shard.hpp"
#include "analysis/registry/registry.hpp"
#include "analysis/timeresolved/output.hpp"
#include "analysis/trace/trace_io.hpp"
#include "analysis/trace/trace_part.hpp"
#include "app/analyze.hpp"
#include "app/cli_common.hpp"
#include "app/output_dir.hpp"
#include "app/version.hpp"
#include "app/waitlab_child.hpp"
#include "util/error.hpp"

namespace waitlab::app {

namespace {

using engine::ByteReader;
using engine::ByteWriter;
using engine::Bytes;

void put_string(ByteWriter& w, const std::string& s) { w.put(std::vector<char>(s.begin(), s.end())); }
std::string get_string(ByteReader& r) {
  const std::vector<char> c = r.get_vector<char>();
  return {c.begin(), c.end()};
}

// The failure of one step on this process, if it failed.
template <class Body>
std::optional<Failure> attempt(Body&& body) {
  try {
    body();
    return std::nullopt;
  } catch (...) {
    return failure_of(std::current_exception());
  }
}

// D8: after a step, every process learns whether any failed; the lowest failed process's failure
// is the one said (on process 0 only) and every process returns its exit code.
std::optional<Failure> agree(engine::Transport& t, const std::optional<Failure>& mine) {
  if (t.sum(mine ? 1 : 0) == 0) return std::nullopt;
  ByteWriter w;
  w.put(static_cast<std::int32_t>(mine ? mine->code : 0));
  if (mine) put_string(w, mine->message);
  const std::vector<Bytes> all = t.gather(w.bytes());
  Failure first;
  for (const Bytes& b : all) {
    ByteReader r(b);
    first.code = r.get<std::int32_t>();
    if (first.code == 0) continue;
    first.message = get_string(r);
    break;
  }
  const Bytes code = t.broadcast(ByteWriter().put(static_cast<std::int32_t>(first.code)).bytes());
  first.code = ByteReader(code).get<std::int32_t>();
  return first;
}

// What process 0 says of the trace: the merged skipped kinds and the sizes, from every part.
void gather_trace_facts(engine::Transport& t, const trace::TracePart& part, const trace::SkippedKinds& skipped,
                        const std::string& path, ReadTrace& rt) {
  std::uint64_t events = 0;
  for (const auto& l : part.locations) events += l.events.size();
  for (const auto& l : part.threads) events += l.events.size();
  rt.events = t.sum(events);
  rt.threads = t.sum(part.threads.size());
  rt.ranks = part.ranks;
  ByteWriter w;
  w.put(static_cast<std::uint64_t>(skipped.size()));
  for (const auto& [what, n] : skipped) {
    put_string(w, what);
    w.put(n);
  }
  const std::vector<Bytes> all = t.gather(w.bytes());
  std::vector<trace::SkippedKinds> parts;
  for (const Bytes& b : all) {
    ByteReader r(b);
    trace::SkippedKinds kinds(r.get<std::uint64_t>());
    for (auto& [what, n] : kinds) {
      what = get_string(r);
      n = r.get<std::uint64_t>();
    }
    parts.push_back(std::move(kinds));
  }
  if (t.self() == 0) rt.skipped = trace::merge_skipped(path, parts);
}

// The head of the trace a process keeps once its part is a shard's: what the outputs read of a
// Trace (definitions, attributes, origin, span), no events.
trace::Trace head_of(const trace::TracePart& part) {
  trace::Trace head;
  head.defs = part.defs;
  head.attributes = part.attributes;
  head.has_truth = part.has_truth;
  head.origin = part.origin;
  head.span_begin = part.span_begin;
  head.span_end = part.span_end;
  head.counters = part.counters;
  return head;
}

// The first and last time of a part's events, widened to the trace's declared span
// (analysis::check_window_count); first > last if there is neither.
struct Span {
  double first = std::numeric_limits<double>::infinity();
  double last = -std::numeric_limits<double>::infinity();
};
Span span_of(const trace::TracePart& part) {
  Span s;
  for (const auto* locations : {&part.locations, &part.threads})
    for (const auto& l : *locations)
      if (!l.events.empty()) {
        s.first = std::min(s.first, l.events.front().time);
        s.last = std::max(s.last, l.events.back().time);
      }
  if (part.span_end >= part.span_begin) {
    s.first = std::min(s.first, part.span_begin);
    s.last = std::max(s.last, part.span_end);
  }
  return s;
}

class MpiAnalyze {
 public:
  MpiAnalyze(engine::Transport& t, const AnalyzeArgs& args, std::ostream& out, std::ostream& err)
      : t_(t), args_(args), out_(out), err_(err) {}

  int run() {
    if (!step([&] {
          options_ = analyze_options(args_);
          inputs_.add_trace(args_.trace);  // every file of the trace, checked to be a file before any is opened
        }))
      return code_;
    if (!step([&] { read(); })) return code_;
    gather_trace_facts(t_, part_, skipped_, args_.trace, rt_);
    if (t_.self() == 0)
      for (const auto& w : rt_.warnings) err_ << "waitlab: warning: " << w << "\n";
    apply_convention(options_, args_, part_.origin);
    // The clocks corrected on the engine (analysis/clock: every process takes part), then the
    // windows bounded from the corrected span, as `waitlab analyze` does before the output directory.
    engine::Shard shard = engine::Shard::of_part(part_, *partition_, t_.self());
    std::optional<Failure> failed = attempt([&] { rt_.clock_report = clock::correct_clocks(shard, t_, options_.clock); });
    if (failed) abort_job(*failed);
    const Span span = span_of(part_);
    const double first = t_.min(span.first), last = t_.max(span.last);
    if (!step([&] {
          if (options_.sel.has("timeresolved")) analysis::check_window_count(first, last, rt_.events, options_.tri);
        }))
      return code_;
    const std::string dir = analyze_output_dir(args_);
    if (!step([&] {
          if (t_.self() != 0) return;
          check_output_dir(dir);  // a file in the way is said before the analyses, not after them
          inputs_.check_output_dir(dir);
        }))
      return code_;
    std::optional<analysis::AnalysisRun> run;
    failed = attempt([&] {
      run = analysis::run_analyses_sharded(shard, t_, options_.sel.names,
                                           analysis_options(options_.sel, std::nullopt, options_.tri));
    });
    if (failed && failed->everywhere) {  // no process is left waiting: said once, a normal end
      if (t_.self() == 0) print_error(err_, failed->message, failed->code);
      return failed->code;
    }
    if (failed) abort_job(*failed);
    return step([&] {
             if (t_.self() != 0) return;
             AnalysisReport r;
             static_cast<analysis::AnalysisRun&>(r) = std::move(*run);
             r.trace = &rt_.trace;
             const double smpi_host_seconds =
                 add_smpi_estimate(r, rt_, args_, [](const ReadTrace&, const AnalyzeArgs& args,
                                                     const analysis::TimeResolvedResult& measured) {
                   return smpi_ideal_by_child(args, measured);
                 });
             write_analysis_outputs(args_, rt_, r, inputs_, dir, smpi_host_seconds, out_);
           })
               ? 0
               : code_;
  }

 private:
  // Runs one step on every process; false (code_ set, the failure said once) if any failed. A
  // step's body never talks to the other processes: one that failed in it would leave them waiting.
  template <class Body>
  bool step(Body&& body) {
    const std::optional<Failure> failed = agree(t_, attempt(std::forward<Body>(body)));
    if (!failed) return true;
    if (t_.self() == 0) print_error(err_, failed->message, failed->code);
    code_ = failed->code;
    return false;
  }

  // The clock correction and the analyses talk among the processes all along: a process that
  // fails among them cannot wait for the others to agree, so it says its failure and ends the
  // job (MPI_Abort).
  [[noreturn]] void abort_job(const Failure& failed) {
    print_error(std::cerr, failed.message, failed.code);
    t_.abort(failed.code);
    std::terminate();  // not reached: abort() ends the job
  }

  void read() {
    const std::vector<std::uint64_t> counts = trace::location_event_counts(args_.trace);
    partition_ = engine::Partition::balanced(counts, t_.size());
    const engine::LocationRange range = partition_->range(t_.self());
    part_ = trace::read_trace_part(args_.trace, static_cast<trace::Rank>(range.first),
                                   static_cast<trace::Rank>(range.last), &skipped_, &rt_.warnings);
    if (t_.self() == 0) rt_.trace = head_of(part_);
  }

  engine::Transport& t_;
  const AnalyzeArgs& args_;
  std::ostream& out_;
  std::ostream& err_;
  int code_ = 0;
  AnalyzeOptions options_;
  Inputs inputs_;
  std::optional<engine::Partition> partition_;
  trace::TracePart part_;
  trace::SkippedKinds skipped_;  // what this part's reader left out
  ReadTrace rt_;
};

}  // namespace

int mpi_analyze_main(int argc, const char* const* argv) {
  engine::MpiTransport t;
  // Process 0 speaks for all: the others' output goes nowhere.
  std::ostringstream quiet;
  std::ostream& out = t.self() == 0 ? std::cout : quiet;
  std::ostream& err = t.self() == 0 ? std::cerr : quiet;
  CLI::App cli{"waitlab-mpi analyze: the trace analyses of `waitlab analyze` over the processes of an MPI job, each "
               "reading only its share of the trace's ranks; process 0 writes the outputs, byte for byte those of "
               "`waitlab analyze`.",
               "waitlab-mpi"};
  cli.set_version_flag("--version", std::string("waitlab-mpi ") + kVersion);
  cli.require_subcommand(1);
  AnalyzeArgs args;
  auto* analyze = cli.add_subcommand(
      "analyze", "Run the trace analyses on a trace (.wlt, OTF2, Paraver); write DIR/summary.json and one CSV per table");
  add_analyze_options(*analyze, args);
  refuse_empty_values(cli);
  // Every process parses the same arguments: they fail alike, and process 0 says it.
  if (const std::string why = non_utf8_argument(argc, argv); !why.empty()) return print_error(err, why, 2);
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return cli.exit(e, out, err);  // --help, --version
    return print_error(err, std::string(e.what()) + " (see waitlab-mpi analyze --help)", 2);
  }
  return MpiAnalyze(t, args, out, err).run();
}

}  // namespace waitlab::app
