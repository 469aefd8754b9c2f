// inductive_graphit_dump - one GraphiT loss evaluation with its gradients, on inputs written by the PyTorch oracle
// (tests/oracle/test_graphit_torch.py), which re-derives the same numbers from the formulas in inductive/graphit.h.
//
// Usage: inductive_graphit_dump DIR. DIR holds
//   config.json (GraphitConfig JSON), seed (GraphitModel::create's seed), training (0 or 1: BatchNorm batch
//   statistics; the dropout of the config must be 0, since the oracle cannot replay our masks),
//   classes.npy (int32, graphs) or values.npy (float32, graphs x outputs): the targets, whose length gives the
//   number of graphs, and per graph i, as the config needs them: g<i>.labels.npy (int32, n), g<i>.kernel.npy
//   (n x n), g<i>.degree.npy (n), g<i>.pe.npy (n x pe), g<i>.path.npy (n x path), g<i>.features.npy (n x features).
// It writes into DIR: model.safetensors (the initial model), grads.safetensors (the gradient of the mean loss,
// stored as a model's parameters so the tensors carry the model-file names), outputs.npy (float32, graphs x
// outputs) and loss.txt (%.9g). Any failure prints "error: ..." and exits 2.
#include <cstdio>
#include <exception>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "inductive/error.h"
#include "inductive/graphit.h"
#include "inductive/model_file.h"
#include "inductive/npy.h"

namespace {

using inductive::ErrorCode;
using inductive::MatF;
using inductive::NpyArray;
using inductive::VecF;

std::string read_text(const std::string& path) { return inductive::read_file_text(path); }

// The first whitespace-separated token of a small text file, as an integer.
long long read_integer(const std::string& path) {
  std::istringstream in(read_text(path));
  long long v = 0;
  INDUCTIVE_CHECK(static_cast<bool>(in >> v), ErrorCode::kInvalidArgument, path, ": expected an integer");
  return v;
}

NpyArray load(const std::string& path, const char* dtype, size_t dims) {
  NpyArray a = inductive::load_npy(path);
  INDUCTIVE_CHECK(a.dtype == dtype && a.shape.size() == dims, ErrorCode::kShapeMismatch, path, ": expected a ", dims,
                  "-d ", dtype, " array, got a ", a.shape.size(), "-d ", a.dtype, " array");
  return a;
}

MatF load_matrix(const std::string& path) {
  const NpyArray a = load(path, "<f4", 2);
  return Eigen::Map<const MatF>(a.f32.data(), a.shape[0], a.shape[1]);
}

// Graph i's arrays; its node count is the row count of its first array (pack() checks that the others agree).
inductive::GraphitGraph load_graph(const inductive::GraphitConfig& c, const std::string& dir, int i) {
  const std::string pre = dir + "/g" + std::to_string(i) + ".";
  inductive::GraphitGraph g;
  g.num_nodes = -1;
  auto nodes = [&](int64_t n) {
    if (g.num_nodes < 0) g.num_nodes = static_cast<int>(n);
  };
  if (c.vocab > 0) {
    const NpyArray a = load(pre + "labels.npy", "<i4", 1);
    g.node_labels = a.i32;
    nodes(a.shape[0]);
  }
  if (c.features > 0) nodes((g.node_features = load_matrix(pre + "features.npy")).rows());
  if (c.pe_dim > 0) nodes((g.pe = load_matrix(pre + "pe.npy")).rows());
  if (c.path_dim > 0) nodes((g.path_features = load_matrix(pre + "path.npy")).rows());
  if (c.kernel) g.kernel = load_matrix(pre + "kernel.npy");
  if (c.degree_scaling) {
    const NpyArray a = load(pre + "degree.npy", "<f4", 1);
    g.degree = Eigen::Map<const VecF>(a.f32.data(), a.shape[0]);
  }
  return g;
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  INDUCTIVE_CHECK(static_cast<bool>(out.flush()), ErrorCode::kIo, path, ": cannot write");
}

void run(const std::string& dir) {
  using namespace inductive;
  const GraphitConfig config = GraphitConfig::from_json(nlohmann::json::parse(read_text(dir + "/config.json")));
  INDUCTIVE_CHECK(config.dropout == 0, ErrorCode::kInvalidArgument,
                  "the config's dropout must be 0 (the oracle cannot replay our dropout masks), got ", config.dropout);
  const long long seed = read_integer(dir + "/seed");
  const long long training = read_integer(dir + "/training");
  INDUCTIVE_CHECK(seed >= 0 && (training == 0 || training == 1), ErrorCode::kInvalidArgument,
                  "seed must be >= 0 and training 0 or 1, got ", seed, " and ", training);

  std::vector<int32_t> classes;
  std::vector<float> values;
  int n_graphs = 0;
  if (config.classification()) {
    const NpyArray a = load(dir + "/classes.npy", "<i4", 1);
    classes = a.i32;
    n_graphs = static_cast<int>(a.shape[0]);
  } else {
    const NpyArray a = load(dir + "/values.npy", "<f4", 2);
    INDUCTIVE_CHECK(a.shape[1] == config.outputs, ErrorCode::kShapeMismatch, "values.npy has ", a.shape[1],
                    " columns, the config has ", config.outputs, " outputs");
    values = a.f32;
    n_graphs = static_cast<int>(a.shape[0]);
  }
  std::vector<GraphitGraph> graphs;
  for (int i = 0; i < n_graphs; ++i) graphs.push_back(load_graph(config, dir, i));
  const GraphitBatch batch =
      GraphitBatch::pack(config, graphs, {}, classes.empty() ? nullptr : &classes, values.empty() ? nullptr : &values);

  const GraphitModel model = GraphitModel::create(config, static_cast<uint64_t>(seed));
  GraphitRunOptions options;
  options.training = training == 1;  // no rng: no dropout; no running statistics to update
  GraphitModel grads = model;        // same config and running statistics; its params become the gradient
  grads.params = GraphitParams::zeros(config);
  MatF outputs;
  const double loss = model.loss(batch, options, &grads.params, &outputs);

  model.save(dir + "/model.safetensors");
  grads.save(dir + "/grads.safetensors");
  save_npy(dir + "/outputs.npy", outputs.data(), {outputs.rows(), outputs.cols()});
  char text[64];
  std::snprintf(text, sizeof text, "%.9g\n", loss);
  write_text(dir + "/loss.txt", text);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "error: usage: inductive_graphit_dump DIR\n");
    return 2;
  }
  try {
    run(argv[1]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  return 0;
}
