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
using Clock = std::chrono::steady_clock;
using bench::median_seconds_within;
using bench::seconds_since;

// Atom-type frequencies, carbon first: MUTAG's 7 types for (a); for (b) ZINC's 28, of which C, N, O, F, S, Cl
// make up all but a few percent.
const std::vector<double> kMutagAtoms = {70, 12, 12, 2, 1, 2, 1};
std::vector<double> zinc_atoms() {
  std::vector<double> w = {72, 12, 10, 1.4, 1.6, 0.8};
  w.resize(28, 0.1);
  return w;
}

Graph molecule_like(std::mt19937_64& rng, int n, const std::vector<double>& atom_weights) {
  std::vector<std::array<int32_t, 2>> edges;
  std::vector<int> degree(n, 0);
  for (int v = 1; v < n; ++v) {
    int u;
    do u = std::uniform_int_distribution<int>(0, v - 1)(rng);
    while (degree[u] >= 4);
    edges.push_back({u, v});
    ++degree[u];
    ++degree[v];
  }
  for (int r = 0; r < n / 8; ++r) {  // ring closures
    const int u = std::uniform_int_distribution<int>(0, n - 1)(rng),
              v = std::uniform_int_distribution<int>(0, n - 1)(rng);
    if (u != v && degree[u] < 4 && degree[v] < 4) edges.push_back({u, v}), ++degree[u], ++degree[v];
  }
  std::vector<int32_t> labels(n);
  std::discrete_distribution<int> atom(atom_weights.begin(), atom_weights.end());
  for (auto& l : labels) l = atom(rng);
  return Graph::from_edges(n, edges, labels);
}

struct Setup {
  const char* key;
  const char* name;
  int layers, heads, batch, n_lo, n_hi;
  std::vector<double> atoms;
  GraphitNorm norm;
  GraphitTask task;
};

const int kBatches = 8;

GraphitConfig model_config(const Setup& s, bool kernel) {
  GraphitConfig c = GraphitConfig::with_dim(64, s.layers, s.heads);
  c.vocab = static_cast<int>(s.atoms.size());
  c.kernel = kernel;
  c.degree_scaling = kernel;
  c.norm = s.norm;
  c.task = s.task;
  c.outputs = s.task == GraphitTask::kClassification ? 2 : 1;
  return c;
}

// The workload: kBatches batches of graphs, their kernels and targets (the same for every run of a setup).
struct Workload {
  std::vector<GraphitGraph> inputs;
  std::vector<int32_t> classes;
  std::vector<float> values;
  double precompute_seconds = 0;  // per graph
};

Workload make_workload(const Setup& s) {
  std::mt19937_64 rng(42);
  Workload w;
  std::vector<Graph> graphs;
  for (int i = 0; i < s.batch * kBatches; ++i)
    graphs.push_back(molecule_like(rng, std::uniform_int_distribution<int>(s.n_lo, s.n_hi)(rng), s.atoms));
  GraphKernelOptions ko;  // diffusion, beta 1
  w.inputs.resize(graphs.size());
  const auto t0 = Clock::now();
  for (size_t i = 0; i < graphs.size(); ++i) w.inputs[i].kernel = graph_kernel(graph_spectrum(graphs[i]), ko);
  w.precompute_seconds = seconds_since(t0) / graphs.size();
  std::normal_distribution<float> normal;
  for (size_t i = 0; i < graphs.size(); ++i) {
    GraphitGraph& g = w.inputs[i];
    g.num_nodes = graphs[i].n_nodes;
    g.node_labels = graphs[i].node_labels;
    const auto deg = graphs[i].degrees();
    g.degree = VecF(g.num_nodes);
    for (int v = 0; v < g.num_nodes; ++v) g.degree[v] = static_cast<float>(deg[v]);
    w.classes.push_back(static_cast<int32_t>(i % 2));
    w.values.push_back(normal(rng));
  }
  return w;
}

// Writes the workload for bench/torch_graphit.py: DIR/<key>/config.json (the model config as a model file holds
// it, and the batch size), sizes, labels, degree, kernel (the n_g x n_g kernels, concatenated row-major), targets.
void export_workload(const Setup& s, const Workload& w, const std::string& dir) {
  const std::string out = dir + "/" + s.key;
  std::filesystem::create_directories(out);
  std::vector<int32_t> sizes, labels;
  std::vector<float> degree, kernel;
  for (const GraphitGraph& g : w.inputs) {
    sizes.push_back(g.num_nodes);
    labels.insert(labels.end(), g.node_labels.begin(), g.node_labels.end());
    degree.insert(degree.end(), g.degree.data(), g.degree.data() + g.num_nodes);
    for (int i = 0; i < g.num_nodes; ++i)
      for (int j = 0; j < g.num_nodes; ++j) kernel.push_back(g.kernel(i, j));
  }
  const auto n_graphs = static_cast<int64_t>(sizes.size()), n_nodes = static_cast<int64_t>(labels.size());
  const nlohmann::json config = {{"model", model_config(s, true).to_json()}, {"batch", s.batch}, {"name", s.name}};
  const std::string text = config.dump(1);
  std::vector<std::pair<std::string, std::vector<uint8_t>>> files = {
      {out + "/config.json", std::vector<uint8_t>(text.begin(), text.end())},
      {out + "/sizes.npy", npy_bytes(sizes.data(), {n_graphs})},
      {out + "/labels.npy", npy_bytes(labels.data(), {n_nodes})},
      {out + "/degree.npy", npy_bytes(degree.data(), {n_nodes})},
      {out + "/kernel.npy", npy_bytes(kernel.data(), {static_cast<int64_t>(kernel.size())})},
      {out + "/targets.npy", s.task == GraphitTask::kClassification ? npy_bytes(w.classes.data(), {n_graphs})
                                                                    : npy_bytes(w.values.data(), {n_graphs, 1})}};
  write_files_atomic(files);
}

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
  const double t_inf =
      g_time_inference ? median_seconds_within(2.0, [&] { model.forward(batches[next++ % kBatches], {}, &cache); }) : 0;
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
  const Setup a{"a",
                "(a) 3 layers, 4 heads, d 64, LayerNorm, CE, batch 32, 18-28 nodes",
                3,
                4,
                32,
                18,
                28,
                kMutagAtoms,
                GraphitNorm::kLayer,
                GraphitTask::kClassification};
  const Setup b{"b",
                "(b) 10 layers, 8 heads, d 64, BatchNorm, L1, batch 128, 9-37 nodes",
                10,
                8,
                128,
                9,
                37,
                zinc_atoms(),
                GraphitNorm::kBatch,
                GraphitTask::kRegression};
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
        "GFLOP/s) and the library's kernel on a cache-resident product (%.1f GFLOP/s). MFLOP per graph "
        "= the forward pass's products (a training step: 3x); exps per graph in the forward pass\n\n"
        "| config | MFLOP/graph | exps/graph | infer graphs/s | infer GFLOP/s | of peak | train graphs/s | train "
        "GFLOP/s | of peak |\n|---|---|---|---|---|---|---|---|---|\n",
        gemm.eigen, gemm.kernel);
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
