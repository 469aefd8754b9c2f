// inductive/otke.h - the OTKE model: local features -> Nystrom embedding -> OT pooling -> linear head.
//
// Config (stored as JSON in the model file, every field with its default):
//   input:     {"type": "sequence", "alphabet": "dna", "k": 10}   (one-hot k-mers, unit norm)
//            | {"type": "vectors", "dim": d}                       (sets of d-dimensional vectors)
//            | {"type": "tokens", "vocab": V, "dim": E, "lowercase": true, "tokens": ["<unk>", ...]}
//                  (text: a sentence is the set of its tokens' rows in a trainable V x E table; the V tokens, index
//                   0 = "<unk>", are stored in the config; tokeniser and vocabulary: inductive/tokens.h)
//   embedding: {"type": "nystrom", "anchors": 128, "sigma": 0.6, "reg": 0.01, "keep_norm": false} | {"type":
//   "identity"}
//            | {"type": "conv", "filters": 64}   (ReLU(W x + b) on the k-mers = a Conv1d of width k + ReLU, the
//                                                   thesis' DeepSEA front end; learned by supervised training only)
//   pooling:   {"type": "otk", "p": 64, "q": 1, "eps": 0.5, "iters": 100, "sigma_pos": 0, "scale": "paper",
//               "plan": "sinkhorn" | "attention", "sinusoidal": false}   (the last two: ablations, written only when
//                                                                       set; see inductive/otk_pooling.h)
//            | {"type": "mean"} | {"type": "max"}                  (the baselines of the thesis' tables)
//   head:      {"classes": C, "labels": [...]}                     (C = 0: an embedding-only model)
//              optional, written only when set (the thesis' DeepSEA model: conv -> OTK -> MLP with dropout):
//              "hidden": H   (an MLP head: logits = W ReLU(W_h Phi + b_h) + b; 0 = the linear head)
//              "dropout": r  (training only: each entry of Phi, the hidden layer's input, dropped with probability
//                             r, the rest scaled by 1 / (1 - r), as the thesis' Dropout before its MLP; needs
//                             hidden > 0)
//              "multilabel": true  (C independent binary labels: a sigmoid per output and binary cross-entropy,
//                             instead of one class among C; at most 31 labels, see otke_train.h)
// Tensors: "tokens.embedding" [V, E] (tokens only), "nystrom.anchors" [K, d], "nystrom.factor" [K, K], "conv.weight"
// [K, d], "conv.bias" [K], "otk.references" [q, p, K], "head.hidden.weight" [H, D] and "head.hidden.bias" [H] (MLP
// head only), "head.weight" [C, D or H], "head.bias" [C]; D = q p K (otk) or K (mean/max); d = k |alphabet|
// (sequence), dim (vectors) or E (tokens).
//
// Inputs of the model (what embed() and otke_loss() take): local features (k-mers, vectors) as a SetBatch of dim
// d, except for tokens models, whose inputs are token indices: a SetBatch of dim 1 holding each index as a float
// (exact: V <= 2^20); the table lookup is part of the model, so its rows receive gradients.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "inductive/barycenter.h"
#include "inductive/linalg.h"
#include "inductive/logistic.h"
#include "inductive/multilabel.h"
#include "inductive/model_file.h"
#include "inductive/nystrom.h"
#include "inductive/enum_names.h"
#include "inductive/otk_pooling.h"
#include "inductive/progress.h"
#include "inductive/sequence.h"
#include "inductive/set_batch.h"
#include "inductive/tokens.h"

namespace inductive {

// Config variants (names as in the JSON's "type" fields).
enum class OtkeInput : uint8_t { kSequence, kVectors, kTokens };
enum class OtkeEmbedding : uint8_t { kNystrom, kIdentity, kConv };
enum class OtkePooling : uint8_t { kOtk, kMean, kMax };
inline constexpr EnumName<OtkeInput> kOtkeInputs[] = {
    {OtkeInput::kSequence, "sequence"}, {OtkeInput::kVectors, "vectors"}, {OtkeInput::kTokens, "tokens"}};
inline constexpr EnumName<OtkeEmbedding> kOtkeEmbeddings[] = {
    {OtkeEmbedding::kNystrom, "nystrom"}, {OtkeEmbedding::kIdentity, "identity"}, {OtkeEmbedding::kConv, "conv"}};
inline constexpr EnumName<OtkePooling> kOtkePoolings[] = {
    {OtkePooling::kOtk, "otk"}, {OtkePooling::kMean, "mean"}, {OtkePooling::kMax, "max"}};
template <>
struct EnumTable<OtkeInput> {
  static constexpr const auto& names = kOtkeInputs;
};
template <>
struct EnumTable<OtkeEmbedding> {
  static constexpr const auto& names = kOtkeEmbeddings;
};
template <>
struct EnumTable<OtkePooling> {
  static constexpr const auto& names = kOtkePoolings;
};

struct OtkeConfig {
  OtkeInput input_type = OtkeInput::kSequence;
  std::string alphabet = "dna";
  int kmer = 10;
  int input_dim = 0;                // vectors: d; tokens: E, the token embedding dimension
  std::vector<std::string> tokens;  // tokens: the vocabulary, index 0 = "<unk>" (V = tokens.size())
  bool lowercase = true;            // tokens: the tokeniser lowercases ASCII
  OtkeEmbedding embedding = OtkeEmbedding::kNystrom;
  int anchors = 128;  // K for nystrom
  int filters = 64;   // K for conv
  NystromOptions nystrom;
  OtkePooling pooling = OtkePooling::kOtk;
  OtkOptions otk;
  int classes = 0;
  std::vector<std::string> labels;
  int hidden = 0;           // H > 0: an MLP head with one hidden ReLU layer of H units
  float dropout = 0;        // on the MLP's input Phi, during training
  bool multilabel = false;  // C binary labels (sigmoid, binary cross-entropy) rather than one class of C

  int feature_dim() const;  // d: k * |alphabet| or input_dim (vectors, tokens)
  int input_width() const;  // dim of the model's input batch: 1 (token indices) for tokens, else feature_dim()
  int embed_dim() const;    // K: anchors (nystrom), filters (conv) or d (identity)
  int output_dim() const;   // q p K (otk) or K (mean/max)
  int head_dim() const;     // what the output layer reads: H (MLP head) or output_dim()
  void validate() const;
  nlohmann::json to_json() const;
  static OtkeConfig from_json(const nlohmann::json& j);  // strict: unknown keys and bad values are errors
};

// The "otke" model-file kind: config validation and the tensors a config implies. register_otke_model_kind puts it
// in io's registry (once; OtkeModel does so before it reads or writes a file), so read_model checks otke files.
ModelSchema otke_model_schema();
void register_otke_model_kind();

class OtkeModel {
 public:
  OtkeConfig config;
  MatF token_table;    // when config.input_type == OtkeInput::kTokens: V x E, row v = the local feature of token v
  Nystrom nystrom;     // when config.embedding == OtkeEmbedding::kNystrom
  MatF conv_weight;    // when config.embedding == OtkeEmbedding::kConv: K x d
  VecF conv_bias;      // K
  OtkPooling pooling;  // when config.pooling == OtkePooling::kOtk
  LinearHead hidden;   // when config.hidden > 0: H x D, the MLP head's hidden layer (ReLU after it)
  LinearHead head;     // when config.classes > 0: C x head_dim()

  // The model's inputs for strings: k-mers of sequences (input "sequence"; letters validated), or token indices of
  // sentences (input "tokens"; a sentence without any token throws, naming it). `names` name the strings in errors.
  SetBatch sequence_features(const std::vector<std::string>& sequences,
                             const std::vector<std::string>& names = {}) const;
  // Tokens models: the vocabulary of the config (an index of config.tokens, built on each call: O(V)).
  Vocabulary vocabulary() const;
  // Tokens models: the local features of a batch of token indices (rows of token_table); others: a copy.
  SetBatch local_features(const SetBatch& inputs) const;
  // psi for every element of every set (identity embedding: a copy).
  SetBatch embed_elements(const SetBatch& features) const;
  // The embedding Phi, batch x output_dim. `plans` (optional): per reference [batch, n_max, p] transport plans.
  MatF embed(const SetBatch& features, std::vector<std::vector<float>>* plans = nullptr) const;
  // Head logits (batch x C), through the hidden layer when there is one (no dropout); throws when the model has no
  // head. Probabilities: softmax rows, or for a multilabel model a sigmoid per entry (output_probabilities).
  MatF predict(const Eigen::Ref<const MatF>& embeddings) const;
  // The hidden layer's activations ReLU(W_h Phi + b_h) (batch x H); an MLP head only.
  MatF hidden_activations(const Eigen::Ref<const MatF>& embeddings) const;
  // This model with `head` as a linear one-of-C head (C = its rows), whatever head it had (an MLP or multilabel one
  // included): what a fitted head (inductive/head_fit.h) makes of a model. `labels` names the classes (or empty).
  OtkeModel with_linear_head(const LinearHead& head, const std::vector<std::string>& labels) const;

  // Tensors point into this model and into `storage`: keep both alive while writing.
  ModelContents to_contents(std::vector<float>& storage) const;
  std::vector<uint8_t> to_bytes() const;
  void save(const std::string& path) const;  // atomic
  static OtkeModel from_view(const ModelView& view);
  static OtkeModel from_bytes(const uint8_t* bytes, size_t size);
  static OtkeModel load(const std::string& path);

 private:
  void check_dim(const SetBatch& features) const;
};

// How the unsupervised fit updates a reference from its sets: k-means on their elements (the thesis' choice), or
// the free-support Wasserstein barycenter of the sets (its alternative; inductive/barycenter.h), started from the
// k-means centres.
enum class OtkeReferenceUpdate : uint8_t { kKMeans, kBarycenter };
inline constexpr EnumName<OtkeReferenceUpdate> kOtkeReferenceUpdates[] = {
    {OtkeReferenceUpdate::kKMeans, "kmeans"}, {OtkeReferenceUpdate::kBarycenter, "barycenter"}};
template <>
struct EnumTable<OtkeReferenceUpdate> {
  static constexpr const auto& names = kOtkeReferenceUpdates;
};

// Unsupervised learning (thesis ch. 2): anchors by spherical k-means++ on sampled local features, references by
// k-means on their embeddings (q = 1) or by 2-Wasserstein k-means over sets (q > 1); with the barycenter update,
// each reference is then refined into the Wasserstein barycenter of its sets (q = 1: of every set).
struct OtkeFitOptions {
  int64_t max_samples = 300000;  // local features sampled for k-means (thesis: 300k)
  int kmeans_iters = 100;
  int wkmeans_iters = 5;  // q > 1
  OtkeReferenceUpdate reference_update = OtkeReferenceUpdate::kKMeans;
  BarycenterOptions barycenter;  // reference_update == kBarycenter (its communicator is this one's)
  uint64_t seed = 0;
  // Stages "anchors (spherical k-means)", "reference (k-means)", "references (Wasserstein k-means)" and
  // "reference (Wasserstein barycenter)".
  ProgressFn progress;
  // Data parallelism (inductive/communicator.h; null: one process): every rank passes the same features and gets
  // the one-process model; the k-means distances and the sets' Wasserstein assignments are split over the ranks.
  class Communicator* communicator = nullptr;
};
// With a conv embedding (no unsupervised objective), the filters get a seeded He initialisation first. A tokens
// model gets its table first: N(0, 1/E) entries (seeded; rows of norm about 1), unless it already has one of shape
// V x E; `features` are then token indices (see OtkeModel).
void fit_otke_unsupervised(OtkeModel& model, const SetBatch& features, const OtkeFitOptions& options);
// The same fit from sequences (the same model, bit for bit, as from sequence_features(sequences, names)), building
// only the max_samples sampled k-mers' features rather than every sequence's: memory O(max_samples k A + letters),
// so a million sequences fit in a browser tab. q > 1 (the Wasserstein k-means needs every set) and tokens go through
// sequence_features, and so does the barycenter update (it reads every set).
void fit_otke_unsupervised(OtkeModel& model, const std::vector<std::string>& sequences,
                           const std::vector<std::string>& names, const OtkeFitOptions& options);

// The probabilities of the head's logits: softmax rows (one class of C), or an independent sigmoid per label
// (multilabel models).
MatF output_probabilities(const OtkeConfig& config, const Eigen::Ref<const MatF>& logits);

// A seeded initialisation of the head, for models trained end to end from it (the MLP head, which the unsupervised
// fit's logistic regression cannot make): Glorot-uniform weights (He for the hidden layer, which feeds a ReLU), zero
// biases. The model must have its embedding (output_dim() known).
void init_otke_head(OtkeModel& model, uint64_t seed);

// Pools with mean or max over the valid elements of each set (the thesis' baselines).
MatF mean_pool(const SetBatch& x);
MatF max_pool(const SetBatch& x);

}  // namespace inductive
