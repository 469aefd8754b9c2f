// GradientBuckets (native/cuda/device_allreduce.h): the spans a backward pass hands over, last layers first, are
// summed once each, in buckets of at least the bucket size (the last one excepted), a small rest joins the last
// bucket, and finish() covers what is left.
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "device_allreduce.h"

namespace inductive {
namespace {

// Records the spans it is asked to sum, as offsets into one buffer.
class Recorder final : public device::DeviceAllreduce {
 public:
  explicit Recorder(const float* base) : base_(base) {}
  int ranks() const override { return 2; }
  void sum(double*, int64_t) override {}
  void start_gradient_sum(float* data, int64_t count) override { spans.emplace_back(data - base_, count); }
  void finish_gradients() override { ++finishes; }
  std::vector<std::pair<int64_t, int64_t>> spans;
  int finishes = 0;

 private:
  const float* base_;
};

TEST(GradientBuckets, EverySpanIsSummedOnceLastLayersFirstInBucketsOfAtLeastTheBucketSize) {
  std::vector<float> grads(100);
  Recorder r(grads.data());
  device::GradientBuckets b(r, 25);
  b.begin(grads.data(), 100);
  b.ready(90);  // head: 10 values, below a bucket
  EXPECT_TRUE(r.spans.empty());
  b.ready(70);  // layer 3: 30 values pending
  b.ready(60);
  b.ready(40);  // layers 2 and 1: 30 more
  b.ready(30);  // layer 0: 10 pending, and only 30 values to come
  EXPECT_EQ(r.finishes, 0);
  b.finish();  // the inputs
  EXPECT_EQ(r.spans, (std::vector<std::pair<int64_t, int64_t>>{{70, 30}, {40, 30}, {0, 40}}));
  EXPECT_EQ(r.finishes, 1);
}

TEST(GradientBuckets, ASmallRestJoinsTheLastBucketInsteadOfPayingALatencyOfItsOwn) {
  std::vector<float> grads(100);
  Recorder r(grads.data());
  device::GradientBuckets b(r, 25);
  b.begin(grads.data(), 100);
  b.ready(60);  // 40 pending, 60 to come: a bucket
  b.ready(10);  // 50 pending, but only 10 to come: they wait for the rest
  b.finish();
  EXPECT_EQ(r.spans, (std::vector<std::pair<int64_t, int64_t>>{{60, 40}, {0, 60}}));
  // A bucket as large as the buffer: one sum, at the end; a second pass starts afresh.
  r.spans.clear();
  device::GradientBuckets whole(r, 1000);
  for (int pass = 0; pass < 2; ++pass) {
    whole.begin(grads.data(), 100);
    whole.ready(50);
    whole.finish();
  }
  EXPECT_EQ(r.spans, (std::vector<std::pair<int64_t, int64_t>>{{0, 100}, {0, 100}}));
  EXPECT_EQ(r.finishes, 3);
}

}  // namespace
}  // namespace inductive
