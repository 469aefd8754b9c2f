// A per-thread cache of small blocks in front of malloc, for the threaded wasm module only.
//
// Why: Emscripten 3.1.6 has one allocator for wasm threads, dlmalloc behind a single pthread mutex, and a contended
// wasm mutex sleeps on a futex (Atomics.wait) and is woken through JS. A loop of small vector allocations ran 15x
// slower on 2 threads than on 1 (bench: 640 items of 200 vectors, 11 ms on 1 thread, 166 ms on 2), and GraphiT's
// prepare (SMILES, graphs, diffusion kernels: many small Eigen and std::vector buffers) was slower on 2 threads than
// on 1 (bench/README.md, "Threads in the browser"). Natively glibc has per-thread caches already; the single-threaded
// module has no lock.
//
// How: malloc and free (and calloc, which would otherwise reach dlmalloc's own malloc) are replaced; every other
// allocation function stays dlmalloc's. A cached block is always a whole dlmalloc chunk, obtained by
// emscripten_builtin_malloc(class size) or given back by free, so any block may leave the cache through
// emscripten_builtin_free, and a pointer malloc'd here may be freed or realloc'd by dlmalloc directly (the
// pthread runtime frees some of its malloc'd blocks that way). free files a block by dlmalloc's usable size, under
// the largest class it can hold, so blocks from memalign or realloc are cached safely too.
#if defined(__EMSCRIPTEN__) && defined(__EMSCRIPTEN_PTHREADS__)

#include <emscripten/emmalloc.h>  // emscripten_builtin_malloc / emscripten_builtin_free (dlmalloc's own entries)
#include <malloc.h>               // malloc_usable_size (dlmalloc's)

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace {

// Size classes, 16 bytes to 32 KiB, each about 1.5x the last: a block serves requests up to its class size.
constexpr size_t kClassSize[] = {16,   32,   48,   64,   96,   128,  192,  256,   384,   512,   768,
                                 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768};
constexpr int kClasses = static_cast<int>(sizeof(kClassSize) / sizeof(kClassSize[0]));
constexpr size_t kLargest = kClassSize[kClasses - 1];
// What a thread keeps per class: at least 8 blocks, else 64 KiB. Past it, half the list goes back to dlmalloc.
constexpr size_t kKeepBytes = 64 << 10;

struct KeptBlocks {
  int per_class[kClasses];
  constexpr KeptBlocks() : per_class() {
    for (int c = 0; c < kClasses; ++c)
      per_class[c] = kKeepBytes / kClassSize[c] > 8 ? static_cast<int>(kKeepBytes / kClassSize[c]) : 8;
  }
};
constexpr KeptBlocks kKept;  // a table, so that free divides nothing

// The smallest class whose size is >= n (n <= kLargest).
int class_for_request(size_t n) {
  int c = 0;
  while (kClassSize[c] < n) ++c;
  return c;
}

// The largest class whose size is <= usable, or -1 (usable < 16).
int class_for_block(size_t usable) {
  int c = -1;
  while (c + 1 < kClasses && kClassSize[c + 1] <= usable) ++c;
  return c;
}

struct FreeBlock {
  FreeBlock* next;
};

// Zero-initialised thread-local state, no constructor or destructor: usable from the first malloc of a thread.
// A thread's blocks stay cached when it ends (the pool's threads live as long as the module). Cache-line aligned:
// the threads' TLS blocks lie next to each other on the heap, and lists updated at every malloc and free that
// shared a line with another thread's ran the threads at one thread's speed.
struct alignas(64) ThreadCache {
  FreeBlock* head[kClasses];
  int count[kClasses];
};
thread_local ThreadCache t_cache;

// Gives the older half of class c's list back to dlmalloc (one lock each, the price the cache otherwise saves).
void trim(ThreadCache& cache, int c) {
  const int keep = kKept.per_class[c] / 2;
  FreeBlock* b = cache.head[c];
  for (int i = 1; i < keep && b; ++i) b = b->next;
  if (!b) return;
  FreeBlock* rest = b->next;
  b->next = nullptr;
  cache.count[c] = keep;
  while (rest) {
    FreeBlock* next = rest->next;
    emscripten_builtin_free(rest);
    rest = next;
  }
}

}  // namespace

extern "C" {

void* malloc(size_t n) {
  if (n > kLargest) return emscripten_builtin_malloc(n);
  const int c = class_for_request(n);
  ThreadCache& cache = t_cache;
  if (FreeBlock* b = cache.head[c]) {
    cache.head[c] = b->next;
    --cache.count[c];
    return b;
  }
  return emscripten_builtin_malloc(kClassSize[c]);
}

void free(void* p) {
  if (!p) return;
  const size_t usable = malloc_usable_size(p);
  const int c = class_for_block(usable);
  if (c < 0 || usable > kLargest + 64) {  // large blocks (and their rounding) go straight back
    emscripten_builtin_free(p);
    return;
  }
  ThreadCache& cache = t_cache;
  FreeBlock* b = static_cast<FreeBlock*>(p);
  b->next = cache.head[c];
  cache.head[c] = b;
  if (++cache.count[c] > kKept.per_class[c]) trim(cache, c);
}

void* calloc(size_t count, size_t size) {
  if (size != 0 && count > SIZE_MAX / size) return nullptr;
  void* p = malloc(count * size);
  if (p) std::memset(p, 0, count * size);
  return p;
}

}  // extern "C"

#endif
