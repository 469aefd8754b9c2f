// GraphiT parameters (list, zeros, seeded init) and batch packing (see inductive/graphit.h).
#include <cmath>

#include "inductive/error.h"
#include "inductive/graphit.h"

namespace inductive {

namespace {

// Lists the tensors of `params` (GraphitParams or const GraphitParams); `fix(matrix, rows, cols)` checks or
// allocates a member.
template <typename P, typename View, typename Mat, typename Vec>
std::vector<View> list_tensors(P& params, const GraphitConfig& c, Mat&& fix_mat, Vec&& fix_vec) {
  std::vector<View> t;
  auto mat = [&](const std::string& name, auto& m, int64_t rows, int64_t cols) {
    fix_mat(name, m, rows, cols);
    t.push_back({name, m.data(), {rows, cols}});
  };
  auto vec = [&](const std::string& name, auto& v, int64_t size) {
    fix_vec(name, v, size);
    t.push_back({name, v.data(), {size}});
  };
  const int d = c.d;
  if (c.vocab > 0) mat("embedding.weight", params.embedding, c.vocab, d);
  if (c.features > 0) mat("features.weight", params.features_weight, d, c.features);
  if (c.pe_dim > 0) {
    mat("pe.weight", params.pe_weight, d, c.pe_dim);
    vec("pe.bias", params.pe_bias, d);
  }
  if (c.path_dim > 0) {
    mat("path.weight", params.path_weight, d, c.path_dim);
    vec("path.bias", params.path_bias, d);
  }
  INDUCTIVE_CHECK(static_cast<int>(params.layers.size()) == c.layers, ErrorCode::kShapeMismatch,
                  "graphit: parameters for ", params.layers.size(), " layers, the config has ", c.layers);
  for (int l = 0; l < c.layers; ++l) {
    auto& p = params.layers[l];
    const std::string pre = "layers." + std::to_string(l) + ".";
    mat(pre + "attn.q.weight", p.q_weight, d, d);
    mat(pre + "attn.v.weight", p.v_weight, d, d);
    mat(pre + "attn.out.weight", p.out_weight, d, d);
    vec(pre + "attn.out.bias", p.out_bias, d);
    vec(pre + "norm1.weight", p.norm1_weight, d);
    vec(pre + "norm1.bias", p.norm1_bias, d);
    mat(pre + "ffn1.weight", p.ffn1_weight, c.ffn, d);
    vec(pre + "ffn1.bias", p.ffn1_bias, c.ffn);
    mat(pre + "ffn2.weight", p.ffn2_weight, d, c.ffn);
    vec(pre + "ffn2.bias", p.ffn2_bias, d);
    vec(pre + "norm2.weight", p.norm2_weight, d);
    vec(pre + "norm2.bias", p.norm2_bias, d);
  }
  mat("head.hidden.weight", params.hidden_weight, c.hidden, d);
  vec("head.hidden.bias", params.hidden_bias, c.hidden);
  mat("head.out.weight", params.out_weight, c.outputs, c.hidden);
  vec("head.out.bias", params.out_bias, c.outputs);
  return t;
}

}  // namespace

std::vector<GraphitParams::Tensor> GraphitParams::tensors(const GraphitConfig& c) {
  layers.resize(c.layers);
  return list_tensors<GraphitParams, Tensor>(
      *this, c,
      [](const std::string&, MatF& m, int64_t rows, int64_t cols) {
        if (m.rows() != rows || m.cols() != cols) m.setZero(rows, cols);
      },
      [](const std::string&, VecF& v, int64_t size) {
        if (v.size() != size) v.setZero(size);
      });
}

std::vector<GraphitParams::ConstTensor> GraphitParams::tensors(const GraphitConfig& c) const {
  return list_tensors<const GraphitParams, ConstTensor>(
      *this, c,
      [](const std::string& name, const MatF& m, int64_t rows, int64_t cols) {
        INDUCTIVE_CHECK(m.rows() == rows && m.cols() == cols, ErrorCode::kShapeMismatch, "graphit: parameter ", name,
                        " is ", m.rows(), " x ", m.cols(), ", the config implies ", rows, " x ", cols);
      },
      [](const std::string& name, const VecF& v, int64_t size) {
        INDUCTIVE_CHECK(v.size() == size, ErrorCode::kShapeMismatch, "graphit: parameter ", name, " has ", v.size(),
                        " values, the config implies ", size);
      });
}

GraphitParams GraphitParams::zeros(const GraphitConfig& config) {
  GraphitParams p;
  p.tensors(config);  // allocates every tensor with its shape, zero-filled
  return p;
}

void GraphitParams::set_zero() {
  for (MatF* m : {&embedding, &features_weight, &pe_weight, &path_weight, &hidden_weight, &out_weight}) m->setZero();
  for (VecF* v : {&pe_bias, &path_bias, &hidden_bias, &out_bias}) v->setZero();
  for (GraphitLayerParams& p : layers) {
    for (MatF* m : {&p.q_weight, &p.v_weight, &p.out_weight, &p.ffn1_weight, &p.ffn2_weight}) m->setZero();
    for (VecF* v :
         {&p.out_bias, &p.norm1_weight, &p.norm1_bias, &p.norm2_weight, &p.norm2_bias, &p.ffn1_bias, &p.ffn2_bias})
      v->setZero();
  }
}

GraphitModel GraphitModel::create(const GraphitConfig& config, uint64_t seed) {
  config.validate();
  GraphitModel m;
  m.config = config;
  m.params = GraphitParams::zeros(config);
  std::mt19937_64 rng(seed);
  auto uniform = [&](float* x, Eigen::Index n, double bound) {
    std::uniform_real_distribution<double> u(-bound, bound);
    for (Eigen::Index i = 0; i < n; ++i) x[i] = static_cast<float>(u(rng));
  };
  // nn.Linear: weight and bias U(-1/sqrt(in), 1/sqrt(in)).
  auto linear = [&](MatF& w, VecF* b) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(w.cols()));
    uniform(w.data(), w.size(), bound);
    if (b) uniform(b->data(), b->size(), bound);
  };
  GraphitParams& p = m.params;
  const int d = config.d;
  // The reference embeds one-hot labels with Linear(vocab, d, bias=False): U(+-1/sqrt(vocab)).
  if (config.vocab > 0) uniform(p.embedding.data(), p.embedding.size(), 1.0 / std::sqrt(double(config.vocab)));
  if (config.features > 0) linear(p.features_weight, nullptr);
  if (config.pe_dim > 0) linear(p.pe_weight, &p.pe_bias);
  if (config.path_dim > 0) linear(p.path_weight, &p.path_bias);
  for (GraphitLayerParams& l : p.layers) {
    // nn.MultiheadAttention: Xavier-uniform in-projections, out-projection bias 0.
    const double xavier = std::sqrt(6.0 / (d + d));
    uniform(l.q_weight.data(), l.q_weight.size(), xavier);
    uniform(l.v_weight.data(), l.v_weight.size(), xavier);
    linear(l.out_weight, nullptr);
    l.out_bias.setZero();
    l.norm1_weight.setOnes();
    l.norm1_bias.setZero();
    l.norm2_weight.setOnes();
    l.norm2_bias.setZero();
    linear(l.ffn1_weight, &l.ffn1_bias);
    linear(l.ffn2_weight, &l.ffn2_bias);
  }
  linear(p.hidden_weight, &p.hidden_bias);
  linear(p.out_weight, &p.out_bias);
  if (config.norm == GraphitNorm::kBatch) {
    m.norm_stats.resize(config.layers);
    for (GraphitNormStats& s : m.norm_stats) {
      s.mean1 = VecF::Zero(d);
      s.var1 = VecF::Ones(d);
      s.mean2 = VecF::Zero(d);
      s.var2 = VecF::Ones(d);
    }
  }
  return m;
}

GraphitBatch GraphitBatch::pack(const GraphitConfig& c, const std::vector<GraphitGraph>& graphs,
                                const std::vector<int>& index, const std::vector<int32_t>* classes,
                                const std::vector<float>* values) {
  GraphitBatch b;
  std::vector<int> idx = index;
  if (idx.empty())
    for (int g = 0; g < static_cast<int>(graphs.size()); ++g) idx.push_back(g);
  INDUCTIVE_CHECK(!idx.empty(), ErrorCode::kInvalidArgument, "graphit: no graph given");
  if (classes)
    INDUCTIVE_CHECK(classes->size() == graphs.size(), ErrorCode::kShapeMismatch, "graphit: ", classes->size(),
                    " class labels for ", graphs.size(), " graphs");
  if (values)
    INDUCTIVE_CHECK(values->size() == graphs.size() * static_cast<size_t>(c.outputs), ErrorCode::kShapeMismatch,
                    "graphit: ", values->size(), " target values for ", graphs.size(), " graphs x ", c.outputs,
                    " outputs");
  b.n_graphs = static_cast<int>(idx.size());
  b.offsets.assign(1, 0);
  b.sq_offsets.assign(1, 0);
  for (int g : idx) {
    INDUCTIVE_CHECK(g >= 0 && g < static_cast<int>(graphs.size()), ErrorCode::kInvalidArgument, "graphit: graph index ",
                    g, " out of range (", graphs.size(), " graphs)");
    const int n = graphs[g].num_nodes;
    INDUCTIVE_CHECK(n >= 1, ErrorCode::kInvalidArgument, "graphit: graph ", g, " has ", n, " nodes, expected >= 1");
    b.offsets.push_back(b.offsets.back() + n);
    b.sq_offsets.push_back(b.sq_offsets.back() + static_cast<int64_t>(n) * n);
  }
  const int N = b.n_nodes = b.offsets.back();
  if (c.vocab > 0) b.labels.resize(N);
  if (c.features > 0) b.features.resize(N, c.features);
  if (c.pe_dim > 0) b.pe.resize(N, c.pe_dim);
  if (c.path_dim > 0) b.path.resize(N, c.path_dim);
  b.residual_scale.resize(N);
  b.kernels.assign(b.n_graphs, nullptr);
  for (int k = 0; k < b.n_graphs; ++k) {
    const int g = idx[k];
    const GraphitGraph& gr = graphs[g];
    const int n = gr.num_nodes, o = b.offsets[k];
    auto shape = [&](const MatF& m, Eigen::Index cols, const char* what) {
      INDUCTIVE_CHECK(m.rows() == n && m.cols() == cols, ErrorCode::kShapeMismatch, "graphit: graph ", g, ": ", what,
                      " is ", m.rows(), " x ", m.cols(), ", expected ", n, " x ", cols);
      INDUCTIVE_CHECK(m.allFinite(), ErrorCode::kInvalidArgument, "graphit: graph ", g, ": ", what,
                      " contains NaN or Inf");
    };
    if (c.vocab > 0) {
      INDUCTIVE_CHECK(static_cast<int>(gr.node_labels.size()) == n, ErrorCode::kShapeMismatch, "graphit: graph ", g,
                      ": ", gr.node_labels.size(), " node labels for ", n, " nodes");
      for (int i = 0; i < n; ++i) {
        INDUCTIVE_CHECK(gr.node_labels[i] >= 0 && gr.node_labels[i] < c.vocab, ErrorCode::kInvalidArgument,
                        "graphit: graph ", g, ": node ", i, " has label ", gr.node_labels[i], ", expected 0..",
                        c.vocab - 1);
        b.labels[o + i] = gr.node_labels[i];
      }
    }
    if (c.features > 0)
      shape(gr.node_features, c.features, "node_features"), b.features.middleRows(o, n) = gr.node_features;
    if (c.pe_dim > 0) shape(gr.pe, c.pe_dim, "pe"), b.pe.middleRows(o, n) = gr.pe;
    if (c.path_dim > 0)
      shape(gr.path_features, c.path_dim, "path_features"), b.path.middleRows(o, n) = gr.path_features;
    if (c.kernel) {
      shape(gr.kernel, n, "kernel");
      b.kernels[k] = &gr.kernel;
    }
    if (c.degree_scaling) {
      INDUCTIVE_CHECK(gr.degree.size() == n, ErrorCode::kShapeMismatch, "graphit: graph ", g, ": degree has ",
                      gr.degree.size(), " entries for ", n, " nodes");
      for (int i = 0; i < n; ++i) {
        INDUCTIVE_CHECK(std::isfinite(gr.degree[i]) && gr.degree[i] >= 0, ErrorCode::kInvalidArgument,
                        "graphit: graph ", g, ": node ", i, " has degree ", gr.degree[i], ", expected >= 0");
        b.residual_scale[o + i] = 1.0f / std::sqrt(1.0f + gr.degree[i]);
      }
    } else {
      b.residual_scale.segment(o, n).setOnes();
    }
    if (classes) {
      const int32_t y = (*classes)[g];
      INDUCTIVE_CHECK(c.classification() && y >= 0 && y < c.outputs, ErrorCode::kInvalidArgument, "graphit: graph ", g,
                      " has class ", y, ", expected 0..", c.outputs - 1,
                      c.classification() ? "" : " (regression model)");
      b.classes.push_back(y);
    }
    if (values) {
      for (int t = 0; t < c.outputs; ++t) {
        const float v = (*values)[static_cast<size_t>(g) * c.outputs + t];
        INDUCTIVE_CHECK(std::isfinite(v), ErrorCode::kInvalidArgument, "graphit: graph ", g,
                        " has a non-finite target");
        b.values.push_back(v);
      }
    }
  }
  return b;
}

void GraphitBatch::flip_pe_signs(std::mt19937_64& rng) {
  if (pe.cols() == 0) return;
  for (int g = 0; g < n_graphs; ++g)
    for (Eigen::Index j = 0; j < pe.cols(); ++j)
      if (rng() & 1) pe.block(offsets[g], j, size(g), 1) *= -1.0f;
}

}  // namespace inductive
