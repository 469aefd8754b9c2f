// GraphiT training loop with schedules, metrics and resumable checkpoints (see inductive/graphit_train.h).
#include <cmath>
#include <limits>
#include <numeric>

#include "inductive/atomic_file.h"
#include "inductive/files.h"
#include "inductive/communicator.h"
#include "inductive/epoch_loop.h"
#include "inductive/error.h"
#include "inductive/backend.h"
#include "inductive/checkpoint.h"
#include "inductive/graphit_stepper.h"
#include "inductive/graphit_train.h"
#include "inductive/json_number.h"

namespace inductive {

void GraphitTrainOptions::validate() const {
  adam.validate();
  INDUCTIVE_CHECK(epochs >= 1, ErrorCode::kInvalidArgument, "graphit train: epochs must be >= 1: got ", epochs);
  INDUCTIVE_CHECK(batch_size >= 1 && eval_batch_size >= 1, ErrorCode::kInvalidArgument,
                  "graphit train: batch sizes must be >= 1: got ", batch_size, ", ", eval_batch_size);
  INDUCTIVE_CHECK(lr_halve_every >= 0, ErrorCode::kInvalidArgument, "graphit train: lr_halve_every must be >= 0");
  INDUCTIVE_CHECK(lr_factor > 0 && lr_factor <= 1, ErrorCode::kInvalidArgument,
                  "graphit train: lr factor must be in (0, 1]: got ", lr_factor);
  INDUCTIVE_CHECK(warmup_steps >= 0, ErrorCode::kInvalidArgument, "graphit train: warmup_steps must be >= 0");
  INDUCTIVE_CHECK(checkpoint_every >= 1, ErrorCode::kInvalidArgument, "graphit train: checkpoint_every must be >= 1");
}

double graphit_learning_rate(const GraphitTrainOptions& o, int epoch, int64_t step) {
  double lr = o.adam.lr;
  if (o.lr_halve_every > 0) lr *= std::pow(o.lr_factor, (epoch - 1) / o.lr_halve_every);
  if (o.warmup_steps > 0 && step < o.warmup_steps) lr *= static_cast<double>(step) / o.warmup_steps;
  return lr;
}

namespace {

double mean_last(const std::vector<GraphitEpoch>& history, int k, double GraphitEpoch::*metric) {
  INDUCTIVE_CHECK(k >= 1 && !history.empty(), ErrorCode::kInvalidArgument,
                  "graphit: mean of the last k epochs needs k >= 1 and a history");
  const size_t from = history.size() > static_cast<size_t>(k) ? history.size() - k : 0;
  double s = 0;
  for (size_t e = from; e < history.size(); ++e) s += history[e].*metric;
  return s / static_cast<double>(history.size() - from);
}

}  // namespace

double GraphitTrainReport::mean_test_metric_last(int k) const {
  return mean_last(history, k, &GraphitEpoch::test_metric);
}
double GraphitTrainReport::mean_val_metric_last(int k) const {
  return mean_last(history, k, &GraphitEpoch::val_metric);
}

namespace {

void check_targets(const GraphitConfig& c, const GraphitDataset& d, const char* what) {
  INDUCTIVE_CHECK(d.size() >= 1, ErrorCode::kInvalidArgument, "graphit train: the ", what, " set is empty");
  if (c.classification())
    INDUCTIVE_CHECK(static_cast<int>(d.classes.size()) == d.size(), ErrorCode::kShapeMismatch, "graphit train: ", what,
                    " set has ", d.classes.size(), " class labels for ", d.size(), " graphs");
  else
    INDUCTIVE_CHECK(d.values.size() == static_cast<size_t>(d.size()) * c.outputs, ErrorCode::kShapeMismatch,
                    "graphit train: ", what, " set has ", d.values.size(), " target values for ", d.size(),
                    " graphs x ", c.outputs, " outputs");
}

// Checkpoint (inductive/checkpoint.h): the model's tensors (parameters and BatchNorm running statistics) under
// "model/", Adam's moments, and in the state the epoch, the seed (the epoch's generator is derived from seed and
// epoch), the batch size and the history.
void save_checkpoint(const std::string& path, const GraphitModel& model, const Adam& adam, int epoch,
                     const GraphitTrainOptions& o, const std::vector<GraphitEpoch>& history) {
  const ModelContents cur = model.to_contents();
  nlohmann::json hist = nlohmann::json::array();
  for (const auto& e : history)
    hist.push_back({{"epoch", e.epoch},
                    {"lr", e.lr},
                    {"train_loss", json_number(e.train_loss)},
                    {"train_metric", json_number(e.train_metric)},
                    {"val_loss", json_number(e.val_loss)},
                    {"val_metric", json_number(e.val_metric)},
                    {"test_loss", json_number(e.test_loss)},
                    {"test_metric", json_number(e.test_metric)},
                    {"seconds", e.seconds},
                    {"eta_seconds", e.eta_seconds}});
  save_checkpoint_file(
      path, "graphit", {{"model/", &cur}}, adam,
      {{"epoch", epoch}, {"seed", std::to_string(o.seed)}, {"batch_size", o.batch_size}, {"history", hist}});
}

bool load_checkpoint(const std::string& path, GraphitModel& model, Adam& adam, int& epoch, const GraphitTrainOptions& o,
                     std::vector<GraphitEpoch>& history) {
  const std::optional<CheckpointFile> ck = CheckpointFile::read(path, "graphit", [&](const nlohmann::json& c) {
    return GraphitConfig::from_json(c).to_json() == model.config.to_json();
  });
  if (!ck) return false;
  ck->with_context([&] {
    const auto& s = ck->state();
    INDUCTIVE_CHECK(
        s.at("seed").get<std::string>() == std::to_string(o.seed) && s.at("batch_size").get<int>() == o.batch_size,
        ErrorCode::kInvalidArgument, "checkpoint was written with seed ", s.at("seed").get<std::string>(),
        " and batch size ", s.at("batch_size").get<int>(), "; resume with the same options to continue the same run");
    model = GraphitModel::from_view(ck->model("model/"));
    ck->restore(adam);
    epoch = s.at("epoch").get<int>();
    history.clear();
    for (const auto& e : s.at("history")) {
      GraphitEpoch r;
      r.epoch = e.at("epoch").get<int>();
      r.lr = e.at("lr").get<double>();
      r.train_loss = number_or_nan(e.at("train_loss"));
      r.train_metric = number_or_nan(e.at("train_metric"));
      r.val_loss = number_or_nan(e.at("val_loss"));
      r.val_metric = number_or_nan(e.at("val_metric"));
      r.test_loss = number_or_nan(e.at("test_loss"));
      r.test_metric = number_or_nan(e.at("test_metric"));
      r.seconds = e.at("seconds").get<double>();
      r.eta_seconds = e.at("eta_seconds").get<double>();
      history.push_back(r);
    }
  });
  return true;
}

}  // namespace

GraphitBatch pack_graphit_batch(const GraphitConfig& c, const GraphitDataset& d, const std::vector<int>& index) {
  return c.classification() ? GraphitBatch::pack(c, d.graphs, index, &d.classes)
                            : GraphitBatch::pack(c, d.graphs, index, nullptr, &d.values);
}

GraphitSharePosition graphit_share_position(const GraphitDataset& data, const std::vector<int>& order, int begin,
                                            int lo) {
  GraphitSharePosition at;
  for (int k = begin; k < lo; ++k) {
    const int64_t n = data.graphs[order[k]].num_nodes;
    at.nodes += n;
    at.squares += n * n;
  }
  return at;
}

GraphitEvaluation evaluate_graphit_batches(const GraphitConfig& c, const GraphitDataset& data, int batch_size,
                                           const std::function<double(const GraphitBatch& b, MatF& out)>& batch_loss) {
  check_targets(c, data, "evaluation");
  INDUCTIVE_CHECK(batch_size >= 1, ErrorCode::kInvalidArgument, "graphit evaluate: batch size must be >= 1");
  GraphitEvaluation r;
  r.outputs.resize(data.size(), c.outputs);
  MatF out;
  for (int begin = 0; begin < data.size(); begin += batch_size) {
    const int end = std::min(data.size(), begin + batch_size);
    std::vector<int> idx(end - begin);
    std::iota(idx.begin(), idx.end(), begin);
    r.loss += batch_loss(pack_graphit_batch(c, data, idx), out) * (end - begin);
    r.outputs.middleRows(begin, end - begin) = out;
  }
  if (data.size() > 0) r.loss /= data.size();
  r.metric = c.classification() ? graphit_accuracy(r.outputs, data.classes) : graphit_mae(r.outputs, data.values);
  return r;
}

GraphitEvaluation evaluate_graphit(const GraphitModel& model, const GraphitDataset& data, int batch_size,
                                   GraphitCache* cache) {
  GraphitCache local;
  GraphitCache& scratch = cache ? *cache : local;
  GraphitRunOptions outputs_only;  // no gradient: no layer's activations kept (the same outputs, bit for bit)
  outputs_only.keep_layers = false;
  return evaluate_graphit_batches(model.config, data, batch_size, [&](const GraphitBatch& b, MatF& out) {
    return model.loss(b, outputs_only, nullptr, &out, &scratch);
  });
}

double graphit_batch_metric(const GraphitConfig& c, const MatF& outputs, const GraphitBatch& b) {
  return c.classification() ? graphit_accuracy(outputs, b.classes) : graphit_mae(outputs, b.values);
}

GraphitTrainReport train_graphit(GraphitModel& model, const GraphitDataset& train, const GraphitDataset* val,
                                 const GraphitDataset* test, const GraphitTrainOptions& options,
                                 const EventFn<GraphitEpoch>& on_epoch) {
  options.validate();
  const GraphitConfig& c = model.config;
  c.validate();
  check_targets(c, train, "training");
  if (val) check_targets(c, *val, "validation");
  if (test) check_targets(c, *test, "test");
  const bool batch_norm = c.norm == GraphitNorm::kBatch;
  INDUCTIVE_CHECK(!batch_norm || static_cast<int>(model.norm_stats.size()) == c.layers, ErrorCode::kInvalidArgument,
                  "graphit train: BatchNorm model lacks running statistics (create it with GraphitModel::create)");

  Communicator* comm = options.communicator && options.communicator->size() > 1 ? options.communicator : nullptr;

  INDUCTIVE_CHECK(!options.keep_best || (val && val->size() > 0), ErrorCode::kInvalidArgument,
                  "--keep-best needs a validation set");

  GraphitTrainReport report;
  Adam adam(options.adam);
  int done = 0;
  if (load_checkpoint(options.checkpoint_path, model, adam, done, options, report.history)) {
    report.resumed = true;
    report.resumed_from_epoch = done;
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Where the arithmetic runs (the CPU unless options.backend says otherwise); it owns the parameters, gradients and
  // Adam's moments until the run ends (inductive/graphit_stepper.h).
  const std::unique_ptr<GraphitStepper> stepper = options.backend
                                                      ? options.backend->graphit_stepper(model, adam, train, options)
                                                      : make_cpu_graphit_stepper(model, adam, train, options);
  stepper->push(model, adam);
  // keep_best: a copy of the model at the best validation epoch so far among the epochs of this call (a resumed
  // run cannot copy the epochs before its checkpoint).
  GraphitModel best;
  int best_epoch = 0;
  double best_val = nan;
  // The method's side of the epoch loop (inductive/epoch_loop.h): steps at the scheduled learning rate, then the
  // evaluation of the validation and test sets and keep_best's copy. The stepper's parameters are pulled back into
  // `model` only when a copy or a checkpoint needs them (`pulled` says whether this epoch's are there).
  double loss_sum = 0, metric_sum = 0, lr = 0;
  int current = 0;
  bool pulled = false;
  EpochHooks hooks;
  hooks.begin_epoch = [&](int epoch) {
    current = epoch;
    loss_sum = metric_sum = lr = 0;
    pulled = false;
  };
  hooks.step = [&](const std::vector<int>& order, int begin, int end, std::mt19937_64& rng) {
    lr = graphit_learning_rate(options, current, stepper->steps() + 1);
    const GraphitStepSums sums = stepper->step(order, begin, end, lr, rng);
    loss_sum += sums.loss * sums.weight;  // the expression the loop had before the seam: the same rounding
    metric_sum += sums.metric * sums.weight;
  };
  hooks.end_epoch = [&](int epoch, EpochClock& clock) {
    GraphitEpoch e;
    e.epoch = epoch;
    e.lr = lr;
    e.train_loss = loss_sum / train.size();
    e.train_metric = metric_sum / train.size();
    e.val_loss = e.val_metric = e.test_loss = e.test_metric = nan;
    if (val) {
      const GraphitEvaluation r = stepper->evaluate(*val);
      e.val_loss = r.loss;
      e.val_metric = r.metric;
    }
    if (test) {
      const GraphitEvaluation r = stepper->evaluate(*test);
      e.test_loss = r.loss;
      e.test_metric = r.metric;
    }
    e.seconds = clock.seconds();
    e.eta_seconds = clock.eta();
    report.history.push_back(e);
    const bool better = options.keep_best &&
                        (best_epoch == 0 || (c.classification() ? e.val_metric > best_val : e.val_metric < best_val));
    if (better) {
      stepper->pull(model, adam);
      pulled = true;
      best = model;
      best_epoch = epoch;
      best_val = e.val_metric;
    }
  };
  hooks.parameter_hash = [&] { return stepper->parameter_hash(); };
  hooks.save_checkpoint = [&](int epoch, bool write) {
    if (!pulled) stepper->pull(model, adam);
    pulled = true;
    if (write) save_checkpoint(options.checkpoint_path, model, adam, epoch, options, report.history);
  };
  hooks.report_epoch = [&](int) {
    if (on_epoch) on_epoch(report.history.back());
  };

  EpochLoop loop;
  loop.first = done + 1;
  loop.last = options.epochs;
  loop.n = train.size();
  loop.batch_size = options.batch_size;
  loop.shuffle = options.shuffle;
  loop.seed = options.seed;
  loop.seed_stride = 0x9E3779B97F4A7C15ull;
  loop.checkpoint = !options.checkpoint_path.empty();
  loop.checkpoint_every = options.checkpoint_every;
  loop.communicator = comm;
  loop.rank_check_every = options.rank_check_every;
  loop.who = "graphit train";
  run_epoch_loop(loop, hooks);
  stepper->pull(model, adam);
  report.saved_epoch = static_cast<int>(report.history.size());
  if (best_epoch > 0) {  // a resumed run that trained no new epoch has no copy: the model is the checkpoint's
    model = std::move(best);
    report.saved_epoch = best_epoch;
  }
  // Best validation epoch (accuracy: highest; MAE: lowest; first on ties).
  report.best_val_metric = nan;
  report.test_at_best = nan;
  if (val)
    for (const GraphitEpoch& e : report.history) {
      const bool better = report.best_epoch == 0 || (c.classification() ? e.val_metric > report.best_val_metric
                                                                        : e.val_metric < report.best_val_metric);
      if (better) {
        report.best_epoch = e.epoch;
        report.best_val_metric = e.val_metric;
        report.test_at_best = e.test_metric;
      }
    }
  return report;
}

}  // namespace inductive
