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
  // Where layer l's activations go: its own buffers, or with keep_layers off (inference) layer 0's for every layer.
  // Each layer reads its input rows (x_in) before it writes the next layer's input over them, row for row, so the
  // next layer's input may be the same buffer as its own. Only the evaluation BatchNorm's per-column rstd (and
  // LayerNorm's per-row rstd) stay per layer. The same operations either way, so the same bits.
  const bool share = !run.keep_layers && !run.training;
  const auto store = [&](int l) -> GraphitCache::Layer& { return cache.layers[share ? 0 : l]; };
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh));

  // Input embedding.
  MatF& x0 = L > 0 ? store(0).x_in : cache.x_out;
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

  // Every buffer a layer writes, sized up front: the passes below write row ranges of them, possibly on several
  // threads at once. The weights are transposed once, so that each product is broadcasts and FMAs (gemm_ab).
  const int F = c.ffn;
  struct Transposed {
    MatF q, v, out, ffn1, ffn2;
  };
  std::vector<Transposed> wt(static_cast<size_t>(L));
  for (int l = 0; l < L; ++l) {
    const GraphitLayerParams& p = params.layers[l];
    wt[l] = {p.q_weight.transpose(), p.v_weight.transpose(), p.out_weight.transpose(), p.ffn1_weight.transpose(),
             p.ffn2_weight.transpose()};
    if (share && l > 0) {  // layer 0's buffers serve; what an earlier call kept here is freed
      GraphitCache::Layer& own = cache.layers[l];
      VecF rstd1 = std::move(own.norm1.rstd), rstd2 = std::move(own.norm2.rstd);
      own = GraphitCache::Layer{};
      own.norm1.rstd = std::move(rstd1), own.norm2.rstd = std::move(rstd2);
      continue;
    }
    GraphitCache::Layer& ly = cache.layers[l];
    ly.q.resize(N, d);
    ly.v.resize(N, d);
    ly.heads.resize(N, d);
    if (share)
      ly.probs.clear();  // A is not kept (attention_forward's probs null)
    else
      ly.probs.resize(static_cast<size_t>(H) * b.sq_offsets.back());
    ly.floored.resize(static_cast<size_t>(N) * H);
    ly.argmax.resize(static_cast<size_t>(N) * H);
    if (drop) {
      ly.drop_attn.resize(ly.probs.size());
      ly.drop1.resize(N, d);
      ly.drop_ffn.resize(N, F);
      ly.drop2.resize(N, d);
    } else {
      ly.drop_attn.clear();
    }
    ly.x1.resize(N, d);
    ly.ffn.resize(N, F);
    (l + 1 < L ? store(l + 1).x_in : cache.x_out).resize(N, d);
  }
  cache.work_a.resize(N, d);
  cache.work_b.resize(N, d);
  if (drop) cache.work_c.resize(N, F);

  // A layer's passes. All but training BatchNorm's statistics compute each row (or graph) alone, the same
  // operations whatever the rows around it, so any split of the rows gives the same bits.
  const auto mask_rows = [&](MatF& m, int l, GraphitDropoutMask which, Eigen::Index r0, Eigen::Index r1) {
    const int64_t cols = m.cols();
    graphit_dropout_mask(m.data() + r0 * cols, (r1 - r0) * cols, c.dropout,
                         graphit_dropout_stream(dropout_key, l, which), (run.node_offset + r0) * cols);
  };
  // Q and V of rows [r0, r1).
  const auto project = [&](int l, Eigen::Index r0, Eigen::Index r1) {
    GraphitCache::Layer& ly = store(l);
    product_rows(ly.q, ly.x_in, wt[l].q, r0, r1, false, nullptr);
    product_rows(ly.v, ly.x_in, wt[l].v, r0, r1, false, nullptr);
  };
  // Graph g's attention, all heads: its own rows of heads/floored/argmax, its own probs block and its own block of
  // the attention mask (drawn by position).
  const auto attend = [&](int l, int g, int worker) {
    GraphitCache::Layer& ly = store(l);
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
                      share ? nullptr : ly.probs.data() + at, ly.heads.data() + static_cast<int64_t>(o) * d,
                      ly.floored.data() + row0, ly.argmax.data() + row0,
                      cache.scratch[static_cast<size_t>(worker)].data());
  };
  // Out-projection and the degree-scaled residual of rows [r0, r1), into work_a (norm1's input). The bias, degree
  // scaling and (without dropout, whose mask comes between) the residual are the product's epilogue, applied while
  // its rows are in registers, in the order the separate passes took.
  const auto out_project = [&](int l, Eigen::Index r0, Eigen::Index r1) {
    GraphitCache::Layer& ly = store(l);
    MatF& y = cache.work_a;
    simd::RowEpilogue e;
    e.bias = params.layers[l].out_bias.data();
    e.row_scale = b.residual_scale.data();
    if (!drop) e.residual = ly.x_in.data(), e.ld_residual = d;
    product_rows(y, ly.heads, wt[l].out, r0, r1, false, &e);
    if (drop) {
      mask_rows(ly.drop1, l, GraphitDropoutMask::kAttentionOut, r0, r1);
      y.middleRows(r0, r1 - r0).array() *= ly.drop1.middleRows(r0, r1 - r0).array();
      y.middleRows(r0, r1 - r0) += ly.x_in.middleRows(r0, r1 - r0);
    }
  };
  // The feed-forward block and its residual of rows [r0, r1), into work_b (norm2's input).
  const auto feed_forward = [&](int l, Eigen::Index r0, Eigen::Index r1) {
    GraphitCache::Layer& ly = store(l);
    const GraphitLayerParams& p = params.layers[l];
    simd::RowEpilogue e1;
    e1.bias = p.ffn1_bias.data();
    e1.relu = true;
    product_rows(ly.ffn, ly.x1, wt[l].ffn1, r0, r1, false, &e1);
    MatF& z = cache.work_b;
    simd::RowEpilogue e2;
    e2.bias = p.ffn2_bias.data();
    if (!drop) {
      e2.residual = ly.x1.data(), e2.ld_residual = d;
      product_rows(z, ly.ffn, wt[l].ffn2, r0, r1, false, &e2);
      return;
    }
    mask_rows(ly.drop_ffn, l, GraphitDropoutMask::kFfnHidden, r0, r1);
    cache.work_c.middleRows(r0, r1 - r0) =
        ly.ffn.middleRows(r0, r1 - r0).cwiseProduct(ly.drop_ffn.middleRows(r0, r1 - r0));
    product_rows(z, cache.work_c, wt[l].ffn2, r0, r1, false, &e2);
    mask_rows(ly.drop2, l, GraphitDropoutMask::kFfnOut, r0, r1);
    z.middleRows(r0, r1 - r0).array() *= ly.drop2.middleRows(r0, r1 - r0).array();
    z.middleRows(r0, r1 - r0) += ly.x1.middleRows(r0, r1 - r0);
  };
  const auto next_input = [&](int l) -> MatF& { return l + 1 < L ? store(l + 1).x_in : cache.x_out; };

  if (!(run.training && batch_norm)) {
    // No statistic across the batch: a chunk of graphs goes through every layer on one thread, so a pass over a
    // small batch is one parallel loop, not eight a layer. With (a)'s 32 graphs of ~23 nodes, those loops' joins
    // and the serial steps between them had left 2 threads 1.1-1.4x as fast as one.
    for (int l = 0; l < L; ++l) {
      const GraphitNormStats* es = batch_norm ? &norm_stats[l] : nullptr;
      GraphitCache::Layer &own = cache.layers[l], &ly = store(l);
      norm_rows_prepare(batch_norm, N, d, ly.norm1.xhat, own.norm1.rstd, ly.x1, es ? &es->var1 : nullptr);
      norm_rows_prepare(batch_norm, N, d, ly.norm2.xhat, own.norm2.rstd, next_input(l), es ? &es->var2 : nullptr);
    }
    // Chunks of whole graphs of about kGraphChunkRows rows, dealt to the threads as they come free (a chunk is every
    // layer's work on its rows, enough to pay for its hand-over even on a small batch; many chunks a thread, so
    // that the last ones even out the threads' shares, or a busy core's).
    const std::vector<int> first = graph_chunks(b.offsets, kGraphChunkRows);
    const int chunks = static_cast<int>(first.size()) - 1;
    parallel_for(chunks, 1, 0, [&](int ch, int worker) {
      const int g0 = first[ch], g1 = first[ch + 1];
      const Eigen::Index r0 = b.offsets[g0], r1 = b.offsets[g1];
      for (int l = 0; l < L; ++l) {
        GraphitCache::Layer &own = cache.layers[l], &ly = store(l);
        const GraphitLayerParams& p = params.layers[l];
        const GraphitNormStats* es = batch_norm ? &norm_stats[l] : nullptr;
        project(l, r0, r1);
        for (int g = g0; g < g1; ++g) attend(l, g, worker);
        out_project(l, r0, r1);
        norm_forward_rows(batch_norm, cache.work_a, p.norm1_weight, p.norm1_bias, ly.norm1.xhat, own.norm1.rstd, ly.x1,
                          es ? &es->mean1 : nullptr, r0, r1);
        feed_forward(l, r0, r1);
        norm_forward_rows(batch_norm, cache.work_b, p.norm2_weight, p.norm2_bias, ly.norm2.xhat, own.norm2.rstd,
                          next_input(l), es ? &es->mean2 : nullptr, r0, r1);
      }
    });
  } else {
    // Training BatchNorm: its column statistics need every row of the batch between the passes.
    for (int l = 0; l < L; ++l) {
      GraphitCache::Layer& ly = cache.layers[l];
      const GraphitLayerParams& p = params.layers[l];
      for_each_row_block(N, [&](Eigen::Index r0, Eigen::Index r1) { project(l, r0, r1); });
      parallel_for(b.n_graphs, 4, b.n_graphs < 8 ? 1 : 0, [&](int g, int worker) { attend(l, g, worker); });
      for_each_row_block(N, [&](Eigen::Index r0, Eigen::Index r1) { out_project(l, r0, r1); });
      GraphitNormStats* rs = run.running ? &(*run.running)[l] : nullptr;
      norm_forward(true, true, cache.work_a, p.norm1_weight, p.norm1_bias, ly.norm1, ly.x1, rs ? &rs->mean1 : nullptr,
                   rs ? &rs->var1 : nullptr, nullptr, nullptr, cache.norm_comm);
      for_each_row_block(N, [&](Eigen::Index r0, Eigen::Index r1) { feed_forward(l, r0, r1); });
      norm_forward(true, true, cache.work_b, p.norm2_weight, p.norm2_bias, ly.norm2, next_input(l),
                   rs ? &rs->mean2 : nullptr, rs ? &rs->var2 : nullptr, nullptr, nullptr, cache.norm_comm);
    }
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
