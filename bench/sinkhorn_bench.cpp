// bench/sinkhorn_bench.cpp - time the batched, masked log-domain Sinkhorn on OTKE-shaped problems.
//
// The default problem is the one OTKE solves per mini-batch (thesis ch. 2): 64 sets, each n x 64 with n drawn
// uniformly from [200, 1000] and padded to 1000, random costs, eps 0.5, float32, 10 (supervised) or 100
// (unsupervised) iterations at a fixed count (tol = 0). One JSON line per configuration goes to stdout so that
// scripts/bench.sh can join it with the POT baseline (bench/pot_sinkhorn_bench.py) into one table.
//
// The SIMD kernel set is chosen once per process (INDUCTIVE_SIMD=scalar|sse2|avx2|avx512 pins one), so one run
// of this program measures one set; bench.sh runs it once per set. Threads are set in-process.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <ctime>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "inductive/atomic_file.h"
#include "inductive/npy.h"
#include "inductive/sinkhorn.h"
#include "inductive/version.h"

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace {

struct Config {
  int batch = 64, n_min = 200, n_max = 1000, p = 64;
  double eps = 0.5;
  uint64_t seed = 42;
  std::vector<int> iters{10, 100};
  std::vector<int> threads{1, 2};
  double min_time_s = 1.0;  // keep repeating until this much time was measured ...
  int min_repeats = 3;      // ... and at least this many runs (the median is reported)
  std::string dump;         // folder for cost.npy / n.npy (the POT script reads them)
};

struct Batch {
  std::vector<float> cost;  // [batch, n_max, p], padding = 0
  std::vector<int32_t> n;   // [batch] true lengths
};

// Costs uniform in [0, 1): the scale of squared distances between L2-normalised features over 2, and with
// eps = 0.5 the regime OTKE runs in. The padding stays 0; the solver never reads it.
Batch make_batch(const Config& c) {
  std::mt19937_64 rng(c.seed);
  std::uniform_int_distribution<int> len(c.n_min, c.n_max);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  Batch b;
  b.cost.assign(static_cast<size_t>(c.batch) * c.n_max * c.p, 0.0f);
  b.n.resize(c.batch);
  for (int bi = 0; bi < c.batch; ++bi) {
    b.n[bi] = len(rng);
    for (int i = 0; i < b.n[bi]; ++i)
      for (int j = 0; j < c.p; ++j) b.cost[(static_cast<size_t>(bi) * c.n_max + i) * c.p + j] = unit(rng);
  }
  return b;
}

struct Timing {
  double median_ms, min_ms;  // wall time per batch
  double cpu_ms;             // process CPU time per batch (all threads), mean over the runs
};

// CPU time of the process, all threads: unlike wall time it does not grow when other processes take the cores,
// so with 1 thread it is the figure to trust on a busy machine.
double cpu_ms_now() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

// Wall time of one batched solve, in milliseconds, after one warm-up run (first-touch page faults and the
// kernel-table choice are not what we measure). The minimum is kept next to the median: on a shared machine
// interference only ever adds time.
Timing time_solve(const Config& c, const Batch& b, int iters, std::vector<float>& plan) {
  inductive::SinkhornProblem<float> pr;
  pr.cost = b.cost.data();
  pr.batch = c.batch;
  pr.n_max = c.n_max;
  pr.p_max = c.p;
  pr.n = b.n.data();
  inductive::SinkhornOptions o;
  o.eps = c.eps;
  o.max_iter = iters;
  inductive::SinkhornOutput<float> out;
  out.plan = plan.data();  // the plan is all OTKE needs; potentials and summaries are skipped

  using Clock = std::chrono::steady_clock;
  inductive::sinkhorn_log(pr, o, out);
  std::vector<double> ms;
  double total = 0;
  const double cpu0 = cpu_ms_now();
  while (static_cast<int>(ms.size()) < c.min_repeats || total < c.min_time_s * 1e3) {
    const auto t0 = Clock::now();
    inductive::sinkhorn_log(pr, o, out);
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    total += ms.back();
  }
  const double cpu = (cpu_ms_now() - cpu0) / static_cast<double>(ms.size());
  std::sort(ms.begin(), ms.end());
  const size_t m = ms.size() / 2;
  return {ms.size() % 2 ? ms[m] : 0.5 * (ms[m - 1] + ms[m]), ms.front(), cpu};
}

int max_threads() {
#if defined(_OPENMP)
  return omp_get_num_procs();
#else
  return 1;
#endif
}

void set_threads(int t) {
#if defined(_OPENMP)
  omp_set_num_threads(t);
#else
  (void)t;
#endif
}

int run(const Config& c) {
  const Batch b = make_batch(c);
  if (!c.dump.empty()) {
    inductive::save_npy(c.dump + "/cost.npy", b.cost.data(), {c.batch, c.n_max, c.p});
    std::vector<float> meta{static_cast<float>(c.eps)};
    inductive::save_npy(c.dump + "/eps.npy", meta.data(), {1});
    inductive::write_file_atomic(c.dump + "/n.npy", inductive::npy_bytes(b.n.data(), {c.batch}));
  }
  // A pinned set the CPU lacks falls back to the best one; report that instead of mislabelled numbers.
  const char* kernels = inductive::sinkhorn_kernel_name();
  if (const char* want = std::getenv("INDUCTIVE_SIMD"); want && std::strcmp(want, kernels) != 0) {
    std::printf("{\"skip\": \"kernel set %s is not available in this build or on this CPU\"}\n", want);
    return 0;
  }
  std::vector<float> plan(b.cost.size());
  for (int t : c.threads) {
    if (t > max_threads()) {
      std::printf("{\"skip\": \"%d threads requested, %d cores available\"}\n", t, max_threads());
      continue;
    }
    set_threads(t);
    for (int iters : c.iters) {
      const Timing ms = time_solve(c, b, iters, plan);
      std::printf(
          "{\"impl\": \"inductive\", \"dtype\": \"float32\", \"simd\": \"%s\", \"threads\": %d, "
          "\"iters\": %d, \"batch\": %d, \"ms_per_batch\": %.3f, \"ms_min\": %.3f, \"cpu_ms\": %.3f, "
          "\"problems_per_s\": %.1f}\n",
          kernels, t, iters, c.batch, ms.median_ms, ms.min_ms, ms.cpu_ms, c.batch / (ms.median_ms * 1e-3));
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Config c;
  CLI::App app{"Times inductive's batched log-domain Sinkhorn; one JSON line per configuration on stdout"};
  const auto count = CLI::Range(1, 1 << 30);
  app.add_option("--batch", c.batch, "Problems per batch")->capture_default_str()->check(count);
  app.add_option("--n-min", c.n_min, "Shortest set (rows)")->capture_default_str()->check(count);
  app.add_option("--n-max", c.n_max, "Longest set = padded rows")->capture_default_str()->check(count);
  app.add_option("--p", c.p, "Reference size (columns)")->capture_default_str()->check(count);
  app.add_option("--eps", c.eps, "Entropic regularisation (> 0)")->capture_default_str();
  app.add_option("--seed", c.seed, "Seed of the problem generator")->capture_default_str();
  app.add_option("--iters", c.iters, "Iteration counts to time")->delimiter(',')->capture_default_str()->check(count);
  app.add_option("--threads", c.threads, "Thread counts to time")->delimiter(',')->capture_default_str()->check(count);
  app.add_option("--min-time", c.min_time_s, "Seconds to measure per configuration")->capture_default_str();
  app.add_option("--min-repeats", c.min_repeats, "Runs per configuration, at least")
      ->capture_default_str()
      ->check(count);
  app.add_option("--dump", c.dump, "Write the batch as cost.npy [batch, n_max, p], n.npy, eps.npy into this folder");
  app.set_version_flag("--version", inductive::producer());
  CLI11_PARSE(app, argc, argv);
  if (c.n_min > c.n_max) {
    std::fprintf(stderr, "error: --n-min %d > --n-max %d\n", c.n_min, c.n_max);
    return 2;
  }
  try {
    return run(c);  // a bad --eps is refused by the library itself (Error: "sinkhorn: eps must be ...")
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}
