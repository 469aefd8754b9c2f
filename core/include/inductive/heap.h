// inductive/heap.h - allocator settings for training loops.
#pragma once

namespace inductive {

// Training loops resize the same few MB of batch buffers every step (packed batches differ in node count). glibc
// serves blocks over its mmap threshold with fresh mappings and trims the heap top back to the OS, so every step
// page-faulted and zeroed them again: 7% of a GraphiT epoch, half of a small-batch training step. This keeps them in
// the heap, at no extra peak memory. Call once at program start (the CLI and the GraphiT bench do); a no-op off glibc.
void keep_batch_buffers_in_heap() noexcept;

}  // namespace inductive
