// The report of supervised OTKE training (inductive/otke_train_report.h): the run's outcome, this rank's split of
// step time, and one entry per epoch, with non-finite numbers as null.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "inductive/otke_train_report.h"

namespace inductive {
namespace {

TEST(OtkeTrainReport, GivesTheOutcomeTheStepTimesAndEveryEpoch) {
  OtkeTrainReport r;
  r.history = {{1, 0.9, 0.8, 0.5, 0.01, 1.5}, {2, 0.7, std::numeric_limits<double>::quiet_NaN(), 0.75, 0.005, 1.25}};
  r.best_epoch = 1;
  r.best_val_loss = 0.8;
  r.best_val_accuracy = 0.5;
  r.resumed = true;
  r.resumed_from_epoch = 1;
  r.steps = 40;
  r.compute_seconds = 2.0;
  r.allreduce_seconds = 0.25;
  r.allreduce_bytes_per_step = 4096;
  const nlohmann::json j = otke_train_report(r);
  EXPECT_EQ(j.at("epochs_run"), 2);
  EXPECT_EQ(j.at("best_epoch"), 1);
  EXPECT_EQ(j.at("best_val_loss"), 0.8);
  EXPECT_EQ(j.at("best_val_accuracy"), 0.5);
  EXPECT_EQ(j.at("resumed"), true);
  EXPECT_EQ(j.at("resumed_from_epoch"), 1);
  EXPECT_EQ(
      j.at("distributed"),
      nlohmann::json(
          {{"steps", 40}, {"compute_seconds", 2.0}, {"allreduce_seconds", 0.25}, {"allreduce_bytes_per_step", 4096}}));
  ASSERT_EQ(j.at("history").size(), 2u);
  EXPECT_EQ(j.at("history")[0], nlohmann::json({{"epoch", 1},
                                                {"train_loss", 0.9},
                                                {"val_loss", 0.8},
                                                {"val_accuracy", 0.5},
                                                {"lr", 0.01},
                                                {"seconds", 1.5}}));
  EXPECT_TRUE(j.at("history")[1].at("val_loss").is_null());  // a diverged epoch: NaN is written as null
  EXPECT_EQ(j.at("history")[1].at("val_accuracy"), 0.75);
}

TEST(OtkeTrainReport, AnUntrainedRunHasNoBestLoss) {
  OtkeTrainReport r;
  r.best_val_loss = std::numeric_limits<double>::infinity();
  const nlohmann::json j = otke_train_report(r);
  EXPECT_EQ(j.at("epochs_run"), 0);
  EXPECT_TRUE(j.at("best_val_loss").is_null());
  EXPECT_TRUE(j.at("history").empty());
}

}  // namespace
}  // namespace inductive
