// waitlab fuzz targets — what every target shares (fuzz/README.md).
//
// Promise: check_contract(what, f) runs f and enforces the readers' contract: f returns, or
// throws waitlab::InputError (only the latter for an input marked as one to reject). Any other exception is a finding: it is printed with its type and
// message and the process aborts, so that libFuzzer saves the input as a crash. Crashes,
// sanitizer reports, leaks and hangs are found by libFuzzer and the sanitizers themselves.
// ScratchDir is a directory of this process under $TMPDIR (removed at exit); fresh() empties it
// so that every input starts from nothing. split() cuts an input at a separator line, the way
// the multi-file targets pack several files into one input.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>
#include <typeinfo>
#include <vector>

#include "util/error.hpp"

namespace waitlab::fuzz {

[[noreturn]] inline void finding(const char* what, const char* type, const char* message) {
  std::fprintf(stderr,
               "\n==waitlab-fuzz== FINDING in %s: %s escaped (the contract allows InputError only): %s\n",
               what, type, message);
  std::fflush(stderr);
  std::abort();
}

// WAITLAB_FUZZ_VERBOSE=1 prints what each input gave ("ok" or the InputError's message): to
// check that seeds read, or to see what a reproducer says.
inline bool verbose() {
  static const bool on = [] {
    const char* v = std::getenv("WAITLAB_FUZZ_VERBOSE");
    return v && *v && *v != '0';
  }();
  return on;
}

// WAITLAB_FUZZ_EXPECT_REJECT=1 (scripts/fuzz.sh sets it for regression inputs named *.reject.*):
// the input is one the reader must refuse, so reading it without an InputError is a finding too.
inline bool expect_reject() {
  static const bool on = [] {
    const char* v = std::getenv("WAITLAB_FUZZ_EXPECT_REJECT");
    return v && *v && *v != '0';
  }();
  return on;
}

template <class F>
void check_contract(const char* what, F&& f) {
  try {
    f();
    if (verbose()) std::fprintf(stderr, "waitlab-fuzz: %s: ok\n", what);
    if (expect_reject()) finding(what, "no exception", "the input was accepted, but it must be rejected with an InputError");
  } catch (const waitlab::InputError& e) {
    // The contract: bad input is an InputError.
    if (verbose()) std::fprintf(stderr, "waitlab-fuzz: %s: InputError: %s\n", what, e.what());
  } catch (const std::exception& e) {
    finding(what, typeid(e).name(), e.what());
  } catch (...) {
    finding(what, "a non-std exception", "(no message)");
  }
}

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// The parts of `text` between lines equal to `separator` (the separator line's "\n" on both
// sides belongs to the separator): "a\n--x--\nb" -> {"a", "b"}.
inline std::vector<std::string_view> split(std::string_view text, std::string_view separator) {
  const std::string sep = "\n" + std::string(separator) + "\n";
  std::vector<std::string_view> parts;
  for (;;) {
    const auto at = text.find(sep);
    if (at == std::string_view::npos) {
      parts.push_back(text);
      return parts;
    }
    parts.push_back(text.substr(0, at));
    text.remove_prefix(at + sep.size());
  }
}

inline void write_file(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) {
    std::fprintf(stderr, "waitlab-fuzz: cannot write %s (harness failure, not a finding)\n", path.c_str());
    std::exit(3);
  }
}

// One directory per fuzzing process, emptied before every input.
class ScratchDir {
 public:
  ScratchDir() {
    std::error_code ec;
    std::filesystem::path base = std::filesystem::temp_directory_path(ec);
    if (ec) base = "/tmp";
    std::string templ = (base / "waitlab-fuzz-XXXXXX").string();
    if (!::mkdtemp(templ.data())) {
      std::perror("waitlab-fuzz: mkdtemp");
      std::exit(3);
    }
    root_ = templ;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  // An empty directory for one input.
  const std::filesystem::path& fresh() {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(root_, ec))
      std::filesystem::remove_all(e.path(), ec);
    return root_;
  }

 private:
  std::filesystem::path root_;
};

// A function-local static: destroyed (the directory removed) at normal exit.
inline ScratchDir& scratch() {
  static ScratchDir dir;
  return dir;
}

}  // namespace waitlab::fuzz
