// waitlab::util — giving freed heap memory back to the system (memory.hpp).
#include "util/memory.hpp"

#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace waitlab::util {

void release_freed_memory() {
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

}  // namespace waitlab::util
