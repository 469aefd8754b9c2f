// native/cli/cmd_sinkhorn.cpp - `inductive sinkhorn`: entropic OT between two weighted point clouds given their
// cost matrix, NPY in and out. Prints a one-line JSON summary on stdout (iterations, marginal error, cost).
#include <cstdio>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "inductive/atomic_file.h"
#include "inductive/backend_registry.h"
#include "inductive/npy.h"
#include "inductive/sinkhorn.h"

namespace inductive::cli {
namespace {

// The flags' defaults are core's (a default-constructed SinkhornOptions). --max-iter bounds a --tol run (the core's
// max_iter is --iters when no tolerance is given).
struct SinkhornArgs {
  std::string cost, a, b, out, out_f, out_g, backend = "cpu";
  double eps = SinkhornOptions{}.eps;
  int iters = SinkhornOptions{}.max_iter;
  double tol = SinkhornOptions{}.tol;
  int max_iter = 1000;
  bool similarity = SinkhornOptions{}.similarity;
};

// Reads a 1-D float marginal whose length must match `expected`.
std::vector<float> load_marginal(const std::string& path, const char* which, int64_t expected) {
  NpyArray arr = load_npy(path);
  INDUCTIVE_CHECK(arr.dtype == "<f4", ErrorCode::kInvalidArgument, path, ": marginal ", which,
                  " must be float32 or float64, got ", arr.dtype);
  INDUCTIVE_CHECK(arr.shape.size() == 1 && arr.shape[0] == expected, ErrorCode::kShapeMismatch, path, ": marginal ",
                  which, " must be a vector of ", expected, " weights: got ", arr.shape.size(), "-d array of ",
                  arr.numel(), " values");
  return arr.f32;
}

void run(const SinkhornArgs& args) {
  NpyArray cost = load_npy(args.cost);
  INDUCTIVE_CHECK(cost.dtype == "<f4", ErrorCode::kInvalidArgument, args.cost,
                  ": cost must be float32 or float64, got ", cost.dtype);
  INDUCTIVE_CHECK(cost.shape.size() == 2, ErrorCode::kShapeMismatch, args.cost,
                  ": cost must be a matrix (n, p): got a ", cost.shape.size(), "-d array");
  INDUCTIVE_CHECK(cost.shape[0] >= 1 && cost.shape[1] >= 1, ErrorCode::kInvalidArgument, args.cost,
                  ": cost is empty, got shape (", cost.shape[0], ", ", cost.shape[1], "), expected n, p >= 1");
  INDUCTIVE_CHECK(cost.shape[0] <= (1 << 30) && cost.shape[1] <= (1 << 30), ErrorCode::kInvalidArgument, args.cost,
                  ": cost dimensions are too large");
  const int n = static_cast<int>(cost.shape[0]);
  const int p = static_cast<int>(cost.shape[1]);
  std::vector<float> a, b;
  if (!args.a.empty()) a = load_marginal(args.a, "a", n);
  if (!args.b.empty()) b = load_marginal(args.b, "b", p);

  SinkhornOptions options;
  options.eps = args.eps;
  options.similarity = args.similarity;
  if (args.tol > 0) {
    options.tol = args.tol;
    options.max_iter = args.max_iter;
  } else {
    options.max_iter = args.iters;
  }

  SinkhornProblem<float> problem;
  problem.cost = cost.f32.data();
  problem.n_max = n;
  problem.p_max = p;
  problem.a = a.empty() ? nullptr : a.data();
  problem.b = b.empty() ? nullptr : b.data();

  std::vector<float> plan(static_cast<size_t>(n) * p), f(n), g(p);
  int32_t n_iter = 0;
  float err = 0, value = 0;
  uint8_t converged = 0;
  SinkhornOutput<float> out{plan.data(), f.data(), g.data(), &n_iter, &err, &converged, &value};

  std::unique_ptr<Backend> backend = make_backend(args.backend);
  backend->sinkhorn_log(problem, options, out);

  // Written only after the solve succeeded, all or nothing.
  std::vector<std::pair<std::string, std::vector<uint8_t>>> outputs;
  outputs.emplace_back(args.out, npy_bytes(plan.data(), {n, p}));
  if (!args.out_f.empty()) outputs.emplace_back(args.out_f, npy_bytes(f.data(), {n}));
  if (!args.out_g.empty()) outputs.emplace_back(args.out_g, npy_bytes(g.data(), {p}));
  write_files_atomic(outputs);

  nlohmann::json summary = {{"n", n},
                            {"p", p},
                            {"eps", args.eps},
                            {"n_iter", n_iter},
                            {"marginal_err", err},
                            {"converged", converged != 0},
                            {"cost", value},
                            {"backend", backend->name()}};
  std::printf("%s\n", summary.dump().c_str());
}

}  // namespace

void add_sinkhorn_command(CLI::App& app) {
  auto args = std::make_shared<SinkhornArgs>();
  CLI::App* cmd =
      app.add_subcommand("sinkhorn", "Entropic optimal transport (log-domain Sinkhorn) for one cost matrix");
  cmd->add_option("--cost", args->cost, "Cost matrix C (n x p), .npy float32/float64")->required();
  cmd->add_option("--a", args->a, "Row marginal a (n), .npy; default uniform 1/n");
  cmd->add_option("--b", args->b, "Column marginal b (p), .npy; default uniform 1/p");
  cmd->add_option("--eps", args->eps, "Entropic regularisation eps > 0")->capture_default_str();
  auto* iters = cmd->add_option("--iters", args->iters, "Run exactly N iterations (default 100)")
                    ->check(CLI::Range(1, 100000000));
  auto* tol = cmd->add_option("--tol", args->tol, "Stop once the L1 marginal error <= T (at most --max-iter)");
  iters->excludes(tol);
  cmd->add_option("--max-iter", args->max_iter, "Iteration cap with --tol")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000000))
      ->needs(tol);
  cmd->add_flag("--similarity", args->similarity, "The matrix holds similarities S (cost = -S)");
  cmd->add_option("--out", args->out, "Output plan P (n x p), .npy float32")->required();
  cmd->add_option("--out-f", args->out_f, "Output dual potential f (n), .npy");
  cmd->add_option("--out-g", args->out_g, "Output dual potential g (p), .npy");
  cmd->add_option("--backend", args->backend, "cpu, cuda or cuda:<device>")->capture_default_str();
  cmd->callback([args] { run(*args); });
}

}  // namespace inductive::cli
