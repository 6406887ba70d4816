// Fuzz target: the scenario loader (scenarios::parse_scenario, the text behind load_scenario).
//
// Input: the YAML text of a scenario, optionally followed by a line "--set--" and command-line
// arguments one per line: "@NAME" chooses variant NAME (--variant-name), "+TEXT" adds a variant
// given on the command line (--variant), any other line is a --set override "key=value".
// Contract: a Scenario or an InputError (fuzz_common.hpp).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_common.hpp"
#include "scenarios/scenario.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace waitlab;
  std::string_view input = fuzz::as_text(data, size);
  constexpr std::string_view kSep = "\n--set--\n";
  const auto cut = input.find(kSep);
  const std::string text(input.substr(0, cut));
  std::vector<std::string> overrides;
  scenarios::VariantChoice variant;
  if (cut != std::string_view::npos) {
    std::string_view rest = input.substr(cut + kSep.size());
    while (!rest.empty()) {
      const auto nl = rest.find('\n');
      const std::string_view line = rest.substr(0, nl);
      rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
      if (line.empty()) continue;
      if (line[0] == '@')
        variant.name = std::string(line.substr(1));
      else if (line[0] == '+')
        variant.extra.emplace_back(line.substr(1));
      else
        overrides.emplace_back(line);
    }
  }
  fuzz::check_contract("scenarios::parse_scenario", [&] {
    (void)waitlab::scenarios::parse_scenario(text, "fuzz.yaml", overrides, variant);
  });
  return 0;
}
