// The threaded wasm core (the package's -mt modules) under Node: its allocator front
// (core/src/common/wasm_thread_cache.cpp) and a core workload on 2 threads. GoogleTest is built without threads for
// wasm, so this program checks and reports on its own: one line per specification, exit 1 if any fails.
#include <emscripten/emmalloc.h>
#include <malloc.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "inductive/graphit.h"
#include "inductive/model_file.h"
#include "inductive/parallel.h"
#include "inductive/smiles.h"

namespace {

int g_failures = 0;

// Called through volatile pointers: the compiler knows malloc and free, and would fold a pair away or decide that
// two blocks differ, where these checks ask the allocator itself.
void* (*volatile alloc)(size_t) = std::malloc;
void* (*volatile alloc_zeroed)(size_t, size_t) = std::calloc;
void (*volatile release)(void*) = std::free;

void spec(const char* what, bool ok, const std::string& detail = "") {
  std::printf("%s %s%s%s\n", ok ? "ok  " : "FAIL", what, detail.empty() ? "" : ": ", detail.c_str());
  if (!ok) ++g_failures;
}

// A block filled with a pattern of its owner's id, so that an overlap with another live block shows.
struct Block {
  unsigned char* p = nullptr;
  size_t n = 0;
  unsigned char tag = 0;
};

void fill(const Block& b) {
  for (size_t i = 0; i < b.n; ++i) b.p[i] = static_cast<unsigned char>(b.tag + i * 7);
}
bool intact(const Block& b) {
  for (size_t i = 0; i < b.n; ++i)
    if (b.p[i] != static_cast<unsigned char>(b.tag + i * 7)) return false;
  return true;
}

// Threads allocate, fill, check and free blocks of every size (some past the largest cached class), and hand a
// share of them to the other threads to free: a block reused while live, or filed under a class larger than it can
// hold, overwrites a neighbour's pattern.
bool stress(int threads, int ops) {
  std::mutex m;
  std::vector<Block> handed;  // blocks one thread allocated for another to free
  std::atomic<bool> ok{true};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      std::mt19937 rng(1234 + t);
      std::vector<Block> live;
      for (int op = 0; op < ops; ++op) {
        const unsigned r = rng() % 100;
        if (r < 55 || live.empty()) {
          const size_t n = rng() % 8 == 0 ? 1 + rng() % 70000 : 1 + rng() % 3000;
          Block b{static_cast<unsigned char*>(r % 5 == 0 ? std::calloc(1, n) : std::malloc(n)), n,
                  static_cast<unsigned char>(rng())};
          if (!b.p || malloc_usable_size(b.p) < n) ok = false;
          fill(b);
          live.push_back(b);
        } else {
          const size_t i = rng() % live.size();
          Block b = live[i];
          live[i] = live.back();
          live.pop_back();
          if (!intact(b)) ok = false;
          if (r < 70) {
            std::lock_guard<std::mutex> lock(m);
            handed.push_back(b);
          } else if (r < 80) {
            const size_t n = 1 + rng() % 5000;  // realloc keeps the common prefix
            auto* q = static_cast<unsigned char*>(std::realloc(b.p, n));
            Block c{q, std::min(n, b.n), b.tag};
            if (!q || !intact(c)) ok = false;
            c.n = n;
            fill(c);
            live.push_back(c);
          } else {
            std::free(b.p);
          }
        }
        if (op % 64 == 0) {  // free what others handed over
          std::vector<Block> mine;
          {
            std::lock_guard<std::mutex> lock(m);
            mine.swap(handed);
          }
          for (const Block& b : mine) {
            if (!intact(b)) ok = false;
            std::free(b.p);
          }
        }
      }
      for (const Block& b : live) {
        if (!intact(b)) ok = false;
        std::free(b.p);
      }
    });
  }
  for (std::thread& th : pool) th.join();
  for (const Block& b : handed) {
    if (!intact(b)) ok = false;
    std::free(b.p);
  }
  return ok;
}

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

}  // namespace

int main() {
  using namespace inductive;
  {
    void* p = alloc(20);
    spec("malloc is the thread cache's: a 20-byte request gets a 32-byte class block", malloc_usable_size(p) >= 32,
         "usable " + std::to_string(malloc_usable_size(p)));
    release(p);
  }
  {
    void* p = alloc(100);
    release(p);
    void* q = alloc(100);
    spec("a block freed on a thread is the next one of its class that thread gets", p == q);
    std::memset(q, 0xAB, 100);
    release(q);
    auto* z = static_cast<unsigned char*>(alloc_zeroed(4, 25));
    bool zero = z == q;
    for (int i = 0; i < 100; ++i) zero = zero && z[i] == 0;
    spec("calloc zeroes a recycled block", zero);
    release(z);
    spec("calloc refuses a size that overflows", alloc_zeroed(SIZE_MAX / 2, 3) == nullptr);
  }
  {
    // The pthread runtime mallocs some blocks and frees them with dlmalloc's own free; memalign and realloc are
    // dlmalloc's: every mix of the two stays sound.
    void* p = std::malloc(40);
    emscripten_builtin_free(p);
    void* a = memalign(64, 200);
    const bool aligned = reinterpret_cast<uintptr_t>(a) % 64 == 0;
    std::free(a);  // cached under the largest class it can hold
    Block b{static_cast<unsigned char*>(std::malloc(150)), 150, 9};
    fill(b);
    auto* r = static_cast<unsigned char*>(std::realloc(b.p, 9000));
    Block c{r, 150, 9};
    spec("memalign'd, dlmalloc-freed and realloc'd blocks mix with the cache", aligned && r && intact(c));
    std::free(r);
  }
  spec("4 threads allocating, handing over and freeing 20000 blocks each never overlap two live blocks",
       stress(4, 20000));

  // The threaded core keeps emscripten's emulated C++ exceptions: with -pthread, 3.1.6's wasm exceptions catch only in
  // catch (...) (cmake/Dependencies.cmake). A core error keeps its type and code whether it is thrown on the calling
  // thread or on a pool worker and rethrown by parallel_for, and a short model file is reported as one (the bindings'
  // guard catches by type); the exception objects come from the allocator above.
  const auto code_of = [](const auto& body) -> std::string {
    try {
      body();
      return "none";
    } catch (const inductive::Error& e) {
      return inductive::error_code_name(e.code());
    } catch (const std::exception& e) {
      return std::string("std::exception: ") + e.what();
    } catch (...) {
      return "a non-standard exception";
    }
  };
  std::string code = code_of([] { throw inductive::Error(inductive::ErrorCode::kShapeMismatch, "thrown here"); });
  spec("an Error thrown on the calling thread is caught as an Error with its code", code == "shape_mismatch", code);
  code = code_of([] {
    const std::vector<uint8_t> sixteen(16, 0);
    (void)inductive::read_model(sixteen.data(), sixteen.size());
  });
  spec("a 16-byte model file is a bad_model_file error", code == "bad_model_file", code);
  code = code_of([] {
    inductive::set_parallel_threads(2);
    inductive::parallel_for(64, 1, 0, [](int i, int) {
      if (i == 37) throw inductive::Error(inductive::ErrorCode::kInvalidArgument, "item 37");
    });
  });
  spec("an Error thrown by a parallel_for item on the pool reaches the caller as an Error", code == "invalid_argument",
       code);

  // A core workload on the pool: GraphiT's prepare (SMILES, kernels: many small buffers) and predict give the same
  // bits on 2 threads as on 1.
  const std::vector<uint8_t> bytes = read_file(INDUCTIVE_MODELS "/graphit-mutag.safetensors");
  const GraphitModel model = GraphitModel::from_view(read_model(bytes.data(), bytes.size()));
  std::vector<std::string> smiles;
  for (const char* ring : {"c1ccccc1", "c1ccc2ccccc2c1", "c1ccc2cc3ccccc3cc2c1"})
    for (const char* group : {"O=[N+]([O-])", "N", "Cl", "Br", "O", "F", "I", "CC", "OC", "NC(=O)"})
      for (int copy = 0; copy < 8; ++copy) smiles.push_back(std::string(group) + ring);
  const auto run = [&](int threads) {
    set_parallel_threads(threads);
    const std::vector<GraphitGraph> graphs = model.prepare_many(
        static_cast<int>(smiles.size()),
        [&](int i) { return model.molecule_graph(parse_smiles(smiles[static_cast<size_t>(i)])); },
        [&](int i) { return smiles[static_cast<size_t>(i)]; });
    return model.predict(graphs);
  };
  const MatF two = run(2);  // first: the wasm pool is sized at its first loop
  const MatF one = run(1);
  spec("GraphiT prepare and predict on 2 threads give the 1-thread outputs bit for bit",
       two.rows() == one.rows() && std::memcmp(two.data(), one.data(), sizeof(float) * one.size()) == 0);

  std::printf("%s\n", g_failures == 0 ? "all passed" : "FAILED");
  return g_failures == 0 ? 0 : 1;
}
