// native/cli/cmd_graphit.cpp - `inductive graphit train | cv | predict | attention` (thesis ch. 3).
//
// train      one model on a dataset (a GraphiT fold's train/val/test, or a validation split: stratified by class
//            for classification, seeded random for regression; optionally a separate --test-csv), with per-epoch
//            progress (accuracy, or MAE for regression) and ETA on stderr, optional checkpoint/resume; writes the
//            model file (which records how graphs are prepared, atom typing included, so predict/attention and the
//            browser need only the file) and a JSON report.
// cv         the thesis protocol: for each outer fold, choose hyperparameters from a grid on the fold's inner
//            validation split (mean validation accuracy of the last 50 epochs; regression: lowest mean MAE), retrain
//            on train + validation, and report the mean test accuracy (MAE) of the last 50 epochs; then mean +- std
//            over folds.
// predict    class probabilities (regression: predicted values) for a dataset or SMILES strings (.npy + JSON).
// attention  per-layer head-averaged attention matrices, per-node saliency and the kernel of one graph (.npy).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "graphit_data.h"
#include "inductive/atomic_file.h"
#include "inductive/backend_registry.h"
#include "inductive/communicator.h"
#include "inductive/error.h"
#include "inductive/graph_cache.h"
#include "inductive/graphit_protocol.h"
#include "inductive/graphit_report.h"
#include "inductive/logistic.h"
#include "inductive/npy.h"
#include "inductive/smiles.h"
#include "otke_inputs.h"

namespace inductive::cli {
namespace {

using nlohmann::json;

// ---- options shared by train and cv ------------------------------------------------------------------------------

// The flags' defaults are core's (GraphKernelOptions, GcknOptions, GraphitConfig, GraphitTrainOptions), read from
// default-constructed options, so that `--help` and the library cannot drift apart.
const GraphKernelOptions kernel_defaults{};
const GraphitConfig config_defaults{};
const GraphitTrainOptions train_defaults{};

struct ModelArgs {
  std::string kernel = graph_kernel_type_name(kernel_defaults.type);
  double beta = kernel_defaults.beta, gamma = kernel_defaults.gamma;
  int p = kernel_defaults.p;
  bool zero_diagonal = kernel_defaults.zero_diagonal;
  int lap_pe = 0, gckn = 0, gckn_filters = GcknOptions{}.n_filters;  // 0: LapPE and GCKN are off unless asked for
  float gckn_sigma = GcknOptions{}.sigma;
  int layers = config_defaults.layers, heads = config_defaults.heads, dim = config_defaults.d;
  std::string norm = name_of(config_defaults.norm);
  std::string pooling = name_of(config_defaults.pooling);
  double dropout = config_defaults.dropout;
};

struct FitArgs {
  int epochs = train_defaults.epochs, batch_size = train_defaults.batch_size,
      halve_every = train_defaults.lr_halve_every, warmup = train_defaults.warmup_steps;
  double lr = train_defaults.adam.lr, weight_decay = train_defaults.adam.weight_decay;
  uint64_t seed = train_defaults.seed;
  bool no_shuffle = !train_defaults.shuffle, quiet = false;
  std::string cache;
};

void add_model_options(CLI::App* cmd, ModelArgs& m) {
  cmd->add_option("--kernel", m.kernel, "diffusion | pstep | adjacency | none (plain transformer)")
      ->capture_default_str();
  cmd->add_option("--beta", m.beta, "Diffusion kernel exp(-beta L)")->capture_default_str();
  cmd->add_option("--gamma", m.gamma, "p-step kernel (I - gamma L)^p")->capture_default_str();
  cmd->add_option("--p", m.p, "p-step kernel power")->capture_default_str();
  cmd->add_flag("--zero-diagonal", m.zero_diagonal, "Set the kernel's diagonal to zero");
  cmd->add_option("--lap-pe", m.lap_pe, "LapPE dimension m (0: none)")->capture_default_str();
  cmd->add_option("--gckn", m.gckn, "GCKN path features: paths of up to k nodes (0: none; thesis: 5)")
      ->capture_default_str();
  cmd->add_option("--gckn-filters", m.gckn_filters, "GCKN anchors per path length")->capture_default_str();
  cmd->add_option("--gckn-sigma", m.gckn_sigma, "GCKN kernel bandwidth")->capture_default_str();
  cmd->add_option("--layers", m.layers, "Transformer layers")->capture_default_str();
  cmd->add_option("--heads", m.heads, "Attention heads")->capture_default_str();
  cmd->add_option("--dim", m.dim, "Hidden dimension d (FFN 2d)")->capture_default_str();
  cmd->add_option("--norm", m.norm,
                  "layer | batch (BatchNorm over the batch's nodes; under mpirun, every rank's share)")
      ->capture_default_str();
  cmd->add_option("--dropout", m.dropout, "Dropout rate")->capture_default_str();
  cmd->add_option("--pooling", m.pooling, "mean | sum")->capture_default_str();
}

void add_fit_options(CLI::App* cmd, FitArgs& f) {
  cmd->add_option("--epochs", f.epochs, "Epochs")->capture_default_str();
  cmd->add_option("--batch-size", f.batch_size, "Graphs per batch")->capture_default_str();
  cmd->add_option("--lr", f.lr, "Adam learning rate")->capture_default_str();
  cmd->add_option("--weight-decay", f.weight_decay, "AdamW decoupled weight decay")->capture_default_str();
  cmd->add_option("--halve-every", f.halve_every, "Halve the learning rate every N epochs (0: never)")
      ->capture_default_str();
  cmd->add_option("--warmup", f.warmup, "Linear warm-up steps")->capture_default_str();
  cmd->add_option("--seed", f.seed, "Seed (initialisation, shuffling, dropout, GCKN anchors)")->capture_default_str();
  cmd->add_flag("--no-shuffle", f.no_shuffle, "Keep the training order (the reference's behaviour)");
  cmd->add_option("--cache", f.cache, "Cache file for the precomputed kernels / LapPE / GCKN features");
  cmd->add_flag("--quiet", f.quiet, "No progress on stderr");
}

GraphitInputSpec input_spec(const ModelArgs& m, const NamedGraphs& g, uint64_t seed) {
  GraphitInputSpec s;
  s.atom_typing = g.atom_typing;
  s.kernel = m.kernel != "none";
  if (s.kernel) {
    s.kernel_options.type = parse_graph_kernel_type(m.kernel);
    s.kernel_options.beta = m.beta;
    s.kernel_options.gamma = m.gamma;
    s.kernel_options.p = m.p;
    s.kernel_options.zero_diagonal = m.zero_diagonal;
  }
  s.lap_pe = m.lap_pe;
  s.gckn = m.gckn > 0;
  if (s.gckn) {
    s.gckn_options.path_size = m.gckn;
    s.gckn_options.n_filters = m.gckn_filters;
    s.gckn_options.sigma = m.gckn_sigma;
    s.gckn_options.seed = seed;
    s.gckn_feature_dim = g.data.n_node_labels();
  }
  s.validate();
  return s;
}

// The architecture flags; the rest of the config follows from the data and the inputs (graphit_config_for).
GraphitConfig model_config(const ModelArgs& m, const NamedGraphs& g, const GraphitInputSpec& spec) {
  GraphitConfig arch;
  arch.d = m.dim;
  arch.layers = m.layers;
  arch.heads = m.heads;
  arch.norm = parse_enum(kGraphitNorms, m.norm, "--norm");
  arch.dropout = m.dropout;
  arch.pooling = parse_enum(kGraphitPoolings, m.pooling, "--pooling");
  return graphit_config_for(g, spec, arch);
}

GraphitTrainOptions train_options(const FitArgs& f) {
  GraphitTrainOptions o;
  o.epochs = f.epochs;
  o.batch_size = f.batch_size;
  o.adam.lr = f.lr;
  o.adam.weight_decay = f.weight_decay;
  o.lr_halve_every = f.halve_every;
  o.warmup_steps = f.warmup;
  o.seed = f.seed;
  o.shuffle = !f.no_shuffle;
  o.validate();
  return o;
}

void print_prepared(int n_graphs, const GraphitInputSpec& spec, double seconds) {
  std::fprintf(stderr, "graphit: prepared %d graphs (%s%s%s) in %.2f s\n", n_graphs,
               spec.kernel ? spec.kernel_options.describe().c_str() : "no kernel", spec.lap_pe > 0 ? ", LapPE" : "",
               spec.gckn ? ", GCKN paths" : "", seconds);
}

// Precomputed inputs of every graph (through --cache when given), saying what it did on stderr.
// `comm` (data-parallel training): the ranks share the GCKN fit's work.
PrecomputedDataset precompute(const NamedGraphs& g, const GraphitInputSpec& spec, std::vector<int32_t> gckn_train,
                              const std::string& cache, bool quiet, Communicator* comm = nullptr) {
  const auto t0 = std::chrono::steady_clock::now();
  CachedGraphData c = precompute_graphit_inputs(g.data, spec, std::move(gckn_train), cache, comm);
  if (!quiet && !cache.empty() && c.status != GraphCacheStatus::kHit) {
    std::fprintf(stderr, "graphit: cache %s %s (%s): recomputed\n", cache.c_str(), graph_cache_status_name(c.status),
                 c.reason.c_str());
  }
  if (!quiet)
    print_prepared(g.data.n_graphs(), spec,
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return std::move(c.data);
}

std::vector<int32_t> concat(std::vector<int32_t> a, const std::vector<int32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// ---- train ------------------------------------------------------------------------------------------------------

struct TrainArgs {
  GraphDataArgs data;
  ModelArgs model;
  FitArgs fit;
  std::string folds, out, report, checkpoint, test_csv, distributed = "auto", backend = "cpu";
  int fold = 0, rank_check_every = 0;
  double val_fraction = 0.1;
  bool keep_best = false;
};

// The train / validation / test indices of a run (graphit_run_split): a GraphiT fold, or a validation split of the
// dataset plus the graphs of --test-csv (appended to `g`).
GraphitRunSplit split_for_training(const TrainArgs& a, NamedGraphs& g) {
  const std::vector<GraphFold> folds =
      a.folds.empty() ? std::vector<GraphFold>() : read_graphit_folds(a.folds, g.data.n_graphs());
  const bool has_test = !a.test_csv.empty();
  NamedGraphs test;
  if (has_test && folds.empty()) {  // with folds, graphit_run_split refuses a second test set before it is read
    INDUCTIVE_CHECK(!a.data.source.smiles_csv.empty(), ErrorCode::kInvalidArgument,
                    "--test-csv is a second SMILES CSV: it needs --smiles-csv");
    GraphDataArgs t = a.data;
    t.source.smiles_csv = a.test_csv;
    t.source.class_names.clear();  // the test file's classes join the training file's by value
    test = load_named_graphs(graph_source(t));
  }
  return graphit_run_split(g, folds, a.fold, a.val_fraction, a.fit.seed, has_test ? &test : nullptr);
}

void print_epoch(const GraphitEpoch& e, int epochs, bool regression, bool has_test) {
  const std::string test_part =
      has_test ? (regression ? " test MAE " : " test ") + std::to_string(e.test_metric).substr(0, 6) : "";
  if (regression)
    std::fprintf(
        stderr, "graphit train: epoch %d/%d loss %.4f train MAE %.4f val MAE %.4f%s lr %.2g (%.2f s, ETA %.0f s)\n",
        e.epoch, epochs, e.train_loss, e.train_metric, e.val_metric, test_part.c_str(), e.lr, e.seconds, e.eta_seconds);
  else
    std::fprintf(stderr, "graphit train: epoch %d/%d loss %.4f train %.3f val %.3f%s lr %.2g (%.2f s, ETA %.0f s)\n",
                 e.epoch, epochs, e.train_loss, e.train_metric, e.val_metric, test_part.c_str(), e.lr, e.seconds,
                 e.eta_seconds);
}

void run_train(const TrainArgs& a) {
  check_output_path(a.out, "--out");
  if (!a.report.empty()) check_output_path(a.report, "--report");
  // Under mpirun every rank reads the data and trains on its share of every batch (inductive/graphit_train.h); rank
  // 0 alone prints, checkpoints and writes the model and report.
  const std::unique_ptr<Communicator> comm = make_communicator(a.distributed);
  const bool quiet = a.fit.quiet || !comm->writer();
  const std::unique_ptr<Backend> backend = make_backend(a.backend);  // a missing one fails before the data is read
  GraphitTrainOptions o = train_options(a.fit);                      // validated before the data is read
  o.backend = backend.get();
  o.checkpoint_path = a.checkpoint;
  o.communicator = comm.get();
  o.rank_check_every = a.rank_check_every;
  o.keep_best = a.keep_best;
  NamedGraphs g = load_named_graphs(graph_source(a.data));
  const GraphitRunSplit split = split_for_training(a, g);
  const std::vector<int32_t>&train = split.train, &val = split.val, &test = split.test;
  const bool regression = g.regression;
  const GraphitInputSpec spec = input_spec(a.model, g, a.fit.seed);
  const GraphitConfig config = model_config(a.model, g, spec);
  const PrecomputedDataset pre = precompute(g, spec, concat(train, val), a.fit.cache, quiet, comm.get());
  const GraphitDataset d_train = graphit_subset(g.data, g.targets, pre, config, train);
  const GraphitDataset d_val = graphit_subset(g.data, g.targets, pre, config, val);
  const GraphitDataset d_test = graphit_subset(g.data, g.targets, pre, config, test);

  GraphitModel model = GraphitModel::create(config, a.fit.seed);
  model.gckn = pre.gckn;
  const GraphitTrainReport r = train_graphit(model, d_train, d_val.size() > 0 ? &d_val : nullptr,
                                             d_test.size() > 0 ? &d_test : nullptr, o, [&](const GraphitEpoch& e) {
                                               if (!quiet) print_epoch(e, o.epochs, regression, d_test.size() > 0);
                                             });
  if (!comm->writer()) return;
  const bool wrote_best = a.keep_best && r.saved_epoch != static_cast<int>(r.history.size());
  const int last = std::min<int>(50, static_cast<int>(r.history.size()));
  json report = graphit_train_report(r, config, o.epochs);
  report["input"] = g.source;
  report["graphs"] = {{"train", train.size()}, {"val", val.size()}, {"test", test.size()}};
  report["ranks"] = comm->size();
  report["backend"] = backend->name();
  // Which graphs validated (0-based, in the order of the dataset's graphs: a CSV's rows with a target), so that a
  // split drawn here can be reused or checked elsewhere.
  if (a.folds.empty()) report["val_indices"] = val;
  if (!a.test_csv.empty()) report["test_input"] = a.test_csv;
  std::vector<std::pair<std::string, std::vector<uint8_t>>> files;
  files.emplace_back(a.out, model.to_bytes());
  if (!a.report.empty()) {
    const std::string text = report.dump(2) + "\n";
    files.emplace_back(a.report, std::vector<uint8_t>(text.begin(), text.end()));
  }
  write_files_atomic(files);
  if (!a.fit.quiet) {
    const char* what = regression ? "MAE " : "";
    std::fprintf(stderr, "graphit train: wrote %s (%s; best val %s%.4f at epoch %d; last-50 mean val %.4f%s)\n",
                 a.out.c_str(), wrote_best ? "the best validation epoch's model" : "the last epoch's model", what,
                 r.best_val_metric, r.best_epoch, last > 0 ? r.mean_val_metric_last(50) : NAN,
                 d_test.size() > 0 && last > 0
                     ? (", test at best " + std::to_string(r.test_at_best).substr(0, 6) + ", last-50 mean test " +
                        std::to_string(r.mean_test_metric_last(50)).substr(0, 6))
                           .c_str()
                     : "");
  }
}

// ---- cv ---------------------------------------------------------------------------------------------------------

struct CvArgs {
  GraphDataArgs data;
  ModelArgs model;
  FitArgs fit;
  std::string folds, out, distributed = "auto", backend = "cpu";
  std::vector<int> grid_layers{1, 2, 3}, grid_dim{64}, grid_heads{4}, fold_list;
  std::vector<double> grid_weight_decay{1e-4, 1e-3};
  int last = GraphitCvOptions{}.last;
};

// Progress of the protocol on stderr (writer rank only): preparation, one line per run, and between them an epoch
// line at most every 15 s (a fold of a large dataset trains for minutes).
class CvPrinter {
 public:
  CvPrinter(const std::vector<GraphitGridPoint>& grid, const NamedGraphs& g, const GraphitInputSpec& spec, int last,
            int epochs)
      : grid_(grid), graphs_(g), spec_(spec), regression_(g.regression), last_(last), epochs_(epochs) {}
  void operator()(const GraphitCvProgress& p) {
    if (!p.writer) return;
    using K = GraphitCvProgress::Kind;
    const GraphitGridPoint& pt = grid_[p.point];
    switch (p.kind) {
      case K::kPrepared:
        if (p.cache_status && *p.cache_status != GraphCacheStatus::kHit)
          std::fprintf(stderr, "graphit: cache %s (%s): recomputed\n", graph_cache_status_name(*p.cache_status),
                       p.cache_reason.c_str());
        print_prepared(graphs_.data.n_graphs(), spec_, p.seconds);
        break;
      case K::kEpoch:
        if (p.elapsed - last_line_ < 15.0) return;
        last_line_ = p.elapsed;
        std::fprintf(stderr, "graphit cv: fold %d: run %d/%d: epoch %d/%d (%.0f s elapsed, ETA %.0f s)\n", p.fold,
                     p.run, p.runs, p.epoch->epoch, epochs_, p.elapsed, p.eta);
        break;
      case K::kValidated:
        std::fprintf(
            stderr, "graphit cv: fold %d: layers %d dim %d heads %d wd %g: val %s%.4f (%.0f s elapsed, ETA %.0f s)\n",
            p.fold, pt.layers, pt.dim, pt.heads, pt.weight_decay, regression_ ? "MAE " : "", p.value, p.elapsed, p.eta);
        break;
      case K::kTested:
        std::fprintf(stderr, "graphit cv: fold %d: test %s (mean of the last %d epochs) %.4f [%.0f s; ETA %.0f s]\n",
                     p.fold, regression_ ? "MAE" : "accuracy", last_, p.value, p.seconds, p.eta);
        break;
    }
  }

 private:
  const std::vector<GraphitGridPoint>& grid_;
  const NamedGraphs& graphs_;
  const GraphitInputSpec& spec_;
  bool regression_;
  int last_, epochs_;
  double last_line_ = 0;
};

void run_cv(const CvArgs& a) {
  check_output_path(a.out, "--out");
  const std::unique_ptr<Communicator> comm = make_communicator(a.distributed);
  const std::unique_ptr<Backend> backend = make_backend(a.backend);  // a missing one fails before the data is read
  GraphitCvOptions o;
  o.train = train_options(a.fit);  // validated before the data is read
  o.train.backend = backend.get();
  o.grid = graphit_grid(a.grid_layers, a.grid_dim, a.grid_heads, a.grid_weight_decay);
  o.folds_to_run = a.fold_list;
  o.last = a.last;
  o.cache = a.fit.cache;
  o.communicator = comm.get();
  const NamedGraphs g = load_named_graphs(graph_source(a.data));
  const std::vector<GraphFold> folds = read_graphit_folds(a.folds, g.data.n_graphs());
  const GraphitInputSpec spec = input_spec(a.model, g, a.fit.seed);
  const GraphitConfig base = model_config(a.model, g, spec);
  CvPrinter printer(o.grid, g, spec, a.last, a.fit.epochs);
  const GraphitCvReport r = run_graphit_cv(g.data, g.targets, folds, spec, base, o, [&](const GraphitCvProgress& p) {
    if (!a.fit.quiet) printer(p);
  });
  if (!comm->writer()) return;

  json report = graphit_cv_report(r, o.grid, g.regression, a.last);
  report["input"] = g.source;
  report["epochs"] = a.fit.epochs;
  report["kernel"] = a.model.kernel;
  report["lap_pe"] = a.model.lap_pe;
  report["gckn"] = a.model.gckn;
  report["backend"] = backend->name();
  const std::string text = report.dump(2) + "\n";
  write_file_atomic(a.out, std::vector<uint8_t>(text.begin(), text.end()));
  if (g.regression)
    std::fprintf(stderr, "graphit cv: %zu folds: test MAE %.4f +- %.4f (%.0f s)\n", r.folds.size(), r.mean, r.stddev,
                 r.seconds);
  else
    std::fprintf(stderr, "graphit cv: %zu folds: test accuracy %.2f +- %.2f %% (%.0f s)\n", r.folds.size(),
                 100 * r.mean, 100 * r.stddev, r.seconds);
}

// ---- predict / attention -----------------------------------------------------------------------------------------

struct PredictArgs {
  GraphDataArgs data;
  std::string model, out, report, out_dir, distributed = "auto", backend = "cpu";
  std::vector<std::string> smiles;
  int graph = -1;
};

// The graphs to run: SMILES strings, or a dataset (mapped to the model's vocabulary and classes).
LabelledGraphs read_inputs(const PredictArgs& a, const GraphitModel& model) {
  if (a.smiles.empty()) return dataset_for_model(model, graph_source(a.data), a.graph);
  INDUCTIVE_CHECK(a.data.source.tu.empty() && a.data.source.smiles_csv.empty(), ErrorCode::kInvalidArgument,
                  "--smiles cannot be combined with a dataset");
  source_for_model(graph_source(a.data), model);  // --task / --atom-types must agree with the model
  return molecules_for_model(model, a.smiles);
}

void run_predict(const PredictArgs& a) {
  check_output_path(a.out, "--out");
  // Under mpirun each rank prepares and predicts a contiguous share of the graphs; rank 0 gathers the rows, in
  // input order, and alone writes the files (the serial run's bytes: a graph's output does not depend on its batch).
  const std::unique_ptr<Communicator> comm = make_communicator(a.distributed);
  const std::unique_ptr<Backend> backend = make_backend(a.backend);  // a missing one fails before any reading
  const GraphitModel model = GraphitModel::load(a.model);
  const LabelledGraphs in = read_inputs(a, model);
  INDUCTIVE_CHECK(!in.graphs.empty(), ErrorCode::kInvalidArgument, "graphit predict: no graph given");
  const int n = static_cast<int>(in.graphs.size());
  const Shard shard = shard_of(n, comm->rank(), comm->size());
  const int begin = static_cast<int>(shard.begin);
  const std::vector<GraphitGraph> prepared = model.prepare_many(
      static_cast<int>(shard.end - shard.begin), [&](int i) { return in.graphs[static_cast<size_t>(begin + i)]; },
      [&](int i) {
        return "graphit predict: graph " + std::to_string(begin + i) + " ('" +
               in.names[static_cast<size_t>(begin + i)] + "')";
      });
  MatF p = prepared.empty() ? MatF(0, model.config.outputs) : model.shown_outputs(prepared, backend.get());
  if (comm->size() > 1) {
    const int cols = static_cast<int>(p.cols());
    const std::vector<float> all = comm->gather_to_writer(std::vector<float>(p.data(), p.data() + p.size()));
    if (!comm->writer()) return;
    p = CMapF(all.data(), n, cols);
  }
  json report = graphit_predict_report(model, in, p);
  std::vector<std::pair<std::string, std::vector<uint8_t>>> files;
  files.emplace_back(a.out, npy_bytes(p.data(), {p.rows(), p.cols()}));
  if (!a.report.empty()) {
    report["model"] = a.model;
    const std::string text = report.dump(2) + "\n";
    files.emplace_back(a.report, std::vector<uint8_t>(text.begin(), text.end()));
  }
  write_files_atomic(files);
  const bool regression = !model.config.classification();
  const std::string metric = graphit_metric_key(regression);
  std::fprintf(stderr, "graphit predict: %d graphs%s\n", static_cast<int>(p.rows()),
               report.contains(metric) ? (std::string(regression ? ", MAE " : ", accuracy ") +
                                          std::to_string(report[metric].get<double>()).substr(0, 6))
                                             .c_str()
                                       : "");
}

void run_attention(const PredictArgs& a) {
  INDUCTIVE_CHECK(!a.out_dir.empty(), ErrorCode::kInvalidArgument, "--out-dir is required");
  const std::unique_ptr<Backend> backend = make_backend(a.backend);  // a missing one fails before any reading
  const GraphitModel model = GraphitModel::load(a.model);
  INDUCTIVE_CHECK(a.smiles.size() == 1 || (a.smiles.empty() && a.graph >= 0), ErrorCode::kInvalidArgument,
                  "graphit attention explains one graph: give one --smiles, or a dataset and --graph I");
  const LabelledGraphs in = read_inputs(a, model);
  const Graph& g = in.graphs.front();
  // The browser's attention() shows the same; the backend runs the network, saliency follows on the host.
  const GraphitModel::Explanation e = model.explain(g, backend.get());
  const int n = e.n, L = e.layers;
  json nodes = json::array();
  for (int v = 0; v < n; ++v)
    nodes.push_back(model.config.node_labels.empty() ? std::to_string(g.node_labels[v])
                                                     : model.config.node_labels[g.node_labels[v]]);
  json summary = {{"model", a.model}, {"graph", in.names.front()},       {"nodes", nodes}, {"edges", g.edges},
                  {"layers", L},      {"mean_saliency", e.mean_saliency}};
  const std::vector<float> outputs(e.outputs.data(), e.outputs.data() + e.outputs.cols());
  if (model.config.classification()) {
    summary["probabilities"] = outputs;
    summary["classes"] = model.config.class_labels;
  } else {
    summary["prediction"] = outputs;  // the regression outputs
  }
  std::filesystem::create_directories(a.out_dir);
  const std::filesystem::path dir(a.out_dir);
  std::vector<std::pair<std::string, std::vector<uint8_t>>> files;
  files.emplace_back((dir / "attention.npy").string(), npy_bytes(e.attention.data(), {L, n, n}));
  files.emplace_back((dir / "saliency.npy").string(), npy_bytes(e.saliency.data(), {L, n}));
  if (model.config.kernel) files.emplace_back((dir / "kernel.npy").string(), npy_bytes(e.kernel.data(), {n, n}));
  const std::string text = summary.dump(2) + "\n";
  files.emplace_back((dir / "summary.json").string(), std::vector<uint8_t>(text.begin(), text.end()));
  write_files_atomic(files);
  std::fprintf(stderr, "graphit attention: %d nodes, %d layers -> %s\n", n, L, a.out_dir.c_str());
}

}  // namespace

void add_graphit_command(CLI::App& app) {
  CLI::App* graphit = app.add_subcommand("graphit", "GraphiT: transformers on graphs with kernels on graphs");
  graphit->require_subcommand(1);

  auto t = std::make_shared<TrainArgs>();
  CLI::App* train = graphit->add_subcommand("train", "Train a GraphiT model (progress and ETA on stderr)");
  add_graph_data_options(train, t->data);
  add_model_options(train, t->model);
  add_fit_options(train, t->fit);
  auto* folds = train->add_option("--folds", t->folds, "GraphiT fold directory (test_idx-K.txt, inner_folds/)");
  train->add_option("--fold", t->fold, "Fold K in 1..10 (with --folds)")->needs(folds);
  train
      ->add_option("--val-fraction", t->val_fraction,
                   "Validation split without --folds (stratified by class; seeded random for regression)")
      ->capture_default_str();
  train->add_option("--test-csv", t->test_csv,
                    "A second SMILES CSV (same columns) evaluated every epoch as the test set (without --folds)");
  train->add_flag("--keep-best", t->keep_best,
                  "Write the model of the best validation epoch (accuracy: highest; MAE: lowest), not the last");
  train->add_option("--checkpoint", t->checkpoint, "Checkpoint file: resumes from it when present");
  train
      ->add_option(
          "--backend", t->backend,
          "Where training runs: cpu, or cuda[:N] (under mpirun, a bare cuda is one GPU per rank: cuda:<local rank>, "
          "gradients summed by NCCL)")
      ->capture_default_str();
  train
      ->add_option("--distributed", t->distributed,
                   "Data parallel over MPI ranks: auto (when started by mpirun), none, or mpi")
      ->capture_default_str();
  train
      ->add_option("--rank-check-every", t->rank_check_every,
                   "Several ranks: compare their parameters' hashes every K steps too (0: after every epoch only)")
      ->check(CLI::Range(0, 1 << 30))
      ->capture_default_str();
  train->add_option("--out", t->out, "Output model file (.safetensors)")->required();
  train->add_option("--report", t->report, "Output JSON report (history, best epoch, ...)");
  train->callback([t, folds] {
    INDUCTIVE_CHECK(folds->count() == 0 || t->fold >= 1, ErrorCode::kInvalidArgument, "--folds needs --fold K");
    run_train(*t);
  });

  auto c = std::make_shared<CvArgs>();
  CLI::App* cv = graphit->add_subcommand("cv", "The thesis protocol: grid on inner validation, test on 10 folds");
  add_graph_data_options(cv, c->data);
  add_model_options(cv, c->model);
  add_fit_options(cv, c->fit);
  cv->add_option("--folds", c->folds, "GraphiT fold directory")->required();
  cv->add_option("--folds-to-run", c->fold_list, "Only these outer folds (1-based)")->delimiter(',');
  cv->add_option("--grid-layers", c->grid_layers, "Grid: layers")->delimiter(',')->capture_default_str();
  cv->add_option("--grid-dim", c->grid_dim, "Grid: hidden dimension")->delimiter(',')->capture_default_str();
  cv->add_option("--grid-heads", c->grid_heads, "Grid: heads")->delimiter(',')->capture_default_str();
  cv->add_option("--grid-weight-decay", c->grid_weight_decay, "Grid: weight decay")
      ->delimiter(',')
      ->capture_default_str();
  cv->add_option("--last", c->last, "Average accuracies over the last N epochs")->capture_default_str();
  cv->add_option("--out", c->out, "Output JSON report")->required();
  cv->add_option("--distributed", c->distributed,
                 "Deal the folds x grid runs over MPI ranks: auto (when started by mpirun), none, or mpi")
      ->capture_default_str();
  cv->add_option("--backend", c->backend, "Where each run trains: cpu, or cuda[:N] (one GPU per process)")
      ->capture_default_str();
  cv->callback([c] { run_cv(*c); });

  auto p = std::make_shared<PredictArgs>();
  CLI::App* predict =
      graphit->add_subcommand("predict", "Class probabilities (regression: values) for a dataset or SMILES strings");
  predict->add_option("--model", p->model, "Model file")->required();
  add_graph_data_options(predict, p->data);
  predict->add_option("--smiles", p->smiles, "A molecule (repeatable)");
  predict
      ->add_option("--out", p->out,
                   "Output .npy float32 [graphs, classes] probabilities (regression: [graphs, "
                   "targets] values)")
      ->required();
  predict->add_option("--report", p->report,
                      "Output JSON (per-graph predictions; accuracy or MAE when labels / targets are known)");
  predict
      ->add_option("--distributed", p->distributed,
                   "Shard the graphs over MPI ranks: auto (when started by mpirun), none, or mpi")
      ->capture_default_str();
  predict->add_option("--backend", p->backend, "Where the model runs: cpu, or cuda[:N]")->capture_default_str();
  predict->callback([p] { run_predict(*p); });

  auto q = std::make_shared<PredictArgs>();
  CLI::App* attention = graphit->add_subcommand("attention", "Attention maps and node saliency of one graph");
  attention->add_option("--model", q->model, "Model file")->required();
  add_graph_data_options(attention, q->data);
  attention->add_option("--smiles", q->smiles, "The molecule");
  attention->add_option("--graph", q->graph, "Graph index (0-based) in the dataset");
  attention->add_option("--out-dir", q->out_dir, "Directory for attention.npy, saliency.npy, kernel.npy, summary.json")
      ->required();
  attention->add_option("--backend", q->backend, "Where the model runs: cpu, or cuda[:N]")->capture_default_str();
  attention->callback([q] { run_attention(*q); });
}

}  // namespace inductive::cli
