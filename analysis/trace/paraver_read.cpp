// Paraver traces: the reader (see paraver.hpp and docs/formats.md, "Paraver"; the writer is
// paraver_write.cpp).
//
// Reading parses the .prv line by line from a buffered read with std::from_chars, keeps
// per task only the type:value pairs it uses, then rebuilds each task's MPI calls (pass A),
// attaches the two sides of every communication record to the calls they belong to (pass
// B: the call whose Enter is the logical time, preferring one whose waitlab descriptors
// name the same peer and tag), finds the root of every collective instance from the
// is-root flags (pass C), and writes the events (pass D). All times stay integer ticks until
// pass D makes them seconds. A part (read_paraver_part) keeps the pairs, states and counter
// samples of its tasks only, and the communication records they send or receive: another
// task's event records go through pass A as they are read (stream_line), its regions noted and
// defined in the whole reader's order (define_noted), and its calls dropped as they end, once
// the order of their operations and the collective roots they flag are noted (retire_calls).
#include "analysis/trace/paraver.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <compare>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/trace/paraver_common.hpp"
#include "analysis/trace/trace_part.hpp"
#include "util/error.hpp"
#include "util/memory.hpp"

#include <zlib.h>

namespace waitlab::trace {

namespace {

using detail::base_of;
using detail::comm_name;
using detail::is_mpi_type;
using detail::op_of_value;
using detail::receives;
using detail::sends;
using detail::waits;

// Lines of a file from a buffered read through zlib, which reads gzip-compressed files and
// plain ones alike; a line excludes "\n" and a trailing "\r". A read error or corrupt
// compressed data is an InputError naming the file.
class LineReader {
 public:
  explicit LineReader(const std::string& path) : path_(path) {
    errno = 0;
    f_ = gzopen(path.c_str(), "rb");
    if (!f_)
      throw InputError("cannot read " + path + ": " + (errno ? std::strerror(errno) : "cannot open"));
    gzbuffer(f_, kChunk);
    buf_.resize(kChunk);
  }
  ~LineReader() {
    if (f_) gzclose(f_);
  }
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  bool next(std::string_view& line) {
    for (;;) {
      const char* b = buf_.data() + begin_;
      const void* nl = std::memchr(b, '\n', end_ - begin_);
      if (nl) {
        const auto len = static_cast<std::size_t>(static_cast<const char*>(nl) - b);
        line = std::string_view(b, len);
        begin_ += len + 1;
        ++line_no_;
        strip_cr(line);
        return true;
      }
      if (eof_) {
        if (begin_ == end_) return false;
        line = std::string_view(b, end_ - begin_);
        begin_ = end_;
        ++line_no_;
        strip_cr(line);
        return true;
      }
      fill();
    }
  }
  std::uint64_t line_no() const { return line_no_; }

 private:
  static constexpr std::size_t kChunk = 1 << 20;
  static constexpr std::size_t kMaxLine = std::size_t{64} << 20;  // docs/formats.md, "Limits"
  static void strip_cr(std::string_view& l) {
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
  }
  void fill() {
    if (begin_ > 0) {
      std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
    }
    if (end_ == buf_.size()) {  // a line longer than the buffer
      // A record is a few hundred bytes and the header lists every task: 64 MiB is far above
      // both, and a line without end (4 GiB in a 4 MB .prv.gz took 6.2 GB) stops here.
      if (buf_.size() >= kMaxLine)
        throw InputError(path_ + ":" + std::to_string(line_no_ + 1) + ": a line longer than " +
                         std::to_string(kMaxLine >> 20) + " MiB: a Paraver record is a few hundred bytes");
      buf_.resize(buf_.size() * 2);
    }
    const int got = gzread(f_, buf_.data() + end_, static_cast<unsigned>(std::min<std::size_t>(buf_.size() - end_, 1u << 30)));
    int err = Z_OK;
    const char* msg = gzerror(f_, &err);
    if (got < 0 || (err != Z_OK && err != Z_STREAM_END))
      throw InputError("cannot read " + path_ + " after line " + std::to_string(line_no_) + ": " +
                       (err == Z_ERRNO ? std::strerror(errno) : std::string("corrupt compressed data (") + msg + ")"));
    end_ += static_cast<std::size_t>(got);
    if (got == 0) eof_ = true;
  }
  std::string path_;
  gzFile f_ = nullptr;
  std::vector<char> buf_;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  bool eof_ = false;
  std::uint64_t line_no_ = 0;
};

std::string quote(std::string_view s) {
  constexpr std::size_t kMax = 40;
  std::string q = "'";
  q.append(s.substr(0, kMax));
  if (s.size() > kMax) q += "...";
  q += "'";
  return q;
}

// The fields of one record line (after the record type), separated by ':'.
class Fields {
 public:
  Fields(std::string_view rest, const std::string& file, std::uint64_t line_no, const char* what)
      : p_(rest.data()), end_(rest.data() + rest.size()), file_(file), line_no_(line_no), what_(what) {}

  [[noreturn]] void fail(const std::string& msg) const {
    throw InputError(file_ + ":" + std::to_string(line_no_) + ": " + what_ + ": " + msg);
  }
  bool done() const { return finished_; }
  // The next field as a signed integer.
  std::int64_t num(const char* name) {
    const char* start = p_;
    std::uint64_t u = 0;
    if (digits(u)) {
      if (u <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return static_cast<std::int64_t>(u);
      p_ = start;  // 19 digits beyond int64: std::from_chars says so
      finished_ = false;
    }
    std::int64_t v = 0;
    const auto r = std::from_chars(p_, end_, v);
    end_field(r, start, name);
    return v;
  }
  // The next field as an event value: an unsigned integer up to 2^64-1 (counters), or a
  // negative one; returned as its 64 bits (a value >= 2^63 reads as a negative int64).
  std::int64_t value(const char* name) {
    std::uint64_t u = 0;
    if (digits(u)) return static_cast<std::int64_t>(u);
    const char* start = p_;
    std::from_chars_result r{};
    if (p_ != end_ && *p_ == '-') {
      std::int64_t v = 0;
      r = std::from_chars(p_, end_, v);
      u = static_cast<std::uint64_t>(v);
    } else {
      r = std::from_chars(p_, end_, u);
    }
    end_field(r, start, name);
    return static_cast<std::int64_t>(u);
  }
  // At least n fields left (reads only as far as the n-th).
  bool at_least(std::size_t n) const {
    if (finished_ || n == 0) return n == 0;
    const char* q = p_;
    for (std::size_t k = 1; k < n; ++k) {
      q = static_cast<const char*>(std::memchr(q, ':', static_cast<std::size_t>(end_ - q)));
      if (q == nullptr) return false;
      ++q;
    }
    return true;
  }
  // Fields left, counting an empty one after a trailing ':'.
  std::size_t count() const {
    return finished_ ? 0 : static_cast<std::size_t>(std::count(p_, end_, ':')) + 1;
  }

 private:
  // The fast path: a field of 1 to 19 decimal digits ending at ':' or the end of the line
  // (anything else, e.g. a sign or 20 digits, takes std::from_chars).
  bool digits(std::uint64_t& v) {
    if (finished_) return false;
    const char* q = p_;
    std::uint64_t x = 0;
    const char* stop = std::min(end_, p_ + 19);
    while (q < stop && static_cast<unsigned char>(*q - '0') < 10) x = x * 10 + static_cast<unsigned>(*q++ - '0');
    if (q == p_) return false;
    if (q == end_) {
      finished_ = true;
    } else if (*q == ':') {
      p_ = q + 1;
    } else {
      return false;
    }
    v = x;
    return true;
  }
  void end_field(std::from_chars_result r, const char* start, const char* name) {
    if (finished_) fail(std::string("missing field: expected ") + name);
    const char* stop = r.ptr;
    if (r.ec == std::errc::result_out_of_range) fail(std::string(name) + " out of range: " + quote(field_text(start)));
    if (r.ec != std::errc() || (stop != end_ && *stop != ':'))
      fail(std::string("expected ") + name + " (an integer), found " + quote(field_text(start)));
    if (stop == end_) finished_ = true;
    else p_ = stop + 1;
  }
  std::string_view field_text(const char* start) const {
    const char* e = start;
    while (e < end_ && *e != ':') ++e;
    return std::string_view(start, static_cast<std::size_t>(e - start));
  }
  const char* p_;
  const char* end_;
  bool finished_ = false;
  const std::string& file_;
  std::uint64_t line_no_;
  const char* what_;
};

struct Header {
  double ticks_per_second = 1e6;
  std::int64_t end_time = 0;  // ticks
  std::int64_t cpus = 0;  // 0: no resource model
  std::vector<std::int64_t> threads;  // per task
  std::int64_t comms = 0;
};

class HeaderParser {
 public:
  HeaderParser(std::string_view s, const std::string& file, std::uint64_t line)
      : s_(s), file_(file), line_(line) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(file_ + ":" + std::to_string(line_) +
                     ": bad Paraver header (expected '#Paraver (date):end_time[_ns|_us|_ms]:resources:1:"
                     "tasks(threads:node,...)[,communicators]'): " +
                     what);
  }

  Header parse() {
    Header h;
    if (s_.substr(0, 8) != "#Paraver") fail("it does not start with '#Paraver'");
    const std::size_t close = s_.find(')');
    if (close == std::string_view::npos) fail("no ')' closing the date");
    p_ = close + 1;
    expect(':', "after the date");
    // End time with its unit.
    h.end_time = number("the end time");
    if (h.end_time < 0) fail("negative end time");
    if (peek() == '_') {
      ++p_;
      const std::string_view unit = s_.substr(p_, 2);
      if (unit == "ns") h.ticks_per_second = 1e9;
      else if (unit == "us") h.ticks_per_second = 1e6;
      else if (unit == "ms") h.ticks_per_second = 1e3;
      else fail("unknown time unit " + quote(s_.substr(p_, std::min<std::size_t>(4, s_.size() - p_))) +
                " (expected _ns, _us or _ms)");
      p_ += 2;
    }
    expect(':', "after the end time");
    // Resource model: 0, or nodes(cpus,...).
    const std::int64_t nodes = number("the number of nodes");
    if (nodes < 0) fail("negative number of nodes");
    if (nodes > 0) {
      expect('(', "after the number of nodes");
      for (std::int64_t i = 0; i < nodes; ++i) {
        if (i > 0) expect(',', "between the CPU counts of the nodes");
        const std::int64_t c = number("a CPU count");
        if (c < 0) fail("negative CPU count");
        h.cpus += c;
        if (h.cpus > (std::int64_t{1} << 40)) fail("implausible CPU count");
      }
      expect(')', "after the CPU counts (as many as nodes)");
    }
    expect(':', "after the resource model");
    const std::int64_t appls = number("the number of applications");
    if (appls != 1)
      fail("waitlab reads traces of exactly one application, this one has " + std::to_string(appls));
    expect(':', "after the number of applications");
    const std::int64_t tasks = number("the number of tasks");
    if (tasks <= 0) fail("the application has no tasks");
    expect('(', "after the number of tasks");
    for (std::int64_t i = 0; i < tasks; ++i) {
      if (i > 0) expect(',', "between tasks (as many as the number of tasks)");
      const std::int64_t th = number("a thread count");
      if (th <= 0) fail("task " + std::to_string(i + 1) + " has no threads");
      expect(':', "between a task's threads and its node");
      const std::int64_t node = number("a node");
      if (node < 0 || (nodes > 0 && node > nodes)) fail("task " + std::to_string(i + 1) + " is on node " + std::to_string(node) + ", out of range");
      h.threads.push_back(th);
    }
    expect(')', "after the tasks (as many as the number of tasks)");
    if (p_ < s_.size()) {
      expect(',', "or the end of the line after the application");
      h.comms = number("the number of communicators");
      if (h.comms < 0) fail("negative number of communicators");
    }
    while (p_ < s_.size() && (s_[p_] == ' ' || s_[p_] == '\t')) ++p_;
    if (p_ != s_.size()) fail("unexpected " + quote(s_.substr(p_)) + " at the end");
    return h;
  }

 private:
  char peek() const { return p_ < s_.size() ? s_[p_] : '\0'; }
  void expect(char c, const char* where) {
    if (peek() != c)
      fail(std::string("expected '") + c + "' " + where + ", found " +
           (p_ < s_.size() ? quote(s_.substr(p_, 12)) : std::string("the end of the line")));
    ++p_;
  }
  std::int64_t number(const char* what) {
    std::int64_t v = 0;
    const char* b = s_.data() + p_;
    const auto r = std::from_chars(b, s_.data() + s_.size(), v);
    if (r.ec == std::errc::result_out_of_range) {
      std::size_t e = p_ + 1;
      while (e < s_.size() && std::isdigit(static_cast<unsigned char>(s_[e]))) ++e;
      fail(std::string(what) + " out of range: " + quote(s_.substr(p_, e - p_)));
    }
    if (r.ec != std::errc())
      fail(std::string("expected ") + what + ", found " +
           (p_ < s_.size() ? quote(s_.substr(p_, 12)) : std::string("the end of the line")));
    p_ += static_cast<std::size_t>(r.ptr - b);
    return v;
  }
  std::string_view s_;
  std::size_t p_ = 0;
  const std::string& file_;
  std::uint64_t line_;
};

// Labels from the .pcf.
struct Pcf {
  std::map<std::int64_t, std::string> types;        // event type -> label
  bool waitlab = false;                             // declares waitlab's event types
  std::map<std::int64_t, std::string> user;         // 60000019 values
  std::map<std::int64_t, std::string> mpi_regions;  // 69000010 values
  std::map<std::pair<std::int64_t, std::int64_t>, std::string> mpi_values;  // (type, value)
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// "<number> <rest>": the number and the trimmed rest; false if the line does not start so.
bool number_and_rest(std::string_view l, std::int64_t& v, std::string_view& rest) {
  l = trim(l);
  const auto r = std::from_chars(l.data(), l.data() + l.size(), v);
  if (r.ec != std::errc()) return false;
  const auto used = static_cast<std::size_t>(r.ptr - l.data());
  if (used < l.size() && !std::isspace(static_cast<unsigned char>(l[used]))) return false;
  rest = trim(l.substr(used));
  return true;
}

// The .pcf is optional metadata: lines it cannot use are ignored, as Paraver does.
Pcf read_pcf(const std::string& path) {
  Pcf pcf;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return pcf;
  LineReader in(path);
  enum { None, Types, Values } mode = None;
  std::vector<std::int64_t> types;
  std::string_view line;
  while (in.next(line)) {
    const std::string_view l = trim(line);
    if (l == "EVENT_TYPE") {
      mode = Types;
      types.clear();
      continue;
    }
    if (mode == Types) {
      if (l == "VALUES") {
        mode = Values;
        continue;
      }
      std::int64_t flag = 0, type = 0;
      std::string_view rest, label;
      if (number_and_rest(l, flag, rest) && number_and_rest(rest, type, label)) {
        // Only the types whose values are used, each once: every VALUES line is stored for each
        // of them, so a long list of types before a long list of values stays linear.
        if ((type == kPrvUserFunction || type == kPrvMpiRegion || is_mpi_type(type)) &&
            std::find(types.begin(), types.end(), type) == types.end())
          types.push_back(type);
        pcf.types.emplace(type, std::string(label));
        if (type >= kPrvRequestCompleted && type <= kPrvMpiRegion) pcf.waitlab = true;
      } else {
        mode = None;
      }
      continue;
    }
    if (mode == Values) {
      std::int64_t v = 0;
      std::string_view label;
      if (!number_and_rest(l, v, label)) {
        mode = None;
        continue;
      }
      for (std::int64_t type : types) {
        if (type == kPrvUserFunction) pcf.user[v] = std::string(label);
        else if (type == kPrvMpiRegion) pcf.mpi_regions[v] = std::string(label);
        else if (is_mpi_type(type)) pcf.mpi_values[{type, v}] = std::string(label);
      }
    }
  }
  return pcf;
}

constexpr std::int64_t kUnset = std::numeric_limits<std::int64_t>::min();

struct RawPair {
  std::int64_t type;
  std::int64_t value;
};
struct RawLine {
  std::int64_t time;
  std::uint32_t first;
  std::uint32_t count;
};
// Append-only storage in chunks that grow from First to Max elements: growing never copies,
// and at most the last chunk is partly unused (a std::vector doubles and leaves up to half
// of its capacity unused, which would count in the reader's peak). With First == Max the
// chunks are equal and operator[] is O(1).
template <typename T, std::size_t First = 16, std::size_t Max = 4096>
class Chunks {
 public:
  void push_back(const T& v) {
    if (chunks_.empty() || chunks_.back().size() == chunks_.back().capacity()) {
      chunks_.emplace_back();
      chunks_.back().reserve(chunks_.size() == 1 ? First : std::min(Max, chunks_[chunks_.size() - 2].capacity() * 2));
    }
    chunks_.back().push_back(v);
    ++size_;
  }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const T& operator[](std::size_t i) const {
    static_assert(First == Max, "random access needs equal chunks");
    return chunks_[i / Max][i % Max];
  }
  // The elements as one vector of exactly their number; empties this.
  std::vector<T> take() {
    std::vector<T> out;
    out.reserve(size_);
    for (auto& c : chunks_) {
      out.insert(out.end(), c.begin(), c.end());
      std::vector<T>().swap(c);
    }
    chunks_.clear();
    size_ = 0;
    return out;
  }

 private:
  std::vector<std::vector<T>> chunks_;
  std::size_t size_ = 0;
};

struct RawState {
  std::int64_t begin;
  std::int64_t end;
  std::uint32_t state;
};
struct RawOmp {
  std::int64_t begin;
  std::int64_t end;
  std::uint32_t id;
  OmpKind kind;
};
constexpr std::size_t kOmpKinds = static_cast<std::size_t>(OmpKind::Count_);
// The OpenMP interval kind of an event type, or Count_ for another type.
OmpKind omp_kind_of(std::int64_t type) {
  switch (type) {
    case kPrvOmpParallel: return OmpKind::ParallelRegion;
    case kPrvOmpParallelFunction: return OmpKind::ParallelFunction;
    case kPrvOmpTaskFunction: return OmpKind::Task;
    default: return OmpKind::Count_;
  }
}
// The records of one location (a thread of a task) as parsed.
struct RawTask {
  Chunks<RawLine> lines;
  Chunks<RawPair> pairs;
  std::vector<RawState> states;          // not Running, not inside an MPI call (see state_record)
  Chunks<CounterSample> counters;
  std::int64_t last = -1;          // time of the last state/event record
  std::uint64_t last_line = 0;     // its line number
  std::int64_t covered = 0;        // the state records cover [0, covered)
  std::uint64_t pairs_read = 0;    // used pairs read (kept or not)
  std::int64_t mpi_open = -1;      // Enter time of the open MPI call, -1 if none
  std::size_t user_depth = 0;      // user regions open (as pass A will count them, near enough)
  std::array<std::int64_t, kOmpKinds> omp_begin{-1, -1, -1};  // the open OpenMP interval per kind, -1 if none
  std::array<std::uint32_t, kOmpKinds> omp_id{};
  std::vector<RawOmp> omp;         // closed OpenMP intervals (owned tasks), in order of end
};
// A communication record as pass D needs it; its logical times (pass B only) are kept apart
// and freed after pass B.
struct RawComm {
  std::int64_t psend, precv;
  std::int64_t size;
  std::int32_t stask;  // 0-based
  std::int32_t rtask;
  std::int32_t tag;
};
struct LogicalTimes {
  std::int64_t lsend, lrecv;
};

bool used_type(std::int64_t type) {
  return is_mpi_type(type) || (type >= kPrvCollSendSize && type <= kPrvCollComm) || type == kPrvUserFunction ||
         (type >= kPrvRequestCompleted && type <= kPrvSendTag);
}

// Why a pair of a used type was not used (ParaverReadStats::skipped names it).
enum class Misplaced : std::uint8_t {
  OutsideCall,    // a call's detail with no MPI call open
  InsideCall,     // a user-function event inside an MPI call
  NothingOpen,    // an end (value 0) with nothing open
  NoRequest,      // a completion of a request that was never started
  WorkerThread,   // a call's detail on a worker thread (no messages there)
  BadValue,       // a value out of range for its type
};
const char* misplaced_text(Misplaced m) {
  switch (m) {
    case Misplaced::OutsideCall: return "outside an MPI call";
    case Misplaced::InsideCall: return "inside an MPI call";
    case Misplaced::NothingOpen: return "ending nothing open";
    case Misplaced::NoRequest: return "completing a request never started";
    case Misplaced::WorkerThread: return "on a worker thread (calls there carry no messages)";
    case Misplaced::BadValue: return "with a value out of range";
  }
  return "?";
}

// Labels of event types Extrae writes without declaring them in the .pcf.
const char* builtin_label(std::int64_t type) {
  switch (type) {
    case 50000061: return "Extrae's communicator alias marker (MPI_ALIAS_COMM_CREATE_EV), not an MPI call";
    default: return nullptr;
  }
}

// waitlab's descriptors of one call (waitlab-written traces only; kept beside the calls).
struct Desc {
  std::int64_t send_dest = kUnset, send_tag = kUnset;
  std::int64_t recv_src = kUnset, recv_tag = kUnset, recv_size = kUnset;
  std::int64_t req = kUnset, t_req = -1;
};
constexpr std::uint32_t kNone32 = std::numeric_limits<std::uint32_t>::max();

// One MPI call of a task, as rebuilt from its events (compact: a trace holds all of them
// at once between passes A and D).
struct RCall {
  std::int64_t t_enter = 0;
  std::int64_t t_leave = -1;  // -1: never left
  std::int64_t coll_sent = 0, coll_recv = 0, coll_comm = kUnset;
  std::uint32_t send_rec = kNone32, recv_rec = kNone32;  // communication record indices
  std::uint32_t comp_first = 0, comp_count = 0;
  CommId comm = kCommWorld;
  Rank root = kNoRank;
  std::uint32_t desc = kNone32;  // index into TaskCalls::descs
  MpiOp op = MpiOp::None;
  bool root_flag = false;
};
struct Item {
  std::int64_t time;
  std::uint32_t ref;  // region (Enter/Leave) or call index
  enum Kind : std::uint8_t { Enter, Leave, Call } kind;
};
struct Completion {
  std::int64_t time;
  std::int64_t req;
};
struct TaskCalls {
  std::vector<RCall> calls;
  std::vector<Desc> descs;
  const Desc& desc(const RCall& c) const {
    static const Desc none;
    return c.desc == kNone32 ? none : descs[c.desc];
  }
  Desc& desc(RCall& c) {
    if (c.desc == kNone32) {
      c.desc = static_cast<std::uint32_t>(descs.size());
      descs.emplace_back();
    }
    return descs[c.desc];
  }
  std::vector<Item> items;
  std::vector<Completion> comps;
};

// Finds the first free slot at or after i (slots are taken once; path compression).
class FreeSlots {
 public:
  explicit FreeSlots(std::size_t n) : next_(n + 1) {
    for (std::size_t i = 0; i <= n; ++i) next_[i] = static_cast<std::uint32_t>(i);
  }
  std::size_t find(std::size_t i) {
    std::size_t root = i;
    while (next_[root] != root) root = next_[root];
    while (next_[i] != root) {
      const std::size_t nx = next_[i];
      next_[i] = static_cast<std::uint32_t>(root);
      i = nx;
    }
    return root;
  }
  void take(std::size_t i) { next_[i] = static_cast<std::uint32_t>(i + 1); }

 private:
  std::vector<std::uint32_t> next_;
};

class Reader {
 public:
  // Reads the tasks [first, last) (every task if `whole`).
  Reader(const std::string& path, ParaverReadStats& st, Rank first, Rank last, bool whole)
      : path_(path), st_(st), whole_(whole), own_first_(static_cast<std::size_t>(first)),
        own_last_(static_cast<std::size_t>(last)) {}

  TracePart read() {
    pcf_ = read_pcf(base_of(path_) + ".pcf");
    st_.waitlab_written = pcf_.waitlab;
    store_states_ = !pcf_.waitlab;
    Trace t;
    parse_prv(t.defs);
    st_.waitlab_written = st_.waitlab_written || saw_waitlab_;
    defs_regions_from_pcf(t.defs);
    const std::size_t n = header_.threads.size();
    t.locations.resize(own_last_ - own_first_);
    for (std::size_t k = 0; k < n; ++k) {
      const std::int64_t threads = header_.threads[k];
      if (!owns(k)) {
        define_noted(t.defs, first_[k] + static_cast<std::size_t>(threads));
        for (std::int64_t th = 1; th <= threads; ++th) raw_[first_[k] + static_cast<std::size_t>(th - 1)] = RawTask{};
        continue;
      }
      for (std::int64_t th = 1; th <= threads; ++th) {
        RawTask& rt = raw_[first_[k] + static_cast<std::size_t>(th - 1)];
        Location* loc = nullptr;
        if (th == 1) {
          loc = &t.locations[k - own_first_];
          pass_a(rt, calls_[k], t.defs, false);
        } else {
          t.threads.emplace_back();
          loc = &t.threads.back();
          TaskCalls tc;
          pass_a(rt, tc, t.defs, true);
          pass_d(tc, t.defs, loc->events);
        }
        loc->rank = static_cast<Rank>(k);
        loc->thread = static_cast<std::int32_t>(th - 1);
        finish_location(rt, *loc);
        rt = RawTask{};  // the raw records are no longer needed
      }
    }
    stream_ = {};
    give_back();
    pass_b();
    logical_ = {};
    pass_c(t.defs);
    std::size_t freed = 0;
    for (std::size_t k = 0; k < n; ++k) {
      if (!owns(k)) {
        // Pass D defines the MPI regions of a task's calls as it meets them: another task's
        // first-met operations, in the order it met them.
        for (const MpiOp op : ops_met_[k].order) mpi_region(t.defs, op);
        continue;
      }
      freed += calls_[k].calls.size() * sizeof(RCall) + calls_[k].items.size() * sizeof(Item);
      pass_d(calls_[k], t.defs, t.locations[k - own_first_].events);
      if (freed > kTrimEvery) {
        give_back();
        freed = 0;
      }
    }
    if (!st_.waitlab_written) {
      t.origin = Origin::Extrae;
      t.span_begin = 0;
      t.span_end = seconds(header_.end_time);
      t.counters = counters_;
    }
    st_.locations = raw_.size();
    st_.declared_end = seconds(header_.end_time);
    st_.last_record_time = seconds(last_time_);
    st_.ends_early = static_cast<double>(header_.end_time - last_time_) >
                     kParaverEndsEarlyFraction * static_cast<double>(header_.end_time);
    report_skipped();
    return make_part(std::move(t), n, static_cast<Rank>(own_first_), std::move(weights_));
  }

 private:
  // The intermediate arrays are freed phase by phase while the trace's arrays grow; glibc
  // keeps freed heap memory resident (only the top of the heap is returned), and the freed
  // pieces are of sizes the new arrays cannot reuse. Returning them keeps the resident peak
  // near what is live.
  static constexpr std::size_t kTrimEvery = std::size_t{64} << 20;
  static void give_back() { util::release_freed_memory(); }

  [[noreturn]] void fail(std::uint64_t line, const std::string& what) const {
    throw InputError(path_ + ":" + std::to_string(line) + ": " + what);
  }

  // ---- parsing ----

  // `d`: the definitions the other tasks' records note their regions for (define_noted).
  void parse_prv(Definitions& d) {
    LineReader in(path_);
    std::string_view line;
    if (!in.next(line)) fail(1, "empty file (expected the '#Paraver' header)");
    if (trim(line) == "new format" && !in.next(line)) fail(2, "no '#Paraver' header after 'new format'");
    header_ = HeaderParser(line, path_, in.line_no()).parse();
    std::size_t locations = 0;
    for (std::int64_t th : header_.threads) {
      first_.push_back(locations);
      locations += static_cast<std::size_t>(th);
      if (locations > kMaxLocations)
        fail(in.line_no(), "the header declares more than " + std::to_string(kMaxLocations) + " threads in all");
    }
    raw_.resize(locations);
    const std::size_t tasks = header_.threads.size();
    if (whole_) own_first_ = 0, own_last_ = tasks;
    if (own_last_ > tasks)
      throw std::invalid_argument(path_ + ": ranks [" + std::to_string(own_first_) + ", " + std::to_string(own_last_) +
                                  ") of a trace of " + std::to_string(tasks) + " tasks");
    if (own_last_ - own_first_ < tasks) stream_.resize(locations);
    calls_.resize(tasks);
    defs_ = &d;
    for (std::int64_t c = 0; c < header_.comms; ++c) {
      if (!in.next(line))
        fail(in.line_no() + 1, "expected " + std::to_string(header_.comms) + " communicator lines after the header, found " +
                                   std::to_string(c));
      comm_line(line, in.line_no());
    }
    build_comms(d);  // before the records: another task's collectives are resolved as they end
    weights_.assign(tasks, 0);
    if (own_last_ - own_first_ < tasks) ops_met_.resize(tasks), coll_seq_.resize(tasks);
    while (in.next(line)) {
      if (line.empty() || line[0] == '#') continue;
      const std::uint64_t no = in.line_no();
      const char k0 = line[0];
      if (line.size() > 1 && line[1] == ':' && k0 >= '1' && k0 <= '4') {
        if (k0 == '1') state_record(line, no);
        else if (k0 == '2') event_record(line, no);
        else if (k0 == '3') comm_record(line, no);
        else ++skip_global_ops_;
        continue;
      }
      const std::size_t colon = line.find(':');
      const std::string_view kind = line.substr(0, colon);
      if (kind == "1" || kind == "2" || kind == "3") {
        fail(no, "record type " + std::string(kind) + " without fields");
      } else if (kind == "4") {
        ++skip_global_ops_;
      } else if (kind == "c" || kind == "C" || kind == "i" || kind == "I") {
        fail(no, "communicator line after the records (the header declares " + std::to_string(header_.comms) + ")");
      } else if (trim(line).empty()) {
        continue;
      } else {
        fail(no, "unknown record type " + quote(kind) + " (expected 1, 2, 3, 4, a communicator line or '#')");
      }
    }
    for (std::size_t k = 0; k < tasks; ++k)
      if (!owns(k)) retire_calls(k, -1);
  }

  void comm_line(std::string_view line, std::uint64_t no) {
    const char k = line.empty() ? '\0' : line[0];
    if (k == 'i' || k == 'I') {
      ++skip_intercomms_;  // inter-communicators: not modelled
      return;
    }
    if (k != 'c' && k != 'C') fail(no, "expected a communicator line 'c:appl:id:n:tasks...', found " + quote(line));
    Fields f(line.substr(line.size() > 1 ? 2 : line.size()), path_, no, "communicator line");
    if (line.size() < 2 || line[1] != ':') f.fail("expected 'c:' at the start");
    const std::size_t fields = f.count();
    const std::int64_t appl = f.num("the application");
    if (appl != 1) f.fail("application " + std::to_string(appl) + " out of range (the header declares 1)");
    const std::int64_t id = f.num("the communicator id");
    const std::int64_t m = f.num("the number of tasks");
    if (m < 0 || static_cast<std::size_t>(m) + 3 != fields)
      f.fail("expected " + std::to_string(m) + " tasks after the count, found " + std::to_string(fields - std::min<std::size_t>(fields, 3)));
    for (const auto& c : raw_comms_)
      if (c.first == id) f.fail("communicator id " + std::to_string(id) + " declared twice");
    const std::size_t tasks = header_.threads.size();
    std::vector<Rank> members;
    std::vector<char> seen(tasks, 0);
    for (std::int64_t i = 0; i < m; ++i) {
      const std::int64_t task = f.num("a task");
      if (task < 1 || static_cast<std::size_t>(task) > tasks)
        f.fail("task " + std::to_string(task) + " out of range (the header declares " + std::to_string(tasks) +
               " tasks)");
      if (seen[static_cast<std::size_t>(task - 1)]++) f.fail("task " + std::to_string(task) + " listed twice");
      members.push_back(static_cast<Rank>(task - 1));
    }
    raw_comms_.emplace_back(id, std::move(members));
  }

  struct Where {
    std::size_t loc;     // index into raw_
    std::int64_t task;   // 0-based
    bool first_thread;   // thread 1 of its task
  };

  // cpu:appl:task:thread common to every record.
  Where common(Fields& f) {
    const std::int64_t cpu = f.num("a CPU");
    if (cpu < 0 || (header_.cpus > 0 && cpu > header_.cpus))
      f.fail("CPU " + std::to_string(cpu) + " out of range (the header declares " + std::to_string(header_.cpus) + ")");
    const std::int64_t appl = f.num("an application");
    if (appl != 1) f.fail("application " + std::to_string(appl) + " out of range (the header declares 1)");
    const std::int64_t task = f.num("a task");
    const std::size_t tasks = header_.threads.size();
    if (task < 1 || static_cast<std::size_t>(task) > tasks)
      f.fail("task " + std::to_string(task) + " out of range (the header declares " + std::to_string(tasks) +
             " tasks)");
    const std::int64_t thread = f.num("a thread");
    const std::int64_t threads = header_.threads[static_cast<std::size_t>(task - 1)];
    if (thread < 1 || thread > threads)
      f.fail("thread " + std::to_string(thread) + " out of range (task " + std::to_string(task) + " has " +
             std::to_string(threads) + ")");
    return Where{first_[static_cast<std::size_t>(task - 1)] + static_cast<std::size_t>(thread - 1), task - 1,
                 thread == 1};
  }

  std::int64_t time_field(Fields& f, const char* what) {
    const std::int64_t t = f.num(what);
    if (t < 0) f.fail(std::string(what) + " " + std::to_string(t) + " is negative");
    return t;
  }

  void in_order(Fields& f, const Where& w, std::int64_t time, std::uint64_t no) {
    RawTask& rt = raw_[w.loc];
    if (time < rt.last)
      f.fail("time " + std::to_string(time) + " goes backwards (" + location_name(w) + " has a record at " +
             std::to_string(rt.last) + " on line " + std::to_string(rt.last_line) + ")");
    rt.last = time;
    rt.last_line = no;
  }

  std::string location_name(const Where& w) const {
    return "task " + std::to_string(w.task + 1) + " thread " +
           std::to_string(w.loc - first_[static_cast<std::size_t>(w.task)] + 1);
  }

  // A not-Running state stretch of a location, merged with the previous one when adjacent
  // and of the same state.
  static void push_state(RawTask& rt, std::int64_t begin, std::int64_t end, std::uint32_t state) {
    if (!rt.states.empty() && rt.states.back().state == state && rt.states.back().end == begin) {
      rt.states.back().end = end;
      return;
    }
    rt.states.push_back(RawState{begin, end, state});
  }

  // An MPI call event of a location at time t (value v, 0 = the call ends): the states
  // inside the call that ends here (a new call ends the open one, as pass A reads it) are
  // the call's own (Extrae's MPI states) and are dropped; the call covers them.
  static void mpi_edge(RawTask& rt, std::int64_t t, std::int64_t v) {
    if (rt.mpi_open >= 0 && t > rt.mpi_open) {
      auto& s = rt.states;
      std::size_t k = s.size();
      while (k > 0 && s[k - 1].begin >= t) --k;  // beginning when the call ends: stay
      std::size_t j = k;
      while (j > 0 && s[j - 1].begin >= rt.mpi_open && s[j - 1].end <= t) --j;
      if (j < k) s.erase(s.begin() + static_cast<std::ptrdiff_t>(j), s.begin() + static_cast<std::ptrdiff_t>(k));
    }
    rt.mpi_open = v != 0 ? t : -1;
  }

  void state_record(std::string_view line, std::uint64_t no) {
    Fields f(line.substr(2), path_, no, "state record");
    if (f.count() != 7)
      f.fail("expected 8 fields '1:cpu:appl:task:thread:begin:end:state', found " + std::to_string(f.count() + 1));
    const Where w = common(f);
    const std::int64_t begin = time_field(f, "the begin time");
    const std::int64_t end = f.num("the end time");
    if (end != -1 && end < begin)
      f.fail("end time " + std::to_string(end) + " before the begin time " + std::to_string(begin));
    const std::int64_t state = f.num("a state");
    if (state < 0 || state > std::numeric_limits<std::uint32_t>::max())
      f.fail("state " + std::to_string(state) + " out of range");
    ++st_.records;
    ++weights_[static_cast<std::size_t>(w.task)];
    in_order(f, w, begin, no);
    last_time_ = std::max({last_time_, begin, end});
    if (end == -1) {
      ++skip_endless_states_;
      return;
    }
    if (store_states_ && owns(static_cast<std::size_t>(w.task))) {
      RawTask& rt = raw_[w.loc];
      const std::int64_t b = std::max(begin, rt.covered);
      if (b > rt.covered) push_state(rt, rt.covered, b, kStateNoRecord);  // time no record covers
      if (state != kParaverRunning && end > b) push_state(rt, b, end, static_cast<std::uint32_t>(state));
      rt.covered = std::max(rt.covered, end);
    }
  }

  void event_record(std::string_view line, std::uint64_t no) {
    Fields f(line.substr(2), path_, no, "event record");
    // The shape is checked as the fields are read (a count of every ':' first would read each line
    // once more): at least 7 fields after the record type, then whole type:value pairs.
    const auto bad_shape = [&] {
      f.fail("expected '2:cpu:appl:task:thread:time:type:value[:type:value...]' (an even number of at least 8 "
             "fields), found " +
             std::to_string(std::count(line.begin(), line.end(), ':') + 1) + " fields");
    };
    if (!f.at_least(7)) bad_shape();
    const Where w = common(f);
    const std::int64_t time = time_field(f, "the time");
    ++st_.records;
    ++weights_[static_cast<std::size_t>(w.task)];
    in_order(f, w, time, no);
    last_time_ = std::max(last_time_, time);
    RawTask& rt = raw_[w.loc];
    // The owned tasks' pairs are kept for pass A; another task's go through it at once.
    const bool keep = owns(static_cast<std::size_t>(w.task));
    Chunks<RawPair>* kept = keep ? &rt.pairs : nullptr;
    line_pairs_.clear();
    const auto first = static_cast<std::uint32_t>(rt.pairs.size());
    std::uint32_t used = 0;
    std::uint64_t ins = 0, cyc = 0;
    std::uint8_t has = 0;
    // User-region nesting, counted as pass A will (a line with an exit, 69000006, leaves one
    // region whatever its 60000019 says; user events inside an MPI call are not used), so
    // that a file nesting deeper than kMaxRegionDepth fails at its line.
    std::size_t depth = rt.user_depth, peak = depth, exits = 0;
    while (!f.done()) {
      const std::int64_t type = f.num("an event type");
      if (f.done()) bad_shape();
      const std::int64_t value = f.value("an event value");
      ++st_.event_pairs;
      if (type == kPrvPapiTotIns) {
        ins = static_cast<std::uint64_t>(value);
        has |= kHasInstructions;
        ++st_.used_events;
      } else if (type == kPrvPapiTotCyc) {
        cyc = static_cast<std::uint64_t>(value);
        has |= kHasCycles;
        ++st_.used_events;
      } else if (const OmpKind ok = omp_kind_of(type); ok != OmpKind::Count_) {
        omp_edge(rt, keep, time, type, ok, value);
      } else if (used_type(type)) {
        if (kept) kept->push_back(RawPair{type, value});
        else line_pairs_.push_back(RawPair{type, value});
        ++used;
        if (is_mpi_type(type)) mpi_edge(rt, time, value);
        if (type == kPrvUserFunction && rt.mpi_open < 0) {
          if (value != 0) peak = std::max(peak, ++depth);
          else if (depth > 0) --depth;
        } else if (type == kPrvUserExit && rt.mpi_open < 0 && value > 0) {
          ++exits;
        }
        if (type == kPrvRequestStarted || type == kPrvRequestCompleted) st_.waitlab_events = true;
        if (type >= kPrvRequestCompleted) saw_waitlab_ = true;
      } else {
        count_unknown(type);
      }
    }
    if (exits > 0) {
      rt.user_depth -= std::min(rt.user_depth, exits);
    } else {
      if (peak > kMaxRegionDepth)
        f.fail("user regions (event type 60000019) of " + location_name(w) + " nested " + std::to_string(peak) +
               " deep, deeper than the " + std::to_string(kMaxRegionDepth) + " levels a trace may have");
      rt.user_depth = depth;
    }
    if (has) {
      if (keep) rt.counters.push_back(CounterSample{seconds(time), ins, cyc});
      counters_ |= has;
    }
    if (used > 0) {
      rt.pairs_read += used;
      if (rt.pairs_read > std::numeric_limits<std::uint32_t>::max()) f.fail("too many events for one thread");
      if (keep) {
        rt.lines.push_back(RawLine{time, first, used});
        st_.kept_pairs += used;
      } else {
        stream_line(w, time);
      }
    }
  }

  // An OpenMP event (Location::omp): a value ≠ 0 opens an interval of its kind (closing the
  // open one: Paraver's last event value changes), 0 closes the open one. An end with nothing
  // open, or an id beyond 32 bits, is skipped (ParaverReadStats::skipped names it).
  void omp_edge(RawTask& rt, bool keep, std::int64_t time, std::int64_t type, OmpKind kind, std::int64_t value) {
    ++st_.used_events;
    const auto k = static_cast<std::size_t>(kind);
    if (value < 0 || value > std::numeric_limits<std::uint32_t>::max()) return misplace(type, Misplaced::BadValue);
    if (value == 0 && rt.omp_begin[k] < 0) return misplace(type, Misplaced::NothingOpen);
    if (rt.omp_begin[k] >= 0 && keep) rt.omp.push_back(RawOmp{rt.omp_begin[k], time, rt.omp_id[k], kind});
    rt.omp_begin[k] = value != 0 ? time : -1;
    rt.omp_id[k] = static_cast<std::uint32_t>(value);
  }

  // Pass A over one event record of a task the part does not own (its used pairs in
  // line_pairs_): regions are noted (note()), and of thread 1's calls only the open one is
  // kept; the others are retired (retire_calls). Items are not kept.
  void stream_line(const Where& w, std::int64_t time) {
    const auto task = static_cast<std::size_t>(w.task);
    TaskCalls& tc = w.first_thread ? calls_[task] : worker_items_;
    PassA& a = stream_[w.loc];
    recording_ = w.loc;
    pass_a_line(a, tc, *defs_, !w.first_thread, time, line_pairs_.data(), static_cast<std::uint32_t>(line_pairs_.size()));
    recording_ = kNoLocation;
    if (w.first_thread) a.open = retire_calls(task, a.open);
    tc.items.clear();
  }

  // What the whole reader's passes C and D take from another task's thread-1 calls, taken from
  // them as they end: the operations in the order first met (pass D defines their regions),
  // and per collective instance (communicator, sequence number), the lowest task flagged its
  // root (pass C). Keeps the call `open` (-1: none) as the only one; returns its new index.
  std::int64_t retire_calls(std::size_t task, std::int64_t open) {
    TaskCalls& tc = calls_[task];
    for (std::size_t i = 0; i < tc.calls.size(); ++i) {
      if (static_cast<std::int64_t>(i) == open) continue;
      RCall& c = tc.calls[i];
      OpsMet& met = ops_met_[task];
      const std::uint64_t bit = std::uint64_t{1} << static_cast<unsigned>(c.op);
      if (!(met.seen & bit)) met.seen |= bit, met.order.push_back(c.op);
      if (!is_collective(c.op)) continue;
      resolve_comm(c);
      std::vector<std::uint32_t>& seq = coll_seq_[task];
      if (seq.size() <= c.comm) seq.resize(c.comm + std::size_t{1}, 0u);
      const std::uint64_t key = (std::uint64_t{c.comm} << 32) | seq[c.comm]++;
      if (!c.root_flag) continue;
      const auto [it, added] = roots_.emplace(key, static_cast<Rank>(task));
      if (!added) it->second = std::min(it->second, static_cast<Rank>(task));
    }
    if (open < 0) {
      tc = TaskCalls{};
      return -1;
    }
    RCall kept = tc.calls[static_cast<std::size_t>(open)];
    kept.desc = kNone32;  // the descriptors and completions serve pass B and D only
    tc.calls.assign(1, kept);
    tc.descs.clear();
    tc.comps.clear();
    return 0;
  }

  void comm_record(std::string_view line, std::uint64_t no) {
    Fields f(line.substr(2), path_, no, "communication record");
    const std::size_t fields = f.count() + 1;
    if (fields != 15)
      f.fail("expected 15 fields '3:cpu:appl:task:thread:lsend:psend:cpu:appl:task:thread:lrecv:precv:size:tag', "
             "found " +
             std::to_string(fields));
    const Where s = common(f);
    const std::int64_t lsend = time_field(f, "the logical send time");
    const std::int64_t psend = time_field(f, "the physical send time");
    const Where r = common(f);
    const std::int64_t lrecv = time_field(f, "the logical receive time");
    const std::int64_t precv = time_field(f, "the physical receive time");
    const std::int64_t size = f.num("the size");
    if (size < 0) f.fail("negative size " + std::to_string(size));
    const std::int64_t tag = f.num("the tag");
    if (tag < std::numeric_limits<std::int32_t>::min() || tag > std::numeric_limits<std::int32_t>::max())
      f.fail("tag " + std::to_string(tag) + " out of range");
    ++st_.records;
    ++weights_[static_cast<std::size_t>(s.task)];
    ++weights_[static_cast<std::size_t>(r.task)];
    last_time_ = std::max({last_time_, lsend, psend, lrecv, precv});
    if (!s.first_thread || !r.first_thread) {
      ++skip_worker_comms_;
      return;
    }
    if (thread1_comms_++ >= kNone32) f.fail("too many communication records");  // in every part alike
    // Pass B attaches a record's sides to the calls of its two tasks: only the owned ones'.
    if (!owns(static_cast<std::size_t>(s.task)) && !owns(static_cast<std::size_t>(r.task))) return;
    comms_.push_back(RawComm{psend, precv, size, static_cast<std::int32_t>(s.task), static_cast<std::int32_t>(r.task),
                             static_cast<std::int32_t>(tag)});
    logical_.push_back(LogicalTimes{lsend, lrecv});
  }

  // ---- what was not used ----

  // An event type the reader does not use. Lines repeat their types in one order, so the
  // entry after the last one hit is tried first.
  void count_unknown(std::int64_t type) {
    if (hint_ < unknown_.size() && unknown_[hint_].first == type) {
      ++unknown_[hint_++].second;
      return;
    }
    for (std::size_t i = 0; i < unknown_.size(); ++i)
      if (unknown_[i].first == type) {
        ++unknown_[i].second;
        hint_ = i + 1;
        return;
      }
    unknown_.emplace_back(type, 1);
    hint_ = unknown_.size();
  }

  // A pair of a used type that pass A or D could not use (pass A counted it used).
  void misplace(std::int64_t type, Misplaced why) {
    ++misplaced_[{type, static_cast<int>(why)}];
    --st_.used_events;
  }

  std::string type_label(std::int64_t type) const {
    const auto it = pcf_.types.find(type);
    if (it != pcf_.types.end() && !it->second.empty()) return it->second;
    const char* b = builtin_label(type);
    return b ? b : "unlabelled";
  }

  void report_skipped() {
    std::map<std::pair<std::int64_t, int>, std::uint64_t> all(misplaced_.begin(), misplaced_.end());
    for (const auto& [type, n] : unknown_) all[{type, -1}] += n;
    // Pass D completes the requests of the tasks read only: a part lists their kind even at 0,
    // for merge_paraver_skipped to sum (every other kind is the whole trace's in every part).
    if (!whole_ && st_.waitlab_events) all[{kPrvRequestCompleted, static_cast<int>(Misplaced::NoRequest)}] += 0;
    st_.skipped_events = 0;
    for (const auto& [key, n] : all) {
      std::string what = "event type " + std::to_string(key.first) + " (" + type_label(key.first) + ")";
      if (key.second >= 0) what += std::string(" ") + misplaced_text(static_cast<Misplaced>(key.second));
      st_.skipped.emplace_back(std::move(what), n);
      st_.skipped_events += n;
    }
    const std::pair<const char*, std::uint64_t> records[] = {
        {"global-op records (type 4)", skip_global_ops_},
        {"inter-communicator lines", skip_intercomms_},
        {"communication records of worker threads", skip_worker_comms_},
        {"state records without an end time", skip_endless_states_},
    };
    st_.skipped_records = 0;
    for (const auto& [what, n] : records) {
      if (n == 0) continue;
      st_.skipped.emplace_back(what, n);
      st_.skipped_records += n;
    }
  }

  // The states and counters of a location, once pass A knows its MPI calls.
  void finish_location(RawTask& rt, Location& loc) {
    // OpenMP intervals still open at the end last to the header's end time.
    for (std::size_t k = 0; k < kOmpKinds; ++k)
      if (rt.omp_begin[k] >= 0)
        rt.omp.push_back(RawOmp{rt.omp_begin[k], std::max(rt.omp_begin[k], header_.end_time), rt.omp_id[k],
                                static_cast<OmpKind>(k)});
    std::stable_sort(rt.omp.begin(), rt.omp.end(), [](const RawOmp& a, const RawOmp& b) {
      return a.begin != b.begin ? a.begin < b.begin : a.kind < b.kind;
    });
    loc.omp.reserve(rt.omp.size());
    for (const RawOmp& o : rt.omp) loc.omp.push_back(OmpInterval{seconds(o.begin), seconds(o.end), o.kind, o.id});
    if (st_.waitlab_written) return;
    if (rt.covered < header_.end_time) push_state(rt, rt.covered, header_.end_time, kStateNoRecord);
    loc.states.reserve(rt.states.size());
    for (const RawState& s : rt.states)
      loc.states.push_back(StateInterval{seconds(s.begin), seconds(s.end), s.state});
    loc.counters = rt.counters.take();
    st_.state_intervals += loc.states.size();
    st_.counter_samples += loc.counters.size();
  }

  // ---- definitions ----

  void defs_regions_from_pcf(Definitions& d) {
    // Labelled regions in value order: waitlab writes value = region id + 1 for both lists,
    // so its region ids come back unchanged.
    std::map<std::int64_t, std::pair<std::string, bool>> all;
    for (const auto& [v, label] : pcf_.mpi_regions)
      if (v > 0) all[v] = {label, true};
    for (const auto& [v, label] : pcf_.user)
      if (v > 0) all[v] = {label, false};
    for (const auto& [v, entry] : all) {
      if (entry.second) {
        const MpiOp op = mpi_op_from_name(entry.first);
        d.regions.push_back(Region{entry.first, op, "MPI"});
      } else {
        user_[v] = static_cast<RegionId>(d.regions.size());
        d.regions.push_back(Region{entry.first, MpiOp::None, ""});
      }
    }
  }

  RegionId user_region(Definitions& d, std::int64_t v) {
    if (recording_ != kNoLocation) return note(RegionKey{RegionKey::User, v, 0});
    const auto it = user_.find(v);
    if (it != user_.end()) return it->second;
    const auto id = static_cast<RegionId>(d.regions.size());
    d.regions.push_back(Region{"function " + std::to_string(v), MpiOp::None, ""});
    user_[v] = id;
    return id;
  }

  // An MPI call the event model does not know: a plain region named by its label.
  RegionId plain_region(Definitions& d, std::int64_t type, std::int64_t value) {
    if (recording_ != kNoLocation) return note(RegionKey{RegionKey::Plain, type, value});
    const auto key = std::make_pair(type, value);
    const auto it = plain_.find(key);
    if (it != plain_.end()) return it->second;
    const auto label = pcf_.mpi_values.find(key);
    const std::string name = label != pcf_.mpi_values.end() ? label->second : "MPI call " + std::to_string(value);
    RegionId id = static_cast<RegionId>(d.regions.size());
    for (std::size_t i = 0; i < d.regions.size(); ++i)
      if (d.regions[i].name == name && d.regions[i].op == MpiOp::None && d.regions[i].file == "MPI") {
        id = static_cast<RegionId>(i);
        break;
      }
    if (id == d.regions.size()) d.regions.push_back(Region{name, MpiOp::None, "MPI"});
    plain_[key] = id;
    return id;
  }

  RegionId mpi_region(Definitions& d, MpiOp op) {
    if (recording_ != kNoLocation) return note(RegionKey{RegionKey::Mpi, static_cast<std::int64_t>(op), 0});
    auto& slot = mpi_regions_[static_cast<std::size_t>(op)];
    if (slot == kNoRegion) slot = d.mpi_region(op);
    return slot;
  }

  // ---- the regions of the tasks a part does not own ----
  //
  // Pass A defines regions as it meets them, task after task; a part runs it on another task's
  // records as they are read (they are not kept), in file order. There the three functions
  // above only note what they were asked for, under a stand-in id: a key first asked for by
  // location `loc` is defined where the whole reader defines it, when the tasks are taken in
  // order (define_noted); no item of another task is kept, so no stand-in id stays.

  struct RegionKey {
    enum Kind : std::uint8_t { User, Plain, Mpi } kind;
    std::int64_t a, b;  // User: the value; Plain: type, value; Mpi: the MpiOp
    auto operator<=>(const RegionKey&) const = default;
  };
  struct Need {
    std::size_t loc;     // the first location (in raw_ order) that asked for the key
    std::uint64_t when;  // when it first asked, in reading order
  };

  RegionId note(const RegionKey& k) {
    const auto [it, added] = noted_.emplace(k, static_cast<RegionId>(noted_keys_.size()));
    if (added) {
      noted_keys_.push_back(k);
      needs_.push_back(Need{recording_, notes_});
    } else if (recording_ < needs_[it->second].loc) {
      needs_[it->second] = Need{recording_, notes_};
    }
    ++notes_;
    return it->second;
  }

  // Defines the keys first asked for by locations before `end` (in raw_ order), in the order
  // the whole reader defines them.
  void define_noted(Definitions& d, std::size_t end) {
    if (order_.size() != noted_keys_.size()) {
      order_.resize(noted_keys_.size());
      for (std::size_t i = 0; i < order_.size(); ++i) order_[i] = static_cast<RegionId>(i);
      std::sort(order_.begin(), order_.end(), [&](RegionId x, RegionId y) {
        return std::tie(needs_[x].loc, needs_[x].when) < std::tie(needs_[y].loc, needs_[y].when);
      });
    }
    for (; next_noted_ < order_.size() && needs_[order_[next_noted_]].loc < end; ++next_noted_) {
      const RegionId i = order_[next_noted_];
      const RegionKey& k = noted_keys_[i];
      if (k.kind == RegionKey::User) user_region(d, k.a);
      else if (k.kind == RegionKey::Plain) plain_region(d, k.a, k.b);
      else mpi_region(d, static_cast<MpiOp>(k.a));
    }
  }

  // The operation of an MPI call value, or None for a call waitlab does not model.
  MpiOp call_op(std::int64_t type, std::int64_t value) const {
    const MpiOp op = op_of_value(value);
    if (op != MpiOp::None) return op;
    const auto label = pcf_.mpi_values.find({type, value});
    return label != pcf_.mpi_values.end() ? mpi_op_from_name(label->second) : MpiOp::None;
  }

  void build_comms(Definitions& d) {
    const std::size_t n = header_.threads.size();
    std::size_t world = raw_comms_.size();
    for (std::size_t i = 0; i < raw_comms_.size() && world == raw_comms_.size(); ++i)
      if (raw_comms_[i].second.size() == n) world = i;
    if (world == raw_comms_.size()) {
      Communicator w{"MPI_COMM_WORLD", {}};
      for (std::size_t r = 0; r < n; ++r) w.members.push_back(static_cast<Rank>(r));
      d.comms.push_back(std::move(w));
    } else {
      d.comms.push_back(Communicator{"MPI_COMM_WORLD", raw_comms_[world].second});
      comm_ids_[raw_comms_[world].first] = 0;
    }
    for (std::size_t i = 0; i < raw_comms_.size(); ++i) {
      if (i == world) continue;
      comm_ids_[raw_comms_[i].first] = static_cast<CommId>(d.comms.size());
      d.comms.push_back(Communicator{comm_name(raw_comms_[i].first), raw_comms_[i].second});
    }
  }

  // ---- pass A: calls and user regions of one task ----

  // What pass A carries from one event record of a location to the next.
  struct PassA {
    std::int64_t open = -1;        // open call
    std::int64_t open_plain = -1;  // open call of an MPI function waitlab does not model
    std::vector<RegionId> stack;   // user regions
  };

  // On a worker thread (worker = true) every MPI call is a plain Enter/Leave of its region:
  // Extrae's communication records and collective details belong to thread 1.
  void pass_a(RawTask& rt, TaskCalls& tc, Definitions& d, bool worker) {
    PassA a;
    const std::vector<RawLine> lines = rt.lines.take();  // one location's: a small copy
    const std::vector<RawPair> all_pairs = rt.pairs.take();
    for (const RawLine& ln : lines) pass_a_line(a, tc, d, worker, ln.time, all_pairs.data() + ln.first, ln.count);
  }

  // Pass A over one event record's used pairs (`count` of them at `pairs`, time t), `a` the
  // location's state after its earlier records.
  void pass_a_line(PassA& a, TaskCalls& tc, Definitions& d, bool worker, std::int64_t t, const RawPair* pairs,
                   std::uint32_t count) {
    std::int64_t& open = a.open;
    std::int64_t& open_plain = a.open_plain;
    std::vector<RegionId>& stack = a.stack;
    const Misplaced outside = worker ? Misplaced::WorkerThread : Misplaced::OutsideCall;
    bool has_exit = false;
    for (std::uint32_t i = 0; i < count; ++i) has_exit = has_exit || pairs[i].type == kPrvUserExit;
    for (std::uint32_t i = 0; i < count; ++i) {
      const std::int64_t type = pairs[i].type;
      const std::int64_t v = pairs[i].value;
      RCall* c = open >= 0 ? &tc.calls[static_cast<std::size_t>(open)] : nullptr;
      ++st_.used_events;  // misplace() takes it back
      if (is_mpi_type(type)) {
        if (v != 0) {
          // A call while another is open: the open one ends here.
          if (c) c->t_leave = t;
          if (open_plain >= 0) tc.items.push_back(Item{t, static_cast<RegionId>(open_plain), Item::Leave});
          open = open_plain = -1;
          const MpiOp op = call_op(type, v);
          if (op != MpiOp::None && !worker) {
            RCall nc;
            nc.op = op;
            nc.t_enter = t;
            nc.comp_first = static_cast<std::uint32_t>(tc.comps.size());
            open = static_cast<std::int64_t>(tc.calls.size());
            tc.items.push_back(Item{t, static_cast<std::uint32_t>(tc.calls.size()), Item::Call});
            tc.calls.push_back(nc);
          } else {
            open_plain = op != MpiOp::None ? mpi_region(d, op) : plain_region(d, type, v);
            tc.items.push_back(Item{t, static_cast<RegionId>(open_plain), Item::Enter});
            if (worker) ++st_.worker_mpi_calls;
          }
        } else if (c) {
          c->t_leave = t;
          open = -1;
        } else if (open_plain >= 0) {
          tc.items.push_back(Item{t, static_cast<RegionId>(open_plain), Item::Leave});
          open_plain = -1;
        } else {
          misplace(type, Misplaced::NothingOpen);
        }
        continue;
      }
      switch (type) {
        case kPrvUserFunction:
          if (has_exit) break;  // the exact exit follows on this line
          if (open >= 0 || open_plain >= 0) {
            misplace(type, Misplaced::InsideCall);
          } else if (v != 0) {
            const RegionId id = user_region(d, v);
            stack.push_back(id);
            tc.items.push_back(Item{t, id, Item::Enter});
          } else if (!stack.empty()) {
            tc.items.push_back(Item{t, stack.back(), Item::Leave});
            stack.pop_back();
          } else {
            misplace(type, Misplaced::NothingOpen);
          }
          break;
        case kPrvUserExit:
          if (open >= 0 || open_plain >= 0) {
            misplace(type, Misplaced::InsideCall);
          } else if (v <= 0) {
            misplace(type, Misplaced::BadValue);
          } else {
            const RegionId id = user_region(d, v);
            const auto it = std::find(stack.rbegin(), stack.rend(), id);
            if (it != stack.rend()) stack.erase(std::next(it).base());
            tc.items.push_back(Item{t, id, Item::Leave});
          }
          break;
        case kPrvCollSendSize:
        case kPrvCollRecvSize:
        case kPrvCollRoot:
        case kPrvCollComm:
          if (!c) {
            misplace(type, outside);
          } else if (type == kPrvCollSendSize) {
            c->coll_sent = v;
          } else if (type == kPrvCollRecvSize) {
            c->coll_recv = v;
          } else if (type == kPrvCollRoot) {
            c->root_flag = v != 0;
          } else {
            c->coll_comm = v;
          }
          break;
        case kPrvRequestCompleted:
          if (c && waits(c->op) && v > 0) {
            tc.comps.push_back(Completion{t, v - 1});
            ++c->comp_count;
          } else {
            misplace(type, c ? Misplaced::BadValue : outside);
          }
          break;
        case kPrvRequestStarted:
          if (c && (c->op == MpiOp::Isend || c->op == MpiOp::Irecv) && v > 0) {
            tc.desc(*c).req = v - 1;
            tc.desc(*c).t_req = t;
          } else {
            misplace(type, c ? Misplaced::BadValue : outside);
          }
          break;
        default:  // the descriptors of a call
          if (!c) {
            misplace(type, outside);
          } else if (type == kPrvRecvSource) {
            tc.desc(*c).recv_src = v;
          } else if (type == kPrvRecvTag) {
            tc.desc(*c).recv_tag = v;
          } else if (type == kPrvRecvSize) {
            tc.desc(*c).recv_size = v;
          } else if (type == kPrvSendDest) {
            tc.desc(*c).send_dest = v;
          } else if (type == kPrvSendTag) {
            tc.desc(*c).send_tag = v;
          } else {
            misplace(type, Misplaced::BadValue);
          }
          break;
      }
    }
  }

  // ---- pass B: communication records onto calls ----

  struct CallIndex {
    std::vector<std::uint32_t> calls;  // in program (= time) order
    FreeSlots free;
    explicit CallIndex(std::vector<std::uint32_t> c) : calls(std::move(c)), free(calls.size()) {}
  };

  template <typename Fits>
  std::int64_t take(CallIndex& idx, const std::vector<RCall>& calls, std::int64_t time, Fits fits) {
    const auto& v = idx.calls;
    auto lo = std::lower_bound(v.begin(), v.end(), time,
                               [&](std::uint32_t c, std::int64_t t) { return calls[c].t_enter < t; });
    // A call entered at the logical time, the first free one that fits.
    for (std::size_t q = idx.free.find(static_cast<std::size_t>(lo - v.begin()));
         q < v.size() && calls[v[q]].t_enter == time; q = idx.free.find(q + 1)) {
      if (fits(calls[v[q]])) {
        idx.free.take(q);
        return v[q];
      }
    }
    // Otherwise the call that contains the logical time, if free and fitting.
    if (lo != v.begin()) {
      const std::size_t q = static_cast<std::size_t>(lo - v.begin()) - 1;
      const RCall& c = calls[v[q]];
      if (idx.free.find(q) == q && (c.t_leave < 0 || c.t_leave >= time) && fits(c)) {
        idx.free.take(q);
        return v[q];
      }
    }
    return -1;
  }

  void pass_b() {
    const std::size_t n = calls_.size();
    std::vector<CallIndex> snd, rcv;
    snd.reserve(n);
    rcv.reserve(n);
    for (std::size_t k = 0; k < n; ++k) {
      std::vector<std::uint32_t> s, r;
      const auto& calls = calls_[k].calls;
      for (std::size_t i = 0; i < calls.size(); ++i) {
        if (sends(calls[i].op)) s.push_back(static_cast<std::uint32_t>(i));
        if (receives(calls[i].op)) r.push_back(static_cast<std::uint32_t>(i));
      }
      snd.emplace_back(std::move(s));
      rcv.emplace_back(std::move(r));
    }
    for (std::size_t i = 0; i < comms_.size(); ++i) {
      const RawComm& m = comms_[i];
      if (owns(static_cast<std::size_t>(m.stask))) send_side(snd, i);
      if (owns(static_cast<std::size_t>(m.rtask))) recv_side(rcv, i);
    }
  }

  // One side of the communication record i onto the first free call of its task that fits.
  void send_side(std::vector<CallIndex>& snd, std::size_t i) {
    const RawComm& m = comms_[i];
    TaskCalls& tc = calls_[static_cast<std::size_t>(m.stask)];
    const std::int64_t c = take(snd[static_cast<std::size_t>(m.stask)], tc.calls, logical_[i].lsend, [&](const RCall& x) {
      const Desc& w = tc.desc(x);
      return (w.send_dest == kUnset || w.send_dest == m.rtask + 1) && (w.send_tag == kUnset || w.send_tag == m.tag);
    });
    if (c >= 0) tc.calls[static_cast<std::size_t>(c)].send_rec = static_cast<std::uint32_t>(i);
    else ++st_.unmatched_comms;
  }
  void recv_side(std::vector<CallIndex>& rcv, std::size_t i) {
    const RawComm& m = comms_[i];
    TaskCalls& tc = calls_[static_cast<std::size_t>(m.rtask)];
    const std::int64_t c = take(rcv[static_cast<std::size_t>(m.rtask)], tc.calls, logical_[i].lrecv, [&](const RCall& x) {
      const Desc& w = tc.desc(x);
      return (w.recv_src == kUnset || w.recv_src == 0 || w.recv_src == m.stask + 1) &&
             (w.recv_tag == kUnset || w.recv_tag == m.tag);
    });
    if (c >= 0) tc.calls[static_cast<std::size_t>(c)].recv_rec = static_cast<std::uint32_t>(i);
    else ++st_.unmatched_comms;
  }

  // ---- pass C: communicators and roots of collectives ----

  // A collective's communicator: the c: line's its 50100004 event names (else MPI_COMM_WORLD).
  void resolve_comm(RCall& c) {
    if (c.coll_comm == kUnset) return;
    const auto it = comm_ids_.find(c.coll_comm);
    if (it != comm_ids_.end()) c.comm = it->second;
    else ++st_.unknown_communicators;
  }

  void pass_c(const Definitions& d) {
    struct Entry {
      CommId comm;
      std::uint32_t seq;
      std::uint32_t task;
      std::uint32_t call;
      auto key() const { return std::tie(comm, seq, task); }
    };
    std::vector<Entry> entries;
    std::vector<std::uint32_t> seq(d.comms.size());
    for (std::size_t k = 0; k < calls_.size(); ++k) {
      std::fill(seq.begin(), seq.end(), 0u);
      auto& calls = calls_[k].calls;
      for (std::size_t i = 0; i < calls.size(); ++i) {
        RCall& c = calls[i];
        if (!is_collective(c.op)) continue;
        resolve_comm(c);
        entries.push_back(Entry{c.comm, seq[c.comm]++, static_cast<std::uint32_t>(k), static_cast<std::uint32_t>(i)});
      }
    }
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.key() < b.key(); });
    for (std::size_t i = 0; i < entries.size();) {
      std::size_t j = i;
      // The lowest task flagged the root: an owned one (in task order) or another (retire_calls).
      const auto other = roots_.find((std::uint64_t{entries[i].comm} << 32) | entries[i].seq);
      Rank root = other != roots_.end() ? other->second : kNoRank;
      while (j < entries.size() && entries[j].comm == entries[i].comm && entries[j].seq == entries[i].seq) {
        const auto task = static_cast<Rank>(entries[j].task);
        if (calls_[entries[j].task].calls[entries[j].call].root_flag && (root == kNoRank || task < root)) root = task;
        ++j;
      }
      for (std::size_t q = i; q < j; ++q) calls_[entries[q].task].calls[entries[q].call].root = root;
      i = j;
    }
  }

  // ---- pass D: the events of one task ----

  struct Request {
    bool is_send = false;
    Rank peer = kNoRank;
    std::int32_t tag = 0;
    std::uint64_t bytes = 0;
    std::int64_t ready = 0;  // fallback: physical receive time of an Irecv's message
    std::uint64_t order = 0;
  };

  Time seconds(std::int64_t ticks) const { return static_cast<double>(ticks) / header_.ticks_per_second; }

  static std::int32_t tag32(std::int64_t v) {
    return static_cast<std::int32_t>(std::clamp<std::int64_t>(v, std::numeric_limits<std::int32_t>::min(),
                                                              std::numeric_limits<std::int32_t>::max()));
  }
  static std::uint64_t size64(std::int64_t v) { return v < 0 ? 0 : static_cast<std::uint64_t>(v); }

  void pass_d(TaskCalls& tc, Definitions& d, std::vector<Event>& events) {
    Chunks<Event> out;  // then one exact copy: no doubling growth in the peak
    const bool explicit_requests = st_.waitlab_events;
    std::unordered_map<std::int64_t, Request> pending;  // explicit: by request id
    std::vector<std::pair<std::int64_t, Request>> isends, irecvs;  // fallback, in posting order
    std::int64_t next_req = 0;
    std::uint64_t order = 0;
    struct Inner {
      std::int64_t time;
      Event e;
    };
    std::vector<Inner> inner;
    for (const Item& it : tc.items) {
      if (it.kind != Item::Call) {
        out.push_back(make_event(seconds(it.time), it.kind == Item::Enter ? EventKind::Enter : EventKind::Leave,
                                 d.regions[it.ref].op, it.ref));
        continue;
      }
      const RCall& c = tc.calls[it.ref];
      const MpiOp op = c.op;
      const RegionId region = mpi_region(d, op);
      const std::int64_t lo = c.t_enter;
      const std::int64_t hi = c.t_leave < 0 ? std::numeric_limits<std::int64_t>::max() : c.t_leave;
      inner.clear();
      const auto add = [&](std::int64_t t, Event e) {
        t = std::clamp(t, lo, hi);
        inner.push_back(Inner{t, e});
      };
      const Desc& w = tc.desc(c);
      const RawComm* sm = c.send_rec != kNone32 ? &comms_[c.send_rec] : nullptr;
      const RawComm* rm = c.recv_rec != kNone32 ? &comms_[c.recv_rec] : nullptr;
      if (sm && op != MpiOp::Isend)
        add(sm->psend, make_event(0, EventKind::Send, op, kCommWorld, sm->rtask, sm->tag, size64(sm->size)));
      if (rm && op != MpiOp::Irecv)
        add(rm->precv, make_event(0, EventKind::Recv, op, kCommWorld, rm->stask, rm->tag, size64(rm->size)));
      if (op == MpiOp::Isend && (sm || (explicit_requests && w.req != kUnset))) {
        Request q;
        q.is_send = true;
        q.peer = sm ? sm->rtask : (w.send_dest > 0 ? static_cast<Rank>(w.send_dest - 1) : kNoRank);
        q.tag = sm ? sm->tag : (w.send_tag != kUnset ? tag32(w.send_tag) : 0);
        q.bytes = sm ? size64(sm->size) : 0;
        q.order = order++;
        const bool known = explicit_requests && w.req != kUnset;
        const std::int64_t id = known ? w.req : next_req++;
        const std::int64_t t = known ? w.t_req : sm->psend;
        add(t, make_event(0, EventKind::IsendStart, op, kCommWorld, q.peer, q.tag, q.bytes, static_cast<std::uint64_t>(id)));
        if (explicit_requests) pending[id] = q;
        else isends.emplace_back(id, q);
      }
      if (op == MpiOp::Irecv && (rm || (explicit_requests && w.req != kUnset))) {
        Request q;
        q.peer = rm ? rm->stask : kNoRank;
        q.tag = rm ? rm->tag : 0;
        q.bytes = rm ? size64(rm->size) : 0;
        q.ready = rm ? rm->precv : 0;
        q.order = order++;
        // The posted source, tag and size: waitlab's descriptors, else the message's.
        const Rank posted_peer = w.recv_src == kUnset ? q.peer
                                 : w.recv_src > 0     ? static_cast<Rank>(w.recv_src - 1)
                                                      : kNoRank;
        const std::int32_t posted_tag = w.recv_tag == kUnset ? q.tag : tag32(w.recv_tag);
        const std::uint64_t posted_size = w.recv_size == kUnset ? q.bytes : size64(w.recv_size);
        if (!rm) {
          q.peer = posted_peer;
          q.tag = posted_tag;
        }
        const bool known = explicit_requests && w.req != kUnset;
        const std::int64_t id = known ? w.req : next_req++;
        const std::int64_t t = known ? w.t_req : lo;
        add(t, make_event(0, EventKind::IrecvPost, op, kCommWorld, posted_peer, posted_tag, posted_size,
                          static_cast<std::uint64_t>(id)));
        if (explicit_requests) pending[id] = q;
        else irecvs.emplace_back(id, q);
      }
      if (waits(op)) {
        const auto complete = [&](std::int64_t t, std::int64_t id, const Request& q) {
          add(t, make_event(0, q.is_send ? EventKind::IsendComplete : EventKind::IrecvComplete, op, kCommWorld, q.peer,
                            q.tag, q.bytes, static_cast<std::uint64_t>(id)));
        };
        if (explicit_requests) {
          for (std::uint32_t i = 0; i < c.comp_count; ++i) {
            const Completion& cp = tc.comps[c.comp_first + i];
            const auto p = pending.find(cp.req);
            if (p == pending.end()) {
              misplace(kPrvRequestCompleted, Misplaced::NoRequest);
              continue;
            }
            complete(cp.time, cp.req, p->second);
            pending.erase(p);
          }
        } else {
          // Fallback: receives whose message arrived by the end of this call, then sends.
          std::vector<std::pair<std::int64_t, std::pair<std::int64_t, Request>>> done;  // (time, request)
          for (auto r = irecvs.begin(); r != irecvs.end();) {
            if (r->second.ready <= hi && (op == MpiOp::Waitall || done.empty())) {
              done.emplace_back(std::max(r->second.ready, lo), *r);
              r = irecvs.erase(r);
            } else {
              ++r;
            }
          }
          if (op == MpiOp::Waitall || done.empty()) {
            const std::size_t m = op == MpiOp::Waitall ? isends.size() : std::min<std::size_t>(1, isends.size());
            for (std::size_t q = 0; q < m; ++q) done.emplace_back(c.t_leave < 0 ? lo : c.t_leave, isends[q]);
            isends.erase(isends.begin(), isends.begin() + static_cast<std::ptrdiff_t>(m));
          }
          std::stable_sort(done.begin(), done.end(), [](const auto& a, const auto& b) {
            return std::tie(a.first, a.second.second.order) < std::tie(b.first, b.second.second.order);
          });
          for (const auto& [t, req] : done) complete(t, req.first, req.second);
        }
      }
      if (is_collective(op)) {
        add(lo, make_event(0, EventKind::CollBegin, op, c.comm));
        if (c.t_leave >= 0)
          add(c.t_leave, make_event(0, EventKind::CollEnd, op, c.comm, c.root, 0, size64(c.coll_sent),
                                    size64(c.coll_recv)));
      }
      std::stable_sort(inner.begin(), inner.end(), [](const Inner& a, const Inner& b) { return a.time < b.time; });
      out.push_back(make_event(seconds(lo), EventKind::Enter, op, region));
      for (Inner& x : inner) {
        x.e.time = seconds(x.time);
        out.push_back(x.e);
      }
      if (c.t_leave >= 0) out.push_back(make_event(seconds(c.t_leave), EventKind::Leave, op, region));
    }
    tc = TaskCalls{};
    events = out.take();
  }

  static constexpr RegionId kNoRegion = std::numeric_limits<RegionId>::max();
  static constexpr std::size_t kNoLocation = std::numeric_limits<std::size_t>::max();

  bool owns(std::size_t task) const { return task >= own_first_ && task < own_last_; }

  std::string path_;
  ParaverReadStats& st_;
  bool whole_;
  std::size_t own_first_, own_last_;  // the tasks read and kept
  // The other tasks' records, read without being kept: pass A's state per location, the used
  // pairs of the line being read, a worker thread's items (dropped line by line), the
  // location being read (kNoLocation: none, regions are defined), and the regions noted.
  std::vector<PassA> stream_;
  std::vector<RawPair> line_pairs_;
  TaskCalls worker_items_;
  Definitions* defs_ = nullptr;
  std::size_t recording_ = kNoLocation;
  std::map<RegionKey, RegionId> noted_;
  std::vector<RegionKey> noted_keys_;
  std::vector<Need> needs_;
  std::uint64_t notes_ = 0;
  std::vector<RegionId> order_;    // noted_keys_ in the order they are defined
  std::size_t next_noted_ = 0;
  Pcf pcf_;
  Header header_;
  static constexpr std::size_t kMaxLocations = std::size_t{1} << 20;
  std::vector<RawTask> raw_;           // every thread of every task, in (task, thread) order
  std::vector<std::size_t> first_;     // per task: the index of its thread 1 in raw_
  bool store_states_ = true;
  bool saw_waitlab_ = false;           // the .prv has waitlab's event types
  std::uint8_t counters_ = 0;          // kHasInstructions | kHasCycles seen
  std::int64_t last_time_ = 0;         // the latest time of any state, event or communication record
  std::uint64_t skip_global_ops_ = 0, skip_intercomms_ = 0, skip_worker_comms_ = 0, skip_endless_states_ = 0;
  std::vector<std::pair<std::int64_t, std::uint64_t>> unknown_;  // event type -> pairs
  std::size_t hint_ = 0;
  std::map<std::pair<std::int64_t, int>, std::uint64_t> misplaced_;  // (type, Misplaced) -> pairs
  Chunks<RawComm, 4096, 4096> comms_;  // those of thread 1 the tasks read send or receive
  std::uint64_t thread1_comms_ = 0;     // every task's thread-1 communication records
  Chunks<LogicalTimes, 4096, 4096> logical_;  // of comms_, until pass B
  std::vector<std::pair<std::int64_t, std::vector<Rank>>> raw_comms_;  // (Paraver id, members)
  std::unordered_map<std::int64_t, CommId> comm_ids_;
  std::vector<TaskCalls> calls_;  // another task's: its open call only (retire_calls)
  // Per task, the records naming it (TracePart::event_counts: a state or event record of one
  // of its threads, a communication record it sends or receives).
  std::vector<std::uint64_t> weights_;
  // Of the tasks a part does not own: the operations of thread 1's calls in the order first met,
  // the collectives per communicator so far, and per collective instance ((communicator << 32)
  // | sequence number) the lowest of them flagged its root.
  struct OpsMet {
    std::uint64_t seen = 0;
    std::vector<MpiOp> order;
  };
  static_assert(static_cast<std::size_t>(MpiOp::Count_) <= 64);
  std::vector<OpsMet> ops_met_;
  std::vector<std::vector<std::uint32_t>> coll_seq_;
  std::unordered_map<std::uint64_t, Rank> roots_;
  std::unordered_map<std::int64_t, RegionId> user_;
  std::map<std::pair<std::int64_t, std::int64_t>, RegionId> plain_;
  std::array<RegionId, static_cast<std::size_t>(MpiOp::Count_)> mpi_regions_ = [] {
    std::array<RegionId, static_cast<std::size_t>(MpiOp::Count_)> a{};
    a.fill(kNoRegion);
    return a;
  }();
};

}  // namespace

std::string paraver_ends_early(const std::string& prv_path, const ParaverReadStats& st) {
  if (!st.ends_early) return "";
  const auto g = [](double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.6g", v);
    return std::string(b);
  };
  const double gap = st.declared_end - st.last_record_time;
  return prv_path + ": the records stop at " + g(st.last_record_time) + " s, " + g(gap) + " s (" +
         g(100 * gap / st.declared_end) + " %) before the end time the header declares (" +
         g(st.declared_end) +
         " s): the trace may have been cut short, and its metrics count the time after its last record as "
         "idle";
}

namespace {

TracePart read_tasks(const std::string& prv_path, Rank first, Rank last, bool whole, ParaverReadStats* stats) {
  ParaverReadStats st;
  TracePart p;
  {
    Reader reader(prv_path, st, first, last, whole);
    p = reader.read();
  }
  util::release_freed_memory();  // what the reader still held (the communication records): see Reader::give_back
  if (stats) *stats = st;
  return p;
}

}  // namespace

Trace read_paraver(const std::string& prv_path, ParaverReadStats* stats) {
  return to_trace(read_tasks(prv_path, 0, 0, true, stats));
}

std::vector<std::pair<std::string, std::uint64_t>> merge_paraver_skipped(
    const std::vector<std::vector<std::pair<std::string, std::uint64_t>>>& parts) {
  std::vector<std::pair<std::string, std::uint64_t>> all;
  if (parts.empty()) return all;
  const std::string_view per_task = misplaced_text(Misplaced::NoRequest);
  for (std::size_t i = 0; i < parts.front().size(); ++i) {
    auto kind = parts.front()[i];
    const std::string_view what = kind.first;
    if (what.size() >= per_task.size() && what.substr(what.size() - per_task.size()) == per_task)
      for (std::size_t p = 1; p < parts.size(); ++p) kind.second += parts[p].at(i).second;
    if (kind.second > 0) all.push_back(std::move(kind));
  }
  return all;
}

TracePart read_paraver_part(const std::string& prv_path, Rank first, Rank last, ParaverReadStats* stats) {
  if (first < 0 || last < first)
    throw std::invalid_argument(prv_path + ": ranks [" + std::to_string(first) + ", " + std::to_string(last) + ")");
  return read_tasks(prv_path, first, last, false, stats);
}

}  // namespace waitlab::trace
