// The per-element maths both backends share (inductive/elementwise.h), held to closed forms on the CPU; the CUDA
// suite compares whole device operations built from these same functions.
#include <cmath>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "inductive/adam.h"
#include "inductive/elementwise.h"

namespace inductive {
namespace {

using namespace elementwise;

TEST(Elementwise, TheLogitIsScaledInDoubleAndClampedWithZeroDerivativeBeyond) {
  EXPECT_EQ(logit(2.0, 0.25f), 0.5f);
  EXPECT_EQ(logit(-1.0 / 3.0, 1.0f), static_cast<float>(-1.0 / 3.0));  // one rounding, from the double product
  EXPECT_EQ(logit(1e10, 1e30f), static_cast<float>(kMaxLogit));
  EXPECT_EQ(logit(-1e10, 1e30f), static_cast<float>(-kMaxLogit));
  EXPECT_TRUE(logit_clamped(1e10, 1e30f));
  EXPECT_FALSE(logit_clamped(2.0, 1e3f));
}

TEST(Elementwise, ThePositionalWeightIsTheGaussianOfRelativePositions) {
  // exp(-(i/n - j/p)^2 / sigma^2): 1 on the diagonal of equal relative positions, symmetric in the offset.
  EXPECT_EQ(positional_weight(2, 4, 5, 10, 1.0 / 0.01), 1.0f);
  const double d = 1.0 / 4 - 3.0 / 10;
  EXPECT_FLOAT_EQ(positional_weight(1, 4, 3, 10, 1.0 / (0.1 * 0.1)), static_cast<float>(std::exp(-d * d / 0.01)));
  EXPECT_EQ(positional_weight(0, 4, 3, 10, 100.0), positional_weight(3, 10, 0, 4, 100.0));
}

TEST(Elementwise, SigmoidAndSoftplusAreTheLogisticClosedFormsWithoutOverflow) {
  for (const float z : {-30.0f, -2.5f, -1e-3f, 0.0f, 0.7f, 4.0f, 30.0f})
    EXPECT_NEAR(sigmoid(z), 1.0 / (1.0 + std::exp(-static_cast<double>(z))), 1e-7) << z;
  EXPECT_EQ(sigmoid(0.0f), 0.5f);
  EXPECT_EQ(sigmoid(-1e4f), 0.0f);  // exp of a large positive number never forms
  EXPECT_EQ(sigmoid(1e4f), 1.0f);
  for (const double x : {-20.0, -1.0, 0.0, 0.5, 3.0, 20.0})
    EXPECT_NEAR(softplus(x), std::log(1.0 + std::exp(x)), 1e-12 * (1 + std::fabs(x))) << x;
  EXPECT_EQ(softplus(1e4), 1e4);  // x + log1p(e^-x): finite where log(1 + e^x) overflows
  EXPECT_EQ(softplus(-1e4), 0.0);
  // softplus' derivative is the sigmoid: central differences.
  for (const double x : {-3.0, -0.2, 1.5}) {
    const double h = 1e-5;
    EXPECT_NEAR((softplus(x + h) - softplus(x - h)) / (2 * h), sigmoid(static_cast<float>(x)), 1e-6) << x;
  }
}

TEST(Elementwise, AdamsFirstStepMovesEachParameterByTheLearningRate) {
  // With zero moments, step 1 gives m = (1 - b1) g, v = (1 - b2) g^2, and the bias-corrected update lr g / |g|.
  const AdamCoefficients c = adam_coefficients(0.01, 0.9, 0.999, 1e-8, 0.0, 1);
  for (float g : {0.5f, -3.0f, 1e-3f}) {
    float value = 1.0f, m = 0, v = 0;
    adam_update(value, m, v, g, c, true);
    EXPECT_NEAR(value, 1.0f - 0.01f * (g > 0 ? 1 : -1), 1e-6) << g;
    EXPECT_NEAR(m, 0.1 * g, 1e-6 * std::fabs(g));         // (1 - beta1) rounded to float
    EXPECT_NEAR(v, 0.001 * g * g, 1e-4 * 0.001 * g * g);  // (1 - beta2) likewise: 1.00005e-3
  }
}

TEST(Elementwise, DecoupledWeightDecayShrinksOnlyParametersThatTakeIt) {
  const AdamCoefficients c = adam_coefficients(0.1, 0.9, 0.999, 1e-8, 0.5, 1);  // decay = lr * wd = 0.05
  float a = 2.0f, b = 2.0f, ma = 0, va = 0, mb = 0, vb = 0;
  adam_update(a, ma, va, 0.0f, c, true);
  adam_update(b, mb, vb, 0.0f, c, false);
  EXPECT_FLOAT_EQ(a, 2.0f * (1 - 0.05f));
  EXPECT_EQ(b, 2.0f);
}

// Bit for bit, over blocks long enough for the class's vectorised loop and its scalar remainder (1003 values),
// with and without the decoupled decay.
TEST(Elementwise, TheAdamClassAppliesExactlyTheSharedUpdate) {
  Adam adam(AdamOptions{0.03, 0.8, 0.99, 1e-6, 0.1});
  constexpr int n = 1003;
  std::vector<float> x(n), g(n), ref(n), m(n, 0.0f), v(n, 0.0f), y(n), ref_y(n), my(n, 0.0f), vy(n, 0.0f);
  for (int i = 0; i < n; ++i) {
    x[i] = ref[i] = std::sin(0.37f * static_cast<float>(i)) * 3.0f;
    y[i] = ref_y[i] = std::cos(0.11f * static_cast<float>(i));
    g[i] = std::sin(1.3f * static_cast<float>(i) + 0.5f) * std::pow(10.0f, static_cast<float>(i % 7) - 4.0f);
  }
  for (int t = 1; t <= 3; ++t) {
    adam.step({{"w", x.data(), g.data(), n, true}, {"b", y.data(), g.data(), n, false}});
    const AdamCoefficients c = adam_coefficients(0.03, 0.8, 0.99, 1e-6, 0.1, t);
    for (int i = 0; i < n; ++i) adam_update(ref[i], m[i], v[i], g[i], c, true);
    for (int i = 0; i < n; ++i) adam_update(ref_y[i], my[i], vy[i], g[i], c, false);
    for (int i = 0; i < n; ++i) {
      ASSERT_EQ(x[i], ref[i]) << "step " << t << ", value " << i;
      ASSERT_EQ(y[i], ref_y[i]) << "step " << t << ", value " << i << " (no decay)";
    }
  }
}

TEST(Elementwise, DropoutDrawsFromSplitMix64ByPositionWithTheRightRateAndScale) {
  // SplitMix64's published first outputs for seed 0 (Vigna's splitmix64.c).
  EXPECT_EQ(splitmix64_at(0, 0), 0xe220a8397b1dcdafull);
  EXPECT_EQ(splitmix64_at(0, 1), 0x6e789e6aa1b965f4ull);
  EXPECT_EQ(splitmix64_at(0, 2), 0x06c45d188009454full);
  // Over 10^6 elements the kept fraction is 1 - p within 5 standard deviations; kept elements carry 1 / (1 - p).
  const float p = 0.3f, keep = static_cast<float>(1.0 / (1.0 - 0.3));
  const uint64_t stream = dropout_stream(12345, 7);
  const int n = 1000000;
  int kept = 0, kept_after_kept = 0, pairs = 0;
  float previous = 0;
  for (int i = 0; i < n; ++i) {
    const float m = dropout_multiplier(stream, static_cast<uint64_t>(i), p, keep);
    ASSERT_TRUE(m == 0.0f || m == keep);
    kept += m != 0;
    if (i > 0 && previous != 0) {
      ++pairs;
      kept_after_kept += m != 0;
    }
    previous = m;
  }
  const double sd = std::sqrt(n * 0.3 * 0.7);
  EXPECT_NEAR(kept, 0.7 * n, 5 * sd);
  // Neighbours are independent: P(kept | previous kept) is the rate too.
  EXPECT_NEAR(static_cast<double>(kept_after_kept) / pairs, 0.7, 5 * std::sqrt(0.21 / pairs));
  // Another mask of the step, or the same mask of another step, is another stream.
  int same = 0;
  for (int i = 0; i < 1000; ++i)
    same += dropout_multiplier(stream, i, p, keep) == dropout_multiplier(dropout_stream(12345, 8), i, p, keep);
  EXPECT_LT(same, 700);  // 0.58 expected for independent masks, 1 for a repeated one
  EXPECT_NE(dropout_stream(12345, 7), dropout_stream(12346, 7));
  // p = 0 keeps everything; p close to 1 nearly nothing.
  for (int i = 0; i < 100; ++i) EXPECT_EQ(dropout_multiplier(stream, i, 0.0f, 1.0f), 1.0f);
}

}  // namespace
}  // namespace inductive
