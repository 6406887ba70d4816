// waitlab::trace — accumulating the [kind × call path × rank] tables of the analyses.
//
// Promise: CellTable<V> keeps one V per (kind, call path, rank) cell, created on first
// use, in a hash table (the analyses add to millions of cells on large traces), and hands
// them out sorted by (kind, call path, rank), so results do not depend on hashing.
#pragma once

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/trace/match.hpp"

namespace waitlab::trace {

struct Cell {
  std::uint8_t kind = 0;
  CallPathId path = 0;
  Rank rank = 0;
  bool operator==(const Cell&) const = default;
  auto key() const { return std::tie(kind, path, rank); }
};

struct CellHash {
  std::size_t operator()(const Cell& c) const {
    std::uint64_t h = (static_cast<std::uint64_t>(c.path) << 32) ^ static_cast<std::uint32_t>(c.rank);
    h ^= static_cast<std::uint64_t>(c.kind) << 59;
    h *= 0x9e3779b97f4a7c15ull;  // spread the bits (Fibonacci hashing)
    return static_cast<std::size_t>(h ^ (h >> 29));
  }
};

template <typename V>
class CellTable {
 public:
  V& at(std::uint8_t kind, CallPathId path, Rank rank) { return cells_[Cell{kind, path, rank}]; }
  std::size_t size() const { return cells_.size(); }
  std::vector<std::pair<Cell, V>> sorted() const {
    std::vector<std::pair<Cell, V>> out(cells_.begin(), cells_.end());
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first.key() < b.first.key(); });
    return out;
  }

 private:
  std::unordered_map<Cell, V, CellHash> cells_;
};

}  // namespace waitlab::trace
