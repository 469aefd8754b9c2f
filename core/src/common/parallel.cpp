// parallel_for's runtimes: ThreadPool wherever there are threads (OpenMP on request, natively), a loop otherwise.
#include "inductive/parallel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>

#if defined(_OPENMP)
#include <omp.h>
#endif

// Threads exist natively and in wasm built with -pthread; the single-threaded wasm module has none.
#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)
#define INDUCTIVE_HAVE_THREADS 1
#endif

namespace inductive {

namespace {

std::atomic<int> g_cap{0};           // set_parallel_threads; 0 = the default
thread_local bool t_inside = false;  // this thread is running items of a parallel loop

int default_threads() {
#if defined(_OPENMP)
  return omp_get_max_threads();
#elif defined(__EMSCRIPTEN__)
  return 1;  // the package sets the size of the worker pool it created (set_parallel_threads)
#elif defined(INDUCTIVE_HAVE_THREADS)
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
#else
  return 1;
#endif
}

// Marks the items this thread runs as inside a loop, so that loops they start run on this thread.
struct Inside {
  bool was = t_inside;
  Inside() { t_inside = true; }
  ~Inside() { t_inside = was; }
};

// The loop on the calling thread, with the threaded runs' contract: every chunk runs, the first exception is
// rethrown at the end.
void run_serial(int n, int chunk, parallel_detail::ChunkFn fn, void* ctx) {
  std::exception_ptr error;
  for (int begin = 0; begin < n; begin += chunk) {
    try {
      fn(ctx, begin, std::min(n, begin + chunk), 0);
    } catch (...) {
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
}

// How long the pool's threads spin before they sleep. A worker between loops: GraphiT runs dozens of short loops per
// batch with short serial steps between them, and the next loop usually comes within this. The caller waiting for
// chunks other threads hold: a chunk is short, and if its thread lost its core, sleeping lets that thread have ours.
// Measured on GraphiT (b), 2 threads, bench/thread_contention.py: 200 / 50 us matched OpenMP's 2-thread speed on an
// idle machine and stayed level with 1 thread next to a busy loop; 1000 / 200 us spun away the busy machine's share
// (0.76-0.81x of 1 thread), 50 / 10 us slept through the idle machine's next loops (1.25x where 200 / 50 gave 1.87x).
constexpr int kWorkerSpinMicros = 200;
constexpr int kCallerSpinMicros = 50;

// Between checks a worker yields its core: on an idle core yield returns at once, and where another process waits
// for the core it runs instead, so a waiting worker does not take time from the caller's serial steps (next to a busy
// loop, GraphiT (b) on 2 threads ran at 0.89x / 0.94x of 1 thread spinning on pause, 0.98x / 1.00x yielding).
// The caller waits only for chunks in flight, which end soon: it spins on the pause hint.
inline void yield_core() { std::this_thread::yield(); }
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Spins until ready() or for `micros` microseconds, calling relax() between checks; returns ready().
template <typename Ready, typename Relax>
bool spin_until(const Ready& ready, int micros, const Relax& relax) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(micros);
  for (unsigned i = 1;; ++i) {
    if (ready()) return true;
    relax();
    if (i % 8 == 0 && std::chrono::steady_clock::now() >= until) return ready();
  }
}

#if defined(INDUCTIVE_HAVE_THREADS)
ThreadPool& shared_pool() {
#if defined(__EMSCRIPTEN__)
  // Sized once, at the first parallel loop, to the cap in force then: every thread needs a Web Worker the page
  // created beforehand, so the pool can never grow later.
  static ThreadPool pool(parallel_threads());
#else
  // Natively: every hardware thread (or more, if OMP_NUM_THREADS says so); each loop uses as many as its cap allows.
  static ThreadPool pool(std::max({1, default_threads(), static_cast<int>(std::thread::hardware_concurrency())}));
#endif
  return pool;
}
#endif

// Loops run on the pool; INDUCTIVE_PARALLEL=openmp (read once) runs them as OpenMP loops instead, the baseline
// bench/thread_contention.py measures the pool against. OpenMP was the native default until 2026-11-29: its team
// waits at each loop's end for every thread, spinning, and next to a busy loop its 2 threads ran at 0.5-0.8x of 1.
bool use_openmp() {
#if defined(_OPENMP)
  static const bool openmp = [] {
    const char* v = std::getenv("INDUCTIVE_PARALLEL");
    return v && std::string(v) == "openmp";
  }();
  return openmp;
#else
  return false;
#endif
}

}  // namespace

int parallel_threads() {
#if defined(_OPENMP)
  if (t_inside || omp_in_parallel()) return 1;
#else
  if (t_inside) return 1;
#endif
  const int cap = g_cap.load(std::memory_order_relaxed);
  return cap > 0 ? cap : default_threads();
}

void set_parallel_threads(int threads) { g_cap.store(std::max(0, threads), std::memory_order_relaxed); }

const char* parallel_runtime() {
  if (use_openmp()) return "openmp";
#if defined(INDUCTIVE_HAVE_THREADS)
  return "thread-pool";
#else
  return "serial";
#endif
}

namespace parallel_detail {

void run(int n, int chunk, int threads, ChunkFn fn, void* ctx) {
  const int available = parallel_threads();
  const int chunks = (n + chunk - 1) / chunk;
  const int T = std::min({threads > 0 ? threads : available, available, chunks});
  if (T <= 1) {
    Inside inside;
    run_serial(n, chunk, fn, ctx);
    return;
  }
#if defined(_OPENMP)
  if (!use_openmp()) return shared_pool().run(n, chunk, T, fn, ctx);
  std::exception_ptr error;
#pragma omp parallel for schedule(dynamic, 1) num_threads(T)
  for (int c = 0; c < chunks; ++c) {
    Inside inside;
    try {
      fn(ctx, c * chunk, std::min(n, (c + 1) * chunk), omp_get_thread_num());
    } catch (...) {
#pragma omp critical(inductive_parallel_error)
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
#elif defined(INDUCTIVE_HAVE_THREADS)
  shared_pool().run(n, chunk, T, fn, ctx);
#else
  Inside inside;
  run_serial(n, chunk, fn, ctx);
#endif
}

}  // namespace parallel_detail

ThreadPool::ThreadPool(int threads, WakeHook on_wake) : on_wake_(on_wake) {
#if defined(INDUCTIVE_HAVE_THREADS)
  const int T = std::max(1, threads);
#else
  const int T = 1;  // no threads to start: a pool of one, the caller
  (void)threads;
#endif
  workers_.reserve(static_cast<size_t>(T - 1));
  for (int w = 1; w < T; ++w) workers_.emplace_back([this, w] { work(w); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(m_);
    stop_.store(true, std::memory_order_release);
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

int ThreadPool::claim(uint32_t generation, int chunks) {
  uint64_t v = next_.load(std::memory_order_relaxed);
  for (;;) {
    const auto index = static_cast<int>(static_cast<uint32_t>(v));
    if (static_cast<uint32_t>(v >> 32) != generation || index >= chunks) return -1;
    if (next_.compare_exchange_weak(v, v + 1, std::memory_order_relaxed)) return index;
  }
}

void ThreadPool::take_chunks(const Loop& loop, uint32_t generation, int worker) {
  Inside inside;
  for (int c; (c = claim(generation, loop.chunks)) >= 0;) {
    const int begin = c * loop.chunk;
    try {
      loop.fn(loop.ctx, begin, std::min(loop.n, begin + loop.chunk), worker);
    } catch (...) {
      std::lock_guard<std::mutex> lock(m_);
      if (!error_) error_ = std::current_exception();
    }
    // The last chunk wakes the caller if it went to sleep (the lock orders this after its check).
    if (finished_.fetch_add(1, std::memory_order_acq_rel) + 1 == loop.chunks) {
      std::lock_guard<std::mutex> lock(m_);
      done_.notify_all();
    }
  }
}

void ThreadPool::work(int worker) {
  uint32_t seen = 0;
  for (;;) {
    const auto fresh = [&] {
      return stop_.load(std::memory_order_acquire) || generation_.load(std::memory_order_acquire) != seen;
    };
    if (!spin_until(fresh, kWorkerSpinMicros, yield_core)) {
      std::unique_lock<std::mutex> lock(m_);
      ++sleepers_;
      wake_.wait(lock, [&] {
        return stop_.load(std::memory_order_relaxed) || generation_.load(std::memory_order_relaxed) != seen;
      });
      --sleepers_;
    }
    Loop loop;
    uint32_t generation;
    {
      std::lock_guard<std::mutex> lock(m_);
      if (stop_.load(std::memory_order_relaxed)) return;
      loop = loop_;
      generation = generation_.load(std::memory_order_relaxed);
    }
    seen = generation;
    if (worker >= loop.threads) continue;  // not needed for this loop
    if (on_wake_) on_wake_(worker);
    take_chunks(loop, generation, worker);
  }
}

void ThreadPool::run(int n, int chunk, int threads, parallel_detail::ChunkFn fn, void* ctx) {
  if (n <= 0) return;
  chunk = std::max(1, chunk);
  std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
  const int T = std::min(std::max(1, threads), size());
  if (!busy.owns_lock() || T == 1 || t_inside) {
    Inside inside;
    run_serial(n, chunk, fn, ctx);
    return;
  }
  const Loop loop{n, chunk, (n + chunk - 1) / chunk, T, fn, ctx};
  uint32_t generation;
  {
    std::lock_guard<std::mutex> lock(m_);
    loop_ = loop;
    error_ = nullptr;
    finished_.store(0, std::memory_order_relaxed);
    generation = generation_.load(std::memory_order_relaxed) + 1;
    next_.store(static_cast<uint64_t>(generation) << 32, std::memory_order_relaxed);
    generation_.store(generation, std::memory_order_release);
    if (sleepers_ > 0) wake_.notify_all();
  }
  take_chunks(loop, generation, 0);
  // Only chunks other threads are running are waited for; workers that have not woken yet are not.
  const auto all_done = [&] { return finished_.load(std::memory_order_acquire) == loop.chunks; };
  if (!spin_until(all_done, kCallerSpinMicros, cpu_relax)) {
    std::unique_lock<std::mutex> lock(m_);
    done_.wait(lock, all_done);
  }
  std::exception_ptr error;
  {
    std::lock_guard<std::mutex> lock(m_);
    error = error_;
    error_ = nullptr;
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace inductive
