// native/cuda/graphit_device_pass.h - GraphiT's training and evaluation passes over buffers an executor owns: the
// order of operations of core's GraphitModel::forward / backward / loss, written once for every executor.
//
// An executor provides buffers, uploads and downloads, GEMMs on row-major matrices and `launch(count, functor)`,
// which runs functor(i) for every i < count (graphit_device_ops.h): the CUDA executor (graphit_exec_cuda.h) launches
// a kernel and calls cuBLAS; the host executor (graphit_exec_host.h) runs plain loops, so the CPU test suite checks
// this file and every functor against the CPU model on machines without a GPU. Parameters, gradients, Adam's moments
// and BatchNorm's running statistics stay in the executor's memory; a step brings back one loss per graph and the
// outputs (for the metric). Dropout masks come from the CPU's counter-based generator (graphit_dropout_mask), drawn
// by a kernel from one key per step taken from the epoch's generator: a seed gives the CPU's masks, and a
// data-parallel share (set_batch_position) the one-process step's.
//
// Data parallel (set_allreduce): training BatchNorm's statistics and their gradient sums are summed over the ranks
// inside the passes (the batch's statistics, as one process computes them: core's sync_norm), and the backward pass
// hands its gradients to GradientBuckets layer by layer, so their sum over ranks starts before the pass ends. A rank
// without graphs in a step (clear_batch) still takes part in every sum, with zeros.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "device_allreduce.h"
#include "graphit_device_ops.h"
#include "inductive/adam.h"
#include "inductive/error.h"
#include "inductive/graphit.h"

namespace inductive::graphit_device {

using graphit_ops::MatOperand;

template <class Exec>
class GraphitDevicePass {
  template <typename T>
  using Buf = typename Exec::template Buffer<T>;

 public:
  // Allocates the parameters, their gradients and Adam's moments (zero) for the model's config and uploads the
  // model's parameters and running statistics.
  GraphitDevicePass(Exec& exec, const GraphitModel& model) : exec_(exec), c_(model.config) {
    const auto views = model.params.tensors(c_);
    for (const auto& t : views) {
      names_.push_back(t.name);
      offsets_.push_back(n_params_);
      sizes_.push_back(t.size());
      n_params_ += t.size();
    }
    params_.resize(n_params_);
    grads_.resize(n_params_);
    m_.resize(n_params_);
    v_.resize(n_params_);
    exec_.zero(m_.data(), n_params_ * sizeof(float));
    exec_.zero(v_.data(), n_params_ * sizeof(float));
    stats_.resize(static_cast<size_t>(4) * c_.layers * c_.d);
    push_model(model);
  }

  int64_t parameter_count() const { return n_params_; }
  // Data parallel: BatchNorm's training statistics are summed over ranks by `allreduce` (null: this process alone).
  void set_allreduce(device::DeviceAllreduce* allreduce) { allreduce_ = allreduce; }
  const std::vector<std::string>& names() const { return names_; }

  // Copies the model's parameters and running statistics in / out (shapes fixed by the config).
  void push_model(const GraphitModel& model) {
    const auto views = model.params.tensors(c_);
    for (size_t t = 0; t < views.size(); ++t)
      exec_.upload(params_.data() + offsets_[t], views[t].data, sizes_[t] * sizeof(float));
    if (batch_norm()) {
      std::vector<float> s;
      for (const GraphitNormStats& st : model.norm_stats)
        for (const VecF* v : {&st.mean1, &st.var1, &st.mean2, &st.var2}) s.insert(s.end(), v->data(), v->data() + c_.d);
      exec_.upload(stats_.data(), s.data(), s.size() * sizeof(float));
    }
  }
  void pull_model(GraphitModel& model) {
    auto views = model.params.tensors(c_);
    for (size_t t = 0; t < views.size(); ++t)
      exec_.download(views[t].data, params_.data() + offsets_[t], sizes_[t] * sizeof(float));
    if (batch_norm()) {
      std::vector<float> s(stats_size());
      exec_.download(s.data(), stats_.data(), s.size() * sizeof(float));
      size_t at = 0;
      model.norm_stats.resize(c_.layers);
      for (GraphitNormStats& st : model.norm_stats)
        for (VecF* v : {&st.mean1, &st.var1, &st.mean2, &st.var2}) {
          v->resize(c_.d);
          std::copy(s.begin() + at, s.begin() + at + c_.d, v->data());
          at += c_.d;
        }
    }
  }
  // Adam's moments by parameter name (the CPU's Adam::moments layout), in and out.
  void push_moments(const Adam& adam) {
    exec_.zero(m_.data(), n_params_ * sizeof(float));
    exec_.zero(v_.data(), n_params_ * sizeof(float));
    for (const Adam::Moments& mo : adam.moments())
      for (size_t t = 0; t < names_.size(); ++t)
        if (names_[t] == mo.name) {
          INDUCTIVE_CHECK(static_cast<int64_t>(mo.m.size()) == sizes_[t] && mo.v.size() == mo.m.size(),
                          ErrorCode::kShapeMismatch, "graphit: Adam moments of ", mo.name, " have ", mo.m.size(),
                          " values, the parameter ", sizes_[t]);
          exec_.upload(m_.data() + offsets_[t], mo.m.data(), mo.m.size() * sizeof(float));
          exec_.upload(v_.data() + offsets_[t], mo.v.data(), mo.v.size() * sizeof(float));
        }
  }
  std::vector<Adam::Moments> pull_moments() {
    std::vector<Adam::Moments> out;
    for (size_t t = 0; t < names_.size(); ++t) {
      Adam::Moments mo{names_[t], std::vector<float>(sizes_[t]), std::vector<float>(sizes_[t])};
      exec_.download(mo.m.data(), m_.data() + offsets_[t], sizes_[t] * sizeof(float));
      exec_.download(mo.v.data(), v_.data() + offsets_[t], sizes_[t] * sizeof(float));
      out.push_back(std::move(mo));
    }
    return out;
  }
  // The current parameters and gradients, flat, in model-file order.
  std::vector<float> download_parameters() {
    std::vector<float> p(n_params_);
    exec_.download(p.data(), params_.data(), p.size() * sizeof(float));
    return p;
  }
  std::vector<float> download_gradients() {
    std::vector<float> g(n_params_);
    exec_.download(g.data(), grads_.data(), g.size() * sizeof(float));
    return g;
  }
  // Offset of tensor `t` (model-file order) in the flat vectors.
  int64_t offset(size_t t) const { return offsets_[t]; }

  // Copies a packed batch (with its targets when `targets`) to the executor and makes it the batch the passes read.
  void upload_batch(const GraphitBatch& b, bool targets) {
    stage_batch(b, targets);
    use_staged();
  }

  // The batch in two halves, so that the next step's batch travels while this one computes. stage_batch packs `b`
  // into the host staging area of the slot the passes do not read (page-locked memory on CUDA) and enqueues its
  // copies on the executor's copy stream, after the compute stream's last use of that slot; use_staged makes it the
  // batch the passes read, the compute stream waiting for its copies. A second stage_batch before use_staged
  // replaces the first (it waits until the first's copies have left the staging area).
  void stage_batch(const GraphitBatch& b, bool targets) {
    const int next = 1 - cur_;
    Slot& s = slots_[next];
    s.B = b.n_graphs;
    s.N = b.n_nodes;
    s.sq_total = b.sq_offsets.back();
    // One staging area, each field at a 64-byte boundary.
    size_t bytes = 0;
    const auto field = [&](size_t size) {
      const size_t at = bytes;
      bytes += (size + 63) / 64 * 64;
      return at;
    };
    const size_t f = sizeof(float), i32 = sizeof(int32_t);
    const size_t at_graph_of = field(s.N * i32), at_offsets = field((s.B + 1) * i32),
                 at_sq = field((s.B + 1) * sizeof(int64_t)), at_labels = field(c_.vocab > 0 ? s.N * i32 : 0),
                 at_features = field(c_.features > 0 ? b.features.size() * f : 0),
                 at_pe = field(c_.pe_dim > 0 ? b.pe.size() * f : 0),
                 at_path = field(c_.path_dim > 0 ? b.path.size() * f : 0), at_residual = field(s.N * f),
                 at_kernels = field(c_.kernel ? s.sq_total * f : 0),
                 at_classes = field(targets && c_.classification() ? s.B * i32 : 0),
                 at_values = field(targets && !c_.classification() ? b.values.size() * f : 0);
    exec_.before_stage(next);  // the slot's last copies have left its staging area
    s.staging.reserve(bytes);
    char* h = s.staging.data();
    auto* graph_of = reinterpret_cast<int32_t*>(h + at_graph_of);
    for (int g = 0; g < s.B; ++g) std::fill(graph_of + b.offsets[g], graph_of + b.offsets[g + 1], g);
    std::copy(b.offsets.begin(), b.offsets.end(), reinterpret_cast<int32_t*>(h + at_offsets));
    std::copy(b.sq_offsets.begin(), b.sq_offsets.end(), reinterpret_cast<int64_t*>(h + at_sq));
    if (c_.vocab > 0) std::copy(b.labels.begin(), b.labels.end(), reinterpret_cast<int32_t*>(h + at_labels));
    if (c_.features > 0) std::copy_n(b.features.data(), b.features.size(), reinterpret_cast<float*>(h + at_features));
    if (c_.pe_dim > 0) std::copy_n(b.pe.data(), b.pe.size(), reinterpret_cast<float*>(h + at_pe));
    if (c_.path_dim > 0) std::copy_n(b.path.data(), b.path.size(), reinterpret_cast<float*>(h + at_path));
    std::copy_n(b.residual_scale.data(), s.N, reinterpret_cast<float*>(h + at_residual));
    if (c_.kernel)
      for (int g = 0; g < s.B; ++g)
        std::copy_n(b.kernels[g]->data(), b.kernels[g]->size(),
                    reinterpret_cast<float*>(h + at_kernels) + b.sq_offsets[g]);
    if (targets && c_.classification())
      std::copy(b.classes.begin(), b.classes.end(), reinterpret_cast<int32_t*>(h + at_classes));
    if (targets && !c_.classification())
      std::copy_n(b.values.data(), b.values.size(), reinterpret_cast<float*>(h + at_values));
    // The copies, once the compute stream is done with the slot's device buffers (the step before last).
    exec_.before_fill(next);
    send(s.graph_of, h + at_graph_of, s.N);
    send(s.offsets, h + at_offsets, s.B + 1);
    send(s.sq_off, h + at_sq, s.B + 1);
    if (c_.vocab > 0) send(s.labels, h + at_labels, s.N);
    if (c_.features > 0) send(s.features, h + at_features, b.features.size());
    if (c_.pe_dim > 0) send(s.pe, h + at_pe, b.pe.size());
    if (c_.path_dim > 0) send(s.path, h + at_path, b.path.size());
    send(s.residual, h + at_residual, s.N);
    if (c_.kernel) send(s.kernels, h + at_kernels, s.sq_total);
    if (targets && c_.classification()) send(s.classes, h + at_classes, s.B);
    if (targets && !c_.classification()) send(s.values, h + at_values, b.values.size());
    exec_.after_fill(next);
    staged_ = true;
  }
  void use_staged() {
    INDUCTIVE_CHECK(staged_, ErrorCode::kInternal, "graphit device pass: no staged batch to use");
    exec_.release(cur_);  // the compute stream's work on the current slot so far
    cur_ = 1 - cur_;
    exec_.before_use(cur_);
    staged_ = false;
    node_offset_ = sq_offset_ = 0;
    B_ = in().B;
    N_ = in().N;
    sq_total_ = in().sq_total;
  }

  // Where the uploaded batch lies in its step's whole batch (a data-parallel share: GraphitRunOptions::node_offset,
  // sq_offset), for its dropout masks; upload_batch resets it to the start.
  void set_batch_position(int64_t node_offset, int64_t sq_offset) {
    node_offset_ = node_offset;
    sq_offset_ = sq_offset;
  }

  // A batch of no graph: this rank's share of a step smaller than the number of ranks (data parallel).
  void clear_batch() {
    B_ = 0;
    N_ = 0;
    sq_total_ = 0;
  }

  // Forward pass on the uploaded batch (training: batch statistics, running statistics updated, and dropout drawn
  // from `rng` when the config has it), then the loss; returns the batch's mean loss and, when `outputs` is given,
  // the outputs (B x outputs). With `backward`, the gradients (=, not +=) of the mean loss times `grad_scale`, handed
  // to `buckets` (data parallel) as each layer's are final. An empty batch (clear_batch) has loss 0.
  double loss(bool training, std::mt19937_64* rng, bool backward, MatF* outputs, float grad_scale = 1.0f,
              device::GradientBuckets* buckets = nullptr) {
    enqueue_loss(training, rng, backward, grad_scale, buckets);
    return finish_loss(outputs);
  }
  // loss() in two halves: enqueue_loss issues the passes (the generator's draw is taken here) and returns without
  // waiting for them, so that the host can prepare the next batch meanwhile; finish_loss waits and brings back the
  // losses (and the outputs). The losses are read after the backward pass is issued: the device runs both passes
  // without a round trip to the host between them.
  void enqueue_loss(bool training, std::mt19937_64* rng, bool backward, float grad_scale = 1.0f,
                    device::GradientBuckets* buckets = nullptr) {
    forward(training, rng);
    loss_g_.resize(B_);
    d_out_.resize(static_cast<size_t>(B_) * c_.outputs);
    launch(B_, graphit_ops::GraphLoss{output_.data(), c_.classification() ? in().classes.data() : nullptr,
                                      c_.classification() ? nullptr : in().values.data(), loss_g_.data(), d_out_.data(),
                                      c_.outputs, B_, grad_scale});
    if (backward) this->backward(buckets);
  }
  double finish_loss(MatF* outputs) {
    std::vector<double> lg(B_);
    if (B_ > 0) exec_.download(lg.data(), loss_g_.data(), lg.size() * sizeof(double));
    if (outputs) {
      outputs->resize(B_, c_.outputs);
      if (B_ > 0) exec_.download(outputs->data(), output_.data(), outputs->size() * sizeof(float));
    }
    double total = 0;
    for (double l : lg) total += l;
    return B_ > 0 ? total / B_ : 0.0;
  }

  // Evaluation-mode outputs of the uploaded batch (no targets needed), B x outputs; in two halves as loss() is.
  MatF outputs() {
    enqueue_outputs();
    return finish_outputs();
  }
  void enqueue_outputs() { forward(false, nullptr); }
  MatF finish_outputs() {
    MatF out(B_, c_.outputs);
    exec_.download(out.data(), output_.data(), static_cast<size_t>(out.size()) * sizeof(float));
    return out;
  }

  // After outputs() on a batch of one graph of n nodes: each layer's attention probabilities, brought back and
  // averaged over the heads in head order, as GraphitModel::attention_maps averages the CPU's (a single graph's
  // heads are blocks of n x n, head by head, in both layouts).
  std::vector<MatF> attention_maps(int n) {
    INDUCTIVE_CHECK(B_ == 1, ErrorCode::kInternal, "graphit attention (device): ", B_, " graphs uploaded, expected 1");
    const int H = c_.heads;
    std::vector<float> probs(static_cast<size_t>(H) * n * n);
    std::vector<MatF> maps;
    for (Layer& ly : layers_) {
      exec_.download(probs.data(), ly.probs.data(), probs.size() * sizeof(float));
      MatF avg = MatF::Zero(n, n);
      for (int h = 0; h < H; ++h) avg += CMapF(probs.data() + static_cast<int64_t>(h) * n * n, n, n);
      avg /= static_cast<float>(H);
      maps.push_back(std::move(avg));
    }
    return maps;
  }

  // One AdamW step with the constants of the step being taken (Adam::coefficients after its count moved on).
  void adam_step(const elementwise::AdamCoefficients& coefficients) {
    launch(n_params_, graphit_ops::AdamStep{params_.data(), m_.data(), v_.data(), grads_.data(), coefficients});
  }

 private:
  // A batch on the executor, and its staging area on the host.
  struct Slot {
    typename Exec::Staging staging;  // the packed batch on the host
    Buf<int32_t> graph_of, offsets, labels, classes;
    Buf<int64_t> sq_off;
    Buf<float> features, pe, path, residual, kernels, values;
    int B = 0, N = 0;
    int64_t sq_total = 0;
  };
  struct Norm {
    Buf<float> xhat, rstd, mean;
    Buf<double> sums, sq;  // training BatchNorm: column sums and node count (d + 1), centred squares (d)
  };
  struct Layer {
    Buf<float> x_in, q, v, heads, probs, drop_attn, drop1, drop_ffn, drop2, x1, ffn;
    Buf<uint8_t> floored;
    Buf<int32_t> argmax;
    Norm norm1, norm2;
  };

  bool batch_norm() const { return c_.norm == GraphitNorm::kBatch; }
  size_t stats_size() const { return static_cast<size_t>(4) * c_.layers * c_.d; }
  const float* param(const std::string& name) const { return params_.data() + offsets_[index_of(name)]; }
  float* grad(const std::string& name) { return grads_.data() + offsets_[index_of(name)]; }
  size_t index_of(const std::string& name) const {
    for (size_t t = 0; t < names_.size(); ++t)
      if (names_[t] == name) return t;
    INDUCTIVE_FAIL(ErrorCode::kInternal, "graphit device pass: no parameter ", name);
  }
  static std::string layer_name(int l, const char* what) { return "layers." + std::to_string(l) + "." + what; }

  const Slot& in() const { return slots_[cur_]; }
  // `count` values from the staging area at `src` into `dst`, on the copy stream.
  template <typename T>
  void send(Buf<T>& dst, const char* src, size_t count) {
    dst.resize(count);
    if (count > 0) exec_.stage_copy(dst.data(), src, count * sizeof(T));
  }
  template <typename F>
  void launch(int64_t count, const F& f) {
    if (count > 0) exec_.launch(count, f);
  }
  // out (rows x n) = x (rows x k) W^T + beta out, W n x k (a Linear layer's weight).
  void linear(float* out, const float* x, int64_t rows, int k, const float* w, int n, float beta = 0.0f) {
    if (rows > 0 && n > 0 && k > 0) exec_.gemm(static_cast<int>(rows), n, k, 1.0f, {x, k}, {w, k, true}, beta, out, n);
  }
  // dx (rows x k) = g (rows x n) W + beta dx.
  void linear_input_grad(float* dx, const float* g, int64_t rows, int n, const float* w, int k, float beta) {
    if (rows > 0 && n > 0 && k > 0) exec_.gemm(static_cast<int>(rows), k, n, 1.0f, {g, n}, {w, k}, beta, dx, k);
  }
  // dW (n x k) += g^T x over `rows` rows.
  void linear_weight_grad(float* dw, const float* g, int64_t rows, int n, const float* x, int k) {
    if (rows > 0 && n > 0 && k > 0) exec_.gemm(n, k, static_cast<int>(rows), 1.0f, {g, n, true}, {x, k}, 1.0f, dw, k);
  }
  void column_sum_add(float* dst, const float* src, int64_t rows, int cols) {
    launch(cols, graphit_ops::ColumnSumAdd{dst, src, rows, cols});
  }
  // Mask `which` of layer l: `count` elements from position `first` of the step's whole batch.
  void draw(Buf<float>& dst, int64_t count, int l, GraphitDropoutMask which, int64_t first) {
    dst.resize(static_cast<size_t>(count));
    const float keep = static_cast<float>(1.0 / (1.0 - c_.dropout));
    launch(count, graphit_ops::DropoutMask{dst.data(), graphit_dropout_stream(dropout_key_, l, which), first,
                                           static_cast<float>(c_.dropout), keep});
  }

  void norm_forward(bool training, Norm& nc, const float* y, const std::string& prefix, float* out, float* running_mean,
                    float* running_var, const float* eval_mean, const float* eval_var) {
    const int d = c_.d;
    const float* w = param(prefix + ".weight");
    const float* b = param(prefix + ".bias");
    nc.xhat.resize(static_cast<size_t>(N_) * d);
    if (!batch_norm()) {
      nc.rstd.resize(N_);
      launch(N_, graphit_ops::LayerNormRow{y, w, b, nc.xhat.data(), out, nc.rstd.data(), d});
      return;
    }
    nc.rstd.resize(d);
    nc.mean.resize(d);
    const float* mean = eval_mean;
    if (training) {
      nc.sums.resize(static_cast<size_t>(d) + 1);
      nc.sq.resize(d);
      launch(d, graphit_ops::BatchNormColumnSums{y, nc.sums.data(), N_, d});
      if (allreduce_) allreduce_->sum(nc.sums.data(), d + 1);
      launch(d, graphit_ops::BatchNormCentredSums{y, nc.sums.data(), nc.mean.data(), nc.sq.data(), N_, d});
      if (allreduce_) allreduce_->sum(nc.sq.data(), d);
      launch(d, graphit_ops::BatchNormFinish{nc.sums.data(), nc.sq.data(), nc.mean.data(), nc.rstd.data(), running_mean,
                                             running_var, d});
      mean = nc.mean.data();
    } else {
      launch(d, graphit_ops::BatchNormEvalRstd{eval_var, nc.rstd.data()});
    }
    launch(static_cast<int64_t>(N_) * d,
           graphit_ops::BatchNormApply{y, mean, nc.rstd.data(), w, b, nc.xhat.data(), out, d});
  }

  void norm_backward(bool training, const Norm& nc, const std::string& prefix, const float* d_out, float* d_y) {
    const int d = c_.d;
    const float* w = param(prefix + ".weight");
    const bool with_sums = batch_norm() && training;
    m1_.resize(d);
    m2_.resize(d);
    grad_sums_.resize(2 * static_cast<size_t>(d));
    launch(d, graphit_ops::NormAffineGrad{d_out, nc.xhat.data(), w, grad(prefix + ".weight"), grad(prefix + ".bias"),
                                          with_sums ? grad_sums_.data() : nullptr, N_, d});
    if (with_sums) {
      if (allreduce_) allreduce_->sum(grad_sums_.data(), 2 * d);
      launch(d, graphit_ops::BatchNormGradMeans{grad_sums_.data(), nc.sums.data() + d, m1_.data(), m2_.data(), d});
    }
    if (!batch_norm())
      launch(N_, graphit_ops::LayerNormInputGrad{d_out, nc.xhat.data(), w, nc.rstd.data(), d_y, d});
    else
      launch(static_cast<int64_t>(N_) * d,
             graphit_ops::BatchNormInputGrad{d_out, nc.xhat.data(), w, nc.rstd.data(), with_sums ? m1_.data() : nullptr,
                                             with_sums ? m2_.data() : nullptr, d_y, d});
  }

  void forward(bool training, std::mt19937_64* rng) {
    const int d = c_.d, H = c_.heads, dh = d / H, L = c_.layers, F = c_.ffn;
    const int64_t Nd = static_cast<int64_t>(N_) * d;
    training_ = training;
    drop_ = training && rng != nullptr && c_.dropout > 0;
    dropout_key_ = drop_ ? (*rng)() : 0;  // as the CPU's forward pass: one draw keys the step's masks
    layers_.resize(L);
    const float scale = 1.0f / std::sqrt(static_cast<float>(dh));

    float* x0 = nullptr;
    if (L > 0) {
      layers_[0].x_in.resize(Nd);
      x0 = layers_[0].x_in.data();
    } else {
      x_out_.resize(Nd);
      x0 = x_out_.data();
    }
    launch(Nd, graphit_ops::EmbedInit{
                   x0, c_.vocab > 0 ? in().labels.data() : nullptr, c_.vocab > 0 ? param("embedding.weight") : nullptr,
                   c_.pe_dim > 0 ? param("pe.bias") : nullptr, c_.path_dim > 0 ? param("path.bias") : nullptr, d});
    if (c_.features > 0) linear(x0, in().features.data(), N_, c_.features, param("features.weight"), d, 1.0f);
    if (c_.pe_dim > 0) linear(x0, in().pe.data(), N_, c_.pe_dim, param("pe.weight"), d, 1.0f);
    if (c_.path_dim > 0) linear(x0, in().path.data(), N_, c_.path_dim, param("path.weight"), d, 1.0f);

    y_.resize(Nd);
    for (int l = 0; l < L; ++l) {
      Layer& ly = layers_[l];
      const float* x = ly.x_in.data();
      ly.q.resize(Nd);
      ly.v.resize(Nd);
      ly.heads.resize(Nd);
      linear(ly.q.data(), x, N_, d, param(layer_name(l, "attn.q.weight")), d);
      linear(ly.v.data(), x, N_, d, param(layer_name(l, "attn.v.weight")), d);
      ly.probs.resize(static_cast<size_t>(H) * sq_total_);
      ly.floored.resize(static_cast<size_t>(N_) * H);
      ly.argmax.resize(static_cast<size_t>(N_) * H);
      // The attention mask in the probabilities' layout (graph by graph, head by head), as the CPU's.
      if (drop_)
        draw(ly.drop_attn, static_cast<int64_t>(H) * sq_total_, l, GraphitDropoutMask::kAttention, H * sq_offset_);
      launch(static_cast<int64_t>(N_) * H,
             graphit_ops::AttentionForwardRow{ly.q.data(), ly.v.data(), c_.kernel ? in().kernels.data() : nullptr,
                                              drop_ ? ly.drop_attn.data() : nullptr, in().graph_of.data(),
                                              in().offsets.data(), in().sq_off.data(), ly.probs.data(), ly.heads.data(),
                                              ly.floored.data(), ly.argmax.data(), H, dh, d, scale});

      linear(y_.data(), ly.heads.data(), N_, d, param(layer_name(l, "attn.out.weight")), d);
      if (drop_) draw(ly.drop1, Nd, l, GraphitDropoutMask::kAttentionOut, node_offset_ * d);
      launch(Nd, graphit_ops::BiasScaleResidual{y_.data(), param(layer_name(l, "attn.out.bias")), in().residual.data(),
                                                drop_ ? ly.drop1.data() : nullptr, x, d});
      ly.x1.resize(Nd);
      float* stats = stats_.data() + static_cast<size_t>(4) * l * d;  // mean1, var1, mean2, var2
      const bool running = training && batch_norm();
      const bool eval_bn = !training && batch_norm();
      norm_forward(training, ly.norm1, y_.data(), layer_name(l, "norm1"), ly.x1.data(), running ? stats : nullptr,
                   running ? stats + d : nullptr, eval_bn ? stats : nullptr, eval_bn ? stats + d : nullptr);

      const int64_t NF = static_cast<int64_t>(N_) * F;
      ly.ffn.resize(NF);
      linear(ly.ffn.data(), ly.x1.data(), N_, d, param(layer_name(l, "ffn1.weight")), F);
      launch(NF, graphit_ops::BiasRelu{ly.ffn.data(), param(layer_name(l, "ffn1.bias")), F});
      const float* ffn_in = ly.ffn.data();
      if (drop_) {
        draw(ly.drop_ffn, NF, l, GraphitDropoutMask::kFfnHidden, node_offset_ * F);
        work_.resize(NF);
        launch(NF, graphit_ops::Multiply{work_.data(), ly.ffn.data(), ly.drop_ffn.data()});
        ffn_in = work_.data();
      }
      linear(y_.data(), ffn_in, N_, F, param(layer_name(l, "ffn2.weight")), d);
      if (drop_) draw(ly.drop2, Nd, l, GraphitDropoutMask::kFfnOut, node_offset_ * d);
      launch(Nd, graphit_ops::BiasScaleResidual{y_.data(), param(layer_name(l, "ffn2.bias")), nullptr,
                                                drop_ ? ly.drop2.data() : nullptr, ly.x1.data(), d});
      float* next = nullptr;
      if (l + 1 < L) {
        layers_[l + 1].x_in.resize(Nd);
        next = layers_[l + 1].x_in.data();
      } else {
        x_out_.resize(Nd);
        next = x_out_.data();
      }
      norm_forward(training, ly.norm2, y_.data(), layer_name(l, "norm2"), next, running ? stats + 2 * d : nullptr,
                   running ? stats + 3 * d : nullptr, eval_bn ? stats + 2 * d : nullptr,
                   eval_bn ? stats + 3 * d : nullptr);
    }

    // Readout.
    const bool mean = c_.pooling == GraphitPooling::kMean;
    pooled_.resize(static_cast<size_t>(B_) * d);
    launch(static_cast<int64_t>(B_) * d,
           graphit_ops::Pool{x_out_.data(), in().offsets.data(), pooled_.data(), d, mean});
    hidden_.resize(static_cast<size_t>(B_) * c_.hidden);
    linear(hidden_.data(), pooled_.data(), B_, d, param("head.hidden.weight"), c_.hidden);
    launch(static_cast<int64_t>(B_) * c_.hidden,
           graphit_ops::BiasRelu{hidden_.data(), param("head.hidden.bias"), c_.hidden});
    output_.resize(static_cast<size_t>(B_) * c_.outputs);
    linear(output_.data(), hidden_.data(), B_, c_.hidden, param("head.out.weight"), c_.outputs);
    launch(static_cast<int64_t>(B_) * c_.outputs,
           graphit_ops::BiasAdd{output_.data(), param("head.out.bias"), c_.outputs});
  }

  void backward(device::GradientBuckets* buckets) {
    const int d = c_.d, H = c_.heads, dh = d / H, L = c_.layers, F = c_.ffn, R = c_.hidden, C = c_.outputs;
    const int64_t Nd = static_cast<int64_t>(N_) * d, NF = static_cast<int64_t>(N_) * F;
    const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
    exec_.zero(grads_.data(), n_params_ * sizeof(float));
    if (buckets) buckets->begin(grads_.data(), n_params_);

    // Head.
    linear_weight_grad(grad("head.out.weight"), d_out_.data(), B_, C, hidden_.data(), R);
    column_sum_add(grad("head.out.bias"), d_out_.data(), B_, C);
    d_hidden_.resize(static_cast<size_t>(B_) * R);
    linear_input_grad(d_hidden_.data(), d_out_.data(), B_, C, param("head.out.weight"), R, 0.0f);
    launch(static_cast<int64_t>(B_) * R, graphit_ops::GradGate{d_hidden_.data(), nullptr, nullptr, hidden_.data(), R});
    linear_weight_grad(grad("head.hidden.weight"), d_hidden_.data(), B_, R, pooled_.data(), d);
    column_sum_add(grad("head.hidden.bias"), d_hidden_.data(), B_, R);
    d_pooled_.resize(static_cast<size_t>(B_) * d);
    linear_input_grad(d_pooled_.data(), d_hidden_.data(), B_, R, param("head.hidden.weight"), d, 0.0f);
    if (buckets) buckets->ready(offsets_[index_of("head.hidden.weight")]);

    // Pooling.
    dx_.resize(Nd);
    launch(Nd, graphit_ops::Unpool{d_pooled_.data(), in().graph_of.data(), in().offsets.data(), dx_.data(), d,
                                   c_.pooling == GraphitPooling::kMean});

    dz_.resize(Nd);
    dy_.resize(Nd);
    dg_.resize(Nd);
    dq_.resize(Nd);
    dv_.resize(Nd);
    dheads_.resize(Nd);
    dpre_.resize(NF);
    ds_.resize(static_cast<size_t>(H) * sq_total_);
    for (int l = L - 1; l >= 0; --l) {
      Layer& ly = layers_[l];
      // norm2, FFN residual: dz is both the residual's gradient (into dx1) and the FFN output's (dg).
      norm_backward(training_, ly.norm2, layer_name(l, "norm2"), dx_.data(), dz_.data());
      launch(Nd, graphit_ops::Copy{dg_.data(), dz_.data()});
      if (drop_) launch(Nd, graphit_ops::GradGate{dg_.data(), ly.drop2.data(), nullptr, nullptr, d});
      const float* ffn_out = ly.ffn.data();
      if (drop_) {
        work_.resize(NF);
        launch(NF, graphit_ops::Multiply{work_.data(), ly.ffn.data(), ly.drop_ffn.data()});
        ffn_out = work_.data();
      }
      linear_weight_grad(grad(layer_name(l, "ffn2.weight")), dg_.data(), N_, d, ffn_out, F);
      column_sum_add(grad(layer_name(l, "ffn2.bias")), dg_.data(), N_, d);
      linear_input_grad(dpre_.data(), dg_.data(), N_, d, param(layer_name(l, "ffn2.weight")), F, 0.0f);
      launch(NF, graphit_ops::GradGate{dpre_.data(), drop_ ? ly.drop_ffn.data() : nullptr, nullptr, ly.ffn.data(), F});
      linear_weight_grad(grad(layer_name(l, "ffn1.weight")), dpre_.data(), N_, F, ly.x1.data(), d);
      column_sum_add(grad(layer_name(l, "ffn1.bias")), dpre_.data(), N_, F);
      linear_input_grad(dz_.data(), dpre_.data(), N_, F, param(layer_name(l, "ffn1.weight")), d, 1.0f);  // dx1

      // norm1, attention residual: dy is the residual's gradient and (gated) the attention output's.
      norm_backward(training_, ly.norm1, layer_name(l, "norm1"), dz_.data(), dy_.data());
      launch(Nd, graphit_ops::Copy{dg_.data(), dy_.data()});
      launch(Nd,
             graphit_ops::GradGate{dg_.data(), drop_ ? ly.drop1.data() : nullptr, in().residual.data(), nullptr, d});
      linear_weight_grad(grad(layer_name(l, "attn.out.weight")), dg_.data(), N_, d, ly.heads.data(), d);
      column_sum_add(grad(layer_name(l, "attn.out.bias")), dg_.data(), N_, d);
      linear_input_grad(dheads_.data(), dg_.data(), N_, d, param(layer_name(l, "attn.out.weight")), d, 0.0f);

      const float* drop_attn = drop_ ? ly.drop_attn.data() : nullptr;
      launch(static_cast<int64_t>(N_) * H,
             graphit_ops::AttentionBackwardScores{
                 ly.v.data(), ly.probs.data(), drop_attn, dheads_.data(), ly.floored.data(), ly.argmax.data(),
                 in().graph_of.data(), in().offsets.data(), in().sq_off.data(), ds_.data(), H, dh, d, scale});
      launch(static_cast<int64_t>(N_) * H,
             graphit_ops::AttentionBackwardRows{ly.q.data(), ly.probs.data(), drop_attn, dheads_.data(), ds_.data(),
                                                in().graph_of.data(), in().offsets.data(), in().sq_off.data(),
                                                dq_.data(), dv_.data(), H, dh, d});
      linear_weight_grad(grad(layer_name(l, "attn.q.weight")), dq_.data(), N_, d, ly.x_in.data(), d);
      linear_weight_grad(grad(layer_name(l, "attn.v.weight")), dv_.data(), N_, d, ly.x_in.data(), d);
      launch(Nd, graphit_ops::Copy{dx_.data(), dy_.data()});
      linear_input_grad(dx_.data(), dq_.data(), N_, d, param(layer_name(l, "attn.q.weight")), d, 1.0f);
      linear_input_grad(dx_.data(), dv_.data(), N_, d, param(layer_name(l, "attn.v.weight")), d, 1.0f);
      if (buckets) buckets->ready(offsets_[index_of(layer_name(l, "attn.q.weight"))]);
    }

    // Input embedding.
    if (c_.vocab > 0)
      launch(d, graphit_ops::EmbeddingGrad{grad("embedding.weight"), dx_.data(), in().labels.data(), N_, d});
    if (c_.features > 0)
      linear_weight_grad(grad("features.weight"), dx_.data(), N_, d, in().features.data(), c_.features);
    if (c_.pe_dim > 0) {
      linear_weight_grad(grad("pe.weight"), dx_.data(), N_, d, in().pe.data(), c_.pe_dim);
      column_sum_add(grad("pe.bias"), dx_.data(), N_, d);
    }
    if (c_.path_dim > 0) {
      linear_weight_grad(grad("path.weight"), dx_.data(), N_, d, in().path.data(), c_.path_dim);
      column_sum_add(grad("path.bias"), dx_.data(), N_, d);
    }
    if (buckets) buckets->finish();
  }

  Exec& exec_;
  GraphitConfig c_;
  std::vector<std::string> names_;
  std::vector<int64_t> offsets_, sizes_;
  int64_t n_params_ = 0;
  Buf<float> params_, grads_, m_, v_, stats_;
  // The batch: two slots (stage_batch fills the one the passes do not read), the shape the passes read (0 graphs
  // after clear_batch).
  Slot slots_[2];
  int cur_ = 0;
  bool staged_ = false;
  int B_ = 0, N_ = 0;
  int64_t sq_total_ = 0;
  int64_t node_offset_ = 0, sq_offset_ = 0;  // the batch's place in its step (dropout)
  // The forward pass's record and the backward's scratch.
  bool training_ = false, drop_ = false;
  uint64_t dropout_key_ = 0;
  std::vector<Layer> layers_;
  Buf<float> y_, work_, x_out_, pooled_, hidden_, output_, d_out_, d_hidden_, d_pooled_;
  Buf<double> loss_g_;
  Buf<float> dx_, dz_, dy_, dg_, dq_, dv_, dheads_, dpre_, ds_, m1_, m2_;
  Buf<double> grad_sums_;
  device::DeviceAllreduce* allreduce_ = nullptr;
};

// GraphitModel::predict through a device pass: the same checks and batches, evaluation-mode outputs.
template <class Exec>
MatF device_graphit_predict(Exec& exec, const GraphitModel& model, const std::vector<GraphitGraph>& graphs,
                            int batch_size) {
  INDUCTIVE_CHECK(batch_size >= 1, ErrorCode::kInvalidArgument, "graphit predict: batch size must be >= 1: got ",
                  batch_size);
  INDUCTIVE_CHECK(!graphs.empty(), ErrorCode::kInvalidArgument, "graphit predict: no graph given");
  exec.activate();
  GraphitDevicePass<Exec> pass(exec, model);
  const int n = static_cast<int>(graphs.size());
  MatF out(n, model.config.outputs);
  const auto stage = [&](int begin) {
    std::vector<int> idx;
    for (int g = begin; g < std::min(n, begin + batch_size); ++g) idx.push_back(g);
    pass.stage_batch(GraphitBatch::pack(model.config, graphs, idx), false);
  };
  stage(0);
  for (int begin = 0; begin < n; begin += batch_size) {
    pass.use_staged();
    pass.enqueue_outputs();
    if (begin + batch_size < n) stage(begin + batch_size);  // packed and sent while this batch computes
    out.middleRows(begin, std::min(n, begin + batch_size) - begin) = pass.finish_outputs();
  }
  return out;
}

// GraphitModel::attention_maps through a device pass: one graph in evaluation mode (and its outputs, when asked).
template <class Exec>
std::vector<MatF> device_graphit_attention_maps(Exec& exec, const GraphitModel& model, const GraphitGraph& graph,
                                                MatF* outputs = nullptr) {
  exec.activate();
  GraphitDevicePass<Exec> pass(exec, model);
  const std::vector<GraphitGraph> one{graph};  // the packed batch points into it
  pass.upload_batch(GraphitBatch::pack(model.config, one), false);
  MatF out = pass.outputs();
  if (outputs) *outputs = std::move(out);
  return pass.attention_maps(graph.num_nodes);
}

}  // namespace inductive::graphit_device
