// inductive/otke_train.h - supervised OTKE training (thesis ch. 2): end-to-end gradients of the cross-entropy w.r.t.
// the anchors (or conv filters), the references and the head, Adam with the thesis schedule, early stopping,
// optional alternating refits of the head, and checkpoints that let an interrupted run resume.
//
// Memory: a training step holds O(batch n p) for the plans, never O(batch n p iters). The unrolled Sinkhorn gradient
// (default, the reference's) adds n + p floats per iteration and set, from which it recomputes its softmaxes; the
// implicit one (`sinkhorn_gradient = kImplicit`) adds nothing, whatever the number of iterations.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "inductive/adam.h"
#include "inductive/otke.h"

namespace inductive {

// Gradients with the parameters' shapes (empty when the parameter does not exist or is frozen).
struct OtkeGradients {
  MatF tokens;                   // V x E (tokens input): dense; rows of tokens absent from the batch are 0
  MatF anchors;                  // K x d, tangent to the sphere (see Nystrom::anchor_gradient)
  MatF conv_weight;              // K x d
  VecF conv_bias;                // K
  std::vector<MatF> references;  // q x (p x K)
  MatF hidden_weight;            // H x D (MLP head)
  VecF hidden_bias;              // H
  MatF head_weight;              // C x D, or C x H with a hidden layer
  VecF head_bias;                // C
};

struct OtkeLossOptions {
  bool tokens = true;   // compute the gradient of the token table (tokens input)
  bool anchors = true;  // compute gradients for the embedding layer (nystrom anchors / conv filters)
  bool references = true;
  bool head = true;
  SinkhornGradient sinkhorn_gradient = SinkhornGradient::kUnrolled;
  // Apply the config's head.dropout (a training step); the mask is drawn from dropout_seed, so that a step can be
  // replayed (finite differences, resumed runs). Off: the deterministic network that predict() computes.
  bool dropout = false;
  uint64_t dropout_seed = 0;
  // Pool and differentiate each set in one pass where the model allows it (OTK pooling of the features under a
  // linear head, learning the references: OtkPooling::forward_backward), which reads each set's features from
  // memory once instead of twice. Off: the batch's forward, then its backward (the same maths, for comparisons).
  bool fuse_sets = true;
};

// The checks otke_loss makes before any arithmetic (finite features of the model's input width, a head, one label in
// range per set), shared with the device steppers so every backend rejects a batch with the same Error.
void check_otke_batch(const OtkeModel& model, const SetBatch& features, const std::vector<int32_t>& labels);
// The MLP head's inverted-dropout mask on Phi (rows x cols, row-major): each entry 1 / (1 - rate), or 0 with
// probability `rate`, drawn from `seed` in entry order (otke_loss draws it; a device stepper uploads the same).
MatF otke_dropout_mask(int rows, int cols, float rate, uint64_t seed);
// The dropout seed of a training step: a fresh mask per step and per rank, replayable from the run's seed and the
// step count, which a resumed run restores from Adam's step counter.
uint64_t otke_step_dropout_seed(uint64_t seed, int64_t steps, int rank);

// A tokens model's lookup checks (OtkeModel::local_features makes them): the token table's shape, and every valid
// element an integer token index in 0..V-1; device steppers check batches with it before they look tokens up.
void check_otke_tokens(const OtkeModel& model, const SetBatch& inputs);
// Labels in range for the config: class indices 0..C-1, or bit sets of the C labels (multilabel); `who` starts the
// error message.
void check_otke_labels(const OtkeConfig& config, const std::vector<int32_t>& labels, const char* who);

// Mean cross-entropy of the model's predictions on a batch, and its gradients (when `grads` is non-null).
// `features` are the model's inputs (token indices for a tokens model, see inductive/otke.h). For a multilabel model
// the labels are bit sets (inductive/multilabel.h) and the loss is the mean binary cross-entropy over every (set,
// label) entry.
double otke_loss(const OtkeModel& model, const SetBatch& features, const std::vector<int32_t>& labels,
                 OtkeGradients* grads, const OtkeLossOptions& options = {});

struct OtkeEpoch {
  int epoch = 0;
  double train_loss = 0, val_loss = 0, val_accuracy = 0, lr = 0, seconds = 0;
};

// A run resumed from its checkpoint, after the last epoch it holds.
struct OtkeResume {
  int after_epoch = 0;
};

struct OtkeTrainOptions {
  int epochs = 100;
  int batch_size = 64;
  AdamOptions adam{0.01};  // thesis: lr 0.01
  int lr_patience = 5;     // halve lr when the validation loss has not improved for this many epochs
  double lr_factor = 0.5;
  double min_lr = 1e-6;
  int early_stop_patience = 20;  // stop when the validation loss has not improved for this many epochs
  bool train_tokens = true;      // the token table (tokens input; Adam over the full table)
  bool train_anchors = true;
  bool train_references = true;
  int head_refit_every = 0;   // > 0: every N epochs refit the head by L-BFGS (thesis' alternating scheme)
  double head_lambda = 1e-4;  // L2 penalty of those refits
  SinkhornGradient sinkhorn_gradient = SinkhornGradient::kUnrolled;  // see the memory note at the top
  uint64_t seed = 0;
  // Where steps run (inductive/backend.h; null: the CPU, training `model` in place), as for GraphiT.
  class Backend* backend = nullptr;
  // Data parallelism (inductive/communicator.h; null: one process). Every rank calls train_otke_supervised with the
  // same data and options; each takes its share of every batch and of the validation set, gradients are summed
  // across ranks, rank 0 alone writes the checkpoint and reports progress, and the parameters are checked
  // identical across ranks after every epoch (and every `rank_check_every` steps when > 0). CPU backend only for now.
  class Communicator* communicator = nullptr;
  int rank_check_every = 0;
  std::string checkpoint_path;  // when set: written atomically after every epoch; resumed from when present
  // Progress, structured (the front ends format it): after every epoch, and once on resuming from a checkpoint
  // (the last epoch it holds). Called on the writing rank only; cancel by throwing.
  EventFn<OtkeEpoch> on_epoch;
  EventFn<OtkeResume> on_resume;
  void validate() const;
};

struct OtkeTrainReport {
  std::vector<OtkeEpoch> history;
  int best_epoch = 0;
  double best_val_loss = 0, best_val_accuracy = 0;
  bool resumed = false;
  int resumed_from_epoch = 0;
  // Data parallel runs: this rank's step time split into compute and gradient summing.
  int64_t steps = 0;
  double compute_seconds = 0, allreduce_seconds = 0;
  int64_t allreduce_bytes_per_step = 0;
};

// Trains `model` in place (it must be initialised, e.g. by fit_otke_unsupervised, and have a head with
// config.classes classes) and leaves it at the epoch with the best validation loss.
OtkeTrainReport train_otke_supervised(OtkeModel& model, const SetBatch& train, const std::vector<int32_t>& y_train,
                                      const SetBatch& val, const std::vector<int32_t>& y_val,
                                      const OtkeTrainOptions& options);

}  // namespace inductive
