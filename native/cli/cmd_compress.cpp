// native/cli/cmd_compress.cpp - `inductive compress`: dataset compression by screening (thesis ch. 4, "Dataset
// compression"). Solves the training problem, ranks its samples three ways (screening score, margin, random),
// and for each fraction of samples removed refits on the rest and reports test accuracy, test loss and the full
// problem's certified duality gap at the refit (how far the compressed data's model is from the full data's).
// The test set is a file (--test-libsvm / --test-csv) or held out from the input (--test-fraction, stratified).
// Writes a JSON report (--out) and optionally the curves as CSV (--out-csv), together and atomically.
#include <cmath>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "erm_inputs.h"
#include "inductive/atomic_file.h"
#include "inductive/error.h"
#include "inductive/screening.h"

namespace inductive::cli {
namespace {

// Core's default curve (CompressionOptions) as the flags' comma-separated text.
std::string default_fractions() {
  std::string out;
  for (double f : CompressionOptions{}.fractions) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", f);
    out += (out.empty() ? "" : ",") + std::string(text);
  }
  return out;
}
std::string default_rankings() {
  std::string out;
  for (CompressionRanking r : CompressionOptions{}.rankings) out += (out.empty() ? "" : ",") + std::string(name_of(r));
  return out;
}

struct CompressArgs {
  ErmArgs erm;
  std::string out, csv_out, test_libsvm, test_csv;
  double lambda = kDefaultErmLambda;
  double test_fraction = kDefaultTestFraction;
  uint64_t seed = CompressionOptions{}.seed;
  std::string fractions = default_fractions();
  std::string rankings = default_rankings();
  int ellipsoid_steps = ScreenOptions{}.ellipsoid_steps;
};

std::vector<CompressionRanking> parse_rankings(const std::string& text) {
  std::vector<CompressionRanking> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(parse_enum(kCompressionRankings, item, "--rankings"));
  INDUCTIVE_CHECK(!out.empty(), ErrorCode::kInvalidArgument, "--rankings: empty list");
  return out;
}

// The test set of a file, read with the training input's format options and label mapping.
struct TestFile {
  Dataset data;
  std::vector<double> y;
};

TestFile read_test_file(const CompressArgs& args, const ErmProblem& train) {
  TestFile t;
  if (!args.test_libsvm.empty()) {
    LibsvmOptions o;
    o.n_features = train.features();  // a test file may not use the last feature (a9a's t file)
    t.data = to_dataset(read_libsvm(args.test_libsvm, o));
  } else {
    CsvOptions o;
    o.header = args.erm.header;
    o.label_column = args.erm.label_column;
    t.data = to_dataset(read_csv(args.test_csv, o));
  }
  const std::string& path = args.test_libsvm.empty() ? args.test_csv : args.test_libsvm;
  INDUCTIVE_CHECK(t.data.p() == train.features(), ErrorCode::kShapeMismatch, path, ": ", t.data.p(),
                  " features, the training input has ", train.features());
  const bool ovr = args.erm.one_vs_rest_option && args.erm.one_vs_rest_option->count() > 0;
  t.y = erm_targets(t.data.y, train.loss.is_classification(), ovr ? &args.erm.one_vs_rest : nullptr);
  return t;
}

void run(const CompressArgs& args) {
  INDUCTIVE_CHECK(std::isfinite(args.lambda) && args.lambda > 0, ErrorCode::kInvalidArgument,
                  "--lambda must be a finite number > 0, got ", args.lambda);
  INDUCTIVE_CHECK(args.ellipsoid_steps >= 0, ErrorCode::kInvalidArgument, "--ellipsoid-steps must be >= 0, got ",
                  args.ellipsoid_steps);
  CompressionOptions options;
  options.fractions = parse_number_list(args.fractions, "--fractions");
  options.rankings = parse_rankings(args.rankings);
  options.seed = static_cast<uint32_t>(args.seed);
  options.solver = erm_solver_options(args.erm, 0);
  options.screen.ellipsoid_steps = args.ellipsoid_steps;
  int last_percent = -1;
  options.progress = [&](const char* stage, double f) {
    const int percent = static_cast<int>(100 * f);
    if (std::string(stage) == "refit" && percent / 10 != last_percent / 10) {
      std::fprintf(stderr, "compress: %d%% of the refits done\n", percent);
      last_percent = percent;
    }
  };
  options.validate();
  const bool test_file = !args.test_libsvm.empty() || !args.test_csv.empty();

  ErmInput in = load_erm_input(args.erm);
  in.problem.lambda = args.lambda;
  in.problem.validate();

  HeldOut held;
  TestFile file;
  const ErmProblem* train = &in.problem;
  const DesignMatrix* test_x = nullptr;
  const std::vector<double>* test_y = nullptr;
  if (test_file) {
    file = read_test_file(args, in.problem);
    test_x = file.data.x.get();
    test_y = &file.y;
  } else {
    held = hold_out(in.problem, args.test_fraction, args.seed);
    train = &held.train;
    test_x = held.test_x.get();
    test_y = &held.test_y;
  }
  std::fprintf(stderr, "compress: %d training and %d test samples, %zu rankings x %zu fractions\n", train->n(),
               test_x->rows(), options.rankings.size(), options.fractions.size());
  const CompressionReport r = compress_dataset(*train, *test_x, *test_y, options);

  std::string csv = "ranking,fraction_removed,n_kept,test_accuracy,test_loss,train_objective,certified_gap,epochs\n";
  char line[256];
  for (const CompressionCurve& c : r.curves)
    for (const CompressionPoint& p : c.points) {
      std::snprintf(line, sizeof line, "%s,%.6g,%d,%.9g,%.9g,%.12g,%.6g,%d\n", name_of(c.ranking), p.fraction_removed,
                    p.n_kept, p.test_accuracy, p.test_loss, p.train_objective, p.certified_gap, p.epochs);
      csv += line;
    }
  // The run's report as core defines it (the browser's compressionCurve() returns the same, camelCased), with the
  // inputs only the CLI has.
  nlohmann::json report = compression_report(*train, test_x->rows(), r);
  report["input"] = in.source;
  report["test"] = test_file ? nlohmann::json(args.test_libsvm.empty() ? args.test_csv : args.test_libsvm)
                             : nlohmann::json({{"held_out_fraction", args.test_fraction}, {"seed", args.seed}});
  report["intercept"] = train->intercept;
  report["tol"] = args.erm.tol;
  report["ellipsoid_steps"] = args.ellipsoid_steps;
  const std::string text = report.dump(2) + "\n";
  std::vector<std::pair<std::string, std::vector<uint8_t>>> outputs;
  outputs.emplace_back(args.out, std::vector<uint8_t>(text.begin(), text.end()));
  if (!args.csv_out.empty()) outputs.emplace_back(args.csv_out, std::vector<uint8_t>(csv.begin(), csv.end()));
  write_files_atomic(outputs);
  std::fprintf(stderr, "compress: full model test accuracy %.4f; %d of %d samples (%.1f%%) certified removable\n",
               r.full_test_accuracy, r.n_certified, train->n(), 100.0 * r.n_certified / train->n());
}

}  // namespace

void add_compress_command(CLI::App& app) {
  auto args = std::make_shared<CompressArgs>();
  CLI::App* cmd = app.add_subcommand(
      "compress",
      "Dataset compression: refit on the samples left after removing the easiest (by screening score, "
      "margin or at random) and report test accuracy and the certified gap per fraction removed");
  add_erm_options(cmd, args->erm);
  cmd->add_option("--lambda", args->lambda, "Regularisation lambda > 0")->capture_default_str();
  auto* test_libsvm = cmd->add_option("--test-libsvm", args->test_libsvm, "Test set, LIBSVM (.gz ok)");
  auto* test_csv = cmd->add_option("--test-csv", args->test_csv, "Test set, CSV (.gz ok; the input's CSV options)");
  test_libsvm->excludes(test_csv);
  auto* fraction = cmd->add_option("--test-fraction", args->test_fraction,
                                   "Without a test file: hold out this fraction of the input (stratified by label)")
                       ->capture_default_str();
  fraction->excludes(test_libsvm)->excludes(test_csv);
  cmd->add_option("--seed", args->seed, "Seed of the held-out split and of the random ranking")->capture_default_str();
  cmd->add_option("--fractions", args->fractions, "Comma-separated fractions of training samples to remove, in [0, 1)")
      ->capture_default_str();
  cmd->add_option("--rankings", args->rankings, "Comma-separated orders of removal: screening, margin, random")
      ->capture_default_str();
  cmd->add_option("--ellipsoid-steps", args->ellipsoid_steps,
                  "Steps of the ellipsoid method in the static test whose scores rank the samples (0: balls only)")
      ->capture_default_str();
  cmd->add_option("--out", args->out, "Output JSON report")->required();
  cmd->add_option("--out-csv", args->csv_out, "Output the curves as CSV (one row per ranking and fraction)");
  cmd->callback([args] { run(*args); });
}

}  // namespace inductive::cli
