// inductive/otke_train_report.h - the JSON report of supervised OTKE training, defined once in core: `inductive otke
// train` prints it with the run's inputs added (model path, backend, split sizes, ranks, communicator, wall time).
//
// Keys: epochs_run, best_epoch, best_val_loss, best_val_accuracy, resumed, resumed_from_epoch, distributed {steps,
// compute_seconds, allreduce_seconds, allreduce_bytes_per_step} (this rank's), history [{epoch, train_loss,
// val_loss, val_accuracy, lr, seconds}]. Non-finite numbers are null (inductive/json_number.h).
#pragma once

#include <nlohmann/json.hpp>

#include "inductive/otke_train.h"

namespace inductive {

nlohmann::json otke_train_report(const OtkeTrainReport& report);

// One entry of the history: {epoch, train_loss, val_loss, val_accuracy, lr, seconds}. Checkpoints store the history
// in this form too (inductive/otke_train.h).
nlohmann::json otke_epoch_report(const OtkeEpoch& epoch);

}  // namespace inductive
