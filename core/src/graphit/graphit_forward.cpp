// GraphiT forward pass on packed graphs (see inductive/graphit.h for the equations).
#include <algorithm>
#include <cmath>

#include "graphit/graphit_detail.h"
#include "graphit/graphit_gemm.h"
#include "inductive/elementwise.h"
#include "inductive/error.h"

namespace inductive {

using namespace graphit_detail;

namespace {

void check_batch(const GraphitConfig& c, const GraphitBatch& b) {
  INDUCTIVE_CHECK(b.n_graphs >= 1 && static_cast<int>(b.offsets.size()) == b.n_graphs + 1 &&
                      static_cast<int>(b.sq_offsets.size()) == b.n_graphs + 1 && b.offsets.back() == b.n_nodes &&
                      static_cast<int>(b.kernels.size()) == b.n_graphs && b.residual_scale.size() == b.n_nodes,
                  ErrorCode::kShapeMismatch, "graphit: malformed batch (build it with GraphitBatch::pack)");
  INDUCTIVE_CHECK((c.vocab == 0 || static_cast<int>(b.labels.size()) == b.n_nodes) &&
                      (c.features == 0 || (b.features.rows() == b.n_nodes && b.features.cols() == c.features)) &&
                      (c.pe_dim == 0 || (b.pe.rows() == b.n_nodes && b.pe.cols() == c.pe_dim)) &&
                      (c.path_dim == 0 || (b.path.rows() == b.n_nodes && b.path.cols() == c.path_dim)),
                  ErrorCode::kShapeMismatch, "graphit: batch was packed for another input configuration");
  if (c.kernel)
    for (int g = 0; g < b.n_graphs; ++g)
      INDUCTIVE_CHECK(b.kernels[g] != nullptr && b.kernels[g]->rows() == b.size(g) && b.kernels[g]->cols() == b.size(g),
                      ErrorCode::kShapeMismatch, "graphit: batch graph ", g, " lacks its n x n kernel");
}

}  // namespace

void graphit_dropout_mask(float* m, int64_t size, double p, uint64_t stream, int64_t first) {
  const float keep = static_cast<float>(1.0 / (1.0 - p)), pf = static_cast<float>(p);
  for (int64_t i = 0; i < size; ++i) m[i] = elementwise::dropout_multiplier(stream, first + i, pf, keep);
}

MatF GraphitModel::forward(const GraphitBatch& b, const GraphitRunOptions& run, GraphitCache* cache_in) const {
  const GraphitConfig& c = config;
  check_batch(c, b);
  GraphitCache local;
  GraphitCache& cache = cache_in ? *cache_in : local;
  const int N = b.n_nodes, d = c.d, H = c.heads, dh = d / H, L = c.layers;
  const bool batch_norm = c.norm == GraphitNorm::kBatch;
  const bool drop = run.training && run.rng != nullptr && c.dropout > 0;
  // One draw per step from the epoch's generator keys every mask of the step (graphit_dropout_stream).
  const uint64_t dropout_key = drop ? (*run.rng)() : 0;
  INDUCTIVE_CHECK(!batch_norm || static_cast<int>(norm_stats.size()) == L || run.training, ErrorCode::kInvalidArgument,
                  "graphit: BatchNorm model lacks running statistics");
  INDUCTIVE_CHECK(run.running == nullptr || static_cast<int>(run.running->size()) == L, ErrorCode::kShapeMismatch,
                  "graphit: running statistics for ", run.running ? run.running->size() : 0, " layers, expected ", L);
  cache.training = run.training;
  cache.dropout = drop;
  cache.norm_comm = run.training && batch_norm ? run.sync_norm : nullptr;
  cache.layers.resize(L);
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh));

  // Input embedding.
  MatF& x0 = L > 0 ? cache.layers[0].x_in : cache.x_out;
  x0.setZero(N, d);
  if (c.vocab > 0)
    for (int i = 0; i < N; ++i) x0.row(i) += params.embedding.row(b.labels[i]);
  if (c.features > 0) x0.noalias() += b.features * params.features_weight.transpose();
  if (c.pe_dim > 0) {
    x0.noalias() += b.pe * params.pe_weight.transpose();
    x0.rowwise() += params.pe_bias.transpose();
  }
  if (c.path_dim > 0) {
    x0.noalias() += b.path * params.path_weight.transpose();
    x0.rowwise() += params.path_bias.transpose();
  }

  int max_n = 0;
  for (int g = 0; g < b.n_graphs; ++g) max_n = std::max(max_n, b.size(g));
  reserve_attention_scratch(cache.scratch, max_n, d);

  for (int l = 0; l < L; ++l) {
    GraphitCache::Layer& ly = cache.layers[l];
    const GraphitLayerParams& p = params.layers[l];
    const MatF& x = ly.x_in;
    rows_product(ly.q, x, p.q_weight.transpose());
    rows_product(ly.v, x, p.v_weight.transpose());
    ly.heads.resize(N, d);
    ly.probs.resize(static_cast<size_t>(H) * b.sq_offsets.back());
    ly.floored.resize(static_cast<size_t>(N) * H);
    ly.argmax.resize(static_cast<size_t>(N) * H);
    if (drop)
      ly.drop_attn.resize(ly.probs.size());
    else
      ly.drop_attn.clear();

    // Graphs are independent blocks split across threads; each writes only its own rows of heads/floored/argmax,
    // its own probs block and its own block of the attention mask (drawn by position: any order gives the same).
    parallel_for(b.n_graphs, 4, b.n_graphs < 8 ? 1 : 0, [&](int g, int worker) {
      const int o = b.offsets[g], n = b.size(g);
      const int64_t at = H * b.sq_offsets[g];
      float* mask = nullptr;
      if (drop) {
        mask = ly.drop_attn.data() + at;
        graphit_dropout_mask(mask, H * static_cast<int64_t>(n) * n, c.dropout,
                             graphit_dropout_stream(dropout_key, l, GraphitDropoutMask::kAttention),
                             H * (run.sq_offset + b.sq_offsets[g]));
      }
      const size_t row0 = static_cast<size_t>(o) * H;  // per graph: H blocks of n rows
      attention_forward({n, H, dh, d}, scale, ly.q.data() + static_cast<int64_t>(o) * d,
                        ly.v.data() + static_cast<int64_t>(o) * d, c.kernel ? b.kernels[g]->data() : nullptr, mask,
                        ly.probs.data() + at, ly.heads.data() + static_cast<int64_t>(o) * d, ly.floored.data() + row0,
                        ly.argmax.data() + row0, cache.scratch[static_cast<size_t>(worker)].data());
    });

    // Out-projection, degree-scaled residual, norm1.
    // The bias, degree scaling and (without dropout, whose mask comes between) the residual are the product's
    // epilogue, applied while its rows are in registers, in the order the separate passes took.
    MatF& y = cache.work_a;
    simd::RowEpilogue out_epilogue;
    out_epilogue.bias = p.out_bias.data();
    out_epilogue.row_scale = b.residual_scale.data();
    if (!drop) out_epilogue.residual = x.data(), out_epilogue.ld_residual = d;
    rows_product(y, ly.heads, p.out_weight.transpose(), false, &out_epilogue);
    if (drop) {
      ly.drop1.resize(N, d);
      graphit_dropout_mask(ly.drop1.data(), ly.drop1.size(), c.dropout,
                           graphit_dropout_stream(dropout_key, l, GraphitDropoutMask::kAttentionOut),
                           run.node_offset * d);
      y.array() *= ly.drop1.array();
      y += x;
    }
    GraphitNormStats* rs = run.training && run.running && batch_norm ? &(*run.running)[l] : nullptr;
    const GraphitNormStats* es = !run.training && batch_norm ? &norm_stats[l] : nullptr;
    norm_forward(batch_norm, run.training, y, p.norm1_weight, p.norm1_bias, ly.norm1, ly.x1, rs ? &rs->mean1 : nullptr,
                 rs ? &rs->var1 : nullptr, es ? &es->mean1 : nullptr, es ? &es->var1 : nullptr, cache.norm_comm);

    // Feed-forward block, residual, norm2 (its output is the next layer's input).
    simd::RowEpilogue ffn1_epilogue;
    ffn1_epilogue.bias = p.ffn1_bias.data();
    ffn1_epilogue.relu = true;
    rows_product(ly.ffn, ly.x1, p.ffn1_weight.transpose(), false, &ffn1_epilogue);
    MatF& z = cache.work_b;
    simd::RowEpilogue ffn2_epilogue;
    ffn2_epilogue.bias = p.ffn2_bias.data();
    if (!drop) ffn2_epilogue.residual = ly.x1.data(), ffn2_epilogue.ld_residual = d;
    if (drop) {
      ly.drop_ffn.resize(N, c.ffn);
      graphit_dropout_mask(ly.drop_ffn.data(), ly.drop_ffn.size(), c.dropout,
                           graphit_dropout_stream(dropout_key, l, GraphitDropoutMask::kFfnHidden),
                           run.node_offset * c.ffn);
      cache.work_c = ly.ffn.cwiseProduct(ly.drop_ffn);
      rows_product(z, cache.work_c, p.ffn2_weight.transpose(), false, &ffn2_epilogue);
      ly.drop2.resize(N, d);
      graphit_dropout_mask(ly.drop2.data(), ly.drop2.size(), c.dropout,
                           graphit_dropout_stream(dropout_key, l, GraphitDropoutMask::kFfnOut), run.node_offset * d);
      z.array() *= ly.drop2.array();
      z += ly.x1;
    } else {
      rows_product(z, ly.ffn, p.ffn2_weight.transpose(), false, &ffn2_epilogue);
    }
    MatF& next = l + 1 < L ? cache.layers[l + 1].x_in : cache.x_out;
    norm_forward(batch_norm, run.training, z, p.norm2_weight, p.norm2_bias, ly.norm2, next, rs ? &rs->mean2 : nullptr,
                 rs ? &rs->var2 : nullptr, es ? &es->mean2 : nullptr, es ? &es->var2 : nullptr, cache.norm_comm);
  }

  // Readout: pooling, Linear-ReLU-Linear.
  cache.pooled.resize(b.n_graphs, d);
  for (int g = 0; g < b.n_graphs; ++g) {
    cache.pooled.row(g) = cache.x_out.middleRows(b.offsets[g], b.size(g)).colwise().sum();
    if (c.pooling == GraphitPooling::kMean) cache.pooled.row(g) /= static_cast<float>(b.size(g));
  }
  cache.hidden.noalias() = cache.pooled * params.hidden_weight.transpose();
  cache.hidden.rowwise() += params.hidden_bias.transpose();
  cache.hidden = cache.hidden.cwiseMax(0.0f);
  cache.output.noalias() = cache.hidden * params.out_weight.transpose();
  cache.output.rowwise() += params.out_bias.transpose();
  return cache.output;
}

}  // namespace inductive
