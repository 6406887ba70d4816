// waitlab::engine — the bytes that travel between the engine's processes.
//
// Promise: ByteWriter appends trivially copyable values (and vectors of them, length first) in
// the machine's own representation — the processes of one run share an architecture, as MPI
// jobs of one binary do — and ByteReader reads them back in the same order, throwing
// std::runtime_error when a parcel is shorter than what is read from it (never reading past
// it). A double travels as its bit pattern, so what arrives is bit-identical to what was sent.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

namespace waitlab::engine {

using Bytes = std::vector<std::byte>;

class ByteWriter {
 public:
  template <typename T>
    requires std::is_trivially_copyable_v<T>
  ByteWriter& put(const T& value) {
    const auto* p = reinterpret_cast<const std::byte*>(&value);
    bytes_.insert(bytes_.end(), p, p + sizeof(T));
    return *this;
  }
  template <typename T>
    requires std::is_trivially_copyable_v<T>
  ByteWriter& put(const std::vector<T>& values) {
    put(static_cast<std::uint64_t>(values.size()));
    if (!values.empty()) {
      const auto* p = reinterpret_cast<const std::byte*>(values.data());
      bytes_.insert(bytes_.end(), p, p + values.size() * sizeof(T));
    }
    return *this;
  }
  ByteWriter& put_raw(std::span<const std::byte> raw) {
    bytes_.insert(bytes_.end(), raw.begin(), raw.end());
    return *this;
  }
  const Bytes& bytes() const& { return bytes_; }
  Bytes bytes() && { return std::move(bytes_); }

 private:
  Bytes bytes_;
};

class ByteReader {
 public:
  explicit ByteReader(std::span<const std::byte> bytes) : bytes_(bytes) {}
  template <typename T>
    requires std::is_trivially_copyable_v<T>
  T get() {
    T value;
    std::memcpy(&value, take(sizeof(T)).data(), sizeof(T));
    return value;
  }
  template <typename T>
    requires std::is_trivially_copyable_v<T>
  std::vector<T> get_vector() {
    const auto n = get<std::uint64_t>();
    if (n > remaining() / sizeof(T)) throw std::runtime_error("engine: a parcel ends early");
    std::vector<T> values(static_cast<std::size_t>(n));
    const auto raw = take(values.size() * sizeof(T));
    if (!raw.empty()) std::memcpy(values.data(), raw.data(), raw.size());
    return values;
  }
  std::span<const std::byte> get_raw(std::size_t n) { return take(n); }
  std::size_t remaining() const { return bytes_.size() - at_; }
  bool done() const { return at_ == bytes_.size(); }

 private:
  std::span<const std::byte> take(std::size_t n) {
    if (n > remaining()) throw std::runtime_error("engine: a parcel ends early");
    const auto part = bytes_.subspan(at_, n);
    at_ += n;
    return part;
  }
  std::span<const std::byte> bytes_;
  std::size_t at_ = 0;
};

// A value as bytes and back (a single value of a trivially copyable type, or a vector of them).
template <typename T>
Bytes encode(const T& value) {
  return std::move(ByteWriter().put(value)).bytes();
}
template <typename T>
T decode(std::span<const std::byte> bytes) {
  ByteReader in(bytes);
  T value;
  if constexpr (std::is_trivially_copyable_v<T>) value = in.get<T>();
  else value = in.get_vector<typename T::value_type>();
  if (!in.done()) throw std::runtime_error("engine: a parcel is longer than its value");
  return value;
}

}  // namespace waitlab::engine
