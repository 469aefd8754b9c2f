// inductive/graphit_report.h - the JSON reports of GraphiT training and of its cross-validation protocol, defined
// once in core: `inductive graphit train | cv` write them with the run's inputs added (data source, split sizes,
// ranks, backend), and any other front end gets the same keys.
//
// Keys name the task's metric: "accuracy" for classification, "mae" for regression (lower is better), written <m>
// below. Non-finite numbers are null (inductive/json_number.h).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "inductive/graphit.h"
#include "inductive/graphit_data.h"
#include "inductive/graphit_protocol.h"
#include "inductive/graphit_train.h"

namespace inductive {

// "accuracy" or "mae".
std::string graphit_metric_key(bool regression);

// One entry per epoch: epoch, lr, train_loss, train_<m>, val_loss, val_<m>, test_loss, test_<m>, seconds.
nlohmann::json graphit_history_report(const std::vector<GraphitEpoch>& history, bool regression);

// A training run of `epochs` epochs that left a model of `config`: task, atom_typing, config, epochs,
// resumed_from_epoch (0: not resumed), best_epoch, saved_epoch, best_val_<m>, test_<m>_at_best,
// mean_test_<m>_last_50, mean_val_<m>_last_50 (null before any epoch), history.
nlohmann::json graphit_train_report(const GraphitTrainReport& report, const GraphitConfig& config, int epochs);

// The cross-validation protocol over `grid` with scores averaged over the `last` epochs: task, protocol (in words),
// last_epochs, folds [{fold, selected {layers, dim, heads, weight_decay}, selection [{the point's keys,
// val_<m>_last}], test_<m>_last, test_<m>_final, seconds}], mean_<m>, std_<m>, ranks, seconds.
nlohmann::json graphit_cv_report(const GraphitCvReport& report, const std::vector<GraphitGridPoint>& grid,
                                 bool regression, int last);

// Predictions of `model` for `graphs` (their shown outputs, GraphitModel::shown_outputs, one row each): task, graphs
// [{name, probabilities and prediction (the class name, or index without names) | prediction (a value, or the
// values) and target when known}], and <m> over the graphs whose class / target is known (absent when none is).
nlohmann::json graphit_predict_report(const GraphitModel& model, const LabelledGraphs& graphs, const MatF& outputs);

}  // namespace inductive
