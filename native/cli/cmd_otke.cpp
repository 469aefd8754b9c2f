// native/cli/cmd_otke.cpp - the `otke` command group, and `otke embed` / `otke eval` (fit: cmd_otke_fit.cpp).
//
//   inductive otke embed --model M (--fasta X.fa ... | --text X.tsv | --sets X.npy --lengths n.npy) --out E.npy
//                        [--plans P.npy]
//     E: [B, D] float32 embeddings Phi(x); P: [B, q, n_max, p] float32 transport plans (otk pooling; rows past a
//     set's length are 0; plans are after positional weighting, as pooled).
//   inductive otke eval --model M (--class NAME=X.fa ... | --tsv F | --text F | --sets X.npy --lengths n.npy
//                       --labels y.npy)
//     prints JSON: accuracy, auROC (one-vs-rest on softmax probabilities, macro-averaged; for two classes the binary
//     auROC), auPRC (average precision, one-vs-rest and macro-averaged likewise; each class is the positive one in
//     turn, so for two classes the entries differ), top-k accuracies for k in {1, 5, 10} below the class count, and
//     the confusion matrix. A multilabel model (label sets, `otke fit --multilabel`) instead prints per label the
//     auROC and auPRC of its sigmoid probability, their means over the labels (auroc, auprc), the share of (sample,
//     label) entries right at 0.5 (label_accuracy), the share of samples with every label right (exact_match) and
//     the mean binary cross-entropy (bce). --probabilities P.npy also writes every sample's probabilities.
// Both embed in chunks of --batch-size samples, so memory grows with the output, not with intermediate buffers.
#include <algorithm>
#include <cstdio>
#include <memory>

#include <nlohmann/json.hpp>

#include "cmd_otke.h"
#include "inductive/logistic.h"
#include "inductive/metrics.h"
#include "inductive/communicator.h"
#include "inductive/npy.h"
#include "inductive/otke.h"
#include "otke_inputs.h"

namespace inductive::cli {
namespace {

struct EmbedArgs {
  InputArgs data;
  std::string model, out, plans, backend = "cpu", distributed = "auto";
  int batch_size = kDefaultEmbedBatch;
  bool quiet = false;
};

void run_embed(const EmbedArgs& a) {
  check_output_path(a.out, "--out");
  if (!a.plans.empty()) check_output_path(a.plans, "--plans");
  // Under mpirun each rank embeds a contiguous share of the inputs; rank 0 gathers them and writes the file.
  const std::unique_ptr<Communicator> comm = make_communicator(a.distributed);
  const std::unique_ptr<Backend> backend = make_backend(a.backend);  // a missing one fails before the data is read
  INDUCTIVE_CHECK(comm->size() == 1 || a.plans.empty(), ErrorCode::kInvalidArgument,
                  "--plans is not available with several ranks yet: run one process");
  Progress progress("otke embed", a.quiet || !comm->writer());
  OtkeModel model = OtkeModel::load(a.model);
  const OtkeInputs in = load_inputs(a.data, InputKind::kUnlabelled);
  check_inputs_for(in, model.config, a.model);
  INDUCTIVE_CHECK(a.plans.empty() || model.config.pooling == OtkePooling::kOtk, ErrorCode::kInvalidArgument,
                  "--plans needs a model with otk pooling: ", a.model, " pools with '", model.config.pooling, "'");
  INDUCTIVE_CHECK(a.plans.empty() || backend->is_cpu(), ErrorCode::kInvalidArgument,
                  "--plans is not available with --backend ", a.backend, " yet: use --backend cpu");
  Adam adam;
  const std::unique_ptr<OtkeStepper> device = embedding_stepper(*backend, model, adam);
  const double load_s = progress.lap();

  std::vector<float> plans;
  int n_max = 0;
  const Shard shard = shard_of(in.size(), comm->rank(), comm->size());
  MatF e = embed_in_chunks(model, in, a.batch_size, progress.fn(), "embed", a.plans.empty() ? nullptr : &plans, &n_max,
                           device.get(), static_cast<int>(shard.begin), static_cast<int>(shard.end));
  if (comm->size() > 1) {
    const std::vector<float> all = comm->gather_to_writer(std::vector<float>(e.data(), e.data() + e.size()));
    if (!comm->writer()) return;
    e = CMapF(all.data(), in.size(), model.config.output_dim());
  }
  const double embed_s = progress.lap();
  // Plans first, then embeddings; should the second write fail, the first is removed: a failed run writes nothing.
  const int q = model.config.otk.q, p = model.config.otk.p;
  if (!a.plans.empty()) save_npy(a.plans, plans.data(), {in.size(), q, n_max, p});
  try {
    save_npy(a.out, e.data(), {e.rows(), e.cols()});
  } catch (const Error&) {
    if (!a.plans.empty()) std::remove(a.plans.c_str());
    throw;
  }

  nlohmann::json summary = {
      {"n", in.size()},       {"dim", e.cols()},
      {"backend", a.backend}, {"ranks", comm->size()},
      {"out", a.out},         {"timings_s", {{"load", load_s}, {"embed", embed_s}, {"total", progress.elapsed()}}}};
  if (!a.plans.empty()) summary["plans"] = {{"path", a.plans}, {"shape", {in.size(), q, n_max, p}}};
  std::printf("%s\n", summary.dump().c_str());
}

struct EvalArgs {
  InputArgs data;
  std::string model, backend = "cpu", probabilities;
  int batch_size = kDefaultEmbedBatch;
  bool quiet = false;
};

// A multilabel model (the DeepSEA-style one): core's score_multilabel (inductive/multilabel.h), by label name.
void print_multilabel_eval(const EvalArgs& a, const OtkeConfig& config, int n, const MatF& logits, const MatF& probs,
                           const std::vector<int32_t>& bits, const nlohmann::json& timings) {
  const MultilabelScores s = score_multilabel(logits, probs, bits);
  const auto number = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
  nlohmann::json auroc = nlohmann::json::object(), auprc = nlohmann::json::object(), counts = nlohmann::json::object();
  for (int c = 0; c < config.classes; ++c) {
    auroc[config.labels[c]] = number(s.auroc[c]);
    auprc[config.labels[c]] = number(s.auprc[c]);
    counts[config.labels[c]] = s.positives[c];
  }
  const nlohmann::json summary = {{"model", a.model},
                                  {"backend", a.backend},
                                  {"n", n},
                                  {"multilabel", true},
                                  {"labels", config.labels},
                                  {"label_counts", counts},
                                  {"label_accuracy", s.label_accuracy},
                                  {"exact_match", s.exact_match},
                                  {"bce", s.bce},
                                  {"auroc", number(s.mean_auroc)},
                                  {"auroc_per_label", auroc},
                                  {"auprc", number(s.mean_auprc)},
                                  {"auprc_per_label", auprc},
                                  {"timings_s", timings}};
  std::printf("%s\n", summary.dump().c_str());
}

void run_eval(const EvalArgs& a) {
  if (!a.probabilities.empty()) check_output_path(a.probabilities, "--probabilities");
  Progress progress("otke eval", a.quiet);
  const std::unique_ptr<Backend> backend = make_backend(a.backend);  // a missing one fails before the data is read
  OtkeModel model = OtkeModel::load(a.model);
  const OtkeInputs in = load_inputs(a.data, InputKind::kLabelled);
  const std::vector<int32_t> y = labels_for_model(in, model.config);  // class names first: cheaper to check
  check_inputs_for(in, model.config, a.model);
  Adam adam;
  const std::unique_ptr<OtkeStepper> device = embedding_stepper(*backend, model, adam);
  const double load_s = progress.lap();

  const MatF logits =
      model.predict(embed_in_chunks(model, in, a.batch_size, progress.fn(), "embed", nullptr, nullptr, device.get()));
  const MatF probs = output_probabilities(model.config, logits);
  const double embed_s = progress.lap();
  if (!a.probabilities.empty()) save_npy(a.probabilities, probs.data(), {probs.rows(), probs.cols()});
  if (model.config.multilabel) {
    print_multilabel_eval(a, model.config, in.size(), logits, probs, y,
                          {{"load", load_s}, {"embed_predict", embed_s}, {"total", progress.elapsed()}});
    return;
  }

  const int C = model.config.classes;
  std::vector<std::string> names = model.config.labels;
  for (int c = static_cast<int>(names.size()); c < C; ++c) names.push_back(std::to_string(c));
  // Per class, by name: the metric where it is defined, null where it is not.
  const auto by_class = [&](const std::vector<std::optional<double>>& values) {
    nlohmann::json out = nlohmann::json::object();
    for (int c = 0; c < C; ++c) out[names[c]] = values[c] ? nlohmann::json(*values[c]) : nlohmann::json();
    return out;
  };
  const auto optional_number = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
  nlohmann::json top_k = nlohmann::json::object();
  for (int k : {1, 5, 10})
    if (k == 1 || C > k) top_k[std::to_string(k)] = top_k_accuracy(logits, y, k);
  std::vector<int64_t> counts(C, 0);
  for (int32_t label : y) ++counts[label];

  const nlohmann::json summary = {
      {"model", a.model},
      {"backend", a.backend},
      {"n", in.size()},
      {"classes", names},
      {"class_counts", counts},
      {"accuracy", accuracy(logits, y)},
      {"auroc", optional_number(macro_roc_auc(probs, y))},
      {"auroc_per_class", by_class(roc_auc_one_vs_rest(probs, y))},
      {"auprc", optional_number(macro_average_precision(probs, y))},
      {"auprc_per_class", by_class(average_precision_one_vs_rest(probs, y))},
      {"top_k_accuracy", top_k},
      {"confusion_matrix",
       {{"rows", "true class"}, {"columns", "predicted class"}, {"matrix", confusion_matrix(logits, y)}}},
      {"timings_s", {{"load", load_s}, {"embed_predict", embed_s}, {"total", progress.elapsed()}}}};
  std::printf("%s\n", summary.dump().c_str());
}

}  // namespace

void add_otke_command(CLI::App& app) {
  CLI::App* otke =
      app.add_subcommand("otke", "Optimal transport kernel embeddings (thesis ch. 2): fit, train, embed, eval");
  otke->require_subcommand(1);
  add_otke_fit_command(*otke);
  add_otke_train_command(*otke);

  auto e = std::make_shared<EmbedArgs>();
  CLI::App* embed = otke->add_subcommand("embed", "Embed sequences or vector sets with a model: E [B, D] float32");
  embed->add_option("--model", e->model, "OTKE model (.safetensors)")->required();
  add_input_options(embed, e->data, InputKind::kUnlabelled);
  embed->add_option("--out", e->out, "Output embeddings [B, D], .npy float32")->required();
  embed->add_option("--plans", e->plans, "Also write transport plans [B, q, n_max, p], .npy float32 (otk pooling)");
  embed->add_option("--batch-size", e->batch_size, "Samples embedded at a time (bounds memory)")->capture_default_str();
  embed->add_option("--backend", e->backend, "Where to embed: cpu, cuda or cuda:<device>")->capture_default_str();
  embed
      ->add_option("--distributed", e->distributed,
                   "Shard the inputs over MPI ranks: auto (when started by mpirun), none, or mpi")
      ->capture_default_str();
  embed->add_flag("--quiet", e->quiet, "No progress on stderr");
  embed->callback([e] { run_embed(*e); });

  auto v = std::make_shared<EvalArgs>();
  CLI::App* eval = otke->add_subcommand("eval", "Evaluate a model's head on labelled data; prints JSON metrics");
  eval->add_option("--model", v->model, "OTKE model with a head (.safetensors)")->required();
  add_input_options(eval, v->data, InputKind::kLabelled);
  eval->add_option("--batch-size", v->batch_size, "Samples embedded at a time (bounds memory)")->capture_default_str();
  eval->add_option("--backend", v->backend, "Where to embed: cpu, cuda or cuda:<device>")->capture_default_str();
  eval->add_option("--probabilities", v->probabilities,
                   "Also write each sample's probabilities [n, C], .npy float32 (softmax rows; multilabel: a "
                   "sigmoid per label), in input order");
  eval->add_flag("--quiet", v->quiet, "No progress on stderr");
  eval->callback([v] { run_eval(*v); });
}

}  // namespace inductive::cli
