#include "inductive/heap.h"

#include <cstdlib>  // before the test below: any libc header defines __GLIBC__, and without one it is never set

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace inductive {

void keep_batch_buffers_in_heap() noexcept {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's largest allowed value on 64-bit
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

}  // namespace inductive
