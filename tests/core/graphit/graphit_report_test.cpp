// The reports of GraphiT training and cross-validation (inductive/graphit_report.h): keys name the task's metric
// (accuracy, or mae for regression), non-finite numbers are null, and the cross-validation report gives every
// fold's selection over the grid.
#include <cmath>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "inductive/graphit_report.h"

namespace inductive {
namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

GraphitEpoch epoch(int n, double val_metric, double test_metric) {
  GraphitEpoch e;
  e.epoch = n;
  e.lr = 1e-3;
  e.train_loss = 0.5;
  e.train_metric = 0.75;
  e.val_loss = 0.625;
  e.val_metric = val_metric;
  e.test_loss = std::isnan(test_metric) ? kNaN : 0.25;
  e.test_metric = test_metric;
  e.seconds = 2;
  return e;
}

TEST(GraphitReport, HistoryKeysNameTheMetricOfTheTask) {
  const std::vector<GraphitEpoch> h{epoch(1, 0.5, 0.25)};
  const nlohmann::json c = graphit_history_report(h, false)[0];
  EXPECT_EQ(c, nlohmann::json({{"epoch", 1},
                               {"lr", 1e-3},
                               {"train_loss", 0.5},
                               {"train_accuracy", 0.75},
                               {"val_loss", 0.625},
                               {"val_accuracy", 0.5},
                               {"test_loss", 0.25},
                               {"test_accuracy", 0.25},
                               {"seconds", 2.0}}));
  const nlohmann::json r = graphit_history_report(h, true)[0];
  EXPECT_EQ(r.at("val_mae"), 0.5);
  EXPECT_EQ(r.at("train_mae"), 0.75);
  EXPECT_FALSE(r.contains("val_accuracy"));
}

TEST(GraphitReport, TrainReportWithoutTestSetHasNullTestScores) {
  GraphitConfig config = GraphitConfig::with_dim(16, 2, 4);
  config.outputs = 2;
  GraphitTrainReport r;
  r.history = {epoch(1, 0.5, kNaN), epoch(2, 0.75, kNaN)};
  r.best_epoch = 2;
  r.saved_epoch = 2;
  r.best_val_metric = 0.75;
  r.test_at_best = kNaN;
  const nlohmann::json j = graphit_train_report(r, config, 10);
  EXPECT_EQ(j.at("task"), "classification");
  EXPECT_EQ(j.at("config"), config.to_json());
  EXPECT_EQ(j.at("epochs"), 10);
  EXPECT_EQ(j.at("resumed_from_epoch"), 0);
  EXPECT_EQ(j.at("best_epoch"), 2);
  EXPECT_EQ(j.at("saved_epoch"), 2);
  EXPECT_EQ(j.at("best_val_accuracy"), 0.75);
  EXPECT_TRUE(j.at("test_accuracy_at_best").is_null());
  EXPECT_TRUE(j.at("mean_test_accuracy_last_50").is_null());
  EXPECT_DOUBLE_EQ(j.at("mean_val_accuracy_last_50").get<double>(), 0.625);  // (0.5 + 0.75) / 2
  EXPECT_EQ(j.at("history").size(), 2u);
  EXPECT_TRUE(j.at("history")[1].at("test_accuracy").is_null());
}

TEST(GraphitReport, TrainReportOfARegressionRunResumedBeforeAnyNewEpoch) {
  GraphitConfig config = GraphitConfig::with_dim(16, 1, 2);
  config.task = GraphitTask::kRegression;
  config.outputs = 1;
  GraphitTrainReport r;
  r.resumed = true;
  r.resumed_from_epoch = 3;
  const nlohmann::json j = graphit_train_report(r, config, 3);
  EXPECT_EQ(j.at("task"), "regression");
  EXPECT_EQ(j.at("resumed_from_epoch"), 3);
  EXPECT_TRUE(j.at("mean_val_mae_last_50").is_null());  // no epoch in the history: nothing to average
  EXPECT_TRUE(j.at("mean_test_mae_last_50").is_null());
  EXPECT_FALSE(j.contains("best_val_accuracy"));
}

TEST(GraphitReport, CvReportGivesEachFoldsSelectionOverTheGrid) {
  const std::vector<GraphitGridPoint> grid = graphit_grid({1, 2}, {32}, {4}, {1e-4});
  GraphitCvReport r;
  GraphitCvFold f;
  f.fold = 3;
  f.selected = 0;
  f.val = {0.5, kNaN};  // the second point diverged: its score is null in the report
  f.test_last = 0.625;
  f.test_final = 0.75;
  f.seconds = 12;
  r.folds = {f};
  r.mean = 0.625;
  r.stddev = 0;
  r.ranks = 2;
  r.seconds = 13;
  const nlohmann::json j = graphit_cv_report(r, grid, false, 50);
  EXPECT_EQ(j.at("task"), "classification");
  EXPECT_EQ(j.at("last_epochs"), 50);
  EXPECT_EQ(j.at("mean_accuracy"), 0.625);
  EXPECT_EQ(j.at("std_accuracy"), 0.0);
  EXPECT_EQ(j.at("ranks"), 2);
  ASSERT_EQ(j.at("folds").size(), 1u);
  const nlohmann::json& fj = j.at("folds")[0];
  EXPECT_EQ(fj.at("fold"), 3);
  EXPECT_EQ(fj.at("selected"), nlohmann::json({{"layers", 1}, {"dim", 32}, {"heads", 4}, {"weight_decay", 1e-4}}));
  ASSERT_EQ(fj.at("selection").size(), 2u);
  EXPECT_EQ(fj.at("selection")[0].at("layers"), 1);
  EXPECT_EQ(fj.at("selection")[0].at("val_accuracy_last"), 0.5);
  EXPECT_TRUE(fj.at("selection")[1].at("val_accuracy_last").is_null());
  EXPECT_EQ(fj.at("test_accuracy_last"), 0.625);
  EXPECT_EQ(fj.at("test_accuracy_final"), 0.75);
  EXPECT_NE(j.at("protocol").get<std::string>().find("mean test accuracy"), std::string::npos);
  EXPECT_EQ(graphit_cv_report(r, grid, true, 50).at("task"), "regression");
  EXPECT_TRUE(graphit_cv_report(r, grid, true, 50).contains("mean_mae"));
}

}  // namespace
}  // namespace inductive
