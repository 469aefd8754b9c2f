#include "inductive/graphit_head_fit.h"

#include <algorithm>

#include "inductive/error.h"

namespace inductive {

MatF graphit_hidden(const GraphitModel& model, const std::vector<GraphitGraph>& graphs, int batch_size,
                    const ProgressFn& progress) {
  INDUCTIVE_CHECK(batch_size >= 1, ErrorCode::kInvalidArgument, "graphit: batch size must be >= 1: got ", batch_size);
  INDUCTIVE_CHECK(!graphs.empty(), ErrorCode::kInvalidArgument, "graphit: no graph given");
  const int n = static_cast<int>(graphs.size());
  MatF hidden(n, model.config.hidden);
  GraphitCache cache;
  GraphitRunOptions outputs_only;  // the hidden layer is an output; no layer's activations are needed
  outputs_only.keep_layers = false;
  for (int begin = 0; begin < n; begin += batch_size) {
    const int end = std::min(n, begin + batch_size);
    std::vector<int> idx;
    for (int g = begin; g < end; ++g) idx.push_back(g);
    model.forward(GraphitBatch::pack(model.config, graphs, idx), outputs_only, &cache);
    hidden.middleRows(begin, end - begin) = cache.hidden;
    if (progress) progress("hidden", static_cast<double>(end) / n);
  }
  return hidden;
}

GraphitHeadRefit refit_graphit_head(const GraphitModel& model, const std::vector<GraphitGraph>& graphs,
                                    const std::vector<int32_t>& labels, const std::vector<std::string>& class_names,
                                    const HeadFitOptions& options) {
  const int C = static_cast<int>(class_names.size());
  INDUCTIVE_CHECK(C >= 2, ErrorCode::kInvalidArgument, "graphit refit: need at least 2 classes, got ", C);
  INDUCTIVE_CHECK(labels.size() == graphs.size(), ErrorCode::kShapeMismatch, "graphit refit: ", labels.size(),
                  " labels for ", graphs.size(), " graphs; expected one label per graph");
  const MatF hidden = graphit_hidden(model, graphs, 64, options.progress);
  HeadFitOptions o = options;
  if (o.class_names.empty()) o.class_names = class_names;
  GraphitHeadRefit out{model, fit_head(hidden, labels, C, o)};
  GraphitConfig& c = out.model.config;
  c.task = GraphitTask::kClassification;
  c.outputs = C;
  c.class_labels = class_names;
  c.validate();
  out.model.params.out_weight = out.fit.head.weight;
  out.model.params.out_bias = out.fit.head.bias;
  return out;
}

}  // namespace inductive
