// Adam / AdamW (Kingma & Ba 2015; Loshchilov & Hutter 2019 for the decoupled weight decay).
#include "inductive/adam.h"

#include <cmath>

#include "inductive/error.h"

namespace inductive {

void AdamOptions::validate() const {
  INDUCTIVE_CHECK(std::isfinite(lr) && lr > 0, ErrorCode::kInvalidArgument, "adam: lr must be > 0: got ", lr);
  INDUCTIVE_CHECK(beta1 >= 0 && beta1 < 1 && beta2 >= 0 && beta2 < 1, ErrorCode::kInvalidArgument,
                  "adam: betas must be in [0, 1): got ", beta1, ", ", beta2);
  INDUCTIVE_CHECK(std::isfinite(weight_decay) && weight_decay >= 0, ErrorCode::kInvalidArgument,
                  "adam: weight_decay must be >= 0: got ", weight_decay);
  INDUCTIVE_CHECK(eps > 0, ErrorCode::kInvalidArgument, "adam: eps must be > 0: got ", eps);
}

Adam::Adam(AdamOptions options) : options_(options) { options_.validate(); }

Adam::Moments& Adam::moments_for(const ParamBlock& b) {
  for (auto& m : moments_)
    if (m.name == b.name) {
      INDUCTIVE_CHECK(static_cast<int64_t>(m.m.size()) == b.size, ErrorCode::kShapeMismatch, "adam: block '", b.name,
                      "' changed size from ", m.m.size(), " to ", b.size);
      return m;
    }
  moments_.push_back({b.name, std::vector<float>(b.size, 0.0f), std::vector<float>(b.size, 0.0f)});
  return moments_.back();
}

namespace {

// adam_update over a block, through __restrict pointers: with the four arrays possibly aliasing, GCC kept the loop
// scalar, and a GraphiT (a) training step spent 6 % of its time here on two threads (all of it on one). Vectorising
// changes no value (each element's operations are the same, with no contraction into FMAs under -std=c++17).
void adam_block(float* __restrict value, float* __restrict m, float* __restrict v, const float* __restrict grad,
                int64_t n, const elementwise::AdamCoefficients& c, bool decay) {
  for (int64_t i = 0; i < n; ++i) elementwise::adam_update(value[i], m[i], v[i], grad[i], c, decay);
}

}  // namespace

void Adam::step(const std::vector<ParamBlock>& blocks) {
  options_.validate();
  ++t_;
  const elementwise::AdamCoefficients c = coefficients();
  for (const ParamBlock& b : blocks) {
    Moments& mo = moments_for(b);
    adam_block(b.value, mo.m.data(), mo.v.data(), b.grad, b.size, c, b.decay);
  }
}

elementwise::AdamCoefficients Adam::coefficients() const {
  return elementwise::adam_coefficients(options_.lr, options_.beta1, options_.beta2, options_.eps,
                                        options_.weight_decay, t_);
}

void Adam::restore(std::vector<Moments> moments, int64_t steps) {
  INDUCTIVE_CHECK(steps >= 0, ErrorCode::kInvalidArgument, "adam: negative step count in checkpoint");
  for (const auto& m : moments)
    INDUCTIVE_CHECK(m.m.size() == m.v.size(), ErrorCode::kShapeMismatch, "adam: moments of '", m.name,
                    "' have different sizes");
  moments_ = std::move(moments);
  t_ = steps;
}

}  // namespace inductive
