// The CPU OTKE stepper: otke_loss and Adam on the host model, in place (the reference for every other backend).
#include <string>

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

class CpuOtkeStepper final : public OtkeStepper {
 public:
  // Only the layers this model has learn (a default OtkeLossOptions asks for all of them).
  CpuOtkeStepper(OtkeModel& model, Adam& adam, const OtkeLossOptions& loss)
      : model_(model), adam_(adam), lo_(learning_layers(model.config, loss)) {}

  double step(const SetBatch& x, const std::vector<int32_t>& y, double lr) override {
    OtkeGradients g;
    const double loss = otke_loss(model_, x, y, &g, step_options(0));
    apply(g, lr);
    return loss;
  }

  double share_gradients(const std::vector<int>& indices, const std::vector<int32_t>& labels, int rank,
                         OtkeGradients* grads) override {
    INDUCTIVE_CHECK(bound_ != nullptr, ErrorCode::kInternal, "otke stepper: share_gradients before bind");
    if (indices.empty()) {
      *grads = zero_otke_gradients(model_, lo_);
      return 0.0;
    }
    return otke_loss(model_, bound_->gather(indices), labels, grads, step_options(rank));
  }
  void apply_gradients(OtkeGradients& grads, double lr) override { apply(grads, lr); }

  MatF logits(const SetBatch& x) override { return model_.predict(model_.embed(x)); }
  MatF embed(const SetBatch& x) override { return model_.embed(x); }

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

  // The loss options of the next step on `rank`: a fresh dropout mask per step (and per rank), replayable from the
  // seed and the step count, which a resumed run restores from Adam's step counter.
  OtkeLossOptions step_options(int rank) const {
    OtkeLossOptions lo = lo_;
    if (model_.config.dropout > 0) {
      lo.dropout = true;
      lo.dropout_seed = otke_step_dropout_seed(lo_.dropout_seed, adam_.steps(), rank);
    }
    return lo;
  }

  OtkeModel& model_;
  Adam& adam_;
  OtkeLossOptions lo_;
};

}  // namespace

std::unique_ptr<OtkeStepper> make_cpu_otke_stepper(OtkeModel& model, Adam& adam, const OtkeLossOptions& loss) {
  return std::make_unique<CpuOtkeStepper>(model, adam, loss);
}

}  // namespace inductive
