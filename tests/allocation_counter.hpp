// Bytes allocated with operator new in this test executable, counted (tests/allocation_counter.cpp
// replaces the global operator new of the executables it is linked into). Tests that guard
// against a blow-up bound the memory a call allocates with it instead of timing the call: the
// count is the same on a quiet machine and a busy one.
#pragma once

#include <cstddef>

namespace waitlab::testing {

// Bytes (and allocations) made with operator new since the program started, by every thread.
std::size_t bytes_allocated();
std::size_t allocations();

// Bytes allocated while `f` runs.
template <typename F>
std::size_t bytes_allocated_by(F&& f) {
  const std::size_t before = bytes_allocated();
  f();
  return bytes_allocated() - before;
}

}  // namespace waitlab::testing
