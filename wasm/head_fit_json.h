// wasm/head_fit_json.h - the report of a head fit (inductive::HeadFit) as the TS HeadFitReport type reads it
// (camelCase), shared by the OTKE fitHead and the GraphiT refitHead bindings.
#pragma once

#include <cstddef>

#include <nlohmann/json.hpp>

#include "inductive/head_fit.h"

namespace inductive::wasm {

inline nlohmann::json head_fit_json(const HeadFit& fit) {
  nlohmann::json info = {
      {"lambda", fit.lambda},        {"lambdaChoice", fit.lambda_choice}, {"trainAccuracy", fit.train_accuracy},
      {"trainLoss", fit.train_loss}, {"iterations", fit.iterations},      {"classCounts", fit.class_counts}};
  if (fit.lambda_choice == "holdout" || (fit.lambda_choice == "given" && !fit.grid_accuracy.empty())) {
    nlohmann::json path = nlohmann::json::array();
    for (size_t g = 0; g < fit.grid.size(); ++g) path.push_back({fit.grid[g], fit.grid_accuracy[g]});
    info["holdoutAccuracy"] = fit.holdout_accuracy;
    info["lambdaPath"] = path;
  }
  if (fit.lambda_choice == "cross-validation") {
    nlohmann::json path = nlohmann::json::array();
    for (size_t g = 0; g < fit.grid.size(); ++g) path.push_back({fit.grid[g], fit.grid_accuracy[g], fit.grid_loss[g]});
    info["folds"] = fit.folds;
    info["cvAccuracy"] = fit.cv_accuracy;
    info["cvLoss"] = fit.cv_loss;
    info["lambdaPath"] = path;
  }
  return info;
}

}  // namespace inductive::wasm
