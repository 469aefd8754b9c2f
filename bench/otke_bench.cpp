// bench/otke_bench.cpp - OTKE embedding throughput (sequences/s) and training-step memory, the reference
// configuration: batch 64, local features already embedded to k = 128 or 512 (identity embedding), n uniform in
// [200, 1000] with masks, p = 64 or 10, q = 1, eps 0.5, 10 Sinkhorn iterations; inference (embed) and one
// training step (forward + backward through Sinkhorn + Adam on references and head); 1 and 2 threads.
// Baseline measured in the same run: mean pooling of the same features (the cheapest pooling there is), so the
// ratio says what optimal transport costs on top of reading the data. The PyTorch baseline of the same workload,
// measured in the same run, is bench/otke_vs_torch.py; `--roofline` prints the work per sequence and the fraction
// of the 1-thread GEMM peak achieved.
//
// Peak memory of a training step: VmHWM after resetting it through /proc/self/clear_refs, minus VmRSS before, with
// the allocator's free memory handed back first (malloc_trim), so that a step's buffers count as new memory instead
// of reusing pages an earlier step left resident.
// A second table trains at k = 512, p = 64 with 10 to 400 Sinkhorn iterations and both gradients (unrolled,
// implicit): the issue asks that a step's memory not grow with the iterations.
#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "bench_args.h"
#include "bench_memory.h"
#include "bench_peak.h"
#include "bench_timing.h"
#include "inductive/heap.h"
#include "inductive/otke_train.h"
#include "inductive/sinkhorn.h"
#include "simd/small_gemm.h"

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace {

using namespace inductive;

SetBatch make_features(int batch, int k, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> len(200, 1000);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  SetBatch x(batch, 1000, k);
  for (int b = 0; b < batch; ++b) {
    x.n[b] = len(rng);
    for (int i = 0; i < x.n[b]; ++i) {
      float* r = x.row(b, i);
      float norm = 0;
      for (int c = 0; c < k; ++c) {
        r[c] = nd(rng);
        norm += r[c] * r[c];
      }
      for (int c = 0; c < k; ++c) r[c] /= std::sqrt(norm);  // like Nystrom features: bounded similarities
    }
  }
  return x;
}

OtkeModel make_model(int k, int p, const std::string& pooling, int q = 1) {
  OtkeModel m;
  m.config.input_type = OtkeInput::kVectors;
  m.config.input_dim = k;
  m.config.embedding = OtkeEmbedding::kIdentity;
  m.config.pooling = parse_enum(kOtkePoolings, pooling, "pooling");
  m.config.otk.p = p;
  m.config.otk.q = q;
  m.config.otk.eps = 0.5;
  m.config.otk.iters = 10;
  m.config.classes = 2;
  std::mt19937_64 rng(7);
  std::normal_distribution<float> nd(0.0f, 1.0f / std::sqrt(static_cast<float>(k)));
  if (pooling == "otk") {
    std::vector<MatF> refs;
    for (int r = 0; r < q; ++r) {
      MatF z(p, k);
      for (Eigen::Index i = 0; i < z.size(); ++i) z.data()[i] = nd(rng);
      refs.push_back(std::move(z));
    }
    m.pooling = OtkPooling(refs, m.config.otk);
  }
  m.head.weight = MatF::Zero(2, m.config.output_dim());
  m.head.bias = VecF::Zero(2);
  return m;
}

double median_seconds(const std::function<void()>& body, double min_time = 1.0, int min_repeats = 3) {
  return bench::median_seconds_within(min_time, body, min_repeats);
}

// --unfused: training steps run the batch's forward, then its backward (OtkeLossOptions::fuse_sets off).
bool g_unfused = false;

void train_step(OtkeModel& m, const SetBatch& x, const std::vector<int32_t>& y, Adam& adam,
                SinkhornGradient gradient = SinkhornGradient::kUnrolled) {
  OtkeGradients g;
  OtkeLossOptions lo;
  lo.sinkhorn_gradient = gradient;
  lo.fuse_sets = !g_unfused;
  otke_loss(m, x, y, &g, lo);
  std::vector<MatF> refs = m.pooling.references();
  std::vector<ParamBlock> blocks = {
      {"head.weight", m.head.weight.data(), g.head_weight.data(), m.head.weight.size(), true},
      {"head.bias", m.head.bias.data(), g.head_bias.data(), m.head.bias.size(), false}};
  if (!refs.empty()) blocks.push_back({"refs", refs[0].data(), g.references[0].data(), refs[0].size(), false});
  adam.step(blocks);
  if (!refs.empty()) m.pooling.set_references(std::move(refs));
}

}  // namespace

// MB above the resident set before the step (see the file comment).
template <typename F>
long peak_mb_of(F&& step) {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
  bench::reset_peak_rss();
  const long before = bench::proc_status_kb("VmRSS:");
  step();
  const long hwm = bench::proc_status_kb("VmHWM:");
  return before > 0 && hwm > 0 ? (hwm - before) / 1024 : -1;
}

void memory_vs_iterations() {
#if defined(_OPENMP)
  omp_set_num_threads(1);
#endif
  std::printf("\ntraining step, k512 p64, 1 thread: time and peak memory vs Sinkhorn iterations\n");
  std::printf("%-6s %-9s %12s %14s\n", "iters", "gradient", "train seq/s", "train peak MB");
  const SetBatch x = make_features(64, 512, 11);
  std::vector<int32_t> y(x.batch);
  for (int b = 0; b < x.batch; ++b) y[b] = b % 2;
  for (int iters : {10, 100, 400})
    for (SinkhornGradient grad : {SinkhornGradient::kUnrolled, SinkhornGradient::kImplicit}) {
      OtkeModel m = make_model(512, 64, "otk");
      m.config.otk.iters = iters;
      m.pooling = OtkPooling(m.pooling.references(), m.config.otk);
      Adam adam({1e-3});
      const double t = median_seconds([&] { train_step(m, x, y, adam, grad); }, 0.5, 2);
      const long mb = peak_mb_of([&] { train_step(m, x, y, adam, grad); });
      std::printf("%-6d %-9s %12.0f %14ld\n", iters, sinkhorn_gradient_name(grad), 64 / t, mb);
    }
}

// Where the inference time goes: the steps of OtkPooling::forward timed one by one on the same batch, 1 thread. The
// model runs them set by set, so that P^T x finds each set's features in cache after x z^T: where the steps over the
// whole batch take longer than the model, the line says how much the model saves that way.
void time_breakdown(int k, int p) {
#if defined(_OPENMP)
  omp_set_num_threads(1);
#endif
  const SetBatch x = make_features(64, k, 11);
  const OtkeModel m = make_model(k, p, "otk");
  const MatF& z = m.pooling.references()[0];
  const int B = x.batch, N = x.n_max;
  std::vector<float> sim(static_cast<size_t>(B) * N * p), plan(sim.size());
  MatF out(B, p * k);
  // The same products as OtkPooling::forward (simd/small_gemm.h): x z^T as broadcasts over z^T when p is a multiple
  // of the vector width, else as dot products.
  const MatF zt = z.transpose();
  auto similarities = [&] {
    for (int b = 0; b < B; ++b) {
      float* s = sim.data() + static_cast<int64_t>(b) * N * p;
      if (p % simd::vector_floats() == 0)
        simd::gemm_ab(x.row(b, 0), k, zt.data(), p, s, p, x.n[b], p, k);
      else
        simd::gemm_abt(x.row(b, 0), k, z.data(), k, s, p, x.n[b], p, k);
    }
  };
  SinkhornOptions so;
  so.eps = 0.5;
  so.max_iter = 10;
  so.similarity = true;
  const SinkhornProblem<float> pr{sim.data(), B, N, p, x.n.data(), nullptr, nullptr, nullptr};
  auto sinkhorn = [&] { sinkhorn_log(pr, so, SinkhornOutput<float>{plan.data()}); };
  auto weighted_sum = [&] {
    for (int b = 0; b < B; ++b)
      simd::gemm_atb(plan.data() + static_cast<int64_t>(b) * N * p, p, x.row(b, 0), k, out.row(b).data(), k, p, k,
                     x.n[b], 1.0f);
  };
  similarities();
  const double t_sim = median_seconds(similarities, 0.3);
  const double t_sink = median_seconds(sinkhorn, 0.3);
  const double t_sum = median_seconds(weighted_sum, 0.3);
  const double t_all = median_seconds([&] { m.embed(x); }, 0.3);
  const double parts = t_sim + t_sink + t_sum;
  std::printf(
      "k%-3d p%-3d %8.1f ms: similarities x z^T %4.1f%%, Sinkhorn (10 it.) %4.1f%%, "
      "P^T x %4.1f%%, %s %4.1f%%\n",
      k, p, 1e3 * t_all, 100 * t_sim / t_all, 100 * t_sink / t_all, 100 * t_sum / t_all,
      t_all >= parts ? "rest" : "saved by going set by set", 100 * std::abs(t_all - parts) / t_all);
}

// The roofline table, 1 thread, q 1: the work per sequence of n rows from the model's products, and the fraction
// of the GEMM peak the measured throughput achieves. Inference: the similarities x z^T and the transport P^T x
// (2 n p k each) and 10 scaling-domain Sinkhorn iterations (two n x p matrix-vector products each: 4 n p), with
// n p exps. A training step: the forward's products, and the backward's: dL/dz = dC^T x and dL/dP = dPhi x^T (2 n p
// k each); and Sinkhorn, in the scaling domain for every p since 2026-12-07 (narrow problems, p <= 32, on E
// transposed; before, they trained in the log domain: 20 n p exps and 8 n p k + 120 n p FLOPs): n p exps and 10
// iterations of two matrix-vector products forward (40 n p FLOPs), E again and per iteration a row pass and a column
// pass of ~3 and ~4 multiply-adds per entry backward (~140 n p); 2 n p exps, 8 n p k + 180 n p FLOPs.
void roofline_table() {
#if defined(_OPENMP)
  omp_set_num_threads(1);
#endif
  const bench::GemmPeak gemm = bench::gemm_peak_gflops();
  const double peak = gemm.best();
  std::printf(
      "OTKE roofline, 1 thread, batch 64, n ~ U[200, 1000], eps 0.5, 10 iterations. Peak: the faster of two "
      "float32 GEMMs measured now, Eigen's 1024^3 (%.1f GFLOP/s) and the library's kernel on a cache-resident product "
      "(%.1f GFLOP/s); the core's FMA limit %.1f GFLOP/s (independent multiply-adds in registers)\n\n| config | "
      "MFLOP/seq infer | exps/seq infer | infer seq/s | infer "
      "GFLOP/s | of peak | MFLOP/seq train | exps/seq train | train seq/s | train GFLOP/s | of peak |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|\n",
      gemm.eigen, gemm.kernel, gemm.fma);
  for (const auto& [k, p] : std::vector<std::pair<int, int>>{{128, 64}, {512, 64}, {128, 10}, {512, 10}}) {
    const SetBatch x = make_features(64, k, 11);
    std::vector<int32_t> y(x.batch);
    for (int b = 0; b < x.batch; ++b) y[b] = b % 2;
    double n = 0;
    for (int b = 0; b < 64; ++b) n += x.n[b];
    n /= 64;  // every count is linear in n
    const double f_inf = 4.0 * n * p * k + 40.0 * n * p, e_inf = n * p;
    const double f_train = 8.0 * n * p * k + 180.0 * n * p, e_train = 2.0 * n * p;
    OtkeModel m = make_model(k, p, "otk");
    const double t_inf = median_seconds([&] { m.embed(x); });
    Adam adam({1e-3});
    const double t_train = median_seconds([&] { train_step(m, x, y, adam); });
    const double g_inf = f_inf * 64 / t_inf / 1e9, g_train = f_train * 64 / t_train / 1e9;
    std::printf("| k%d p%d | %.1f | %.0f | %.0f | %.1f | %.0f %% | %.1f | %.0f | %.0f | %.1f | %.0f %% |\n", k, p,
                f_inf / 1e6, e_inf, 64 / t_inf, g_inf, 100 * g_inf / peak, f_train / 1e6, e_train, 64 / t_train,
                g_train, 100 * g_train / peak);
    std::fflush(stdout);
  }
}

// The library's products (simd/small_gemm.h) against Eigen's GEMM on the shapes the models multiply, 1 thread:
// GFLOP/s of each, the same operands, medians. `form`: A B (rows of A times a small B), A B^T as dot products, A^T B
// (a sum over the long operand's rows).
void products_table() {
#if defined(_OPENMP)
  omp_set_num_threads(1);
#endif
  struct Shape {
    const char* what;
    char form;  // 'b': A B, 't': A B^T, 'a': A^T B
    int m, k, n;
  };
  const Shape shapes[] = {
      {"GraphiT (b) Linear x W^T, 3000 nodes, d 64", 'b', 3000, 64, 64},
      {"GraphiT (b) feed-forward in, d 64 -> 128", 'b', 3000, 64, 128},
      {"GraphiT (b) feed-forward out, 128 -> 64", 'b', 3000, 128, 64},
      {"GraphiT weight gradient dY^T X, 384 rows, 64 x 64", 'a', 384, 64, 64},
      {"OTK similarities x z^T, n 600, k 512, p 64", 'b', 600, 512, 64},
      {"OTK similarities x z^T, n 600, k 512, p 10", 't', 600, 512, 10},
      {"OTK transport P^T x (and dC^T x), n 600, p 64, k 512", 'a', 600, 64, 512},
      {"OTK transport P^T x, n 600, p 10, k 512", 'a', 600, 10, 512},
      {"Nystrom x W^T, 141 k-mers, 40 -> 64 anchors", 'b', 141, 40, 64},
  };
  std::printf(
      "the library's products against Eigen's GEMM, 1 thread, GFLOP/s\n\n| product | form | Eigen | kernel | kernel / "
      "Eigen |\n|---|---|---|---|---|\n");
  for (const Shape& sh : shapes) {
    // A B: a m x k, b k x n. A B^T: b n x k. A^T B: a k x m... here the sum runs over m rows: a m x k, b m x n.
    const bool sum_over_rows = sh.form == 'a';
    MatF a = MatF::Random(sh.m, sh.k);
    MatF b = sum_over_rows    ? MatF::Random(sh.m, sh.n)
             : sh.form == 't' ? MatF::Random(sh.n, sh.k)
                              : MatF::Random(sh.k, sh.n);
    MatF c1 = sum_over_rows ? MatF(sh.k, sh.n) : MatF(sh.m, sh.n), c2 = c1;
    const int reps = std::max(1, static_cast<int>(2e7 / (2.0 * sh.m * sh.k * sh.n)));
    auto eigen = [&] {
      for (int r = 0; r < reps; ++r) {
        if (sh.form == 'b')
          c1.noalias() = a * b;
        else if (sh.form == 't')
          c1.noalias() = a * b.transpose();
        else
          c1.noalias() = a.transpose() * b;
      }
    };
    auto kernel = [&] {
      for (int r = 0; r < reps; ++r) {
        if (sh.form == 'b')
          simd::gemm_ab(a.data(), sh.k, b.data(), sh.n, c2.data(), sh.n, sh.m, sh.n, sh.k);
        else if (sh.form == 't')
          simd::gemm_abt(a.data(), sh.k, b.data(), sh.k, c2.data(), sh.n, sh.m, sh.n, sh.k);
        else
          simd::gemm_atb(a.data(), sh.k, b.data(), sh.n, c2.data(), sh.n, sh.k, sh.n, sh.m, 1.0f);
      }
    };
    // Alternated, three medians each, so that both see the same load.
    std::vector<double> te, tk;
    for (int round = 0; round < 3; ++round) {
      te.push_back(median_seconds(eigen, 0.2));
      tk.push_back(median_seconds(kernel, 0.2));
    }
    std::sort(te.begin(), te.end());
    std::sort(tk.begin(), tk.end());
    const double flops = 2.0 * sh.m * sh.k * sh.n * reps;
    const double worst = (c1 - c2).cwiseAbs().maxCoeff() / std::max(1.0f, c1.cwiseAbs().maxCoeff());
    if (!(worst < 1e-5)) {
      std::fprintf(stderr, "error: products: the kernel and Eigen differ by %g (relative) on '%s'\n", worst, sh.what);
      std::exit(1);
    }
    std::printf("| %s | %s | %.1f | %.1f | %.2fx |\n", sh.what,
                sh.form == 'b'   ? "A B"
                : sh.form == 't' ? "A B^T"
                                 : "A^T B",
                flops / te[1] / 1e9, flops / tk[1] / 1e9, te[1] / tk[1]);
    std::fflush(stdout);
  }
}

int main(int argc, char** argv) {
  bool memory_only = false, breakdown_only = false, roofline_only = false, products_only = false;
  std::string only, phase;
  inductive::bench::BenchArgs args("otke_bench",
                                   "OTKE inference and training throughput (seq/s), time breakdown and memory");
  args.flag("--memory", "only the table of training memory vs Sinkhorn iterations", &memory_only);
  args.flag("--breakdown", "only the time breakdown of inference", &breakdown_only);
  args.flag("--roofline", "only the roofline table (1 thread): FLOPs and exps per sequence, GFLOP/s, % of GEMM peak",
            &roofline_only);
  args.flag("--products", "only the table of the library's products against Eigen's GEMM (1 thread, GFLOP/s)",
            &products_only);
  args.flag("--unfused",
            "training steps pool the whole batch, then differentiate it (not each set in one pass), for comparisons",
            &g_unfused);
  args.option("--config", "NAME",
              "only this configuration of the first table: k128p64, k512p64, k128p10, k512p10, k128p10q4, k512p64q4",
              &only);
  args.option("--phase", "inference|training",
              "time only this one of the first table, OTK alone (the other columns print -), e.g. to profile it",
              &phase);
  if (const int rc = args.parse(argc, argv); rc >= 0) return rc;
  if (!phase.empty() && phase != "inference" && phase != "training") {
    std::fprintf(stderr, "error: --phase: expected inference or training, got '%s'\n", phase.c_str());
    return 2;
  }
  const bool time_inference = phase != "training", time_training = phase != "inference", mean_too = phase.empty();
  if (!only.empty() && only != "k128p64" && only != "k512p64" && only != "k128p10" && only != "k512p10" &&
      only != "k128p10q4" && only != "k512p64q4") {
    std::fprintf(stderr,
                 "error: --config: unknown configuration '%s' (k128p64, k512p64, k128p10, k512p10, k128p10q4, "
                 "k512p64q4)\n",
                 only.c_str());
    return 2;
  }
  const std::string arg = memory_only ? "--memory" : breakdown_only ? "--breakdown" : "";
  // The allocator as the CLI sets it (core/include/inductive/heap.h): without it every call maps, faults in and
  // unmaps its batch-sized buffers, which cost the 1-thread rows a third of their speed.
  inductive::keep_batch_buffers_in_heap();
  std::printf("inductive OTKE benchmark, Sinkhorn kernels: %s\n", sinkhorn_kernel_name());
  std::printf(
      "batch 64, n ~ U[200, 1000] (masked), q 1 (q 4 where named), eps 0.5, 10 iterations; seq/s = sequences per "
      "second\n\n");
  // The configurations: q 1, and q 4 (four references, thesis ch. 2) where named.
  struct Ref {
    int k, p;
    int q = 1;
  };
  const Ref refs[] = {{128, 64}, {512, 64}, {128, 10}, {512, 10}, {128, 10, 4}, {512, 64, 4}};
  if (roofline_only) {
    roofline_table();
    return 0;
  }
  if (products_only) {
    products_table();
    return 0;
  }
  std::printf("%-12s %-3s %12s %12s %12s %12s %14s\n", "config", "thr", "infer seq/s", "vs mean-pool", "train seq/s",
              "vs mean-pool", "train peak MB");
  for (const Ref& r : refs) {
    if (memory_only || arg == "--breakdown") break;
    const std::string config =
        "k" + std::to_string(r.k) + "p" + std::to_string(r.p) + (r.q > 1 ? "q" + std::to_string(r.q) : "");
    if (!only.empty() && only != config) continue;
    const SetBatch x = make_features(64, r.k, 11);
    std::vector<int32_t> y(x.batch);
    for (int b = 0; b < x.batch; ++b) y[b] = b % 2;
    for (int threads : {1, 2}) {
#if defined(_OPENMP)
      omp_set_num_threads(threads);
#else
      if (threads > 1) continue;
#endif
      const OtkeModel otk = make_model(r.k, r.p, "otk", r.q);
      const OtkeModel mean = make_model(r.k, r.p, "mean");
      const double t_inf = time_inference ? median_seconds([&] { otk.embed(x); }) : 0;
      const double t_inf_mean = time_inference && mean_too ? median_seconds([&] { mean.embed(x); }) : 0;
      OtkeModel otk_train = otk, mean_train = mean;
      Adam adam({1e-3}), adam_mean({1e-3});
      const double t_train = time_training ? median_seconds([&] { train_step(otk_train, x, y, adam); }) : 0;
      const double t_train_mean =
          time_training && mean_too ? median_seconds([&] { train_step(mean_train, x, y, adam_mean); }) : 0;
      // Peak memory of one more training step above what the data and model already hold.
      const long peak_mb = time_training && mean_too ? peak_mb_of([&] { train_step(otk_train, x, y, adam); }) : 0;
      char name[32];
      if (r.q > 1)
        std::snprintf(name, sizeof name, "k%d p%d q%d", r.k, r.p, r.q);
      else
        std::snprintf(name, sizeof name, "k%d p%d", r.k, r.p);
      // A column not measured (--phase) prints '-'.
      auto cell = [](double v, const char* fmt) {
        char b[32] = "-";
        if (v > 0) std::snprintf(b, sizeof b, fmt, v);
        return std::string(b);
      };
      std::printf("%-12s %-3d %12s %12s %12s %12s %14s\n", name, threads,
                  cell(t_inf > 0 ? x.batch / t_inf : 0, "%.0f").c_str(),
                  cell(t_inf_mean > 0 ? t_inf_mean / t_inf : 0, "%.2fx").c_str(),
                  cell(t_train > 0 ? x.batch / t_train : 0, "%.0f").c_str(),
                  cell(t_train_mean > 0 ? t_train_mean / t_train : 0, "%.2fx").c_str(),
                  cell(static_cast<double>(peak_mb), "%.0f").c_str());
    }
  }
  std::printf(
      "\n'vs mean-pool' = time of mean pooling / time of OTKE on the same batch (same run): < 1 means OTKE is\n"
      "slower by that factor. PyTorch on the same workload, measured now: bench/otke_vs_torch.py\n");
  if (arg == "--breakdown" || (only.empty() && phase.empty())) {
    std::printf("\nwhere the inference time goes (one batch of 64, 1 thread)\n");
    for (const Ref& r : refs)
      if (r.q == 1) time_breakdown(r.k, r.p);
    if (arg != "--breakdown") memory_vs_iterations();
  }
  return 0;
}
