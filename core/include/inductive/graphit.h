// inductive/graphit.h - GraphiT (thesis ch. 3): a transformer on the nodes of a graph whose attention is modulated
// by a kernel on the graph, with exact gradients and the model file.
//
// One layer, on the node matrix X (n x d) of one graph, with H heads of width dh = d / H:
//   Q = X Wq^T (no bias; queries = keys), V = X Wv^T (no bias)
//   per head h:  S = Q_h Q_h^T / sqrt(dh),  E = exp(S - rowmax(S)),  A = (E ⊙ K) / max(rowsum(E ⊙ K), 1e-6)
//   O = [A_1 V_1, ..., A_H V_H] Wo^T + bo;   X <- Norm1(X + (1 + deg)^-1/2 ⊙ dropout(O))
//   X <- Norm2(X + dropout(W2 dropout(ReLU(W1 X + b1)) + b2))
// with the same kernel K (n x n) for every head (K = 1, i.e. softmax attention, for the plain transformer "T";
// then the degree scaling is off by default too). These are the numerics of the public reference code
// (inductive-lab/GraphiT, see shared/design/METHODS.md §2), including dropout on the attention weights; the one
// deliberate difference is BatchNorm, whose batch statistics come from the real nodes only (the reference also
// counts its padding).
// Input embedding: E[label] (vocab x d) + F Wf^T (dense features, no bias) + Linear(m, d)(LapPE)
// + Linear(g, d)(GCKN path features). Readout: mean or sum over the nodes, then Linear(d, r)-ReLU-Linear(r, C).
// Loss: mean cross-entropy (classification) or mean L1 (regression) over the graphs of a batch.
//
// Batches are packed: the nodes of all graphs are concatenated (no padding) and attention runs per graph block,
// so a graph's output never depends on the other graphs of the batch (except through BatchNorm's batch
// statistics in training mode, as in any BatchNorm network).
//
// Config JSON (stored in the model file; strict: unknown keys and wrong types are errors):
//   {"input":   {"vocab": 0, "features": 0, "pe": 0, "path": 0, "node_labels": []},
//    "encoder": {"d": 64, "layers": 3, "heads": 4, "ffn": 128, "norm": "layer", "dropout": 0.0,
//                "kernel": true, "degree_scaling": <kernel>},
//    "readout": {"pooling": "mean", "hidden": <d>},
//    "task":    {"type": "classification", "outputs": 2, "labels": []}}
// Tensors (F32, PyTorch layout: Linear weights are out x in):
//   embedding.weight [vocab, d], features.weight [d, f], pe.weight [d, m], pe.bias [d], path.weight [d, g],
//   path.bias [d], layers.<l>.attn.{q,v,out}.weight [d, d], layers.<l>.attn.out.bias [d],
//   layers.<l>.norm{1,2}.{weight,bias} [d] (+ running_mean, running_var [d] with BatchNorm),
//   layers.<l>.ffn1.weight [ffn, d], .ffn1.bias [ffn], .ffn2.weight [d, ffn], .ffn2.bias [d],
//   head.hidden.weight [r, d], head.hidden.bias [r], head.out.weight [C, r], head.out.bias [C].
//
// Thread-safety: models are immutable during forward/predict/attention, which may run concurrently; a
// GraphitCache belongs to one call at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "inductive/elementwise.h"
#include "inductive/enum_names.h"
#include "inductive/graph.h"
#include "inductive/graphit_inputs.h"
#include "inductive/linalg.h"
#include "inductive/model_file.h"
#include "inductive/progress.h"

namespace inductive {

class Backend;  // inductive/backend.h

class Communicator;  // inductive/communicator.h

// One graph as the model consumes it (the graph-data module produces these). n = num_nodes >= 1.
struct GraphitGraph {
  int num_nodes = 0;
  std::vector<int32_t> node_labels;  // n, each in [0, vocab), when config input.vocab > 0
  MatF node_features;                // n x features, when input.features > 0
  MatF kernel;                       // n x n kernel on the graph, when encoder.kernel (ignored otherwise)
  VecF degree;                       // n, from the edge list (self-loops excluded), when encoder.degree_scaling
  MatF pe;                           // n x pe, LapPE, when input.pe > 0
  MatF path_features;                // n x path, GCKN path features, when input.path > 0
};

// Config variants (names as in the JSON: "layer" / "batch", "mean" / "sum", "classification" / "regression").
enum class GraphitNorm : uint8_t { kLayer, kBatch };
enum class GraphitPooling : uint8_t { kMean, kSum };
enum class GraphitTask : uint8_t { kClassification, kRegression };
inline constexpr EnumName<GraphitNorm> kGraphitNorms[] = {{GraphitNorm::kLayer, "layer"},
                                                          {GraphitNorm::kBatch, "batch"}};
inline constexpr EnumName<GraphitPooling> kGraphitPoolings[] = {{GraphitPooling::kMean, "mean"},
                                                                {GraphitPooling::kSum, "sum"}};
inline constexpr EnumName<GraphitTask> kGraphitTasks[] = {{GraphitTask::kClassification, "classification"},
                                                          {GraphitTask::kRegression, "regression"}};
template <>
struct EnumTable<GraphitNorm> {
  static constexpr const auto& names = kGraphitNorms;
};
template <>
struct EnumTable<GraphitPooling> {
  static constexpr const auto& names = kGraphitPoolings;
};
template <>
struct EnumTable<GraphitTask> {
  static constexpr const auto& names = kGraphitTasks;
};

struct GraphitConfig {
  // input
  int vocab = 0;                         // categorical node labels (embedding table), 0: none
  int features = 0;                      // dense node features (Linear(f, d), no bias), 0: none
  int pe_dim = 0;                        // LapPE dimension m (Linear(m, d)), 0: none
  int path_dim = 0;                      // GCKN path-feature dimension g (Linear(g, d)), 0: none
  std::vector<std::string> node_labels;  // original label value (e.g. atom symbol) of each index; empty or vocab
  // encoder
  int d = 64;
  int layers = 3;
  int heads = 4;
  int ffn = 128;  // hidden width of the feed-forward block (reference: 2 d)
  GraphitNorm norm = GraphitNorm::kLayer;
  double dropout = 0.0;
  bool kernel = true;          // false: plain transformer ("T"), softmax attention
  bool degree_scaling = true;  // residual x + (1 + deg)^-1/2 attn (JSON default: = kernel; set it
                               // to false yourself with kernel = false in C++ for the reference "T")
  // readout
  GraphitPooling pooling = GraphitPooling::kMean;
  int hidden = 64;  // width of the head's hidden layer (reference: d)
  // task
  GraphitTask task = GraphitTask::kClassification;  // cross-entropy | L1
  int outputs = 2;                                  // classes (>= 2) or regression targets (>= 1)
  std::vector<std::string> class_labels;            // empty or `outputs` names (classification)
  // graph: how graphs become inputs (kernel, LapPE, GCKN; inductive/graphit_inputs.h). Optional: a model trained
  // on precomputed GraphitGraphs may not say; one without it cannot prepare() graphs itself.
  bool has_graph = false;
  GraphitInputSpec graph;

  // A config with the reference defaults for d (ffn = 2 d, hidden = d).
  static GraphitConfig with_dim(int d, int layers, int heads);
  bool classification() const { return task == GraphitTask::kClassification; }
  void validate() const;
  nlohmann::json to_json() const;
  static GraphitConfig from_json(const nlohmann::json& j);  // strict: unknown keys and bad values are errors
};

// Trainable parameters. The same struct holds gradients (same shapes). Linear weights are out x in.
struct GraphitLayerParams {
  MatF q_weight, v_weight, out_weight;                      // d x d
  VecF out_bias;                                            // d
  VecF norm1_weight, norm1_bias, norm2_weight, norm2_bias;  // d
  MatF ffn1_weight;                                         // ffn x d
  VecF ffn1_bias;                                           // ffn
  MatF ffn2_weight;                                         // d x ffn
  VecF ffn2_bias;                                           // d
};

struct GraphitParams {
  MatF embedding;        // vocab x d
  MatF features_weight;  // d x features
  MatF pe_weight;        // d x pe_dim
  VecF pe_bias;          // d
  MatF path_weight;      // d x path_dim
  VecF path_bias;        // d
  std::vector<GraphitLayerParams> layers;
  MatF hidden_weight;  // hidden x d
  VecF hidden_bias;    // hidden
  MatF out_weight;     // outputs x hidden
  VecF out_bias;       // outputs

  // Every parameter tensor the config implies, in a fixed order, with its model-file name and shape. The
  // non-const form allocates (zero-filled) members whose shape differs; the const form throws
  // Error{kShapeMismatch} naming the first such tensor.
  template <typename T>
  struct TensorView {
    std::string name;
    T* data;
    std::vector<int64_t> shape;
    int64_t size() const {
      int64_t n = 1;
      for (int64_t s : shape) n *= s;
      return n;
    }
  };
  using Tensor = TensorView<float>;
  using ConstTensor = TensorView<const float>;
  std::vector<Tensor> tensors(const GraphitConfig& config);
  std::vector<ConstTensor> tensors(const GraphitConfig& config) const;
  // Zero-filled parameters with the config's shapes (the gradient accumulator).
  static GraphitParams zeros(const GraphitConfig& config);
  void set_zero();
};

// BatchNorm running statistics of one layer (PyTorch: momentum 0.1, unbiased variance for the running estimate).
struct GraphitNormStats {
  VecF mean1, var1, mean2, var2;  // d each; initially 0 and 1
};

// Packed graphs: rows [offsets[g], offsets[g + 1]) of the node arrays belong to graph g.
// Kernels are pointers into the source graphs: keep those alive while the batch is used.
struct GraphitBatch {
  int n_graphs = 0;
  int n_nodes = 0;
  std::vector<int> offsets;          // n_graphs + 1
  std::vector<int64_t> sq_offsets;   // n_graphs + 1: prefix sums of n_g^2 (attention storage)
  std::vector<int32_t> labels;       // n_nodes (vocab > 0)
  MatF features, pe, path;           // n_nodes x dim (when the config uses them)
  VecF residual_scale;               // n_nodes: (1 + deg)^-1/2, or 1 without degree scaling
  std::vector<const MatF*> kernels;  // per graph (nullptr without kernel)
  std::vector<int32_t> classes;      // per graph (classification targets), may be empty
  std::vector<float> values;         // n_graphs x outputs (regression targets), may be empty

  int size(int g) const { return offsets[g + 1] - offsets[g]; }
  // Validates every graph against the config (Error{kInvalidArgument|kShapeMismatch} naming the graph) and packs
  // them. `index` selects graphs (all when empty); `classes`/`values` (optional) are per source graph.
  static GraphitBatch pack(const GraphitConfig& config, const std::vector<GraphitGraph>& graphs,
                           const std::vector<int>& index = {}, const std::vector<int32_t>* classes = nullptr,
                           const std::vector<float>* values = nullptr);
  // Multiplies each graph's LapPE columns by random signs (the reference's training augmentation).
  void flip_pe_signs(std::mt19937_64& rng);
};

// What the forward pass keeps for the backward pass; reusable across calls (buffers are kept).
struct GraphitCache {
  struct Norm {
    MatF xhat;         // n_nodes x d
    VecF rstd;         // n_nodes (layer) or d (batch)
    double count = 0;  // BatchNorm in training: the nodes its statistics were taken over (every rank's)
  };
  struct Layer {
    MatF x_in, q, v, heads;        // n_nodes x d; `heads` = [A_1 V_1 ... A_H V_H] (pre out-projection)
    std::vector<float> probs;      // per graph, per head: A^T (n x n, row-major: row j is A's column j), pre-dropout
    std::vector<float> drop_attn;  // dropout multipliers of A (n x n per graph and head, row-major); empty without
    std::vector<uint8_t> floored;  // per graph, head, row: rowsum(E ⊙ K) <= 1e-6 (the floor is active)
    std::vector<int32_t> argmax;   // per graph, head, row: column of the row max of S
    MatF drop1, drop_ffn, drop2;   // dropout multipliers; empty without dropout
    Norm norm1, norm2;
    MatF x1;   // output of norm1
    MatF ffn;  // ReLU(x1 W1^T + b1), n_nodes x ffn, pre-dropout
  };
  std::vector<Layer> layers;
  MatF x_out;   // n_nodes x d, the encoder's output
  MatF pooled;  // n_graphs x d
  MatF hidden;  // n_graphs x hidden, post-ReLU
  MatF output;  // n_graphs x outputs
  bool training = false;
  bool dropout = false;
  Communicator* norm_comm = nullptr;  // BatchNorm statistics synchronised across ranks (GraphitRunOptions)
  // Scratch space reused between calls (no allocation in the per-graph loops once warmed up); `scratch`: one
  // buffer per thread for the attention kernels, sized for the largest graph seen. Mutable: the backward pass,
  // which reads the cache as const, reuses it too (its contents carry nothing between calls).
  MatF work_a, work_b, work_c;
  mutable std::vector<std::vector<float>> scratch;
  // The chunked backward pass's gradients of the layer it is in (what that layer's weight gradients read), kept
  // between calls for the same reason.
  mutable std::vector<MatF> grad_work;
};

struct GraphitRunOptions {
  bool training = false;  // BatchNorm batch statistics; dropout when rng is given and dropout > 0
  // Dropout (training only): the forward pass draws one key from it, which keys every mask of the pass.
  std::mt19937_64* rng = nullptr;
  // Where this batch lies in the step's whole batch (data parallel: the nodes and the sum of n^2 of the graphs of the
  // shares before it), so that its masks are the elements a one-process step draws there (graphit_dropout_mask).
  int64_t node_offset = 0, sq_offset = 0;
  std::vector<GraphitNormStats>* running = nullptr;  // updated with the batch statistics (training, BatchNorm)
  // Data parallel training, each rank holding a share of the global batch. `sync_norm`: BatchNorm's batch statistics
  // (forward) and their gradient sums (backward) are all-reduced, so they are the global batch's: every rank makes
  // the same collective calls in the same order (a rank with no graphs calls graphit_norm_sync_idle instead).
  // `grad_scale` multiplies d loss / d output before the backward pass: the share's weight in the global batch's
  // mean loss, so that the ranks' gradients (and the backward's all-reduced sums) add up to the global batch's.
  Communicator* sync_norm = nullptr;
  double grad_scale = 1.0;
  // false (evaluation only; ignored in training): the pass keeps no layer's activations in the cache, only its
  // outputs, so every layer writes the same buffers (cache.layers[0]'s). A chunk of graphs then finds them in L2
  // from one layer to the next, where each layer's own buffers (ZINC's 10 layers: ~70 MB a batch of 128) had
  // streamed through L3. predict() passes it; attention maps need the layers (true, the default).
  bool keep_layers = true;
};

// A rank with no graphs in a training batch whose BatchNorm is synchronised: makes the forward and backward passes
// all-reduce calls with zeros (the others' statistics and gradient sums are then those of the ranks with graphs),
// and updates `running` (when given) with the batch's statistics, as the ranks with graphs do.
void graphit_norm_sync_idle(const GraphitConfig& config, Communicator& comm,
                            std::vector<GraphitNormStats>* running = nullptr);

// Dropout's masks: a step draws one key from the epoch's generator; mask `which` of layer l is the stream
// graphit_dropout_stream(key, l, which), and its element at position i of the step's whole batch (a node tensor's
// row-major index, or the attention's H sq_offset + h n n + r n + j layout) is
// elementwise::dropout_multiplier(stream, i): a counter-based generator, so that device backends draw the CPU's
// masks in their own kernels and data-parallel shares draw the one-process step's.
enum class GraphitDropoutMask : int { kAttention = 0, kAttentionOut = 1, kFfnHidden = 2, kFfnOut = 3 };
inline uint64_t graphit_dropout_stream(uint64_t key, int layer, GraphitDropoutMask which) {
  return elementwise::dropout_stream(key, 4 * static_cast<uint64_t>(layer) + static_cast<uint64_t>(which));
}
// Inverted dropout multipliers (PyTorch's nn.Dropout: 0 with probability p, 1 / (1 - p) otherwise) of `size`
// elements of `stream` from position `first` on.
void graphit_dropout_mask(float* m, int64_t size, double p, uint64_t stream, int64_t first);

// The largest graph (nodes, atoms) a GraphiT model prepares and runs, per build. Kernels, LapPE and attention maps
// are dense: O(n^2) memory per head and layer, O(n^3) time for the eigendecomposition. Measured natively, a
// 3000-atom molecule took 37 s and 523 MB; a browser tab (wasm: one thread, at most 2 GiB, shared with the page)
// gets a quarter of the native limit. Larger inputs are refused before any work (Error{kInvalidArgument}).
#ifdef __EMSCRIPTEN__
inline constexpr int kMaxGraphitNodes = 1024;
#else
inline constexpr int kMaxGraphitNodes = 4096;
#endif

// The "graphit" model-file kind, registered (once) as otke's is: GraphitModel does so before it reads or writes.
ModelSchema graphit_model_schema();
void register_graphit_model_kind();

class GraphitModel {
 public:
  GraphitConfig config;
  GraphitParams params;
  std::vector<GraphitNormStats> norm_stats;  // per layer when norm == "batch"
  GcknPathFeatures gckn;                     // fitted path features when config.graph.gckn

  // The inputs of a graph prepared as this model's training graphs were (config.graph): kernel, LapPE, GCKN
  // features, degrees; node labels as they are (indices into config.node_labels). Needs config.has_graph.
  GraphitGraph prepare(const Graph& g) const;

  // prepare() for `count` graphs, split across threads (inductive/parallel.h): graph_of(i) builds graph i (e.g.
  // parses a SMILES; it must be safe to call from several threads). A failure is what the serial loop would have
  // thrown (the lowest failing index), an Error with its message prefixed by name_of(i) + ": ". progress, if given,
  // reports stage "prepare" and the fraction of graphs done on the calling thread only (it may cancel by throwing,
  // inductive/progress.h). Same graphs, bit for bit, on any threads.
  std::vector<GraphitGraph> prepare_many(int count, const std::function<Graph(int)>& graph_of,
                                         const std::function<std::string(int)>& name_of,
                                         const ProgressFn& progress = {}) const;

  // A model with the config's shapes and a seeded initialisation following PyTorch's defaults (Linear:
  // U(+-1/sqrt(in)); attention in-projections: Xavier uniform, out bias 0; norms: 1 and 0).
  static GraphitModel create(const GraphitConfig& config, uint64_t seed);

  // Forward pass on a packed batch: the head's outputs, n_graphs x outputs (logits or regression values).
  // `cache` (optional) receives what backward needs.
  MatF forward(const GraphitBatch& batch, const GraphitRunOptions& run = {}, GraphitCache* cache = nullptr) const;
  // Gradients of sum_g <d_output_g, output_g> w.r.t. every parameter, accumulated (+=) into `grads`, which must
  // have the config's shapes (GraphitParams::zeros). Exact for the forward pass recorded in `cache`.
  void backward(const GraphitBatch& batch, const GraphitCache& cache, const Eigen::Ref<const MatF>& d_output,
                GraphitParams& grads) const;
  // backward's two schedules below the head (dx: the gradient at the last layer's output in, at the first layer's
  // input out): pass by pass over the whole batch (training BatchNorm), or chunks of graphs down each layer, then
  // that layer's weight gradients.
  void backward_by_passes(const GraphitBatch& batch, const GraphitCache& cache, MatF& dx, GraphitParams& grads) const;
  void backward_by_chunks(const GraphitBatch& batch, const GraphitCache& cache, MatF& dx, GraphitParams& grads) const;
  // Mean loss over the batch (needs the batch's targets); when `grads` is given, adds its gradient to it.
  // `outputs` (optional) receives the forward outputs.
  double loss(const GraphitBatch& batch, const GraphitRunOptions& run, GraphitParams* grads = nullptr,
              MatF* outputs = nullptr, GraphitCache* cache = nullptr) const;

  // Evaluation-mode outputs for graphs (packed in batches of `batch_size`), n x outputs. On several threads, with at
  // least two batches a thread, each batch runs on one thread (a set of layer buffers each); otherwise each batch's
  // rows are shared out. The same bits on any number of threads.
  MatF predict(const std::vector<GraphitGraph>& graphs, int batch_size = 64) const;
  // What front ends show of predict(): class probabilities (softmax rows) for a classifier, the values for a
  // regression model. `backend` (optional, inductive/backend.h) runs the model instead of this process's CPU code.
  MatF shown_outputs(const std::vector<GraphitGraph>& graphs, Backend* backend = nullptr) const;

  // Per-layer attention of one graph in evaluation mode: the head-averaged n x n matrices (row i: how node i
  // attends to the others; rows sum to 1 unless the row sum of exp(S) ⊙ K fell under the 1e-6 floor, e.g. a zero
  // kernel row) and per-node saliency = column mass of
  // that matrix divided by n (sums to 1 when no row is floored): the atoms the others look at (thesis §3.5).
  // `backend` (optional) computes the matrices (Backend::graphit_attention_maps); the saliencies follow here;
  // `outputs` (optional) receives the same forward pass's outputs (1 x outputs, as predict's).
  struct Attention {
    std::vector<MatF> layers;    // layers x (n x n)
    std::vector<VecF> saliency;  // layers x n
    VecF mean_saliency;          // n, the mean over layers
  };
  Attention attention(const GraphitGraph& graph, Backend* backend = nullptr, MatF* outputs = nullptr) const;
  // The matrices alone: each layer's probabilities averaged over the heads, in head order (and `outputs`, above).
  std::vector<MatF> attention_maps(const GraphitGraph& graph, MatF* outputs = nullptr) const;

  // One graph explained, as `inductive graphit attention` writes it and the browser's attention() returns it: the
  // shown outputs (1 x outputs), attention() flattened row-major ([layers, n, n] and [layers, n]), the mean
  // saliency, the prepared kernel ([n, n]; empty when the model has none) and, for a classifier, the most probable
  // class.
  struct Explanation {
    int n = 0, layers = 0;
    MatF outputs;
    std::vector<float> attention, saliency, mean_saliency, kernel;
    int class_index = -1;
  };
  // `backend` (optional) runs the network (Backend::graphit_attention_maps): one forward pass gives both.
  Explanation explain(const Graph& graph, Backend* backend = nullptr) const;

  // The graph of a molecule as this model's training molecules were read: node labels = indices into
  // config.node_labels of the atom types under config.graph.atom_typing (element symbols without a graph section).
  // An atom type the model does not know is an Error{kInvalidArgument} naming it and the vocabulary.
  Graph molecule_graph(const Molecule& molecule) const;

  // Maps original node labels (config.node_labels) to indices; Error{kInvalidArgument} naming unknown ones.
  std::vector<int32_t> label_indices(const std::vector<std::string>& labels) const;

  // Model file ("graphit" kind). Tensors point into this model: keep it alive while writing.
  ModelContents to_contents() const;
  std::vector<uint8_t> to_bytes() const;
  void save(const std::string& path) const;  // atomic
  static GraphitModel from_view(const ModelView& view);
  static GraphitModel from_bytes(const uint8_t* bytes, size_t size);
  static GraphitModel load(const std::string& path);

 private:
  std::vector<std::pair<std::string, const float*>> state_tensors() const;  // running stats
};

// The model inputs of graph `g` from its precomputed parts (inductive/graph_cache.h) under `config`: degrees
// from the edge list, node labels, and kernel / LapPE / GCKN features where the config uses them (a part the
// config needs but `pre` lacks is an Error{kInvalidArgument}).
GraphitGraph make_graphit_graph(const Graph& g, const PrecomputedGraph& pre, const GraphitConfig& config);

// Metrics over outputs (n x outputs): accuracy (argmax, first maximum on ties) and mean absolute error.
double graphit_accuracy(const Eigen::Ref<const MatF>& outputs, const std::vector<int32_t>& classes);
double graphit_mae(const Eigen::Ref<const MatF>& outputs, const std::vector<float>& values);

}  // namespace inductive
