// Fuzz target: the OTF2 reader (trace::read_otf2).
//
// OTF2 reads an archive of several files from disk, so the input is one file of a small valid
// archive written by waitlab (fuzz/otf2_template/, 2 ranks): its first byte chooses the file,
// the rest replaces that file's content. Files in sorted order (byte % 6):
//   0 traces.def (global definitions)   1 traces.otf2 (anchor)
//   2 traces/0.def  3 traces/0.evt  4 traces/1.def  5 traces/1.evt (local definitions, events)
// With the byte's high bit set (>= 0x80) the chosen file is deleted instead
// (WAITLAB_FUZZ_OTF2_KEEP_ANCHOR=1: inputs that would change the anchor are skipped). Every input is
// read from a fresh copy of the archive in an empty directory. Contract: a Trace that holds the event
// model's invariants (trace_check.hpp) or an InputError (fuzz_common.hpp).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "analysis/trace/otf2.hpp"
#include "fuzz/fuzz_common.hpp"
#include "fuzz/trace_check.hpp"

#ifndef WAITLAB_FUZZ_OTF2_TEMPLATE
#error "WAITLAB_FUZZ_OTF2_TEMPLATE names the template archive (fuzz/CMakeLists.txt)"
#endif

namespace {

namespace fs = std::filesystem;

// (path relative to the archive's directory, content), sorted by path.
std::vector<std::pair<std::string, std::string>> g_files;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* env = std::getenv("WAITLAB_FUZZ_OTF2_TEMPLATE");
  const fs::path root = env && *env ? env : WAITLAB_FUZZ_OTF2_TEMPLATE;
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(root, ec)) {
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path(), std::ios::binary);
    g_files.emplace_back(fs::relative(e.path(), root).generic_string(),
                         std::string(std::istreambuf_iterator<char>(in), {}));
  }
  std::sort(g_files.begin(), g_files.end());
  if (ec || g_files.empty() ||
      !std::any_of(g_files.begin(), g_files.end(), [](const auto& f) { return f.first == "traces.otf2"; })) {
    std::fprintf(stderr, "waitlab-fuzz: no OTF2 template archive in %s\n", root.c_str());
    std::exit(3);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace waitlab;
  if (size == 0) return 0;
  const std::size_t chosen = (data[0] & 0x7f) % g_files.size();
  const bool remove = (data[0] & 0x80) != 0;
  // WAITLAB_FUZZ_OTF2_KEEP_ANCHOR=1 leaves the anchor alone: to explore the definitions and
  // events while a finding in the anchor's reading (OTF2's own) is open.
  static const bool keep_anchor = [] {
    const char* v = std::getenv("WAITLAB_FUZZ_OTF2_KEEP_ANCHOR");
    return v && *v && *v != '0';
  }();
  if (keep_anchor && g_files[chosen].first == "traces.otf2") return -1;  // -1: not added to the corpus
  const auto& dir = fuzz::scratch().fresh();
  for (std::size_t i = 0; i < g_files.size(); ++i) {
    const fs::path p = dir / g_files[i].first;
    fs::create_directories(p.parent_path());
    if (i != chosen)
      fuzz::write_file(p, g_files[i].second);
    else if (!remove)
      fuzz::write_file(p, fuzz::as_text(data + 1, size - 1));
  }
  fuzz::check_contract("trace::read_otf2", [&] {
    waitlab::fuzz::check_trace("trace::read_otf2", trace::read_otf2((dir / "traces.otf2").string()));
  });
  return 0;
}
