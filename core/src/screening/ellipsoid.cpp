// Low-rank ellipsoids and the ellipsoid method (see inductive/screening/ellipsoid.h).
#include <algorithm>
#include <cmath>

#include <Eigen/Eigenvalues>

#include "inductive/error.h"
#include "inductive/screening/ellipsoid.h"

namespace inductive {
namespace {

constexpr double kMinSemiAxis = 1e-9;

}  // namespace

Ellipsoid Ellipsoid::ball(VecD centre, double radius) {
  INDUCTIVE_CHECK(centre.size() > 0, ErrorCode::kInvalidArgument, "ellipsoid: empty centre (dimension 0)");
  INDUCTIVE_CHECK(centre.allFinite(), ErrorCode::kInvalidArgument, "ellipsoid: centre must be finite");
  INDUCTIVE_CHECK(std::isfinite(radius) && radius >= 0, ErrorCode::kInvalidArgument,
                  "ellipsoid: radius must be finite and >= 0: got ", radius);
  Ellipsoid e;
  e.z_ = std::move(centre);
  e.s_ = radius * radius;
  e.l_.resize(e.z_.size(), 0);
  e.d_.resize(0);
  return e;
}

VecD Ellipsoid::apply(const VecD& v) const {
  VecD out = s_ * v;
  if (rank() > 0) out.noalias() -= l_ * d_.cwiseProduct(l_.transpose() * v);
  return out;
}

double Ellipsoid::quadratic(const VecD& v) const {
  double q = s_ * v.squaredNorm();
  if (rank() > 0) q -= d_.dot((l_.transpose() * v).cwiseAbs2());
  return std::max(q, 0.0);
}

MatDc Ellipsoid::dense() const {
  MatDc e = s_ * MatDc::Identity(dim(), dim());
  if (rank() > 0) e.noalias() -= l_ * d_.asDiagonal() * l_.transpose();
  return e;
}

bool Ellipsoid::contains(const VecD& x, double slack) const {
  const MatDc e = dense();
  const VecD diff = x - z_;
  if (diff.squaredNorm() == 0) return true;
  Eigen::SelfAdjointEigenSolver<MatDc> eig(e);
  const VecD coords = eig.eigenvectors().transpose() * diff;
  double q = 0;
  for (Eigen::Index j = 0; j < coords.size(); ++j) {
    const double lam = eig.eigenvalues()[j];
    if (lam <= 0) {
      if (std::abs(coords[j]) > slack * diff.norm()) return false;
      continue;
    }
    q += coords[j] * coords[j] / lam;
  }
  return q <= 1.0 + slack;
}

bool Ellipsoid::step(const VecD& g) {
  INDUCTIVE_CHECK(g.size() == dim(), ErrorCode::kShapeMismatch, "ellipsoid step: subgradient has ", g.size(),
                  " entries, expected ", dim());
  INDUCTIVE_CHECK(g.allFinite(), ErrorCode::kInvalidArgument, "ellipsoid step: subgradient must be finite");
  // trace(E) bounds its largest eigenvalue; `magnitude` is the size of the terms whose difference it is.
  auto trace = [&](double& magnitude) {
    double tr = dim() * s_;
    magnitude = dim() * std::abs(s_);
    for (Eigen::Index j = 0; j < rank(); ++j) {
      const double c = d_[j] * l_.col(j).squaredNorm();
      tr -= c;
      magnitude += std::abs(c);
    }
    return tr;
  };
  double magnitude;
  double tr = trace(magnitude);
  // Cancellation guard: when s I and L D L^T nearly cancel, E has lost digits; refactor it exactly now.
  if (rank() > 0 && tr < 1e-6 * magnitude) {
    refactor();
    tr = trace(magnitude);
  }
  // Resolution limit: once every semi-axis is below 1e-9 (1 + ||z||), subgradients computed in double are too
  // noisy to place further cuts reliably, and the tests' rounding allowances dominate the region anyway.
  const double axis = kMinSemiAxis * (1.0 + z_.norm());
  if (tr <= axis * axis) return false;
  const VecD eg = apply(g);
  const double geg = g.dot(eg);
  // g = 0 (optimal centre) or g in the null space of a flat ellipsoid: no cut to make. The threshold is relative
  // to the size of E so that a rounding-level g^T E g never divides.
  if (!(geg > 0) || geg <= 1e-24 * magnitude * g.squaredNorm()) return false;
  const VecD u = eg / std::sqrt(geg);
  const double p = static_cast<double>(dim());
  if (dim() == 1) {
    // In one dimension the cut halves the interval: new centre at the midpoint of the kept half, E / 4.
    z_ -= 0.5 * u;
    s_ *= 0.25;
    d_ *= 0.25;
  } else {
    const double c = p * p / (p * p - 1.0), beta = 2.0 / (p + 1.0);
    z_ -= u / (p + 1.0);
    s_ *= c;
    d_ *= c;
    l_.conservativeResize(Eigen::NoChange, rank() + 1);
    l_.col(rank() - 1) = u;
    d_.conservativeResize(d_.size() + 1);
    d_[d_.size() - 1] = c * beta;
  }
  ++steps_;
  if (rank() >= 2 * dim()) refactor();
  return true;
}

void Ellipsoid::refactor() {
  // E = V diag(lam) V^T exactly (up to rounding), then E = 0 * I - (V sqrt(lam)) diag(-1) (V sqrt(lam))^T.
  Eigen::SelfAdjointEigenSolver<MatDc> eig(dense());
  VecD lam = eig.eigenvalues();
  const double top = std::max(lam.maxCoeff(), 0.0);
  // Eigenvalues that rounded below a tiny floor are lifted to it: the ellipsoid can only grow, never lose x*.
  const double floor = 1e-14 * top;
  for (Eigen::Index j = 0; j < lam.size(); ++j) lam[j] = std::max(lam[j], floor);
  l_ = eig.eigenvectors() * lam.cwiseSqrt().asDiagonal();
  d_ = -VecD::Ones(lam.size());
  s_ = 0.0;
}

}  // namespace inductive
