// OTK pooling: the embedding formula, independence from padding and batch-mates, scales, and exact gradients.
#include <cmath>

#include <gtest/gtest.h>

#include "inductive/otk_pooling.h"
#include "inductive/parallel.h"
#include "../test_util.h"

namespace inductive {
namespace {

using testing::random_mat;

SetBatch random_batch(const std::vector<int>& lengths, int k, uint32_t seed) {
  std::vector<std::vector<float>> sets;
  for (size_t b = 0; b < lengths.size(); ++b)
    sets.push_back(testing::random_vector<float>(static_cast<size_t>(lengths[b]) * k, seed + b, -1, 1));
  return make_set_batch(sets, k);
}

OtkOptions small_options(int q, float sigma_pos) {
  OtkOptions o;
  o.p = 3;
  o.q = q;
  o.eps = 0.5;
  o.iters = 6;
  o.sigma_pos = sigma_pos;
  return o;
}

TEST(OtkPooling, IsTheScaledPlanTransposeTimesFeatures) {
  const OtkOptions o = small_options(1, 0.0f);
  const MatF z = random_mat(3, 4, 1);
  const OtkPooling pool({z}, o);
  const SetBatch x = random_batch({5}, 4, 2);
  const MatF out = pool.forward(x);
  const CMapF xs(x.row(0, 0), 5, 4);
  const MatF sim = xs * z.transpose();
  SinkhornOptions so;
  so.eps = o.eps;
  so.max_iter = o.iters;
  so.similarity = true;
  const auto r = sinkhorn_log(sim.data(), 5, 3, nullptr, nullptr, so);
  const MatF expect = std::sqrt(3.0f) * CMapF(r.plan.data(), 5, 3).transpose() * xs;
  EXPECT_LT((CMapF(out.data(), 3, 4) - expect).cwiseAbs().maxCoeff(), 1e-6);
}

TEST(OtkPooling, PaddingAndBatchMatesNeverChangeASetsEmbedding) {
  const OtkOptions o = small_options(2, 0.2f);
  const OtkPooling pool({random_mat(3, 4, 3), random_mat(3, 4, 4)}, o);
  const SetBatch batch = random_batch({7, 2, 5}, 4, 5);
  const MatF all = pool.forward(batch);
  for (int b = 0; b < 3; ++b) {
    const MatF alone = pool.forward(batch.slice(b, b + 1));
    EXPECT_LT((all.row(b) - alone.row(0)).cwiseAbs().maxCoeff(), 1e-6) << "set " << b;
  }
}

// The pooling takes each set in turn through its products, plan and P^T x (so that P^T x finds the set's features
// in cache). What it keeps for backward is what Sinkhorn on the whole batch gives: the same plans and the same
// tape, bit for bit, narrow (log domain) and wide (scaling domain); and inference returns the same embeddings and
// visualisation plans as a forward that keeps no tape (implicit gradient: with a tape, narrow problems stay in the
// log domain; without one they may run in the scaling domain), on one or two threads.
TEST(OtkPooling, SetBySetKeepsTheBatchsPlansAndTapeBitForBit) {
  for (int p : {3, 40}) {
    OtkOptions o = small_options(1, 0.0f);
    o.p = p;
    o.iters = 10;
    const OtkPooling pool({random_mat(p, 24, 30)}, o);
    const SetBatch x = random_batch({90, 7, 1, 64, 33}, 24, 40);
    OtkPooling::Cache cache, no_tape;
    no_tape.gradient = SinkhornGradient::kImplicit;
    std::vector<std::vector<float>> training_plans, plans;
    pool.forward(x, &cache);
    const MatF training = pool.forward(x, &no_tape, &training_plans);
    SinkhornOptions so;
    so.eps = o.eps;
    so.max_iter = o.iters;
    so.similarity = true;
    const SinkhornProblem<float> batch{
        cache.similarities.data(), x.batch, x.n_max, p, x.n.data(), nullptr, nullptr, nullptr};
    std::vector<float> plan(cache.similarities.size());
    SinkhornTape<float> tape;
    sinkhorn_log(batch, so, SinkhornOutput<float>{plan.data()}, &tape);
    EXPECT_EQ(cache.plans[0], plan) << "p " << p;
    EXPECT_EQ(cache.tapes[0].lse, tape.lse) << "p " << p;
    EXPECT_EQ(cache.tapes[0].offset, tape.offset) << "p " << p;
    EXPECT_EQ(cache.tapes[0].n_iter, tape.n_iter) << "p " << p;
    for (int threads : {1, 2}) {
      set_parallel_threads(threads);
      EXPECT_EQ(pool.forward(x, nullptr, &plans), training) << "p " << p << " threads " << threads;
      EXPECT_EQ(plans, training_plans) << "p " << p << " threads " << threads;
    }
    set_parallel_threads(0);
  }
}

// Backward deals the sets to the threads largest first and sums their dL/dz in set order for every entry, so its
// gradients are the same bits on one thread as on several, narrow and wide, with one reference and with two.
TEST(OtkPoolingGradient, TheSameBitsOnOneThreadAsOnSeveral) {
  for (int p : {3, 40}) {
    for (int q : {1, 2}) {
      OtkOptions o = small_options(q, 0.0f);
      o.p = p;
      std::vector<MatF> refs;
      for (int r = 0; r < q; ++r) refs.push_back(random_mat(p, 24, 30 + r));
      const OtkPooling pool(refs, o);
      const SetBatch x = random_batch({9, 70, 1, 64, 33, 2, 50}, 24, 41);
      const MatF g = random_mat(x.batch, q * p * 24, 42);
      SetBatch gx1;
      std::vector<MatF> gz1;
      for (int threads : {1, 2, 3}) {
        set_parallel_threads(threads);
        OtkPooling::Cache cache;
        pool.forward(x, &cache);
        SetBatch gx;
        std::vector<MatF> gz;
        pool.backward(x, cache, g, &gx, &gz);
        if (threads == 1) {
          gx1 = gx, gz1 = gz;
          continue;
        }
        EXPECT_EQ(gx.x, gx1.x) << "p " << p << " q " << q << " threads " << threads;
        for (int r = 0; r < q; ++r)
          EXPECT_TRUE(gz[static_cast<size_t>(r)] == gz1[static_cast<size_t>(r)])
              << "p " << p << " q " << q << " threads " << threads;
      }
      set_parallel_threads(0);
    }
  }
}

// forward_backward takes each set through its forward, the caller's dL/dPhi of its row, and its backward in one
// pass. It returns forward's Phi and backward's dL/dpsi and dL/dz bit for bit, for every variant of the plan (Sinkhorn
// unrolled and implicit, attention), with positional weights and the sinusoidal encoding, narrow and wide, one
// reference and two, on one thread and on several; and the row it hands over is the set's whole Phi (all q blocks).
TEST(OtkPoolingGradient, EachSetInOnePassGivesForwardsAndBackwardsBits) {
  struct Variant {
    const char* name;
    OtkPlan plan;
    SinkhornGradient gradient;
    float sigma_pos;
    bool sinusoidal;
  };
  const Variant variants[] = {{"unrolled", OtkPlan::kSinkhorn, SinkhornGradient::kUnrolled, 0.0f, false},
                              {"implicit", OtkPlan::kSinkhorn, SinkhornGradient::kImplicit, 0.0f, false},
                              {"attention", OtkPlan::kAttention, SinkhornGradient::kUnrolled, 0.0f, false},
                              {"positional", OtkPlan::kSinkhorn, SinkhornGradient::kUnrolled, 0.3f, false},
                              {"sinusoidal", OtkPlan::kSinkhorn, SinkhornGradient::kUnrolled, 0.0f, true}};
  for (const Variant& v : variants) {
    for (int p : {3, 40}) {
      for (int q : {1, 2}) {
        OtkOptions o = small_options(q, v.sigma_pos);
        o.p = p;
        o.plan = v.plan;
        o.sinusoidal = v.sinusoidal;
        std::vector<MatF> refs;
        for (int r = 0; r < q; ++r) refs.push_back(random_mat(p, 24, 50 + r));
        const OtkPooling pool(refs, o);
        const SetBatch x = random_batch({9, 70, 1, 64, 33, 2, 50}, 24, 51);
        const MatF g = random_mat(x.batch, q * p * 24, 52);
        // dL/dPhi = G + Phi / 2 (a function of the row handed over, as a head's gradient is).
        OtkPooling::Cache cache;
        cache.gradient = v.gradient;
        const MatF phi = pool.forward(x, &cache);
        const MatF grad_out = g + 0.5f * phi;
        SetBatch gx;
        std::vector<MatF> gz;
        pool.backward(x, cache, grad_out, &gx, &gz);
        const std::string where = std::string(v.name) + " p " + std::to_string(p) + " q " + std::to_string(q);
        for (int threads : {1, 2, 3}) {
          set_parallel_threads(threads);
          SetBatch fused_gx;
          std::vector<MatF> fused_gz;
          const MatF fused_phi = pool.forward_backward(
              x, v.gradient,
              [&](int b, const float* row, float* grad_row) {
                MapF(grad_row, 1, g.cols()) = g.row(b) + 0.5f * CMapF(row, 1, g.cols());
              },
              &fused_gx, &fused_gz);
          EXPECT_TRUE(fused_phi == phi) << where << " threads " << threads;
          EXPECT_EQ(fused_gx.x, gx.x) << where << " threads " << threads;
          EXPECT_EQ(fused_gx.n, gx.n) << where;
          ASSERT_EQ(fused_gz.size(), static_cast<size_t>(q)) << where;
          for (int r = 0; r < q; ++r)
            EXPECT_TRUE(fused_gz[static_cast<size_t>(r)] == gz[static_cast<size_t>(r)])
                << where << " reference " << r << " threads " << threads;
        }
        set_parallel_threads(0);
      }
    }
  }
}

// A set with NaN features fails the fused pass as it fails forward, naming the set; nothing is added to the
// caller's gradients.
TEST(OtkPoolingGradient, EachSetInOnePassRejectsNonFiniteFeatures) {
  const OtkPooling pool({random_mat(3, 4, 60)}, small_options(1, 0.0f));
  SetBatch x = random_batch({5, 6}, 4, 61);
  x.row(1, 2)[1] = std::nanf("");
  SetBatch gx;
  std::vector<MatF> gz;
  try {
    pool.forward_backward(
        x, SinkhornGradient::kUnrolled, [](int, const float*, float* grad_row) { grad_row[0] = 1.0f; }, &gx, &gz);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("set 1"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(gz.empty());
  EXPECT_EQ(gx.batch, 0);
}

TEST(OtkPooling, OtkCompatibleScaleIsSqrtPQTimesThePaperScale) {
  OtkOptions o = small_options(2, 0.0f);
  const std::vector<MatF> refs = {random_mat(3, 4, 6), random_mat(3, 4, 7)};
  const SetBatch x = random_batch({4}, 4, 8);
  const MatF paper = OtkPooling(refs, o).forward(x);
  o.scale = OtkScale::kOtkCompatible;
  const MatF compat = OtkPooling(refs, o).forward(x);
  EXPECT_LT((compat - std::sqrt(3.0f * 2.0f) * paper).cwiseAbs().maxCoeff(), 1e-5);
}

TEST(OtkPooling, PlansForVisualisationHaveTheRightMarginals) {
  const OtkOptions o = small_options(1, 0.0f);
  OtkOptions many = o;
  many.iters = 200;
  const OtkPooling pool({random_mat(3, 4, 9)}, many);
  const SetBatch x = random_batch({6, 2}, 4, 10);
  std::vector<std::vector<float>> plans;
  pool.forward(x, nullptr, &plans);
  ASSERT_EQ(plans.size(), 1u);
  for (int b = 0; b < 2; ++b) {
    for (int j = 0; j < 3; ++j) {
      double col = 0;
      for (int i = 0; i < x.n[b]; ++i) col += plans[0][(b * x.n_max + i) * 3 + j];
      EXPECT_NEAR(col, 1.0 / 3, 1e-5);
    }
  }
}

// dL/dx and dL/dz of L = <g, forward(x)> against central finite differences.
// o.q references of o.p x 4.
void expect_gradients_match_finite_differences(const OtkOptions& o, SinkhornGradient mode) {
  std::vector<MatF> refs;
  for (int r = 0; r < o.q; ++r) refs.push_back(random_mat(o.p, 4, 11 + r));
  const SetBatch x = random_batch({5, 3}, 4, 13);
  const MatF g = random_mat(2, o.q * o.p * 4, 14);
  auto loss = [&](const std::vector<MatF>& zs, const SetBatch& in) {
    return static_cast<double>((OtkPooling(zs, o).forward(in).array() * g.array()).sum());
  };
  const OtkPooling pool(refs, o);
  OtkPooling::Cache cache;
  cache.gradient = mode;
  pool.forward(x, &cache);
  if (mode == SinkhornGradient::kImplicit) {
    EXPECT_TRUE(cache.tapes[0].lse.empty()) << "implicit: no tape";
  }
  SetBatch gx;
  std::vector<MatF> gz;
  pool.backward(x, cache, g, &gx, &gz);
  const float h = 1e-3f;
  for (int b = 0; b < 2; ++b)
    for (int i = 0; i < x.n_max; ++i)
      for (int c = 0; c < 4; ++c) {
        if (i >= x.n[b]) {
          EXPECT_EQ(gx.row(b, i)[c], 0.0f) << "padding";
          continue;
        }
        SetBatch xp = x, xm = x;
        xp.row(b, i)[c] += h;
        xm.row(b, i)[c] -= h;
        const double fd = (loss(refs, xp) - loss(refs, xm)) / (2 * h);
        EXPECT_NEAR(gx.row(b, i)[c], fd, 3e-3 + 3e-3 * std::fabs(fd)) << "dx[" << b << "," << i << "," << c << "]";
      }
  for (int r = 0; r < o.q; ++r)
    for (int j = 0; j < o.p; ++j)
      for (int c = 0; c < 4; ++c) {
        auto zp = refs, zm = refs;
        zp[r](j, c) += h;
        zm[r](j, c) -= h;
        const double fd = (loss(zp, x) - loss(zm, x)) / (2 * h);
        EXPECT_NEAR(gz[r](j, c), fd, 3e-3 + 3e-3 * std::fabs(fd)) << "dz[" << r << "," << j << "," << c << "]";
      }
}

// (sigma_pos, gradient): the unrolled gradient is exact for 6 iterations; the implicit one differentiates the
// converged map, so it is checked with enough iterations for the forward pass to have converged.
class OtkPoolingGradient : public ::testing::TestWithParam<std::tuple<float, SinkhornGradient>> {};

TEST_P(OtkPoolingGradient, MatchesFiniteDifferencesForFeaturesAndReferences) {
  OtkOptions o = small_options(2, std::get<0>(GetParam()));
  const SinkhornGradient mode = std::get<1>(GetParam());
  if (mode == SinkhornGradient::kImplicit) o.iters = 500;
  expect_gradients_match_finite_differences(o, mode);
}

INSTANTIATE_TEST_SUITE_P(PositionalAndMode, OtkPoolingGradient,
                         ::testing::Combine(::testing::Values(0.0f, 0.3f),
                                            ::testing::Values(SinkhornGradient::kUnrolled,
                                                              SinkhornGradient::kImplicit)));

// One reference: backward reads the similarities forward kept instead of recomputing them; with p 40 (wide) the
// forward and backward of a training step run in the scaling domain, with p 3 in the log domain.
TEST(OtkPoolingGradient, OneReferenceNarrowAndWideMatchFiniteDifferences) {
  for (int p : {3, 40}) {
    OtkOptions o = small_options(1, 0.0f);
    o.p = p;
    expect_gradients_match_finite_differences(o, SinkhornGradient::kUnrolled);
  }
}

// The ablations (attention plan, sinusoidal encoding), alone and together with the positional weighting.
class OtkPoolingAblationGradient : public ::testing::TestWithParam<std::tuple<OtkPlan, bool, float>> {};

TEST_P(OtkPoolingAblationGradient, MatchesFiniteDifferencesForFeaturesAndReferences) {
  OtkOptions o = small_options(2, std::get<2>(GetParam()));
  o.plan = std::get<0>(GetParam());
  o.sinusoidal = std::get<1>(GetParam());
  expect_gradients_match_finite_differences(o, SinkhornGradient::kUnrolled);
}

INSTANTIATE_TEST_SUITE_P(PlanEncodingPositional, OtkPoolingAblationGradient,
                         ::testing::Values(std::make_tuple(OtkPlan::kAttention, false, 0.0f),
                                           std::make_tuple(OtkPlan::kAttention, false, 0.3f),
                                           std::make_tuple(OtkPlan::kSinkhorn, true, 0.0f),
                                           std::make_tuple(OtkPlan::kAttention, true, 0.3f)));

TEST(OtkPooling, AttentionPlanIsEachSupportsSoftmaxOverTheElements) {
  OtkOptions o = small_options(1, 0.0f);
  o.plan = OtkPlan::kAttention;
  const MatF z = random_mat(3, 4, 21);
  const SetBatch x = random_batch({5, 2}, 4, 22);
  std::vector<std::vector<float>> plans;
  const MatF out = OtkPooling({z}, o).forward(x, nullptr, &plans);
  for (int b = 0; b < 2; ++b) {
    const int n = x.n[b];
    const CMapF xs(x.row(b, 0), n, 4);
    // Closed form in double: a_ij = exp(<x_i, z_j> / eps) / sum_i' exp(<x_i', z_j> / eps), P = a / p.
    Eigen::MatrixXd a = (xs.cast<double>() * z.cast<double>().transpose() / o.eps).array().exp().matrix();
    a.array().rowwise() /= a.colwise().sum().array();
    const Eigen::MatrixXd P = a / 3.0;
    for (int i = 0; i < x.n_max; ++i)
      for (int j = 0; j < 3; ++j)
        EXPECT_NEAR(plans[0][(b * x.n_max + i) * 3 + j], i < n ? P(i, j) : 0.0, 1e-6) << b << "," << i << "," << j;
    const Eigen::MatrixXd expect = std::sqrt(3.0) * P.transpose() * xs.cast<double>();
    EXPECT_LT((CMapF(out.row(b).data(), 3, 4).cast<double>() - expect).cwiseAbs().maxCoeff(), 1e-5);
  }
}

TEST(OtkPooling, SinusoidalEncodingIsVaswanisAtUnitNormAddedBeforePooling) {
  // PE_2m(i) = sin(i / 10000^(2m/k)), PE_2m+1(i) = cos(...), divided by sqrt(k / 2).
  std::vector<float> pe(4);
  sinusoidal_encoding(7, 4, pe.data());
  const double s = 1 / std::sqrt(2.0);
  EXPECT_NEAR(pe[0], s * std::sin(7.0), 1e-6);
  EXPECT_NEAR(pe[1], s * std::cos(7.0), 1e-6);
  EXPECT_NEAR(pe[2], s * std::sin(7.0 / 100.0), 1e-6);
  EXPECT_NEAR(pe[3], s * std::cos(7.0 / 100.0), 1e-6);
  EXPECT_NEAR(Eigen::Map<VecF>(pe.data(), 4).norm(), 1.0, 1e-6);

  OtkOptions o = small_options(1, 0.0f);
  const MatF z = random_mat(3, 4, 23);
  const SetBatch x = random_batch({5, 3}, 4, 24);
  SetBatch shifted = x;
  for (int b = 0; b < 2; ++b)
    for (int i = 0; i < x.n[b]; ++i) {
      sinusoidal_encoding(i, 4, pe.data());
      for (int c = 0; c < 4; ++c) shifted.row(b, i)[c] += pe[c];
    }
  const MatF plain = OtkPooling({z}, o).forward(shifted);
  o.sinusoidal = true;
  const MatF encoded = OtkPooling({z}, o).forward(x);
  EXPECT_LT((plain - encoded).cwiseAbs().maxCoeff(), 1e-6);
  // Positions count from each set's first element, so padding and batch-mates still change nothing.
  EXPECT_LT((OtkPooling({z}, o).forward(x.slice(1, 2)).row(0) - encoded.row(1)).cwiseAbs().maxCoeff(), 1e-6);
}

TEST(OtkPooling, RejectsBadOptionsAndShapes) {
  OtkOptions o = small_options(1, 0.0f);
  o.eps = 0;
  testing::expect_error([&] { OtkPooling({random_mat(3, 4, 1)}, o); }, ErrorCode::kInvalidArgument, "eps");
  const OtkPooling pool({random_mat(3, 4, 1)}, small_options(1, 0.0f));
  testing::expect_error([&] { pool.forward(random_batch({3}, 5, 2)); }, ErrorCode::kShapeMismatch,
                        "dimension 5, expected 4");
  testing::expect_error([&] { OtkPooling({random_mat(2, 4, 1)}, small_options(1, 0.0f)); }, ErrorCode::kShapeMismatch,
                        "reference 0 must be p x k");
  OtkOptions att = small_options(1, 0.0f);
  att.plan = OtkPlan::kAttention;
  SetBatch bad = random_batch({3}, 4, 2);
  bad.row(0, 1)[2] = NAN;
  testing::expect_error([&] { OtkPooling({random_mat(3, 4, 1)}, att).forward(bad); }, ErrorCode::kInvalidArgument,
                        "set 0 has non-finite similarities");
}

}  // namespace
}  // namespace inductive
