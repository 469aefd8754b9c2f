// inductive/elementwise.h - per-element maths shared by the CPU code and the CUDA kernels, written once.
//
// Every function here is inline and `INDUCTIVE_HD` (__host__ __device__ under nvcc, plain inline elsewhere), so the
// CPU path (core/src) and the device path (native/cuda) compute the same expression in the same order; the CPU
// unit tests (tests/core/common/elementwise_test.cpp) pin them down, the CUDA tests compare whole operations.
#pragma once

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define INDUCTIVE_HD __host__ __device__ __forceinline__
#else
#define INDUCTIVE_HD inline
#endif

namespace inductive::elementwise {

// The largest |logit| Sinkhorn keeps: -C/eps (or S/eps) beyond it is clamped, and a clamped entry has derivative 0.
constexpr double kMaxLogit = 1e30;

// The Nystrom embedding's floor on ||x||: xhat = x / max(||x||, floor) (the public OTK code's sqrt(1e-4)).
constexpr float kNystromNormFloor = 1e-2f;

// K = clamp(scale C), formed in double and rounded once (scale = -1/eps for costs, +1/eps for similarities).
INDUCTIVE_HD float logit(double scale, float c) {
  const double x = scale * static_cast<double>(c);
  return static_cast<float>(x < -kMaxLogit ? -kMaxLogit : (x > kMaxLogit ? kMaxLogit : x));
}
INDUCTIVE_HD bool logit_clamped(double scale, float c) {
  return std::fabs(scale * static_cast<double>(c)) >= kMaxLogit;
}

// OTK's positional weight exp(-(i/n - j/p)^2 / sigma^2) for element i of a set of n and support j of p; inv_sigma2
// = 1 / sigma^2 in double (thesis ch. 2, §1.6).
INDUCTIVE_HD float positional_weight(int i, int n, int j, int p, double inv_sigma2) {
  const double d = static_cast<double>(i) / n - static_cast<double>(j) / p;
  return static_cast<float>(std::exp(-d * d * inv_sigma2));
}

// The logistic sigmoid 1 / (1 + e^-z), both branches taking exp of a non-positive number (no overflow).
INDUCTIVE_HD float sigmoid(float z) {
  if (z >= 0) return 1.0f / (1.0f + std::exp(-z));
  const float e = std::exp(z);
  return e / (1.0f + e);
}
// log(1 + e^x) without overflow; binary cross-entropy against target t is softplus(z) - t z.
INDUCTIVE_HD double softplus(double x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }

// One Adam / AdamW step's constants (Kingma & Ba 2015; decoupled decay: Loshchilov & Hutter 2019), formed in
// double on the host from the options and the step count t >= 1, then rounded once.
struct AdamCoefficients {
  float beta1, beta2;
  float step;    // lr / (1 - beta1^t)
  float inv_c2;  // 1 / (1 - beta2^t)
  float eps;
  float decay;  // lr * weight_decay (0: plain Adam)
};
inline AdamCoefficients adam_coefficients(double lr, double beta1, double beta2, double eps, double weight_decay,
                                          long long t) {
  const double c1 = 1.0 - std::pow(beta1, static_cast<double>(t));
  const double c2 = 1.0 - std::pow(beta2, static_cast<double>(t));
  return {static_cast<float>(beta1),    static_cast<float>(beta2), static_cast<float>(lr / c1),
          static_cast<float>(1.0 / c2), static_cast<float>(eps),   static_cast<float>(lr * weight_decay)};
}

// Updates one parameter and its moments in place; `decay` says whether this parameter takes weight decay.
INDUCTIVE_HD void adam_update(float& value, float& m, float& v, float g, const AdamCoefficients& c, bool decay) {
  m = c.beta1 * m + (1 - c.beta1) * g;
  v = c.beta2 * v + (1 - c.beta2) * g * g;
  if (decay && c.decay > 0) value -= c.decay * value;
  value -= c.step * m / (std::sqrt(v * c.inv_c2) + c.eps);
}

// Dropout masks from a counter-based generator (Salmon et al., SC 2011): element `index` of a mask stream is
// SplitMix64's index-th output for the stream as seed (Steele et al., OOPSLA 2014; passes BigCrush), a pure function of
// (stream, index). Any thread, device or rank computes any element without a generator's state, so the CPU, the GPU
// and the shares of a data-parallel step all draw the masks one process draws.
INDUCTIVE_HD uint64_t splitmix64_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
INDUCTIVE_HD uint64_t splitmix64_at(uint64_t seed, uint64_t index) {
  return splitmix64_mix(seed + 0x9e3779b97f4a7c15ull * (index + 1));
}
// The stream of mask number `which` of a step whose key was drawn once from the epoch's generator.
INDUCTIVE_HD uint64_t dropout_stream(uint64_t step_key, uint64_t which) { return splitmix64_at(step_key, which); }
// Inverted dropout's multiplier: 0 with probability p, `keep` = 1 / (1 - p) otherwise, from a uniform in [0, 1) of
// the hash's top 24 bits (exact in float).
INDUCTIVE_HD float dropout_multiplier(uint64_t stream, uint64_t index, float p, float keep) {
  const float u = static_cast<float>(splitmix64_at(stream, index) >> 40) * (1.0f / 16777216.0f);
  return u < p ? 0.0f : keep;
}

}  // namespace inductive::elementwise
