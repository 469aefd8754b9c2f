// bench/graphit_workload.h - the GraphiT benchmark workloads, defined once for every bench that runs them:
// bench/graphit_bench.cpp (CPU threads), bench/gpu/gpu_bench.cpp (the CUDA backend) and, through --export, the
// PyTorch baseline bench/torch_graphit.py (CPU or CUDA).
//   (a) 3 layers, 4 heads, d 64, diffusion kernel, LayerNorm, batches of 32 molecule-like graphs of 18-28 nodes, 7
//       node labels, 2-class cross-entropy (the TU datasets' setting);
//   (b) the reference's ZINC model: 10 layers, 8 heads, d 64, diffusion kernel, BatchNorm, batches of 128 graphs of
//       9-37 nodes (ZINC's range; mean 23) with 28 node types, one regression target, L1 loss.
// Graphs are random molecule-like: a random tree (max degree 4) plus a few ring-closing edges; seeded, so every
// bench and every run sees the same graphs.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "inductive/atomic_file.h"
#include "inductive/graph_kernels.h"
#include "inductive/graphit.h"
#include "inductive/graphit_train.h"
#include "inductive/npy.h"

namespace inductive::bench {

// Atom-type frequencies, carbon first: MUTAG's 7 types for (a); for (b) ZINC's 28, of which C, N, O, F, S, Cl
// make up all but a few percent.
inline const std::vector<double> kMutagAtoms = {70, 12, 12, 2, 1, 2, 1};
inline std::vector<double> zinc_atoms() {
  std::vector<double> w = {72, 12, 10, 1.4, 1.6, 0.8};
  w.resize(28, 0.1);
  return w;
}

inline Graph molecule_like(std::mt19937_64& rng, int n, const std::vector<double>& atom_weights) {
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

inline constexpr int kBatches = 8;

inline GraphitConfig model_config(const Setup& s, bool kernel) {
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

inline Workload make_workload(const Setup& s) {
  std::mt19937_64 rng(42);
  Workload w;
  std::vector<Graph> graphs;
  for (int i = 0; i < s.batch * kBatches; ++i)
    graphs.push_back(molecule_like(rng, std::uniform_int_distribution<int>(s.n_lo, s.n_hi)(rng), s.atoms));
  GraphKernelOptions ko;  // diffusion, beta 1
  w.inputs.resize(graphs.size());
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < graphs.size(); ++i) w.inputs[i].kernel = graph_kernel(graph_spectrum(graphs[i]), ko);
  w.precompute_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / graphs.size();
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
inline void export_workload(const Setup& s, const Workload& w, const std::string& dir) {
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

inline Setup graphit_setup_a() {
  return Setup{"a",
               "(a) 3 layers, 4 heads, d 64, LayerNorm, CE, batch 32, 18-28 nodes",
               3,
               4,
               32,
               18,
               28,
               kMutagAtoms,
               GraphitNorm::kLayer,
               GraphitTask::kClassification};
}

inline Setup graphit_setup_b() {
  return Setup{"b",
               "(b) 10 layers, 8 heads, d 64, BatchNorm, L1, batch 128, 9-37 nodes",
               10,
               8,
               128,
               9,
               37,
               zinc_atoms(),
               GraphitNorm::kBatch,
               GraphitTask::kRegression};
}

// The workload's graphs as a training set (GraphitDataset: the steppers' input), targets as the setup's task says.
inline GraphitDataset workload_dataset(const Workload& w) { return {w.inputs, w.classes, w.values}; }

}  // namespace inductive::bench
