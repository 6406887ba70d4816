// waitlab::profiler::FlatMap — the profiler's hash map for its hot path (call sites,
// requests): 64-bit keys, small values, open addressing with linear probing and
// backward-shift deletion (no tombstones), at most half full, no allocation until it grows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace waitlab::profiler {

template <class V>
class FlatMap {
 public:
  FlatMap() : slots_(16) {}
  // The value of `key`, inserting `value` if absent; second: whether it was inserted.
  std::pair<V*, bool> insert(std::uint64_t key, const V& value) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    std::size_t i = home(key);
    for (; slots_[i].used; i = next(i))
      if (slots_[i].key == key) return {&slots_[i].value, false};
    slots_[i] = Slot{key, value, true};
    ++size_;
    return {&slots_[i].value, true};
  }
  // Removes `key`; returns whether it was there (its value in *out).
  bool erase(std::uint64_t key, V* out = nullptr) {
    std::size_t i = home(key);
    for (; slots_[i].key != key || !slots_[i].used; i = next(i))
      if (!slots_[i].used) return false;
    if (out != nullptr) *out = slots_[i].value;
    // Shift back the entries after the hole that would no longer be found.
    for (std::size_t j = next(i);; j = next(j)) {
      if (!slots_[j].used) break;
      const std::size_t k = home(slots_[j].key);
      const bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
      if (stays) continue;
      slots_[i] = slots_[j];
      i = j;
    }
    slots_[i].used = false;
    --size_;
    return true;
  }
  bool empty() const { return size_ == 0; }

 private:
  struct Slot {
    std::uint64_t key = 0;
    V value{};
    bool used = false;
  };
  std::size_t home(std::uint64_t key) const {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> 32) & (slots_.size() - 1);
  }
  std::size_t next(std::size_t i) const { return (i + 1) & (slots_.size() - 1); }
  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    size_ = 0;
    for (const Slot& s : old)
      if (s.used) insert(s.key, s.value);
  }
  std::vector<Slot> slots_;  // size: a power of two, at most half full
  std::size_t size_ = 0;
};

}  // namespace waitlab::profiler
