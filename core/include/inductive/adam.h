// inductive/adam.h - Adam / AdamW over a list of float parameter blocks (shared by OTKE and GraphiT training).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "inductive/elementwise.h"

namespace inductive {

struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0;  // decoupled (AdamW) when > 0, applied to blocks registered with decay = true
  void validate() const;
};

// One parameter block: a view of `size` floats and its gradient, both owned by the caller.
struct ParamBlock {
  std::string name;
  float* value = nullptr;
  const float* grad = nullptr;
  int64_t size = 0;
  bool decay = true;
};

class Adam {
 public:
  explicit Adam(AdamOptions options = {});
  // Applies one step to every block; blocks must keep their names and sizes across steps (moments are per name).
  void step(const std::vector<ParamBlock>& blocks);
  int64_t steps() const { return t_; }
  // The constants of the step numbered steps() (a device backend applies them with elementwise::adam_update).
  elementwise::AdamCoefficients coefficients() const;
  AdamOptions& options() { return options_; }
  const AdamOptions& options() const { return options_; }

  // State for checkpoints: moments by block name, and the step count.
  struct Moments {
    std::string name;
    std::vector<float> m, v;
  };
  const std::vector<Moments>& moments() const { return moments_; }
  void restore(std::vector<Moments> moments, int64_t steps);

 private:
  Moments& moments_for(const ParamBlock& b);
  AdamOptions options_;
  std::vector<Moments> moments_;
  int64_t t_ = 0;
};

}  // namespace inductive
