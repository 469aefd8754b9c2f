// Supervised OTKE training loop with checkpoints (see inductive/otke_train.h).
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>

#include "inductive/backend.h"
#include "inductive/checkpoint.h"
#include "inductive/communicator.h"
#include "inductive/epoch_loop.h"
#include "inductive/files.h"
#include "inductive/json_number.h"
#include "inductive/otke_stepper.h"
#include "inductive/otke_train.h"
#include "inductive/otke_train_report.h"

namespace inductive {

void OtkeTrainOptions::validate() const {
  adam.validate();
  INDUCTIVE_CHECK(epochs >= 1, ErrorCode::kInvalidArgument, "otke train: epochs must be >= 1: got ", epochs);
  INDUCTIVE_CHECK(batch_size >= 1, ErrorCode::kInvalidArgument, "otke train: batch size must be >= 1: got ",
                  batch_size);
  INDUCTIVE_CHECK(lr_patience >= 1 && early_stop_patience >= 1, ErrorCode::kInvalidArgument,
                  "otke train: patiences must be >= 1");
  INDUCTIVE_CHECK(lr_factor > 0 && lr_factor < 1, ErrorCode::kInvalidArgument,
                  "otke train: lr factor must be in (0, 1): got ", lr_factor);
  INDUCTIVE_CHECK(head_refit_every >= 0, ErrorCode::kInvalidArgument, "otke train: head_refit_every must be >= 0");
  INDUCTIVE_CHECK(std::isfinite(head_lambda) && head_lambda >= 0, ErrorCode::kInvalidArgument,
                  "otke train: head lambda must be >= 0");
}

namespace {

struct State {
  int epoch = 0;  // epochs completed
  double lr = 0;
  double best_val_loss = std::numeric_limits<double>::infinity();
  double best_val_accuracy = 0;
  int best_epoch = 0;
  int bad_epochs = 0;     // since the best validation loss (early stopping)
  int lr_bad_epochs = 0;  // since the last improvement or lr change (schedule)
};

// Loss and accuracy over a dataset, in batches, under the stepper's current parameters; with several ranks, each
// evaluates every size-th batch and the sums are added up.
std::pair<double, double> evaluate(OtkeStepper& stepper, const OtkeConfig& c, const SetBatch& data,
                                   const std::vector<int32_t>& y, int batch_size, Communicator* comm) {
  double loss = 0, right = 0;
  const int rank = comm ? comm->rank() : 0, size = comm ? comm->size() : 1;
  for (int begin = rank * batch_size; begin < data.batch; begin += size * batch_size) {
    const int end = std::min(data.batch, begin + batch_size);
    const SetBatch part = data.slice(begin, end);
    const std::vector<int32_t> yp(y.begin() + begin, y.begin() + end);
    const MatF logits = stepper.logits(part);
    // Multilabel: binary cross-entropy, and the share of (set, label) entries right.
    loss += (c.multilabel ? binary_cross_entropy(logits, yp) : cross_entropy(logits, yp)) * (end - begin);
    right += (c.multilabel ? multilabel_accuracy(logits, yp) : accuracy(logits, yp)) * (end - begin);
  }
  if (size > 1) {
    double sums[2] = {loss, right};
    comm->allreduce_sum(sums, 2);
    loss = sums[0];
    right = sums[1];
  }
  return {loss / data.batch, right / data.batch};
}

// The hash of every trained tensor, compared across ranks after each epoch (check_ranks_agree).
uint64_t parameters_hash(const OtkeModel& model) {
  uint64_t h = hash_floats(model.head.weight.data(), model.head.weight.size());
  h = hash_floats(model.head.bias.data(), model.head.bias.size(), h);
  h = hash_floats(model.hidden.weight.data(), model.hidden.weight.size(), h);
  h = hash_floats(model.hidden.bias.data(), model.hidden.bias.size(), h);
  h = hash_floats(model.token_table.data(), model.token_table.size(), h);
  h = hash_floats(model.nystrom.anchors().data(), model.nystrom.anchors().size(), h);
  h = hash_floats(model.conv_weight.data(), model.conv_weight.size(), h);
  for (const MatF& z : model.pooling.references()) h = hash_floats(z.data(), z.size(), h);
  return h;
}

// Checkpoint (inductive/checkpoint.h): the current and the best model's tensors under "model/" and "best/", Adam's
// moments, and the schedule and history in the state.
void save_checkpoint(const std::string& path, const OtkeModel& model, const OtkeModel& best, const Adam& adam,
                     const State& st, const std::vector<OtkeEpoch>& history) {
  std::vector<float> storage_model, storage_best;
  const ModelContents cur = model.to_contents(storage_model);
  const ModelContents bst = best.to_contents(storage_best);
  nlohmann::json hist = nlohmann::json::array();
  for (const auto& e : history) hist.push_back(otke_epoch_report(e));
  save_checkpoint_file(path, "otke", {{"model/", &cur}, {"best/", &bst}}, adam,
                       {{"epoch", st.epoch},
                        {"lr", st.lr},
                        {"best_val_loss", json_number(st.best_val_loss)},
                        {"best_val_accuracy", json_number(st.best_val_accuracy)},
                        {"best_epoch", st.best_epoch},
                        {"bad_epochs", st.bad_epochs},
                        {"lr_bad_epochs", st.lr_bad_epochs},
                        {"history", hist}});
}

bool load_checkpoint(const std::string& path, OtkeModel& model, OtkeModel& best, Adam& adam, State& st,
                     std::vector<OtkeEpoch>& history) {
  const std::optional<CheckpointFile> ck = CheckpointFile::read(path, "otke", [&](const nlohmann::json& c) {
    return OtkeConfig::from_json(c).to_json() == model.config.to_json();
  });
  if (!ck) return false;
  ck->with_context([&] {
    model = OtkeModel::from_view(ck->model("model/"));
    best = OtkeModel::from_view(ck->model("best/"));
    const auto& s = ck->state();
    st.epoch = s.at("epoch").get<int>();
    st.lr = s.at("lr").get<double>();
    // Null is "no finite validation loss yet": the state's starting infinity (a NaN loss never replaces it).
    const double best_loss = number_or_nan(s.at("best_val_loss"));
    st.best_val_loss = std::isnan(best_loss) ? std::numeric_limits<double>::infinity() : best_loss;
    st.best_val_accuracy = number_or_nan(s.at("best_val_accuracy"));
    st.best_epoch = s.at("best_epoch").get<int>();
    st.bad_epochs = s.at("bad_epochs").get<int>();
    st.lr_bad_epochs = s.at("lr_bad_epochs").get<int>();
    ck->restore(adam);
    history.clear();
    for (const auto& e : s.at("history"))
      history.push_back({e.at("epoch").get<int>(), number_or_nan(e.at("train_loss")), number_or_nan(e.at("val_loss")),
                         number_or_nan(e.at("val_accuracy")), e.at("lr").get<double>(), e.at("seconds").get<double>()});
  });
  return true;
}

}  // namespace

OtkeTrainReport train_otke_supervised(OtkeModel& model, const SetBatch& train, const std::vector<int32_t>& y_train,
                                      const SetBatch& val, const std::vector<int32_t>& y_val,
                                      const OtkeTrainOptions& options) {
  options.validate();
  const OtkeConfig& c = model.config;
  INDUCTIVE_CHECK(c.classes >= 2 && model.head.weight.rows() == c.classes, ErrorCode::kInvalidArgument,
                  "otke train: the model needs an initialised head (head.classes >= 2)");
  INDUCTIVE_CHECK(val.batch >= 1, ErrorCode::kInvalidArgument, "otke train: empty validation set");
  INDUCTIVE_CHECK(static_cast<int>(y_train.size()) == train.batch && static_cast<int>(y_val.size()) == val.batch,
                  ErrorCode::kShapeMismatch, "otke train: labels do not match the number of sets");
  Communicator* comm = options.communicator && options.communicator->size() > 1 ? options.communicator : nullptr;
  const bool writer = !comm || comm->writer();
  INDUCTIVE_CHECK(options.head_refit_every == 0 || (c.hidden == 0 && !c.multilabel), ErrorCode::kInvalidArgument,
                  "otke train: head refits (logistic regression) fit a linear one-of-C head; this model's head is ",
                  c.hidden > 0 ? "an MLP" : "multilabel", ": train it end to end (head_refit_every = 0)");

  OtkeTrainReport report;
  Adam adam(options.adam);
  State st;
  st.lr = options.adam.lr;
  OtkeModel best = model;
  const bool resumed = load_checkpoint(options.checkpoint_path, model, best, adam, st, report.history);
  // The backend's stepper owns the parameters from here on; pull() brings them back to `model` and `adam`.
  std::unique_ptr<OtkeStepper> stepper = options.backend
                                             ? options.backend->otke_stepper(model, adam, otke_loss_options(c, options))
                                             : make_cpu_otke_stepper(model, adam, otke_loss_options(c, options));
  if (comm) stepper = make_data_parallel_otke_stepper(std::move(stepper), *comm);
  if (resumed) {
    report.resumed = true;
    report.resumed_from_epoch = st.epoch;
    if (options.on_resume && writer) options.on_resume(OtkeResume{st.epoch});
  } else {
    const auto [vl, va] = evaluate(*stepper, c, val, y_val, options.batch_size, comm);
    st.best_val_loss = vl;
    st.best_val_accuracy = va;
  }

  // Every batch is a subset of these: validate them once here instead of on every step.
  train.validate("otke train");
  check_otke_labels(c, y_train, "otke train");
  stepper->bind(train);

  // The method's side of the epoch loop (inductive/epoch_loop.h): Adam steps at the epoch's learning rate, an
  // optional head refit, then evaluation, the best model so far, the plateau schedule and early stopping.
  double train_loss = 0;
  EpochHooks hooks;
  hooks.stop_before = [&](int) { return st.bad_epochs >= options.early_stop_patience; };
  hooks.begin_epoch = [&](int) {
    adam.options().lr = st.lr;
    train_loss = 0;
  };
  hooks.step = [&](const std::vector<int>& order, int begin, int end, std::mt19937_64&) {
    const std::vector<int> idx(order.begin() + begin, order.begin() + end);
    std::vector<int32_t> yb(idx.size());
    for (size_t t = 0; t < idx.size(); ++t) yb[t] = y_train[idx[t]];
    train_loss += stepper->step_on(idx, yb, st.lr) * idx.size();
  };
  hooks.end_epoch = [&](int epoch, EpochClock& clock) {
    train_loss /= train.batch;
    stepper->pull(model, adam);
    if (options.head_refit_every > 0 && epoch % options.head_refit_every == 0) {
      LogisticOptions lopt;
      lopt.lambda = options.head_lambda;
      model.head = fit_logistic(model.embed(train), y_train, c.classes, lopt, &model.head).head;
      stepper->push(model, adam);
    }
    const auto [val_loss, val_acc] = evaluate(*stepper, c, val, y_val, options.batch_size, comm);
    INDUCTIVE_CHECK(std::isfinite(train_loss) && std::isfinite(val_loss), ErrorCode::kInternal,
                    "otke train: loss became non-finite at epoch ", epoch, " (lower the learning rate)");
    if (val_loss < st.best_val_loss) {
      st.best_val_loss = val_loss;
      st.best_val_accuracy = val_acc;
      st.best_epoch = epoch;
      st.bad_epochs = 0;
      st.lr_bad_epochs = 0;
      best = model;
    } else {
      ++st.bad_epochs;
      if (++st.lr_bad_epochs >= options.lr_patience) {
        st.lr = std::max(options.min_lr, st.lr * options.lr_factor);
        st.lr_bad_epochs = 0;
      }
    }
    report.history.push_back({epoch, train_loss, val_loss, val_acc, adam.options().lr, clock.seconds()});
    st.epoch = epoch;
  };
  hooks.parameter_hash = [&] {  // a device stepper's parameters first come back to the host model
    stepper->pull(model, adam);
    return parameters_hash(model);
  };
  hooks.save_checkpoint = [&](int, bool write) {
    if (write) save_checkpoint(options.checkpoint_path, model, best, adam, st, report.history);
  };
  hooks.report_epoch = [&](int) {
    if (options.on_epoch && writer) options.on_epoch(report.history.back());
  };

  EpochLoop loop;
  loop.first = st.epoch + 1;
  loop.last = options.epochs;
  loop.n = train.batch;
  loop.batch_size = options.batch_size;
  loop.seed = options.seed;
  loop.seed_stride = 1000003ull;
  loop.checkpoint = !options.checkpoint_path.empty();
  loop.communicator = comm;
  loop.rank_check_every = options.rank_check_every;
  loop.who = "otke train";
  run_epoch_loop(loop, hooks);
  model = best;
  const OtkeStepStats stats = stepper->stats();
  report.steps = stats.steps;
  report.compute_seconds = stats.compute_seconds;
  report.allreduce_seconds = stats.allreduce_seconds;
  report.allreduce_bytes_per_step = stats.allreduce_bytes;
  report.best_epoch = st.best_epoch;
  report.best_val_loss = st.best_val_loss;
  report.best_val_accuracy = st.best_val_accuracy;
  return report;
}

}  // namespace inductive
