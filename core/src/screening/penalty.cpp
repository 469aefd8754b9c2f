// Penalties and their conjugates (see inductive/screening/penalty.h).
#include <cmath>
#include <limits>

#include "inductive/error.h"
#include "inductive/screening/penalty.h"

namespace inductive {

Penalty Penalty::from_name(const std::string& name, double l1_ratio) {
  Penalty p;
  if (name == "l2")
    p = l2();
  else if (name == "l1")
    p = l1();
  else if (name == "elastic_net")
    p = elastic_net(l1_ratio);
  else
    INDUCTIVE_FAIL(ErrorCode::kInvalidArgument, "penalty: unknown penalty '", name,
                   "': expected l2, l1 or elastic_net");
  p.validate();
  return p;
}

const char* Penalty::name() const {
  switch (kind) {
    case PenaltyKind::kL2:
      return "l2";
    case PenaltyKind::kL1:
      return "l1";
    case PenaltyKind::kElasticNet:
      return "elastic_net";
  }
  return "unknown";
}

void Penalty::validate() const {
  if (kind == PenaltyKind::kElasticNet)
    INDUCTIVE_CHECK(l1_ratio > 0 && l1_ratio < 1, ErrorCode::kInvalidArgument,
                    "penalty elastic_net: l1_ratio must be in (0, 1): got ", l1_ratio,
                    " (use l1 or l2 for the end points)");
}

double Penalty::l1_weight(double lambda) const {
  switch (kind) {
    case PenaltyKind::kL2:
      return 0.0;
    case PenaltyKind::kL1:
      return lambda;
    case PenaltyKind::kElasticNet:
      return lambda * l1_ratio;
  }
  return 0.0;
}

double Penalty::l2_weight(double lambda) const {
  switch (kind) {
    case PenaltyKind::kL2:
      return lambda;
    case PenaltyKind::kL1:
      return 0.0;
    case PenaltyKind::kElasticNet:
      return lambda * (1.0 - l1_ratio);
  }
  return 0.0;
}

double Penalty::value(const VecD& x) const {
  const double a = l1_weight(1.0), b = l2_weight(1.0);
  return (a > 0 ? a * x.lpNorm<1>() : 0.0) + (b > 0 ? b * x.squaredNorm() : 0.0);
}

double Penalty::conjugate(const VecD& u, double lambda) const {
  const double a = l1_weight(lambda), b = l2_weight(lambda);
  if (b == 0) {  // L1: indicator of the l_inf ball of radius a
    return u.size() == 0 || u.lpNorm<Eigen::Infinity>() <= a * (1.0 + 1e-12) ? 0.0
                                                                             : std::numeric_limits<double>::infinity();
  }
  double s = 0;
  for (Eigen::Index j = 0; j < u.size(); ++j) {
    const double r = std::abs(u[j]) - a;
    if (r > 0) s += r * r;
  }
  return s / (4.0 * b);
}

VecD Penalty::conjugate_gradient(const VecD& u, double lambda) const {
  const double a = l1_weight(lambda), b = l2_weight(lambda);
  INDUCTIVE_CHECK(b > 0, ErrorCode::kInvalidArgument, "penalty ", name(),
                  ": the primal point of a dual point needs a strongly convex penalty (l2 or elastic_net)");
  VecD x(u.size());
  for (Eigen::Index j = 0; j < u.size(); ++j) {
    const double r = std::abs(u[j]) - a;
    x[j] = r > 0 ? std::copysign(r, u[j]) / (2.0 * b) : 0.0;
  }
  return x;
}

void Penalty::prox(VecD& v, double step, double lambda) const {
  const double a = l1_weight(lambda) * step, scale = 1.0 / (1.0 + 2.0 * l2_weight(lambda) * step);
  for (Eigen::Index j = 0; j < v.size(); ++j) {
    const double r = std::abs(v[j]) - a;
    v[j] = r > 0 ? std::copysign(r, v[j]) * scale : 0.0;
  }
}

void Penalty::add_subgradient(const VecD& x, double lambda, VecD& g) const {
  const double a = l1_weight(lambda), b = l2_weight(lambda);
  for (Eigen::Index j = 0; j < x.size(); ++j) g[j] += (x[j] > 0 ? a : (x[j] < 0 ? -a : 0.0)) + 2.0 * b * x[j];
}

}  // namespace inductive
