// The CPU OTKE stepper: otke_loss and Adam on the host model, in place (the reference for every other backend).
#include <string>

#include "inductive/otke_stepper.h"

namespace inductive {

OtkeLossOptions otke_loss_options(const OtkeConfig& c, const OtkeTrainOptions& options) {
  OtkeLossOptions lo;
  lo.tokens = options.train_tokens && c.input_type == "tokens";
  lo.anchors = options.train_anchors && c.embedding != "identity";
  lo.references = options.train_references && c.pooling == "otk";
  lo.sinkhorn_gradient = options.sinkhorn_gradient;
  return lo;
}

namespace {

class CpuOtkeStepper final : public OtkeStepper {
 public:
  // Only the layers this model has learn (a default OtkeLossOptions asks for all of them).
  CpuOtkeStepper(OtkeModel& model, Adam& adam, const OtkeLossOptions& loss) : model_(model), adam_(adam), lo_(loss) {
    const OtkeConfig& c = model.config;
    lo_.tokens = lo_.tokens && c.input_type == "tokens";
    lo_.anchors = lo_.anchors && c.embedding != "identity";
    lo_.references = lo_.references && c.pooling == "otk";
  }

  double step(const SetBatch& x, const std::vector<int32_t>& y, double lr) override {
    const OtkeConfig& c = model_.config;
    OtkeGradients g;
    const double loss = otke_loss(model_, x, y, &g, lo_);
    // Copies of the parameters the layers own, stepped together, then handed back (anchors are renormalised and
    // the Nystrom factor recomputed by set_anchors).
    MatF anchors = lo_.anchors && c.embedding == "nystrom" ? model_.nystrom.anchors() : MatF();
    std::vector<MatF> refs = lo_.references ? model_.pooling.references() : std::vector<MatF>();
    std::vector<ParamBlock> blocks;
    blocks.push_back({"head.weight", model_.head.weight.data(), g.head_weight.data(), model_.head.weight.size(), true});
    blocks.push_back({"head.bias", model_.head.bias.data(), g.head_bias.data(), model_.head.bias.size(), false});
    if (lo_.tokens)
      blocks.push_back({"tokens.embedding", model_.token_table.data(), g.tokens.data(), model_.token_table.size(), true});
    if (anchors.size()) blocks.push_back({"nystrom.anchors", anchors.data(), g.anchors.data(), anchors.size(), false});
    if (lo_.anchors && c.embedding == "conv") {
      blocks.push_back({"conv.weight", model_.conv_weight.data(), g.conv_weight.data(), model_.conv_weight.size(), true});
      blocks.push_back({"conv.bias", model_.conv_bias.data(), g.conv_bias.data(), model_.conv_bias.size(), false});
    }
    for (size_t r = 0; r < refs.size(); ++r)
      blocks.push_back({"otk.references." + std::to_string(r), refs[r].data(), g.references[r].data(), refs[r].size(),
                        false});
    adam_.options().lr = lr;
    adam_.step(blocks);
    if (anchors.size()) model_.nystrom.set_anchors(std::move(anchors));
    if (!refs.empty()) model_.pooling.set_references(std::move(refs));
    return loss;
  }

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
  OtkeModel& model_;
  Adam& adam_;
  OtkeLossOptions lo_;
};

}  // namespace

std::unique_ptr<OtkeStepper> make_cpu_otke_stepper(OtkeModel& model, Adam& adam, const OtkeLossOptions& loss) {
  return std::make_unique<CpuOtkeStepper>(model, adam, loss);
}

}  // namespace inductive
