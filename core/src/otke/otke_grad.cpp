// Supervised OTKE: cross-entropy and its gradients through head, pooling (OTK / mean / max) and embedding
// (Nystrom / conv), see inductive/otke_train.h.
#include <cmath>
#include <random>

#include "inductive/otke_train.h"
#include "inductive/random.h"

namespace inductive {

namespace {

// All valid rows of a batch stacked (M x d), with each set's first row.
MatF stack_rows(const SetBatch& x, std::vector<int64_t>& offset) {
  offset.assign(x.batch + 1, 0);
  for (int b = 0; b < x.batch; ++b) offset[b + 1] = offset[b] + x.n[b];
  MatF out(offset.back(), x.dim);
  for (int b = 0; b < x.batch; ++b) out.middleRows(offset[b], x.n[b]) = CMapF(x.row(b, 0), x.n[b], x.dim);
  return out;
}

SetBatch unstack_rows(const MatF& rows, const SetBatch& like, const std::vector<int64_t>& offset) {
  SetBatch out(like.batch, like.n_max, static_cast<int>(rows.cols()));
  out.n = like.n;
  for (int b = 0; b < like.batch; ++b) MapF(out.row(b, 0), like.n[b], out.dim) = rows.middleRows(offset[b], like.n[b]);
  return out;
}

// check_otke_batch, with the finiteness scan only when `scan` (see with_finiteness_scan_on_error).
void check_batch(const OtkeModel& model, const SetBatch& features, const std::vector<int32_t>& labels, bool scan) {
  const OtkeConfig& c = model.config;
  scan ? features.validate("otke loss") : features.validate_shape("otke loss");
  INDUCTIVE_CHECK(features.dim == c.input_width(), ErrorCode::kShapeMismatch, "otke loss: features have dimension ",
                  features.dim, ", expected ", c.input_width());
  INDUCTIVE_CHECK(c.classes >= 2 && model.head.weight.rows() == c.classes && model.head.weight.cols() == c.head_dim(),
                  ErrorCode::kInvalidArgument, "otke loss: the model needs a head of ", c.classes, " x ", c.head_dim(),
                  " (head.classes >= 2)");
  INDUCTIVE_CHECK(
      c.hidden == 0 || (model.hidden.weight.rows() == c.hidden && model.hidden.weight.cols() == c.output_dim() &&
                        model.hidden.bias.size() == c.hidden),
      ErrorCode::kInvalidArgument, "otke loss: the model needs a hidden layer of ", c.hidden, " x ", c.output_dim(),
      " (initialise it with init_otke_head)");
  INDUCTIVE_CHECK(static_cast<int>(labels.size()) == features.batch, ErrorCode::kShapeMismatch,
                  "otke loss: ", labels.size(), " labels for ", features.batch, " sets");
  check_otke_labels(c, labels, "otke loss");
}

// dL/dlogits for the rows of `logits`, whose labels start at `labels`, in a batch of `batch` sets: (softmax -
// one-hot) / batch, or (sigmoid - bits) / (batch C) for a multilabel head. Row by row, so that a row's gradient has
// the same bits whether its batch computed it or its set alone (the fused step below).
MatF logit_gradient(const Eigen::Ref<const MatF>& logits, const int32_t* labels, int batch, bool multilabel) {
  if (multilabel) return binary_cross_entropy_gradient_rows(logits, labels, batch);
  MatF g = softmax_rows(logits);
  for (Eigen::Index b = 0; b < g.rows(); ++b) g(b, labels[b]) -= 1.0f;
  g /= static_cast<float>(batch);
  return g;
}

}  // namespace

void check_otke_batch(const OtkeModel& model, const SetBatch& features, const std::vector<int32_t>& labels) {
  check_batch(model, features, labels, true);
}

void check_otke_labels(const OtkeConfig& c, const std::vector<int32_t>& labels, const char* who) {
  // Multilabel: any subset of the C labels, as bits; otherwise one class index.
  const int64_t end = c.multilabel ? int64_t{1} << c.classes : c.classes;
  for (size_t i = 0; i < labels.size(); ++i)
    INDUCTIVE_CHECK(labels[i] >= 0 && labels[i] < end, ErrorCode::kInvalidArgument, who, ": label",
                    c.multilabel ? " bits" : "", " of set ", i, " out of range: got ", labels[i], ", expected 0..",
                    end - 1);
}

MatF otke_dropout_mask(int rows, int cols, float rate, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const float scale = 1.0f / (1.0f - rate);
  MatF keep(rows, cols);
  for (Eigen::Index i = 0; i < keep.size(); ++i) keep.data()[i] = uniform_unit(rng) >= rate ? scale : 0.0f;
  return keep;
}

uint64_t otke_step_dropout_seed(uint64_t seed, int64_t steps, int rank) {
  return mix_seed(seed, static_cast<uint64_t>(steps) * 65537u + static_cast<uint64_t>(rank));
}

double otke_loss(const OtkeModel& model, const SetBatch& features, const std::vector<int32_t>& labels,
                 OtkeGradients* grads, const OtkeLossOptions& options) {
  const OtkeConfig& c = model.config;
  // Features used in place by OTK pooling are scanned for NaN/Inf only if the pooling fails on them.
  const bool tokens = c.input_type == OtkeInput::kTokens;
  const bool defer_scan = c.pooling == OtkePooling::kOtk && c.embedding == OtkeEmbedding::kIdentity && !tokens;
  check_batch(model, features, labels, !defer_scan);
  const int B = features.batch;
  const bool want_tokens = options.tokens && tokens;
  const bool want_embedding = options.anchors && c.embedding != OtkeEmbedding::kIdentity;
  const bool want_dpsi = want_embedding || want_tokens;  // dL/dpsi (batch x n_max x K, the largest buffer of a step)
  // Each set pooled and differentiated in one pass (OtkPooling::forward_backward), while its features are in cache,
  // where the loss's gradient with respect to a set's Phi depends on that set alone (a linear head: its row of
  // logits) and the pooling has a backward to run. It keeps no B x n x p buffer (plans, similarities, tapes).
  const bool fused = grads && options.fuse_sets && c.pooling == OtkePooling::kOtk && c.hidden == 0 &&
                     (options.references || want_dpsi);

  // Forward, keeping what backward needs. The identity embedding uses the features in place (no copy); a tokens
  // model looks its indices up first.
  SetBatch looked_up;
  if (tokens) looked_up = model.local_features(features);
  const SetBatch& local = tokens ? looked_up : features;
  std::vector<int64_t> offset;
  MatF x, pre, psi_rows;
  Nystrom::Cache ny_cache;
  SetBatch embedded;
  if (c.embedding != OtkeEmbedding::kIdentity) {
    x = stack_rows(local, offset);
    if (c.embedding == OtkeEmbedding::kNystrom) {
      psi_rows = model.nystrom.forward(x, ny_cache);
    } else {
      pre.noalias() = x * model.conv_weight.transpose();
      pre.rowwise() += model.conv_bias.transpose();
      psi_rows = pre.cwiseMax(0.0f);
    }
    embedded = unstack_rows(psi_rows, local, offset);
  }
  const SetBatch& psi = c.embedding == OtkeEmbedding::kIdentity ? local : embedded;
  OtkPooling::Cache pool_cache;
  pool_cache.gradient = options.sinkhorn_gradient;
  MatF phi, logits, dlogits;
  SetBatch dpsi;
  std::vector<MatF> grad_refs;
  std::vector<std::vector<Eigen::Index>> argmax;
  if (c.pooling == OtkePooling::kOtk) {
    // The fused pass's dL/dPhi of set b: its logits, dL/dlogits (row by row, as the batch's) and dL/dlogits W.
    const auto row_gradient = [&](int b, const float* phi_row, float* grad_phi) {
      const int D = c.output_dim();
      logits.row(b) = model.head.logits(CMapF(phi_row, 1, D));
      dlogits.row(b) = logit_gradient(logits.row(b), &labels[static_cast<size_t>(b)], B, c.multilabel);
      MapF(grad_phi, 1, D).noalias() = dlogits.row(b) * model.head.weight;
    };
    const auto pool = [&] {
      if (!fused) return model.pooling.forward(psi, grads ? &pool_cache : nullptr);
      logits.resize(B, c.classes);
      dlogits.resize(B, c.classes);
      return model.pooling.forward_backward(psi, options.sinkhorn_gradient, row_gradient, want_dpsi ? &dpsi : nullptr,
                                            options.references ? &grad_refs : nullptr);
    };
    phi = defer_scan ? with_finiteness_scan_on_error(features, "otke loss", pool) : pool();
  } else if (c.pooling == OtkePooling::kMean) {
    phi = mean_pool(psi);
  } else {
    phi = max_pool(psi);
    argmax.assign(psi.batch, std::vector<Eigen::Index>(psi.dim));
    for (int b = 0; b < psi.batch; ++b)
      for (int k = 0; k < psi.dim; ++k) CMapF(psi.row(b, 0), psi.n[b], psi.dim).col(k).maxCoeff(&argmax[b][k]);
  }
  // The MLP head (the thesis' DeepSEA architecture): (training) inverted dropout on the pooled embedding, then
  // h = ReLU(W_h phi + b_h), then the output layer.
  MatF dropped, pre_hidden, hid, keep;
  if (c.hidden > 0) {
    if (options.dropout && c.dropout > 0) {
      keep = otke_dropout_mask(static_cast<int>(phi.rows()), static_cast<int>(phi.cols()), c.dropout,
                               options.dropout_seed);
      dropped = phi.cwiseProduct(keep);
    }
    pre_hidden = model.hidden.logits(keep.size() ? dropped : phi);
    hid = pre_hidden.cwiseMax(0.0f);
  }
  const MatF& head_in = c.hidden > 0 ? hid : phi;
  if (!fused) logits = model.head.logits(head_in);
  const double loss = c.multilabel ? binary_cross_entropy(logits, labels) : cross_entropy(logits, labels);
  if (!grads) return loss;

  // Backward.
  if (!fused) dlogits = logit_gradient(logits, labels.data(), B, c.multilabel);
  *grads = OtkeGradients{};
  if (options.head) {
    grads->head_weight.noalias() = dlogits.transpose() * head_in;
    grads->head_bias = dlogits.colwise().sum().transpose();
  }
  if (fused) {
    grads->references = std::move(grad_refs);
    if (!want_dpsi) return loss;
  } else {
    if (c.hidden == 0 && !options.anchors && !options.references && !want_tokens) return loss;
    MatF dphi;
    if (c.hidden > 0) {
      MatF dpre;
      dpre.noalias() = dlogits * model.head.weight;
      dpre = (pre_hidden.array() > 0.0f).select(dpre, 0.0f);
      if (options.head) {
        grads->hidden_weight.noalias() = dpre.transpose() * (keep.size() ? dropped : phi);
        grads->hidden_bias = dpre.colwise().sum().transpose();
      }
      if (!options.anchors && !options.references && !want_tokens) return loss;
      dphi.noalias() = dpre * model.hidden.weight;
      if (keep.size()) dphi.array() *= keep.array();
    } else {
      dphi.noalias() = dlogits * model.head.weight;
    }
    if (c.pooling == OtkePooling::kOtk) {
      model.pooling.backward(psi, pool_cache, dphi, want_dpsi ? &dpsi : nullptr,
                             options.references ? &grads->references : nullptr);
      if (!want_dpsi) return loss;
    } else {
      if (!want_dpsi) return loss;
      dpsi = SetBatch(B, psi.n_max, psi.dim);
      dpsi.n = psi.n;
      for (int b = 0; b < B; ++b) {
        MapF g(dpsi.row(b, 0), psi.n[b], psi.dim);
        if (c.pooling == OtkePooling::kMean) {
          g.rowwise() = dphi.row(b) / static_cast<float>(psi.n[b]);
        } else {
          for (int k = 0; k < psi.dim; ++k) g(argmax[b][k], k) = dphi(b, k);
        }
      }
    }
  }

  // dL/d(local features), one row per valid element in stacking order (needed for the token table only).
  std::vector<int64_t> unused;
  MatF dx;
  if (c.embedding == OtkeEmbedding::kIdentity) {
    dx = stack_rows(dpsi, unused);
  } else {
    const MatF dpsi_rows = stack_rows(dpsi, unused);
    if (c.embedding == OtkeEmbedding::kNystrom) {
      MatF gw, gf;
      if (want_embedding) gw = MatF::Zero(c.anchors, c.feature_dim()), gf = MatF::Zero(c.anchors, c.anchors);
      model.nystrom.backward(ny_cache, dpsi_rows, want_tokens ? &dx : nullptr, want_embedding ? &gw : nullptr,
                             want_embedding ? &gf : nullptr);
      if (want_embedding) grads->anchors = model.nystrom.anchor_gradient(gw, gf);
    } else {
      const MatF dpre = (pre.array() > 0.0f).select(dpsi_rows, 0.0f);
      if (want_embedding) {
        grads->conv_weight.noalias() = dpre.transpose() * x;
        grads->conv_bias = dpre.colwise().sum().transpose();
      }
      if (want_tokens) dx.noalias() = dpre * model.conv_weight;
    }
  }
  if (want_tokens) {
    // The lookup's adjoint: every occurrence of a token adds its row of dL/dx to the token's row.
    grads->tokens = MatF::Zero(model.token_table.rows(), model.token_table.cols());
    Eigen::Index r = 0;
    for (int b = 0; b < B; ++b)
      for (int i = 0; i < features.n[b]; ++i, ++r)
        grads->tokens.row(static_cast<Eigen::Index>(*features.row(b, i))) += dx.row(r);
  }
  return loss;
}

}  // namespace inductive
