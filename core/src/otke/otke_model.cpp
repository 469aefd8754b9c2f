// The OTKE model: inference, model-file round trip and schema (see inductive/otke.h).
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "inductive/otke.h"
#include "inductive/otke_train.h"
#include "inductive/random.h"
#include "ot/sinkhorn_detail.h"
#include "simd/small_gemm.h"

namespace inductive {

Vocabulary OtkeModel::vocabulary() const {
  INDUCTIVE_CHECK(config.input_type == OtkeInput::kTokens, ErrorCode::kInvalidArgument,
                  "otke: this model has no vocabulary (input.type = ", config.input_type, ")");
  return Vocabulary(config.tokens, config.lowercase);
}

namespace {

// Token indices of sentences as a dim-1 batch (see inductive/otke.h).
SetBatch token_inputs(const Vocabulary& vocab, const std::vector<std::string>& sentences,
                      const std::vector<std::string>& names) {
  std::vector<std::vector<int32_t>> ids(sentences.size());
  int n_max = 0;
  for (size_t s = 0; s < sentences.size(); ++s) {
    ids[s] = vocab.encode(sentences[s]);
    INDUCTIVE_CHECK(!ids[s].empty(), ErrorCode::kInvalidArgument,
                    "otke: ", s < names.size() ? names[s] : "sentence " + std::to_string(s),
                    ": no token (an empty or all-whitespace sentence); every set needs >= 1 element");
    n_max = std::max(n_max, static_cast<int>(ids[s].size()));
  }
  SetBatch out(static_cast<int>(sentences.size()), n_max, 1);
  for (size_t s = 0; s < sentences.size(); ++s) {
    out.n[s] = static_cast<int32_t>(ids[s].size());
    std::copy(ids[s].begin(), ids[s].end(), out.row(static_cast<int>(s), 0));
  }
  return out;
}

}  // namespace

SetBatch OtkeModel::sequence_features(const std::vector<std::string>& sequences,
                                      const std::vector<std::string>& names) const {
  INDUCTIVE_CHECK(config.input_type != OtkeInput::kVectors, ErrorCode::kInvalidArgument,
                  "otke: this model embeds sets of vectors (input.type = vectors), not sequences");
  INDUCTIVE_CHECK(!sequences.empty(), ErrorCode::kInvalidArgument, "otke: no sequence given");
  if (config.input_type == OtkeInput::kTokens) return token_inputs(vocabulary(), sequences, names);
  const Alphabet alphabet = Alphabet::from_name(config.alphabet);
  std::vector<std::vector<int8_t>> encoded(sequences.size());
  for (size_t s = 0; s < sequences.size(); ++s) {
    const std::string what = s < names.size() ? "sequence '" + names[s] + "'" : "sequence " + std::to_string(s);
    encoded[s] = encode_sequence(alphabet, sequences[s], what);
  }
  return kmer_features(encoded, alphabet.size(), config.kmer, names);
}

void OtkeModel::check_dim(const SetBatch& features) const {
  INDUCTIVE_CHECK(features.dim == config.input_width(), ErrorCode::kShapeMismatch,
                  "otke: ", config.input_type == OtkeInput::kTokens ? "token indices have" : "features have",
                  " dimension ", features.dim, ", expected ", config.input_width(), " (from the model config)");
}

void check_otke_tokens(const OtkeModel& model, const SetBatch& inputs) {
  const OtkeConfig& config = model.config;
  const MatF& token_table = model.token_table;
  const int V = static_cast<int>(config.tokens.size()), E = config.input_dim;
  INDUCTIVE_CHECK(token_table.rows() == V && token_table.cols() == E, ErrorCode::kInvalidArgument,
                  "otke: the token table is ", token_table.rows(), " x ", token_table.cols(), ", expected ", V, " x ",
                  E, " (is the model fitted?)");
  for (int b = 0; b < inputs.batch; ++b)
    for (int i = 0; i < inputs.n[b]; ++i) {
      const float v = *inputs.row(b, i);
      INDUCTIVE_CHECK(v >= 0 && v < V && v == std::floor(v), ErrorCode::kInvalidArgument, "otke: set ", b, " element ",
                      i, " holds token index ", v, ", expected an integer in 0..", V - 1);
    }
}

SetBatch OtkeModel::local_features(const SetBatch& inputs) const {
  if (config.input_type != OtkeInput::kTokens) return inputs;
  check_dim(inputs);
  check_otke_tokens(*this, inputs);
  const int E = config.input_dim;
  SetBatch out(inputs.batch, inputs.n_max, E);
  out.n = inputs.n;
  for (int b = 0; b < inputs.batch; ++b)
    for (int i = 0; i < inputs.n[b]; ++i)
      MapF(out.row(b, i), 1, E) = token_table.row(static_cast<Eigen::Index>(*inputs.row(b, i)));
  return out;
}

SetBatch OtkeModel::embed_elements(const SetBatch& inputs) const {
  inputs.validate("otke");
  check_dim(inputs);
  SetBatch looked_up;
  if (config.input_type == OtkeInput::kTokens) looked_up = local_features(inputs);
  const SetBatch& features = config.input_type == OtkeInput::kTokens ? looked_up : inputs;
  if (config.embedding == OtkeEmbedding::kIdentity) return features;
  SetBatch psi(features.batch, features.n_max, config.embed_dim());
  psi.n = features.n;
  // The convolution: ReLU(x W^T + b), the bias and ReLU applied as the product's rows are stored.
  const bool conv = config.embedding != OtkeEmbedding::kNystrom;
  const MatF conv_t = conv ? MatF(conv_weight.transpose()) : MatF();
  simd::RowEpilogue bias_relu;
  bias_relu.bias = conv_bias.data();
  bias_relu.relu = true;
  detail::for_each_problem(features.batch, [&](int b) {
    const int n = features.n[b];
    if (conv) {
      simd::gemm_ab(features.row(b, 0), features.dim, conv_t.data(), psi.dim, psi.row(b, 0), psi.dim, n, psi.dim,
                    features.dim, false, &bias_relu);
    } else {
      MapF(psi.row(b, 0), n, psi.dim) = nystrom.forward(CMapF(features.row(b, 0), n, features.dim));
    }
  });
  return psi;
}

// Row by row: each step is a contiguous vector operation over the dim features (Eigen's colwise reductions of a
// row-major map walk the set column by column, with stride dim).
MatF mean_pool(const SetBatch& x) {
  MatF out(x.batch, x.dim);
  for (int b = 0; b < x.batch; ++b) {
    auto acc = out.row(b);
    acc = CMapF(x.row(b, 0), 1, x.dim);
    for (int i = 1; i < x.n[b]; ++i) acc += CMapF(x.row(b, i), 1, x.dim);
    acc /= static_cast<float>(x.n[b]);
  }
  return out;
}

MatF max_pool(const SetBatch& x) {
  MatF out(x.batch, x.dim);
  for (int b = 0; b < x.batch; ++b) {
    auto acc = out.row(b);
    acc = CMapF(x.row(b, 0), 1, x.dim);
    for (int i = 1; i < x.n[b]; ++i) acc = acc.cwiseMax(CMapF(x.row(b, i), 1, x.dim));
  }
  return out;
}

MatF OtkeModel::embed(const SetBatch& features, std::vector<std::vector<float>>* plans) const {
  SetBatch embedded;
  const bool in_place = config.embedding == OtkeEmbedding::kIdentity && config.input_type != OtkeInput::kTokens;
  const bool otk = config.pooling == OtkePooling::kOtk;
  if (!in_place) {
    embedded = embed_elements(features);
  } else {
    // The features are the embedding: no copy. OTK pooling finds a non-finite feature itself (see
    // with_finiteness_scan_on_error); mean and max pooling would not.
    otk ? features.validate_shape("otke") : features.validate("otke");
    check_dim(features);
  }
  const SetBatch& psi = in_place ? features : embedded;
  if (config.pooling == OtkePooling::kMean) return mean_pool(psi);
  if (config.pooling == OtkePooling::kMax) return max_pool(psi);
  if (!in_place) return pooling.forward(psi, nullptr, plans);
  return with_finiteness_scan_on_error(features, "otke", [&] { return pooling.forward(psi, nullptr, plans); });
}

MatF OtkeModel::predict(const Eigen::Ref<const MatF>& embeddings) const {
  INDUCTIVE_CHECK(config.classes > 0, ErrorCode::kInvalidArgument,
                  "otke: this model has no classifier head (head.classes = 0); fit one first");
  if (config.hidden > 0) return head.logits(hidden_activations(embeddings));
  return head.logits(embeddings);
}

MatF OtkeModel::hidden_activations(const Eigen::Ref<const MatF>& embeddings) const {
  INDUCTIVE_CHECK(config.hidden > 0, ErrorCode::kInvalidArgument, "otke: this model's head has no hidden layer");
  return hidden.logits(embeddings).cwiseMax(0.0f);
}

MatF output_probabilities(const OtkeConfig& config, const Eigen::Ref<const MatF>& logits) {
  return config.multilabel ? sigmoid(logits) : softmax_rows(logits);
}

void init_otke_head(OtkeModel& model, uint64_t seed) {
  const OtkeConfig& c = model.config;
  INDUCTIVE_CHECK(c.classes >= 2, ErrorCode::kInvalidArgument, "otke: init_otke_head needs head.classes >= 2");
  std::mt19937_64 rng(seed);
  const auto uniform = [&](MatF& w, int rows, int cols, double bound) {
    w.resize(rows, cols);
    for (Eigen::Index i = 0; i < w.size(); ++i) w.data()[i] = static_cast<float>(bound * (2 * uniform_unit(rng) - 1));
  };
  const int D = c.output_dim();
  if (c.hidden > 0) {
    uniform(model.hidden.weight, c.hidden, D, std::sqrt(6.0 / D));  // He-uniform: ReLU follows
    model.hidden.bias = VecF::Zero(c.hidden);
  } else {
    model.hidden = LinearHead{};
  }
  const int H = c.head_dim();
  uniform(model.head.weight, c.classes, H, std::sqrt(6.0 / (H + c.classes)));  // Glorot-uniform
  model.head.bias = VecF::Zero(c.classes);
}

namespace {

std::vector<TensorSpec> otke_tensors(const OtkeConfig& c) {
  std::vector<TensorSpec> t;
  const int64_t K = c.embed_dim();
  if (c.input_type == OtkeInput::kTokens)
    t.push_back({"tokens.embedding", DType::kF32, {static_cast<int64_t>(c.tokens.size()), c.input_dim}});
  if (c.embedding == OtkeEmbedding::kNystrom) {
    t.push_back({"nystrom.anchors", DType::kF32, {c.anchors, c.feature_dim()}});
    t.push_back({"nystrom.factor", DType::kF32, {c.anchors, c.anchors}});
  }
  if (c.embedding == OtkeEmbedding::kConv) {
    t.push_back({"conv.weight", DType::kF32, {c.filters, c.feature_dim()}});
    t.push_back({"conv.bias", DType::kF32, {c.filters}});
  }
  if (c.pooling == OtkePooling::kOtk) t.push_back({"otk.references", DType::kF32, {c.otk.q, c.otk.p, K}});
  if (c.hidden > 0) {
    t.push_back({"head.hidden.weight", DType::kF32, {c.hidden, c.output_dim()}});
    t.push_back({"head.hidden.bias", DType::kF32, {c.hidden}});
  }
  if (c.classes > 0) {
    t.push_back({"head.weight", DType::kF32, {c.classes, c.head_dim()}});
    t.push_back({"head.bias", DType::kF32, {c.classes}});
  }
  return t;
}

}  // namespace

ModelSchema otke_model_schema() {
  ModelSchema schema;
  schema.model = "otke";
  schema.validate_config = [](const nlohmann::json& config, int) { OtkeConfig::from_json(config); };
  schema.tensors = [](const nlohmann::json& config, int) { return otke_tensors(OtkeConfig::from_json(config)); };
  return schema;
}

void register_otke_model_kind() {
  static const bool once = (register_model_schema(otke_model_schema()), true);
  (void)once;
}

ModelContents OtkeModel::to_contents(std::vector<float>& storage) const {
  register_otke_model_kind();  // write_model reads the bytes back, checked against the schema
  config.validate();
  ModelContents m;
  m.model = "otke";
  m.config = config.to_json();
  // The q references are separate matrices in memory; the file stores them as one [q, p, K] tensor.
  storage.clear();
  for (const MatF& z : pooling.references()) storage.insert(storage.end(), z.data(), z.data() + z.size());
  // The stored tensors are exactly what the schema lists, with its shapes.
  for (const TensorSpec& spec : otke_tensors(config)) {
    int64_t numel = 1;
    for (int64_t d : spec.shape) numel *= d;
    const float* data = nullptr;
    int64_t have = -1;
    if (spec.name == "tokens.embedding") data = token_table.data(), have = token_table.size();
    if (spec.name == "nystrom.anchors") data = nystrom.anchors().data(), have = nystrom.anchors().size();
    if (spec.name == "nystrom.factor") data = nystrom.factor().data(), have = nystrom.factor().size();
    if (spec.name == "otk.references") data = storage.data(), have = static_cast<int64_t>(storage.size());
    if (spec.name == "conv.weight") data = conv_weight.data(), have = conv_weight.size();
    if (spec.name == "conv.bias") data = conv_bias.data(), have = conv_bias.size();
    if (spec.name == "head.hidden.weight") data = hidden.weight.data(), have = hidden.weight.size();
    if (spec.name == "head.hidden.bias") data = hidden.bias.data(), have = hidden.bias.size();
    if (spec.name == "head.weight") data = head.weight.data(), have = head.weight.size();
    if (spec.name == "head.bias") data = head.bias.data(), have = head.bias.size();
    INDUCTIVE_CHECK(have == numel, ErrorCode::kInvalidArgument, "otke: tensor ", spec.name, " has ", have,
                    " values, the config implies ", numel, " (is the model fitted?)");
    m.tensors.push_back({spec.name, DType::kF32, spec.shape, data});
  }
  return m;
}

OtkeModel OtkeModel::with_linear_head(const LinearHead& new_head, const std::vector<std::string>& labels) const {
  OtkeModel m = *this;
  m.config.classes = static_cast<int>(new_head.weight.rows());
  m.config.hidden = 0;
  m.config.dropout = 0;
  m.config.multilabel = false;
  m.config.labels = labels;
  m.hidden = LinearHead{};
  m.config.validate();
  m.head = new_head;
  return m;
}

std::vector<uint8_t> OtkeModel::to_bytes() const {
  std::vector<float> storage;
  return write_model(to_contents(storage));
}

void OtkeModel::save(const std::string& path) const {
  std::vector<float> storage;
  save_model_file(path, to_contents(storage));
}

OtkeModel OtkeModel::from_view(const ModelView& view) {
  INDUCTIVE_CHECK(view.model == "otke", ErrorCode::kBadModelFile, "model file holds a '", view.model,
                  "' model, expected an otke model");
  OtkeModel m;
  m.config = OtkeConfig::from_json(view.config);
  const OtkeConfig& c = m.config;
  const int K = c.embed_dim();
  if (c.input_type == OtkeInput::kTokens) {
    const int V = static_cast<int>(c.tokens.size());
    m.token_table = CMapF(view.f32("tokens.embedding", {V, c.input_dim}), V, c.input_dim);
    INDUCTIVE_CHECK(m.token_table.allFinite(), ErrorCode::kBadModelFile, "otke model: token table contains NaN or Inf");
  }
  if (c.embedding == OtkeEmbedding::kNystrom) {
    const float* w = view.f32("nystrom.anchors", {c.anchors, c.feature_dim()});
    const float* f = view.f32("nystrom.factor", {c.anchors, c.anchors});
    m.nystrom = Nystrom::from_stored(CMapF(w, c.anchors, c.feature_dim()), CMapF(f, c.anchors, c.anchors), c.nystrom);
  }
  if (c.embedding == OtkeEmbedding::kConv) {
    m.conv_weight = CMapF(view.f32("conv.weight", {c.filters, c.feature_dim()}), c.filters, c.feature_dim());
    m.conv_bias = Eigen::Map<const VecF>(view.f32("conv.bias", {c.filters}), c.filters);
    INDUCTIVE_CHECK(m.conv_weight.allFinite() && m.conv_bias.allFinite(), ErrorCode::kBadModelFile,
                    "otke model: conv filters contain NaN or Inf");
  }
  if (c.pooling == OtkePooling::kOtk) {
    const float* z = view.f32("otk.references", {c.otk.q, c.otk.p, K});
    std::vector<MatF> refs;
    for (int r = 0; r < c.otk.q; ++r) refs.push_back(CMapF(z + static_cast<int64_t>(r) * c.otk.p * K, c.otk.p, K));
    for (const MatF& zr : refs)
      INDUCTIVE_CHECK(zr.allFinite(), ErrorCode::kBadModelFile, "otke model: references contain NaN or Inf");
    m.pooling = OtkPooling(std::move(refs), c.otk);
  }
  if (c.hidden > 0) {
    m.hidden.weight = CMapF(view.f32("head.hidden.weight", {c.hidden, c.output_dim()}), c.hidden, c.output_dim());
    m.hidden.bias = Eigen::Map<const VecF>(view.f32("head.hidden.bias", {c.hidden}), c.hidden);
    INDUCTIVE_CHECK(m.hidden.weight.allFinite() && m.hidden.bias.allFinite(), ErrorCode::kBadModelFile,
                    "otke model: hidden layer contains NaN or Inf");
  }
  if (c.classes > 0) {
    m.head.weight = CMapF(view.f32("head.weight", {c.classes, c.head_dim()}), c.classes, c.head_dim());
    m.head.bias = Eigen::Map<const VecF>(view.f32("head.bias", {c.classes}), c.classes);
    INDUCTIVE_CHECK(m.head.weight.allFinite() && m.head.bias.allFinite(), ErrorCode::kBadModelFile,
                    "otke model: head contains NaN or Inf");
  }
  return m;
}

OtkeModel OtkeModel::from_bytes(const uint8_t* bytes, size_t size) {
  register_otke_model_kind();
  return from_view(read_model(bytes, size));
}

OtkeModel OtkeModel::load(const std::string& path) {
  const std::vector<uint8_t> bytes = read_file_bytes(path);
  try {
    return from_bytes(bytes.data(), bytes.size());
  } catch (const Error& e) {
    throw Error(e.code(), path + ": " + e.what());
  }
}

}  // namespace inductive
