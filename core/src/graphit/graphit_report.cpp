// The reports of GraphiT training and cross-validation (see inductive/graphit_report.h).
#include "inductive/graphit_report.h"

#include <algorithm>
#include <cmath>

#include "inductive/enum_names.h"
#include "inductive/json_number.h"
#include "inductive/smiles.h"

namespace inductive {

namespace {

using nlohmann::json;

const char* task_name(bool regression) {
  return enum_name(kGraphitTasks, regression ? GraphitTask::kRegression : GraphitTask::kClassification);
}

json point_report(const GraphitGridPoint& p) {
  return {{"layers", p.layers}, {"dim", p.dim}, {"heads", p.heads}, {"weight_decay", p.weight_decay}};
}

}  // namespace

std::string graphit_metric_key(bool regression) { return regression ? "mae" : "accuracy"; }

json graphit_history_report(const std::vector<GraphitEpoch>& history, bool regression) {
  const std::string m = graphit_metric_key(regression);
  json h = json::array();
  for (const GraphitEpoch& e : history)
    h.push_back({{"epoch", e.epoch},
                 {"lr", e.lr},
                 {"train_loss", json_number(e.train_loss)},
                 {"train_" + m, json_number(e.train_metric)},
                 {"val_loss", json_number(e.val_loss)},
                 {"val_" + m, json_number(e.val_metric)},
                 {"test_loss", json_number(e.test_loss)},
                 {"test_" + m, json_number(e.test_metric)},
                 {"seconds", e.seconds}});
  return h;
}

json graphit_train_report(const GraphitTrainReport& r, const GraphitConfig& config, int epochs) {
  const bool regression = !config.classification();
  const std::string m = graphit_metric_key(regression);
  const bool any = !r.history.empty();
  return {{"task", enum_name(kGraphitTasks, config.task)},
          {"atom_typing", atom_typing_name(config.graph.atom_typing)},
          {"config", config.to_json()},
          {"epochs", epochs},
          {"resumed_from_epoch", r.resumed ? r.resumed_from_epoch : 0},
          {"best_epoch", r.best_epoch},
          {"saved_epoch", r.saved_epoch},
          {"best_val_" + m, json_number(r.best_val_metric)},
          {"test_" + m + "_at_best", json_number(r.test_at_best)},
          {"mean_test_" + m + "_last_50", json_number(any ? r.mean_test_metric_last(50) : NAN)},
          {"mean_val_" + m + "_last_50", json_number(any ? r.mean_val_metric_last(50) : NAN)},
          {"history", graphit_history_report(r.history, regression)}};
}

json graphit_cv_report(const GraphitCvReport& r, const std::vector<GraphitGridPoint>& grid, bool regression, int last) {
  const std::string m = graphit_metric_key(regression);  // the metric the grid selects on and the report gives
  json folds = json::array();
  for (const GraphitCvFold& f : r.folds) {
    json selection = json::array();
    for (size_t i = 0; i < f.val.size(); ++i) {
      json p = point_report(grid.at(i));
      p["val_" + m + "_last"] = json_number(f.val[i]);
      selection.push_back(p);
    }
    folds.push_back({{"fold", f.fold},
                     {"selected", point_report(grid.at(f.selected))},
                     {"selection", selection},
                     {"test_" + m + "_last", json_number(f.test_last)},
                     {"test_" + m + "_final", json_number(f.test_final)},
                     {"seconds", f.seconds}});
  }
  return {{"task", task_name(regression)},
          {"protocol", "grid on the inner validation split (mean val " + m +
                           " of the last epochs), retrain on train+val, mean test " + m + " of the last epochs"},
          {"last_epochs", last},
          {"folds", folds},
          {"mean_" + m, json_number(r.mean)},
          {"std_" + m, json_number(r.stddev)},
          {"ranks", r.ranks},
          {"seconds", r.seconds}};
}

nlohmann::json graphit_predict_report(const GraphitModel& model, const LabelledGraphs& in, const MatF& p) {
  using nlohmann::json;
  const bool regression = !model.config.classification();
  json rows = json::array();
  int known = 0, correct = 0;
  double abs_error = 0;  // regression: sum of |prediction - target| over the graphs with a target
  for (int i = 0; i < p.rows(); ++i) {
    json r = {{"name", in.names[i]}};
    if (regression) {
      r["prediction"] =
          p.cols() == 1 ? json(p(i, 0)) : json(std::vector<float>(p.row(i).data(), p.row(i).data() + p.cols()));
      if (!std::isnan(in.targets[i])) {
        r["target"] = in.targets[i];
        ++known;
        abs_error += std::fabs(static_cast<double>(p(i, 0)) - in.targets[i]);
      }
    } else {
      Eigen::Index arg = 0;
      p.row(i).maxCoeff(&arg);
      r["probabilities"] = std::vector<float>(p.row(i).data(), p.row(i).data() + p.cols());
      r["prediction"] = model.config.class_labels.empty() ? json(arg) : json(model.config.class_labels[arg]);
      if (in.classes[i] >= 0) {
        ++known;
        correct += in.classes[i] == arg;
      }
    }
    rows.push_back(std::move(r));
  }
  json report = {{"task", enum_name(kGraphitTasks, model.config.task)}, {"graphs", rows}};
  if (known > 0) report[graphit_metric_key(regression)] = (regression ? abs_error : correct) / known;
  return report;
}

}  // namespace inductive
