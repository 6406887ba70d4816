#include "sim/recording.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <functional>
#include <memory>
#include <ostream>
#include <stdexcept>

#include "analysis/trace/varint.hpp"
#include "analysis/trace/wlt.hpp"

namespace waitlab::sim {

namespace {

using trace::ComputeTruth;
using trace::double_bits;
using trace::Event;

constexpr std::size_t kWriteBytes = 1u << 20;  // encoded bytes gathered before a write
constexpr std::size_t kMinCapacity = 2;
constexpr std::size_t kMaxCapacity = 4096;
constexpr std::size_t kReadBlock = 1 << 14;  // records read back at a time by totals()

std::size_t capacity(std::size_t budget, std::size_t ranks, std::size_t record) {
  return std::clamp(budget / std::max<std::size_t>(ranks, 1) / record, kMinCapacity, kMaxCapacity);
}

// A time (or any double) as the difference of its bit pattern from `prev`'s: exact for every
// value, and short for the nearby non-negative times a rank records one after the other.
void put_time(std::vector<std::uint8_t>& out, double t, std::uint64_t& prev) {
  const std::uint64_t b = double_bits(t);
  trace::put_zigzag(out, static_cast<std::int64_t>(b - prev));
  prev = b;
}
double get_time(trace::VarintCursor& c, std::uint64_t& prev) {
  prev += static_cast<std::uint64_t>(c.zigzag());
  return std::bit_cast<double>(prev);
}

void encode(std::vector<std::uint8_t>& out, const Event& e, std::uint64_t& prev) {
  trace::put_varint(out, static_cast<std::uint64_t>(e.kind) | static_cast<std::uint64_t>(e.op) << 4 |
                             static_cast<std::uint64_t>(e.flags) << 9);
  put_time(out, e.time, prev);
  trace::put_varint(out, e.ref);
  trace::put_zigzag(out, e.peer);
  trace::put_zigzag(out, e.tag);
  trace::put_varint(out, e.bytes);
  trace::put_varint(out, e.aux);
}
Event decode_event(trace::VarintCursor& c, std::uint64_t& prev) {
  Event e;
  const std::uint64_t head = c.varint();
  e.kind = static_cast<trace::EventKind>(head & 0xF);
  e.op = static_cast<trace::MpiOp>((head >> 4) & 0x1F);
  e.flags = static_cast<std::uint16_t>(head >> 9);
  e.time = get_time(c, prev);
  e.ref = static_cast<std::uint32_t>(c.varint());
  e.peer = static_cast<trace::Rank>(c.zigzag());
  e.tag = static_cast<std::int32_t>(c.zigzag());
  e.bytes = c.varint();
  e.aux = c.varint();
  return e;
}

void encode(std::vector<std::uint8_t>& out, const ComputeTruth& t, std::uint64_t& prev) {
  put_time(out, t.start, prev);
  std::uint64_t start = double_bits(t.start);
  put_time(out, t.end, start);
  trace::put_u64(out, double_bits(t.nominal));
  std::uint8_t mask = 0;
  for (std::size_t k = 0; k < trace::kCauseCount; ++k)
    if (double_bits(t.injected[k]) != 0) mask = static_cast<std::uint8_t>(mask | 1u << k);
  out.push_back(mask);
  for (std::size_t k = 0; k < trace::kCauseCount; ++k)
    if (mask & 1u << k) trace::put_u64(out, double_bits(t.injected[k]));
  trace::put_varint(out, t.region);
  trace::put_zigzag(out, t.iteration);
  prev = double_bits(t.end);
}
ComputeTruth decode_truth(trace::VarintCursor& c, std::uint64_t& prev) {
  ComputeTruth t;
  t.start = get_time(c, prev);
  std::uint64_t start = prev;
  t.end = get_time(c, start);
  t.nominal = std::bit_cast<double>(c.u64());
  const std::uint8_t mask = c.byte();
  for (std::size_t k = 0; k < trace::kCauseCount; ++k)
    if (mask & 1u << k) t.injected[k] = std::bit_cast<double>(c.u64());
  t.region = static_cast<trace::RegionId>(c.varint());
  t.iteration = static_cast<std::int32_t>(c.zigzag());
  prev = double_bits(t.end);
  return t;
}

}  // namespace

// Reads one rank's records back in order: its spilled chunks, then its buffer.
class Recording::Reader {
 public:
  Reader(const Recording& rec, const RankRecords& rank) : rec_(rec), rank_(rank) {}

  void events(Event* out, std::size_t n) {
    fill(out, n, rank_.event_chunks, rank_.buffer, events_, decode_event);
    if (patch_ == rank_.patches.size()) {  // none left (most ranks have none)
      event_index_ += n;
      return;
    }
    for (std::size_t i = 0; i < n; ++i, ++event_index_) {
      while (patch_ < rank_.patches.size() && rank_.patches[patch_].index == event_index_)
        out[i].time = rank_.patches[patch_++].time;
    }
  }
  void truth(ComputeTruth* out, std::size_t n) {
    fill(out, n, rank_.truth_chunks, rank_.truth_buffer, truth_, decode_truth);
  }

 private:
  template <typename T>
  struct Stream {
    std::size_t chunk = 0;     // next chunk to decode
    std::vector<T> decoded;    // of the current chunk
    std::size_t used = 0;      // of `decoded`
    std::size_t buffered = 0;  // records taken from the rank's buffer
  };

  template <typename T, typename Decode>
  void fill(T* out, std::size_t n, const std::vector<Chunk>& chunks, const std::vector<T>& buffer,
            Stream<T>& s, Decode decode) {
    for (std::size_t i = 0; i < n;) {
      if (s.used < s.decoded.size()) {
        const std::size_t take = std::min(n - i, s.decoded.size() - s.used);
        std::copy_n(s.decoded.begin() + static_cast<std::ptrdiff_t>(s.used), take, out + i);
        s.used += take;
        i += take;
      } else if (s.chunk < chunks.size()) {
        const Chunk& c = chunks[s.chunk++];
        rec_.read_chunk(c, bytes_);
        trace::VarintCursor cur(bytes_.data(), bytes_.size(), "simulation records");
        s.decoded.clear();
        std::uint64_t prev = 0;
        for (std::uint32_t k = 0; k < c.count; ++k) s.decoded.push_back(decode(cur, prev));
        if (!cur.done()) throw std::logic_error("simulation records: a chunk holds more than its records");
        s.used = 0;
      } else {
        const std::size_t take = std::min(n - i, buffer.size() - s.buffered);
        if (take == 0) throw std::logic_error("simulation records: fewer records than counted");
        std::copy_n(buffer.begin() + static_cast<std::ptrdiff_t>(s.buffered), take, out + i);
        s.buffered += take;
        i += take;
      }
    }
  }

  const Recording& rec_;
  const RankRecords& rank_;
  Stream<Event> events_;
  Stream<ComputeTruth> truth_;
  std::vector<std::uint8_t> bytes_;
  std::uint64_t event_index_ = 0;
  std::size_t patch_ = 0;
};

Recording::Recording(std::string spill_path, std::size_t ranks, std::size_t buffer_bytes)
    : path_(std::move(spill_path)),
      ranks_(ranks),
      event_cap_(capacity(buffer_bytes / 2, ranks, sizeof(Event))),
      truth_cap_(capacity(buffer_bytes / 2, ranks, sizeof(ComputeTruth))) {
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd_ < 0) io_error("create");
  ::unlink(path_.c_str());  // gone with the process, however it ends
}

Recording::~Recording() {
  if (fd_ >= 0) ::close(fd_);
}

void Recording::io_error(const char* what) const {
  throw std::runtime_error(std::string("cannot ") + what + " the simulation's record file " + path_ + ": " +
                           std::strerror(errno));
}

void Recording::event(trace::Rank r, const Event& e) {
  RankRecords& k = ranks_[static_cast<std::size_t>(r)];
  if (k.buffer.size() == event_cap_)
    spill(k.buffer, k.event_chunks);  // before: the last event stays in the buffer
  if (k.buffer.capacity() == 0) k.buffer.reserve(event_cap_);
  k.buffer.push_back(e);
  ++k.events;
}

Event& Recording::last_event(trace::Rank r) {
  return ranks_[static_cast<std::size_t>(r)].buffer.back();
}

void Recording::truth(trace::Rank r, const ComputeTruth& t) {
  RankRecords& k = ranks_[static_cast<std::size_t>(r)];
  if (k.truth_buffer.size() == truth_cap_) spill(k.truth_buffer, k.truth_chunks);
  if (k.truth_buffer.capacity() == 0) k.truth_buffer.reserve(truth_cap_);
  k.truth_buffer.push_back(t);
  ++k.truths;
}

void Recording::set_time(trace::Rank r, std::uint64_t index, trace::Time t) {
  RankRecords& k = ranks_[static_cast<std::size_t>(r)];
  const std::uint64_t first_buffered = k.events - k.buffer.size();
  if (index >= first_buffered) {
    k.buffer[static_cast<std::size_t>(index - first_buffered)].time = t;
    return;
  }
  // Spilled: applied as it is read back (patches in index order, a later one for the same event last).
  const auto at = std::upper_bound(k.patches.begin(), k.patches.end(), index,
                                   [](std::uint64_t i, const Patch& p) { return i < p.index; });
  k.patches.insert(at, Patch{index, t});
}

template <typename T>
void Recording::spill(std::vector<T>& buffer, std::vector<Chunk>& chunks) {
  chunk_start_ = out_.size();
  std::uint64_t prev = 0;
  for (const T& record : buffer) encode(out_, record, prev);
  chunks.push_back(append(static_cast<std::uint32_t>(buffer.size())));
  buffer.clear();
}

Recording::Chunk Recording::append(std::uint32_t count) {
  Chunk c;
  c.offset = file_size_ + chunk_start_;
  c.bytes = static_cast<std::uint32_t>(out_.size() - chunk_start_);
  c.count = count;
  if (out_.size() >= kWriteBytes) flush();
  return c;
}

void Recording::flush() {
  std::size_t done = 0;
  while (done < out_.size()) {
    const ssize_t w =
        ::pwrite(fd_, out_.data() + done, out_.size() - done, static_cast<off_t>(file_size_ + done));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) io_error("write");
    done += static_cast<std::size_t>(w);
  }
  file_size_ += out_.size();
  out_.clear();
}

void Recording::read_chunk(const Chunk& c, std::vector<std::uint8_t>& into) const {
  into.resize(c.bytes);
  std::size_t done = 0;
  while (done < c.bytes) {
    const ssize_t got = ::pread(fd_, into.data() + done, c.bytes - done, static_cast<off_t>(c.offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) io_error("read");
    if (got == 0)
      throw std::runtime_error("the simulation's record file " + path_ + " is shorter than written");
    done += static_cast<std::size_t>(got);
  }
}

// Rank r's records as a LocationSource over `reader` (made anew for the rank), adding them to
// `totals` as they are read: what write_wlt() writes and totals() only reads.
trace::LocationSource Recording::source(trace::Rank r, std::unique_ptr<Reader>& reader,
                                        trace::RecordTotals& totals) const {
  const RankRecords& k = ranks_[static_cast<std::size_t>(r)];
  reader = std::make_unique<Reader>(*this, k);
  trace::LocationSource l;
  l.events = k.events;
  l.truth = k.truths;
  l.read_events = [&totals, &reader](Event* e, std::size_t n) {
    reader->events(e, n);
    totals.add_events(e, n);
  };
  l.read_truth = [&totals, &reader, r](ComputeTruth* t, std::size_t n) {
    reader->truth(t, n);
    totals.add_truth(static_cast<std::size_t>(r), t, n);
  };
  return l;
}

trace::RecordTotals Recording::write_wlt(const trace::Trace& head, std::ostream& out) {
  flush();
  trace::RecordTotals totals(ranks_.size());
  std::unique_ptr<Reader> reader;
  trace::write_wlt(
      head, ranks_.size(), [&](trace::Rank r) { return source(r, reader, totals); }, out);
  return totals;
}

trace::RecordTotals Recording::totals() {
  flush();
  trace::RecordTotals totals(ranks_.size());
  std::unique_ptr<Reader> reader;
  const auto drain = []<typename T>(std::uint64_t count, const std::function<void(T*, std::size_t)>& read) {
    std::vector<T> block;
    for (std::uint64_t done = 0; done < count; done += block.size()) {
      block.resize(static_cast<std::size_t>(std::min<std::uint64_t>(kReadBlock, count - done)));
      read(block.data(), block.size());
    }
  };
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    const trace::LocationSource l = source(static_cast<trace::Rank>(r), reader, totals);
    drain(l.events, l.read_events);
    drain(l.truth, l.read_truth);
  }
  return totals;
}

}  // namespace waitlab::sim
