// native/cli/cmd_screen.cpp - `inductive screen`: safe sample screening for a regularised ERM problem read from a
// LIBSVM or CSV file. Solves the problem (gap-certified, with dynamic gap-safe screening unless --no-dynamic), then
// applies the static screening tests at the solution; a sample is reported screened when either removed it.
// Writes a JSON report (--out), optionally the kept sample indices (--kept, int32 .npy) and the static screening
// scores (--scores, float32 .npy; > 0 <=> screened by the static test), all together and atomically.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "inductive/atomic_file.h"
#include "inductive/error.h"
#include "inductive/npy.h"
#include "inductive/screening.h"

namespace inductive::cli {
namespace {

struct ScreenArgs {
  std::string libsvm, csv, out, kept, scores;
  int label_column = -1;
  bool header = false;
  double one_vs_rest = 0;
  bool has_one_vs_rest = false;
  std::string loss = "squared_hinge";
  double mu = 0.0;
  std::string penalty = "l2";
  double l1_ratio = 0.5;
  double lambda = 0.1;
  bool intercept = false;
  double tol = 1e-6;
  int max_epochs = 1000;
  bool no_dynamic = false;
  bool verify = false;
};

// Non-finite doubles become null (JSON has no inf/nan).
nlohmann::json num(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

void run(const ScreenArgs& args) {
  // Validate cheap arguments before reading the data.
  INDUCTIVE_CHECK(std::isfinite(args.lambda) && args.lambda > 0, ErrorCode::kInvalidArgument,
                  "--lambda must be a finite number > 0, got ", args.lambda);
  INDUCTIVE_CHECK(std::isfinite(args.tol) && args.tol > 0, ErrorCode::kInvalidArgument,
                  "--tol must be a finite number > 0, got ", args.tol);
  INDUCTIVE_CHECK(args.max_epochs >= 1, ErrorCode::kInvalidArgument, "--max-epochs must be >= 1, got ",
                  args.max_epochs);
  Loss loss = Loss::from_name(args.loss, args.mu);
  loss.validate();
  Penalty penalty = Penalty::from_name(args.penalty, args.l1_ratio);
  penalty.validate();

  Dataset data;
  std::string source;
  if (!args.libsvm.empty()) {
    data = read_libsvm(args.libsvm);
    source = args.libsvm;
  } else {
    CsvOptions csv;
    csv.header = args.header;
    csv.label_column = args.label_column;
    data = read_csv(args.csv, csv);
    source = args.csv;
  }
  INDUCTIVE_CHECK(data.n() >= 1 && data.p() >= 1, ErrorCode::kInvalidArgument, source,
                  ": no samples or no features, got ", data.n(), " x ", data.p());

  ErmProblem problem;
  problem.x = data.x.get();
  if (args.has_one_vs_rest) {
    problem.y = one_vs_rest(data.y, args.one_vs_rest);
  } else if (loss.is_classification()) {
    problem.y = to_signed_labels(data.y);
  } else {
    problem.y = data.y;
  }
  problem.loss = loss;
  problem.penalty = penalty;
  problem.lambda = args.lambda;
  problem.intercept = args.intercept;
  problem.validate();

  SolverOptions options;
  options.tol = args.tol;
  options.max_epochs = args.max_epochs;
  options.dynamic_screening = !args.no_dynamic;
  options.progress = [](const SolverProgress& p) {
    if (p.epoch % 10 == 0) {
      std::fprintf(stderr, "epoch %d: primal %.6g dual %.6g gap %.3g active %d\n", p.epoch, p.primal, p.dual, p.gap,
                   p.n_active);
    }
    return true;
  };
  options.validate();

  SolveResult fit = solve_erm(problem, options);

  // Static screening at the solution (certified regions only); combined with what dynamic screening removed.
  ScreenResult stat = screen_samples(problem, fit.x, ScreenOptions{});
  const int n = problem.n();
  std::vector<uint8_t> screened(n, 0);
  int n_dynamic = 0;
  for (int i = 0; i < n; ++i) {
    const bool dyn = i < static_cast<int>(fit.removed_at.size()) && fit.removed_at[i] >= 0;
    if (dyn) ++n_dynamic;
    screened[i] = (dyn || stat.screened[i] != 0) ? 1 : 0;
  }
  std::vector<int32_t> kept;
  for (int i = 0; i < n; ++i) {
    if (!screened[i]) kept.push_back(i);
  }
  const int n_removed = n - static_cast<int>(kept.size());

  nlohmann::json report = {
      {"input", source},
      {"n", n},
      {"d", problem.features()},
      {"loss", loss.name()},
      {"mu", loss.mu},
      {"penalty", penalty.name()},
      {"lambda", args.lambda},
      {"intercept", args.intercept},
      {"tol", args.tol},
      {"dynamic_screening", !args.no_dynamic},
      {"n_kept", static_cast<int>(kept.size())},
      {"n_removed", n_removed},
      {"n_removed_dynamic", n_dynamic},
      {"n_removed_static", stat.n_screened},
      {"fraction_screened", static_cast<double>(n_removed) / n},
      {"epochs", fit.epochs},
      {"seconds", fit.seconds},
      {"converged", fit.converged},
      {"primal", num(fit.gap.primal)},
      {"dual", num(fit.gap.dual)},
      {"gap", num(fit.gap.gap)},
      {"relative_gap", num(fit.gap.primal != 0 ? fit.gap.gap / std::fabs(fit.gap.primal) : fit.gap.gap)},
      {"screen_seconds", stat.seconds},
  };

  if (args.verify) {
    VerifyReport v = verify_screening(problem, screened);
    report["verify"] = {
        {"safe", v.safe},
        {"n_screened", v.n_screened},
        {"violations", v.violations},
        {"worst_inside", num(v.worst_inside)},
        {"primal_full", num(v.primal_full)},
        {"primal_kept", num(v.primal_kept)},
        {"distance", num(v.distance)},
        {"distance_bound", num(v.distance_bound)},
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
  write_files_atomic(outputs);

  std::fprintf(stderr, "screened %d of %d samples (%.1f%%) in %d epochs, gap %.3g\n", n_removed, n,
               100.0 * n_removed / n, fit.epochs, fit.gap.gap);
}

}  // namespace

void add_screen_command(CLI::App& app) {
  auto args = std::make_shared<ScreenArgs>();
  CLI::App* cmd =
      app.add_subcommand("screen", "Safe sample screening for regularised ERM (squared hinge, logistic, ...)");
  auto* libsvm = cmd->add_option("--libsvm", args->libsvm, "Input in LIBSVM/svmlight format (.gz ok)");
  auto* csv = cmd->add_option("--csv", args->csv, "Input CSV (.gz ok), one sample per line");
  libsvm->excludes(csv);
  cmd->add_option("--label-column", args->label_column, "CSV label column; negative counts from the end")
      ->capture_default_str()
      ->needs(csv);
  cmd->add_flag("--header", args->header, "CSV: skip the first line")->needs(csv);
  auto* ovr = cmd->add_option("--one-vs-rest", args->one_vs_rest, "Label that becomes +1 (all others -1)");
  cmd->add_option("--loss", args->loss,
                  "squared_hinge | hinge | safe_logistic | logistic | interval_regression | squared")
      ->capture_default_str();
  cmd->add_option("--mu", args->mu, "Flat-region parameter (paper convention)")->capture_default_str();
  cmd->add_option("--penalty", args->penalty, "l2 | l1 | elastic_net")->capture_default_str();
  cmd->add_option("--l1-ratio", args->l1_ratio, "Elastic net l1 ratio in (0, 1)")->capture_default_str();
  cmd->add_option("--lambda", args->lambda, "Regularisation lambda > 0")->capture_default_str();
  cmd->add_flag("--intercept", args->intercept, "Fit a (penalised, LIBLINEAR-style) intercept");
  cmd->add_option("--tol", args->tol, "Relative duality gap to stop at")->capture_default_str();
  cmd->add_option("--max-epochs", args->max_epochs, "Epoch cap")->capture_default_str();
  cmd->add_flag("--no-dynamic", args->no_dynamic, "Turn dynamic (in-solver) screening off");
  cmd->add_flag("--verify", args->verify, "Refit on the kept samples and report whether screening was safe");
  cmd->add_option("--out", args->out, "Output JSON report")->required();
  cmd->add_option("--kept", args->kept, "Output kept sample indices, .npy int32");
  cmd->add_option("--scores", args->scores, "Output static screening scores, .npy float32 (> 0: screened)");
  cmd->callback([args, ovr] {
    args->has_one_vs_rest = ovr->count() > 0;
    INDUCTIVE_CHECK(!args->libsvm.empty() || !args->csv.empty(), ErrorCode::kInvalidArgument,
                    "an input is required: --libsvm FILE or --csv FILE");
    run(*args);
  });
}

}  // namespace inductive::cli
