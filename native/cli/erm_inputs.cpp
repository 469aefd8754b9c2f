// native/cli/erm_inputs.cpp - see erm_inputs.h.
#include "erm_inputs.h"

#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "inductive/error.h"

namespace inductive::cli {

void add_erm_options(CLI::App* cmd, ErmArgs& args) {
  auto* libsvm = cmd->add_option("--libsvm", args.libsvm, "Input in LIBSVM/svmlight format (.gz ok)");
  auto* csv = cmd->add_option("--csv", args.csv, "Input CSV (.gz ok), one sample per line");
  libsvm->excludes(csv);
  cmd->add_option("--label-column", args.label_column, "CSV label column; negative counts from the end")
      ->capture_default_str()
      ->needs(csv);
  cmd->add_flag("--header", args.header, "CSV: skip the first line")->needs(csv);
  args.one_vs_rest_option = cmd->add_option("--one-vs-rest", args.one_vs_rest, "Label that becomes +1 (all others -1)");
  cmd->add_option("--loss", args.loss,
                  "squared_hinge | hinge | safe_logistic | logistic | interval_regression | squared")
      ->capture_default_str();
  cmd->add_option("--mu", args.mu, "Flat-region parameter (paper convention)")->capture_default_str();
  cmd->add_option("--penalty", args.penalty, "l2 | l1 | elastic_net")->capture_default_str();
  cmd->add_option("--l1-ratio", args.l1_ratio, "Elastic net l1 ratio in (0, 1)")->capture_default_str();
  cmd->add_flag("--intercept", args.intercept, "Fit a (penalised, LIBLINEAR-style) intercept");
  cmd->add_option("--tol", args.tol, "Relative duality gap to stop at")->capture_default_str();
  cmd->add_option("--max-epochs", args.max_epochs, "Epoch cap per solve")->capture_default_str();
}

ErmInput load_erm_input(const ErmArgs& args) {
  INDUCTIVE_CHECK(!args.libsvm.empty() || !args.csv.empty(), ErrorCode::kInvalidArgument,
                  "an input is required: --libsvm FILE or --csv FILE");
  INDUCTIVE_CHECK(std::isfinite(args.tol) && args.tol > 0, ErrorCode::kInvalidArgument,
                  "--tol must be a finite number > 0, got ", args.tol);
  INDUCTIVE_CHECK(args.max_epochs >= 1, ErrorCode::kInvalidArgument, "--max-epochs must be >= 1, got ",
                  args.max_epochs);
  Loss loss = Loss::from_name(args.loss, args.mu);
  loss.validate();
  Penalty penalty = Penalty::from_name(args.penalty, args.l1_ratio);
  penalty.validate();

  ErmInput in;
  if (!args.libsvm.empty()) {
    in.data = to_dataset(read_libsvm(args.libsvm));
    in.source = args.libsvm;
  } else {
    CsvOptions csv;
    csv.header = args.header;
    csv.label_column = args.label_column;
    in.data = to_dataset(read_csv(args.csv, csv));
    in.source = args.csv;
  }
  INDUCTIVE_CHECK(in.data.n() >= 1 && in.data.p() >= 1, ErrorCode::kInvalidArgument, in.source,
                  ": no samples or no features, got ", in.data.n(), " x ", in.data.p());

  const bool ovr = args.one_vs_rest_option && args.one_vs_rest_option->count() > 0;
  in.problem =
      erm_problem(in.data, loss, penalty, ErmProblem{}.lambda, args.intercept, ovr ? &args.one_vs_rest : nullptr);
  return in;
}

SolverOptions erm_solver_options(const ErmArgs& args, int every) {
  SolverOptions options;
  options.tol = args.tol;
  options.max_epochs = args.max_epochs;
  if (every <= 0) return options;
  options.progress = [every](const SolverProgress& p) {
    if (p.epoch % every == 0) {
      std::fprintf(stderr, "epoch %d: primal %.6g dual %.6g gap %.3g active %d\n", p.epoch, p.primal, p.dual, p.gap,
                   p.n_active);
    }
  };
  return options;
}

std::vector<double> parse_number_list(const std::string& text, const std::string& flag) {
  std::vector<double> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t used = 0;
    double v = 0;
    try {
      v = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    INDUCTIVE_CHECK(used > 0 && item.find_first_not_of(" \t", used) == std::string::npos, ErrorCode::kInvalidArgument,
                    flag, ": not a number: got '", item, "'");
    INDUCTIVE_CHECK(std::isfinite(v), ErrorCode::kInvalidArgument, flag, ": every value must be finite, got ", v);
    out.push_back(v);
  }
  INDUCTIVE_CHECK(!out.empty(), ErrorCode::kInvalidArgument, flag, ": empty list");
  return out;
}

}  // namespace inductive::cli
