// Stochastic dual coordinate ascent for L2-penalised ERM (Shalev-Shwartz & Zhang 2013), with dynamic gap-safe
// screening (see inductive/screening/solver.h).
//
// With lambda R = lambda ||x||^2 (kappa = 2 lambda) the primal point of a dual point is w(nu) = -A^T nu / (kappa n).
// Maximising D over nu_i alone, with q = ||r_i||^2 / (kappa n) and t = t_i(w):
//   phi*'(y) = t - q (y - nu_i)  <=>  y = (v - u) / q,  u = prox_{q phi}(v),  v = t + q nu_i
// (Moreau's identity), so every loss steps exactly through its prox.
//
// With a sample working set (SolverOptions::working_set, solver_detail.h) the epochs step the samples that were not
// flat at the warm start or had nu_i != 0; the others keep nu_i = 0, which leaves w(nu) and the dual value as they are.
#include <algorithm>
#include <cmath>

#include "inductive/error.h"
#include "solver_detail.h"

namespace inductive::detail {

SolveResult solve_dual_coordinate_ascent(const ErmProblem& problem, const SolverOptions& options, const WarmStart* warm,
                                         const ActiveSet* active_in) {
  SolverRun run(problem, options, active_in, SolverKind::kDualCoordinateAscent);
  const Loss& loss = problem.loss;
  const int n = problem.n();
  const double kappa = problem.penalty.strong_convexity(problem.lambda);
  const double scale = 1.0 / (kappa * n);
  const Interval dom = loss.conjugate_domain();

  VecD nu = VecD::Zero(n);
  if (warm != nullptr && warm->nu.size() > 0) {
    for (int i : run.active) nu[i] = std::clamp(warm->nu[i], dom.lo, dom.hi);
  } else if (warm != nullptr && warm->x.size() > 0) {
    for (int i : run.active) nu[i] = std::clamp(loss.derivative(run.rows.margin(i, warm->x.data())), dom.lo, dom.hi);
  }
  VecD w = VecD::Zero(problem.dim());
  for (int i : run.active)
    if (nu[i] != 0.0) run.rows.axpy(i, -nu[i] * scale, w.data());

  std::vector<double> t(static_cast<size_t>(n), 0.0);
  const Interval flat = loss.flat_region();
  const bool working_set = options.working_set && warm != nullptr;
  if (working_set)
    for (int i : run.active) t[i] = run.rows.margin(i, w.data());
  WorkingSet ws(run, working_set, [&](int i) { return nu[i] == 0.0 && flat.contains(t[i]); });
  DualityGap gap;
  // Gap of the reduced problem, (lambda ||.||^2)^*(-A^T nu / n) = lambda ||w(nu)||^2, then the ball test with the
  // margins this pass computed. Returns true when the solver must stop.
  int checks = 0;
  auto check = [&](int epoch) {
    // The incremental updates of w drift from w(nu) by rounding; D uses ||w(nu)||, so every 10th check rebuilds w
    // exactly (one pass) to keep the drift far below the certified gap's rounding allowance.
    if (checks++ % 10 == 9) {
      w.setZero();
      for (int i : run.active)
        if (nu[i] != 0.0) run.rows.axpy(i, -nu[i] * scale, w.data());
    }
    // At the warm start (no epoch has moved w yet) the working set's pass left every margin in t: no second pass.
    const bool t_current = working_set && epoch == 0;
    double primal_loss = 0, conj = 0;
    for (int i : ws.work) {
      if (!t_current) t[i] = run.rows.margin(i, w.data());
      primal_loss += loss.value(t[i]);
      conj += loss.conjugate(nu[i]) + run.rows.offset(i) * nu[i];
    }
    const double reg = problem.lambda * w.squaredNorm();
    gap.primal = primal_loss / n + reg;
    gap.dual = -conj / n - reg;  // nu_i = 0 outside the working set adds phi*(0) = 0
    gap.gap = gap.primal - gap.dual;
    if (ws.partial()) {
      // The primal over the working set only bounds the full one from below: complete it when due.
      if (!ws.due(run, gap, epoch)) return run.check(epoch, gap);
      std::vector<int> back;
      for (int i : ws.outside) {
        if (!t_current) t[i] = run.rows.margin(i, w.data());
        primal_loss += loss.value(t[i]);
        if (!flat.contains(t[i])) back.push_back(i);
      }
      ws.bring_back(back);  // nu_i = 0 for them: w and the dual value stay
      gap.primal = primal_loss / n + reg;
      gap.gap = gap.primal - gap.dual;
    }
    // Screen only when going on: a converged point is returned exactly as its gap certifies it.
    if (options.dynamic_screening && !run.meets_tolerance(gap)) {
      const double radius = std::sqrt(2.0 * gap.certified() / kappa);
      const std::vector<int> removed = run.screen_ball(t, radius, w.norm(), epoch);
      for (int i : removed)
        if (nu[i] != 0.0) {
          run.rows.axpy(i, nu[i] * scale, w.data());
          nu[i] = 0.0;
        }
      ws.remove(removed);
    }
    return run.check(epoch, gap);
  };

  int epoch = 0;
  // A warm start (e.g. the previous lambda of a path) is checked before any epoch: it may already be optimal, and
  // its gap ball screens samples before the first pass (sequential screening).
  bool stop = warm != nullptr && check(0);
  std::vector<int> order;
  SplitMix64 rng(options.seed);
  while (!stop && epoch < options.max_epochs) {
    ++epoch;
    order = ws.work;
    shuffle(order, rng);
    for (int i : order) {
      const double ti = run.rows.margin(i, w.data());
      const double q = run.sq_norm[i] * scale;
      double y;
      if (q > 0) {
        const double v = ti + q * nu[i];
        y = (v - loss.prox(v, q)) / q;
      } else {
        y = loss.derivative(ti);  // a zero row: its margin cannot move, the best dual value is phi'(t)
      }
      y = std::clamp(y, dom.lo, dom.hi);
      const double delta = y - nu[i];
      if (delta != 0.0) {
        nu[i] = y;
        run.rows.axpy(i, -delta * scale, w.data());
      }
    }
    if (epoch % options.gap_every == 0 || epoch == options.max_epochs) stop = check(epoch);
  }
  return run.finish(std::move(w), std::move(nu), gap, epoch);
}

}  // namespace inductive::detail
