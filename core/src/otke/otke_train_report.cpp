// The report of supervised OTKE training (see inductive/otke_train_report.h).
#include "inductive/otke_train_report.h"

#include "inductive/json_number.h"

namespace inductive {

nlohmann::json otke_epoch_report(const OtkeEpoch& e) {
  return {{"epoch", e.epoch},
          {"train_loss", json_number(e.train_loss)},
          {"val_loss", json_number(e.val_loss)},
          {"val_accuracy", json_number(e.val_accuracy)},
          {"lr", e.lr},
          {"seconds", e.seconds}};
}

nlohmann::json otke_train_report(const OtkeTrainReport& r) {
  nlohmann::json history = nlohmann::json::array();
  for (const OtkeEpoch& e : r.history) history.push_back(otke_epoch_report(e));
  return {{"epochs_run", r.history.size()},
          {"best_epoch", r.best_epoch},
          {"best_val_loss", json_number(r.best_val_loss)},
          {"best_val_accuracy", json_number(r.best_val_accuracy)},
          {"resumed", r.resumed},
          {"resumed_from_epoch", r.resumed_from_epoch},
          {"distributed",
           {{"steps", r.steps},
            {"compute_seconds", r.compute_seconds},
            {"allreduce_seconds", r.allreduce_seconds},
            {"allreduce_bytes_per_step", r.allreduce_bytes_per_step}}},
          {"history", history}};
}

}  // namespace inductive
