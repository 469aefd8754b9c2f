// parallel_for's runtimes: OpenMP natively, ThreadPool where there are threads but no OpenMP, a loop otherwise.
#include "inductive/parallel.h"

#include <algorithm>
#include <atomic>
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

#if defined(INDUCTIVE_HAVE_THREADS)
ThreadPool& shared_pool() {
#if defined(__EMSCRIPTEN__)
  // Sized once, at the first parallel loop, to the cap in force then: every thread needs a Web Worker the page
  // created beforehand, so the pool can never grow later.
  static ThreadPool pool(parallel_threads());
#else
  // Natively: every hardware thread (or more, if OpenMP was told so); each loop uses as many as its cap allows.
  static ThreadPool pool(std::max({1, default_threads(), static_cast<int>(std::thread::hardware_concurrency())}));
#endif
  return pool;
}
#endif

// OpenMP builds run loops with OpenMP unless INDUCTIVE_PARALLEL=pool (read once) picks the pool, which
// bench/thread_contention compares on a busy machine.
bool use_openmp() {
#if defined(_OPENMP)
  static const bool openmp = [] {
    const char* v = std::getenv("INDUCTIVE_PARALLEL");
    return !(v && std::string(v) == "pool");
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

ThreadPool::ThreadPool(int threads) {
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
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::take_chunks(int worker) {
  Inside inside;
  for (;;) {
    int begin;
    {
      std::lock_guard<std::mutex> lock(m_);
      if (next_ >= n_) return;
      begin = next_;
      next_ += chunk_;
    }
    try {
      fn_(ctx_, begin, std::min(n_, begin + chunk_), worker);
    } catch (...) {
      std::lock_guard<std::mutex> lock(m_);
      if (!error_) error_ = std::current_exception();
    }
  }
}

void ThreadPool::work(int worker) {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(m_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      if (worker >= threads_) {  // not needed for this loop
        if (--pending_ == 0) done_.notify_one();
        continue;
      }
    }
    take_chunks(worker);
    std::lock_guard<std::mutex> lock(m_);
    if (--pending_ == 0) done_.notify_one();
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
  {
    std::lock_guard<std::mutex> lock(m_);
    n_ = n;
    chunk_ = chunk;
    threads_ = T;
    fn_ = fn;
    ctx_ = ctx;
    next_ = 0;
    error_ = nullptr;
    pending_ = static_cast<int>(workers_.size());
    ++generation_;
  }
  wake_.notify_all();
  take_chunks(0);
  std::exception_ptr error;
  {
    std::unique_lock<std::mutex> lock(m_);
    done_.wait(lock, [&] { return pending_ == 0; });
    error = error_;
    error_ = nullptr;
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace inductive
