// Measurement (not a test; timings do not belong in tests): safe screening on sklearn digits, 9 vs rest, squared
// hinge + L2 at the reference's lambda 1 (P = 1/n sum [1 - t]_+^2 + lambda ||x||^2, i.e. sklearn LinearSVC with
// C = 1 / (2 lambda n)). Reports fractions screened and wall time of screen + solve-on-kept against solve-all with
// the same solver and tolerance (baseline measured in the same run). Built by scripts/bench.sh:
//   build/native-release/bin/screening_bench [../shared/data/sklearn-bundled/digits.csv.gz [lambda]]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

#include "inductive/screening.h"
#include "bench_timing.h"

using namespace inductive;

namespace {

using bench::median_seconds;

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "../shared/data/sklearn-bundled/digits.csv.gz";
  const Dataset d = to_dataset(read_csv(path));
  ErmProblem prob;
  prob.x = d.x.get();
  prob.y = one_vs_rest(d.y, 9);
  prob.loss = Loss::squared_hinge();
  prob.penalty = Penalty::l2();
  prob.lambda = argc > 2 ? std::atof(argv[2]) : 1.0;
  const int n = prob.n(), reps = 51;

  const SolveResult exact = solve_erm(prob, tight_solver_options());
  const VecD t = margins(prob, exact.x);
  int ideal = 0;
  for (int i = 0; i < n; ++i) ideal += t[i] > 1.0;
  std::printf("digits 9-vs-rest: n = %d, p = %d, lambda = %g, P* = %.10f, ideal fraction %.4f (%d)\n", n, prob.dim(),
              prob.lambda, exact.gap.primal, double(ideal) / n, ideal);

  // Static screening from the SDCA iterate after k epochs (the thesis' table: ellipsoid / duality gap).
  std::printf("\nstatic screening of the SDCA iterate after k epochs (fractions of n):\n");
  for (int k : {4, 8, 12, 16, 20, 30}) {
    SolverOptions rough;
    rough.max_epochs = k;
    rough.tol = 1e-15;  // exactly k epochs
    const SolveResult approx = solve_erm(prob, rough);
    ScreenOptions ball, cut, ell;
    ball.cut = false;
    ell.ellipsoid_steps = 100;
    const ScreenResult a = screen_samples(prob, approx.x, ball, &approx.nu);
    const ScreenResult b = screen_samples(prob, approx.x, cut, &approx.nu);
    const ScreenResult c = screen_samples(prob, approx.x, ell, &approx.nu);
    std::printf("  k = %2d  relative gap %.1e  gap ball %.4f  + cut %.4f  + 100 ellipsoid steps %.4f\n", k,
                a.gap.gap / a.gap.primal, double(a.n_screened) / n, double(b.n_screened) / n, double(c.n_screened) / n);
  }

  for (double tol : {1e-4, 1e-6, 1e-9}) {
    SolverOptions plain;
    plain.tol = tol;
    plain.max_epochs = 100000;
    SolveResult all;
    const double t_all = median_seconds(reps, [&] { all = solve_erm(prob, plain); });
    SolverOptions dyn = plain;
    dyn.dynamic_screening = true;
    SolveResult dy;
    const double t_dyn = median_seconds(reps, [&] { dy = solve_erm(prob, dyn); });
    std::printf("\ntol %.0e  solve-all (SDCA): %d epochs, %.2f ms\n", tol, all.epochs, 1e3 * t_all);
    std::printf("  dynamic gap-safe screening inside SDCA: %d epochs, %.2f ms (x%.2f), removed %.4f\n", dy.epochs,
                1e3 * t_dyn, t_all / t_dyn, double(dy.n_removed()) / n);
    for (int warm_epochs : {2, 4, 8}) {
      for (int steps : {0, 50}) {
        // screen after a few epochs (certified gap ball + cut [+ ellipsoid]), then solve the kept samples from there.
        ScreenResult s;
        SolveResult kept;
        const double t_pipe = median_seconds(reps, [&] {
          SolverOptions rough = plain;
          rough.max_epochs = warm_epochs;
          const SolveResult approx = solve_erm(prob, rough);
          ScreenOptions so;
          so.ellipsoid_steps = steps;
          s = screen_samples(prob, approx.x, so, &approx.nu);
          const ActiveSet k = s.kept();
          WarmStart warm{approx.x, approx.nu};
          kept = solve_erm(prob, plain, &warm, &k);
        });
        std::printf(
            "  %d epochs + screen (ball+cut%s): screened %.4f (balls %.4f), then %d epochs on kept: %.2f ms "
            "(x%.2f), P - P* = %.1e\n",
            warm_epochs, steps ? ", 50 ellipsoid steps" : "", double(s.n_screened) / n, double(s.n_by_balls) / n,
            kept.epochs, 1e3 * t_pipe, t_all / t_pipe, primal_objective(prob, kept.x) - exact.gap.primal);
      }
    }
  }

  // Regularisation path, 10 lambdas from 100 down to the measured lambda, warm starts in both runs.
  const auto lambdas = geometric_lambdas(100 * prob.lambda, 0.01, 10);
  for (bool screening : {false, true}) {
    PathOptions po;
    po.solver.tol = 1e-6;
    po.solver.max_epochs = 100000;
    po.screening = screening;
    std::vector<PathPoint> path;
    const double t_path = median_seconds(21, [&] { path = regularization_path(prob, lambdas, po); });
    int epochs = 0;
    for (const auto& p : path) epochs += p.epochs;
    std::printf("\npath (10 lambdas %g..%g, tol 1e-6), screening %s: %d epochs, %.2f ms; removed at lambda_min %.4f\n",
                lambdas.front(), lambdas.back(), screening ? "on " : "off", epochs, 1e3 * t_path,
                double(path.back().n_removed) / n);
  }
  return 0;
}
