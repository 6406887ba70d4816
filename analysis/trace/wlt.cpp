// The native .wlt trace file. Layout of version 4 (all integers and doubles little-endian):
//
//   header   magic "WLTRACE\0" (8) | u32 version | u32 byte-order mark 0x01020304 | u32 flags
//            (bit 0: has ground truth) | u32 checksum
//   regions  u64 n | n × (string name, u8 op, string file)
//   comms    u64 n | n × (string name, u64 m, m × i32 member)
//   attrs    u64 n | n × (string key, string value)
//            u32 checksum
//   ranks    u64 n | n × (i32 rank, records)
//   threads  u64 n | n × (i32 rank, i32 thread, records)
//   run      u8 origin | u8 counters | u16 0 | u32 0 | f64 span_begin | f64 span_end
//            u32 checksum
//   trailer  "WLTEND\0\0" (8)
//
// records = events | truth records | state intervals | counter samples | OpenMP intervals |
// u32 checksum, each
// array as u64 count, then its records in blocks of up to 16384 (kChunkRecords), every block
// followed by a u32 checksum. Every checksum is zlib's crc32 of all the bytes of the file
// before it (earlier checksums included), so each one vouches for everything read so far and
// a mismatch names the bytes since the previous one: the header, the definitions, one block
// of a location's records, a location's counts, or the run section.
// A part of the file (read_wlt_part: ranks [first, last) and their threads) is read by seeking
// over the other locations from their counts, and each of its checksums is verified from the
// byte after the previous one with the crc32 seeded with kCrcResidue: the crc32 of any bytes
// followed by their own crc32 is that constant, so the segment is verified on its own and a
// damaged byte before it is no concern of this part (read_wlt is the same reading, owning all).
// string = u32 length + bytes. Event record (40 bytes): f64 time, u64 bytes, u64 aux, u8 kind,
// u8 op, u16 flags, u32 ref, i32 peer, i32 tag. Truth record (56): f64 start, f64 end,
// f64 nominal, 3 × f64 injected, u32 region, i32 iteration. State interval (20): f64 begin,
// f64 end, u32 state. Counter sample (24): f64 time, u64 instructions, u64 cycles.
// Version 4 adds to each location's records, after the counter samples, its OpenMP intervals
// (24 bytes: f64 begin, f64 end, u8 kind, u8 0, u16 0, u32 id); version 3 (still read) is
// version 4 without them (no OpenMP intervals).
// Version 2 (still read) is version 3 without any checksum: the header's last u32 is 0 and
// the arrays are plain count + records. Version 1 (still read) also has neither threads nor
// run section, and a location there is i32 rank, events, truth only: its trace reads with the
// defaults (no threads, states or counter samples, origin simulated, no declared span, no
// counters). A version 3 file read as an older version (a flipped version bit) fails: its
// header's checksum is not the 0 they have there.
//
// The records are exactly the in-memory structs on a little-endian host, so event, truth and
// counter arrays are copied in bulk there (traces of thousands of ranks hold millions of
// events); the field-by-field path keeps the format defined on any host. Reading never trusts
// a count: arrays are read in bounded chunks, so a corrupt count ends as "truncated", not as
// a huge allocation. Nor a value: once the whole file is read (so a truncated file is reported
// as truncated) and its checksums matched, every location must be its rank; every event must
// have a known kind and MPI op, a finite time ≥ 0 not before the previous event's, a peer that
// is a rank of the file or none (-1), a Leave the region open on its location (if any), and an
// Enter/Leave a defined region, a Send/Recv/
// IsendStart/IrecvComplete/CollBegin/CollEnd a defined communicator; every truth record finite
// times start ≤ end in order of start, finite durations and a defined region; communicator
// members must be ranks of the file (or -1, a member an OTF2 archive did not resolve); ranks
// need communicator 0, and truth records need the header's truth flag. A thread must belong
// to a rank of the file, have a number ≥ 1 and come after the previous thread in (rank,
// thread) order; state intervals must have finite times, begin ≤ end, and follow each other
// without overlap; counter samples must have finite, non-decreasing times; the origin, the
// counters bits and the declared span must be known values (finite times).
#include "analysis/trace/wlt.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <istream>
#include <limits>
#include <ostream>
#include <string_view>
#include <type_traits>
#include <vector>

#include <zlib.h>

#include "analysis/trace/atomic_file.hpp"
#include "util/error.hpp"

namespace waitlab::trace {

namespace {

constexpr std::array<char, 8> kMagic = {'W', 'L', 'T', 'R', 'A', 'C', 'E', '\0'};
constexpr std::array<char, 8> kEndMagic = {'W', 'L', 'T', 'E', 'N', 'D', '\0', '\0'};
constexpr std::uint32_t kByteOrderMark = 0x01020304u;
constexpr std::uint32_t kFlagTruth = 1u;
constexpr std::uint32_t kMaxString = 1u << 24;  // 16 MiB: longer means corrupt
constexpr std::size_t kChunkRecords = 1 << 14;  // records per bulk read, and per checksummed block
constexpr std::uint32_t kFirstChecksumVersion = 3;
constexpr std::uint32_t kFirstOmpVersion = 4;
constexpr std::uint32_t kCrcResidue = 0x2144df1cu;  // crc32(bytes + their crc32, little-endian)

std::uint32_t crc(std::uint32_t c, const void* p, std::size_t n) {
  return static_cast<std::uint32_t>(crc32_z(c, static_cast<const Bytef*>(p), n));
}

template <typename T>
T le(const unsigned char* p) {
  T v = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) v = static_cast<T>(v | (static_cast<T>(p[i]) << (8 * i)));
  return v;
}
double le_f64(const unsigned char* p) {
  return std::bit_cast<double>(le<std::uint64_t>(p));
}

// One kind of per-location record: its size in the file, whether the in-memory struct is the
// file record (bulk copy), its decoding from the file bytes and its name in messages.
template <typename T>
struct Rec;

template <>
struct Rec<Event> {
  static constexpr std::size_t kBytes = 40;
  static constexpr bool kBulk = std::endian::native == std::endian::little && sizeof(Event) == kBytes &&
                                offsetof(Event, time) == 0 && offsetof(Event, bytes) == 8 &&
                                offsetof(Event, aux) == 16 && offsetof(Event, kind) == 24 &&
                                offsetof(Event, op) == 25 && offsetof(Event, flags) == 26 &&
                                offsetof(Event, ref) == 28 && offsetof(Event, peer) == 32 &&
                                offsetof(Event, tag) == 36;
  static constexpr const char* kName = "event";
  static Event get(const unsigned char* b) {
    Event e;
    e.time = le_f64(b);
    e.bytes = le<std::uint64_t>(b + 8);
    e.aux = le<std::uint64_t>(b + 16);
    e.kind = static_cast<EventKind>(b[24]);
    e.op = static_cast<MpiOp>(b[25]);
    e.flags = le<std::uint16_t>(b + 26);
    e.ref = le<std::uint32_t>(b + 28);
    e.peer = static_cast<std::int32_t>(le<std::uint32_t>(b + 32));
    e.tag = static_cast<std::int32_t>(le<std::uint32_t>(b + 36));
    return e;
  }
};

template <>
struct Rec<ComputeTruth> {
  static constexpr std::size_t kBytes = 56;
  static constexpr bool kBulk = std::endian::native == std::endian::little && sizeof(ComputeTruth) == kBytes &&
                                offsetof(ComputeTruth, start) == 0 && offsetof(ComputeTruth, end) == 8 &&
                                offsetof(ComputeTruth, nominal) == 16 && offsetof(ComputeTruth, injected) == 24 &&
                                offsetof(ComputeTruth, region) == 48 && offsetof(ComputeTruth, iteration) == 52;
  static constexpr const char* kName = "truth record";
  static ComputeTruth get(const unsigned char* b) {
    ComputeTruth t;
    t.start = le_f64(b);
    t.end = le_f64(b + 8);
    t.nominal = le_f64(b + 16);
    for (std::size_t i = 0; i < kCauseCount; ++i) t.injected[i] = le_f64(b + 24 + 8 * i);
    t.region = le<std::uint32_t>(b + 48);
    t.iteration = static_cast<std::int32_t>(le<std::uint32_t>(b + 52));
    return t;
  }
};

template <>
struct Rec<StateInterval> {
  static constexpr std::size_t kBytes = 20;
  static constexpr bool kBulk = false;  // the struct has padding; the file record has none
  static constexpr const char* kName = "state interval";
  static StateInterval get(const unsigned char* b) {
    return StateInterval{le_f64(b), le_f64(b + 8), le<std::uint32_t>(b + 16)};
  }
};

template <>
struct Rec<CounterSample> {
  static constexpr std::size_t kBytes = 24;
  static constexpr bool kBulk = std::endian::native == std::endian::little && sizeof(CounterSample) == kBytes &&
                                offsetof(CounterSample, time) == 0 && offsetof(CounterSample, instructions) == 8 &&
                                offsetof(CounterSample, cycles) == 16;
  static constexpr const char* kName = "counter sample";
  static CounterSample get(const unsigned char* b) {
    return CounterSample{le_f64(b), le<std::uint64_t>(b + 8), le<std::uint64_t>(b + 16)};
  }
};

template <>
struct Rec<OmpInterval> {
  static constexpr std::size_t kBytes = 24;
  static constexpr bool kBulk = false;  // the struct's padding would reach the file
  static constexpr const char* kName = "OpenMP interval";
  static OmpInterval get(const unsigned char* b) {
    return OmpInterval{le_f64(b), le_f64(b + 8), static_cast<OmpKind>(b[16]), le<std::uint32_t>(b + 20)};
  }
};

static_assert(std::is_trivially_copyable_v<Event> && std::is_trivially_copyable_v<ComputeTruth> &&
              std::is_trivially_copyable_v<CounterSample>);

// ---- writing ----

class Writer {
 public:
  explicit Writer(std::ostream& out) : out_(out) { buf_.reserve(kFlush + 1024); }

  // The crc32 of every byte written so far, as the next u32.
  void checksum() {
    update_crc();
    uint(crc_);
  }

  template <typename T>
  void uint(T v) {
    static_assert(std::is_unsigned_v<T>);
    for (std::size_t i = 0; i < sizeof(T); ++i) buf_.push_back(static_cast<char>((v >> (8 * i)) & 0xFFu));
    maybe_flush();
  }
  void i32(std::int32_t v) { uint(static_cast<std::uint32_t>(v)); }
  void f64(double v) { uint(std::bit_cast<std::uint64_t>(v)); }
  void raw(const void* p, std::size_t n) {
    const char* c = static_cast<const char*>(p);
    buf_.insert(buf_.end(), c, c + n);
    maybe_flush();
  }
  void str(const std::string& s) {
    if (s.size() >= kMaxString) throw std::length_error("wlt: string longer than 16 MiB");
    uint(static_cast<std::uint32_t>(s.size()));
    raw(s.data(), s.size());
  }
  void put(const Event& e) {
    f64(e.time);
    uint(e.bytes);
    uint(e.aux);
    uint(static_cast<std::uint8_t>(e.kind));
    uint(static_cast<std::uint8_t>(e.op));
    uint(e.flags);
    uint(e.ref);
    i32(e.peer);
    i32(e.tag);
  }
  void put(const ComputeTruth& t) {
    f64(t.start);
    f64(t.end);
    f64(t.nominal);
    for (double d : t.injected) f64(d);
    uint(t.region);
    i32(t.iteration);
  }
  void put(const StateInterval& s) {
    f64(s.begin);
    f64(s.end);
    uint(s.state);
  }
  void put(const CounterSample& c) {
    f64(c.time);
    uint(c.instructions);
    uint(c.cycles);
  }
  void put(const OmpInterval& o) {
    f64(o.begin);
    f64(o.end);
    uint(static_cast<std::uint8_t>(o.kind));
    uint(std::uint8_t{0});
    uint(std::uint16_t{0});
    uint(o.id);
  }
  // The count, then the records in blocks of kChunkRecords, each followed by its checksum.
  template <typename T>
  void records(const std::vector<T>& v) {
    uint(static_cast<std::uint64_t>(v.size()));
    for (std::size_t done = 0; done < v.size();) {
      const std::size_t n = std::min(v.size() - done, kChunkRecords);
      block(v.data() + done, n);
      done += n;
    }
  }
  // The same bytes for `count` records that `fill(block, n)` gives n at a time, in order.
  template <typename T>
  void records(std::uint64_t count, const std::function<void(T*, std::size_t)>& fill) {
    uint(count);
    std::vector<T> b;
    for (std::uint64_t done = 0; done < count;) {
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(count - done, kChunkRecords));
      b.resize(n);
      fill(b.data(), n);
      block(b.data(), n);
      done += n;
    }
  }
  void finish() {
    flush();
    out_.flush();
  }

 private:
  template <typename T>
  void block(const T* v, std::size_t n) {
    if constexpr (Rec<T>::kBulk) {
      static_assert(kChunkRecords * sizeof(T) <= kFlush);  // the buffer stays small
      raw(v, n * sizeof(T));
    } else {
      for (std::size_t i = 0; i < n; ++i) put(v[i]);
    }
    checksum();
  }

  static constexpr std::size_t kFlush = 1 << 20;
  void maybe_flush() {
    if (buf_.size() >= kFlush) flush();
  }
  void update_crc() {
    crc_ = crc(crc_, buf_.data() + crc_done_, buf_.size() - crc_done_);
    crc_done_ = buf_.size();
  }
  void flush() {
    update_crc();
    out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
    crc_done_ = 0;
  }
  std::ostream& out_;
  std::vector<char> buf_;
  std::uint32_t crc_ = 0;     // of the bytes written, and of buf_[0, crc_done_)
  std::size_t crc_done_ = 0;
};

// ---- reading ----

// A location in messages: "rank 3" or "rank 3 thread 1".
std::string location_name(Rank rank, std::int32_t thread) {
  return "rank " + std::to_string(rank) + (thread != 0 ? " thread " + std::to_string(thread) : std::string());
}

// Where we are, for messages that point into a location's record array.
struct Where {
  Rank rank = kNoRank;
  std::int32_t thread = 0;
  const char* array = nullptr;  // "event", "truth record", ...
  std::uint64_t index = 0;
};

std::string hex32(std::uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08x", v);
  return b;
}

class Reader {
 public:
  Reader(std::istream& in, const std::string& name) : in_(in), name_(name) {}

  [[noreturn]] void truncated(const Where& w = {}) const {
    std::string msg = name_ + ": truncated at byte " + std::to_string(pos_);
    if (w.rank != kNoRank) {
      msg += " (" + location_name(w.rank, w.thread);
      if (w.array) msg += std::string(", ") + w.array + " " + std::to_string(w.index);
      msg += ")";
    }
    throw InputError(msg);
  }
  [[noreturn]] void corrupt(std::uint64_t at, const std::string& what) const {
    throw InputError(name_ + ": corrupt .wlt file at byte " + std::to_string(at) + ": " + what);
  }

  // Every byte read goes into the running crc32 that checksum() compares, from the file's
  // start; files before version 3 have no checksums and stop it once their version is read.
  void no_checksums() { checked_ = false; }

  // Reads exactly n bytes or throws "truncated" after consuming what is there.
  void bytes(void* p, std::size_t n, const Where& w = {}) {
    in_.read(static_cast<char*>(p), static_cast<std::streamsize>(n));
    const auto got = static_cast<std::size_t>(in_.gcount());
    pos_ += got;
    if (got != n) truncated(w);
    if (checked_) crc_ = crc(crc_, p, n);
  }
  template <typename T>
  T uint(const Where& w = {}) {
    static_assert(std::is_unsigned_v<T>);
    std::array<unsigned char, sizeof(T)> b{};
    bytes(b.data(), b.size(), w);
    return le<T>(b.data());
  }
  std::int32_t i32(const Where& w = {}) { return static_cast<std::int32_t>(uint<std::uint32_t>(w)); }
  double f64(const Where& w = {}) { return std::bit_cast<double>(uint<std::uint64_t>(w)); }
  std::string str(const char* what) {
    const std::uint64_t at = pos_;
    const auto n = uint<std::uint32_t>();
    if (n >= kMaxString) corrupt(at, std::string(what) + " length " + std::to_string(n) + " is implausible");
    std::string s(n, '\0');
    bytes(s.data(), n);
    return s;
  }
  std::uint64_t pos() const { return pos_; }
  bool at_eof() { return in_.peek() == std::char_traits<char>::eof(); }

  // Reading part of a file: the size of the file, a jump to byte `at` (past bytes not read),
  // and the 4 bytes at the current offset without reading them (false if fewer remain).
  std::uint64_t size() {
    const auto here = in_.tellg();
    in_.seekg(0, std::ios::end);
    const auto end = in_.tellg();
    in_.seekg(here);
    if (here < 0 || end < 0) throw InputError(name_ + ": cannot seek (a part of a .wlt file is read from a file)");
    return static_cast<std::uint64_t>(end);
  }
  void seek(std::uint64_t at) {
    in_.clear();
    in_.seekg(static_cast<std::streamoff>(at));
    pos_ = at;
  }
  bool peek_i32(std::int32_t& v) {
    std::array<unsigned char, 4> b{};
    in_.read(reinterpret_cast<char*>(b.data()), 4);
    const bool whole = in_.gcount() == 4;
    seek(pos_);
    v = static_cast<std::int32_t>(le<std::uint32_t>(b.data()));
    return whole;
  }
  // After bytes that were skipped, not read: the next checksum vouches for the bytes from here
  // on. The crc32 of any bytes followed by their own crc32 (little-endian) is the constant
  // kCrcResidue, so seeding with it verifies the next segment on its own, whatever precedes
  // it; for an undamaged file the crc is the one a reading from the start computes.
  void resume_checksums() {
    crc_ = kCrcResidue;
    since_ = pos_;
  }

  // Reads a stored checksum and compares it with the crc32 of every byte before it; `what`
  // names what the bytes since the previous checksum hold. A no-op before version 3.
  void checksum(const Where& w, const std::string& what) {
    if (!checked_) return;
    const std::uint32_t computed = crc_;
    const std::uint64_t at = pos_;
    const auto stored = uint<std::uint32_t>(w);
    if (stored != computed)
      corrupt(at, "checksum " + hex32(stored) + " does not match bytes " + std::to_string(since_) + "-" +
                      std::to_string(at - 1) + " (" + what + "), whose checksum is " + hex32(computed) +
                      ": the file was changed or damaged after it was written");
    since_ = pos_;
  }

  // Reads a record count and its records for the location `w` names, in bounded chunks (the
  // checksummed blocks from version 3 on); `count_at` gets the offset of the count and
  // `first_at` of the first record.
  template <typename T>
  std::vector<T> records(Where w, std::uint64_t& count_at, std::uint64_t& first_at) {
    constexpr std::size_t size = Rec<T>::kBytes;
    w.array = nullptr;
    count_at = pos_;
    const auto count = uint<std::uint64_t>(w);
    first_at = pos_;
    w.array = Rec<T>::kName;
    std::vector<T> v;
    v.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(count, kChunkRecords)));
    std::uint64_t done = 0;
    while (done < count) {
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(count - done, kChunkRecords));
      if constexpr (Rec<T>::kBulk) {
        const std::size_t old = v.size();
        v.resize(old + n);
        char* p = reinterpret_cast<char*>(v.data() + old);
        in_.read(p, static_cast<std::streamsize>(n * size));
        const auto got = static_cast<std::size_t>(in_.gcount());
        pos_ += got;
        if (got != n * size) {
          w.index = done + got / size;
          truncated(w);
        }
        if (checked_) crc_ = crc(crc_, p, n * size);
      } else {
        for (std::size_t i = 0; i < n; ++i) {
          // Decode from one whole record so a truncation inside it reports this record.
          std::array<unsigned char, size> b{};
          w.index = done + i;
          bytes(b.data(), b.size(), w);
          v.push_back(Rec<T>::get(b.data()));
        }
      }
      if (checked_) {
        w.array = nullptr;  // a truncated checksum names the location only
        checksum(w, location_name(w.rank, w.thread) + ", " + Rec<T>::kName + "s " + std::to_string(done) + "-" +
                        std::to_string(done + n - 1));
      }
      done += n;
    }
    return v;
  }

 private:
  std::istream& in_;
  const std::string& name_;
  std::uint64_t pos_ = 0;
  bool checked_ = true;
  std::uint32_t crc_ = 0;
  std::uint64_t since_ = 0;  // first byte after the previous checksum
};

// Offset of record `i` of an array that starts at `array_start`, skipping the checksums after
// every full block (`checked`: version 3 on).
std::uint64_t record_offset(std::uint64_t array_start, std::uint64_t i, std::size_t size, bool checked) {
  return array_start + i * size + (checked ? 4 * (i / kChunkRecords) : 0);
}

// Where the parts of one location lie in the file, for messages about its contents.
struct LocationOffsets {
  std::uint64_t rank = 0;         // the i32 rank
  std::uint64_t thread = 0;       // the i32 thread (threads only)
  std::uint64_t events = 0;       // first event record
  std::uint64_t truth_count = 0;  // the u64 truth count
  std::uint64_t truth = 0;        // first truth record
  std::uint64_t states = 0;       // first state interval
  std::uint64_t counters = 0;     // first counter sample
  std::uint64_t omp = 0;          // first OpenMP interval
};

std::string count_of(std::size_t n, const char* what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

std::string number(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

// Reads one location: `thread` says whether the record holds a thread number (threads of
// version 2 on), `full` whether states and counter samples follow (version 2 on), `omp` whether
// OpenMP intervals follow them (version 4 on).
Location read_location(Reader& r, bool thread, bool full, bool omp, LocationOffsets& at) {
  Location l;
  at.rank = r.pos();
  l.rank = r.i32();
  if (thread) {
    at.thread = r.pos();
    l.thread = r.i32(Where{l.rank, 0, nullptr, 0});
  }
  const Where here{l.rank, l.thread, nullptr, 0};
  std::uint64_t count_at = 0;
  l.events = r.records<Event>(here, count_at, at.events);
  l.truth = r.records<ComputeTruth>(here, at.truth_count, at.truth);
  if (full) {
    l.states = r.records<StateInterval>(here, count_at, at.states);
    l.counters = r.records<CounterSample>(here, count_at, at.counters);
  }
  if (omp) l.omp = r.records<OmpInterval>(here, count_at, at.omp);
  r.checksum(here, location_name(l.rank, l.thread) + ": its rank and record counts");
  return l;
}

// What a well-formed location may still get wrong: values, references and orders.
// `ranks`: the trace's ranks (L), which peers name.
void check_location(const Trace& t, std::size_t ranks, const Location& l, const LocationOffsets& at, const Reader& r,
                    bool checked) {
  const std::size_t n_regions = t.defs.regions.size();
  const std::size_t n_comms = t.defs.comms.size();
  const auto n_ranks = static_cast<std::int64_t>(ranks);
  const std::string who = location_name(l.rank, l.thread);
  Time previous = 0;
  std::vector<RegionId> open;  // regions entered and not left, innermost last
  for (std::size_t e = 0; e < l.events.size(); ++e) {
    const Event& ev = l.events[e];
    const auto kind = static_cast<unsigned>(ev.kind);
    const auto op = static_cast<unsigned>(ev.op);
    const bool valid_time = ev.time >= previous && ev.time <= std::numeric_limits<Time>::max();  // NaN fails
    const bool valid_peer = ev.peer >= kNoRank && ev.peer < n_ranks;
    // A Leave leaves the region open on the location (nothing open: a trace that starts inside
    // a region).
    bool valid_leave = true;
    if (ev.kind == EventKind::Enter) open.push_back(ev.ref);
    if (ev.kind == EventKind::Leave && !open.empty()) {
      valid_leave = open.back() == ev.ref;
      if (valid_leave) open.pop_back();
    }
    if (kind <= static_cast<unsigned>(EventKind::CollEnd) && op < static_cast<unsigned>(MpiOp::Count_) &&
        valid_time && valid_peer && valid_leave && open.size() <= kMaxRegionDepth && t.defs.defines_ref(ev)) {
      previous = ev.time;
      continue;
    }
    const auto bad = [&](const std::string& why) {
      r.corrupt(record_offset(at.events, e, Rec<Event>::kBytes, checked),
                who + ", event " + std::to_string(e) + " " + why);
    };
    if (kind > static_cast<unsigned>(EventKind::CollEnd) || op >= static_cast<unsigned>(MpiOp::Count_))
      bad("has unknown kind " + std::to_string(kind) + " or MPI op " + std::to_string(op));
    if (open.size() > kMaxRegionDepth)
      bad("(Enter) nests regions " + std::to_string(open.size()) + " deep, deeper than the " +
          std::to_string(kMaxRegionDepth) + " levels a trace may have");
    const std::string what = "(" + std::string(event_kind_name(ev.kind)) + ")";
    if (!std::isfinite(ev.time)) bad(what + " has a time that is not finite: " + number(ev.time));
    if (ev.time < 0) bad(what + " has a negative time " + number(ev.time));
    if (ev.time < previous)
      bad(what + " at " + number(ev.time) + " goes back in time from event " + std::to_string(e - 1) + " at " +
          number(previous) + " (events are ordered by time)");
    if (!valid_peer)
      bad(what + " names peer " + std::to_string(ev.peer) + ", but the trace has " +
          count_of(ranks, "rank") + " (a peer is a rank, or -1 for none)");
    const RefKind rk = ref_kind(ev.kind);
    const std::string table(ref_kind_name(rk));
    if (!t.defs.defines_ref(ev))
      bad(what + " refers to " + table + " " + std::to_string(ev.ref) + ", but the trace defines " +
          count_of(rk == RefKind::Region ? n_regions : n_comms, table.c_str()));
    bad("(Leave) names region " + std::to_string(ev.ref) + " '" + t.defs.regions[ev.ref].name +
        "' where region " + std::to_string(open.back()) + " '" + t.defs.regions[open.back()].name +
        "' is open (a Leave leaves the innermost region entered)");
  }
  if (!t.has_truth && !l.truth.empty())
    r.corrupt(at.truth_count, who + " has " + count_of(l.truth.size(), "truth record") +
                                  " but the header says the trace has no ground truth");
  for (std::size_t k = 0; k < l.truth.size(); ++k) {
    const ComputeTruth& c = l.truth[k];
    const auto bad = [&](const std::string& why) {
      r.corrupt(record_offset(at.truth, k, Rec<ComputeTruth>::kBytes, checked),
                who + ", truth record " + std::to_string(k) + " " + why);
    };
    bool finite = std::isfinite(c.start) && std::isfinite(c.end) && std::isfinite(c.nominal);
    for (double d : c.injected) finite = finite && std::isfinite(d);
    if (!finite) bad("has a time or duration that is not finite");
    if (c.end < c.start) bad("[" + number(c.start) + ", " + number(c.end) + "] ends before it begins");
    if (k > 0 && c.start < l.truth[k - 1].start)
      bad("starts at " + number(c.start) + ", before the previous one at " + number(l.truth[k - 1].start) +
          " (truth records are ordered by start)");
    if (c.region >= n_regions)
      bad("refers to region " + std::to_string(c.region) + ", but the trace defines " + count_of(n_regions, "region"));
  }
  for (std::size_t k = 0; k < l.states.size(); ++k) {
    const StateInterval& s = l.states[k];
    const auto bad = [&](const std::string& why) {
      r.corrupt(record_offset(at.states, k, Rec<StateInterval>::kBytes, checked),
                who + ", state interval " + std::to_string(k) + " [" + number(s.begin) + ", " + number(s.end) +
                    "] " + why);
    };
    if (!std::isfinite(s.begin) || !std::isfinite(s.end)) bad("has a time that is not finite");
    if (s.end < s.begin) bad("ends before it begins");
    if (k > 0 && s.begin < l.states[k - 1].end)
      bad("begins before the previous one ends at " + number(l.states[k - 1].end) +
          " (intervals are ordered and do not overlap)");
  }
  for (std::size_t k = 0; k < l.counters.size(); ++k) {
    const CounterSample& c = l.counters[k];
    const auto bad = [&](const std::string& why) {
      r.corrupt(record_offset(at.counters, k, Rec<CounterSample>::kBytes, checked),
                who + ", counter sample " + std::to_string(k) + " at " + number(c.time) + " " + why);
    };
    if (!std::isfinite(c.time)) bad("has a time that is not finite");
    if (k > 0 && c.time < l.counters[k - 1].time)
      bad("comes before the previous one at " + number(l.counters[k - 1].time) + " (samples are ordered by time)");
  }
  std::array<Time, static_cast<std::size_t>(OmpKind::Count_)> kind_end{};  // where each kind's last one ends
  for (std::size_t k = 0; k < l.omp.size(); ++k) {
    const OmpInterval& o = l.omp[k];
    const auto bad = [&](const std::string& why) {
      r.corrupt(record_offset(at.omp, k, Rec<OmpInterval>::kBytes, checked),
                who + ", OpenMP interval " + std::to_string(k) + " [" + number(o.begin) + ", " + number(o.end) + "] " +
                    why);
    };
    if (o.kind >= OmpKind::Count_) bad("has unknown kind " + std::to_string(static_cast<unsigned>(o.kind)));
    if (!std::isfinite(o.begin) || !std::isfinite(o.end)) bad("has a time that is not finite");
    if (o.begin < 0 || o.end < o.begin) bad("ends before it begins or begins before 0");
    if (k > 0 && (o.begin < l.omp[k - 1].begin || (o.begin == l.omp[k - 1].begin && o.kind < l.omp[k - 1].kind)))
      bad("comes before the previous one (intervals are ordered by begin, then kind)");
    Time& end = kind_end[static_cast<std::size_t>(o.kind)];
    if (o.begin < end) bad("overlaps the previous " + std::string(omp_kind_name(o.kind)) + " ending at " + number(end));
    end = o.end;
  }
}

// A thread location's numbers and where they lie, kept for every thread of the file (the
// order check compares neighbours, owned or not); `owned` indexes the threads read, or -1.
struct ThreadHead {
  Rank rank = 0;
  std::int32_t thread = 0;
  std::uint64_t rank_at = 0;
  std::uint64_t thread_at = 0;
  std::int64_t owned = -1;
};

// What a well-formed file may still get wrong: values, references and orders. Run after the
// structure has been read whole (so a truncated file is reported as truncated), before anyone
// indexes the definitions with an event's ref. `t` holds the locations read: ranks from
// `first` on (their offsets in `ranks`), and the threads `heads` marks owned (offsets in
// `threads`); `n_ranks` is the file's rank count (L).
void check_references(const Trace& t, std::size_t n_ranks, std::size_t first, const Reader& r, std::uint64_t comms_at,
                      const std::vector<std::uint64_t>& members_at, const std::vector<LocationOffsets>& ranks,
                      const std::vector<ThreadHead>& heads, const std::vector<LocationOffsets>& threads,
                      bool checked) {
  if (n_ranks > 0 && t.defs.comms.empty())
    r.corrupt(comms_at, count_of(n_ranks, "rank") + " but no communicator (communicator 0 must be MPI_COMM_WORLD)");
  const auto ranks_i64 = static_cast<std::int64_t>(n_ranks);
  for (std::size_t c = 0; c < t.defs.comms.size(); ++c) {
    const auto& m = t.defs.comms[c].members;
    for (std::size_t k = 0; k < m.size(); ++k)
      if (m[k] < kNoRank || m[k] >= ranks_i64)
        r.corrupt(members_at[c] + 4 * k, "communicator " + std::to_string(c) + ", member " + std::to_string(k) +
                                             " is rank " + std::to_string(m[k]) + ", but the trace has " +
                                             count_of(n_ranks, "rank"));
  }
  for (std::size_t k = 0; k < t.locations.size(); ++k) {
    const Location& l = t.locations[k];
    const std::size_t i = first + k;
    if (l.rank != static_cast<Rank>(i))
      r.corrupt(ranks[k].rank, "location " + std::to_string(i) + " is rank " + std::to_string(l.rank) +
                                   " (location i must be rank i)");
    check_location(t, n_ranks, l, ranks[k], r, checked);
  }
  for (std::size_t i = 0; i < heads.size(); ++i) {
    const ThreadHead& l = heads[i];
    if (l.rank < 0 || static_cast<std::size_t>(l.rank) >= n_ranks)
      r.corrupt(l.rank_at, "thread location " + std::to_string(i) + " belongs to rank " + std::to_string(l.rank) +
                               ", but the trace has " + count_of(n_ranks, "rank"));
    if (l.thread < 1)
      r.corrupt(l.thread_at, "thread location " + std::to_string(i) + " (rank " + std::to_string(l.rank) +
                                 ") has thread number " + std::to_string(l.thread) +
                                 " (worker threads are numbered from 1)");
    if (i > 0) {
      const ThreadHead& p = heads[i - 1];
      if (l.rank < p.rank || (l.rank == p.rank && l.thread <= p.thread))
        r.corrupt(l.rank_at, "thread location " + std::to_string(i) + " (" + location_name(l.rank, l.thread) +
                                 ") does not come after " + location_name(p.rank, p.thread) +
                                 " (threads are ordered by rank, thread)");
    }
    if (l.owned >= 0) {
      const auto k = static_cast<std::size_t>(l.owned);
      check_location(t, n_ranks, t.threads[k], threads[k], r, checked);
    }
  }
}

// The file without the final stream check, so that write_wlt(path) can report a failed
// stream as the unwritable file it is.
// Header, definitions and attributes.
void write_head(Writer& w, const Trace& t) {
  w.raw(kMagic.data(), kMagic.size());
  w.uint(kWltVersion);
  w.uint(kByteOrderMark);
  w.uint(t.has_truth ? kFlagTruth : 0u);
  w.checksum();

  w.uint(static_cast<std::uint64_t>(t.defs.regions.size()));
  for (const auto& r : t.defs.regions) {
    w.str(r.name);
    w.uint(static_cast<std::uint8_t>(r.op));
    w.str(r.file);
  }
  w.uint(static_cast<std::uint64_t>(t.defs.comms.size()));
  for (const auto& c : t.defs.comms) {
    w.str(c.name);
    w.uint(static_cast<std::uint64_t>(c.members.size()));
    for (Rank m : c.members) w.i32(m);
  }
  w.uint(static_cast<std::uint64_t>(t.attributes.size()));
  for (const auto& a : t.attributes) {
    w.str(a.key);
    w.str(a.value);
  }
  w.checksum();
}

// The run section and the trailer.
void write_tail(Writer& w, const Trace& t) {
  w.uint(static_cast<std::uint8_t>(t.origin));
  w.uint(t.counters);
  w.uint(std::uint16_t{0});
  w.uint(std::uint32_t{0});
  w.f64(t.span_begin);
  w.f64(t.span_end);
  w.checksum();
  w.raw(kEndMagic.data(), kEndMagic.size());
  w.finish();
}

void write_records(const Trace& t, std::ostream& out) {
  Writer w(out);
  write_head(w, t);
  const auto location = [&w](const Location& l) {
    w.records(l.events);
    w.records(l.truth);
    w.records(l.states);
    w.records(l.counters);
    w.records(l.omp);
    w.checksum();
  };
  w.uint(static_cast<std::uint64_t>(t.locations.size()));
  for (const auto& l : t.locations) {
    w.i32(l.rank);
    location(l);
  }
  w.uint(static_cast<std::uint64_t>(t.threads.size()));
  for (const auto& l : t.threads) {
    w.i32(l.rank);
    w.i32(l.thread);
    location(l);
  }
  write_tail(w, t);
}

// ---- reading a file, whole or in part ----

struct Head {
  bool v2 = false;       // version 2 on: threads, states, counter samples and the run section
  bool checked = false;  // version 3 on: checksums
  bool omp = false;      // version 4 on: OpenMP intervals
  std::uint64_t comms_at = 0;
  std::vector<std::uint64_t> members_at;
};

// The header, definitions and attributes of `t` (structure only; values are checked with the
// locations by check_references).
Head read_head(Reader& r, Trace& t, const std::string& name) {
  std::array<char, 8> magic{};
  r.bytes(magic.data(), magic.size());
  if (magic != kMagic) throw InputError(name + ": not a waitlab trace (bad magic; expected \"WLTRACE\")");
  const auto version = r.uint<std::uint32_t>();
  if (version > kWltVersion)
    throw InputError(name + ": .wlt format version " + std::to_string(version) +
                     " is newer than this waitlab reads (version " + std::to_string(kWltVersion) +
                     "); upgrade waitlab");
  if (version == 0) throw InputError(name + ": corrupt .wlt file: format version 0");
  Head h;
  h.v2 = version >= 2;
  h.checked = version >= kFirstChecksumVersion;
  h.omp = version >= kFirstOmpVersion;
  const bool checked = h.checked;
  if (!checked) r.no_checksums();
  const auto bom = r.uint<std::uint32_t>();
  if (bom != kByteOrderMark)
    throw InputError(name + ": corrupt .wlt file: byte-order mark is 0x" + [&] {
      char b[16];
      std::snprintf(b, sizeof b, "%08x", bom);
      return std::string(b);
    }() + ", expected 0x01020304 (little-endian)");
  const auto flags_at = r.pos();
  const auto flags = r.uint<std::uint32_t>();
  if (checked) {
    r.checksum({}, "the header");
  } else {
    const auto reserved_at = r.pos();
    if (const auto reserved = r.uint<std::uint32_t>(); reserved != 0)
      r.corrupt(reserved_at, "the reserved header field of a version " + std::to_string(version) + " file is " +
                                 hex32(reserved) + ", not 0");
  }
  if ((flags & ~kFlagTruth) != 0) r.corrupt(flags_at, "unknown flags " + std::to_string(flags));
  t.has_truth = (flags & kFlagTruth) != 0;

  const auto n_regions = r.uint<std::uint64_t>();
  for (std::uint64_t i = 0; i < n_regions; ++i) {
    Region reg;
    reg.name = r.str("region name");
    const auto op_at = r.pos();
    const auto op = r.uint<std::uint8_t>();
    if (op >= static_cast<std::uint8_t>(MpiOp::Count_))
      r.corrupt(op_at, "region " + std::to_string(i) + " has unknown MPI op " + std::to_string(op));
    reg.op = static_cast<MpiOp>(op);
    reg.file = r.str("region file");
    t.defs.regions.push_back(std::move(reg));
  }
  h.comms_at = r.pos();
  const auto n_comms = r.uint<std::uint64_t>();
  for (std::uint64_t i = 0; i < n_comms; ++i) {
    Communicator c;
    c.name = r.str("communicator name");
    const auto m = r.uint<std::uint64_t>();
    h.members_at.push_back(r.pos());
    for (std::uint64_t k = 0; k < m; ++k) c.members.push_back(r.i32());
    t.defs.comms.push_back(std::move(c));
  }
  const auto n_attrs = r.uint<std::uint64_t>();
  for (std::uint64_t i = 0; i < n_attrs; ++i) {
    Attribute a;
    a.key = r.str("attribute key");
    a.value = r.str("attribute value");
    t.attributes.push_back(std::move(a));
  }
  r.checksum({}, "the definitions and attributes");
  return h;
}

// The run section (after the threads).
void read_run(Reader& r, Trace& t) {
  const auto origin_at = r.pos();
  const auto origin = r.uint<std::uint8_t>();
  const auto counters = r.uint<std::uint8_t>();
  (void)r.uint<std::uint16_t>();  // reserved
  (void)r.uint<std::uint32_t>();
  const auto span_at = r.pos();
  t.span_begin = r.f64();
  t.span_end = r.f64();
  r.checksum({}, "the thread count and the run section");
  if (origin > static_cast<std::uint8_t>(Origin::Unknown))
    r.corrupt(origin_at, "unknown trace origin " + std::to_string(origin));
  if ((counters & ~(kHasInstructions | kHasCycles)) != 0)
    r.corrupt(origin_at + 1, "unknown counters bits " + std::to_string(counters));
  if (!std::isfinite(t.span_begin) || !std::isfinite(t.span_end))
    r.corrupt(span_at, "declared span [" + number(t.span_begin) + ", " + number(t.span_end) + "] is not finite");
  t.origin = static_cast<Origin>(origin);
  t.counters = counters;
}

// The trailer, the last bytes of the file.
void read_trailer(Reader& r) {
  std::array<char, 8> end{};
  const auto end_at = r.pos();
  r.bytes(end.data(), end.size());
  if (end != kEndMagic) r.corrupt(end_at, "missing end marker \"WLTEND\"");
  if (!r.at_eof()) r.corrupt(r.pos(), "unexpected data after the end marker");
}

// Seeks over one location not read, from its rank field on: `thread`, `full` and `omp` as for
// read_location. Returns false when its arrays run past the end of the file (`size`).
bool skim_location(Reader& r, bool thread, bool full, bool omp, bool checked, std::uint64_t size,
                   std::uint64_t& events) {
  const auto fits = [&](std::uint64_t n) { return r.pos() <= size && n <= size - r.pos(); };
  if (!fits(thread ? 8 : 4)) return false;
  r.seek(r.pos() + (thread ? 8 : 4));
  const auto array = [&](std::size_t record_bytes, std::uint64_t* count) {
    if (!fits(8)) return false;
    const auto n = r.uint<std::uint64_t>();
    if (count) *count = n;
    const std::uint64_t blocks = n / kChunkRecords + (n % kChunkRecords != 0 ? 1 : 0);
    if (n > size / record_bytes || !fits(n * record_bytes + (checked ? 4 * blocks : 0))) return false;
    r.seek(r.pos() + n * record_bytes + (checked ? 4 * blocks : 0));
    return true;
  };
  if (!array(Rec<Event>::kBytes, &events) || !array(Rec<ComputeTruth>::kBytes, nullptr)) return false;
  if (full && (!array(Rec<StateInterval>::kBytes, nullptr) || !array(Rec<CounterSample>::kBytes, nullptr)))
    return false;
  if (omp && !array(Rec<OmpInterval>::kBytes, nullptr)) return false;
  if (!checked) return true;
  if (!fits(4)) return false;
  r.seek(r.pos() + 4);
  return true;
}

// One reading of a .wlt file: every location (the serial reader) or the ranks [first, last)
// and their threads, the others seeked over (their counts read, their checksums not).
class PartReader {
 public:
  PartReader(std::istream& in, const std::string& name, std::uint64_t first, std::uint64_t last, bool whole)
      : in_(in), name_(name), r_(in, name), first_(first), last_(last), whole_(whole) {}

  TracePart read() {
    const Head h = read_head(r_, t_, name_);
    checked_ = h.checked;
    omp_ = h.omp;
    if (!whole_) size_ = r_.size();
    const auto n_ranks = r_.uint<std::uint64_t>();
    if (!whole_ && last_ > n_ranks)
      throw std::invalid_argument(name_ + ": ranks [" + std::to_string(first_) + ", " + std::to_string(last_) +
                                  ") of a trace of " + count_of(n_ranks, "rank"));
    for (std::uint64_t i = 0; i < n_ranks; ++i) {
      if (owns(i)) {
        resume();
        LocationOffsets at;
        t_.locations.push_back(read_location(r_, false, h.v2, h.omp, at));
        rank_offsets_.push_back(at);
        counts_.push_back(t_.locations.back().events.size());
      } else {
        std::uint64_t events = 0;
        if (!skim_location(r_, false, h.v2, h.omp, checked_, size_, events)) serial_verdict();
        skipped_ = true;
        counts_.push_back(events);
      }
    }
    resume();
    if (h.v2) {
      read_threads();
      resume();
      read_run(r_, t_);
    }
    read_trailer(r_);
    check_references(t_, static_cast<std::size_t>(n_ranks), static_cast<std::size_t>(first_), r_, h.comms_at,
                     h.members_at, rank_offsets_, heads_, thread_offsets_, checked_);
    return part(n_ranks);
  }

 private:
  bool owns(std::uint64_t rank) const { return whole_ || (rank >= first_ && rank < last_); }
  // After a location seeked over, the next checksum covers the bytes from here on only.
  void resume() {
    if (skipped_ && checked_) r_.resume_checksums();
    skipped_ = false;
  }

  void read_threads() {
    const auto n_threads = r_.uint<std::uint64_t>();
    for (std::uint64_t i = 0; i < n_threads; ++i) {
      ThreadHead head;
      head.rank_at = r_.pos();
      head.thread_at = r_.pos() + 4;
      bool owned = whole_;
      if (!owned) {
        if (!r_.peek_i32(head.rank)) serial_verdict();
        owned = head.rank >= 0 && owns(static_cast<std::uint64_t>(head.rank));
      }
      if (owned) {
        resume();
        LocationOffsets at;
        t_.threads.push_back(read_location(r_, true, true, omp_, at));
        thread_offsets_.push_back(at);
        head.rank = t_.threads.back().rank;
        head.thread = t_.threads.back().thread;
        head.owned = static_cast<std::int64_t>(t_.threads.size() - 1);
      } else {
        r_.seek(head.thread_at);
        if (!r_.peek_i32(head.thread)) serial_verdict();
        r_.seek(head.rank_at);
        std::uint64_t events = 0;
        if (!skim_location(r_, true, true, omp_, checked_, size_, events)) serial_verdict();
        skipped_ = true;
      }
      heads_.push_back(head);
    }
  }

  // A location seeked over runs past the end of the file: the file is truncated or damaged
  // before the part, and the serial reading says where (it reads the file up to the defect).
  [[noreturn]] void serial_verdict() {
    in_.clear();
    in_.seekg(0);
    PartReader whole(in_, name_, 0, 0, true);
    whole.read();
    throw InputError(name_ + ": corrupt .wlt file: a location's arrays run past the end of the file");
  }

  TracePart part(std::uint64_t n_ranks) {
    return make_part(std::move(t_), static_cast<std::size_t>(n_ranks), static_cast<Rank>(whole_ ? 0 : first_),
                     std::move(counts_));
  }

  std::istream& in_;
  const std::string& name_;
  Reader r_;
  std::uint64_t first_, last_;
  bool whole_;
  bool checked_ = false;
  bool omp_ = false;
  bool skipped_ = false;  // the bytes just before the reader's offset were seeked over
  std::uint64_t size_ = 0;
  Trace t_;
  std::vector<std::uint64_t> counts_;
  std::vector<LocationOffsets> rank_offsets_, thread_offsets_;
  std::vector<ThreadHead> heads_;
};

}  // namespace

void write_wlt(const Trace& t, std::ostream& out) {
  write_records(t, out);
  if (!out) throw std::runtime_error("wlt: write failed");
}

void write_wlt(const Trace& t, const std::string& path) {
  write_file_atomic(path, [&t](std::ostream& out) { write_records(t, out); });
}

void write_wlt(const Trace& head, std::size_t ranks, const std::function<LocationSource(Rank)>& location,
               std::ostream& out) {
  Writer w(out);
  write_head(w, head);
  w.uint(static_cast<std::uint64_t>(ranks));
  for (std::size_t r = 0; r < ranks; ++r) {
    const auto rank = static_cast<Rank>(r);
    const LocationSource l = location(rank);
    w.i32(rank);
    w.records(l.events, l.read_events);
    w.records(l.truth, l.read_truth);
    w.records(std::vector<StateInterval>{});
    w.records(std::vector<CounterSample>{});
    w.records(std::vector<OmpInterval>{});
    w.checksum();
  }
  w.uint(std::uint64_t{0});  // no threads
  write_tail(w, head);
  if (!out) throw std::runtime_error("wlt: write failed");
}

Trace read_wlt(std::istream& in, const std::string& name) {
  return to_trace(PartReader(in, name, 0, 0, true).read());
}

TracePart read_wlt_part(std::istream& in, const std::string& name, Rank first, Rank last) {
  if (first < 0 || last < first)
    throw std::invalid_argument(name + ": ranks [" + std::to_string(first) + ", " + std::to_string(last) + ")");
  return PartReader(in, name, static_cast<std::uint64_t>(first), static_cast<std::uint64_t>(last), false).read();
}

TracePart read_wlt_part(const std::string& path, Rank first, Rank last) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open: " + std::strerror(errno));
  return read_wlt_part(in, path, first, last);
}

std::vector<std::uint64_t> wlt_event_counts(const std::string& path) {
  return read_wlt_part(path, 0, 0).event_counts;
}

Trace read_wlt(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open: " + std::strerror(errno));
  return read_wlt(in, path);
}

}  // namespace waitlab::trace
