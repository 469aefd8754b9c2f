// inductive/screening/screen_report.h - the report of one solve-and-screen run, defined once for every front end:
// `inductive screen` prints it (with the run's inputs added) and the browser's screen() returns it (the bindings
// map its keys to camelCase, nothing else).
//
// Keys: n, p, loss, mu, penalty, lambda, intercept (the fitted b; 0 without an intercept), n_screened (removed in
// total), n_dynamic (by the solver's dynamic screening), n_static and n_static_by_balls (by the static test at the
// solution; by its balls alone), ellipsoid_steps (the steps that test took), l1_support_size (null unless the L1
// support test ran), fraction_screened, epochs, converged, cancelled, primal, dual, gap, relative_gap (gap /
// |primal|), solve_seconds, screen_seconds, kernel (null, or {type, description, gamma, degree, coef0, rank,
// seconds}), history {epoch, gap, active} (one entry per gap check). Non-finite numbers are null (JSON has none).
#pragma once

#include <nlohmann/json.hpp>

#include "inductive/screening/compression.h"
#include "inductive/screening/kernel.h"
#include "inductive/screening/path.h"
#include "inductive/screening/problem.h"
#include "inductive/screening/solve_and_screen.h"

namespace inductive {

// `kernel` and `spec`: the kernel run `result` came from (kernel_solve_and_screen), or null for a linear one;
// `kernel->result` is not read (callers move it out).
nlohmann::json screen_report(const ErmProblem& problem, const SolveAndScreenResult& result,
                             const KernelSpec* spec = nullptr, const KernelScreenResult* kernel = nullptr);

// One lambda of a regularisation path, as `inductive path` prints it and the browser's path() returns it: lambda,
// n_screened (removed in total), n_static_screened (by the static test of the warm start), fraction_screened (of
// `n` samples), epochs, seconds, converged, primal, gap.
nlohmann::json path_point_report(const PathPoint& point, int n);

// A whole path run with `options` (its points in lambda order): n, p, loss, mu, penalty, intercept, screening,
// static_screen, ellipsoid_steps (of that static test; 0 without it), working_set, lambdas, points
// (path_point_report each), seconds (their sum). `inductive path` adds its inputs and the run without screening.
nlohmann::json path_report(const ErmProblem& problem, const PathOptions& options, const std::vector<PathPoint>& points);

// A compression run (compress_dataset on `train`, tested on `n_test` samples), as `inductive compress` prints it and
// the browser's compressionCurve() returns it: n_train, n_test, p, loss, mu, penalty, lambda, the full problem's
// full_primal, full_gap, full_epochs, full_converged, full_test_accuracy, n_certified (samples its static test
// screens) and fraction_certified, curves [{ranking, points: [{fraction_removed, n_kept, test_accuracy, test_loss,
// train_objective, certified_gap, epochs}]}], seconds.
nlohmann::json compression_report(const ErmProblem& train, int n_test, const CompressionReport& report);

}  // namespace inductive
