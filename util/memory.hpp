// waitlab::util — giving freed heap memory back to the system.
//
// Promise: release_freed_memory() returns to the system what the process's allocator holds
// freed (glibc's malloc_trim(0); nothing elsewhere). glibc keeps freed heap resident — only the
// top of the heap goes back by itself — so a step's temporaries would stay in the resident set
// beside what the next step allocates. Called between phases whose peaks must not stack: the
// Paraver reader's phases, the analyses of a run, before the idle-wave summaries reach process
// 0, before a simulation starts its child.
#pragma once

namespace waitlab::util {

void release_freed_memory();

}  // namespace waitlab::util
