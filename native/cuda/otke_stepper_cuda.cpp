// Supervised OTKE steps on a CUDA device (see otke_stepper_cuda.h). The maths is core's otke_loss, operation by
// operation: S = psi z^T (cuBLAS), Sinkhorn (sinkhorn_kernels.h; with a tape for the unrolled gradient, without for
// the implicit one), positional weighting, Phi = c W^T psi (or the mean/max baselines, otke_pool_ops.h), the head,
// the loss (softmax or multilabel binary cross-entropy, otke_head_ops.h); backward in reverse through the same
// operations; Adam (elementwise.h). The State and a step's operations: otke_stepper_state.h.
#include "otke_stepper_cuda.h"

#include <string>

#include "otke_stepper_state.h"  // the State these methods drive

namespace inductive::cuda {

void check_cuda_otke_support(const OtkeConfig& c, const OtkeLossOptions& lo) {
  const char* plan =
      " yet (it trains identity, Nystrom and conv embeddings of vectors, sequences or tokens with OT, mean or max "
      "pooling, linear, MLP and multilabel heads, and OT pooling with either Sinkhorn gradient); train this model with "
      "--backend cpu";
  INDUCTIVE_CHECK(
      c.pooling != OtkePooling::kOtk || (c.otk.plan == OtkPlan::kSinkhorn && !c.otk.sinusoidal), ErrorCode::kBackend,
      "cuda: OTKE training does not support the attention plan or the sinusoidal encoding (ablations)", plan);
}

namespace {

std::string reference_name(int r) { return "otk.references." + std::to_string(r); }

}  // namespace

CudaOtkeStepper::CudaOtkeStepper(int device, const OtkeModel& model, const Adam& adam, const OtkeLossOptions& lo,
                                 RankSums sums)
    : s_(std::make_unique<State>()) {
  s_->rank_sums = sums;
  const OtkeConfig& c = model.config;
  check_cuda_otke_support(c, lo);
  INDUCTIVE_CHECK(c.classes == 0 || (model.head.weight.rows() == c.classes && model.head.weight.cols() == c.head_dim()),
                  ErrorCode::kInvalidArgument, "otke (cuda): the model's head is ", model.head.weight.rows(), " x ",
                  model.head.weight.cols(), ", expected ", c.classes, " x ", c.head_dim());
  State& s = *s_;
  s.device = device;
  s.host = model;
  s.lo = learning_layers(c, lo);  // "anchors" are the Nystrom anchors or the conv filters
  s.otk = c.pooling == OtkePooling::kOtk;
  s.max_pool = c.pooling == OtkePooling::kMax;
  s.implicit = s.otk && lo.sinkhorn_gradient == SinkhornGradient::kImplicit;
  s.q = s.otk ? c.otk.q : 0;
  s.p = c.otk.p;
  s.k = s.otk ? model.pooling.dim() : c.embed_dim();
  s.d = c.feature_dim();
  s.width = c.input_width();
  s.tokens = c.input_type == OtkeInput::kTokens;
  s.train_tokens = s.tokens && s.lo.tokens;
  s.vocab = s.tokens ? static_cast<int>(c.tokens.size()) : 0;
  s.nystrom = c.embedding == OtkeEmbedding::kNystrom;
  s.conv = c.embedding == OtkeEmbedding::kConv;
  s.train_anchors = s.nystrom && s.lo.anchors;
  s.train_conv = s.conv && s.lo.anchors;
  s.sigma = c.nystrom.sigma;
  s.keep_norm = c.nystrom.keep_norm;
  s.classes = std::max(c.classes, 1);  // embedding-only models (no head) keep 1-class buffers that stay unused
  s.has_head = c.classes >= 2;
  s.multilabel = s.has_head && c.multilabel;
  s.dim = c.output_dim();
  s.hidden = s.has_head ? c.hidden : 0;
  s.hd = s.hidden > 0 ? s.hidden : s.dim;
  s.dropout = s.hidden > 0 ? c.dropout : 0.0f;
  s.scale =
      c.otk.scale == OtkScale::kPaper ? static_cast<float>(std::sqrt(double(s.p) / c.otk.q)) : static_cast<float>(s.p);
  s.so.eps = c.otk.eps;
  s.so.max_iter = c.otk.iters;
  s.so.similarity = true;
  check(cudaSetDevice(device), "cudaSetDevice");
  s.stream = std::make_unique<Stream>();
  s.blas = std::make_unique<Blas>(s.stream->get());
  const size_t refs = static_cast<size_t>(s.q) * s.p * s.k, head = static_cast<size_t>(s.classes) * s.hd;
  for (DeviceBuffer* b : {&s.refs, &s.g_refs, &s.m_refs, &s.v_refs}) *b = DeviceBuffer(refs * sizeof(float));
  for (DeviceBuffer* b : {&s.weight, &s.g_weight, &s.m_weight, &s.v_weight}) *b = DeviceBuffer(head * sizeof(float));
  for (DeviceBuffer* b : {&s.bias, &s.g_bias, &s.m_bias, &s.v_bias}) *b = DeviceBuffer(s.classes * sizeof(float));
  s.loss = DeviceBuffer(sizeof(double));
  if (s.nystrom) {
    const size_t kd = static_cast<size_t>(s.k) * s.d * sizeof(float),
                 kk = static_cast<size_t>(s.k) * s.k * sizeof(float);
    s.anchors = DeviceBuffer(kd);
    s.factor = DeviceBuffer(kk);
    s.g_wdirect = DeviceBuffer(s.train_anchors ? kd : 0);
    s.g_factor = DeviceBuffer(s.train_anchors ? kk : 0);
  }
  if (s.conv) {
    const size_t kd = static_cast<size_t>(s.k) * s.d * sizeof(float), kb = static_cast<size_t>(s.k) * sizeof(float);
    s.conv_w = DeviceBuffer(kd);
    s.conv_b = DeviceBuffer(kb);
    for (DeviceBuffer* b : {&s.g_conv_w, &s.m_conv_w, &s.v_conv_w}) *b = DeviceBuffer(s.train_conv ? kd : 0);
    for (DeviceBuffer* b : {&s.g_conv_b, &s.m_conv_b, &s.v_conv_b}) *b = DeviceBuffer(s.train_conv ? kb : 0);
  }
  if (s.hidden > 0) {
    const size_t hw = static_cast<size_t>(s.hidden) * s.dim * sizeof(float), hb = s.hidden * sizeof(float);
    for (DeviceBuffer* b : {&s.hid_w, &s.g_hid_w, &s.m_hid_w, &s.v_hid_w}) *b = DeviceBuffer(hw);
    for (DeviceBuffer* b : {&s.hid_b, &s.g_hid_b, &s.m_hid_b, &s.v_hid_b}) *b = DeviceBuffer(hb);
  }
  if (s.tokens) {
    const size_t vd = static_cast<size_t>(s.vocab) * s.d * sizeof(float);
    s.table = DeviceBuffer(vd);
    for (DeviceBuffer* b : {&s.g_table, &s.m_table, &s.v_table}) *b = DeviceBuffer(s.train_tokens ? vd : 0);
  }
  push(model, adam);
}

CudaOtkeStepper::~CudaOtkeStepper() {
  (void)cudaSetDevice(s_->device);
  (void)cudaStreamSynchronize(s_->s());
}

void CudaOtkeStepper::push(const OtkeModel& model, const Adam& adam) {
  State& s = *s_;
  check(cudaSetDevice(s.device), "cudaSetDevice");
  s.host = model;
  s.adam_options = adam.options();
  s.adam_steps = adam.steps();
  const size_t ref = static_cast<size_t>(s.p) * s.k, head = static_cast<size_t>(s.classes) * s.hd,
               hw = static_cast<size_t>(s.hidden) * s.dim;
  for (int r = 0; r < s.q; ++r) s.copy_in(s.refs, model.pooling.references()[r].data(), ref, r * ref);
  if (s.has_head) {
    s.copy_in(s.weight, model.head.weight.data(), head);
    s.copy_in(s.bias, model.head.bias.data(), s.classes);
  }
  if (s.hidden > 0) {
    INDUCTIVE_CHECK(model.hidden.weight.rows() == s.hidden && model.hidden.weight.cols() == s.dim &&
                        model.hidden.bias.size() == s.hidden,
                    ErrorCode::kShapeMismatch, "otke train (cuda): the model's hidden layer is ",
                    model.hidden.weight.rows(), " x ", model.hidden.weight.cols(), ", expected ", s.hidden, " x ",
                    s.dim);
    s.copy_in(s.hid_w, model.hidden.weight.data(), hw);
    s.copy_in(s.hid_b, model.hidden.bias.data(), s.hidden);
  }
  if (s.nystrom) {
    INDUCTIVE_CHECK(model.nystrom.num_anchors() == s.k && model.nystrom.dim() == s.d, ErrorCode::kShapeMismatch,
                    "otke train (cuda): the model's anchors are ", model.nystrom.num_anchors(), " x ",
                    model.nystrom.dim(), ", expected ", s.k, " x ", s.d);
    s.upload_anchors();
    s.m_anchors.assign(static_cast<size_t>(s.k) * s.d, 0.0f);
    s.v_anchors.assign(static_cast<size_t>(s.k) * s.d, 0.0f);
  }
  if (s.tokens) {
    INDUCTIVE_CHECK(model.token_table.rows() == s.vocab && model.token_table.cols() == s.d, ErrorCode::kShapeMismatch,
                    "otke train (cuda): the model's token table is ", model.token_table.rows(), " x ",
                    model.token_table.cols(), ", expected ", s.vocab, " x ", s.d, " (is the model fitted?)");
    s.copy_in(s.table, model.token_table.data(), static_cast<size_t>(s.vocab) * s.d);
  }
  if (s.conv) {
    INDUCTIVE_CHECK(model.conv_weight.rows() == s.k && model.conv_weight.cols() == s.d && model.conv_bias.size() == s.k,
                    ErrorCode::kShapeMismatch, "otke train (cuda): the model's conv filters are ",
                    model.conv_weight.rows(), " x ", model.conv_weight.cols(), " with ", model.conv_bias.size(),
                    " biases, expected ", s.k, " x ", s.d, " with ", s.k);
    s.copy_in(s.conv_w, model.conv_weight.data(), static_cast<size_t>(s.k) * s.d);
    s.copy_in(s.conv_b, model.conv_bias.data(), s.k);
  }
  // Moments by the CPU's block names; a block Adam has not seen yet starts at zero.
  for (DeviceBuffer* b :
       {&s.m_refs, &s.v_refs, &s.m_weight, &s.v_weight, &s.m_bias, &s.v_bias, &s.m_conv_w, &s.v_conv_w, &s.m_conv_b,
        &s.v_conv_b, &s.m_table, &s.v_table, &s.m_hid_w, &s.v_hid_w, &s.m_hid_b, &s.v_hid_b})
    if (b->bytes()) check(cudaMemsetAsync(b->data(), 0, b->bytes(), s.s()), "cudaMemsetAsync");
  for (const Adam::Moments& m : adam.moments()) {
    DeviceBuffer *dm = nullptr, *dv = nullptr;
    size_t count = 0, offset = 0;
    if (m.name == "head.weight") dm = &s.m_weight, dv = &s.v_weight, count = head;
    if (m.name == "head.bias") dm = &s.m_bias, dv = &s.v_bias, count = s.classes;
    if (m.name == "head.hidden.weight" && s.hidden > 0) dm = &s.m_hid_w, dv = &s.v_hid_w, count = hw;
    if (m.name == "head.hidden.bias" && s.hidden > 0) dm = &s.m_hid_b, dv = &s.v_hid_b, count = s.hidden;
    if (m.name == "tokens.embedding" && s.train_tokens)
      dm = &s.m_table, dv = &s.v_table, count = static_cast<size_t>(s.vocab) * s.d;
    if (m.name == "conv.weight" && s.train_conv)
      dm = &s.m_conv_w, dv = &s.v_conv_w, count = static_cast<size_t>(s.k) * s.d;
    if (m.name == "conv.bias" && s.train_conv) dm = &s.m_conv_b, dv = &s.v_conv_b, count = s.k;
    if (m.name == "nystrom.anchors" && s.train_anchors) {
      INDUCTIVE_CHECK(m.m.size() == s.m_anchors.size() && m.v.size() == s.v_anchors.size(), ErrorCode::kShapeMismatch,
                      "otke train (cuda): Adam moments of 'nystrom.anchors' have ", m.m.size(), " values, expected ",
                      s.m_anchors.size());
      s.m_anchors = m.m;
      s.v_anchors = m.v;
      continue;
    }
    for (int r = 0; r < s.q; ++r)
      if (m.name == reference_name(r)) dm = &s.m_refs, dv = &s.v_refs, count = ref, offset = r * ref;
    if (!dm) continue;  // a block this stepper does not train
    INDUCTIVE_CHECK(m.m.size() == count, ErrorCode::kShapeMismatch, "otke train (cuda): Adam moments of '", m.name,
                    "' have ", m.m.size(), " values, expected ", count);
    s.copy_in(*dm, m.m.data(), count, offset);
    s.copy_in(*dv, m.v.data(), count, offset);
  }
  check(cudaStreamSynchronize(s.s()), "cudaStreamSynchronize");
}

void CudaOtkeStepper::pull(OtkeModel& model, Adam& adam) {
  State& s = *s_;
  check(cudaSetDevice(s.device), "cudaSetDevice");
  const size_t ref = static_cast<size_t>(s.p) * s.k, head = static_cast<size_t>(s.classes) * s.hd,
               hw = static_cast<size_t>(s.hidden) * s.dim;
  std::vector<MatF> refs(s.q, MatF(s.p, s.k));
  for (int r = 0; r < s.q; ++r) s.copy_out(refs[r].data(), s.refs, ref, r * ref);
  if (s.has_head) {
    s.copy_out(s.host.head.weight.data(), s.weight, head);
    s.copy_out(s.host.head.bias.data(), s.bias, s.classes);
  }
  if (s.hidden > 0) {
    s.copy_out(s.host.hidden.weight.data(), s.hid_w, hw);
    s.copy_out(s.host.hidden.bias.data(), s.hid_b, s.hidden);
  }
  if (s.tokens) s.copy_out(s.host.token_table.data(), s.table, static_cast<size_t>(s.vocab) * s.d);
  if (s.conv) {
    s.copy_out(s.host.conv_weight.data(), s.conv_w, static_cast<size_t>(s.k) * s.d);
    s.copy_out(s.host.conv_bias.data(), s.conv_b, s.k);
  }
  // The CPU stepper's block order (head, hidden layer, tokens, anchors, conv, then references), so checkpoints hold the
  // same tensors in the same order.
  std::vector<Adam::Moments> moments;
  // One block's moments, copied from the device (the vectors' buffers survive the push_backs that move them).
  const auto add = [&](const std::string& name, const DeviceBuffer& m, const DeviceBuffer& v, size_t count,
                       size_t offset = 0) {
    moments.push_back({name, std::vector<float>(count), std::vector<float>(count)});
    s.copy_out(moments.back().m.data(), m, count, offset);
    s.copy_out(moments.back().v.data(), v, count, offset);
  };
  if (s.adam_steps > 0) {
    add("head.weight", s.m_weight, s.v_weight, head);
    add("head.bias", s.m_bias, s.v_bias, s.classes);
    if (s.hidden > 0) {
      add("head.hidden.weight", s.m_hid_w, s.v_hid_w, hw);
      add("head.hidden.bias", s.m_hid_b, s.v_hid_b, s.hidden);
    }
    if (s.train_tokens) add("tokens.embedding", s.m_table, s.v_table, static_cast<size_t>(s.vocab) * s.d);
    if (s.train_anchors) moments.push_back({"nystrom.anchors", s.m_anchors, s.v_anchors});
    if (s.train_conv) {
      add("conv.weight", s.m_conv_w, s.v_conv_w, static_cast<size_t>(s.k) * s.d);
      add("conv.bias", s.m_conv_b, s.v_conv_b, s.k);
    }
    if (s.lo.references)
      for (int r = 0; r < s.q; ++r) add(reference_name(r), s.m_refs, s.v_refs, ref, r * ref);
  }
  check(cudaStreamSynchronize(s.s()), "cudaStreamSynchronize");
  if (s.otk) s.host.pooling.set_references(std::move(refs));
  model.pooling = s.host.pooling;
  model.head = s.host.head;
  if (s.hidden > 0) model.hidden = s.host.hidden;
  if (s.nystrom) model.nystrom = s.host.nystrom;
  if (s.tokens) model.token_table = s.host.token_table;
  if (s.conv) {
    model.conv_weight = s.host.conv_weight;
    model.conv_bias = s.host.conv_bias;
  }
  adam.restore(std::move(moments), s.adam_steps);
}

double CudaOtkeStepper::step(const SetBatch& features, const std::vector<int32_t>& labels, double lr) {
  const double loss = run_batch(features, labels, nullptr, 0);
  s_->adam(lr);
  return loss;
}

double CudaOtkeStepper::loss_and_gradients(const SetBatch& features, const std::vector<int32_t>& labels,
                                           OtkeGradients* grads) {
  return run_batch(features, labels, grads, -1);
}

double CudaOtkeStepper::run_batch(const SetBatch& features, const std::vector<int32_t>& labels, OtkeGradients* grads,
                                  int dropout_rank) {
  State& s = *s_;
  check_otke_batch(s.host, features, labels);
  if (s.tokens) check_otke_tokens(s.host, features);
  check(cudaSetDevice(s.device), "cudaSetDevice");
  s.upload(features, &labels);
  if (dropout_rank >= 0)
    s.set_step_dropout(dropout_rank);
  else
    s.set_dropout(s.lo.dropout, s.lo.dropout_seed);  // otke_loss's options: no dropout unless asked for
  s.forward(true);
  const double loss = s.backward();
  if (grads) s.download_gradients(grads);
  return loss;
}

double CudaOtkeStepper::share_gradients(const std::vector<int>& indices, const std::vector<int32_t>& labels, int rank,
                                        OtkeGradients* grads) {
  State& s = *s_;
  INDUCTIVE_CHECK(s.bound != nullptr, ErrorCode::kInternal, "otke stepper: share_gradients before bind");
  if (indices.empty()) {
    if (grads) {
      *grads = zero_otke_gradients(s.host, s.lo);
    } else {
      check(cudaSetDevice(s.device), "cudaSetDevice");
      s.zero_gradients();
    }
    return 0.0;
  }
  if (!s.resident) return run_batch(s.bound->gather(indices), labels, grads, rank);
  check_resident_batch(indices, labels);
  check(cudaSetDevice(s.device), "cudaSetDevice");
  s.gather(indices, labels);
  s.set_step_dropout(rank);
  s.forward(true);
  const double loss = s.backward();
  if (grads) s.download_gradients(grads);
  return loss;
}

bool CudaOtkeStepper::sums_on_device(Communicator& comm) {
  State& s = *s_;
  if (s.rank_sums == RankSums::kHost || (s.rank_sums == RankSums::kNccl && comm.size() < 2)) return false;
  if (!s.nccl) {
    check(cudaSetDevice(s.device), "cudaSetDevice");
    s.nccl = std::make_unique<NcclAllreduce>(comm, s.device, s.s());
  }
  s.comm = &comm;
  return true;
}

int64_t CudaOtkeStepper::sum_gradients_on_device(float scale) {
  State& s = *s_;
  INDUCTIVE_CHECK(s.nccl != nullptr && s.comm != nullptr, ErrorCode::kInternal,
                  "otke train (cuda): sum_gradients_on_device before sums_on_device");
  check(cudaSetDevice(s.device), "cudaSetDevice");
  int64_t values = 0;
  for (auto [data, count] : s.device_gradients()) {
    if (scale != 1.0f) scale_values(data, count, scale, s.s());
    s.nccl->start_gradient_sum(data, count);
    values += count;
  }
  s.nccl->finish_gradients();
  if (s.train_anchors) {  // finished on the host (Nystrom::anchor_gradient): summed there
    s.anchor_grad *= scale;
    s.comm->allreduce_sum_float(s.anchor_grad.data(), s.anchor_grad.size());
    values += s.anchor_grad.size();
  }
  return values * static_cast<int64_t>(sizeof(float));
}

void CudaOtkeStepper::apply_gradients_on_device(double lr) {
  State& s = *s_;
  check(cudaSetDevice(s.device), "cudaSetDevice");
  s.adam(lr);
}

void CudaOtkeStepper::apply_gradients(OtkeGradients& grads, double lr) {
  State& s = *s_;
  check(cudaSetDevice(s.device), "cudaSetDevice");
  s.upload_gradients(grads);
  s.adam(lr);
}

void CudaOtkeStepper::check_resident_batch(const std::vector<int>& indices, const std::vector<int32_t>& labels) const {
  const State& s = *s_;
  INDUCTIVE_CHECK(s.has_head, ErrorCode::kInvalidArgument, "otke train: the model has no classifier head");
  INDUCTIVE_CHECK(labels.size() == indices.size(), ErrorCode::kShapeMismatch, "otke loss: ", labels.size(),
                  " labels for ", indices.size(), " sets");
  for (size_t i = 0; i < indices.size(); ++i)
    INDUCTIVE_CHECK(indices[i] >= 0 && indices[i] < s.bound->batch, ErrorCode::kInvalidArgument,
                    "otke train: set index ", indices[i], " out of range");
  check_otke_labels(s.host.config, labels, "otke loss");
}

void CudaOtkeStepper::bind(const SetBatch& d) {
  State& s = *s_;
  check(cudaSetDevice(s.device), "cudaSetDevice");
  INDUCTIVE_CHECK(d.dim == s.width, ErrorCode::kShapeMismatch, "otke train: features have dimension ", d.dim,
                  ", expected ", s.width);
  if (s.tokens) check_otke_tokens(s.host, d);  // once here: resident batches are gathered on the device
  s.bound = &d;
  s.resident = false;
  s.data = DeviceBuffer();
  s.data_n = DeviceBuffer();
  size_t free_bytes = 0, total = 0;
  check(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo");
  const size_t bytes = d.x.size() * sizeof(float);
  if (bytes > std::min(free_bytes / 2, s.resident_limit)) return;  // streamed: step_on gathers on the host
  s.data = DeviceBuffer(bytes);
  s.data_n = DeviceBuffer(d.n.size() * sizeof(int32_t));
  check(cudaMemcpyAsync(s.data.data(), d.x.data(), bytes, cudaMemcpyHostToDevice, s.s()), "cudaMemcpyAsync");
  check(cudaMemcpyAsync(s.data_n.data(), d.n.data(), d.n.size() * sizeof(int32_t), cudaMemcpyHostToDevice, s.s()),
        "cudaMemcpyAsync");
  check(cudaStreamSynchronize(s.s()), "cudaStreamSynchronize");
  s.resident = true;
}

bool CudaOtkeStepper::resident() const { return s_->resident; }

void CudaOtkeStepper::set_resident_limit(size_t bytes) { s_->resident_limit = bytes; }

double CudaOtkeStepper::step_on(const std::vector<int>& indices, const std::vector<int32_t>& labels, double lr) {
  State& s = *s_;
  INDUCTIVE_CHECK(s.bound != nullptr, ErrorCode::kInternal, "otke stepper: step_on before bind");
  if (!s.resident) return step(s.bound->gather(indices), labels, lr);
  check_resident_batch(indices, labels);
  check(cudaSetDevice(s.device), "cudaSetDevice");
  s.gather(indices, labels);
  s.set_step_dropout();
  s.forward(true);
  const double loss = s.backward();
  s.adam(lr);
  return loss;
}

void CudaOtkeStepper::forward_inference(const SetBatch& features) {
  State& s = *s_;
  features.validate("otke embed");
  INDUCTIVE_CHECK(features.dim == s.width, ErrorCode::kShapeMismatch, "otke embed: features have dimension ",
                  features.dim, ", expected ", s.width);
  if (s.tokens) check_otke_tokens(s.host, features);
  check(cudaSetDevice(s.device), "cudaSetDevice");
  s.upload(features, nullptr);
  s.set_dropout(false, 0);
  s.forward(false);
}

MatF CudaOtkeStepper::embed(const SetBatch& features) {
  State& s = *s_;
  forward_inference(features);
  MatF out(s.batch, s.dim);
  s.copy_out(out.data(), s.phi, static_cast<size_t>(s.batch) * s.dim);
  check(cudaStreamSynchronize(s.s()), "cudaStreamSynchronize");
  return out;
}

MatF CudaOtkeStepper::logits(const SetBatch& features) {
  State& s = *s_;
  INDUCTIVE_CHECK(s.has_head, ErrorCode::kInvalidArgument, "otke predict: the model has no classifier head");
  forward_inference(features);
  head_loss(s.head_args(false), nullptr, s.s());
  MatF out(s.batch, s.classes);
  s.copy_out(out.data(), s.logits, static_cast<size_t>(s.batch) * s.classes);
  check(cudaStreamSynchronize(s.s()), "cudaStreamSynchronize");
  return out;
}

size_t CudaOtkeStepper::device_bytes() const {
  size_t total = 0;
  const State& s = *s_;
  for (const DeviceBuffer* b : {&s.refs,      &s.weight,   &s.bias,          &s.g_refs,      &s.g_weight, &s.g_bias,
                                &s.m_refs,    &s.v_refs,   &s.m_weight,      &s.v_weight,    &s.m_bias,   &s.v_bias,
                                &s.x,         &s.n,        &s.labels,        &s.sim,         &s.plan,     &s.wplan,
                                &s.tape,      &s.phi,      &s.logits,        &s.dlogits,     &s.dphi,     &s.gplan,
                                &s.dsim,      &s.loss,     &s.workspace,     &s.index,       &s.psi,      &s.xhat,
                                &s.norm,      &s.kx,       &s.dpsi,          &s.da,          &s.anchors,  &s.factor,
                                &s.g_wdirect, &s.g_factor, &s.implicit_work, &s.implicit_ok, &s.argmax,   &s.conv_w,
                                &s.conv_b,    &s.g_conv_w, &s.g_conv_b,      &s.m_conv_w,    &s.v_conv_w, &s.m_conv_b,
                                &s.v_conv_b,  &s.table,    &s.g_table,       &s.m_table,     &s.v_table,  &s.local,
                                &s.ids,       &s.dx,       &s.hid_w,         &s.hid_b,       &s.g_hid_w,  &s.g_hid_b,
                                &s.m_hid_w,   &s.v_hid_w,  &s.m_hid_b,       &s.v_hid_b,     &s.hid,      &s.dhid,
                                &s.keep,      &s.dropped,  &s.grad_norm})
    total += b->bytes();
  return total;
}

}  // namespace inductive::cuda
