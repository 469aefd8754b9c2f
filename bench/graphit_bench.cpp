// bench/graphit_bench.cpp - GraphiT throughput (graphs/s) in the two configurations:
//   (a) 3 layers, 4 heads, d 64, diffusion kernel, LayerNorm, batches of 32 molecule-like graphs of 18-28 nodes, 7
//       node labels, 2-class cross-entropy (the TU datasets' setting);
//   (b) the reference's ZINC model: 10 layers, 8 heads, d 64, diffusion kernel, BatchNorm, batches of 128 graphs of
//       9-37 nodes (ZINC's range; mean 23) with 28 node types, one regression target, L1 loss.
// 1 and 2 threads; inference (evaluation-mode forward) and one training step (forward + exact backward + Adam, no
// weight decay), plus the per-graph precomputation (one eigendecomposition -> diffusion kernel). Graphs are random
// molecule-like: a random tree (max degree 4) plus a few ring-closing edges. Baseline in the same run: the plain
// transformer (no kernel), so the ratio says what the kernel modulation costs. The PyTorch baseline of the same
// workload is bench/graphit_vs_torch.py, which reads the graphs this program writes with --export DIR.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <random>
#include <cmath>
#include <string>
#include <vector>

#include "bench_args.h"
#include "bench_peak.h"
#include "bench_timing.h"
#include "graphit_workload.h"
#include "inductive/adam.h"
#include "inductive/atomic_file.h"
#include "inductive/graph_kernels.h"
#include "inductive/graphit.h"
#include "inductive/heap.h"
#include "inductive/npy.h"
#include "inductive/version.h"

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace {

using namespace inductive;
using namespace inductive::bench;
using Clock = std::chrono::steady_clock;
using bench::median_seconds_within;

struct Throughput {
  double inference, train;  // graphs/s; 0 when not measured (--phase)
};

// Which of the two timings to take (--phase): both by default, one of them to profile it alone.
bool g_time_inference = true, g_time_training = true;

Throughput measure(const Setup& s, const Workload& w, bool kernel, int threads) {
#if defined(_OPENMP)
  omp_set_num_threads(threads);
#endif
  const GraphitConfig c = model_config(s, kernel);
  GraphitModel model = GraphitModel::create(c, 1);
  std::vector<GraphitBatch> batches;
  for (int b = 0; b < kBatches; ++b) {
    std::vector<int> index;
    for (int i = 0; i < s.batch; ++i) index.push_back(b * s.batch + i);
    const bool classes = c.classification();
    batches.push_back(
        GraphitBatch::pack(c, w.inputs, index, classes ? &w.classes : nullptr, classes ? nullptr : &w.values));
  }

  int next = 0;
  GraphitCache cache;
  // Inference as GraphitModel::predict runs it: outputs only, no layer's activations kept.
  GraphitRunOptions inference;
  inference.keep_layers = false;
  const double t_inf =
      g_time_inference
          ? median_seconds_within(2.0, [&] { model.forward(batches[next++ % kBatches], inference, &cache); })
          : 0;
  GraphitParams grads = GraphitParams::zeros(c);
  Adam adam(AdamOptions{1e-3, 0.9, 0.999, 1e-8, 0});
  auto pv = model.params.tensors(c);
  auto gv = grads.tensors(c);
  std::vector<ParamBlock> blocks;
  for (size_t t = 0; t < pv.size(); ++t) blocks.push_back({pv[t].name, pv[t].data, gv[t].data, pv[t].size(), true});
  GraphitRunOptions train;
  train.training = true;
  const double t_train =
      g_time_training ? median_seconds_within(3.0,
                                              [&] {
                                                grads.set_zero();
                                                model.loss(batches[next++ % kBatches], train, &grads, nullptr, &cache);
                                                adam.step(blocks);
                                              })
                      : 0;
  return {t_inf > 0 ? s.batch / t_inf : 0, t_train > 0 ? s.batch / t_train : 0};
}

void run(const Setup& s, const Workload& w, bool kernel, int threads) {
  const Throughput t = measure(s, w, kernel, threads);
  const auto rate = [](double v) {
    return v > 0 ? std::to_string(static_cast<long>(std::lround(v))) : std::string("-");
  };
  std::printf("| %s | %d | %s | %s | %s | %.3f ms |\n", s.name, threads,
              kernel ? "GraphiT (diffusion)" : "transformer (T)", rate(t.inference).c_str(), rate(t.train).c_str(),
              1e3 * w.precompute_seconds);
  std::fflush(stdout);
}

// The roofline row of a setup, 1 thread: the work per graph from the model's products, and what fraction of the
// GEMM peak the measured throughput achieves. Per layer and graph of n nodes, the forward pass multiplies
// 3 (Q, V, out) n x d x d, 2 feed-forward n x d x ffn, and per head S = Q Q^T and A V (n x n x dh each, 2 n^2 d over
// the heads): 6 n d^2 + 4 n d ffn + 4 n^2 d FLOPs, and takes H n^2 exps. A training step adds the backward pass,
// where each product becomes two of the same size (the node types are indices: no input gradient), so 3x the
// forward's FLOPs; the element-wise work (norms, ReLU, softmax) is not counted.
void roofline(const Setup& s, const Workload& w, double peak) {
  const GraphitConfig c = model_config(s, true);
  double flops = 0, exps = 0;
  for (const GraphitGraph& g : w.inputs) {
    const double n = g.num_nodes, d = c.d;
    flops += c.layers * (6 * n * d * d + 4 * n * d * c.ffn + 4 * n * n * d);
    exps += c.layers * c.heads * n * n;
  }
  flops /= w.inputs.size();
  exps /= w.inputs.size();
  const Throughput t = measure(s, w, true, 1);
  const double inf = flops * t.inference / 1e9, train = 3 * flops * t.train / 1e9;
  std::printf("| %s | %.2f | %.0f | %.0f | %.1f | %.0f %% | %.0f | %.1f | %.0f %% |\n", s.name, flops / 1e6, exps,
              t.inference, inf, 100 * inf / peak, t.train, train, 100 * train / peak);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::string config_arg, threads_arg, export_dir, phase_arg;
  bool kernel_only = false, roofline_only = false;
  inductive::bench::BenchArgs args("graphit_bench", "GraphiT inference and training throughput (graphs/s)");
  args.option("--config", "a|b", "only configuration (a) or (b)", &config_arg);
  args.option("--threads", "LIST", "thread counts, comma-separated (default 1,2)", &threads_arg);
  args.flag("--kernel-only", "skip the plain-transformer baseline rows", &kernel_only);
  args.option("--phase", "inference|training", "time only this one (the other column prints -), e.g. to profile it",
              &phase_arg);
  args.flag("--roofline", "only the roofline table (1 thread): FLOPs and exps per graph, GFLOP/s, % of GEMM peak",
            &roofline_only);
  args.option("--export", "DIR", "write the workloads (graphs, kernels, targets, config) to DIR/a, DIR/b and exit",
              &export_dir);
  if (const int rc = args.parse(argc, argv); rc >= 0) return rc;
  if (!config_arg.empty() && config_arg != "a" && config_arg != "b") {
    std::fprintf(stderr, "error: --config: expected a or b, got '%s'\n", config_arg.c_str());
    return 2;
  }
  if (!phase_arg.empty() && phase_arg != "inference" && phase_arg != "training") {
    std::fprintf(stderr, "error: --phase: expected inference or training, got '%s'\n", phase_arg.c_str());
    return 2;
  }
  g_time_inference = roofline_only || phase_arg != "training";  // the roofline needs both
  g_time_training = roofline_only || phase_arg != "inference";
  std::vector<int> requested_threads = {1, 2};
  if (!threads_arg.empty() &&
      !inductive::bench::BenchArgs::int_list("--threads", threads_arg, 1, 256, &requested_threads))
    return 2;
  const Setup a = graphit_setup_a(), b = graphit_setup_b();
  std::vector<const Setup*> setups;
  for (const Setup* s : {&a, &b})
    if (config_arg.empty() || config_arg == s->key) setups.push_back(s);

  if (!export_dir.empty()) {
    try {
      for (const Setup* s : setups) export_workload(*s, make_workload(*s), export_dir);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "error: --export %s: %s\n", export_dir.c_str(), e.what());
      return 2;
    }
    return 0;
  }

  inductive::keep_batch_buffers_in_heap();  // as `inductive graphit train` does, so the step is the trainer's
  std::printf("%s\n", producer());
  if (roofline_only) {
#if defined(_OPENMP)
    omp_set_num_threads(1);
#endif
    const bench::GemmPeak gemm = bench::gemm_peak_gflops();
    const double peak = gemm.best();
    std::printf(
        "GraphiT roofline, 1 thread. Peak: the faster of two float32 GEMMs measured now, Eigen's 1024^3 (%.1f "
        "GFLOP/s) and the library's kernel on a cache-resident product (%.1f GFLOP/s); the core's FMA limit %.1f "
        "GFLOP/s (independent multiply-adds in registers). MFLOP per graph "
        "= the forward pass's products (a training step: 3x); exps per graph in the forward pass\n\n"
        "| config | MFLOP/graph | exps/graph | infer graphs/s | infer GFLOP/s | of peak | train graphs/s | train "
        "GFLOP/s | of peak |\n|---|---|---|---|---|---|---|---|---|\n",
        gemm.eigen, gemm.kernel, gemm.fma);
    for (const Setup* s : setups) roofline(*s, make_workload(*s), peak);
    return 0;
  }
  std::printf(
      "GraphiT throughput, graphs/s (median batch time); precomputation = eigendecomposition + diffusion kernel per "
      "graph; threads split the per-graph attention (forward and backward) and the rows of the Linear layers' GEMMs "
      "(>= 256 rows per thread). PyTorch on the same graphs: bench/graphit_vs_torch.py\n\n"
      "| config | threads | model | inference | training step | precompute/graph |\n|---|---|---|---|---|---|\n");
  for (const Setup* s : setups) {
    const Workload w = make_workload(*s);
#if defined(_OPENMP)
    const std::vector<int> thread_counts = requested_threads;
#else
    const std::vector<int> thread_counts = {1};  // the wasm build has no threads
#endif
    for (int threads : thread_counts) {
      run(*s, w, true, threads);
      if (threads == 1 && !kernel_only) run(*s, w, false, threads);
    }
  }
  return 0;
}
