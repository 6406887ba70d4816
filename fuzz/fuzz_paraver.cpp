// Fuzz target: the Paraver reader (trace::read_paraver: the .prv and the .pcf beside it; the
// .row is not read).
//
// Input: the .prv text, optionally followed by a line "--pcf--" and the .pcf text (without
// one, no .pcf). Written as X.prv (and X.pcf) in an empty directory; the reader goes through
// zlib, so a gzip-compressed .prv part is read too. Contract: a Trace that holds the event
// model's invariants (trace_check.hpp) or an InputError (fuzz_common.hpp).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "analysis/trace/paraver.hpp"
#include "fuzz/fuzz_common.hpp"
#include "fuzz/trace_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace waitlab;
  const std::string_view input = fuzz::as_text(data, size);
  constexpr std::string_view kSep = "\n--pcf--\n";
  const auto cut = input.find(kSep);
  const auto& dir = fuzz::scratch().fresh();
  fuzz::write_file(dir / "x.prv", input.substr(0, cut));
  if (cut != std::string_view::npos) fuzz::write_file(dir / "x.pcf", input.substr(cut + kSep.size()));
  fuzz::check_contract("trace::read_paraver", [&] {
    waitlab::fuzz::check_trace("trace::read_paraver", trace::read_paraver((dir / "x.prv").string()));
  });
  return 0;
}
