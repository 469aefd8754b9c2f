// Data-parallel OTKE steps over a Communicator, for any stepper that splits its step (see inductive/otke_stepper.h):
// the CPU's, and a device's, whose gradients come to the host for the sum.
#include <chrono>
#include <utility>

#include "inductive/communicator.h"
#include "inductive/otke_stepper.h"

namespace inductive {

OtkeGradients zero_otke_gradients(const OtkeModel& m, const OtkeLossOptions& lo) {
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

double OtkeStepper::share_gradients(const std::vector<int>&, const std::vector<int32_t>&, int, OtkeGradients*) {
  INDUCTIVE_FAIL(ErrorCode::kBackend, "otke train: this backend cannot split a step across ranks");
}
void OtkeStepper::apply_gradients(OtkeGradients&, double) {
  INDUCTIVE_FAIL(ErrorCode::kBackend, "otke train: this backend cannot split a step across ranks");
}
int64_t OtkeStepper::sum_gradients_on_device(float) {
  INDUCTIVE_FAIL(ErrorCode::kInternal, "otke train: this backend does not sum gradients on a device");
}
void OtkeStepper::apply_gradients_on_device(double) {
  INDUCTIVE_FAIL(ErrorCode::kInternal, "otke train: this backend does not sum gradients on a device");
}

namespace {

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

class DataParallelOtkeStepper final : public OtkeStepper {
 public:
  DataParallelOtkeStepper(std::unique_ptr<OtkeStepper> inner, Communicator& comm)
      : inner_(std::move(inner)), comm_(comm) {}

  double step(const SetBatch& x, const std::vector<int32_t>& y, double lr) override { return inner_->step(x, y, lr); }
  void bind(const SetBatch& data) override {
    bound_ = &data;
    inner_->bind(data);
  }

  // This rank's contiguous share of the batch, the ranks' gradient sums added in a fixed order, then the same Adam
  // step on every rank. Equal to step() on the whole batch up to float rounding.
  double step_on(const std::vector<int>& indices, const std::vector<int32_t>& labels, double lr) override {
    INDUCTIVE_CHECK(bound_ != nullptr, ErrorCode::kInternal, "otke stepper: step_on before bind");
    INDUCTIVE_CHECK(labels.size() == indices.size(), ErrorCode::kShapeMismatch, "otke loss: ", labels.size(),
                    " labels for ", indices.size(), " sets");
    const Shard sh = shard_of(static_cast<int64_t>(indices.size()), comm_.rank(), comm_.size());
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<int> mine(indices.begin() + sh.begin, indices.begin() + sh.end);
    const std::vector<int32_t> y(labels.begin() + sh.begin, labels.begin() + sh.end);
    const double share = static_cast<double>(mine.size()), total = static_cast<double>(indices.size());
    // Where the gradients are (NCCL between GPUs), else through the host in float (half the bytes); the loss in double.
    const bool on_device = inner_->sums_on_device(comm_);
    OtkeGradients g;
    double loss_sum = inner_->share_gradients(mine, y, comm_.rank(), on_device ? nullptr : &g) * share;
    const auto t1 = std::chrono::steady_clock::now();
    std::vector<float> flat;
    if (on_device) {
      stats_.allreduce_bytes = inner_->sum_gradients_on_device(static_cast<float>(share / total));
    } else {
      for (auto [data, size] : tensors_of(g))
        for (int64_t i = 0; i < size; ++i) flat.push_back(data[i] * static_cast<float>(share));
      comm_.allreduce_sum_float(flat.data(), static_cast<int64_t>(flat.size()));
      stats_.allreduce_bytes = static_cast<int64_t>(flat.size() * sizeof(float));
    }
    comm_.allreduce_sum(&loss_sum, 1);
    stats_.allreduce_bytes += static_cast<int64_t>(sizeof(double));
    const auto t2 = std::chrono::steady_clock::now();
    ++stats_.steps;
    stats_.compute_seconds += std::chrono::duration<double>(t1 - t0).count();
    stats_.allreduce_seconds += std::chrono::duration<double>(t2 - t1).count();
    if (on_device) {
      inner_->apply_gradients_on_device(lr);
    } else {
      size_t at = 0;
      for (auto [data, size] : tensors_of(g))
        for (int64_t i = 0; i < size; ++i) data[i] = static_cast<float>(flat[at++] / total);
      inner_->apply_gradients(g, lr);
    }
    return loss_sum / total;
  }

  MatF logits(const SetBatch& x) override { return inner_->logits(x); }
  MatF embed(const SetBatch& x) override { return inner_->embed(x); }
  void pull(OtkeModel& model, Adam& adam) override { inner_->pull(model, adam); }
  void push(const OtkeModel& model, const Adam& adam) override { inner_->push(model, adam); }
  OtkeStepStats stats() const override { return stats_; }

 private:
  std::unique_ptr<OtkeStepper> inner_;
  Communicator& comm_;
  OtkeStepStats stats_;
};

}  // namespace

std::unique_ptr<OtkeStepper> make_data_parallel_otke_stepper(std::unique_ptr<OtkeStepper> inner, Communicator& comm) {
  return std::make_unique<DataParallelOtkeStepper>(std::move(inner), comm);
}

}  // namespace inductive
