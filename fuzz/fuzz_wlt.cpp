// Fuzz target: the native trace reader (trace::read_wlt), from memory.
// Input: the bytes of a .wlt file. Contract: a Trace that holds the event model's invariants
// (trace_check.hpp) or an InputError (fuzz_common.hpp).
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "analysis/trace/wlt.hpp"
#include "fuzz/fuzz_common.hpp"
#include "fuzz/trace_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(waitlab::fuzz::as_text(data, size)), std::ios::binary);
  waitlab::fuzz::check_contract("trace::read_wlt", [&] {
    waitlab::fuzz::check_trace("trace::read_wlt", waitlab::trace::read_wlt(in, "fuzz.wlt"));
  });
  return 0;
}
