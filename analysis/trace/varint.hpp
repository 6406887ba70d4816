// waitlab::trace — LEB128 varints for the compact in-memory and on-disk records (a replay's
// action tapes, a simulation's spilled events).
//
// Promise: put_varint/put_zigzag append an unsigned or signed integer in as few bytes as its
// magnitude needs (7 bits a byte, low first; signed ones zigzag-coded so that small negatives
// stay short); a VarintCursor reads them back, and raw 8-byte values, exactly. Reading past
// the end throws std::logic_error: these bytes are always the program's own, so a short read
// is a bug, not bad input.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace waitlab::trace {

inline void put_varint(std::vector<std::uint8_t>& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<std::uint8_t>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<std::uint8_t>(v));
}

inline std::uint64_t zigzag(std::int64_t v) {
  return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}

inline void put_zigzag(std::vector<std::uint8_t>& out, std::int64_t v) {
  put_varint(out, zigzag(v));
}

inline void put_u64(std::vector<std::uint8_t>& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

inline std::uint64_t double_bits(double d) {
  return std::bit_cast<std::uint64_t>(d);
}

class VarintCursor {
 public:
  VarintCursor(const std::uint8_t* data, std::size_t size, const char* what)
      : d_(data), n_(size), what_(what) {}
  bool done() const { return pos_ >= n_; }
  std::size_t position() const { return pos_; }
  std::uint8_t byte() {
    if (pos_ >= n_) short_read();
    return d_[pos_++];
  }
  std::uint64_t varint() {
    std::uint64_t v = 0;
    for (int shift = 0;; shift += 7) {
      if (pos_ >= n_ || shift > 63) short_read();
      const std::uint8_t b = d_[pos_++];
      v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return v;
    }
  }
  std::int64_t zigzag() {
    const std::uint64_t z = varint();
    return static_cast<std::int64_t>(z >> 1) ^ -static_cast<std::int64_t>(z & 1);
  }
  std::uint64_t u64() {
    if (n_ - pos_ < 8 || pos_ > n_) short_read();
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(d_[pos_++]) << (8 * i);
    return v;
  }

 private:
  [[noreturn]] void short_read() const { throw std::logic_error(std::string(what_) + ": truncated record"); }
  const std::uint8_t* d_;
  std::size_t n_;
  std::size_t pos_ = 0;
  const char* what_;
};

}  // namespace waitlab::trace
