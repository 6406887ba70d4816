// waitlab::app — the program version, from project(VERSION) in the top-level CMakeLists.txt.
#pragma once

namespace waitlab::app {
inline constexpr const char* kVersion = WAITLAB_VERSION;
}  // namespace waitlab::app
