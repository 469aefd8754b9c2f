// The CPU OTKE stepper: otke_loss and Adam on the host model, in place (the reference for every other backend).
#include <chrono>
#include <string>

#include "inductive/communicator.h"
#include "inductive/otke_stepper.h"
#include "inductive/random.h"

namespace inductive {

OtkeLossOptions learning_layers(const OtkeConfig& c, OtkeLossOptions lo) {
  lo.tokens = lo.tokens && c.input_type == OtkeInput::kTokens;
  lo.anchors = lo.anchors && c.embedding != OtkeEmbedding::kIdentity;
  lo.references = lo.references && c.pooling == OtkePooling::kOtk;
  return lo;
}

OtkeLossOptions otke_loss_options(const OtkeConfig& c, const OtkeTrainOptions& options) {
  OtkeLossOptions lo;
  lo.tokens = options.train_tokens;
  lo.anchors = options.train_anchors;
  lo.references = options.train_references;
  lo.sinkhorn_gradient = options.sinkhorn_gradient;
  lo.dropout_seed = options.seed;
  return learning_layers(c, lo);
}

namespace {

// Zero gradients with the shapes otke_loss gives this model under `lo` (a rank whose share of a batch is empty).
OtkeGradients zero_gradients(const OtkeModel& m, const OtkeLossOptions& lo) {
  const OtkeConfig& c = m.config;
  OtkeGradients g;
  if (lo.head) {
    g.head_weight = MatF::Zero(m.head.weight.rows(), m.head.weight.cols());
    g.head_bias = VecF::Zero(m.head.bias.size());
    if (c.hidden > 0) {
      g.hidden_weight = MatF::Zero(m.hidden.weight.rows(), m.hidden.weight.cols());
      g.hidden_bias = VecF::Zero(m.hidden.bias.size());
    }
  }
  if (lo.tokens) g.tokens = MatF::Zero(m.token_table.rows(), m.token_table.cols());
  if (lo.anchors && c.embedding == OtkeEmbedding::kNystrom)
    g.anchors = MatF::Zero(m.nystrom.num_anchors(), m.nystrom.dim());
  if (lo.anchors && c.embedding == OtkeEmbedding::kConv) {
    g.conv_weight = MatF::Zero(m.conv_weight.rows(), m.conv_weight.cols());
    g.conv_bias = VecF::Zero(m.conv_bias.size());
  }
  if (lo.references)
    for (const MatF& z : m.pooling.references()) g.references.push_back(MatF::Zero(z.rows(), z.cols()));
  return g;
}

// Every gradient tensor, in one fixed order (the order ranks sum them in).
std::vector<std::pair<float*, int64_t>> tensors_of(OtkeGradients& g) {
  std::vector<std::pair<float*, int64_t>> t = {{g.head_weight.data(), g.head_weight.size()},
                                               {g.head_bias.data(), g.head_bias.size()},
                                               {g.tokens.data(), g.tokens.size()},
                                               {g.anchors.data(), g.anchors.size()},
                                               {g.conv_weight.data(), g.conv_weight.size()},
                                               {g.conv_bias.data(), g.conv_bias.size()},
                                               {g.hidden_weight.data(), g.hidden_weight.size()},
                                               {g.hidden_bias.data(), g.hidden_bias.size()}};
  for (MatF& z : g.references) t.push_back({z.data(), z.size()});
  return t;
}

class CpuOtkeStepper final : public OtkeStepper {
 public:
  // Only the layers this model has learn (a default OtkeLossOptions asks for all of them).
  CpuOtkeStepper(OtkeModel& model, Adam& adam, const OtkeLossOptions& loss, Communicator* comm)
      : model_(model), adam_(adam), lo_(learning_layers(model.config, loss)), comm_(comm) {}

  double step(const SetBatch& x, const std::vector<int32_t>& y, double lr) override {
    OtkeGradients g;
    const double loss = otke_loss(model_, x, y, &g, step_options());
    apply(g, lr);
    return loss;
  }

  // Data parallel: this rank's contiguous share of the batch, the ranks' gradient sums added in rank order, then
  // the same Adam step on every rank. Equal to step() on the whole batch up to float rounding.
  double step_on(const std::vector<int>& indices, const std::vector<int32_t>& labels, double lr) override {
    if (!comm_ || comm_->size() == 1) return OtkeStepper::step_on(indices, labels, lr);
    INDUCTIVE_CHECK(bound_ != nullptr, ErrorCode::kInternal, "otke stepper: step_on before bind");
    const Shard sh = shard_of(static_cast<int64_t>(indices.size()), comm_->rank(), comm_->size());
    const auto t0 = std::chrono::steady_clock::now();
    OtkeGradients g = zero_gradients(model_, lo_);
    double loss_sum = 0;
    if (sh.end > sh.begin) {
      const std::vector<int> mine(indices.begin() + sh.begin, indices.begin() + sh.end);
      const std::vector<int32_t> y(labels.begin() + sh.begin, labels.begin() + sh.end);
      loss_sum = otke_loss(model_, bound_->gather(mine), y, &g, step_options()) * static_cast<double>(mine.size());
      for (auto [data, size] : tensors_of(g))
        for (int64_t i = 0; i < size; ++i) data[i] *= static_cast<float>(mine.size());
    }
    // Gradients sum in float (half the bytes), the loss in double.
    std::vector<float> flat;
    for (auto [data, size] : tensors_of(g)) flat.insert(flat.end(), data, data + size);
    const auto t1 = std::chrono::steady_clock::now();
    comm_->allreduce_sum_float(flat.data(), static_cast<int64_t>(flat.size()));
    comm_->allreduce_sum(&loss_sum, 1);
    const auto t2 = std::chrono::steady_clock::now();
    ++stats_.steps;
    stats_.compute_seconds += std::chrono::duration<double>(t1 - t0).count();
    stats_.allreduce_seconds += std::chrono::duration<double>(t2 - t1).count();
    stats_.allreduce_bytes = static_cast<int64_t>(flat.size() * sizeof(float) + sizeof(double));
    const double total = static_cast<double>(indices.size());
    size_t at = 0;
    for (auto [data, size] : tensors_of(g))
      for (int64_t i = 0; i < size; ++i) data[i] = static_cast<float>(flat[at++] / total);
    apply(g, lr);
    return loss_sum / total;
  }

  MatF logits(const SetBatch& x) override { return model_.predict(model_.embed(x)); }
  MatF embed(const SetBatch& x) override { return model_.embed(x); }
  OtkeStepStats stats() const override { return stats_; }

  void pull(OtkeModel& model, Adam& adam) override {
    INDUCTIVE_CHECK(&model == &model_ && &adam == &adam_, ErrorCode::kInternal,
                    "otke cpu stepper: pull into another model than the one it trains");
  }
  void push(const OtkeModel& model, const Adam& adam) override {
    INDUCTIVE_CHECK(&model == &model_ && &adam == &adam_, ErrorCode::kInternal,
                    "otke cpu stepper: push from another model than the one it trains");
  }

 private:
  // One Adam step on every parameter `g` has a gradient for.
  void apply(OtkeGradients& g, double lr) {
    const OtkeConfig& c = model_.config;
    // Copies of the parameters the layers own, stepped together, then handed back (anchors are renormalised and
    // the Nystrom factor recomputed by set_anchors).
    MatF anchors = lo_.anchors && c.embedding == OtkeEmbedding::kNystrom ? model_.nystrom.anchors() : MatF();
    std::vector<MatF> refs = lo_.references ? model_.pooling.references() : std::vector<MatF>();
    std::vector<ParamBlock> blocks;
    blocks.push_back({"head.weight", model_.head.weight.data(), g.head_weight.data(), model_.head.weight.size(), true});
    blocks.push_back({"head.bias", model_.head.bias.data(), g.head_bias.data(), model_.head.bias.size(), false});
    if (c.hidden > 0) {
      blocks.push_back({"head.hidden.weight", model_.hidden.weight.data(), g.hidden_weight.data(),
                        model_.hidden.weight.size(), true});
      blocks.push_back(
          {"head.hidden.bias", model_.hidden.bias.data(), g.hidden_bias.data(), model_.hidden.bias.size(), false});
    }
    if (lo_.tokens)
      blocks.push_back(
          {"tokens.embedding", model_.token_table.data(), g.tokens.data(), model_.token_table.size(), true});
    if (anchors.size()) blocks.push_back({"nystrom.anchors", anchors.data(), g.anchors.data(), anchors.size(), false});
    if (lo_.anchors && c.embedding == OtkeEmbedding::kConv) {
      blocks.push_back(
          {"conv.weight", model_.conv_weight.data(), g.conv_weight.data(), model_.conv_weight.size(), true});
      blocks.push_back({"conv.bias", model_.conv_bias.data(), g.conv_bias.data(), model_.conv_bias.size(), false});
    }
    for (size_t r = 0; r < refs.size(); ++r)
      blocks.push_back(
          {"otk.references." + std::to_string(r), refs[r].data(), g.references[r].data(), refs[r].size(), false});
    adam_.options().lr = lr;
    adam_.step(blocks);
    if (anchors.size()) model_.nystrom.set_anchors(std::move(anchors));
    if (!refs.empty()) model_.pooling.set_references(std::move(refs));
  }

  // The loss options of the next step: a fresh dropout mask per step (and per rank), replayable from the seed and
  // the step count, which a resumed run restores from Adam's step counter.
  OtkeLossOptions step_options() const {
    OtkeLossOptions lo = lo_;
    if (model_.config.dropout > 0) {
      lo.dropout = true;
      lo.dropout_seed = otke_step_dropout_seed(lo_.dropout_seed, adam_.steps(), comm_ ? comm_->rank() : 0);
    }
    return lo;
  }

  OtkeModel& model_;
  Adam& adam_;
  OtkeLossOptions lo_;
  Communicator* comm_;
  OtkeStepStats stats_;
};

}  // namespace

std::unique_ptr<OtkeStepper> make_cpu_otke_stepper(OtkeModel& model, Adam& adam, const OtkeLossOptions& loss,
                                                   Communicator* comm) {
  return std::make_unique<CpuOtkeStepper>(model, adam, loss, comm);
}

}  // namespace inductive
