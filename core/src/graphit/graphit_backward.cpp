// GraphiT backward pass and losses (see inductive/graphit.h).
//
// Attention, one head, one graph: A~ = exp(S - rowmax S) ⊙ K, c_i = max(r_i, 1e-6) with r_i = sum_j A~_ij,
// A = A~ / c. With dA the gradient w.r.t. A and sigma_i = sum_k dA_ik A_ik:
//   dS_ij = (dA_ij - f_i sigma_i) A_ij - [j = argmax_i] (1 - f_i) sigma_i,      f_i = [r_i > 1e-6]
// (when the floor is inactive the row normalisation removes both the max shift and the scale of the row; when
// it is active, A = A~ / 1e-6 keeps the dependence on the row max, whose gradient goes to the argmax as in
// PyTorch's max). Then dQ_h = scale (dS + dS^T) Q_h because queries and keys are the same matrix.
#include <algorithm>
#include <cmath>

#include "graphit/graphit_detail.h"
#include "graphit/graphit_gemm.h"
#include "inductive/error.h"

namespace inductive {

using namespace graphit_detail;

namespace {

// Rows r0..r0+m of the attention block's output gradient, dattn = (dy * drop1) * residual scale, in one pass; both
// backward schedules take it here, so their products are in one order (the same bits).
void attention_output_grad(const MatF& dy, const MatF* drop1, const VecF& residual_scale, Eigen::Index r0,
                           Eigen::Index m, MatF& dattn) {
  const auto scale = residual_scale.segment(r0, m).array();
  if (drop1)
    dattn.middleRows(r0, m).array() =
        (dy.middleRows(r0, m).array() * drop1->middleRows(r0, m).array()).colwise() * scale;
  else
    dattn.middleRows(r0, m).array() = dy.middleRows(r0, m).array().colwise() * scale;
}

// A Linear layer's gradients from its output gradient and its input: W += d_out^T input, b += the sum of d_out's rows.
void add_linear_grads(const MatF& d_out, const MatF& input, MatF& weight, VecF& bias) {
  add_transposed_product(weight, d_out, input);
  bias += d_out.colwise().sum().transpose();
}

// The FFN's second Linear, whose input is the hidden layer after its dropout.
void add_ffn2_grads(const GraphitCache::Layer& ly, bool drop, const MatF& d_out, GraphitLayerParams& gp) {
  if (drop)
    add_linear_grads(d_out, ly.ffn.cwiseProduct(ly.drop_ffn), gp.ffn2_weight, gp.ffn2_bias);
  else
    add_linear_grads(d_out, ly.ffn, gp.ffn2_weight, gp.ffn2_bias);
}

}  // namespace

void GraphitModel::backward(const GraphitBatch& b, const GraphitCache& cache, const Eigen::Ref<const MatF>& d_output,
                            GraphitParams& grads) const {
  const GraphitConfig& c = config;
  const int N = b.n_nodes, d = c.d, L = c.layers, B = b.n_graphs;
  INDUCTIVE_CHECK(d_output.rows() == B && d_output.cols() == c.outputs, ErrorCode::kShapeMismatch,
                  "graphit backward: d_output is ", d_output.rows(), " x ", d_output.cols(), ", expected ", B, " x ",
                  c.outputs);
  INDUCTIVE_CHECK(static_cast<int>(cache.layers.size()) == L && cache.output.rows() == B && cache.x_out.rows() == N,
                  ErrorCode::kInvalidArgument,
                  "graphit backward: the cache does not come from a forward pass on this batch");
  INDUCTIVE_CHECK(static_cast<int>(grads.layers.size()) == L && grads.out_weight.rows() == c.outputs,
                  ErrorCode::kShapeMismatch,
                  "graphit backward: gradients lack the config's shapes (use GraphitParams::zeros)");
  const bool batch_norm = c.norm == GraphitNorm::kBatch;

  // Head.
  grads.out_weight.noalias() += d_output.transpose() * cache.hidden;
  grads.out_bias += d_output.colwise().sum().transpose();
  MatF d_hidden = d_output * params.out_weight;
  relu_backward(d_hidden.data(), cache.hidden.data(), d_hidden.size());
  grads.hidden_weight.noalias() += d_hidden.transpose() * cache.pooled;
  grads.hidden_bias += d_hidden.colwise().sum().transpose();
  const MatF d_pooled = d_hidden * params.hidden_weight;

  // Pooling.
  MatF dx(N, d);
  for (int g = 0; g < B; ++g) {
    const float w = c.pooling == GraphitPooling::kMean ? 1.0f / static_cast<float>(b.size(g)) : 1.0f;
    dx.middleRows(b.offsets[g], b.size(g)).rowwise() = w * d_pooled.row(g);
  }

  int max_n = 0;
  for (int g = 0; g < B; ++g) max_n = std::max(max_n, b.size(g));
  reserve_attention_scratch(cache.scratch, max_n, d);
  // The two schedules give the same bits (GraphitGradient.ChunkedBackwardGivesThePassByPassGradientsBitForBit), so
  // the choice is speed alone: on one thread the pass-by-pass schedule makes fewer passes over the rows (each norm's
  // input gradient and weight sums in one), and was 5 % faster on (a)'s training step.
  if ((cache.training && batch_norm) || parallel_threads() == 1)
    backward_by_passes(b, cache, dx, grads);
  else
    backward_by_chunks(b, cache, dx, grads);

  // Input embedding.
  if (c.vocab > 0)
    for (int i = 0; i < N; ++i) grads.embedding.row(b.labels[i]) += dx.row(i);
  if (c.features > 0) grads.features_weight.noalias() += dx.transpose() * b.features;
  if (c.pe_dim > 0) {
    grads.pe_weight.noalias() += dx.transpose() * b.pe;
    grads.pe_bias += dx.colwise().sum().transpose();
  }
  if (c.path_dim > 0) {
    grads.path_weight.noalias() += dx.transpose() * b.path;
    grads.path_bias += dx.colwise().sum().transpose();
  }
}

// Training BatchNorm: its statistics' gradient sums need every row of the batch between the passes, so each pass is
// a parallel loop over the whole batch.
void GraphitModel::backward_by_passes(const GraphitBatch& b, const GraphitCache& cache, MatF& dx,
                                      GraphitParams& grads) const {
  const GraphitConfig& c = config;
  const int N = b.n_nodes, d = c.d, H = c.heads, dh = d / H, L = c.layers, B = b.n_graphs;
  const bool batch_norm = c.norm == GraphitNorm::kBatch;
  const bool drop = cache.dropout;
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
  MatF dz, dx1, dg, dpre, dy, dattn, dheads, dq, dv;
  for (int l = L - 1; l >= 0; --l) {
    const GraphitCache::Layer& ly = cache.layers[l];
    const GraphitLayerParams& p = params.layers[l];
    GraphitLayerParams& gp = grads.layers[l];

    // norm2, FFN residual.
    norm_backward(batch_norm, cache.training, ly.norm2, p.norm2_weight, dx, dz, gp.norm2_weight, gp.norm2_bias,
                  cache.norm_comm);
    // The FFN's output gradient: dz itself without dropout (no copy), dz * drop2 in dg with it.
    if (drop) dg = dz.cwiseProduct(ly.drop2);
    const MatF& ffn_out_grad = drop ? dg : dz;
    add_ffn2_grads(ly, drop, ffn_out_grad, gp);
    rows_product(dpre, ffn_out_grad, p.ffn2_weight);
    if (drop) dpre.array() *= ly.drop_ffn.array();
    relu_backward(dpre.data(), ly.ffn.data(), dpre.size());
    add_linear_grads(dpre, ly.x1, gp.ffn1_weight, gp.ffn1_bias);
    simd::RowEpilogue plus_dz;  // dx1 = dz + dpre W1, the residual added as the rows are stored (no copy of dz)
    plus_dz.residual = dz.data(), plus_dz.ld_residual = d;
    rows_product(dx1, dpre, p.ffn1_weight, false, &plus_dz);

    // norm1, attention residual.
    norm_backward(batch_norm, cache.training, ly.norm1, p.norm1_weight, dx1, dy, gp.norm1_weight, gp.norm1_bias,
                  cache.norm_comm);
    dattn.resize(N, d);
    attention_output_grad(dy, drop ? &ly.drop1 : nullptr, b.residual_scale, 0, N, dattn);
    add_linear_grads(dattn, ly.heads, gp.out_weight, gp.out_bias);
    rows_product(dheads, dattn, p.out_weight);

    // Attention, per graph (graphit_attention.h). Graphs are independent: each writes only its own rows of dq and
    // dv, so they are split across threads, each with its own scratch.
    dq.setZero(N, d);
    dv.resize(N, d);
    parallel_for(B, 4, B < 8 ? 1 : 0, [&](int g, int worker) {
      float* local = cache.scratch[static_cast<size_t>(worker)].data();
      const int o = b.offsets[g], n = b.size(g);
      const int64_t at = H * b.sq_offsets[g], rows = static_cast<int64_t>(o) * d;
      const size_t row0 = static_cast<size_t>(o) * H;
      attention_backward({n, H, dh, d}, scale, ly.q.data() + rows, ly.v.data() + rows, ly.probs.data() + at,
                         drop ? ly.drop_attn.data() + at : nullptr, ly.floored.data() + row0, ly.argmax.data() + row0,
                         dheads.data() + rows, dq.data() + rows, dv.data() + rows, local);
    });
    add_transposed_product(gp.q_weight, dq, ly.x_in);
    add_transposed_product(gp.v_weight, dv, ly.x_in);
    simd::RowEpilogue plus_dy;  // dx = dy + dq Wq + dv Wv
    plus_dy.residual = dy.data(), plus_dy.ld_residual = d;
    rows_product(dx, dq, p.q_weight, false, &plus_dy);
    rows_product(dx, dv, p.v_weight, true);
  }
}

// No statistic across the batch (LayerNorm; BatchNorm in evaluation): the gradients flowing down a layer are
// computed row by row and graph by graph, so chunks of whole graphs go down the layer on one thread each (one
// parallel loop, where the pass-by-pass backward makes about a dozen, with serial passes between them); the layer's
// gradients are kept, and its weight gradients, sums over every row of the batch, are then taken from them tensor by
// tensor (a second loop) as the pass-by-pass backward takes them: the same sums in the same order, the same bits.
// Layer by layer rather than every layer's chunks first: the kept tensors are one layer's, 11 of the batch's rows
// instead of 7L + 3 (24 for 3 layers, 73 for 10), read back while still in cache. Measured on (a): the same speed
// or slightly better (bench/README.md, "Threads on a busy machine").
void GraphitModel::backward_by_chunks(const GraphitBatch& b, const GraphitCache& cache, MatF& dx,
                                      GraphitParams& grads) const {
  const GraphitConfig& c = config;
  const int N = b.n_nodes, d = c.d, H = c.heads, dh = d / H, L = c.layers, F = c.ffn;
  const bool batch_norm = c.norm == GraphitNorm::kBatch;
  const bool drop = cache.dropout;
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
  if (L == 0) return;
  // The layer's kept gradients: dg (the FFN's output gradient), dpre (its hidden one), d(norm1's output),
  // d(attention output), dq, dv; the gradient coming down into the layer (d of norm2's output) and the one it passes
  // on, two buffers taking turns; then three row scratches.
  enum Slot { kDg, kDpre, kDn1, kDattn, kDq, kDv, kIn, kOut, kDz, kDy, kDheads, kSlots };
  std::vector<MatF>& work = cache.grad_work;
  work.resize(kSlots);
  for (int s = 0; s < kSlots; ++s) work[s].resize(N, s == kDpre ? F : d);
  work[kIn] = dx;
  MatF* in = &work[kIn];
  MatF* out = &work[kOut];
  MatF &dz = work[kDz], &dy = work[kDy], &dheads = work[kDheads];
  MatF &dg = work[kDg], &dpre = work[kDpre], &dx1 = work[kDn1], &dattn = work[kDattn], &dq = work[kDq], &dv = work[kDv];

  const std::vector<int> first = graph_chunks(b.offsets, kGraphChunkRows);
  for (int l = L - 1; l >= 0; --l) {
    const GraphitCache::Layer& ly = cache.layers[l];
    const GraphitLayerParams& p = params.layers[l];
    GraphitLayerParams& gp = grads.layers[l];
    MatF& down = l > 0 ? *out : dx;
    // The FFN's output gradient: dz itself without dropout (no copy), dz * drop2 in dg with it.
    const MatF& ffn_out_grad = drop ? dg : dz;
    parallel_for(static_cast<int>(first.size()) - 1, 1, 0, [&](int ch, int worker) {
      const int g0 = first[ch], g1 = first[ch + 1];
      const Eigen::Index r0 = b.offsets[g0], r1 = b.offsets[g1], m = r1 - r0;
      float* local = cache.scratch[static_cast<size_t>(worker)].data();
      // norm2, FFN residual.
      norm_backward_rows(batch_norm, ly.norm2, p.norm2_weight, *in, dz, r0, r1);
      if (drop) dg.middleRows(r0, m) = dz.middleRows(r0, m).cwiseProduct(ly.drop2.middleRows(r0, m));
      product_rows(dpre, ffn_out_grad, p.ffn2_weight, r0, r1, false, nullptr);
      if (drop) dpre.middleRows(r0, m).array() *= ly.drop_ffn.middleRows(r0, m).array();
      relu_backward(dpre.data() + r0 * dpre.cols(), ly.ffn.data() + r0 * ly.ffn.cols(), m * dpre.cols());
      simd::RowEpilogue plus_dz;  // dx1 = dz + dpre W1
      plus_dz.residual = dz.data(), plus_dz.ld_residual = d;
      product_rows(dx1, dpre, p.ffn1_weight, r0, r1, false, &plus_dz);
      // norm1, attention residual.
      norm_backward_rows(batch_norm, ly.norm1, p.norm1_weight, dx1, dy, r0, r1);
      attention_output_grad(dy, drop ? &ly.drop1 : nullptr, b.residual_scale, r0, m, dattn);
      product_rows(dheads, dattn, p.out_weight, r0, r1, false, nullptr);
      // Attention, graph by graph.
      dq.middleRows(r0, m).setZero();
      for (int g = g0; g < g1; ++g) {
        const int o = b.offsets[g], n = b.size(g);
        const int64_t sq = H * b.sq_offsets[g], rows = static_cast<int64_t>(o) * d;
        const size_t row0 = static_cast<size_t>(o) * H;
        attention_backward({n, H, dh, d}, scale, ly.q.data() + rows, ly.v.data() + rows, ly.probs.data() + sq,
                           drop ? ly.drop_attn.data() + sq : nullptr, ly.floored.data() + row0, ly.argmax.data() + row0,
                           dheads.data() + rows, dq.data() + rows, dv.data() + rows, local);
      }
      simd::RowEpilogue plus_dy;  // dx = dy + dq Wq + dv Wv
      plus_dy.residual = dy.data(), plus_dy.ld_residual = d;
      product_rows(down, dq, p.q_weight, r0, r1, false, &plus_dy);
      product_rows(down, dv, p.v_weight, r0, r1, true, nullptr);
    });

    // The layer's weight gradients, each a sum over every row: the tensors dealt to the threads (each sum on one
    // thread, in its rows' fixed blocks and order, as the pass-by-pass backward takes it).
    constexpr int kJobs = 7;
    parallel_for(kJobs, 1, 0, [&](int job, int) {
      switch (job) {
        case 0:
          norm_backward_sums(ly.norm2, *in, gp.norm2_weight, gp.norm2_bias);
          break;
        case 1:
          add_ffn2_grads(ly, drop, ffn_out_grad, gp);
          break;
        case 2:
          add_linear_grads(dpre, ly.x1, gp.ffn1_weight, gp.ffn1_bias);
          break;
        case 3:
          norm_backward_sums(ly.norm1, dx1, gp.norm1_weight, gp.norm1_bias);
          break;
        case 4:
          add_linear_grads(dattn, ly.heads, gp.out_weight, gp.out_bias);
          break;
        case 5:
          add_transposed_product(gp.q_weight, dq, ly.x_in);
          break;
        default:
          add_transposed_product(gp.v_weight, dv, ly.x_in);
          break;
      }
    });
    std::swap(in, out);
  }
}

double GraphitModel::loss(const GraphitBatch& b, const GraphitRunOptions& run, GraphitParams* grads, MatF* outputs,
                          GraphitCache* cache_in) const {
  const GraphitConfig& c = config;
  const int B = b.n_graphs, C = c.outputs;
  if (c.classification())
    INDUCTIVE_CHECK(static_cast<int>(b.classes.size()) == B, ErrorCode::kInvalidArgument,
                    "graphit loss: the batch has ", b.classes.size(), " class labels for ", B,
                    " graphs (pack it with classes)");
  else
    INDUCTIVE_CHECK(static_cast<int64_t>(b.values.size()) == static_cast<int64_t>(B) * C, ErrorCode::kInvalidArgument,
                    "graphit loss: the batch has ", b.values.size(), " target values for ", B, " graphs x ", C,
                    " outputs (pack it with values)");
  GraphitCache local;
  GraphitCache& cache = cache_in ? *cache_in : local;
  const MatF& out = forward(b, run, &cache);
  if (outputs) *outputs = out;
  MatF d_out(B, C);
  double total = 0;
  if (c.classification()) {
    for (int g = 0; g < B; ++g) {
      const double mx = out.row(g).maxCoeff();
      double z = 0;
      for (int k = 0; k < C; ++k) z += std::exp(static_cast<double>(out(g, k)) - mx);
      total += mx + std::log(z) - out(g, b.classes[g]);
      for (int k = 0; k < C; ++k)
        d_out(g, k) = static_cast<float>((std::exp(static_cast<double>(out(g, k)) - mx) / z - (k == b.classes[g])) / B);
    }
  } else {
    const double n = static_cast<double>(B) * C;
    for (int g = 0; g < B; ++g)
      for (int k = 0; k < C; ++k) {
        const double r = static_cast<double>(out(g, k)) - b.values[static_cast<size_t>(g) * C + k];
        total += std::fabs(r);
        d_out(g, k) = static_cast<float>((r > 0) - (r < 0)) / static_cast<float>(n);
      }
    total *= static_cast<double>(B) / n;  // mean over graphs and targets (PyTorch's L1Loss)
  }
  if (grads) {
    if (run.grad_scale != 1.0) d_out *= static_cast<float>(run.grad_scale);
    backward(b, cache, d_out, *grads);
  }
  return total / B;
}

void graphit_norm_sync_idle(const GraphitConfig& config, Communicator& comm, std::vector<GraphitNormStats>* running) {
  if (config.norm != GraphitNorm::kBatch) return;
  INDUCTIVE_CHECK(running == nullptr || static_cast<int>(running->size()) == config.layers, ErrorCode::kShapeMismatch,
                  "graphit: running statistics for ", running ? running->size() : 0, " layers, expected ",
                  config.layers);
  // The calls of forward (norm1, norm2 per layer, first to last) then of backward (norm2, norm1, last to first).
  for (int l = 0; l < config.layers; ++l) {
    GraphitNormStats* rs = running ? &(*running)[l] : nullptr;
    norm_forward_idle(comm, config.d, rs ? &rs->mean1 : nullptr, rs ? &rs->var1 : nullptr);
    norm_forward_idle(comm, config.d, rs ? &rs->mean2 : nullptr, rs ? &rs->var2 : nullptr);
  }
  for (int l = 0; l < 2 * config.layers; ++l) norm_backward_idle(comm, config.d);
}

}  // namespace inductive
