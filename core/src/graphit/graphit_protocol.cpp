// The GraphiT protocols: subsets, validation splits, cached inputs and cross-validation (see
// inductive/graphit_protocol.h).
#include "inductive/graphit_protocol.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <utility>

#include "inductive/communicator.h"
#include "inductive/error.h"
#include "inductive/splits.h"

namespace inductive {

GraphitDataset graphit_subset(const GraphDataset& graphs, const std::vector<float>& targets,
                              const PrecomputedDataset& pre, const GraphitConfig& config,
                              const std::vector<int32_t>& index) {
  const bool regression = !config.classification();
  INDUCTIVE_CHECK(!regression || targets.size() == graphs.graphs.size(), ErrorCode::kShapeMismatch,
                  "graphit: regression needs one target per graph: ", targets.size(), " targets for ",
                  graphs.graphs.size(), " graphs");
  GraphitDataset out;
  for (int32_t i : index) {
    INDUCTIVE_CHECK(i >= 0 && i < graphs.n_graphs(), ErrorCode::kInvalidArgument, "graphit: graph index ", i,
                    " is not in [0, ", graphs.n_graphs(), ")");
    out.graphs.push_back(make_graphit_graph(graphs.graphs[i], pre.graphs[i], config));
    if (regression)
      out.values.push_back(targets[i]);
    else
      out.classes.push_back(graphs.graphs[i].label);
  }
  return out;
}

void graphit_validation_split(const GraphDataset& graphs, bool regression, const std::vector<std::string>& class_names,
                              double fraction, uint64_t seed, std::vector<int32_t>& train, std::vector<int32_t>& val) {
  if (regression) return random_split(graphs.n_graphs(), fraction, seed, train, val);
  std::vector<int32_t> y;
  y.reserve(graphs.graphs.size());
  for (const Graph& g : graphs.graphs) y.push_back(g.label);
  stratified_split(y, class_names, fraction, seed, train, val);
}

CachedGraphData precompute_graphit_inputs(const GraphDataset& graphs, const GraphitInputSpec& spec,
                                          std::vector<int32_t> gckn_train, const std::string& cache,
                                          Communicator* communicator) {
  GraphPrecomputeOptions o = spec.precompute_options(std::move(gckn_train));
  o.communicator = communicator;
  if (!cache.empty()) return load_or_precompute(cache, graphs, o);
  CachedGraphData c;
  c.data = precompute_graph_data(graphs, o);
  return c;
}

std::vector<GraphitGridPoint> graphit_grid(const std::vector<int>& layers, const std::vector<int>& dims,
                                           const std::vector<int>& heads, const std::vector<double>& weight_decays) {
  std::vector<GraphitGridPoint> grid;
  for (int l : layers)
    for (int d : dims)
      for (int h : heads)
        for (double wd : weight_decays) grid.push_back({l, d, h, wd});
  return grid;
}

GraphitConfig graphit_config_at(const GraphitConfig& base, const GraphitGridPoint& point) {
  const GraphitConfig shape = GraphitConfig::with_dim(point.dim, point.layers, point.heads);
  GraphitConfig c = base;
  c.d = shape.d;
  c.layers = shape.layers;
  c.heads = shape.heads;
  c.ffn = shape.ffn;
  c.hidden = shape.hidden;
  c.validate();
  return c;
}

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace

GraphitCvReport run_graphit_cv(const GraphDataset& graphs, const std::vector<float>& targets,
                               const std::vector<GraphFold>& folds, const GraphitInputSpec& spec,
                               const GraphitConfig& base, const GraphitCvOptions& o,
                               const EventFn<GraphitCvProgress>& progress) {
  o.train.validate();
  INDUCTIVE_CHECK(!o.grid.empty(), ErrorCode::kInvalidArgument, "cv: the hyperparameter grid is empty");
  INDUCTIVE_CHECK(o.last >= 1, ErrorCode::kInvalidArgument, "cv: the number of last epochs must be >= 1: got ", o.last);
  for (const GraphitGridPoint& p : o.grid) graphit_config_at(base, p);  // every point valid before any training
  std::vector<int> which = o.folds_to_run;
  if (which.empty())
    for (int k = 1; k <= static_cast<int>(folds.size()); ++k) which.push_back(k);
  for (int k : which) {
    INDUCTIVE_CHECK(k >= 1 && k <= static_cast<int>(folds.size()), ErrorCode::kInvalidArgument, "--folds-to-run: fold ",
                    k, " is not in [1, ", folds.size(), "]");
  }
  const bool regression = !base.classification();
  const std::unique_ptr<Communicator> serial = o.communicator ? nullptr : make_serial_communicator();
  Communicator& comm = o.communicator ? *o.communicator : *serial;
  const int F = static_cast<int>(which.size()), P = static_cast<int>(o.grid.size());
  const int rank = comm.rank(), ranks = comm.size();
  const bool select = P > 1;

  const auto start = Clock::now();
  const int runs = F * (P + (select ? 1 : 0));
  int done_runs = 0;  // this rank's
  // ETA over all epochs of all runs, as if every rank progressed like this one.
  const double total_epochs = static_cast<double>(runs) * o.train.epochs / ranks;
  double done_epochs = 0;
  GraphitCvProgress pr;
  pr.runs = runs;
  pr.writer = comm.writer();
  auto report = [&](GraphitCvProgress::Kind kind) {
    if (!progress) return;
    pr.kind = kind;
    pr.elapsed = seconds_since(start);
    pr.eta = done_epochs > 0 ? std::max(0.0, pr.elapsed / done_epochs * (total_epochs - done_epochs)) : 0.0;
    progress(pr);
  };

  // Kernels and LapPE do not depend on the fold; GCKN anchors are fitted on train + validation. Made once per fold
  // by the rank that first needs them.
  std::map<int, PrecomputedDataset> prepared;
  auto prepare = [&](int fi) -> const PrecomputedDataset& {
    const int k = which[fi];
    auto it = prepared.find(k);
    if (it != prepared.end()) return it->second;
    const GraphFold& fold = folds[k - 1];
    std::vector<int32_t> gckn_train = fold.train;
    gckn_train.insert(gckn_train.end(), fold.val.begin(), fold.val.end());
    const auto t0 = Clock::now();
    CachedGraphData c = precompute_graphit_inputs(graphs, spec, std::move(gckn_train), o.cache);
    pr.fold = k;
    pr.seconds = seconds_since(t0);
    if (!o.cache.empty()) pr.cache_status = c.status;
    pr.cache_reason = c.reason;
    report(GraphitCvProgress::Kind::kPrepared);
    return prepared.emplace(k, std::move(c.data)).first->second;
  };
  auto fit = [&](int point, const PrecomputedDataset& pre, const std::vector<int32_t>& tr,
                 const std::vector<int32_t>* va, const std::vector<int32_t>* te) {
    const GraphitConfig config = graphit_config_at(base, o.grid[point]);
    GraphitTrainOptions t = o.train;
    t.adam.weight_decay = o.grid[point].weight_decay;
    t.communicator = nullptr;  // task parallel: each rank trains its runs alone
    t.checkpoint_path.clear();
    t.keep_best = false;
    GraphitModel model = GraphitModel::create(config, t.seed);
    const GraphitDataset d_tr = graphit_subset(graphs, targets, pre, config, tr);
    GraphitDataset d_va, d_te;
    if (va) d_va = graphit_subset(graphs, targets, pre, config, *va);
    if (te) d_te = graphit_subset(graphs, targets, pre, config, *te);
    const int before = done_runs;
    pr.run = before * ranks + rank + 1;
    const GraphitTrainReport r =
        train_graphit(model, d_tr, va ? &d_va : nullptr, te ? &d_te : nullptr, t, [&](const GraphitEpoch& e) {
          done_epochs += 1;
          pr.epoch = &e;
          report(GraphitCvProgress::Kind::kEpoch);
          pr.epoch = nullptr;
        });
    ++done_runs;
    done_epochs = static_cast<double>(done_runs) * o.train.epochs;
    return r;
  };

  // Phase 1: every (fold, grid point) validation run, dealt round-robin; the scores are summed across ranks, so
  // every rank picks the same point per fold.
  std::vector<double> val(static_cast<size_t>(F) * P, 0.0), seconds(F, 0.0);
  if (select) {
    for (int task = 0; task < F * P; ++task) {
      if (task % ranks != rank) continue;
      const int fi = task / P, point = task % P, k = which[fi];
      pr.fold = k;
      const auto t0 = Clock::now();
      const PrecomputedDataset& pre = prepare(fi);
      const GraphitTrainReport r = fit(point, pre, folds[k - 1].train, &folds[k - 1].val, nullptr);
      val[task] = r.mean_val_metric_last(o.last);
      seconds[fi] += seconds_since(t0);
      pr.point = point;
      pr.value = val[task];
      report(GraphitCvProgress::Kind::kValidated);
    }
    comm.allreduce_sum(val.data(), static_cast<int64_t>(val.size()));
  }
  std::vector<int> best(F, 0);
  for (int fi = 0; fi < F && select; ++fi) {
    for (int pi = 1; pi < P; ++pi) {
      const double v = val[static_cast<size_t>(fi) * P + pi], b = val[static_cast<size_t>(fi) * P + best[fi]];
      if (std::isnan(b) || (regression ? v < b : v > b)) best[fi] = pi;
    }
  }
  // Phase 2: every fold's retrain on train + validation with its point, scored on the test split.
  std::vector<double> test_last(F, 0.0), test_final(F, 0.0);
  for (int fi = 0; fi < F; ++fi) {
    if (fi % ranks != rank) continue;
    const int k = which[fi];
    pr.fold = k;
    const auto t0 = Clock::now();
    const PrecomputedDataset& pre = prepare(fi);
    std::vector<int32_t> train = folds[k - 1].train;
    train.insert(train.end(), folds[k - 1].val.begin(), folds[k - 1].val.end());
    const GraphitTrainReport r = fit(best[fi], pre, train, nullptr, &folds[k - 1].test);
    test_last[fi] = r.mean_test_metric_last(o.last);
    test_final[fi] = r.history.back().test_metric;
    seconds[fi] += seconds_since(t0);
    prepared.erase(k);  // this fold is done on this rank
    pr.point = best[fi];
    pr.value = test_last[fi];
    pr.seconds = seconds[fi];
    report(GraphitCvProgress::Kind::kTested);
  }
  comm.allreduce_sum(test_last.data(), F);
  comm.allreduce_sum(test_final.data(), F);
  comm.allreduce_sum(seconds.data(), F);

  GraphitCvReport out;
  out.regression = regression;
  out.ranks = ranks;
  for (int fi = 0; fi < F; ++fi) {
    GraphitCvFold f;
    f.fold = which[fi];
    f.selected = best[fi];
    if (select)
      f.val.assign(val.begin() + static_cast<int64_t>(fi) * P, val.begin() + static_cast<int64_t>(fi + 1) * P);
    f.test_last = test_last[fi];
    f.test_final = test_final[fi];
    f.seconds = seconds[fi];
    out.mean += f.test_last;
    out.folds.push_back(std::move(f));
  }
  out.mean /= F;
  double var = 0;
  for (const GraphitCvFold& f : out.folds) var += (f.test_last - out.mean) * (f.test_last - out.mean);
  out.stddev = F > 1 ? std::sqrt(var / F) : 0.0;
  out.seconds = seconds_since(start);
  return out;
}

}  // namespace inductive
