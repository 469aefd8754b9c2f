// The OTKE model: config strictness, unsupervised fitting, and the model file round trip (same embeddings).
#include <cmath>
#include <cstdio>
#include <random>

#include <gtest/gtest.h>

#include "inductive/kmeans.h"
#include "inductive/logistic.h"
#include "inductive/otke.h"
#include "inductive/otke_train.h"
#include "../test_util.h"

namespace inductive {
namespace {

using testing::expect_error;

std::vector<std::string> random_dna(int count, int length, uint32_t seed, const std::string& motif = "") {
  std::mt19937 rng(seed);
  std::vector<std::string> out;
  for (int s = 0; s < count; ++s) {
    std::string seq;
    for (int i = 0; i < length; ++i) seq.push_back("ACGT"[rng() % 4]);
    if (!motif.empty()) seq.replace(rng() % (length - motif.size()), motif.size(), motif);
    out.push_back(seq);
  }
  return out;
}

OtkeConfig small_config() {
  OtkeConfig c;
  c.kmer = 4;
  c.anchors = 12;
  c.otk.p = 4;
  c.otk.iters = 20;
  return c;
}

TEST(OtkeConfig, RoundTripsThroughJsonAndRejectsTypos) {
  OtkeConfig c = small_config();
  c.otk.q = 2;
  c.otk.sigma_pos = 0.1f;
  c.otk.scale = OtkScale::kOtkCompatible;
  c.classes = 2;
  c.labels = {"no", "yes"};
  const OtkeConfig back = OtkeConfig::from_json(c.to_json());
  EXPECT_EQ(back.to_json(), c.to_json());
  EXPECT_EQ(back.output_dim(), 2 * 4 * 12);
  auto j = c.to_json();
  j["pooling"]["epsilon"] = 1.0;
  expect_error([&] { OtkeConfig::from_json(j); }, ErrorCode::kInvalidArgument, "unknown key 'pooling.epsilon'");
  j = c.to_json();
  j["input"]["k"] = "ten";
  expect_error([&] { OtkeConfig::from_json(j); }, ErrorCode::kInvalidArgument, "'input.k' must be an integer");
  j = c.to_json();
  j["pooling"]["type"] = "attention";
  expect_error([&] { OtkeConfig::from_json(j); }, ErrorCode::kInvalidArgument, "pooling.type must be otk, mean or max");
  // float32 fields refuse what float32 cannot hold, before converting (a double beyond FLT_MAX cast to float is
  // undefined behaviour, the kind the config fuzzer found in GraphiT's graph section).
  j = c.to_json();
  j["pooling"]["sigma_pos"] = 1e300;
  expect_error([&] { OtkeConfig::from_json(j); }, ErrorCode::kInvalidArgument,
               "'pooling.sigma_pos' must be a float32 number");
}

// The ablations are written only when set: a default model's config (and file) is what it was before they existed,
// and a file without them reads as the defaults.
TEST(OtkeConfig, AblationKeysAreWrittenOnlyWhenSetAndOldConfigsLoad) {
  OtkeConfig c = small_config();
  const auto plain = c.to_json();
  EXPECT_FALSE(plain["pooling"].contains("plan"));
  EXPECT_FALSE(plain["pooling"].contains("sinusoidal"));
  const OtkeConfig old = OtkeConfig::from_json(plain);
  EXPECT_EQ(old.otk.plan, OtkPlan::kSinkhorn);
  EXPECT_FALSE(old.otk.sinusoidal);
  c.otk.plan = OtkPlan::kAttention;
  c.otk.sinusoidal = true;
  const auto j = c.to_json();
  EXPECT_EQ(j["pooling"]["plan"], "attention");
  EXPECT_EQ(j["pooling"]["sinusoidal"], true);
  const OtkeConfig back = OtkeConfig::from_json(j);
  EXPECT_EQ(back.otk.plan, OtkPlan::kAttention);
  EXPECT_TRUE(back.otk.sinusoidal);
  auto bad = j;
  bad["pooling"]["plan"] = "dot";
  expect_error([&] { OtkeConfig::from_json(bad); }, ErrorCode::kInvalidArgument,
               "pooling.plan must be sinkhorn or attention");
}

TEST(OtkeModel, UnsupervisedFitIsDeterministicAndSavesLoadsIdentically) {
  OtkeModel model;
  model.config = small_config();
  const auto seqs = random_dna(30, 40, 1);
  const SetBatch feats = model.sequence_features(seqs);
  OtkeFitOptions fo;
  fo.seed = 5;
  fit_otke_unsupervised(model, feats, fo);
  OtkeModel again;
  again.config = small_config();
  fit_otke_unsupervised(again, feats, fo);
  EXPECT_EQ(model.nystrom.anchors(), again.nystrom.anchors());
  EXPECT_EQ(model.pooling.references()[0], again.pooling.references()[0]);

  const MatF emb = model.embed(feats);
  EXPECT_EQ(emb.rows(), 30);
  EXPECT_EQ(emb.cols(), 4 * 12);
  EXPECT_TRUE(emb.allFinite());

  const std::string path = inductive::testing::temp_path("otke_model_test.safetensors");
  model.save(path);
  const OtkeModel loaded = OtkeModel::load(path);
  EXPECT_EQ(loaded.config.to_json(), model.config.to_json());
  EXPECT_EQ((loaded.embed(feats) - emb).cwiseAbs().maxCoeff(), 0.0f);
  std::remove(path.c_str());
}

// From sequences the fit samples k-mer positions first and builds only those features; it must give the model the
// features of every sequence give, bit for bit: fewer samples than k-mers (the sparse shuffle must draw what the
// dense one drew), more samples than k-mers, a conv embedding (the generator continues into its initialisation),
// q = 2 and the barycenter (which go through every set's features), and the sinusoidal encoding (positions).
TEST(OtkeModel, FittingFromSequencesEqualsFittingFromTheirFeatures) {
  const auto seqs = random_dna(25, 40, 3);
  std::vector<std::string> names;
  for (size_t s = 0; s < seqs.size(); ++s) names.push_back("s" + std::to_string(s));
  for (int variant = 0; variant < 6; ++variant) {
    SCOPED_TRACE(variant);
    OtkeModel a, b;
    a.config = small_config();
    if (variant == 2) {
      a.config.embedding = OtkeEmbedding::kConv;
      a.config.filters = 6;
    }
    if (variant == 3) a.config.otk.q = 2;
    if (variant == 4) a.config.otk.sinusoidal = true;  // the sampled k-mers' positions must be the features' ones
    b.config = a.config;
    OtkeFitOptions fo;
    fo.seed = 11;
    if (variant == 5) fo.reference_update = OtkeReferenceUpdate::kBarycenter;
    fo.max_samples = variant == 1 ? 100000 : 200;  // 25 x 37 = 925 k-mers
    fit_otke_unsupervised(a, a.sequence_features(seqs, names), fo);
    fit_otke_unsupervised(b, seqs, names, fo);
    EXPECT_EQ(a.to_bytes(), b.to_bytes());
  }
  OtkeModel m;
  m.config = small_config();
  expect_error(
      [&] {
        fit_otke_unsupervised(m, {"ACGTACGTAC", "ACGNACGTAC"}, {"x", "y"}, OtkeFitOptions{});
      },
      ErrorCode::kInvalidArgument, "sequence 'y': invalid letter 'N'");
  expect_error(
      [&] {
        fit_otke_unsupervised(m, {"ACGTACGTAC", "AC"}, {}, OtkeFitOptions{});
      },
      ErrorCode::kInvalidArgument, "sequence 1 is shorter than k");
}

TEST(OtkeModel, MeanAndMaxPoolingBaselinesUseTrueLengths) {
  OtkeModel model;
  model.config = small_config();
  model.config.embedding = OtkeEmbedding::kIdentity;
  model.config.pooling = OtkePooling::kMean;
  const SetBatch feats = model.sequence_features({"ACGTA", "ACGTACGTAC"});
  const MatF mean = model.embed(feats);
  EXPECT_EQ(mean.cols(), 16);
  const MatF one = model.embed(model.sequence_features({"ACGTA"}));
  EXPECT_LT((mean.row(0) - one.row(0)).cwiseAbs().maxCoeff(), 1e-7);
  model.config.pooling = OtkePooling::kMax;
  EXPECT_FLOAT_EQ(model.embed(feats)(0, 0), 0.5f);  // the k-mer ACGT of the first set has A at slot 0
}

TEST(OtkeModel, RejectsModelsOfAnotherKindOrShape) {
  OtkeModel model;
  model.config = small_config();
  const SetBatch feats = model.sequence_features(random_dna(20, 30, 2));
  fit_otke_unsupervised(model, feats, OtkeFitOptions{});
  auto bytes = model.to_bytes();
  EXPECT_NO_THROW(OtkeModel::from_bytes(bytes.data(), bytes.size()));
  expect_error([&] { model.sequence_features({"ACGTNACGT"}); }, ErrorCode::kInvalidArgument, "invalid letter 'N'");
  expect_error([&] { model.sequence_features({"ACG"}); }, ErrorCode::kInvalidArgument, "shorter than k");
  expect_error([&] { model.predict(MatF::Zero(1, model.config.output_dim())); }, ErrorCode::kInvalidArgument,
               "no classifier head");
  ModelContents other;
  other.model = "future-kind";  // a kind with no registered schema (graphit has one: its files need tensors)
  const auto gbytes = write_model(other);
  expect_error([&] { OtkeModel::from_bytes(gbytes.data(), gbytes.size()); }, ErrorCode::kBadModelFile,
               "'future-kind' model, expected an otke model");
}

// Features used in place by OTK pooling are not scanned for NaN/Inf before the pooling: a non-finite feature makes
// every similarity of its row non-finite, the pooling fails, and only then the scan runs. Whatever the value, its
// place, the solver's path (narrow p in the log domain, wide p in the scaling domain, the attention plan), q and the
// positional encoding, the error is the scan's: the set, element and coordinate, for inference and for the loss.
TEST(OtkeModel, ANonFiniteFeatureIsNamedWhereverItIsWithoutAScanUpFront) {
  const int k = 24;
  const float inf = std::numeric_limits<float>::infinity();
  struct Case {
    int p, q;
    bool sinusoidal;
    OtkPlan plan;
  };
  for (const Case& c : {Case{3, 1, false, OtkPlan::kSinkhorn}, Case{40, 1, false, OtkPlan::kSinkhorn},
                        Case{8, 2, true, OtkPlan::kSinkhorn}, Case{5, 1, false, OtkPlan::kAttention}}) {
    OtkeModel m;
    m.config.input_type = OtkeInput::kVectors;
    m.config.input_dim = k;
    m.config.embedding = OtkeEmbedding::kIdentity;
    m.config.otk.p = c.p;
    m.config.otk.q = c.q;
    m.config.otk.sinusoidal = c.sinusoidal;
    m.config.otk.plan = c.plan;
    m.config.otk.iters = 10;
    m.config.classes = 2;
    std::vector<MatF> refs;
    for (int r = 0; r < c.q; ++r) refs.push_back(testing::random_mat(c.p, k, 3 + r));
    refs[0].col(k - 1).setZero();  // Inf times a zero reference entry is NaN: still caught
    m.pooling = OtkPooling(refs, m.config.otk);
    init_otke_head(m, 1);
    SetBatch x(3, 7, k);
    x.n = {7, 5, 2};
    std::mt19937 rng(9);
    std::normal_distribution<float> normal;
    for (float& v : x.x) v = normal(rng);
    const std::vector<int32_t> labels = {0, 1, 0};
    EXPECT_NO_THROW(m.embed(x));
    SetBatch padded = x;
    padded.row(2, 4)[0] = NAN;  // padding is never read
    EXPECT_EQ(m.embed(padded), m.embed(x));
    for (float bad : {NAN, inf, -inf})
      for (auto [b, i, col] : {std::tuple{0, 0, 0}, std::tuple{1, 4, k - 1}, std::tuple{2, 1, 7}}) {
        SetBatch y = x;
        y.row(b, i)[col] = bad;
        const std::string at = "set " + std::to_string(b) + " has a non-finite feature at element " +
                               std::to_string(i) + ", coordinate " + std::to_string(col);
        expect_error([&] { m.embed(y); }, ErrorCode::kInvalidArgument, "otke: " + at);
        OtkeGradients g;
        expect_error([&] { otke_loss(m, y, labels, &g); }, ErrorCode::kInvalidArgument, "otke loss: " + at);
      }
  }
}

TEST(KMeans, RecoversWellSeparatedClusters) {
  std::mt19937 rng(3);
  std::normal_distribution<float> noise(0, 0.05f);
  const float centres[3][2] = {{0, 0}, {5, 5}, {-5, 5}};
  MatF x(300, 2);
  for (int i = 0; i < 300; ++i)
    for (int c = 0; c < 2; ++c) x(i, c) = centres[i % 3][c] + noise(rng);
  KMeansOptions o;
  o.k = 3;
  const auto r = kmeans(x, o);
  EXPECT_LT(r.objective, 0.01);
  for (const auto& c : centres) {
    float best = 1e9f;
    for (int k = 0; k < 3; ++k) best = std::min(best, (r.centers.row(k) - Eigen::RowVector2f(c[0], c[1])).norm());
    EXPECT_LT(best, 0.05f);
  }
}

TEST(Logistic, ReachesAStationaryPointOfThePenalisedObjective) {
  std::mt19937 rng(4);
  std::normal_distribution<float> nd(0, 1);
  MatF x(120, 5);
  std::vector<int32_t> y(120);
  for (int i = 0; i < 120; ++i) {
    for (int c = 0; c < 5; ++c) x(i, c) = nd(rng);
    y[i] = (x(i, 0) + 0.5f * x(i, 1) + 0.3f * nd(rng) > 0) ? 1 : 0;
    if (x(i, 2) > 1.2f) y[i] = 2;
  }
  LogisticOptions o;
  o.lambda = 1e-2;
  o.tol = 1e-7;
  const auto fit = fit_logistic(x, y, 3, o);
  // Stationarity: the gradient of the objective at the solution, computed independently here, vanishes.
  const MatF p = softmax_rows(fit.head.logits(x));
  MatF resid = p;
  for (int i = 0; i < 120; ++i) resid(i, y[i]) -= 1.0f;
  const MatF gw = resid.transpose() * x / 120.0f + o.lambda * fit.head.weight;
  const VecF gb = resid.colwise().sum().transpose() / 120.0f;
  EXPECT_LT(gw.cwiseAbs().maxCoeff(), 1e-4);
  EXPECT_LT(gb.cwiseAbs().maxCoeff(), 1e-4);
  EXPECT_GT(accuracy(fit.head.logits(x), y), 0.85);
}

}  // namespace
}  // namespace inductive
