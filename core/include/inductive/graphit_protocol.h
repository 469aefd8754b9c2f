// inductive/graphit_protocol.h - the GraphiT experimental protocols (thesis ch. 3), once, for every front end: the
// CLI (`inductive graphit train | cv`), the bindings and the MPI driver call these and only print or serialise.
//
// Data: a GraphDataset whose graphs carry their class in Graph::label (classification), or one real target per
// graph in `targets` (regression; config.task says which), and the precomputed kernels / LapPE / GCKN features of
// every graph (inductive/graph_cache.h).
//
// Cross-validation (run_graphit_cv), the protocol of the reference code and of the thesis' tables:
//   for each outer fold: train every grid point on the fold's train split and score it by its mean validation
//   metric over the last `last` epochs (accuracy: highest wins; MAE: lowest; first on ties); retrain the winner on
//   train + validation; the fold's score is the mean test metric of the last `last` epochs. Report mean +- std
//   (population) over the folds. With one grid point there is nothing to select: each fold trains once.
// GCKN anchors are fitted (without labels) on each fold's train + validation graphs; kernels and LapPE do not
// depend on the fold. Each run is seeded alone (options.train.seed), so the result does not depend on which rank ran
// what: with a communicator, runs are dealt round-robin over the ranks (task parallelism; each rank trains whole
// models) and the scores summed, so every rank returns the same report.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "inductive/graph.h"
#include "inductive/graph_cache.h"
#include "inductive/graphit.h"
#include "inductive/graphit_train.h"

namespace inductive {

class Communicator;

// The model inputs and targets of graphs[index] (all graphs' parts precomputed in `pre`) under `config`: classes
// from Graph::label, or targets[index] for a regression config (one output).
GraphitDataset graphit_subset(const GraphDataset& graphs, const std::vector<float>& targets,
                              const PrecomputedDataset& pre, const GraphitConfig& config,
                              const std::vector<int32_t>& index);

// A validation split of every graph (inductive/splits.h): stratified by class (class_names name them in
// messages), or seeded random for regression (empty class_names).
void graphit_validation_split(const GraphDataset& graphs, bool regression, const std::vector<std::string>& class_names,
                              double fraction, uint64_t seed, std::vector<int32_t>& train, std::vector<int32_t>& val);

// Precomputed inputs of every graph, through a cache file when `cache` is not empty (load_or_precompute: a stale
// or corrupt cache is recomputed and replaced, and `status` says so). `communicator` (data-parallel training, every
// rank calling with the same arguments): the GCKN fit's work is split over the ranks (GcknPathFeatures::fit).
CachedGraphData precompute_graphit_inputs(const GraphDataset& graphs, const GraphitInputSpec& spec,
                                          std::vector<int32_t> gckn_train, const std::string& cache,
                                          Communicator* communicator = nullptr);

// One point of the cross-validation grid.
struct GraphitGridPoint {
  int layers = 3, dim = 64, heads = 4;
  double weight_decay = 1e-4;
};
// Every combination, layers outermost, weight decay innermost (the order runs are reported in).
std::vector<GraphitGridPoint> graphit_grid(const std::vector<int>& layers, const std::vector<int>& dims,
                                           const std::vector<int>& heads, const std::vector<double>& weight_decays);

// `base` with the architecture of a grid point (the reference's defaults for d: ffn = 2 d, hidden = d).
GraphitConfig graphit_config_at(const GraphitConfig& base, const GraphitGridPoint& point);

struct GraphitCvOptions {
  std::vector<GraphitGridPoint> grid{GraphitGridPoint{}};  // not empty
  std::vector<int> folds_to_run;                           // 1-based; empty: every fold
  int last = 50;                                           // epochs averaged for selection and score
  GraphitTrainOptions train;                               // every run's (weight decay: the grid point's)
  std::string cache;                                       // cache file of the precomputed inputs (optional)
  Communicator* communicator = nullptr;                    // null: one process
};

// What the protocol is doing, for progress lines (each kind fills the fields it names).
struct GraphitCvProgress {
  enum class Kind {
    kPrepared,   // a fold's inputs are ready: seconds, cache_status (none: no cache), cache_reason
    kEpoch,      // a run finished an epoch: epoch
    kValidated,  // a grid point was scored on a fold: point, value (mean val metric of the last epochs)
    kTested,     // a fold's retrained model was scored: point (selected), value (mean test metric), seconds (fold)
  };
  Kind kind = Kind::kEpoch;
  int fold = 0;  // 1-based
  int run = 0;   // 1-based, of `runs` (all ranks' runs; this rank's are dealt round-robin)
  int runs = 0;
  const GraphitEpoch* epoch = nullptr;
  int point = 0;  // index into the grid
  double value = 0, seconds = 0;
  double elapsed = 0, eta = 0;  // seconds since the start, estimated seconds left (whole protocol)
  std::optional<GraphCacheStatus> cache_status;
  std::string cache_reason;
  bool writer = true;  // the communicator's writer rank (others usually stay silent)
};

struct GraphitCvFold {
  int fold = 0;             // 1-based
  int selected = 0;         // index into the grid
  std::vector<double> val;  // per grid point, mean val metric of the last epochs (empty: one point, no selection)
  double test_last = 0;     // mean test metric of the last epochs of the retrained model
  double test_final = 0;    // test metric after the last epoch
  double seconds = 0;       // training time of the fold, summed over ranks
};

struct GraphitCvReport {
  std::vector<GraphitCvFold> folds;
  double mean = 0, stddev = 0;  // over folds' test_last (population std)
  bool regression = false;      // metric: MAE (lower is better) instead of accuracy
  int ranks = 1;
  double seconds = 0;
};

// Runs the protocol on `folds` (read_graphit_folds). Errors (bad fold numbers, an empty grid, bad options) are
// Error{kInvalidArgument}, raised before any training; `progress` may cancel by throwing.
GraphitCvReport run_graphit_cv(const GraphDataset& graphs, const std::vector<float>& targets,
                               const std::vector<GraphFold>& folds, const GraphitInputSpec& spec,
                               const GraphitConfig& base, const GraphitCvOptions& options,
                               const EventFn<GraphitCvProgress>& progress = {});

}  // namespace inductive
