// The device backends' GraphiT stepper (native/cuda/graphit_device_stepper.h) on the host executor, driven by
// train_graphit as `--backend cuda` drives the CUDA one: batches, LapPE sign flips, dropout draws, Adam's count and
// constants, evaluation, and pull/push through a checkpoint, held to the CPU stepper's run.
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <random>
#include <string>

#include "graphit/graphit_test_util.h"
#include "host_pass_backend.h"
#include "inductive/graphit_train.h"

namespace inductive {
namespace {

using testing::HostPassBackend;

GraphitDataset dataset(const GraphitConfig& c, int count, uint32_t seed) {
  return testing::random_dataset(c, count, 3, 12, seed);
}

GraphitTrainReport train_on(Backend* backend, GraphitModel& model, const GraphitDataset& train,
                            const GraphitDataset& val, int epochs, const std::string& checkpoint = {},
                            const std::function<void(GraphitTrainOptions&)>& adjust = {}) {
  GraphitTrainOptions o;
  o.epochs = epochs;
  o.batch_size = 8;
  o.seed = 4;
  o.lr_halve_every = 2;  // the schedule changes within the run
  o.backend = backend;
  o.checkpoint_path = checkpoint;
  if (adjust) adjust(o);
  return train_graphit(model, train, &val, nullptr, o);
}

TEST(DeviceGraphitStepper, ThreeEpochsMatchTheCpuRunAndResumeFromTheCheckpoint) {
  GraphitConfig c = GraphitConfig::with_dim(8, 2, 2);
  c.vocab = 4;
  c.pe_dim = 2;
  c.norm = GraphitNorm::kBatch;
  c.dropout = 0.1;
  c.outputs = 3;
  const GraphitDataset train = dataset(c, 30, 11), val = dataset(c, 12, 12);
  const GraphitModel start = GraphitModel::create(c, 3);
  HostPassBackend device;
  GraphitModel on_cpu = start, on_device = start;
  const GraphitTrainReport rc = train_on(nullptr, on_cpu, train, val, 3);
  const GraphitTrainReport rd = train_on(&device, on_device, train, val, 3);
  ASSERT_EQ(rd.history.size(), 3u);
  for (int e = 0; e < 3; ++e) {
    EXPECT_NEAR(rd.history[e].train_loss, rc.history[e].train_loss, 1e-4) << "epoch " << e + 1;
    EXPECT_NEAR(rd.history[e].val_loss, rc.history[e].val_loss, 1e-4) << "epoch " << e + 1;
    EXPECT_EQ(rd.history[e].lr, rc.history[e].lr);
  }
  // The model the device run leaves (pulled back into the host model): the CPU's, running statistics included.
  EXPECT_NEAR(evaluate_graphit(on_device, val).loss, evaluate_graphit(on_cpu, val).loss, 1e-4);
  ASSERT_EQ(on_device.norm_stats.size(), on_cpu.norm_stats.size());
  for (size_t l = 0; l < on_cpu.norm_stats.size(); ++l)
    EXPECT_LE((on_device.norm_stats[l].var2 - on_cpu.norm_stats[l].var2).norm(), 1e-4) << "layer " << l;
  // Interrupted after 2 epochs, resumed to 3: the uninterrupted device run.
  const std::string ck = ::testing::TempDir() + "/graphit_device_resume.ckpt";
  std::remove(ck.c_str());
  GraphitModel part = start;
  train_on(&device, part, train, val, 2, ck);
  GraphitModel resumed = start;
  const GraphitTrainReport rr = train_on(&device, resumed, train, val, 3, ck);
  EXPECT_TRUE(rr.resumed);
  ASSERT_EQ(rr.history.size(), 3u);
  EXPECT_NEAR(rr.history[2].val_loss, rd.history[2].val_loss, 1e-5);
  std::remove(ck.c_str());
}

// The next batch is packed (and staged on the device) while a step computes, from a copy of the epoch's generator,
// and taken when the next step asks for it from the same state: every step but each epoch's first is prefetched,
// and the run is the one whose batches are packed when their steps come, to the bit. A batch hook (user code,
// which a guess must not run) turns the prefetch off.
TEST(DeviceGraphitStepper, PrefetchedBatchesTrainTheRunOfBatchesPackedWhenTheyCome) {
  GraphitConfig c = GraphitConfig::with_dim(8, 2, 2);
  c.vocab = 4;
  c.pe_dim = 2;  // sign flips: the generator's draws at packing time
  c.norm = GraphitNorm::kBatch;
  c.dropout = 0.1;  // and at each step's forward pass
  const GraphitDataset train = dataset(c, 30, 21), val = dataset(c, 10, 22);
  const GraphitModel start = GraphitModel::create(c, 8);
  HostPassBackend ahead, when_they_come;
  when_they_come.prefetch = false;
  GraphitModel a = start, b = start;
  const GraphitTrainReport ra = train_on(&ahead, a, train, val, 3);
  EXPECT_EQ(ahead.last_stepper->prefetched_steps(), 3 * (4 - 1));  // 30 graphs in batches of 8: 4 steps an epoch
  const GraphitTrainReport rb = train_on(&when_they_come, b, train, val, 3);
  EXPECT_EQ(when_they_come.last_stepper->prefetched_steps(), 0);
  ASSERT_EQ(ra.history.size(), rb.history.size());
  for (size_t e = 0; e < ra.history.size(); ++e) {
    EXPECT_EQ(ra.history[e].train_loss, rb.history[e].train_loss) << "epoch " << e + 1;
    EXPECT_EQ(ra.history[e].val_loss, rb.history[e].val_loss) << "epoch " << e + 1;
  }
  const auto ta = a.params.tensors(c), tb = b.params.tensors(c);
  for (size_t t = 0; t < ta.size(); ++t)
    EXPECT_TRUE(std::equal(ta[t].data, ta[t].data + ta[t].size(), tb[t].data)) << ta[t].name;

  int hooked = 0;
  GraphitModel h = start;
  train_on(&ahead, h, train, val, 1, {},
           [&](GraphitTrainOptions& o) { o.batch_hook = [&](GraphitBatch&, std::mt19937_64&) { ++hooked; }; });
  EXPECT_EQ(hooked, 4);  // once per step, never for a guess
  EXPECT_EQ(ahead.last_stepper->prefetched_steps(), 0);
}

}  // namespace
}  // namespace inductive
