// The reference GraphiT stepper: forward, backward and Adam on the host model (see inductive/graphit_stepper.h).
#include <algorithm>
#include <cmath>

#include "inductive/communicator.h"
#include "inductive/error.h"
#include "inductive/graphit_stepper.h"
#include "inductive/graphit_train.h"

namespace inductive {
namespace {

class CpuGraphitStepper final : public GraphitStepper {
 public:
  CpuGraphitStepper(GraphitModel& model, Adam& adam, const GraphitDataset& train, const GraphitTrainOptions& o)
      : model_(model), adam_(adam), train_(train), o_(o), grads_(GraphitParams::zeros(model.config)) {
    const GraphitConfig& c = model.config;
    comm_ = o.communicator && o.communicator->size() > 1 ? o.communicator : nullptr;
    rank_ = comm_ ? comm_->rank() : 0;
    ranks_ = comm_ ? comm_->size() : 1;
    // Parameter blocks: views into the model and the gradient, stable for the whole run.
    grad_views_ = grads_.tensors(c);  // writable: the ranks' summed gradient goes back here
    const auto pv = model.params.tensors(c);
    for (size_t t = 0; t < pv.size(); ++t)
      blocks_.push_back({pv[t].name, pv[t].data, grad_views_[t].data, pv[t].size(), true});
    for (const ParamBlock& b : blocks_) n_params_ += b.size;
    // Data parallel: the gradient of this rank's share, and the sum of every rank's (in float: half the bytes).
    sums_.resize(comm_ ? n_params_ : 0);
  }

  GraphitStepSums step(const std::vector<int>& order, int begin, int end, double lr, std::mt19937_64& rng) override {
    const GraphitConfig& c = model_.config;
    // This rank's share of the batch (all of it in one process).
    const Shard share = shard_of(end - begin, rank_, ranks_);
    const int lo = begin + static_cast<int>(share.begin), hi = begin + static_cast<int>(share.end);
    grads_.set_zero();
    double loss = 0, metric = 0;
    // The batch's mean loss is the sum of the shares' mean losses, each weighted by its share of graphs; the
    // backward pass scales by that weight, so the ranks' gradients add up to the batch's.
    const double weight = static_cast<double>(hi - lo) / (end - begin);
    if (hi > lo) {
      const std::vector<int> idx(order.begin() + lo, order.begin() + hi);
      GraphitBatch b = pack_graphit_batch(c, train_, idx);
      // The serial run's sign flips: the draws of the graphs before this share are skipped, those after it too.
      const auto flips = static_cast<unsigned long long>(c.pe_dim);
      if (o_.flip_pe_signs && comm_) rng.discard(flips * (lo - begin));
      if (o_.flip_pe_signs) b.flip_pe_signs(rng);
      if (o_.flip_pe_signs && comm_) rng.discard(flips * (end - hi));
      if (o_.batch_hook) o_.batch_hook(b, rng);
      GraphitRunOptions run;
      run.training = true;
      run.rng = &rng;
      run.running = c.norm == GraphitNorm::kBatch ? &model_.norm_stats : nullptr;
      if (comm_) {
        run.sync_norm = comm_;  // BatchNorm over the whole batch, as one process computes it
        run.grad_scale = weight;
        const GraphitSharePosition at = graphit_share_position(train_, order, begin, lo);  // one-process masks
        run.node_offset = at.nodes;
        run.sq_offset = at.squares;
      }
      loss = model_.loss(b, run, &grads_, &out_, &cache_);
      metric = graphit_batch_metric(c, out_, b);
    } else if (comm_) {
      if (o_.flip_pe_signs) rng.discard(static_cast<unsigned long long>(c.pe_dim) * (end - begin));
      if (c.dropout > 0) rng.discard(1);  // the forward pass's dropout key, drawn by the ranks with graphs
      // A batch with fewer graphs than ranks: still take part in BatchNorm's sums (and its running statistics).
      graphit_norm_sync_idle(c, *comm_, c.norm == GraphitNorm::kBatch ? &model_.norm_stats : nullptr);
    }
    GraphitStepSums s;
    if (comm_) {
      int64_t at = 0;
      for (const ParamBlock& pb : blocks_)
        for (int64_t k = 0; k < pb.size; ++k) sums_[at++] = pb.grad[k];
      comm_->allreduce_sum_float(sums_.data(), n_params_);
      at = 0;
      for (const auto& g : grad_views_)
        for (int64_t k = 0; k < g.size(); ++k) g.data[k] = sums_[at++];
      double scores[2] = {loss * (hi - lo), metric * (hi - lo)};  // loss and metric sum in double
      comm_->allreduce_sum(scores, 2);
      s.loss = scores[0];
      s.metric = scores[1];
      s.weight = 1;
    } else {
      s.loss = loss;
      s.metric = metric;
      s.weight = end - begin;
    }
    // Checked on the sum, so that every rank stops together (a rank throwing alone would leave the others waiting).
    INDUCTIVE_CHECK(std::isfinite(s.loss), ErrorCode::kInternal, "graphit train: loss became non-finite at step ",
                    adam_.steps() + 1, " (lower the learning rate)");
    adam_.options().lr = lr;
    adam_.step(blocks_);
    return s;
  }

  int64_t steps() const override { return adam_.steps(); }

  GraphitEvaluation evaluate(const GraphitDataset& data) override {
    return evaluate_graphit(model_, data, o_.eval_batch_size, &eval_cache_);
  }

  uint64_t parameter_hash() override {
    uint64_t h = 1469598103934665603ull;
    for (const ParamBlock& pb : blocks_) h = hash_floats(pb.value, pb.size, h);
    return h;
  }

  void pull(GraphitModel&, Adam&) override {}              // trained in place
  void push(const GraphitModel&, const Adam&) override {}  // idem

 private:
  GraphitModel& model_;
  Adam& adam_;
  const GraphitDataset& train_;
  const GraphitTrainOptions& o_;
  Communicator* comm_ = nullptr;
  int rank_ = 0, ranks_ = 1;
  GraphitParams grads_;
  std::vector<GraphitParams::Tensor> grad_views_;
  std::vector<ParamBlock> blocks_;
  int64_t n_params_ = 0;
  std::vector<float> sums_;
  GraphitCache cache_, eval_cache_;  // eval batches are larger: their own scratch, kept across epochs
  MatF out_;
};

}  // namespace

std::unique_ptr<GraphitStepper> make_cpu_graphit_stepper(GraphitModel& model, Adam& adam, const GraphitDataset& train,
                                                         const GraphitTrainOptions& options) {
  return std::make_unique<CpuGraphitStepper>(model, adam, train, options);
}

}  // namespace inductive
