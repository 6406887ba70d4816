// Internal to analysis/trace (not a public header): what the OTF2 writer (otf2_write.cpp) and
// reader (otf2_read.cpp) share: the archive properties of waitlab's own archives, and OTF2's
// error messages kept for ours instead of printed.
#pragma once

#include <otf2/otf2.h>

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <string>

namespace waitlab::trace::detail {

// Archive properties of waitlab's own archives (creator "waitlab"): the trace's origin and
// the span it declares, in seconds on the archive's time axis (%.17g).
inline constexpr const char* kOriginProperty = "WAITLAB::ORIGIN";
inline constexpr const char* kSpanBeginProperty = "WAITLAB::SPAN_BEGIN";
inline constexpr const char* kSpanEndProperty = "WAITLAB::SPAN_END";

// OTF2 prints its errors to stderr; while an archive is written or read, keep the first one for our
// message instead.
class QuietErrors {
 public:
  QuietErrors() : previous_(OTF2_Error_RegisterCallback(&QuietErrors::keep, this)) {}
  ~QuietErrors() { OTF2_Error_RegisterCallback(previous_, nullptr); }
  QuietErrors(const QuietErrors&) = delete;
  QuietErrors& operator=(const QuietErrors&) = delete;
  const std::string& first() const { return first_; }

 private:
  static OTF2_ErrorCode keep(void* self, const char*, uint64_t, const char*, OTF2_ErrorCode code, const char* fmt,
                             va_list va) {
    auto* q = static_cast<QuietErrors*>(self);
    if (q->first_.empty() && fmt) {
      char buf[512];
      std::vsnprintf(buf, sizeof buf, fmt, va);
      q->first_ = buf;
    }
    return code;
  }
  OTF2_ErrorCallback previous_;
  std::string first_;
};

}  // namespace waitlab::trace::detail
