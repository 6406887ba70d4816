// waitlab::models — a rank's actions stored compactly, for replays that hold millions.
//
// Promise: ActionTape::push() appends an Action as a kind byte, a presence mask of the fields
// that differ from a default-constructed Action, and those fields only (integers as LEB128
// varints, signed ones zigzag-coded; `amount` as its 8 bytes); TapeReader gives back exactly
// the Actions pushed, bit for bit (every field, amounts' signs and NaN payloads included), in
// order. A point-to-point call takes about 9 bytes instead of sizeof(Action) = 64, a compute
// interval about 12. The tape counts its actions and its compute actions (the iterations
// numbering of models/loops.hpp needs the latter).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "models/action.hpp"

namespace waitlab::models {

class ActionTape {
 public:
  void push(const Action& a);
  std::size_t size() const { return count_; }
  std::size_t computes() const { return computes_; }
  std::size_t bytes() const { return data_.size(); }
  void shrink_to_fit() { data_.shrink_to_fit(); }

 private:
  friend class TapeReader;
  std::vector<std::uint8_t> data_;
  std::size_t count_ = 0;
  std::size_t computes_ = 0;
};

class TapeReader {
 public:
  explicit TapeReader(const ActionTape& t) : t_(t) {}
  bool next(Action& a);
  std::size_t position() const { return read_; }  // actions read so far

 private:
  const ActionTape& t_;
  std::size_t pos_ = 0;
  std::size_t read_ = 0;
};

}  // namespace waitlab::models
