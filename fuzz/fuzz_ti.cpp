// Fuzz target: the SimGrid time-independent trace reader (trace::read_ti).
//
// Input: the main file (an index or a single trace file), optionally followed by rank files,
// each after a line "--file--": the k-th is written as file "fK" (f1, f2, ...) beside the main
// file "trace.ti", so an index naming "f1", "f2" reads them. Every input starts in an empty
// directory. Contract: a TiTrace or an InputError (fuzz_common.hpp).
#include <cstddef>
#include <cstdint>
#include <string>

#include "analysis/trace/ti.hpp"
#include "fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace waitlab;
  const auto parts = fuzz::split(fuzz::as_text(data, size), "--file--");
  const auto& dir = fuzz::scratch().fresh();
  const auto main_file = dir / "trace.ti";
  fuzz::write_file(main_file, parts[0]);
  for (std::size_t k = 1; k < parts.size(); ++k) fuzz::write_file(dir / ("f" + std::to_string(k)), parts[k]);
  fuzz::check_contract("trace::read_ti", [&] { (void)trace::read_ti(main_file.string()); });
  return 0;
}
