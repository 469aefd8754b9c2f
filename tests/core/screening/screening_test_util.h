// tests/core/screening/screening_test_util.h - random ERM problems for the screening property tests.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "inductive/screening.h"

namespace inductive::testing {

struct RandomProblem {
  std::shared_ptr<DesignMatrix> x;
  ErmProblem problem;
};

// n samples in p dimensions, Gaussian features (sparse: each entry kept with probability `density`, stored CSR),
// labels from a random linear model with noise (classification: signs with ~10% flipped), so that problems have
// both easy (flat at the optimum) and hard samples.
inline RandomProblem random_problem(uint32_t seed, int n, int p, Loss loss, Penalty penalty, double lambda,
                                    bool sparse = false, bool intercept = false, double density = 0.4) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> unif(0.0, 1.0);
  MatF x(n, p);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < p; ++j) x(i, j) = (sparse && unif(rng) > density) ? 0.0f : static_cast<float>(normal(rng));
  VecD w(p);
  for (int j = 0; j < p; ++j) w[j] = normal(rng);
  RandomProblem r;
  r.problem.y.resize(n);
  for (int i = 0; i < n; ++i) {
    double s = 0.3;
    for (int j = 0; j < p; ++j) s += x(i, j) * w[j];
    if (loss.is_classification()) {
      double label = s + 0.3 * normal(rng) > 0 ? 1.0 : -1.0;
      if (unif(rng) < 0.1) label = -label;
      r.problem.y[i] = label;
    } else {
      r.problem.y[i] = s + 0.5 * normal(rng);
    }
  }
  if (sparse)
    r.x = std::make_shared<CsrDesign>(CsrDesign::from_dense(x));
  else
    r.x = std::make_shared<DenseDesign>(x);
  r.problem.x = r.x.get();
  r.problem.loss = loss;
  r.problem.penalty = penalty;
  r.problem.lambda = lambda;
  r.problem.intercept = intercept;
  return r;
}

inline std::string describe(const ErmProblem& p) {
  return std::string(p.loss.name()) + " mu=" + std::to_string(p.loss.mu) + " + " + p.penalty.name() +
         " lambda=" + std::to_string(p.lambda) + (p.x->is_sparse() ? " sparse" : " dense") +
         (p.intercept ? " intercept" : "");
}

// The losses and penalties with a flat region that the property tests sweep (hinge only with L2).
struct Combo {
  Loss loss;
  Penalty penalty;
  double lambda;
};

inline std::vector<Combo> safe_combos() {
  return {
      {Loss::squared_hinge(), Penalty::l2(), 0.05},
      {Loss::squared_hinge(0.3), Penalty::l2(), 0.02},
      {Loss::hinge(), Penalty::l2(), 0.05},
      {Loss::safe_logistic(0.2), Penalty::l2(), 0.02},
      {Loss::interval_regression(0.8), Penalty::l2(), 0.05},
      {Loss::squared_hinge(), Penalty::elastic_net(0.5), 0.05},
      {Loss::safe_logistic(0.2), Penalty::elastic_net(0.3), 0.02},
      {Loss::interval_regression(0.8), Penalty::elastic_net(0.5), 0.05},
      {Loss::squared_hinge(), Penalty::l1(), 0.05},
      {Loss::safe_logistic(0.2), Penalty::l1(), 0.05},
      {Loss::interval_regression(0.8), Penalty::l1(), 0.1},
  };
}

}  // namespace inductive::testing
