// tests/trace: what the tests that write OTF2 archives with the OTF2 API share.
//
// OTF2's writer asks before every buffer flush whether to write the buffer out
// (kFlushCallbacks: always; no timestamp for the flush record). OK(call) asserts that an OTF2
// call succeeded, naming the call (in functions returning void, as ASSERT_* requires).
// otf2_error_of(anchor) is read_otf2's InputError for an archive, "(no error)" when it reads.
#pragma once

#include <gtest/gtest.h>
#include <otf2/otf2.h>

#include <filesystem>
#include <string>

#include "util/error.hpp"
#include "analysis/trace/otf2.hpp"

namespace waitlab::test {

inline OTF2_FlushType pre_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) {
  return OTF2_FLUSH;
}
inline OTF2_TimeStamp post_flush(void*, OTF2_FileType, OTF2_LocationRef) {
  return 0;
}
inline const OTF2_FlushCallbacks kFlushCallbacks = {pre_flush, post_flush};

inline std::string otf2_error_of(const std::filesystem::path& anchor) {
  try {
    trace::read_otf2(anchor.string());
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace waitlab::test

#define OK(call) ASSERT_EQ((call), OTF2_SUCCESS) << #call
