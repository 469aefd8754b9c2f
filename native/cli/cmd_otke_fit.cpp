// native/cli/cmd_otke_fit.cpp - `inductive otke fit`: the thesis' unsupervised OTKE (ch. 2) plus a logistic head.
//
// 1. Anchors (spherical k-means on up to --max-samples local features) and references (k-means on their Nystrom
//    embeddings) are learnt without labels from every labelled sequence and every --unlabeled one.
// 2. The labelled samples are split, stratified by class, into train and validation (--val-fraction).
// 3. A multinomial logistic head is fitted by core's fit_head (inductive/head_fit.h) in its holdout mode: on the
//    train embeddings (centred and rescaled) for each lambda in 2^-5 .. 2^-20, the one with the best validation
//    accuracy kept as it is (the thesis' protocol: select on validation, use that model). --refit instead refits it
//    on train + validation at the selected lambda.
// With --text (sentences), the model's input is "tokens": the vocabulary is built from the sentences and the token
// table drawn at random (seeded); `otke train` then learns it end to end. --lambda fixes the head's penalty.
// --multilabel (label sets, a sigmoid per label) and --hidden/--dropout (an MLP head) make the thesis' DeepSEA-style
// model: step 3 is replaced by a seeded initialisation of that head, which `otke train` learns end to end.
// Under mpirun the k-means distances, the embedding and the head's fit are split over the ranks: each rank embeds
// its share of the labelled samples and keeps it (no rank holds every embedding), the head's objective is summed
// across ranks, and rank 0 writes.
// Progress goes to stderr; a JSON summary (accuracies, lambda, timings) to stdout; the model is written atomically.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>

#include <nlohmann/json.hpp>

#include "cmd_otke.h"
#include "inductive/communicator.h"
#include "inductive/logistic.h"
#include "inductive/head_fit.h"
#include "inductive/splits.h"
#include "inductive/otke.h"
#include "otke_inputs.h"

namespace inductive::cli {
namespace {

// The flags' defaults are core's (OtkeConfig, OtkeFitOptions, BarycenterOptions, LogisticOptions), read from
// default-constructed options, so that `--help` and the library cannot drift apart. One exception, the thesis':
// the unsupervised fit runs 100 Sinkhorn iterations (supervised training: the config's 10).
const OtkeConfig config_defaults{};
const OtkeFitOptions fit_defaults{};

struct FitArgs {
  InputArgs data;
  std::vector<std::string> unlabeled;
  std::string unlabeled_sets, unlabeled_lengths;
  std::string alphabet = config_defaults.alphabet, embedding = name_of(config_defaults.embedding),
              pooling = name_of(config_defaults.pooling), scale = otk_scale_name(config_defaults.otk.scale),
              plan = name_of(config_defaults.otk.plan), out;
  std::string reference_update = name_of(fit_defaults.reference_update);
  bool sinusoidal = config_defaults.otk.sinusoidal;
  int barycenter_iters = fit_defaults.barycenter.iters,
      barycenter_sinkhorn_iters = fit_defaults.barycenter.sinkhorn_iters;
  double barycenter_eps = fit_defaults.barycenter.eps, barycenter_sinkhorn_tol = fit_defaults.barycenter.sinkhorn_tol;
  int kmer = config_defaults.kmer, anchors = config_defaults.anchors, filters = config_defaults.filters,
      p = config_defaults.otk.p, q = config_defaults.otk.q, iters = 100, kmeans_iters = fit_defaults.kmeans_iters,
      batch_size = kDefaultEmbedBatch;
  int dim = 64, min_count = VocabularyOptions{}.min_count, max_vocab = VocabularyOptions{}.max_size;  // --text
  bool keep_case = false;
  float sigma = config_defaults.nystrom.sigma, sigma_pos = config_defaults.otk.sigma_pos;
  double eps = config_defaults.otk.eps, val_fraction = kDefaultValidationFraction, head_tol = LogisticOptions{}.tol,
         lambda = 0;
  int64_t max_samples = fit_defaults.max_samples;
  uint64_t seed = fit_defaults.seed;
  bool refit = false, quiet = false, keep_norm = false;
  // The DeepSEA-style head, trained end to end by `otke train` (fit only initialises it).
  bool multilabel = false;
  int hidden = 0;
  float dropout = 0;
  std::string distributed = "auto", backend = "cpu";
};

OtkeConfig config_from(const FitArgs& a, const OtkeInputs& in) {
  OtkeConfig c;
  c.input_type = in.vectors ? OtkeInput::kVectors : in.text ? OtkeInput::kTokens : OtkeInput::kSequence;
  if (in.vectors) {
    c.input_dim = in.sets.dim;
  } else if (in.text) {
    // The vocabulary comes from every labelled sentence (labels unused): the unsupervised stage sees them all too.
    VocabularyOptions vo;
    vo.min_count = a.min_count;
    vo.max_size = a.max_vocab;
    vo.lowercase = !a.keep_case;
    c.tokens = Vocabulary::build(in.sequences, vo).tokens();
    c.lowercase = vo.lowercase;
    c.input_dim = a.dim;
  } else {
    c.alphabet = Alphabet::from_name(a.alphabet).name();  // canonical: "ACGT" is stored as "dna"
    c.kmer = a.kmer;
  }
  c.embedding = parse_enum(kOtkeEmbeddings, a.embedding, "--embedding");
  c.anchors = a.anchors;
  c.filters = a.filters;
  c.nystrom.sigma = a.sigma;
  c.nystrom.keep_norm = a.keep_norm;
  c.pooling = parse_enum(kOtkePoolings, a.pooling, "--pooling");
  c.otk.p = a.p;
  c.otk.q = a.q;
  c.otk.eps = a.eps;
  c.otk.iters = a.iters;
  c.otk.sigma_pos = a.sigma_pos;
  c.otk.scale = parse_otk_scale(a.scale);
  c.otk.plan = parse_enum(kOtkPlans, a.plan, "--plan");
  c.otk.sinusoidal = a.sinusoidal;
  c.validate();
  return c;
}

// Local features of the labelled and unlabelled samples together (text and vector sets; sequences are sampled
// straight from their letters): the unsupervised stage sees all of them.
SetBatch unsupervised_features(const OtkeModel& model, const OtkeInputs& labelled, const OtkeInputs& unlabelled) {
  if (labelled.text) return model.sequence_features(labelled.sequences, labelled.names);
  return labelled.sets.concat(unlabelled.sets);
}

void run(const FitArgs& a) {
  check_output_path(a.out, "--out");
  // Under mpirun every rank reads the inputs and runs the unsupervised stage with the k-means distances and the
  // sets' assignments split over the ranks (the one-process anchors and references on every rank); each rank then
  // embeds its share of the labelled samples, and rank 0 gathers them, fits the head and alone writes the model.
  const std::unique_ptr<Communicator> comm = make_communicator(a.distributed);
  const std::unique_ptr<Backend> backend = make_backend(a.backend);  // a missing one fails before the data is read
  Progress progress("otke fit", a.quiet || !comm->writer());
  nlohmann::json timings;

  // Everything the user gave is read and checked before any long computation starts.
  const OtkeInputs in = load_inputs(a.data, InputKind::kLabelled);
  InputArgs u;
  u.fasta = a.unlabeled;
  u.sets = a.unlabeled_sets;
  u.lengths = a.unlabeled_lengths;
  const OtkeInputs unl = load_inputs(u, InputKind::kUnlabelled, /*empty_ok=*/true);
  INDUCTIVE_CHECK(unl.size() == 0 || (unl.vectors == in.vectors && !in.text), ErrorCode::kInvalidArgument,
                  "otke fit: unlabelled data must be of the same kind as the labelled data (sequences or sets)");
  OtkeModel model;
  model.config = config_from(a, in);
  check_inputs_for(in, model.config, "otke fit");
  if (unl.size() > 0) check_inputs_for(unl, model.config, "otke fit (unlabelled data)");
  // A multilabel head's labels are the names inside the inputs' label sets ("a,b"); otherwise one class per name.
  std::vector<std::string> label_names;
  const std::vector<int32_t> bits =
      a.multilabel ? label_bits(in.labels, in.class_names, label_names) : std::vector<int32_t>();
  if (!a.multilabel) label_names = in.class_names;
  const int C = static_cast<int>(label_names.size());
  INDUCTIVE_CHECK(C >= 2, ErrorCode::kInvalidArgument, "otke fit: need at least 2 ",
                  a.multilabel ? "labels" : "classes", ", got ", C, C ? " ('" + label_names[0] + "')" : "");
  const bool trained_head = a.multilabel || a.hidden > 0;
  {  // The head's settings are checked now, before the long unsupervised stage.
    OtkeConfig head = model.config;
    head.classes = C;
    head.labels = label_names;
    head.multilabel = a.multilabel;
    head.hidden = a.hidden;
    head.dropout = a.dropout;
    head.validate();
  }
  // The thesis' holdout (core's head_holdout, as the browser's fitHead draws it), drawn now: a class too small to
  // split is refused before the long unsupervised stage.
  const std::vector<int32_t> holdout =
      head_holdout(in.labels, static_cast<int>(in.class_names.size()), a.val_fraction, a.seed, in.class_names);
  timings["load"] = progress.lap();

  {  // Unsupervised stage, on the labelled and unlabelled samples together.
    OtkeFitOptions fo;
    fo.max_samples = a.max_samples;
    fo.kmeans_iters = a.kmeans_iters;
    fo.seed = a.seed;
    fo.reference_update = parse_enum(kOtkeReferenceUpdates, a.reference_update, "--reference-update");
    fo.barycenter.iters = a.barycenter_iters;
    fo.barycenter.eps = a.barycenter_eps;
    fo.barycenter.sinkhorn_iters = a.barycenter_sinkhorn_iters;
    fo.barycenter.sinkhorn_tol = a.barycenter_sinkhorn_tol;
    fo.barycenter.validate();
    fo.progress = [&](const char* stage, double f) { progress(stage, f); };
    fo.communicator = comm.get();
    if (!in.vectors && !in.text) {  // sequences: only the sampled k-mers are ever built
      std::vector<std::string> seqs = in.sequences, names = in.names;
      seqs.insert(seqs.end(), unl.sequences.begin(), unl.sequences.end());
      names.insert(names.end(), unl.names.begin(), unl.names.end());
      fit_otke_unsupervised(model, seqs, names, fo);
    } else {  // the features of every sample are released once the anchors and references exist
      fit_otke_unsupervised(model, unsupervised_features(model, in, unl), fo);
    }
  }
  timings["unsupervised"] = progress.lap();

  if (trained_head) {  // an MLP or multilabel head: seeded here, learnt end to end by `otke train`
    if (!comm->writer()) return;
    model.config.classes = C;
    model.config.labels = label_names;
    model.config.multilabel = a.multilabel;
    model.config.hidden = a.hidden;
    model.config.dropout = a.dropout;
    init_otke_head(model, a.seed);
    model.save(a.out);
    timings["write"] = progress.lap();
    timings["total"] = progress.elapsed();
    nlohmann::json counts;
    for (int c = 0; c < C; ++c)
      counts[label_names[c]] = a.multilabel
                                   ? std::count_if(bits.begin(), bits.end(), [&](int32_t b) { return has_label(b, c); })
                                   : std::count(in.labels.begin(), in.labels.end(), c);
    const nlohmann::json summary = {
        {"model", a.out},
        {"input", model.config.input_type},
        {a.multilabel ? "labels" : "classes", label_names},
        {a.multilabel ? "label_counts" : "class_counts", counts},
        {"n", in.size()},
        {"n_unlabeled", unl.size()},
        {"ranks", comm->size()},
        {"embedding_dim", model.config.output_dim()},
        {"head",
         {{"type", a.hidden > 0 ? "mlp" : "linear"},
          {"hidden", a.hidden},
          {"dropout", model.config.to_json()["head"].value("dropout", 0.0)},
          {"multilabel", a.multilabel},
          {"fitted", false},
          {"note", "initialised (seeded); train it end to end with `inductive otke train`"}}},
        {"timings_s", timings}};
    std::printf("%s\n", summary.dump().c_str());
    return;
  }

  // Each rank embeds its share of the labelled samples and keeps it: the head's fit sums over the shares.
  // On a device backend (--backend cuda) a stepper embeds each chunk; the fitted model is the same file.
  const Shard shard = shard_of(in.size(), comm->rank(), comm->size());
  Adam adam;
  const std::unique_ptr<OtkeStepper> device = embedding_stepper(*backend, model, adam);
  MatF embeddings = embed_in_chunks(model, in, a.batch_size, progress.fn(), "embed labelled samples", nullptr, nullptr,
                                    device.get(), static_cast<int>(shard.begin), static_cast<int>(shard.end));
  if (embeddings.rows() == 0) embeddings.resize(0, model.config.output_dim());  // a rank without samples
  const std::vector<int32_t> labels(in.labels.begin() + shard.begin, in.labels.begin() + shard.end);
  timings["embed"] = progress.lap();

  // The head: core's recipe (inductive/head_fit.h) with the thesis' protocol and grid, lambda chosen on the holdout.
  HeadFitOptions ho;
  ho.lambda = a.lambda;
  ho.holdout = holdout;
  ho.refit = a.refit;
  ho.logistic.tol = a.head_tol;
  ho.class_names = in.class_names;
  ho.progress = [&](const char* stage, double f) { progress(std::string("head: ") + stage, f); };
  ho.communicator = comm.get();
  ho.row_offset = shard.begin;
  const HeadFit fit = fit_head(embeddings, labels, C, ho);
  const LinearHead& head = fit.head;
  timings["head"] = progress.lap();
  if (!comm->writer()) return;

  model = model.with_linear_head(head, in.class_names);
  model.save(a.out);
  timings["write"] = progress.lap();
  timings["total"] = progress.elapsed();

  nlohmann::json counts;
  for (int c = 0; c < C; ++c) counts[in.class_names[c]] = std::count(in.labels.begin(), in.labels.end(), c);
  const nlohmann::json summary = {{"model", a.out},
                                  {"input", model.config.input_type},
                                  {"vocab", model.config.tokens.size()},
                                  {"classes", in.class_names},
                                  {"class_counts", counts},
                                  {"n_train", in.size() - static_cast<int>(holdout.size())},
                                  {"n_val", holdout.size()},
                                  {"n_unlabeled", unl.size()},
                                  {"ranks", comm->size()},
                                  {"backend", backend->name()},
                                  {"embedding_dim", model.config.output_dim()},
                                  {"lambda_log2", std::log2(fit.lambda)},
                                  {"refit", a.refit},
                                  {"head_input", {{"center", "train mean"}, {"scale", fit.standardizer.s}}},
                                  {"head", head_fit_report(fit)},  // what the browser's headFit reports
                                  {"timings_s", timings}};
  std::printf("%s\n", summary.dump().c_str());
}

}  // namespace

void add_otke_fit_command(CLI::App& otke) {
  auto a = std::make_shared<FitArgs>();
  CLI::App* cmd = otke.add_subcommand(
      "fit", "Learn anchors and references without labels, then a logistic head (lambda chosen on validation)");
  add_input_options(cmd, a->data, InputKind::kLabelled);
  CLI::Option* unl = cmd->add_option("--unlabeled", a->unlabeled,
                                     "FASTA of extra sequences for the unsupervised stage only (repeatable)");
  CLI::Option* us = cmd->add_option("--unlabeled-sets", a->unlabeled_sets, "Extra vector sets [B, n_max, d] (.npy)");
  CLI::Option* ul = cmd->add_option("--unlabeled-lengths", a->unlabeled_lengths, "Their lengths [B] (.npy int32)");
  us->needs(ul);
  ul->needs(us);
  unl->excludes(us);
  cmd->add_option("--backend", a->backend,
                  "Where the labelled samples are embedded for the head: cpu, or cuda[:N] (k-means runs on the cpu)")
      ->capture_default_str();
  cmd->add_option("--distributed", a->distributed,
                  "Split the k-means, the embedding and the head's fit over MPI ranks: auto (when started by mpirun), "
                  "none, or mpi")
      ->capture_default_str();
  cmd->add_option("--kmer", a->kmer, "k-mer size (sequences)")->capture_default_str();
  cmd->add_option("--alphabet", a->alphabet, "dna, protein or letters:<LETTERS> (sequences)")->capture_default_str();
  cmd->add_option("--dim", a->dim, "Token embedding dimension E (--text; the table is trained by `otke train`)")
      ->capture_default_str()
      ->check(CLI::Range(1, 65536));
  cmd->add_option("--min-count", a->min_count, "Vocabulary: tokens seen fewer times map to <unk> (--text)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 30));
  cmd->add_option("--max-vocab", a->max_vocab, "Vocabulary: at most this many entries, <unk> included (--text)")
      ->capture_default_str()
      ->check(CLI::Range(2, 1 << 20));
  cmd->add_flag("--keep-case", a->keep_case, "Do not lowercase ASCII letters before tokenising (--text)");
  cmd->add_option("--embedding", a->embedding, "nystrom, identity or conv")->capture_default_str();
  cmd->add_option("--anchors", a->anchors, "Nystrom anchors K")->capture_default_str();
  cmd->add_option("--filters", a->filters, "Conv filters K (--embedding conv)")->capture_default_str();
  cmd->add_option("--sigma", a->sigma, "Gaussian kernel bandwidth on unit k-mers (thesis: 0.6 unsupervised)")
      ->capture_default_str();
  cmd->add_flag("--keep-norm", a->keep_norm, "Nystrom: multiply psi(x) by ||x|| (the norm-preserving variant)");
  cmd->add_option("--pooling", a->pooling, "otk, mean or max (mean/max: the thesis' baselines)")->capture_default_str();
  cmd->add_option("--p", a->p, "Supports per reference")->capture_default_str();
  cmd->add_option("--q", a->q, "References")->capture_default_str();
  cmd->add_option("--eps", a->eps, "Entropic regularisation")->capture_default_str();
  cmd->add_option("--iters", a->iters, "Sinkhorn iterations (thesis: 100 unsupervised)")->capture_default_str();
  cmd->add_option("--sigma-pos", a->sigma_pos, "Positional weighting bandwidth, 0 = off (thesis DeepSEA: 0.1)")
      ->capture_default_str();
  cmd->add_option("--scale", a->scale, "paper or otk-compatible")->capture_default_str();
  cmd->add_option("--plan", a->plan,
                  "sinkhorn (optimal transport), or attention: each support's softmax over the elements, the thesis' "
                  "'dot-product instead of OT' ablation")
      ->capture_default_str();
  cmd->add_flag("--sinusoidal", a->sinusoidal,
                "Add the sinusoidal positional encoding (Vaswani et al., unit norm) to the embedded elements before "
                "pooling: the thesis' comparison with --sigma-pos");
  cmd->add_option("--reference-update", a->reference_update,
                  "kmeans, or barycenter: refine each reference into the Wasserstein barycenter of its sets (from the "
                  "k-means start; every set is embedded)")
      ->capture_default_str();
  cmd->add_option("--barycenter-iters", a->barycenter_iters, "Barycenter fixed-point steps")->capture_default_str();
  cmd->add_option("--barycenter-eps", a->barycenter_eps,
                  "Barycenter Sinkhorn regularisation, relative to each plan's mean squared distance")
      ->capture_default_str();
  cmd->add_option("--barycenter-sinkhorn-iters", a->barycenter_sinkhorn_iters,
                  "Most Sinkhorn iterations per barycenter plan")
      ->capture_default_str();
  cmd->add_option("--barycenter-sinkhorn-tol", a->barycenter_sinkhorn_tol,
                  "A barycenter plan's Sinkhorn stops at this L1 marginal error")
      ->capture_default_str();
  cmd->add_flag("--multilabel", a->multilabel,
                "Labels are sets ('a,b' in the --tsv label field or --class name; '-' for none): one sigmoid per "
                "label, binary cross-entropy; the head is initialised for `otke train`");
  cmd->add_option("--hidden", a->hidden,
                  "MLP head with this many hidden ReLU units (the thesis' DeepSEA model; 0 = linear); initialised "
                  "for `otke train`")
      ->capture_default_str()
      ->check(CLI::Range(0, 65536));
  cmd->add_option("--dropout", a->dropout,
                  "Dropout on the MLP head's input (the pooled embedding) during `otke train` (needs --hidden)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 0.99));
  cmd->add_option("--max-samples", a->max_samples, "Local features sampled for k-means")->capture_default_str();
  cmd->add_option("--kmeans-iters", a->kmeans_iters, "k-means iterations (anchors and references)")
      ->capture_default_str();
  cmd->add_option("--seed", a->seed, "Seed of sampling, k-means and the split")->capture_default_str();
  cmd->add_option("--val-fraction", a->val_fraction, "Validation share per class, for choosing lambda")
      ->capture_default_str();
  cmd->add_option("--head-tol", a->head_tol, "L-BFGS stops when the gradient's largest entry is below this")
      ->capture_default_str();
  cmd->add_option("--lambda", a->lambda, "Fixed L2 penalty of the head (skips the search over 2^-5 .. 2^-20)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--refit", a->refit, "Refit the head on train + validation at the selected lambda");
  cmd->add_option("--batch-size", a->batch_size, "Samples embedded at a time (bounds memory)")->capture_default_str();
  cmd->add_flag("--quiet", a->quiet, "No progress on stderr");
  cmd->add_option("--out", a->out, "Output model (.safetensors)")->required();
  cmd->callback([a] { run(*a); });
}

}  // namespace inductive::cli
