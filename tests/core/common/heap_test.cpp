// Specification of inductive::keep_batch_buffers_in_heap: after it, a training step's multi-MB batch buffers are
// served from the heap and stay there when freed, instead of being mapped, page-faulted and zeroed anew every step.
#include <cstdlib>

#include <gtest/gtest.h>

#include "inductive/heap.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace {

TEST(Heap, BatchSizedBlocksComeFromTheHeapAndStayThereWhenFreed) {
#if !defined(__GLIBC__)
  GTEST_SKIP() << "allocator settings apply to glibc only";
#else
  inductive::keep_batch_buffers_in_heap();
  const size_t mapped_before = mallinfo2().hblks;
  void* block = std::malloc(8u << 20);  // over glibc's default 128 KiB mmap threshold
  ASSERT_NE(block, nullptr);
  EXPECT_EQ(mallinfo2().hblks, mapped_before) << "an 8 MB block was mapped instead of served from the heap";
  const size_t heap_with_block = mallinfo2().arena;
  std::free(block);
  EXPECT_EQ(mallinfo2().arena, heap_with_block) << "freeing the block trimmed the heap";
#endif
}

}  // namespace
