// FISTA for smooth losses with any penalty (L1, elastic net, L2), with backtracking, gradient restarts and
// dynamic gap-safe screening (see inductive/screening/solver.h).
//
// Margins are linear in x, so the extrapolated point's margins are the same combination of the iterates' ones:
// one pass for the gradient at y and one for the margins of the new iterate per iteration (plus one per
// backtracking step). The gap check takes its dual point from the gradient at y, nu_i = phi'(t_i(y)) and
// A^T nu / n = grad, which the next step computes anyway: checking costs no pass of its own (one at the last epoch).
// Before, the check built its dual point at x with a pass of its own, a third of the work on the samples that are
// not flat.
//
// With a sample working set (SolverOptions::working_set, solver_detail.h) the passes run over the samples not flat
// at the warm start; the dynamic ball test needs the full primal, so it runs where the others' margins are computed.
#include <algorithm>
#include <cmath>
#include <limits>

#include "inductive/error.h"
#include "solver_detail.h"

namespace inductive::detail {
namespace {

struct Iterate {
  VecD x;
  std::vector<double> t;  // margins, indexed by sample (entries of the working samples valid)
  double smooth = 0;      // 1/n sum_working phi(t_i)
};

// it.smooth from the margins at hand of the working samples.
void sum_smooth(const SolverRun& run, const std::vector<int>& work, Iterate& it) {
  double s = 0;
  for (int i : work) s += run.problem.loss.value(it.t[i]);
  it.smooth = s / run.problem.n();
}

void compute_margins(const SolverRun& run, const std::vector<int>& work, Iterate& it) {
  for (int i : work) it.t[i] = run.rows.margin(i, it.x.data());
  sum_smooth(run, work, it);
}

}  // namespace

SolveResult solve_proximal_gradient(const ErmProblem& problem, const SolverOptions& options, const WarmStart* warm,
                                    const ActiveSet* active_in) {
  SolverRun run(problem, options, active_in, SolverKind::kProximalGradient);
  const Loss& loss = problem.loss;
  const Penalty& pen = problem.penalty;
  const int n = problem.n(), dim = problem.dim();
  const double kappa = pen.strong_convexity(problem.lambda);

  Iterate x{warm != nullptr && warm->x.size() > 0 ? warm->x : VecD::Zero(dim),
            std::vector<double>(static_cast<size_t>(n), 0.0), 0.0};
  const Interval flat = loss.flat_region();
  compute_margins(run, run.active, x);
  const bool has_warm = warm != nullptr && warm->x.size() > 0;
  WorkingSet ws(run, options.working_set && has_warm, [&](int i) { return flat.contains(x.t[i]); });
  const std::vector<int>& work = ws.work;
  if (ws.partial()) sum_smooth(run, work, x);  // x.smooth over the working samples only; their margins are at hand
  double fx = x.smooth + problem.lambda * pen.value(x.x);
  Iterate y = x, xn = x;
  // ||A||_2^2 <= ||A||_F^2: a safe Lipschitz bound; backtracking starts well below it and adapts.
  double mean_sq = 0;
  for (int i : run.active) mean_sq += run.sq_norm[i];
  mean_sq /= n;
  const double lipschitz_bound = std::max(loss.smoothness() * mean_sq, 1e-300);
  double lip = lipschitz_bound / 64.0;
  double tk = 1.0;

  VecD grad(dim), nu = VecD::Zero(n), best_nu = nu, best_x = x.x;
  double best_primal = fx, best_dual = -std::numeric_limits<double>::infinity();
  DualityGap gap;
  // The gradient of the smooth part at y, 1/n sum phi'(t_i(y)) r_i over the working samples.
  auto gradient_at_y = [&] {
    grad.setZero();
    for (int i : work) {
      const double d = loss.derivative(y.t[i]);
      if (d != 0.0) run.rows.axpy(i, d / n, grad.data());
    }
  };
  // Adds (sign +1) or removes (-1) samples' terms of the gradient at y, as they join or leave the problem.
  auto update_gradient = [&](const std::vector<int>& samples, double sign) {
    for (int i : samples) {
      const double d = loss.derivative(y.t[i]);
      if (d != 0.0) run.rows.axpy(i, sign * d / n, grad.data());
    }
  };
  // Gap with the primal at x and at y and the dual point nu_i = phi'(t_i(y)) of the gradient at y (rescaled into
  // the l_inf ball for L1), then the ball test around x. `grad` must hold the gradient at y. Returns true when the
  // solver must stop.
  auto check = [&](int epoch) {
    VecD u = -grad;
    nu.setZero();
    for (int i : work) nu[i] = loss.derivative(y.t[i]);
    if (pen.l2_weight(problem.lambda) == 0) {
      const double norm = u.lpNorm<Eigen::Infinity>(), a = pen.l1_weight(problem.lambda);
      if (norm > a) {
        const double shrink = a / norm * (1.0 - 1e-15);
        nu *= shrink;
        u *= shrink;
      }
    }
    double conj = 0;
    for (int i : work) conj += loss.conjugate(nu[i]) + run.rows.offset(i) * nu[i];
    // Every dual point bounds P* from below and the iterates are not monotone: certify with the best primal and the
    // best dual seen so far (of the current reduced problem).
    const double dual = -conj / n - pen.conjugate(u, problem.lambda);
    if (dual > best_dual) {
      best_dual = dual;
      best_nu = nu;
    }
    if (fx < best_primal) {
      best_primal = fx;
      best_x = x.x;
    }
    const double fy = y.smooth + problem.lambda * pen.value(y.x);
    if (fy < best_primal) {
      best_primal = fy;
      best_x = y.x;
    }
    gap.primal = best_primal;
    gap.dual = best_dual;
    gap.gap = gap.primal - gap.dual;
    // The primal of the full problem at x: fx, plus with a working set the samples outside it, whose margins are
    // computed here only when x's own gap over the working set meets the tolerance (or at the last epoch).
    double full_fx = fx;
    if (ws.partial()) {
      if (!ws.due(run, {fx, best_dual, fx - best_dual}, epoch)) return run.check(epoch, gap);
      double s = 0;
      std::vector<int> back;
      for (int i : ws.outside) {
        if (epoch > 0) x.t[i] = run.rows.margin(i, x.x.data());  // at the warm start they are at hand
        s += loss.value(x.t[i]);
        if (!flat.contains(x.t[i])) back.push_back(i);
      }
      full_fx = fx + s / n;
      gap = {full_fx, best_dual, full_fx - best_dual};
      if (!back.empty()) {
        // They join the working set (the best dual point stays one of the new problem: it is 0 on them). A quiet
        // look does not call bring_back, so the looks stay a decade apart here (WorkingSet::bring_back).
        for (int i : back) {
          y.t[i] = run.rows.margin(i, y.x.data());
          y.smooth += loss.value(y.t[i]) / n;
          x.smooth += loss.value(x.t[i]) / n;
        }
        ws.bring_back(back);
        update_gradient(back, 1.0);
        fx = x.smooth + problem.lambda * pen.value(x.x);
      }
      // The certified point is x (its full primal), not the best working-set iterate.
      best_primal = fx;
      best_x = x.x;
    }
    if (options.dynamic_screening && kappa > 0 && !run.meets_tolerance(gap)) {
      // The ball is centred at the current iterate: its own gap (full problem) against the best dual bound. The
      // margins of every active sample at x are at hand here (with a working set, the others were just computed).
      const DualityGap own{full_fx, best_dual, full_fx - best_dual};
      const double radius = std::sqrt(2.0 * own.certified() / kappa);
      const auto removed = run.screen_ball(x.t, radius, x.x.norm(), epoch);
      if (!removed.empty()) {
        // The objective is now the reduced one (same minimiser): refresh the values at x and at the extrapolated
        // point y, and forget the bounds of the old objective. The momentum is kept: restarting it at every
        // removal made screening cost more epochs than it saved (digits, elastic net: 523 vs 275); the gradient
        // restart below still drops it whenever a step goes against it.
        std::vector<int> from_work;
        for (int i : removed) {
          nu[i] = best_nu[i] = 0.0;
          if (ws.is_outside(i)) continue;  // not in the smooth values
          x.smooth -= loss.value(x.t[i]) / n;
          y.smooth -= loss.value(y.t[i]) / n;
          from_work.push_back(i);
        }
        update_gradient(from_work, -1.0);  // y may lie outside the ball, where a removed sample is not flat
        ws.remove(removed);
        fx = x.smooth + problem.lambda * pen.value(x.x);
        best_primal = fx;
        best_x = x.x;
        best_dual = -std::numeric_limits<double>::infinity();
      }
    }
    return run.check(epoch, gap);
  };

  int epoch = 0;
  // A warm start is checked (and screened) before any iteration (y = x there); see dual_coordinate_ascent.cpp. A
  // check due after epoch k runs at the start of the next one, on the gradient that step needs; after the last
  // epoch the gradient is computed for the check alone.
  bool check_due = has_warm;
  for (;;) {
    gradient_at_y();
    if (check_due && check(epoch)) break;
    if (epoch == options.max_epochs) break;
    ++epoch;
    for (;;) {
      xn.x = y.x - grad / lip;
      pen.prox(xn.x, 1.0 / lip, problem.lambda);
      compute_margins(run, work, xn);
      const VecD step = xn.x - y.x;
      const double model = y.smooth + grad.dot(step) + 0.5 * lip * step.squaredNorm();
      if (xn.smooth <= model + 1e-13 * std::abs(y.smooth) || lip >= lipschitz_bound) break;
      lip = std::min(2.0 * lip, lipschitz_bound);
    }
    // Gradient-based restart (O'Donoghue & Candes 2015): drop the momentum when the step goes against it. Unlike a
    // function-value test it does not stall where P(x) - P* is below the rounding of P (about ||x - x*|| ~ 1e-8,
    // while certifying a small gap needs x far closer than that).
    const bool restart = (y.x - xn.x).dot(xn.x - x.x) > 0;
    const double tk1 = restart ? 1.0 : 0.5 * (1.0 + std::sqrt(1.0 + 4.0 * tk * tk));
    const double beta = restart ? 0.0 : (tk - 1.0) / tk1;
    y.x = xn.x + beta * (xn.x - x.x);
    double s = 0;
    for (int i : work) {
      y.t[i] = xn.t[i] + beta * (xn.t[i] - x.t[i]);
      s += loss.value(y.t[i]);
    }
    y.smooth = s / n;
    std::swap(x, xn);
    fx = x.smooth + problem.lambda * pen.value(x.x);
    tk = tk1;
    lip = std::max(lip * 0.9, 1e-300);  // let the step grow again where the curvature is lower
    check_due = epoch % options.gap_every == 0 || epoch == options.max_epochs;
  }
  return run.finish(std::move(best_x), std::move(best_nu), gap, epoch);
}

}  // namespace inductive::detail
