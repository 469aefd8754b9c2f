// Safe losses: values, derivatives, conjugates and proximal steps (see inductive/screening/loss.h).
#include <algorithm>
#include <cmath>

#include "inductive/error.h"
#include "inductive/screening/loss.h"

namespace inductive {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// x log x with 0 log 0 = 0 (the entropy terms of the logistic conjugates).
double xlogx(double x) { return x > 0 ? x * std::log(x) : 0.0; }

// Solves u + q d(u) = v for an increasing, continuous d on the bracket [lo, hi] that holds the root; Newton steps
// kept inside the bracket, bisection when Newton leaves it. Converges to machine precision in a few steps for the
// smooth logistic derivatives.
template <typename D, typename Dd>
double solve_monotone(double v, double q, double lo, double hi, D d, Dd dd) {
  double u = std::clamp(v, lo, hi);
  for (int it = 0; it < 100; ++it) {
    const double h = u + q * d(u) - v;
    if (h == 0) return u;
    if (h > 0)
      hi = u;
    else
      lo = u;
    double next = u - h / (1.0 + q * dd(u));
    if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
    if (std::abs(next - u) <= 1e-15 * std::max(1.0, std::abs(u)) || hi - lo <= 1e-15 * std::max(1.0, std::abs(u)))
      return next;
    u = next;
  }
  return u;
}

}  // namespace

Loss Loss::from_name(const std::string& name, double mu) {
  Loss loss;
  if (name == "squared_hinge")
    loss = squared_hinge(mu);
  else if (name == "hinge")
    loss = hinge(mu);
  else if (name == "safe_logistic")
    loss = safe_logistic(mu);
  else if (name == "logistic")
    loss = {LossKind::kLogistic, mu};
  else if (name == "interval_regression")
    loss = interval_regression(mu);
  else if (name == "squared")
    loss = {LossKind::kSquared, mu};
  else
    INDUCTIVE_FAIL(ErrorCode::kInvalidArgument, "loss: unknown loss '", name,
                   "': expected squared_hinge, hinge, safe_logistic, logistic, interval_regression or squared");
  loss.validate();
  return loss;
}

const char* Loss::name() const {
  switch (kind) {
    case LossKind::kSquaredHinge:
      return "squared_hinge";
    case LossKind::kHinge:
      return "hinge";
    case LossKind::kSafeLogistic:
      return "safe_logistic";
    case LossKind::kLogistic:
      return "logistic";
    case LossKind::kIntervalRegression:
      return "interval_regression";
    case LossKind::kSquared:
      return "squared";
  }
  return "unknown";
}

void Loss::validate() const {
  INDUCTIVE_CHECK(std::isfinite(mu), ErrorCode::kInvalidArgument, "loss ", name(), ": mu must be finite: got ", mu);
  INDUCTIVE_CHECK(kind != LossKind::kIntervalRegression || mu >= 0, ErrorCode::kInvalidArgument,
                  "loss interval_regression: mu (the half-width of the flat region) must be >= 0: got ", mu);
  INDUCTIVE_CHECK((kind != LossKind::kLogistic && kind != LossKind::kSquared) || mu == 0, ErrorCode::kInvalidArgument,
                  "loss ", name(), ": has no mu parameter: got mu = ", mu,
                  ", expected 0 (use safe_logistic / interval_regression for a flat region)");
}

bool Loss::is_classification() const { return kind != LossKind::kIntervalRegression && kind != LossKind::kSquared; }

bool Loss::is_smooth() const { return kind != LossKind::kHinge; }

double Loss::smoothness() const {
  switch (kind) {
    case LossKind::kSquaredHinge:
      return 2.0;
    case LossKind::kHinge:
      return kInf;
    case LossKind::kSafeLogistic:
      return 1.0;  // phi'' = e^{t+mu-1} <= 1 on the curved part
    case LossKind::kLogistic:
      return 0.25;
    case LossKind::kIntervalRegression:
    case LossKind::kSquared:
      return 1.0;
  }
  return kInf;
}

double Loss::margin_threshold() const { return 1.0 - mu; }

Interval Loss::flat_region() const {
  switch (kind) {
    case LossKind::kSquaredHinge:
    case LossKind::kHinge:
    case LossKind::kSafeLogistic:
      return {margin_threshold(), kInf};
    case LossKind::kIntervalRegression:
      return {-mu, mu};
    case LossKind::kLogistic:
    case LossKind::kSquared:
      return {0.0, 0.0};  // empty: nothing can ever be screened
  }
  return {0.0, 0.0};
}

double Loss::value(double t) const {
  const double th = margin_threshold();
  switch (kind) {
    case LossKind::kSquaredHinge: {
      const double r = std::max(th - t, 0.0);
      return r * r;
    }
    case LossKind::kHinge:
      return std::max(th - t, 0.0);
    case LossKind::kSafeLogistic: {
      const double s = t + mu - 1.0;            // = t - threshold
      return s <= 0 ? std::expm1(s) - s : 0.0;  // e^s - (t + mu) = (e^s - 1) - s, accurate near the threshold
    }
    case LossKind::kLogistic:
      return t > 0 ? std::log1p(std::exp(-t)) : -t + std::log1p(std::exp(t));
    case LossKind::kIntervalRegression: {
      const double r = std::max(std::abs(t) - mu, 0.0);
      return 0.5 * r * r;
    }
    case LossKind::kSquared:
      return 0.5 * t * t;
  }
  return 0.0;
}

double Loss::derivative(double t) const {
  const double th = margin_threshold();
  switch (kind) {
    case LossKind::kSquaredHinge:
      return -2.0 * std::max(th - t, 0.0);
    case LossKind::kHinge:
      return t < th ? -1.0 : 0.0;
    case LossKind::kSafeLogistic: {
      const double s = t - th;
      return s <= 0 ? std::expm1(s) : 0.0;
    }
    case LossKind::kLogistic:
      return t > 0 ? -std::exp(-t) / (1.0 + std::exp(-t)) : -1.0 / (1.0 + std::exp(t));
    case LossKind::kIntervalRegression: {
      const double r = std::max(std::abs(t) - mu, 0.0);
      return t >= 0 ? r : -r;
    }
    case LossKind::kSquared:
      return t;
  }
  return 0.0;
}

Interval Loss::conjugate_domain() const {
  switch (kind) {
    case LossKind::kSquaredHinge:
      return {-kInf, 0.0};
    case LossKind::kHinge:
    case LossKind::kSafeLogistic:
    case LossKind::kLogistic:
      return {-1.0, 0.0};
    case LossKind::kIntervalRegression:
    case LossKind::kSquared:
      return {-kInf, kInf};
  }
  return {-kInf, kInf};
}

double Loss::conjugate(double y) const {
  const Interval dom = conjugate_domain();
  if (y < dom.lo || y > dom.hi || std::isnan(y)) return kInf;
  const double th = margin_threshold();
  switch (kind) {
    case LossKind::kSquaredHinge:
      return th * y + 0.25 * y * y;
    case LossKind::kHinge:
      return th * y;
    case LossKind::kSafeLogistic:
      return xlogx(1.0 + y) - mu * y;
    case LossKind::kLogistic:
      return xlogx(-y) + xlogx(1.0 + y);
    case LossKind::kIntervalRegression:
      return 0.5 * y * y + mu * std::abs(y);
    case LossKind::kSquared:
      return 0.5 * y * y;
  }
  return kInf;
}

double Loss::prox(double v, double q) const {
  const double th = margin_threshold();
  switch (kind) {
    case LossKind::kSquaredHinge:
      // u >= th: flat, u = v. Otherwise -2 (th - u) + (u - v)/q = 0.
      return v >= th ? v : (2.0 * th * q + v) / (1.0 + 2.0 * q);
    case LossKind::kHinge:
      if (v >= th) return v;
      return v <= th - q ? v + q : th;
    case LossKind::kSafeLogistic: {
      if (v >= th) return v;
      // u + q (e^{u - th} - 1) = v with u in [v, min(v + q, th)].
      return solve_monotone(
          v, q, v, std::min(v + q, th), [&](double u) { return std::expm1(u - th); },
          [&](double u) { return std::exp(u - th); });
    }
    case LossKind::kLogistic: {
      auto d = [](double u) { return u > 0 ? -std::exp(-u) / (1.0 + std::exp(-u)) : -1.0 / (1.0 + std::exp(u)); };
      auto dd = [](double u) {
        const double s = 1.0 / (1.0 + std::exp(-u));
        return s * (1.0 - s);
      };
      return solve_monotone(v, q, v, v + q, d, dd);
    }
    case LossKind::kIntervalRegression:
      if (std::abs(v) <= mu) return v;
      return v > 0 ? (mu * q + v) / (1.0 + q) : (-mu * q + v) / (1.0 + q);
    case LossKind::kSquared:
      return v / (1.0 + q);
  }
  return v;
}

}  // namespace inductive
