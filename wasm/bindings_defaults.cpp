// Embind binding of optionDefaults(): the defaults of every option the TS layer takes, read from default-constructed
// core option structs and named here once in the TS layer's camelCase. The TS layer fills a left-out option from
// this (web/src/defaults.ts) instead of restating a number, so the browser, the CLI (whose flags take the same
// structs' defaults) and the core cannot drift apart.
#include <emscripten/bind.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "inductive/barycenter.h"
#include "inductive/head_fit.h"
#include "inductive/otke.h"
#include "inductive/otke_inputs.h"
#include "inductive/screening.h"
#include "inductive/screening/path.h"
#include "inductive/sinkhorn.h"

namespace {

using nlohmann::json;

std::string option_defaults() {
  const inductive::SinkhornOptions sinkhorn;
  const inductive::HeadFitOptions head;
  const inductive::OtkeFitOptions fit;
  const inductive::SolverOptions solver;
  const inductive::KernelSpec kernel;
  const inductive::CompressionOptions compression;
  const inductive::CsvOptions csv;
  std::vector<std::string> rankings;
  for (inductive::CompressionRanking r : compression.rankings) rankings.emplace_back(inductive::name_of(r));
  return json{
      {"sinkhorn",
       {{"eps", sinkhorn.eps},
        {"maxIter", sinkhorn.max_iter},
        {"tol", sinkhorn.tol},
        {"similarity", sinkhorn.similarity}}},
      // Samples (sequences, molecules) per wasm call: what `otke embed --batch-size` embeds at a time.
      {"batchSize", inductive::kDefaultEmbedBatch},
      {"headFit",
       {{"lambda", head.lambda},
        {"minPerClass", head.min_per_class},
        {"maxFolds", head.max_folds},
        {"maxIter", head.logistic.max_iter},
        {"tol", head.logistic.tol},
        {"refit", head.refit},
        {"holdoutFraction", head.holdout_fraction},
        {"seed", head.seed},
        {"lambdaGrid", inductive::default_head_lambda_grid(false)},
        {"holdoutLambdaGrid", inductive::default_head_lambda_grid(true)}}},
      {"otkeFit",
       {{"seed", fit.seed},
        {"kmeansIters", fit.kmeans_iters},
        {"maxSamples", fit.max_samples},
        {"referenceUpdate", inductive::name_of(fit.reference_update)},
        {"barycenterIters", fit.barycenter.iters},
        {"barycenterEps", fit.barycenter.eps}}},
      {"screen",
       {{"loss", inductive::Loss{}.name()},
        {"mu", inductive::Loss{}.mu},
        {"penalty", inductive::Penalty{}.name()},
        {"l1Ratio", inductive::kDefaultL1Ratio},
        {"lambda", inductive::kDefaultErmLambda},
        {"intercept", inductive::ErmProblem{}.intercept},
        {"tol", solver.tol},
        {"maxEpochs", solver.max_epochs},
        {"gapEvery", solver.gap_every},
        {"dynamic", inductive::kDefaultDynamicScreening},
        {"ellipsoidSteps", inductive::ScreenOptions{}.ellipsoid_steps},
        {"kernel",
         {{"type", inductive::name_of(kernel.kind)},
          {"gamma", kernel.gamma},
          {"degree", kernel.degree},
          {"coef0", kernel.coef0}}}}},
      {"csv",
       {{"header", csv.header}, {"labelColumn", csv.label_column}, {"delimiter", std::string(1, csv.delimiter)}}},
      {"path",
       {{"lambdaMax", inductive::kDefaultPathLambdaMax},
        {"ratio", inductive::kDefaultPathRatio},
        {"count", inductive::kDefaultPathCount}}},
      {"compression",
       {{"testFraction", inductive::kDefaultTestFraction},
        {"seed", compression.seed},
        {"fractions", compression.fractions},
        {"rankings", rankings}}}}
      .dump();
}

}  // namespace

EMSCRIPTEN_BINDINGS(inductive_defaults) { emscripten::function("optionDefaults", &option_defaults); }
