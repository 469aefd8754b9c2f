// native/cli/cmd_otke_train.cpp - `inductive otke train`: supervised OTKE (thesis ch. 2). Starts from a model made by
// `otke fit` (anchors or conv filters, references and head), then trains them end to end through Sinkhorn with
// Adam (lr halved when the validation loss stalls, early stopping, best epoch kept). --checkpoint makes the run
// resumable: the same command line after an interruption continues where it stopped, with identical results.
#include <cstdio>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "cmd_otke.h"
#include "inductive/communicator.h"
#include "inductive/otke_train.h"
#include "inductive/otke_train_report.h"
#include "inductive/splits.h"
#include "otke_inputs.h"

namespace inductive::cli {
namespace {

// The training flags' defaults are core's (a default-constructed OtkeTrainOptions), so that `--help` and the library
// cannot drift apart.
const OtkeTrainOptions train_defaults{};

struct TrainArgs {
  InputArgs data;
  std::string init, out, checkpoint;
  int epochs = train_defaults.epochs, batch_size = train_defaults.batch_size, iters = OtkOptions{}.iters,
      lr_patience = train_defaults.lr_patience, early_stop = train_defaults.early_stop_patience,
      head_refit_every = train_defaults.head_refit_every, rank_check_every = 0;
  double lr = train_defaults.adam.lr, weight_decay = train_defaults.adam.weight_decay,
         val_fraction = kDefaultValidationFraction, head_lambda = train_defaults.head_lambda, eps = 0;
  std::string sinkhorn_gradient = sinkhorn_gradient_name(train_defaults.sinkhorn_gradient), backend = "cpu",
              distributed = "auto";
  uint64_t seed = train_defaults.seed;
  bool freeze_tokens = false, freeze_anchors = false, freeze_references = false, quiet = false;
};

void run(const TrainArgs& a) {
  check_output_path(a.out, "--out");
  // Under mpirun every rank runs this command; rank 0 alone reports and writes (inductive/communicator.h).
  const std::unique_ptr<Communicator> comm = make_communicator(a.distributed);
  const bool writer = comm->writer();
  const std::unique_ptr<Backend> backend = make_backend(a.backend);  // a missing one fails before the data is read
  Progress progress("otke train", a.quiet || !writer);
  OtkeModel model = OtkeModel::load(a.init);
  INDUCTIVE_CHECK(model.config.classes >= 2, ErrorCode::kInvalidArgument, a.init,
                  ": the initial model has no classifier head; make it with `inductive otke fit`");
  // Training usually runs fewer Sinkhorn iterations than unsupervised fitting (thesis: 10 vs 100).
  if (model.config.pooling == OtkePooling::kOtk) {
    model.config.otk.iters = a.iters;
    if (a.eps > 0) model.config.otk.eps = a.eps;
    model.config.validate();
    model.pooling = OtkPooling(model.pooling.references(), model.config.otk);
  }
  const OtkeInputs in = load_inputs(a.data, InputKind::kLabelled);
  check_inputs_for(in, model.config, "otke train");
  const std::vector<int32_t> labels = labels_for_model(in, model.config);
  std::vector<int> train, val;
  otke_train_split(in, model.config, labels, a.val_fraction, a.seed, train, val);
  std::vector<int32_t> y_train, y_val;
  for (int i : train) y_train.push_back(labels[i]);
  for (int i : val) y_val.push_back(labels[i]);
  const SetBatch f_train = in.features_of(model, train), f_val = in.features_of(model, val);

  OtkeTrainOptions o;
  o.epochs = a.epochs;
  o.batch_size = a.batch_size;
  o.backend = backend.get();
  o.adam.lr = a.lr;
  o.adam.weight_decay = a.weight_decay;
  o.lr_patience = a.lr_patience;
  o.early_stop_patience = a.early_stop;
  o.train_tokens = !a.freeze_tokens;
  o.train_anchors = !a.freeze_anchors;
  o.train_references = !a.freeze_references;
  o.head_refit_every = a.head_refit_every;
  o.head_lambda = a.head_lambda;
  o.sinkhorn_gradient = parse_sinkhorn_gradient(a.sinkhorn_gradient);
  o.seed = a.seed;
  o.checkpoint_path = a.checkpoint;
  o.communicator = comm.get();
  o.rank_check_every = a.rank_check_every;
  const auto say = [&](const std::string& line) {
    if (!a.quiet) std::fprintf(stderr, "otke train: %.1fs %s\n", progress.elapsed(), line.c_str());
  };
  o.on_epoch = [&](const OtkeEpoch& e) {
    char line[200];
    std::snprintf(line, sizeof line, "epoch %d/%d  train loss %.4f  val loss %.4f  val acc %.4f  lr %.2g  %.1fs",
                  e.epoch, o.epochs, e.train_loss, e.val_loss, e.val_accuracy, e.lr, e.seconds);
    say(line);
  };
  o.on_resume = [&](const OtkeResume& r) {
    say("resumed from " + o.checkpoint_path + " after epoch " + std::to_string(r.after_epoch));
  };
  if (comm->size() > 1 && writer) say("data parallel over " + comm->name());
  const OtkeTrainReport report = train_otke_supervised(model, f_train, y_train, f_val, y_val, o);
  if (!writer) return;
  model.save(a.out);

  nlohmann::json summary = otke_train_report(report);
  summary["model"] = a.out;
  summary["backend"] = backend->name();
  summary["ranks"] = comm->size();
  summary["distributed"]["communicator"] = comm->name();
  summary["n_train"] = train.size();
  summary["n_val"] = val.size();
  summary["seconds"] = progress.elapsed();
  std::printf("%s\n", summary.dump().c_str());
}

}  // namespace

void add_otke_train_command(CLI::App& otke) {
  auto a = std::make_shared<TrainArgs>();
  CLI::App* cmd = otke.add_subcommand(
      "train", "Supervised OTKE: train anchors/filters, references and head end to end (start from `otke fit`)");
  add_input_options(cmd, a->data, InputKind::kLabelled);
  cmd->add_option("--init", a->init, "Initial model from `inductive otke fit` (.safetensors)")->required();
  cmd->add_option("--epochs", a->epochs, "Maximum epochs (thesis: 100)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--batch-size", a->batch_size, "Sets per step")->capture_default_str()->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--lr", a->lr, "Adam learning rate (thesis: 0.01)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--weight-decay", a->weight_decay, "Decoupled weight decay of the head and conv filters")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--iters", a->iters, "Sinkhorn iterations during and after training (thesis: 10)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--eps", a->eps, "Change the entropic regularisation (default: the initial model's)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--lr-patience", a->lr_patience, "Halve lr after this many epochs without a better val loss")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--early-stop", a->early_stop, "Stop after this many epochs without a better val loss")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--head-refit-every", a->head_refit_every,
                  "Every N epochs refit the head by L-BFGS (the thesis' alternating scheme); 0 = off")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--head-lambda", a->head_lambda, "L2 penalty of those refits")->capture_default_str();
  cmd->add_option("--sinkhorn-gradient", a->sinkhorn_gradient,
                  "unrolled: exact for the iterations run (the reference's; n + p floats per iteration) | "
                  "implicit: differentiates the converged map, memory independent of --iters")
      ->capture_default_str()
      ->check(CLI::IsMember({"unrolled", "implicit"}));
  cmd->add_flag("--freeze-tokens", a->freeze_tokens, "Keep the token table fixed (tokens models)");
  cmd->add_flag("--freeze-anchors", a->freeze_anchors, "Keep the anchors / conv filters fixed");
  cmd->add_flag("--freeze-references", a->freeze_references, "Keep the references fixed");
  cmd->add_option("--val-fraction", a->val_fraction, "Validation share per class")->capture_default_str();
  cmd->add_option("--backend", a->backend,
                  "Where steps run: cpu, cuda or cuda:<device> (no silent fallback: cuda without a GPU is an error)")
      ->capture_default_str();
  cmd->add_option("--distributed", a->distributed,
                  "Data parallelism: auto (MPI when started by mpirun with several ranks), none, or mpi")
      ->capture_default_str();
  cmd->add_option("--rank-check-every", a->rank_check_every,
                  "Several ranks: compare their parameters' hashes every K steps too (0: after every epoch only)")
      ->check(CLI::Range(0, 1 << 30))
      ->capture_default_str();
  cmd->add_option("--seed", a->seed, "Seed of the split and the batch order")->capture_default_str();
  cmd->add_option("--checkpoint", a->checkpoint,
                  "Checkpoint file, written after every epoch; an existing one is resumed from");
  cmd->add_flag("--quiet", a->quiet, "No progress on stderr");
  cmd->add_option("--out", a->out, "Output model (.safetensors): the epoch with the best validation loss")->required();
  cmd->callback([a] { run(*a); });
}

}  // namespace inductive::cli
