// inductive/graphit_train.h - GraphiT training (thesis ch. 3): Adam/AdamW on every parameter, the reference's
// schedules (lr halved every N epochs for TU datasets; linear warm-up over S steps for ZINC), seeded shuffled
// batches, per-epoch train/validation/test metrics (so a protocol runner can report e.g. "mean test accuracy of
// the last 50 epochs" or "test accuracy at the best validation epoch"), and checkpoints that resume
// bit-identically.
//
// Determinism: every random draw of epoch e (shuffle, dropout masks, LapPE sign flips, the batch hook's) comes
// from one std::mt19937_64 seeded with (seed, e), so a checkpoint needs no generator state beyond the seed and
// the epoch, and a resumed run repeats exactly what an uninterrupted one does (same build and machine).
// Single-threaded; the model is trained in place and left at the last epoch.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "inductive/adam.h"
#include "inductive/graphit.h"

namespace inductive {

struct GraphitDataset {
  std::vector<GraphitGraph> graphs;
  std::vector<int32_t> classes;  // classification: one class per graph
  std::vector<float> values;     // regression: graphs x outputs, row-major
  int size() const { return static_cast<int>(graphs.size()); }
};

// The graphs `index` of a dataset packed with their targets (classes or values, as the config's task says).
GraphitBatch pack_graphit_batch(const GraphitConfig& config, const GraphitDataset& data, const std::vector<int>& index);

// Where a data-parallel share order[lo, ...) starts in its step's batch order[begin, ...): the nodes, and the sum of
// n^2, of the graphs before it (GraphitRunOptions::node_offset and sq_offset, for the one-process dropout masks).
struct GraphitSharePosition {
  int64_t nodes = 0, squares = 0;
};
GraphitSharePosition graphit_share_position(const GraphitDataset& data, const std::vector<int>& order, int begin,
                                            int lo);

struct GraphitTrainOptions {
  int epochs = 300;
  int batch_size = 32;
  AdamOptions adam{1e-3, 0.9, 0.999, 1e-8, 1e-4};  // the reference's AdamW (decay on every parameter)
  int lr_halve_every = 50;                         // epochs; 0: constant
  double lr_factor = 0.5;
  int warmup_steps = 0;  // > 0: lr * min(1, step / warmup_steps), step counted from 1 over the whole run
  uint64_t seed = 0;
  bool shuffle = true;        // the reference does not shuffle; we do by default
  bool flip_pe_signs = true;  // random LapPE sign flips per graph and batch (training only; no-op without PE)
  // Called on every training batch after packing (and sign flips), before the forward pass: augmentation.
  // Draw randomness from `rng` only, to keep runs reproducible.
  std::function<void(GraphitBatch& batch, std::mt19937_64& rng)> batch_hook;
  int eval_batch_size = 128;
  std::string checkpoint_path;  // when set: written atomically every `checkpoint_every` epochs (and at the end),
  int checkpoint_every = 1;     // and resumed from when it exists
  // Data parallelism (inductive/communicator.h; null: one process). Every rank calls train_graphit with the same
  // model, data and options; each takes a contiguous share of every batch (the serial run's shuffle and LapPE sign
  // flips, and the dropout masks of its place in the batch), the ranks' gradients and metrics are summed, and every
  // rank takes the same Adam step, so N ranks train the one-process model up to float rounding. BatchNorm's batch
  // statistics are summed across the ranks too. Only the writer rank writes the checkpoint; parameters are checked
  // identical across ranks after every epoch. A batch_hook sees each rank's share only and must not draw from the
  // generator a number of values that depends on the share.
  class Communicator* communicator = nullptr;
  int rank_check_every = 0;  // steps between parameter checks across ranks, besides every epoch's (0: none)
  // Where steps and evaluations run (inductive/backend.h; null: the CPU, in place). A device backend keeps the
  // parameters on the device: `model` is current again when train_graphit returns (and in checkpoints).
  class Backend* backend = nullptr;
  // Leave the model at the best validation epoch (accuracy: highest; MAE: lowest; first on ties) among the epochs
  // this call trains, instead of the last one (needs a validation set). A checkpoint still holds the last epoch.
  bool keep_best = false;
  void validate() const;
};

// One epoch's record. Metrics: accuracy (classification) or mean absolute error (regression); NaN when the
// corresponding set is absent. The train loss/metric are averaged over the epoch's training-mode batches.
struct GraphitEpoch {
  int epoch = 0;
  double lr = 0;  // at the epoch's last step
  double train_loss = 0, train_metric = 0;
  double val_loss = 0, val_metric = 0;
  double test_loss = 0, test_metric = 0;
  double seconds = 0, eta_seconds = 0;
};

struct GraphitTrainReport {
  std::vector<GraphitEpoch> history;  // every epoch since the start, resumed ones included
  bool resumed = false;
  int resumed_from_epoch = 0;
  int best_epoch = 0;  // best validation metric (first on ties); 0 without validation set
  double best_val_metric = 0;
  double test_at_best = 0;  // test metric at best_epoch (NaN without test set)
  int saved_epoch = 0;      // the epoch the model was left at: the last, or keep_best's choice
  // Mean test / validation metric over the last k epochs of the history (fewer when the history is shorter).
  double mean_test_metric_last(int k) const;
  double mean_val_metric_last(int k) const;
};

struct GraphitEvaluation {
  double loss = 0;
  double metric = 0;  // accuracy or MAE
  MatF outputs;       // graphs x outputs
};
// Evaluation-mode loss and metric over a dataset (needs its targets). `cache` (optional) is reused scratch: a
// caller evaluating every epoch passes the same one, so the batch buffers are not allocated afresh each time.
GraphitEvaluation evaluate_graphit(const GraphitModel& model, const GraphitDataset& data, int batch_size = 128,
                                   GraphitCache* cache = nullptr);

// The evaluation loop every backend shares: the dataset in order, `batch_size` graphs at a time, each batch through
// `batch_loss` (its evaluation-mode mean loss; its outputs into `out`), then the task's metric over all outputs.
// evaluate_graphit is it with the host model; a device stepper passes its own forward pass.
GraphitEvaluation evaluate_graphit_batches(const GraphitConfig& c, const GraphitDataset& data, int batch_size,
                                           const std::function<double(const GraphitBatch& b, MatF& out)>& batch_loss);

// The task's metric of a batch's outputs: accuracy (classification) or mean absolute error (regression).
double graphit_batch_metric(const GraphitConfig& c, const MatF& outputs, const GraphitBatch& b);

// Trains `model` in place on `train`; `val` and `test` (optional, may be null) are evaluated after every
// epoch and only recorded. `on_epoch` (optional) is called after every epoch (progress lines, early exits by
// throwing). A checkpoint written for another config is an Error{kInvalidArgument}.
GraphitTrainReport train_graphit(GraphitModel& model, const GraphitDataset& train, const GraphitDataset* val,
                                 const GraphitDataset* test, const GraphitTrainOptions& options,
                                 const EventFn<GraphitEpoch>& on_epoch = {});

// The learning rate of the schedule at (1-based) epoch and global step.
double graphit_learning_rate(const GraphitTrainOptions& options, int epoch, int64_t step);

}  // namespace inductive
