// Checks what libwaitlab-profiler wrote for the scenario of scenario.hpp.
//
//   check_profile scenario DIR [--test-off]   minprofile.csv/json of one run: the call paths,
//                                              patterns and call counts the scenario makes,
//                                              waiting times that match the injected delays,
//                                              the variants' invariants, CSV == JSON
//   check_profile same DIR1 DIR2               two runs give the same rows, paths and counts
//   check_profile checksums FILE...            the programs printed the same checksum
//
// Waiting times are compared with the delays the scenario injects. The ranks share the cores
// with whatever else runs, and a call also lasts the time the scheduler takes to run the
// ranks it needs; the checker measures that noise in the run itself — the largest waiting
// per call on the rows without an injected delay — and allows kNoiseCalls times it per call,
// on top of kTolerance of the expected waiting and kSlack. On a quiet machine the noise is
// tens of microseconds per call and the check is tight; under heavy load it widens instead of
// failing. Two bounds hold at any load (seen with two CPU-bound processes beside the four
// ranks on two cores): a delayed row keeps at least half its expected waiting, and a row
// without delay stays below half the smallest delay of its call path.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "scenario.hpp"

using namespace profiler_test;
using nlohmann::json;

namespace {

constexpr double kTolerance = 0.20;
constexpr double kSlack = 0.005;  // s
constexpr double kNoiseCalls = 6;

static_assert(kRanks == 4, "the expectations below name the four ranks");
constexpr int N = kIterations;
constexpr int kOdd = N / 2;  // iterations with the late sender and the late root
constexpr double D = kComputeMs / 1000.0, L = kLateMs / 1000.0, R = kRootMs / 1000.0;
constexpr std::size_t kVariants = 4;  // paper, per_peer, p5, exclude_tested

std::vector<std::string> failures;

void fail(const std::string& what) {
  failures.push_back(what);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    fail("cannot read " + path);
    return {};
  }
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct CsvRow {
  std::string path, pattern;
  int rank = 0;
  std::uint64_t calls = 0;
  double time = 0;
  std::array<std::optional<double>, kVariants> wait;
};

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      out.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

std::vector<CsvRow> read_csv(const std::string& dir) {
  std::istringstream in(read_file(dir + "/minprofile.csv"));
  std::string line;
  std::getline(in, line);
  const std::string header =
      "call_path,pattern,rank,calls,time_s,wait_paper_s,wait_per_peer_s,wait_p5_s,wait_exclude_tested_s";
  if (line != header) fail("minprofile.csv: header \"" + line + "\", expected \"" + header + "\"");
  std::vector<CsvRow> rows;
  while (std::getline(in, line)) {
    const auto f = split_csv(line);
    if (f.size() != 5 + kVariants) {
      fail("minprofile.csv: bad line \"" + line + "\"");
      continue;
    }
    CsvRow r{f[0], f[1], std::stoi(f[2]), std::stoull(f[3]), std::stod(f[4]), {}};
    for (std::size_t v = 0; v < kVariants; ++v)
      if (!f[5 + v].empty()) r.wait[v] = std::stod(f[5 + v]);
    rows.push_back(r);
  }
  return rows;
}

json read_json(const std::string& dir) {
  const std::string text = read_file(dir + "/minprofile.json");
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    fail("minprofile.json: " + std::string(e.what()));
    return json::object();
  }
}

bool near(double a, double b) {
  return std::abs(a - b) <= 1e-9 + 1e-9 * std::abs(b);
}

// ---------------------------------------------------------------------------------------
// scenario

struct Expected {
  const char* path;
  const char* pattern;
  std::array<int, kRanks> calls;
};

const std::vector<Expected> kExpected = {
    {"main/MPI_Barrier", "wait_at_barrier", {N + 1, N + 1, N + 1, N + 1}},
    {"app::shift_back(int)/MPI_Wait", "late_sender", {N, N, N, N}},
    {"app::shift_back(int)/MPI_Wait", "late_receiver", {N, N, N, N}},
    {"swap_neighbours/MPI_Sendrecv", "late_sender", {N, N, N, N}},
    {"main/MPI_Allreduce", "wait_at_nxn", {N, N, N, N}},
    {"ring_exchange/MPI_Waitall", "late_sender", {N, N, N, N}},
    {"pipeline/MPI_Recv", "late_sender", {0, N, N, N}},
    {"pipeline/MPI_Send", "late_receiver", {N, N, 0, 0}},
    {"pipeline/MPI_Ssend", "late_receiver", {0, 0, N, 0}},
    {"broadcast_params/MPI_Bcast", "late_broadcast", {0, N, N, N}},
    {"reduce_results/MPI_Reduce", "early_reduce", {N, 0, 0, 0}},
    {"final_collectives/MPI_Gather", "early_reduce", {1, 0, 0, 0}},
    {"final_collectives/MPI_Scatter", "late_broadcast", {0, 1, 1, 1}},
    {"final_collectives/MPI_Allgather", "wait_at_nxn", {1, 1, 1, 1}},
    {"final_collectives/MPI_Alltoall", "wait_at_nxn", {1, 1, 1, 1}},
    {"final_collectives/MPI_Reduce_scatter", "wait_at_nxn", {1, 1, 1, 1}},
    {"final_collectives/MPI_Scan", "early_scan", {1, 1, 1, 1}},
    {"final_collectives/MPI_Exscan", "early_scan", {1, 1, 1, 1}},
    {"dup_sum/MPI_Allreduce", "wait_at_nxn", {1, 1, 1, 1}},
    {"main/MPI_Reduce", "early_reduce", {1, 0, 0, 0}},
};

// Paper-variant waiting of [call path × pattern] on each rank, from the injected delays; the
// rows with 0 measure the noise.
struct Delay {
  const char* path;
  const char* pattern;
  std::array<double, kRanks> waiting;
};

// (clang-format takes the products below for pointer declarations)
// clang-format off
const std::vector<Delay> kDelays = {
    // Rank r computes r·D before the Allreduce: it waits for rank 3, (3 − r)·D per iteration.
    {"main/MPI_Allreduce", "wait_at_nxn", {3 * D * N, 2 * D * N, D * N, 0}},
    // Odd iterations: rank 0 sends late, its right neighbour waits.
    {"ring_exchange/MPI_Waitall", "late_sender", {0, L * kOdd, 0, 0}},
    // ... and ranks 0 and 1 enter the pipeline late, ranks 2 and 3 wait.
    {"pipeline/MPI_Recv", "late_sender", {0, 0, L * kOdd, L * kOdd}},
    {"broadcast_params/MPI_Bcast", "late_broadcast", {0, R * kOdd, R * kOdd, R * kOdd}},
    {"reduce_results/MPI_Reduce", "early_reduce", {R * kOdd, 0, 0, 0}},
    {"app::shift_back(int)/MPI_Wait", "late_sender", {0, 0, 0, 0}},
    {"swap_neighbours/MPI_Sendrecv", "late_sender", {0, 0, 0, 0}},
};
// clang-format on

bool is_collective(const std::string& pattern) {
  return pattern == "wait_at_nxn" || pattern == "wait_at_barrier" || pattern == "late_broadcast" ||
         pattern == "early_reduce" || pattern == "early_scan";
}

void check_scenario(const std::string& dir, bool test_on) {
  const auto rows = read_csv(dir);
  const json j = read_json(dir);
  std::printf("%-40s %-16s %4s %6s %10s %10s %10s %10s\n", "call path", "pattern", "rank", "calls", "time s",
              "paper s", "per_peer s", "excl. s");
  for (const auto& r : rows)
    std::printf("%-40s %-16s %4d %6llu %10.4f %10.4f %10.4f %10s\n", r.path.c_str(), r.pattern.c_str(),
                r.rank, static_cast<unsigned long long>(r.calls), r.time, r.wait[0].value_or(NAN),
                r.wait[1].value_or(NAN), r.wait[3] ? std::to_string(*r.wait[3]).c_str() : "-");

  // Rows: exactly the expected ones.
  std::map<std::tuple<std::string, std::string, int>, const CsvRow*> by_key;
  for (const auto& r : rows) {
    if (!by_key.emplace(std::make_tuple(r.path, r.pattern, r.rank), &r).second)
      fail("duplicate row " + r.path + " " + r.pattern + " rank " + std::to_string(r.rank));
  }
  std::size_t expected_rows = 0;
  for (const auto& e : kExpected)
    for (int rank = 0; rank < kRanks; ++rank) {
      const int calls = e.calls[static_cast<std::size_t>(rank)];
      if (calls == 0) continue;
      ++expected_rows;
      const auto it = by_key.find(std::make_tuple(std::string(e.path), std::string(e.pattern), rank));
      if (it == by_key.end()) {
        fail(std::string("missing row ") + e.path + " " + e.pattern + " rank " + std::to_string(rank));
      } else if (it->second->calls != static_cast<std::uint64_t>(calls)) {
        fail(std::string(e.path) + " " + e.pattern + " rank " + std::to_string(rank) + ": " +
             std::to_string(it->second->calls) + " calls, expected " + std::to_string(calls));
      }
    }
  if (rows.size() != expected_rows)
    fail(std::to_string(rows.size()) + " rows, expected " + std::to_string(expected_rows) +
         " (split_sum's sub-communicator Allreduce must not appear)");

  // Waiting times against the injected delays.
  const auto find = [&](const Delay& d, int rank) -> const CsvRow* {
    const auto it = by_key.find(std::make_tuple(std::string(d.path), std::string(d.pattern), rank));
    return it == by_key.end() || !it->second->wait[0] ? nullptr : it->second;  // reported above
  };
  double noise = 0;  // s per call
  for (const auto& d : kDelays)
    for (int rank = 0; rank < kRanks; ++rank)
      if (const CsvRow* r = find(d, rank); r != nullptr && d.waiting[static_cast<std::size_t>(rank)] == 0)
        noise = std::max(noise, *r->wait[0] / static_cast<double>(r->calls));
  std::printf("noise: %.3f ms per call\n", noise * 1e3);
  for (const auto& d : kDelays) {
    double smallest = 0;  // the smallest delay of the path
    for (const double w : d.waiting)
      if (w > 0 && (smallest == 0 || w < smallest)) smallest = w;
    for (int rank = 0; rank < kRanks; ++rank) {
      const CsvRow* r = find(d, rank);
      if (r == nullptr) continue;
      const double got = *r->wait[0];
      const double want = d.waiting[static_cast<std::size_t>(rank)];
      const double tolerance =
          kTolerance * want + kSlack + kNoiseCalls * noise * static_cast<double>(r->calls);
      const std::string what = std::string(d.path) + " " + d.pattern + " rank " + std::to_string(rank) +
                               ": waiting " + std::to_string(got) + " s, expected ";
      if (std::abs(got - want) > tolerance)
        fail(what + std::to_string(want) + " s ± " + std::to_string(tolerance));
      if (want > 0 && got < want / 2) fail(what + "at least " + std::to_string(want / 2) + " s");
      if (want == 0 && smallest > 0 && got > smallest / 2)
        fail(what + "less than " + std::to_string(smallest / 2) + " s");
    }
  }

  // The variants' invariants.
  for (const auto& r : rows) {
    const std::string what = r.path + " " + r.pattern + " rank " + std::to_string(r.rank);
    if (!r.wait[0] || !r.wait[1]) {
      fail(what + ": paper or per_peer waiting missing");
      continue;
    }
    const double paper = *r.wait[0], per_peer = *r.wait[1];
    if (paper < -1e-9 || per_peer < -1e-9) fail(what + ": negative waiting");
    if (paper > r.time + 1e-9) fail(what + ": waiting longer than the calls");
    // A minimum per peer set is never below the minimum over all peers.
    if (per_peer > paper + 1e-9) fail(what + ": per_peer above paper");
    if (is_collective(r.pattern) && !near(per_peer, paper)) fail(what + ": per_peer differs from paper");
    if (r.wait[2]) fail(what + ": the percentile variant has a value (it is not computed)");
    if (test_on != r.wait[3].has_value()) {
      fail(what + (test_on ? ": exclude_tested missing" : ": exclude_tested present with the test off"));
    } else if (test_on) {
      // Only MPI_Wait/MPI_Waitall are tested; leaving calls out only lowers the waiting.
      const bool tested = r.path.ends_with("/MPI_Wait") || r.path.ends_with("/MPI_Waitall");
      if (!tested && !near(*r.wait[3], paper)) fail(what + ": exclude_tested differs from paper");
      if (*r.wait[3] < -1e-9 || *r.wait[3] > paper + 1e-9)
        fail(what + ": exclude_tested not within [0, paper]");
    }
  }

  // The JSON: metadata, and the CSV rows summed per call path.
  if (j.value("format", "") != "waitlab-minprofile 1") fail("minprofile.json: format");
  if (j.value("source", "") != "libwaitlab-profiler") fail("minprofile.json: source");
  if (j.value("ranks", 0) != kRanks) fail("minprofile.json: ranks");
  if (j.value("percentile", 0.0) != 5.0) fail("minprofile.json: percentile");
  const json variants = test_on ? json{"paper", "per_peer", "exclude_tested"} : json{"paper", "per_peer"};
  if (j.value("variants", json()) != variants)
    fail("minprofile.json: variants " + j.value("variants", json()).dump());
  // Every rank sleeps at least this long between MPI_Init and MPI_Finalize.
  const double slept = N * 3 * D + kOdd * (L + 2 * R);
  const double wall = j.value("wall_time_s", 0.0);
  if (wall < slept || wall > 10 * slept)
    fail("minprofile.json: wall_time_s " + std::to_string(wall) + ", expected at least " +
         std::to_string(slept));
  std::map<std::pair<std::string, std::string>, std::vector<const CsvRow*>> per_path;
  for (const auto& r : rows) per_path[{r.path, r.pattern}].push_back(&r);
  const json paths = j.value("call_paths", json::array());
  if (paths.size() != per_path.size())
    fail("minprofile.json: " + std::to_string(paths.size()) + " call paths, the CSV has " +
         std::to_string(per_path.size()));
  const std::array<const char*, kVariants> names = {"paper", "per_peer", "p5", "exclude_tested"};
  for (const auto& p : paths) {
    const std::string path = p.value("call_path", ""), pattern = p.value("pattern", "");
    const auto it = per_path.find({path, pattern});
    if (it == per_path.end()) {
      fail("minprofile.json: " + path + " " + pattern + " is not in the CSV");
      continue;
    }
    std::uint64_t calls = 0;
    for (const CsvRow* r : it->second) calls += r->calls;
    if (p.value("calls", std::uint64_t{0}) != calls)
      fail("minprofile.json: calls of " + path + " " + pattern);
    for (std::size_t v = 0; v < kVariants; ++v) {
      if (!p["waiting_s"].contains(names[v])) continue;
      double sum = 0;
      for (const CsvRow* r : it->second) sum += r->wait[v].value_or(0);
      const double w = p["waiting_s"][names[v]].get<double>();
      if (std::abs(w - sum) > 1e-9 + 1e-9 * std::abs(sum))
        fail("minprofile.json: waiting_s." + std::string(names[v]) + " of " + path + " " + pattern);
      const double ratio = p["wait_ratio"][names[v]].get<double>();
      if (std::abs(ratio - w / (kRanks * wall)) > 1e-9)
        fail("minprofile.json: wait_ratio." + std::string(names[v]) + " of " + path + " " + pattern);
    }
  }
}

// ---------------------------------------------------------------------------------------
// same, checksums

void check_same(const std::string& a, const std::string& b) {
  auto keys = [](const std::vector<CsvRow>& rows) {
    std::vector<std::tuple<std::string, std::string, int, std::uint64_t>> k;
    for (const auto& r : rows) k.emplace_back(r.path, r.pattern, r.rank, r.calls);
    return k;
  };
  if (keys(read_csv(a)) != keys(read_csv(b)))
    fail("minprofile.csv: the rows (call path, pattern, rank, calls) of " + a + " and " + b + " differ");
  auto paths = [](const json& j) {
    std::vector<std::tuple<std::string, std::string, std::uint64_t>> k;
    for (const auto& p : j.value("call_paths", json::array()))
      k.emplace_back(p.value("call_path", ""), p.value("pattern", ""), p.value("calls", std::uint64_t{0}));
    return k;
  };
  const json ja = read_json(a), jb = read_json(b);
  if (paths(ja) != paths(jb)) fail("minprofile.json: the call paths of " + a + " and " + b + " differ");
  if (ja.value("variants", json()) != jb.value("variants", json()) ||
      ja.value("ranks", 0) != jb.value("ranks", 0))
    fail("minprofile.json: the variants or ranks of " + a + " and " + b + " differ");
}

void check_checksums(const std::vector<std::string>& files) {
  std::string first;
  for (const auto& f : files) {
    const std::string text = read_file(f);
    if (text.rfind("checksum ", 0) != 0) {
      fail(f + ": no checksum line");
      continue;
    }
    std::printf("%s: %s", f.c_str(), text.c_str());
    if (first.empty()) first = text;
    if (text != first) fail(f + ": checksum differs from " + files.front());
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() >= 2 && args[0] == "scenario" && args.size() <= 3 &&
      (args.size() == 2 || args[2] == "--test-off")) {
    check_scenario(args[1], args.size() == 2);
  } else if (args.size() == 3 && args[0] == "same") {
    check_same(args[1], args[2]);
  } else if (args.size() >= 2 && args[0] == "checksums") {
    check_checksums({args.begin() + 1, args.end()});
  } else {
    std::fprintf(stderr,
                 "usage: check_profile scenario DIR [--test-off] | same DIR1 DIR2 | checksums FILE...\n");
    return 2;
  }
  std::fflush(stdout);
  for (const auto& f : failures) std::fprintf(stderr, "FAIL: %s\n", f.c_str());
  return failures.empty() ? 0 : 1;
}
