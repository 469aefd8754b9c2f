// inductive/graphit_head_fit.h - a GraphiT model's output layer refitted on a few labelled graphs.
//
// The few-labels story of the thesis, for graphs: the encoder, the pooling and the head's hidden layer stay as
// trained (frozen), and only the output layer is fitted again, on the hidden layer's activations, with the same
// recipe as an OTKE head (fit_head: multinomial logistic regression, L2 penalty chosen by cross-validation or the
// default, inputs standardised and the map folded back). The classes may be new (another task on the same kind of
// graphs): the refitted model's config names them, and the model file loads anywhere a trained one does.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "inductive/graphit.h"
#include "inductive/head_fit.h"

namespace inductive {

// The activations the output layer reads (the head's hidden layer, after its ReLU), graphs x config.hidden, in
// evaluation mode, computed `batch_size` graphs at a time; progress stage "hidden" after each batch (optional).
MatF graphit_hidden(const GraphitModel& model, const std::vector<GraphitGraph>& graphs, int batch_size = 64,
                    const ProgressFn& progress = {});

struct GraphitHeadRefit {
  GraphitModel model;  // the input model with the new output layer, task "classification", the given classes
  HeadFit fit;         // how the head was fitted (lambda, cross-validation path, training accuracy)
};

// labels[g] in [0, class_names.size()) for graphs[g]; at least 2 classes, each with a label (fit_head's checks).
// options.progress sees the stages "hidden" (the frozen network on every graph), then fit_head's.
GraphitHeadRefit refit_graphit_head(const GraphitModel& model, const std::vector<GraphitGraph>& graphs,
                                    const std::vector<int32_t>& labels, const std::vector<std::string>& class_names,
                                    const HeadFitOptions& options);

}  // namespace inductive
