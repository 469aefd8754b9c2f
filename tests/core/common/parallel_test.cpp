// parallel_for and ThreadPool: every item runs once, worker ids index per-thread scratch safely, nested loops run
// on their caller, exceptions reach the caller, and the pool the threaded wasm module uses behaves the same natively.
#include "inductive/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace inductive {
namespace {

// Restores the default cap after a test changes it.
struct CapGuard {
  ~CapGuard() { set_parallel_threads(0); }
};

TEST(ParallelFor, RunsEveryItemExactlyOnceForEveryChunkSize) {
  for (int n : {0, 1, 7, 64, 1000}) {
    for (int chunk : {1, 3, 64, 5000}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      parallel_for(n, chunk, 0, [&](int i, int) { hits[static_cast<size_t>(i)].fetch_add(1); });
      for (int i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << "n " << n << " chunk " << chunk;
    }
  }
}

// Sets of very different sizes are dealt largest first, so that the last items to finish are small ones.
TEST(LargestFirst, OrdersByDecreasingCostAndKeepsIndexOrderAmongEquals) {
  const std::vector<int> size = {3, 9, 1, 9, 5, 3};
  EXPECT_EQ(largest_first(6, [&](int i) { return size[static_cast<size_t>(i)]; }),
            (std::vector<int>{1, 3, 4, 0, 5, 2}));
  EXPECT_TRUE(largest_first(0, [](int) { return 0; }).empty());
}

TEST(ParallelFor, WorkerIdsAreBelowParallelThreadsSoPerThreadScratchIsSafe) {
  const int T = parallel_threads();
  ASSERT_GE(T, 1);
  std::vector<long> scratch(static_cast<size_t>(T), 0);  // one accumulator per worker, no atomics
  std::atomic<int> bad{0};
  parallel_for(10000, 7, 0, [&](int i, int worker) {
    if (worker < 0 || worker >= T) {
      bad.fetch_add(1);
      return;
    }
    scratch[static_cast<size_t>(worker)] += i;
  });
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(std::accumulate(scratch.begin(), scratch.end(), 0L), 10000L * 9999 / 2);
}

TEST(ParallelFor, ALoopInsideALoopRunsOnItsCallersThread) {
  std::atomic<int> inner_threads_above_one{0}, total{0};
  parallel_for(8, 1, 0, [&](int, int) {
    if (parallel_threads() != 1) inner_threads_above_one.fetch_add(1);
    parallel_for(10, 1, 0, [&](int, int worker) {
      EXPECT_EQ(worker, 0);
      total.fetch_add(1);
    });
  });
  EXPECT_EQ(inner_threads_above_one.load(), 0);
  EXPECT_EQ(total.load(), 80);
}

TEST(ParallelFor, TheCapLimitsTheThreadsAndOneMeansTheCallingThread) {
  CapGuard guard;
  set_parallel_threads(1);
  EXPECT_EQ(parallel_threads(), 1);
  std::set<std::thread::id> seen;
  parallel_for(100, 1, 0, [&](int, int worker) {
    EXPECT_EQ(worker, 0);
    seen.insert(std::this_thread::get_id());  // a single thread: no race
  });
  EXPECT_EQ(seen, std::set<std::thread::id>{std::this_thread::get_id()});
  set_parallel_threads(0);
  EXPECT_GE(parallel_threads(), 1);
}

TEST(ParallelFor, AnExceptionFromAnItemReachesTheCallerAfterTheOtherItemsRan) {
  std::atomic<int> ran{0};
  EXPECT_THROW(parallel_for(50, 1, 0,
                            [&](int i, int) {
                              ran.fetch_add(1);
                              if (i == 13) throw std::runtime_error("item 13");
                            }),
               std::runtime_error);
  EXPECT_EQ(ran.load(), 50);
}

TEST(ParallelForEachChecked, RethrowsTheErrorOfTheLowestFailingIndexAsASerialLoopWould) {
  for (int round = 0; round < 20; ++round) {
    try {
      parallel_for_each_checked(
          200, 1,
          [&](int i) {
            if (i == 37 || i == 150 || i == 199) throw std::runtime_error("item " + std::to_string(i));
          },
          [](int) {});
      FAIL() << "no exception";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "item 37");
    }
  }
}

TEST(ParallelForEachChecked, ProgressRunsOnTheCallingThreadAndItsExceptionCancelsTheRest) {
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> ran{0};
  int last_done = 0;
  bool wrong_thread = false;
  EXPECT_THROW(parallel_for_each_checked(
                   20000, 1,
                   [&](int) {
                     ran.fetch_add(1);
                     // Slow enough that the calling thread, which alone runs progress, gets items early on.
                     std::this_thread::sleep_for(std::chrono::microseconds(20));
                   },
                   [&](int done) {
                     if (std::this_thread::get_id() != caller) wrong_thread = true;
                     EXPECT_GE(done, last_done);
                     last_done = done;
                     if (done >= 100) throw std::runtime_error("cancelled");
                   }),
               std::runtime_error);
  EXPECT_FALSE(wrong_thread);
  EXPECT_LT(ran.load(), 20000) << "a cancellation must stop the items not yet started";
  // Without failures every item runs once and the last progress call may be the caller's last item.
  std::vector<std::atomic<int>> hits(500);
  parallel_for_each_checked(
      500, 3, [&](int i) { hits[static_cast<size_t>(i)].fetch_add(1); }, [](int) {});
  for (auto& h : hits) EXPECT_EQ(h.load(), 1);
}

// A body that takes the worker too gets parallel_for's: unique among the threads running at once, so that it can
// index per-thread scratch.
TEST(ParallelForEachChecked, ABodyThatTakesTheWorkerCanIndexPerThreadScratch) {
  const int threads = parallel_threads();
  std::vector<std::atomic<int>> busy(static_cast<size_t>(threads));
  std::atomic<bool> shared{false}, out_of_range{false};
  std::vector<std::atomic<int>> hits(300);
  parallel_for_each_checked(
      300, 1,
      [&](int i, int worker) {
        if (worker < 0 || worker >= threads) {
          out_of_range = true;
          return;
        }
        if (busy[static_cast<size_t>(worker)].fetch_add(1) != 0) shared = true;
        std::this_thread::sleep_for(std::chrono::microseconds(20));
        busy[static_cast<size_t>(worker)].fetch_sub(1);
        hits[static_cast<size_t>(i)].fetch_add(1);
      },
      [](int) {});
  EXPECT_FALSE(out_of_range);
  EXPECT_FALSE(shared) << "two threads ran with the same worker index at once";
  for (auto& h : hits) EXPECT_EQ(h.load(), 1);
}

TEST(ParallelRuntime, NamesHowThisBuildRunsLoops) {
  const std::string runtime = parallel_runtime();
  EXPECT_TRUE(runtime == "openmp" || runtime == "thread-pool" || runtime == "serial") << runtime;
}

// The pool of the threaded wasm module, exercised natively.
TEST(ThreadPool, RunsEveryItemOnceOnSeveralThreadsAndIsReusable) {
  ThreadPool pool(3);
  // A build without threads (the one-thread wasm module) has a pool of one: the caller.
  EXPECT_EQ(pool.size(), std::string(parallel_runtime()) == "serial" ? 1 : 3);
  for (int round = 0; round < 50; ++round) {
    std::vector<std::atomic<int>> hits(257);
    std::vector<int> by_worker(3, 0);
    std::mutex m;
    pool.run(
        257, 4, 3,
        [](void* ctx, int begin, int end, int worker) {
          auto& h = *static_cast<std::vector<std::atomic<int>>*>(ctx);
          for (int i = begin; i < end; ++i) h[static_cast<size_t>(i)].fetch_add(1);
          ASSERT_TRUE(worker >= 0 && worker < 3);
        },
        &hits);
    for (auto& h : hits) ASSERT_EQ(h.load(), 1) << "round " << round;
  }
}

TEST(ThreadPool, UsesNoMoreThreadsThanAskedAndRethrows) {
  ThreadPool pool(4);
  struct Ctx {
    std::mutex m;
    std::set<int> workers;
  } ctx;
  pool.run(
      400, 1, 2,
      [](void* p, int, int, int worker) {
        auto& c = *static_cast<Ctx*>(p);
        std::lock_guard<std::mutex> lock(c.m);
        c.workers.insert(worker);
      },
      &ctx);
  for (int w : ctx.workers) EXPECT_LT(w, 2);
  EXPECT_THROW(pool.run(
                   10, 1, 4,
                   [](void*, int begin, int, int) {
                     if (begin == 5) throw std::invalid_argument("five");
                   },
                   nullptr),
               std::invalid_argument);
  // Still usable after an exception.
  std::atomic<int> n{0};
  pool.run(
      10, 1, 4, [](void* p, int begin, int end, int) { static_cast<std::atomic<int>*>(p)->fetch_add(end - begin); },
      &n);
  EXPECT_EQ(n.load(), 10);
}

TEST(ThreadPool, APoolOfOneRunsOnTheCaller) {
  ThreadPool pool(0);
  EXPECT_EQ(pool.size(), 1);
  std::thread::id id;
  pool.run(
      3, 1, 8,
      [](void* p, int, int, int worker) {
        EXPECT_EQ(worker, 0);
        *static_cast<std::thread::id*>(p) = std::this_thread::get_id();
      },
      &id);
  EXPECT_EQ(id, std::this_thread::get_id());
}

// A worker that wakes late (its core taken by another process) holds no chunk, so no loop waits for it: the caller
// runs the chunks alone. The hook plays that worker: at its first wake-up it stops for up to 5 s, or until released.
struct LateWorker {
  static inline std::mutex m;
  static inline std::condition_variable cv;
  static inline bool released = false, timed_out = false;
  static inline std::atomic<int> wakes{0};
  static void hold(int) {
    if (wakes.fetch_add(1) > 0) return;
    std::unique_lock<std::mutex> lock(m);
    if (!cv.wait_for(lock, std::chrono::seconds(5), [] { return released; })) timed_out = true;
  }
  static void release() {
    std::lock_guard<std::mutex> lock(m);
    released = true;
    cv.notify_all();
  }
};

struct Tally {
  std::atomic<int> items{0};
  std::mutex m;
  std::set<int> workers;
  static void count(void* p, int begin, int end, int worker) {
    auto& t = *static_cast<Tally*>(p);
    t.items.fetch_add(end - begin);
    std::lock_guard<std::mutex> lock(t.m);
    t.workers.insert(worker);
  }
};

TEST(ThreadPool, ALoopEndsWhenItsChunksAreDoneNotWhenEveryWorkerHasWoken) {
  if (std::string(parallel_runtime()) == "serial") GTEST_SKIP() << "this build has no threads";
  ThreadPool pool(2, LateWorker::hold);
  Tally first, second;
  pool.run(200, 1, 2, Tally::count, &first);   // worker 1 wakes into the hook and stays there
  pool.run(100, 1, 2, Tally::count, &second);  // fewer chunks: a claim that ignored which loop it was for would
                                               // find chunks 100-199 of the first loop unclaimed
  EXPECT_FALSE(LateWorker::timed_out) << "a loop waited for the worker that held no chunk";
  EXPECT_EQ(first.items.load(), 200);
  EXPECT_EQ(second.items.load(), 100);
  EXPECT_EQ(first.workers, std::set<int>{0});
  EXPECT_EQ(second.workers, std::set<int>{0});
  // Released after both loops ended, the late worker finds the first loop gone (its claim names an older loop) and
  // runs nothing of either; then it takes part in the next loops as usual.
  for (int i = 0; i < 5000 && LateWorker::wakes.load() == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  LateWorker::release();
  Tally more;
  for (int round = 0; round < 200; ++round) pool.run(64, 1, 2, Tally::count, &more);
  EXPECT_EQ(first.items.load(), 200);
  EXPECT_EQ(second.items.load(), 100);
  EXPECT_EQ(more.items.load(), 200 * 64);
}

}  // namespace
}  // namespace inductive
