// native/cli/erm_inputs.h - the data and problem options `inductive screen` and `inductive path` share: where the
// samples come from (LIBSVM or CSV), how labels become +-1, and the loss / penalty / intercept of the ERM problem.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "inductive/screening.h"

namespace inductive::cli {

struct ErmArgs {
  std::string libsvm, csv;
  int label_column = CsvOptions{}.label_column;
  bool header = CsvOptions{}.header;
  double one_vs_rest = 0;
  CLI::Option* one_vs_rest_option = nullptr;  // set by add_erm_options; count() > 0 when given
  // The problem's and the solver's defaults are core's (the browser's screen() takes the same).
  std::string loss = Loss{}.name();
  double mu = Loss{}.mu;
  std::string penalty = Penalty{}.name();
  double l1_ratio = kDefaultL1Ratio;
  bool intercept = ErmProblem{}.intercept;
  double tol = SolverOptions{}.tol;
  int max_epochs = SolverOptions{}.max_epochs;
};

// Adds --libsvm/--csv/--label-column/--header/--one-vs-rest/--loss/--mu/--penalty/--l1-ratio/--intercept/--tol/
// --max-epochs to `cmd`, bound to `args` (which must outlive the app).
void add_erm_options(CLI::App* cmd, ErmArgs& args);

// The dataset and the problem built on it (problem.x points into data; lambda is left to the caller).
struct ErmInput {
  Dataset data;
  ErmProblem problem;
  std::string source;
};

// Validates the cheap arguments first, then reads the data and builds the problem. Throws inductive::Error.
ErmInput load_erm_input(const ErmArgs& args);

// Solver options from the arguments, with a progress line on stderr every `every` epochs (none when every <= 0).
SolverOptions erm_solver_options(const ErmArgs& args, int every = 10);

// A comma-separated list of finite numbers ("1,0.5,0.1"); `flag` names the option in messages. Throws on an empty
// list, an item that is not a number, NaN or Inf.
std::vector<double> parse_number_list(const std::string& text, const std::string& flag);

}  // namespace inductive::cli
