// native/cli/cmd_screen.cpp - `inductive screen`: safe sample screening for a regularised ERM problem read from a
// LIBSVM or CSV file. Solves the problem (gap-certified, with dynamic gap-safe screening unless --no-dynamic), then
// applies the static screening tests at the solution; a sample is reported screened when either removed it.
// Writes a JSON report (--out), optionally the kept sample indices (--kept, int32 .npy) and the static screening
// scores (--scores, float32 .npy; > 0 <=> screened by the static test) and the compressed dataset (--compressed,
// LIBSVM), all together and atomically. With --kernel, the same for the kernel problem (thesis ch. 4, "Extension to
// kernel methods"): the RKHS-norm penalty, solved through the kernel map, and --alpha writes the n dual
// coefficients of h = sum_j alpha_j K(a_j, .) + b.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "inductive/atomic_file.h"
#include "inductive/error.h"
#include "inductive/json_number.h"
#include "inductive/npy.h"
#include "inductive/screening.h"
#include "erm_inputs.h"

namespace inductive::cli {
namespace {

struct ScreenArgs {
  ErmArgs erm;
  std::string out, kept, scores, compressed, alpha;
  std::string kernel;  // empty: the linear problem
  KernelSpec kernel_spec;
  double lambda = kDefaultErmLambda;
  int ellipsoid_steps = ScreenOptions{}.ellipsoid_steps;
  bool no_dynamic = !kDefaultDynamicScreening;
  bool verify = false;
};

void run(const ScreenArgs& args) {
  INDUCTIVE_CHECK(std::isfinite(args.lambda) && args.lambda > 0, ErrorCode::kInvalidArgument,
                  "--lambda must be a finite number > 0, got ", args.lambda);
  INDUCTIVE_CHECK(args.ellipsoid_steps >= 0, ErrorCode::kInvalidArgument, "--ellipsoid-steps must be >= 0, got ",
                  args.ellipsoid_steps);
  ErmInput in = load_erm_input(args.erm);
  ErmProblem& problem = in.problem;
  const std::string& source = in.source;
  problem.lambda = args.lambda;
  problem.validate();

  SolverOptions options = erm_solver_options(args.erm);
  options.dynamic_screening = !args.no_dynamic;
  options.validate();

  ScreenOptions regions;  // the static test at the solution: gap ball, l1 ball, then the ellipsoid method
  regions.ellipsoid_steps = args.ellipsoid_steps;
  regions.validate();
  std::optional<KernelScreenResult> kernel;
  KernelSpec kernel_spec = args.kernel_spec;
  if (!args.kernel.empty()) {
    kernel_spec.kind = parse_enum(kKernelKinds, args.kernel, "--kernel");
    kernel = kernel_solve_and_screen(problem, kernel_spec, options, regions);
  } else {
    INDUCTIVE_CHECK(args.alpha.empty(), ErrorCode::kInvalidArgument,
                    "--alpha writes a kernel model's dual coefficients: it needs --kernel");
  }
  const SolveAndScreenResult result = kernel ? std::move(kernel->result) : solve_and_screen(problem, options, regions);
  const SolveResult& fit = result.fit;
  const ScreenResult& stat = result.at_solution;
  const std::vector<int32_t>& kept = result.kept;
  const int n = problem.n(), n_removed = result.n_screened;
  const std::vector<uint8_t>& screened = result.screened;

  // The run's report as core defines it (the browser's screen() returns the same, camelCased), with the inputs
  // only the CLI has.
  nlohmann::json report = screen_report(problem, result, kernel ? &kernel_spec : nullptr, kernel ? &*kernel : nullptr);
  report["input"] = source;
  report["tol"] = args.erm.tol;
  report["dynamic_screening"] = !args.no_dynamic;
  report["n_kept"] = static_cast<int>(kept.size());
  if (args.verify) {
    VerifyReport v = verify_screening(kernel ? kernel->kernel_problem->problem() : problem, screened);
    report["verify"] = {
        {"safe", v.safe},
        {"n_screened", v.n_screened},
        {"violations", v.violations},
        {"worst_inside", json_number(v.worst_inside)},
        {"primal_full", json_number(v.primal_full)},
        {"primal_kept", json_number(v.primal_kept)},
        {"distance", json_number(v.distance)},
        {"distance_bound", json_number(v.distance_bound)},
    };
  }

  const std::string text = report.dump(2) + "\n";
  std::vector<std::pair<std::string, std::vector<uint8_t>>> outputs;
  outputs.emplace_back(args.out, std::vector<uint8_t>(text.begin(), text.end()));
  if (!args.kept.empty()) {
    outputs.emplace_back(args.kept, npy_bytes(kept.data(), {static_cast<int64_t>(kept.size())}));
  }
  if (!args.scores.empty()) {
    std::vector<float> score(n);
    for (int i = 0; i < n; ++i) score[i] = static_cast<float>(stat.score[i]);
    outputs.emplace_back(args.scores, npy_bytes(score.data(), {static_cast<int64_t>(n)}));
  }
  if (!args.compressed.empty()) {
    const std::string svm = format_libsvm(in.data, std::vector<int>(kept.begin(), kept.end()));
    outputs.emplace_back(args.compressed, std::vector<uint8_t>(svm.begin(), svm.end()));
  }
  if (!args.alpha.empty()) {
    outputs.emplace_back(args.alpha, npy_bytes(kernel->alpha.data(), {static_cast<int64_t>(n)}));
  }
  write_files_atomic(outputs);

  std::fprintf(stderr, "screened %d of %d samples (%.1f%%) in %d epochs, gap %.3g\n", n_removed, n,
               100.0 * n_removed / n, fit.epochs, fit.gap.gap);
}

}  // namespace

void add_screen_command(CLI::App& app) {
  auto args = std::make_shared<ScreenArgs>();
  CLI::App* cmd =
      app.add_subcommand("screen", "Safe sample screening for regularised ERM (squared hinge, logistic, ...)");
  add_erm_options(cmd, args->erm);
  cmd->add_option("--lambda", args->lambda, "Regularisation lambda > 0")->capture_default_str();
  cmd->add_option("--ellipsoid-steps", args->ellipsoid_steps,
                  "Static test at the solution: after the gap and l1 balls, N steps of the ellipsoid method (thesis "
                  "ch. 4) started from the smaller ball, each region tested in closed form; 0: balls only. Pure L1 "
                  "with a smooth loss: the balls and the steps run in the support the dual ball certifies (a few "
                  "thousand steps screen there; the report's l1_support_size)")
      ->capture_default_str();
  cmd->add_option("--kernel", args->kernel,
                  "Screen the kernel problem instead (penalty l2 = lambda ||h||^2 in the kernel's space): linear, "
                  "gaussian exp(-gamma ||a-b||^2) or polynomial (gamma a.b + coef0)^degree. Exact, through the n x n "
                  "Gram matrix's eigendecomposition: O(n^3) time, ~4 n^2 doubles, n <= 8000 (3000 in the browser)")
      ->check(CLI::IsMember({"linear", "gaussian", "polynomial"}));
  cmd->add_option("--gamma", args->kernel_spec.gamma, "Kernel gamma > 0; 0: 1 / features")->capture_default_str();
  cmd->add_option("--degree", args->kernel_spec.degree, "Polynomial kernel degree (1..20)")->capture_default_str();
  cmd->add_option("--coef0", args->kernel_spec.coef0, "Polynomial kernel coef0")->capture_default_str();
  cmd->add_option("--alpha", args->alpha,
                  "With --kernel: output the n dual coefficients alpha (.npy float64; h(a) = sum_j alpha_j K(a_j, a) "
                  "+ b, b is the report's intercept)");
  cmd->add_flag("--no-dynamic", args->no_dynamic, "Turn dynamic (in-solver) screening off");
  cmd->add_flag("--verify", args->verify, "Refit on the kept samples and report whether screening was safe");
  cmd->add_option("--out", args->out, "Output JSON report")->required();
  cmd->add_option("--kept", args->kept, "Output kept sample indices, .npy int32");
  cmd->add_option("--scores", args->scores, "Output static screening scores, .npy float32 (> 0: screened)");
  cmd->add_option("--compressed", args->compressed,
                  "Output the kept samples (the compressed dataset) in LIBSVM format, original labels");
  cmd->callback([args] { run(*args); });
}

}  // namespace inductive::cli
