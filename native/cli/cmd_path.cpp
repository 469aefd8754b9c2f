// native/cli/cmd_path.cpp - `inductive path`: a regularisation path solved twice on the same data, with the same
// solver and tolerance: once with sequential + dynamic safe screening (warm starts screened at each new lambda,
// re-tested at every gap check), once without, the two walked side by side lambda by lambda. Reports per lambda the
// fraction screened, epochs, seconds and the primal objectives of both runs (they must agree within the certified
// gaps), and the end-to-end speedup.
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "erm_inputs.h"
#include "inductive/atomic_file.h"
#include "inductive/error.h"
#include "inductive/json_number.h"
#include "inductive/screening.h"

namespace inductive::cli {
namespace {

struct PathArgs {
  ErmArgs erm;
  std::string out;
  std::string lambdas;  // comma-separated; overrides the geometric grid
  bool has_lambdas = false;
  double lambda_max = kDefaultPathLambdaMax;
  double ratio = kDefaultPathRatio;
  int count = kDefaultPathCount;
  bool static_screen = false;
  int ellipsoid_steps = ScreenOptions{}.ellipsoid_steps;
  bool screening_only = false;
  bool working_set = false;
};

std::vector<double> parse_lambdas(const std::string& text) {
  std::vector<double> out = parse_number_list(text, "--lambdas");
  for (double v : out) {
    INDUCTIVE_CHECK(v > 0, ErrorCode::kInvalidArgument, "--lambdas: every lambda must be a finite number > 0, got ", v);
  }
  return out;
}

PathOptions path_options(const ErmArgs& erm, bool screening, bool static_screen, int ellipsoid_steps,
                         bool working_set) {
  PathOptions options;
  options.solver = erm_solver_options(erm, 0);  // one line per lambda below instead of per-epoch lines
  options.solver.working_set = working_set;
  options.solver.validate();
  options.screening = screening;
  options.static_screen = static_screen;
  options.screen.ellipsoid_steps = ellipsoid_steps;
  options.screen.validate();
  return options;
}

void print_point(const char* what, int index, size_t count, const PathPoint& p, int n) {
  std::fprintf(stderr, "path %s: lambda %d/%zu = %.4g: %d epochs, %.3f s, screened %.1f%%, gap %.3g\n", what, index,
               count, p.lambda, p.epochs, p.seconds, 100.0 * p.n_removed / n, p.fit.gap.gap);
}

void run(const PathArgs& args) {
  INDUCTIVE_CHECK(args.ellipsoid_steps >= 0, ErrorCode::kInvalidArgument, "--ellipsoid-steps must be >= 0, got ",
                  args.ellipsoid_steps);
  INDUCTIVE_CHECK(args.ellipsoid_steps == 0 || args.static_screen, ErrorCode::kInvalidArgument,
                  "--ellipsoid-steps shapes the static screening of warm starts: it needs --static-screen");
  std::vector<double> lambdas;
  if (args.has_lambdas) {
    lambdas = parse_lambdas(args.lambdas);
  } else {
    INDUCTIVE_CHECK(std::isfinite(args.lambda_max) && args.lambda_max > 0, ErrorCode::kInvalidArgument,
                    "--lambda-max must be a finite number > 0, got ", args.lambda_max);
    INDUCTIVE_CHECK(std::isfinite(args.ratio) && args.ratio > 0 && args.ratio <= 1, ErrorCode::kInvalidArgument,
                    "--ratio must be in (0, 1], got ", args.ratio);
    INDUCTIVE_CHECK(args.count >= 1 && args.count <= 10000, ErrorCode::kInvalidArgument,
                    "--count must be in [1, 10000], got ", args.count);
    lambdas = geometric_lambdas(args.lambda_max, args.ratio, args.count);
  }
  ErmInput in = load_erm_input(args.erm);
  ErmProblem& problem = in.problem;
  problem.lambda = lambdas.front();
  problem.validate();

  // The two paths are walked side by side, lambda by lambda, the one that goes first alternating: a load that comes
  // and goes on the machine (or a frequency change) then falls on both alike, where timing one whole path after the
  // other gave the ratio of two different moments.
  const PathOptions with_options =
      path_options(args.erm, true, args.static_screen, args.ellipsoid_steps, args.working_set);
  PathWalker with_walker(problem, with_options);
  PathWalker without_walker(problem, path_options(args.erm, false, false, 0, false));
  std::vector<PathPoint> with, without;
  for (size_t k = 0; k < lambdas.size(); ++k) {
    const int index = static_cast<int>(k) + 1;
    const bool with_first = k % 2 == 0 || args.screening_only;
    for (int turn = 0; turn < 2; ++turn) {
      if ((turn == 0) == with_first) {
        with.push_back(with_walker.next(lambdas[k]));
        print_point("with screening", index, lambdas.size(), with.back(), problem.n());
      } else if (!args.screening_only) {
        without.push_back(without_walker.next(lambdas[k]));
        print_point("without screening", index, lambdas.size(), without.back(), problem.n());
      }
    }
  }

  // The browser's path() report (core's path_report, camelCased there), with this run's inputs and, lambda by lambda,
  // the path without screening beside it.
  nlohmann::json report = path_report(problem, with_options, with);
  report["input"] = in.source;
  report["tol"] = args.erm.tol;
  const double t_with = report["seconds"].get<double>();
  report["seconds_with_screening"] = t_with;
  double t_without = 0;
  for (size_t k = 0; k < without.size(); ++k) {
    const PathPoint &a = with[k], &b = without[k];
    t_without += b.seconds;
    nlohmann::json& p = report["points"][k];
    p["without_screening"] = {{"epochs", b.epochs},
                              {"seconds", b.seconds},
                              {"primal", json_number(b.fit.gap.primal)},
                              {"gap", json_number(b.fit.gap.gap)},
                              {"converged", b.fit.converged}};
    // Both primal values are within their certified gaps of the same optimum.
    const double slack = a.fit.gap.gap + b.fit.gap.gap + 1e-12 * std::fabs(b.fit.gap.primal);
    p["objectives_agree"] = std::fabs(a.fit.gap.primal - b.fit.gap.primal) <= slack;
  }
  if (!without.empty()) {
    report["seconds_without_screening"] = t_without;
    report["speedup"] = json_number(t_with > 0 ? t_without / t_with : NAN);
  }
  const std::string text = report.dump(2) + "\n";
  write_file_atomic(args.out, std::vector<uint8_t>(text.begin(), text.end()));
  if (without.empty()) {
    std::fprintf(stderr, "path of %zu lambdas: %.3f s with screening\n", lambdas.size(), t_with);
  } else {
    std::fprintf(stderr, "path of %zu lambdas: %.3f s with screening, %.3f s without (%.2fx)\n", lambdas.size(), t_with,
                 t_without, t_with > 0 ? t_without / t_with : 0.0);
  }
}

}  // namespace

void add_path_command(CLI::App& app) {
  auto args = std::make_shared<PathArgs>();
  CLI::App* cmd = app.add_subcommand(
      "path", "Regularisation path with and without sequential + dynamic safe screening, timing both");
  add_erm_options(cmd, args->erm);
  auto* lambdas =
      cmd->add_option("--lambdas", args->lambdas, "Comma-separated lambdas, visited in order (overrides the grid)");
  cmd->add_option("--lambda-max", args->lambda_max, "Largest lambda of the geometric grid")->capture_default_str();
  cmd->add_option("--ratio", args->ratio, "Smallest lambda / largest lambda")->capture_default_str();
  cmd->add_option("--count", args->count, "Number of lambdas in the grid")->capture_default_str();
  cmd->add_flag("--static-screen", args->static_screen,
                "Also screen each warm start before solving: gap and l1 balls (plus --ellipsoid-steps steps of the "
                "ellipsoid method), each region tested in closed form");
  cmd->add_option("--ellipsoid-steps", args->ellipsoid_steps,
                  "With --static-screen: ellipsoid-method steps per warm start (0: balls only)")
      ->capture_default_str();
  cmd->add_flag("--screening-only", args->screening_only, "Skip the run without screening");
  cmd->add_flag("--working-set", args->working_set,
                "In the run with screening, each solve iterates over the samples not flat at its warm start and "
                "brings back those that leave the flat region; it stops at the whole problem's certified gap, like "
                "the run without");
  cmd->add_option("--out", args->out, "Output JSON report")->required();
  cmd->callback([args, lambdas] {
    args->has_lambdas = lambdas->count() > 0;
    run(*args);
  });
}

}  // namespace inductive::cli
