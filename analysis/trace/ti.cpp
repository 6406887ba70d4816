#include "analysis/trace/ti.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string_view>
#include <utility>

#include "analysis/trace/atomic_file.hpp"
#include "util/error.hpp"

namespace waitlab::trace {

namespace fs = std::filesystem;

namespace {

// SimGrid 3.32's predefined datatype ids (the order smpi_datatype.cpp creates them in) and
// the sizes SMPI gives them, measured by tracing one send of each with `smpirun -trace-ti`.
constexpr std::array<std::uint8_t, 60> kDatatypeSize = {
    8, 4, 1, 2, 8, 4, 1, 8, 1, 1,       // 0 double, int, char, short, long, float, byte, long long, signed char, unsigned char
    2, 4, 8, 8, 16, 4, 1, 1, 2, 4,      // 10 unsigned short, unsigned, unsigned long, unsigned long long, long double, wchar, c_bool, int8, int16, int32
    8, 1, 2, 4, 8, 8, 16, 32, 8, 8,     // 20 int64, uint8, uint16, uint32, uint64, c_float_complex, c_double_complex, c_long_double_complex, aint, offset
    8, 16, 16, 8, 8, 8, 16, 16, 4, 4,   // 30 float_int, long_int, double_int, short_int, 2int, 2float, 2double, 2long, real, real4
    8, 16, 8, 16, 16, 4, 2, 4, 8, 16,   // 40 real8, real16, complex8, complex16, complex32, integer1, integer2, integer4, integer8, integer16
    32, 0, 0, 0, 0, 0, 0, 1, 0, 8};     // 50 long_double_int, (51-56 unused), 57 packed, (58), 59 count

constexpr std::array<std::string_view, static_cast<std::size_t>(TiOp::Count_)> kOpNames = {
    "compute", "sleep",     "send",      "Ssend",     "isend",      "ISsend",    "recv",
    "irecv",   "wait",      "test",      "waitall",   "waitAny",    "testany",   "sendRecv",
    "barrier", "bcast",     "reduce",    "allreduce", "gather",     "scatter",   "allgather",
    "alltoall", "gatherv",  "scatterv",  "allgatherv", "alltoallv", "reducescatter", "scan",
    "exscan",  "comm_size"};

// Actions SMPI writes that no replayer can replay from a TI trace, with the reason.
struct Unreplayable {
  std::string_view name;
  std::string_view why;
};
constexpr std::array<Unreplayable, 4> kUnreplayable = {{
    {"Start", "persistent requests (MPI_Start): TI does not record the requests' parameters"},
    {"Startall", "persistent requests (MPI_Startall): TI does not record the requests' parameters"},
    {"start", "persistent requests (MPI_Start): TI does not record the requests' parameters"},
    {"startall", "persistent requests (MPI_Startall): TI does not record the requests' parameters"},
}};

bool is_nonblocking_collective(std::string_view a) {
  static constexpr std::array<std::string_view, 14> names = {
      "ibarrier", "ibcast", "ireduce", "iallreduce", "igather", "iscatter", "iallgather",
      "ialltoall", "igatherv", "iscatterv", "iallgatherv", "ialltoallv", "ireducescatter", "iscan"};
  return std::find(names.begin(), names.end(), a) != names.end();
}

// One file being parsed: its name, the line being read, and the error helper.
class LineParser {
 public:
  LineParser(std::string file, int ranks) : file_(std::move(file)), ranks_(ranks) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(file_ + ":" + std::to_string(line_) + ": " + what);
  }
  void set_line(std::uint32_t line) { line_ = line; }
  std::uint32_t line() const { return line_; }

  double number(std::string_view tok, const char* what) const {
    double v = 0;
    const char* b = tok.data();
    const char* e = b + tok.size();
    if (!tok.empty() && *b == '+') ++b;
    const auto r = std::from_chars(b, e, v);
    if (r.ec != std::errc() || r.ptr != e || !std::isfinite(v))
      fail("expected a number for " + std::string(what) + ", got '" + std::string(tok) + "'");
    return v;
  }
  long long integer(std::string_view tok, const char* what) const {
    long long v = 0;
    const auto r = std::from_chars(tok.data(), tok.data() + tok.size(), v);
    if (r.ec != std::errc() || r.ptr != tok.data() + tok.size())
      fail("expected an integer for " + std::string(what) + ", got '" + std::string(tok) + "'");
    return v;
  }
  double non_negative(std::string_view tok, const char* what) const {
    const double v = number(tok, what);
    if (v < 0) fail(std::string(what) + " must not be negative, got " + std::string(tok));
    return v;
  }
  // Flops or seconds: finite, not negative, and at most 1e18, so that the simulated times they
  // add up to stay finite (a few amounts near 1e308 would sum to infinity).
  double amount(std::string_view tok, const char* what) const {
    const double v = non_negative(tok, what);
    if (v > 1e18) fail(std::string(what) + " " + std::string(tok) + " out of range (at most 1e18)");
    return v;
  }
  std::uint64_t count(std::string_view tok, const char* what) const {
    const double v = non_negative(tok, what);
    if (v != std::floor(v) || v > 9.0e15)
      fail("expected a whole element count for " + std::string(what) + ", got '" + std::string(tok) + "'");
    return static_cast<std::uint64_t>(v);
  }
  Rank rank(std::string_view tok, const char* what, bool any_source = false) const {
    const long long v = integer(tok, what);
    if (any_source && v == kAnySource) return kAnySource;
    if (v < 0 || v >= ranks_)
      fail(std::string(what) + " " + std::string(tok) + " is not a rank of this trace (0.." +
           std::to_string(ranks_ - 1) + ")");
    return static_cast<Rank>(v);
  }
  std::int32_t tag(std::string_view tok) const {
    const long long v = integer(tok, "tag");
    if (v < std::numeric_limits<std::int32_t>::min() || v > std::numeric_limits<std::int32_t>::max())
      fail("tag " + std::string(tok) + " out of range");
    return static_cast<std::int32_t>(v);
  }
  std::uint64_t dtsize(std::string_view tok) const {
    const long long id = integer(tok, "datatype id");
    const std::uint64_t s = id >= 0 ? ti_datatype_size(static_cast<int>(id)) : 0;
    if (s == 0) fail("unknown datatype id " + std::string(tok) + " (SimGrid 3.32 predefines 0-50, 57 and 59)");
    return s;
  }
  int ranks() const { return ranks_; }
  const std::string& file() const { return file_; }

 private:
  std::string file_;
  int ranks_;
  std::uint32_t line_ = 0;
};

// Per-rank parsing state: the default datatype set by `init`.
struct RankState {
  std::uint64_t default_dt = 1;  // MPI_BYTE until `init <arg>` makes it MPI_DOUBLE
};

void expect_args(const LineParser& p, std::string_view action, std::size_t n, std::size_t min, std::size_t max,
                 const char* form) {
  if (n >= min && n <= max) return;
  // Built by appending: GCC 12 at -O3 warns (-Wrestrict) about the equivalent chain of `+`.
  std::string msg = "'";
  msg.append(action).append("' takes ").append(std::to_string(min));
  if (min != max) msg.append(" to ").append(std::to_string(max));
  msg.append(" arguments (").append(form).append("), got ").append(std::to_string(n));
  p.fail(msg);
}

// One action line's arguments (the tokens after rank and action) and how to read them.
struct ActionArgs {
  const LineParser& p;
  const RankState& st;
  std::string_view a;                      // the action
  const std::vector<std::string_view>& t;  // its arguments
  std::size_t n;                           // how many

  // The size of datatype argument i, or the rank's default where the line gives none.
  std::uint64_t dt(std::size_t i) const { return i < n ? p.dtsize(t[i]) : st.default_dt; }
  void expect(std::size_t min, std::size_t max, const char* form) const { expect_args(p, a, n, min, max, form); }
};

// send, Ssend, isend, ISsend, recv, irecv, sendRecv; false for other actions.
bool parse_point_to_point(const ActionArgs& x, TiRecord& rec, TiReadStats* stats) {
  const LineParser& p = x.p;
  const auto& t = x.t;
  if (x.a == "send" || x.a == "Ssend" || x.a == "isend" || x.a == "ISsend") {
    x.expect(3, 4, "DST TAG COUNT [DATATYPE]");
    rec.op = x.a == "send" ? TiOp::Send : x.a == "Ssend" ? TiOp::Ssend : x.a == "isend" ? TiOp::Isend : TiOp::Issend;
    rec.peer = p.rank(t[0], "destination");
    rec.tag = p.tag(t[1]);
    rec.bytes = p.count(t[2], "count") * x.dt(3);
    return true;
  }
  if (x.a == "recv" || x.a == "irecv") {
    x.expect(3, 4, "SRC TAG COUNT [DATATYPE]");
    rec.op = x.a == "recv" ? TiOp::Recv : TiOp::Irecv;
    rec.peer = p.rank(t[0], "source", true);
    if (rec.peer == kAnySource && stats) ++stats->any_source;
    rec.tag = p.tag(t[1]);
    rec.bytes = p.count(t[2], "count") * x.dt(3);
    return true;
  }
  if (x.a == "sendRecv") {
    x.expect(4, 6, "SCOUNT DST RCOUNT SRC [SDATATYPE RDATATYPE]");
    rec.op = TiOp::Sendrecv;
    rec.bytes = p.count(t[0], "send count") * x.dt(4);
    rec.peer = p.rank(t[1], "destination");
    rec.bytes2 = p.count(t[2], "receive count") * x.dt(5);
    rec.peer2 = p.rank(t[3], "source", true);
    return true;
  }
  return false;
}

// The completions: wait, test, waitall, waitAny, waitany, waitsome, testany, testall,
// testsome; false for other actions.
bool parse_completion(const ActionArgs& x, TiRecord& rec) {
  const LineParser& p = x.p;
  const auto& t = x.t;
  if (x.a == "wait" || x.a == "test") {
    if (x.n != 0 && x.n != 3) x.expect(3, 3, "SRC DST TAG");
    rec.op = x.a == "wait" ? TiOp::Wait : TiOp::Test;
    if (x.n == 3) {
      rec.peer = p.rank(t[0], "source", true);
      rec.peer2 = p.rank(t[1], "destination");
      rec.tag = p.tag(t[2]);
    }
    return true;
  }
  if (x.a == "waitall" || x.a == "waitAny" || x.a == "waitany" || x.a == "waitsome") {
    x.expect(0, 1, "[COUNT]");
    rec.op = x.a == "waitall" ? TiOp::Waitall : TiOp::Waitany;
    if (x.n == 1)
      rec.count = static_cast<std::uint32_t>(std::min<std::uint64_t>(p.count(t[0], "request count"), 1u << 31));
    return true;
  }
  if (x.a == "testany" || x.a == "testall" || x.a == "testsome") {
    rec.op = TiOp::Testany;
    return true;
  }
  return false;
}

// The collectives of one size per rank: barrier, bcast, reduce, allreduce, scan, exscan,
// alltoall, allgather, gather, scatter; false for other actions.
bool parse_collective(const ActionArgs& x, TiRecord& rec) {
  const LineParser& p = x.p;
  const auto& t = x.t;
  if (x.a == "barrier") {
    x.expect(0, 0, "barrier");
    rec.op = TiOp::Barrier;
    return true;
  }
  if (x.a == "bcast") {
    x.expect(1, 3, "COUNT [ROOT [DATATYPE]]");
    rec.op = TiOp::Bcast;
    rec.root = x.n > 1 ? p.rank(t[1], "root") : 0;
    rec.bytes = p.count(t[0], "count") * x.dt(2);
    return true;
  }
  if (x.a == "reduce") {
    x.expect(2, 4, "COUNT FLOPS [ROOT [DATATYPE]]");
    rec.op = TiOp::Reduce;
    rec.amount = p.amount(t[1], "flops");
    rec.root = x.n > 2 ? p.rank(t[2], "root") : 0;
    rec.bytes = p.count(t[0], "count") * x.dt(3);
    return true;
  }
  if (x.a == "allreduce" || x.a == "scan" || x.a == "exscan") {
    x.expect(2, 3, "COUNT FLOPS [DATATYPE]");
    rec.op = x.a == "allreduce" ? TiOp::Allreduce : x.a == "scan" ? TiOp::Scan : TiOp::Exscan;
    rec.amount = p.amount(t[1], "flops");
    rec.bytes = p.count(t[0], "count") * x.dt(2);
    return true;
  }
  if (x.a == "alltoall" || x.a == "allgather") {
    x.expect(2, 4, "SCOUNT RCOUNT [SDATATYPE RDATATYPE]");
    rec.op = x.a == "alltoall" ? TiOp::Alltoall : TiOp::Allgather;
    rec.bytes = p.count(t[0], "send count") * x.dt(2);
    rec.bytes2 = p.count(t[1], "receive count") * x.dt(3);
    return true;
  }
  if (x.a == "gather" || x.a == "scatter") {
    x.expect(2, 5, "SCOUNT RCOUNT [ROOT [SDATATYPE RDATATYPE]]");
    rec.op = x.a == "gather" ? TiOp::Gather : TiOp::Scatter;
    rec.root = x.n > 2 ? p.rank(t[2], "root") : 0;
    rec.bytes = p.count(t[0], "send count") * x.dt(3);
    rec.bytes2 = p.count(t[1], "receive count") * x.dt(4);
    return true;
  }
  return false;
}

// The collectives of a size per member (counts for every rank of the trace): gatherv,
// allgatherv, scatterv, alltoallv, reducescatter; false for other actions.
bool parse_vcollective(const ActionArgs& x, TiRecord& rec) {
  const LineParser& p = x.p;
  const auto& t = x.t;
  const auto ranks = static_cast<std::size_t>(p.ranks());
  if (x.a == "gatherv" || x.a == "allgatherv") {
    // gatherv SCOUNT RCOUNTS×P ROOT [SDT RDT]; allgatherv SCOUNT RCOUNTS×P [SDT RDT]
    const bool rooted = x.a == "gatherv";
    const std::size_t fixed = 1 + ranks + (rooted ? 1 : 0);
    x.expect(fixed, fixed + 2,
             rooted ? "SCOUNT RCOUNT×ranks ROOT [SDATATYPE RDATATYPE]" : "SCOUNT RCOUNT×ranks [SDATATYPE RDATATYPE]");
    rec.op = rooted ? TiOp::Gatherv : TiOp::Allgatherv;
    const std::uint64_t sdt = x.dt(fixed), rdt = x.dt(fixed + 1);
    rec.bytes = p.count(t[0], "send count") * sdt;
    for (std::size_t i = 0; i < ranks; ++i) rec.counts.push_back(p.count(t[1 + i], "receive count") * rdt);
    rec.root = rooted ? p.rank(t[1 + ranks], "root") : kNoRank;
    return true;
  }
  if (x.a == "scatterv") {
    const std::size_t fixed = ranks + 2;  // SCOUNTS×P RCOUNT ROOT
    x.expect(fixed, fixed + 2, "SCOUNT×ranks RCOUNT ROOT [SDATATYPE RDATATYPE]");
    rec.op = TiOp::Scatterv;
    const std::uint64_t sdt = x.dt(fixed), rdt = x.dt(fixed + 1);
    for (std::size_t i = 0; i < ranks; ++i) rec.counts.push_back(p.count(t[i], "send count") * sdt);
    rec.bytes2 = p.count(t[ranks], "receive count") * rdt;
    rec.root = p.rank(t[ranks + 1], "root");
    return true;
  }
  if (x.a == "alltoallv") {
    const std::size_t fixed = 2 * ranks + 2;  // SBUF SCOUNTS×P RBUF RCOUNTS×P
    x.expect(fixed, fixed + 2, "SBUF SCOUNT×ranks RBUF RCOUNT×ranks [SDATATYPE RDATATYPE]");
    rec.op = TiOp::Alltoallv;
    const std::uint64_t sdt = x.dt(fixed), rdt = x.dt(fixed + 1);
    (void)p.count(t[0], "send buffer size");
    (void)p.count(t[1 + ranks], "receive buffer size");
    for (std::size_t i = 0; i < ranks; ++i) rec.counts.push_back(p.count(t[1 + i], "send count") * sdt);
    for (std::size_t i = 0; i < ranks; ++i) rec.counts.push_back(p.count(t[2 + ranks + i], "receive count") * rdt);
    return true;
  }
  if (x.a == "reducescatter") {
    const std::size_t fixed = ranks + 1;  // RCOUNTS×P FLOPS
    x.expect(fixed, fixed + 1, "RCOUNT×ranks FLOPS [DATATYPE]");
    rec.op = TiOp::ReduceScatter;
    const std::uint64_t d = x.dt(fixed);
    for (std::size_t i = 0; i < ranks; ++i) rec.counts.push_back(p.count(t[i], "receive count") * d);
    rec.amount = p.amount(t[ranks], "flops");
    return true;
  }
  return false;
}

// An action no parser above takes: why it cannot be replayed, or that it is unknown.
[[noreturn]] void refuse_action(const LineParser& p, std::string_view a) {
  for (const auto& u : kUnreplayable)
    if (a == u.name) p.fail("action '" + std::string(a) + "' cannot be replayed: " + std::string(u.why));
  if (is_nonblocking_collective(a))
    p.fail("action '" + std::string(a) +
           "' (a non-blocking collective) cannot be replayed: TI records neither its request nor where it completes");
  p.fail("unknown action '" + std::string(a) + "' (TI actions: init, finalize, compute, sleep, send, isend, recv, "
         "irecv, sendRecv, wait, test, waitall, waitAny, barrier, bcast, reduce, allreduce, gather, scatter, "
         "allgather, alltoall, gatherv, scatterv, allgatherv, alltoallv, reducescatter, scan, exscan, comm_*)");
}

// Parses the arguments of one action line (tokens after rank and action) into `rec`.
// Returns false for lines that produce no record (init, finalize).
bool parse_action(const LineParser& p, RankState& st, std::string_view a, const std::vector<std::string_view>& t,
                  TiRecord& rec, TiReadStats* stats) {
  const std::size_t n = t.size();
  if (a == "init") {
    expect_args(p, a, n, 0, 1, "init [datatype]");
    st.default_dt = n == 0 ? 1 : 8;
    return false;
  }
  if (a == "finalize") {
    expect_args(p, a, n, 0, 0, "finalize");
    return false;
  }
  if (a == "compute" || a == "sleep") {
    expect_args(p, a, n, 1, 1, a == "compute" ? "compute FLOPS" : "sleep SECONDS");
    rec.op = a == "compute" ? TiOp::Compute : TiOp::Sleep;
    rec.amount = p.amount(t[0], a == "compute" ? "flops" : "seconds");
    return true;
  }
  const ActionArgs x{p, st, a, t, n};
  if (parse_point_to_point(x, rec, stats) || parse_completion(x, rec) || parse_collective(x, rec) ||
      parse_vcollective(x, rec))
    return true;
  if (a == "comm_size" || a == "comm_split" || a == "comm_dup") {
    rec.op = TiOp::CommNoop;
    return true;
  }
  refuse_action(p, a);
}

std::string read_whole(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw InputError(path + ": is a directory, not a " + what);
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw InputError(path + ": cannot read the " + what +
                     (errno != 0 ? std::string(": ") + std::strerror(errno) : std::string()));
  std::string s;
  in.seekg(0, std::ios::end);
  const auto size = in.tellg();
  if (size > 0) {
    s.resize(static_cast<std::size_t>(size));
    in.seekg(0);
    in.read(s.data(), size);
  }
  if (in.bad()) throw InputError(path + ": read error");
  return s;
}

// Calls f(line_number, line) for every line, the last one even without a newline.
constexpr std::size_t kMaxLineBytes = std::size_t{16} << 20;  // docs/formats.md, "Limits"

template <class F>
bool for_each_line(std::string_view text, F&& f, const std::string* file = nullptr) {
  std::uint32_t no = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const void* nl = std::memchr(text.data() + pos, '\n', text.size() - pos);
    const std::size_t end = nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - text.data()) : text.size();
    // A line is one action: its tokens take 16 bytes each, so an unbounded line is unbounded
    // memory (a 400 MB line took 5.7 GB). An alltoallv of 65,536 ranks is about 1 MB.
    if (file != nullptr && end - pos > kMaxLineBytes)
      throw InputError(*file + ":" + std::to_string(no + 1) + ": a line of " + std::to_string(end - pos) +
                       " bytes, longer than " + std::to_string(kMaxLineBytes >> 20) +
                       " MiB: a TI line is one action (an alltoallv of 65536 ranks takes about 1 MB)");
    std::string_view line = text.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    f(++no, line);
    pos = end + 1;
  }
  return text.empty() || text.back() == '\n';
}

void split(std::string_view line, std::vector<std::string_view>& out) {
  out.clear();
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i >= line.size()) break;
    std::size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t') ++j;
    out.push_back(line.substr(i, j - i));
    i = j;
  }
}

bool skippable(const std::vector<std::string_view>& tok) {
  return tok.empty() || tok[0].front() == '#';
}

// The first action line tells a trace file ("<int> <action> ...") from an index (paths).
bool looks_like_trace(std::string_view text) {
  std::vector<std::string_view> tok;
  bool trace = false;
  bool decided = false;
  for_each_line(text, [&](std::uint32_t, std::string_view line) {
    if (decided) return;
    split(line, tok);
    if (skippable(tok)) return;
    decided = true;
    long long r = 0;
    const auto res = std::from_chars(tok[0].data(), tok[0].data() + tok[0].size(), r);
    trace = tok.size() >= 2 && res.ec == std::errc() && res.ptr == tok[0].data() + tok[0].size() &&
            std::isalpha(static_cast<unsigned char>(tok[1].front()));
  });
  return trace;
}

// Where an index lists a rank file: the index and the line (1-based) that names the file.
struct IndexLine {
  const std::string* index = nullptr;
  std::uint32_t line = 0;
};

// Parses the lines of one file. `fixed_rank` >= 0: the file of that rank, listed at `listed`
// of its index (every line must carry that rank, as SMPI writes it); else a shared file (the
// token is the rank).
void parse_file(const std::string& file, std::string_view text, int ranks, int fixed_rank, TiTrace& out,
                TiReadStats* stats, IndexLine listed = {}) {
  LineParser p(file, ranks);
  std::vector<std::string_view> tok;
  std::vector<std::string_view> args;
  std::vector<RankState> states(static_cast<std::size_t>(ranks));
  const bool newline = for_each_line(text, [&](std::uint32_t no, std::string_view line) {
    split(line, tok);
    if (skippable(tok)) return;
    p.set_line(no);
    if (tok.size() < 2) p.fail("expected '<rank> <action> [arguments]', got '" + std::string(line) + "'");
    const long long r = p.integer(tok[0], "the rank at the start of the line");
    Rank rank = 0;
    if (fixed_rank >= 0) {
      if (r != fixed_rank) {
        const std::string where = listed.index ? *listed.index + ":" + std::to_string(listed.line) : file;
        throw InputError(where + ": the trace file of rank " + std::to_string(fixed_rank) + ", " + file +
                         ", has a line of rank " + std::to_string(r) + " (" + file + ":" +
                         std::to_string(no) + "; line i of an index lists the file of rank i)");
      }
      rank = fixed_rank;
    } else {
      rank = p.rank(tok[0], "rank");
    }
    args.assign(tok.begin() + 2, tok.end());
    TiRecord rec;
    rec.line = no;
    if (parse_action(p, states[static_cast<std::size_t>(rank)], tok[1], args, rec, stats))
      out.ranks[static_cast<std::size_t>(rank)].push_back(std::move(rec));
    if (stats) {
      ++stats->lines;
      ++stats->actions[std::string(tok[1])];
    }
  }, &file);
  if (!newline && stats) ++stats->files_without_final_newline;
}

std::string resolve(const std::string& index, const std::string& entry) {
  const fs::path e(entry);
  if (e.is_absolute()) return entry;
  const fs::path beside = fs::path(index).parent_path() / e;
  std::error_code ec;
  if (fs::exists(beside, ec)) return beside.string();
  if (fs::exists(e, ec)) return entry;
  return beside.string();
}

void append_number(std::string& s, double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  s.append(buf, r.ptr);
}
template <class I>
void append_int(std::string& s, I v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  s.append(buf, r.ptr);
}

// The rank files an index lists (relative to the index), each checked to exist and to be
// listed once (one file is one rank's: the same file, by device and inode, on two lines is
// refused); `lines` gets the index line of each.
std::vector<std::string> index_files(const std::string& path, std::string_view text,
                                     std::vector<std::uint32_t>* lines = nullptr) {
  std::vector<std::string> files;
  std::vector<std::uint32_t> at;
  std::vector<std::string_view> tok;
  for_each_line(text, [&](std::uint32_t no, std::string_view line) {
    split(line, tok);
    if (skippable(tok)) return;
    if (tok.size() != 1)
      throw InputError(path + ":" + std::to_string(no) +
                       ": expected one trace file name per line (an index file) or '<rank> <action> ...' (a trace "
                       "file), got '" + std::string(line) + "'");
    files.push_back(resolve(path, std::string(tok[0])));
    at.push_back(no);
  }, &path);
  if (files.empty())
    throw InputError(path + ": empty TI trace (expected an index of rank files or '<rank> <action> ...' lines)");
  std::map<std::pair<dev_t, ino_t>, std::size_t> rank_of_file;
  for (std::size_t r = 0; r < files.size(); ++r) {
    const std::string where = path + ":" + std::to_string(at[r]) + ": the trace file of rank " +
                              std::to_string(r) + ", " + files[r] + ", ";
    std::error_code ec;
    struct stat st {};
    if (!fs::exists(files[r], ec) || ::stat(files[r].c_str(), &st) != 0)
      throw InputError(where + "does not exist");
    const auto [it, first] = rank_of_file.try_emplace({st.st_dev, st.st_ino}, r);
    if (!first)
      throw InputError(where + "is the trace file of rank " + std::to_string(it->second) + " too (" + path +
                       ":" + std::to_string(at[it->second]) + "; each rank has its own file)");
  }
  if (lines) *lines = std::move(at);
  return files;
}

}  // namespace

std::string_view ti_op_name(TiOp op) {
  return kOpNames[static_cast<std::size_t>(op)];
}

std::uint64_t ti_datatype_size(int id) {
  if (id < 0 || static_cast<std::size_t>(id) >= kDatatypeSize.size()) return 0;
  return kDatatypeSize[static_cast<std::size_t>(id)];
}

std::size_t TiTrace::record_count() const {
  std::size_t n = 0;
  for (const auto& r : ranks) n += r.size();
  return n;
}

namespace {

// A shared TI file (every rank's lines in one file), read as `text`.
TiTrace read_shared(const std::string& path, std::string_view text, TiReadStats* stats) {
  TiTrace out;
  // One shared file: the number of ranks is the largest rank token + 1, and every rank up to
  // it has lines (as SMPI writes it), so a file cannot make us allocate ranks it does not hold.
  long long max_rank = -1;
  std::uint32_t max_line = 0;
  std::vector<char> seen;
  std::vector<std::string_view> tok;
  for_each_line(text, [&](std::uint32_t no, std::string_view line) {
    split(line, tok);
    if (skippable(tok)) return;
    long long r = 0;
    const auto res = std::from_chars(tok[0].data(), tok[0].data() + tok[0].size(), r);
    if (res.ec != std::errc() || res.ptr != tok[0].data() + tok[0].size() || r < 0 || r > 10000000)
      throw InputError(path + ":" + std::to_string(no) + ": expected a rank (0..10000000) at the start of the line, got '" +
                       std::string(tok[0]) + "'");
    if (r > max_rank) {
      max_rank = r;
      max_line = no;
    }
    if (static_cast<std::size_t>(r) >= seen.size()) seen.resize(static_cast<std::size_t>(r) + 1, 0);
    seen[static_cast<std::size_t>(r)] = 1;
  }, &path);
  for (std::size_t r = 0; r < seen.size(); ++r)
    if (!seen[r])
      throw InputError(path + ":" + std::to_string(max_line) + ": rank " + std::to_string(max_rank) +
                       " in a file without a line of rank " + std::to_string(r) +
                       " (a shared TI file holds the lines of every rank from 0 to the largest)");
  const int ranks = static_cast<int>(max_rank + 1);
  out.ranks.resize(static_cast<std::size_t>(ranks));
  out.files.push_back(path);
  parse_file(path, text, ranks, -1, out, stats);
  return out;
}

}  // namespace

TiTrace read_ti(const std::string& path, TiReadStats* stats) {
  const std::string text = read_whole(path, "TI trace");
  if (looks_like_trace(text)) return read_shared(path, text, stats);
  TiTrace out;
  // An index: one rank file per line.
  std::vector<std::uint32_t> lines;
  std::vector<std::string> files = index_files(path, text, &lines);
  const int ranks = static_cast<int>(files.size());
  out.ranks.resize(files.size());
  for (std::size_t r = 0; r < files.size(); ++r) {
    const std::string body = read_whole(files[r], "TI trace file of rank " + std::to_string(r));
    parse_file(files[r], body, ranks, static_cast<int>(r), out, stats, IndexLine{&path, lines[r]});
  }
  out.files = std::move(files);
  return out;
}

std::vector<std::string> ti_files(const std::string& path) {
  // A shared trace is recognised by its first lines (up to 1 MiB of it is read); an index is
  // read whole, as TiReader reads it.
  std::string head;
  {
    errno = 0;
    std::ifstream in(path, std::ios::binary);
    if (!in)
      throw InputError(path + ": cannot read the TI trace" +
                       (errno != 0 ? std::string(": ") + std::strerror(errno) : std::string()));
    head.resize(std::size_t{1} << 20);
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<std::size_t>(in.gcount()));
    if (in.gcount() == static_cast<std::streamsize>(std::size_t{1} << 20)) {
      const std::size_t nl = head.rfind('\n');
      head.resize(nl == std::string::npos ? 0 : nl + 1);
      if (!looks_like_trace(head)) head = read_whole(path, "TI trace");
    }
  }
  if (looks_like_trace(head)) return {path};
  std::vector<std::string> files = index_files(path, head);
  files.insert(files.begin(), path);
  return files;
}

TiReader::TiReader(const std::string& path) {
  const std::string text = read_whole(path, "TI trace");
  if (looks_like_trace(text)) {
    whole_ = read_shared(path, text, nullptr);
    shared_ = true;
    ranks_ = whole_.ranks.size();
    files_ = whole_.files;
    return;
  }
  index_ = path;
  files_ = index_files(path, text, &index_lines_);
  ranks_ = files_.size();
}

const std::vector<TiRecord>& TiReader::records(std::size_t r) {
  if (shared_) return whole_.ranks.at(r);
  if (loaded_ != r) {
    TiTrace one;
    one.ranks.resize(ranks_);
    current_.clear();
    loaded_ = SIZE_MAX;
    const std::string body = read_whole(files_.at(r), "TI trace file of rank " + std::to_string(r));
    parse_file(files_[r], body, static_cast<int>(ranks_), static_cast<int>(r), one, nullptr,
               IndexLine{&index_, index_lines_.at(r)});
    current_ = std::move(one.ranks[r]);
    loaded_ = r;
  }
  return current_;
}

namespace {

// What writing TI leaves out or changes, counted for write_ti's notes.
struct TiWriteCounts {
  std::uint64_t ssend = 0;    // synchronous sends written as send/isend
  std::uint64_t dropped = 0;  // records not written
};

// One rank's TI file: its lines as SMPI's replayer reads them, sizes in bytes after a bare
// `init`.
class RankText {
 public:
  explicit RankText(std::size_t rank) : rank_(std::to_string(rank)) {
    begin("init");
    s_ += '\n';
  }

  // The line of `rec`; none for what SMPI's replayer cannot replay (counted).
  void add(const TiRecord& rec, TiWriteCounts& counts) {
    switch (rec.op) {
      case TiOp::Compute:
      case TiOp::Sleep:
        begin(ti_op_name(rec.op));
        arg(rec.amount);
        break;
      case TiOp::Waitany:
      case TiOp::Testany:
      case TiOp::CommNoop:
        ++counts.dropped;
        return;
      case TiOp::Count_:
        return;
      default:
        if (!point_to_point(rec, counts)) collective(rec);
        break;
    }
    s_ += '\n';
  }

  std::string finish() {
    begin("finalize");
    s_ += '\n';
    return std::move(s_);
  }

 private:
  void begin(std::string_view action) {
    s_ += rank_;
    s_ += ' ';
    s_ += action;
  }
  template <class T>
  void arg(T v) {
    s_ += ' ';
    if constexpr (std::is_floating_point_v<T>)
      append_number(s_, v);
    else
      append_int(s_, v);
  }

  // Sends, receives and their completions; false for other records.
  bool point_to_point(const TiRecord& rec, TiWriteCounts& counts) {
    switch (rec.op) {
      case TiOp::Send:
      case TiOp::Ssend:
      case TiOp::Isend:
      case TiOp::Issend:
        if (rec.op == TiOp::Ssend || rec.op == TiOp::Issend) ++counts.ssend;
        begin(rec.op == TiOp::Send || rec.op == TiOp::Ssend ? "send" : "isend");
        arg(rec.peer);
        arg(rec.tag);
        arg(rec.bytes);
        return true;
      case TiOp::Recv:
      case TiOp::Irecv:
        begin(ti_op_name(rec.op));
        arg(rec.peer);
        arg(rec.tag);
        arg(rec.bytes);
        return true;
      case TiOp::Wait:
      case TiOp::Test:
        begin(ti_op_name(rec.op));
        if (rec.peer2 != kNoRank) {
          arg(rec.peer);
          arg(rec.peer2);
          arg(rec.tag);
        }
        return true;
      case TiOp::Waitall:
        begin("waitall");
        if (rec.count) arg(rec.count);
        return true;
      case TiOp::Sendrecv:
        begin("sendRecv");
        arg(rec.bytes);
        arg(rec.peer);
        arg(rec.bytes2);
        arg(rec.peer2);
        s_ += " 6 6";
        return true;
      default:
        return false;
    }
  }

  void collective(const TiRecord& rec) {
    switch (rec.op) {
      case TiOp::Barrier:
        begin("barrier");
        break;
      case TiOp::Bcast:
        begin("bcast");
        arg(rec.bytes);
        arg(rec.root);
        break;
      case TiOp::Reduce:
        begin("reduce");
        arg(rec.bytes);
        arg(rec.amount);
        arg(rec.root);
        break;
      case TiOp::Allreduce:
      case TiOp::Scan:
      case TiOp::Exscan:
        begin(ti_op_name(rec.op));
        arg(rec.bytes);
        arg(rec.amount);
        break;
      case TiOp::Gather:
      case TiOp::Scatter:
        begin(ti_op_name(rec.op));
        arg(rec.bytes);
        arg(rec.bytes2);
        arg(rec.root);
        break;
      case TiOp::Allgather:
      case TiOp::Alltoall:
        begin(ti_op_name(rec.op));
        arg(rec.bytes);
        arg(rec.bytes2);
        break;
      default:
        vcollective(rec);
        break;
    }
  }

  void vcollective(const TiRecord& rec) {
    switch (rec.op) {
      case TiOp::Gatherv:
      case TiOp::Allgatherv:
        begin(ti_op_name(rec.op));
        arg(rec.bytes);
        for (auto c : rec.counts) arg(c);
        if (rec.op == TiOp::Gatherv) arg(rec.root);
        break;
      case TiOp::Scatterv:
        begin("scatterv");
        for (auto c : rec.counts) arg(c);
        arg(rec.bytes2);
        arg(rec.root);
        break;
      case TiOp::Alltoallv: {
        begin("alltoallv");
        const std::size_t half = rec.counts.size() / 2;
        std::uint64_t sum = 0;
        for (std::size_t i = 0; i < half; ++i) sum += rec.counts[i];
        arg(sum);
        for (std::size_t i = 0; i < half; ++i) arg(rec.counts[i]);
        sum = 0;
        for (std::size_t i = half; i < rec.counts.size(); ++i) sum += rec.counts[i];
        arg(sum);
        for (std::size_t i = half; i < rec.counts.size(); ++i) arg(rec.counts[i]);
        break;
      }
      case TiOp::ReduceScatter:
        begin("reducescatter");
        for (auto c : rec.counts) arg(c);
        arg(rec.amount);
        break;
      default:
        break;
    }
  }

  std::string rank_;
  std::string s_;
};

}  // namespace

std::vector<std::string> write_ti(const TiTrace& ti, const std::string& index_path) {
  const fs::path index(index_path);
  const std::string dir_name = index.filename().string() + "_files";
  const fs::path dir = index.parent_path() / dir_name;
  const fs::path tmp = index.parent_path() / (dir_name + ".tmp");
  std::error_code ec;
  fs::remove_all(tmp, ec);
  if (!fs::create_directories(tmp, ec) && ec)
    throw InputError(tmp.string() + ": cannot create the directory: " + ec.message());
  TiWriteCounts counts;
  std::string index_text;
  try {
    for (std::size_t r = 0; r < ti.ranks.size(); ++r) {
      RankText text(r);
      for (const auto& rec : ti.ranks[r]) text.add(rec, counts);
      const std::string s = text.finish();
      const std::string name = "rank-" + std::to_string(r) + ".txt";
      std::ofstream f(tmp / name, std::ios::binary);
      f.write(s.data(), static_cast<std::streamsize>(s.size()));
      f.close();
      if (!f) throw InputError((tmp / name).string() + ": cannot write the TI trace file");
      index_text += dir_name + "/" + name + "\n";
    }
    fs::remove_all(dir, ec);
    fs::rename(tmp, dir, ec);
    if (ec) throw InputError(dir.string() + ": cannot move the TI trace files into place: " + ec.message());
    write_file_atomic(index_path, index_text);
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
  std::vector<std::string> notes;
  if (counts.ssend)
    notes.push_back(std::to_string(counts.ssend) +
                    " synchronous sends (MPI_Ssend/MPI_Issend) written as send/isend: SMPI's replayer knows no Ssend");
  if (counts.dropped)
    notes.push_back(std::to_string(counts.dropped) +
                    " waitAny/testany/comm_* records not written: SMPI's replayer cannot replay them");
  return notes;
}

}  // namespace waitlab::trace
