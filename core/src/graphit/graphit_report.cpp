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

}  // namespace inductive
