// The per-element maths both backends share (inductive/elementwise.h), held to closed forms on the CPU; the CUDA
// suite compares whole device operations built from these same functions.
#include <cmath>
#include <limits>

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

TEST(Elementwise, TheAdamClassAppliesExactlyTheSharedUpdate) {
  Adam adam(AdamOptions{0.03, 0.8, 0.99, 1e-6, 0.1});
  float x[2] = {1.0f, -2.0f};
  const float g[2] = {0.3f, 0.7f};
  float ref[2] = {1.0f, -2.0f}, m[2] = {0, 0}, v[2] = {0, 0};
  for (int t = 1; t <= 3; ++t) {
    adam.step({{"w", x, g, 2, true}});
    const AdamCoefficients c = adam_coefficients(0.03, 0.8, 0.99, 1e-6, 0.1, t);
    for (int i = 0; i < 2; ++i) adam_update(ref[i], m[i], v[i], g[i], c, true);
    EXPECT_EQ(x[0], ref[0]);
    EXPECT_EQ(x[1], ref[1]);
  }
}

}  // namespace
}  // namespace inductive
