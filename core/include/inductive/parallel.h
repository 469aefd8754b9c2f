// The one place where the core splits independent work across threads.
//
// Every parallel loop of the core (Sinkhorn's batch, GraphiT's graphs and row blocks) goes through parallel_for, so
// the threading of every build is chosen here once:
// - builds with threads (native, and the wasm module built with -pthread): ThreadPool below, persistent workers
//   that spin briefly, then sleep on a condition variable between loops, and a loop that never waits for a worker
//   holding no chunk, so a busy machine does not make 2 threads slower than 1;
// - native builds with OpenMP, when INDUCTIVE_PARALLEL=openmp: OpenMP loops (the native default until 2026-11-29;
//   kept as bench/thread_contention.py's baseline);
// - wasm without threads: a plain loop.
// The default thread count natively is OMP_NUM_THREADS where OpenMP is linked, else every hardware thread.
// Items are independent and each writes only its own outputs, so results do not depend on how the items were
// dealt: the same bits on 1 thread as on N.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <numeric>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace inductive {

// The threads a parallel_for started here would use: 1 inside another parallel_for, otherwise the cap set by
// set_parallel_threads (default: every hardware thread natively; 1 in wasm until the package sets it).
int parallel_threads();

// Caps later parallel loops at `threads` (0 restores the default). In the threaded wasm module the TS layer sets it
// once to the size of its worker pool: a loop can never use more threads than the workers created before it.
void set_parallel_threads(int threads);

// How this build runs parallel loops: "openmp", "thread-pool" or "serial" (reported by `inductive capabilities`
// and the package's `threads`).
const char* parallel_runtime();

namespace parallel_detail {
using ChunkFn = void (*)(void* ctx, int begin, int end, int worker);
// Calls fn on chunks of [0, n) of `chunk` items each, on up to `threads` threads (worker in [0, threads)); returns
// when all are done. An exception thrown by fn is rethrown here (the first one; the other chunks still run).
void run(int n, int chunk, int threads, ChunkFn fn, void* ctx);
}  // namespace parallel_detail

// Runs body(i, worker) for every i in [0, n), in chunks of `chunk` consecutive items dealt dynamically to at most
// `max_threads` threads (<= 0: parallel_threads()). `worker` is in [0, parallel_threads()) and unique among the
// threads running at once: index per-thread scratch with it.
template <typename F>
void parallel_for(int n, int chunk, int max_threads, F&& body) {
  if (n <= 0) return;
  auto call = [](void* ctx, int begin, int end, int worker) {
    F& f = *static_cast<std::remove_reference_t<F>*>(ctx);
    for (int i = begin; i < end; ++i) f(i, worker);
  };
  parallel_detail::run(n, chunk < 1 ? 1 : chunk, max_threads, call, const_cast<void*>(static_cast<const void*>(&body)));
}

// The indices [0, n) in decreasing order of cost(i), ties in index order. Items of very different sizes dealt in this
// order start largest first, so that the last ones to finish are small and the threads end their loop together
// (with the sizes in index order, a thread that drew a large set last kept the other one waiting for it).
template <typename C>
std::vector<int> largest_first(int n, C&& cost) {
  std::vector<int> order(static_cast<size_t>(std::max(n, 0)));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return cost(a) > cost(b); });
  return order;
}

// parallel_for for work that may fail or be cancelled, with the outcome of a serial loop: body(i) (or body(i, worker),
// to index per-thread scratch as parallel_for's) for every i in [0, n); if some items throw, the exception of the
// lowest failing index is rethrown (items above it that have not started are skipped). progress(done) runs on the
// calling thread only (worker 0: it may call back into JS or any thread-bound API), after items it finished, with the
// count finished so far; an exception from it (a cancellation) stops every item not yet started and is rethrown.
template <typename F, typename P>
void parallel_for_each_checked(int n, int chunk, F&& body, P&& progress) {
  // Items read first_failed without the lock (in wasm a contended mutex sleeps on a futex); only failures, rare,
  // take it, which orders first_failed and error together.
  std::mutex m;
  std::atomic<int> first_failed{n};  // lowest failing index so far (-1: progress threw)
  std::exception_ptr error;
  std::atomic<int> done{0};
  auto fail = [&](int index, std::exception_ptr e) {
    std::lock_guard<std::mutex> lock(m);
    if (index < first_failed.load(std::memory_order_relaxed)) {
      first_failed.store(index, std::memory_order_relaxed);
      error = e;
    }
  };
  auto stopped_before = [&](int i) { return i > first_failed.load(std::memory_order_relaxed); };
  parallel_for(n, chunk, 0, [&](int i, int worker) {
    if (stopped_before(i)) return;
    try {
      if constexpr (std::is_invocable_v<F&, int, int>)
        body(i, worker);
      else
        body(i);
    } catch (...) {
      fail(i, std::current_exception());
    }
    const int finished = done.fetch_add(1) + 1;
    if (worker == 0) {
      try {
        progress(finished);
      } catch (...) {
        fail(-1, std::current_exception());
      }
    }
  });
  if (error) std::rethrow_exception(error);
}

// A fixed set of threads that run one loop at a time; the caller of run() takes part as worker 0. Exposed so that
// the tests (and a native build without OpenMP) exercise the same pool the threaded wasm module uses.
//
// A loop ends when its chunks are done, not when every worker has checked in: a worker that is slow to wake (its core
// taken by another process) finds the chunks gone, or the loop replaced, and runs nothing, so the caller never waits
// for a thread that holds no chunk. (A fork-join team that waits for all its threads at each loop's end made 2 threads
// slower than 1 on a machine with one core busy.) Waiting threads spin briefly before they sleep, the workers
// yielding their core as they do: GraphiT runs dozens of short loops per batch back to back, and a sleep and
// wake-up per loop cost the pool 10-20 % on an idle machine.
class ThreadPool {
 public:
  // Called by a worker each time it wakes for a loop, before it claims a chunk (tests use it to play a late worker).
  using WakeHook = void (*)(int worker);

  explicit ThreadPool(int threads, WakeHook on_wake = nullptr);  // threads - 1 workers start now; < 1 counts as 1
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }
  // As parallel_detail::run, on min(threads, size()) threads. A second caller while a loop runs (another user
  // thread) runs its loop alone on its own thread rather than wait.
  void run(int n, int chunk, int threads, parallel_detail::ChunkFn fn, void* ctx);

 private:
  struct Loop {
    int n = 0, chunk = 1, chunks = 0, threads = 1;
    parallel_detail::ChunkFn fn = nullptr;
    void* ctx = nullptr;
  };
  void work(int worker);
  int claim(uint32_t generation, int chunks);
  void take_chunks(const Loop& loop, uint32_t generation, int worker);

  std::vector<std::thread> workers_;
  WakeHook on_wake_ = nullptr;
  std::mutex busy_;  // held by the caller of the loop in progress
  std::mutex m_;
  std::condition_variable wake_, done_;
  int sleepers_ = 0;                     // workers asleep on wake_ (under m_): no notify when every worker is spinning
  Loop loop_;                            // the current loop (under m_)
  std::exception_ptr error_;             // its first exception (under m_)
  std::atomic<uint32_t> generation_{0};  // the current loop's number, written under m_
  // (generation << 32) | next unclaimed chunk: a claim made for an older loop fails instead of taking a newer loop's
  // chunk.
  std::atomic<uint64_t> next_{0};
  std::atomic<int> finished_{0};   // chunks of the current loop done
  std::atomic<bool> stop_{false};  // set under m_, read by spinning workers without it
};

}  // namespace inductive
