// Training checkpoints (inductive/checkpoint.h): what one trainer writes, it reads back exactly; anything else is
// refused with the file's path and what is wrong.
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../test_util.h"
#include "inductive/atomic_file.h"
#include "inductive/checkpoint.h"

namespace inductive {
namespace {

using testing::expect_error;

struct Fixture {
  std::vector<float> w{1, 2, 3, 4, 5, 6}, b{0.5f};
  ModelContents model, best;
  Adam adam;
  std::string path = inductive::testing::temp_path("checkpoint_test.ck");
  Fixture() {
    model.model = "toy";
    model.config = {{"width", 3}};
    model.tensors = {{"w", DType::kF32, {2, 3}, w.data()}, {"b", DType::kF32, {1}, b.data()}};
    best = model;
    best.tensors = {{"w", DType::kF32, {2, 3}, w.data() + 0}, {"b", DType::kF32, {1}, b.data()}};
    // Two Adam steps on the blocks, so that moments and the step count are not trivial.
    std::vector<float> gw(6, 0.25f), gb(1, -1.0f);
    std::vector<ParamBlock> blocks{{"w", w.data(), gw.data(), 6, true}, {"b", b.data(), gb.data(), 1, false}};
    adam.step(blocks);
    adam.step(blocks);
  }
  ~Fixture() { std::remove(path.c_str()); }
  bool same(const nlohmann::json& c) const { return c == model.config; }
};

TEST(Checkpoint, ReadsBackModelsAdamAndState) {
  Fixture f;
  save_checkpoint_file(f.path, "toy", {{"model/", &f.model}, {"best/", &f.best}}, f.adam, {{"epoch", 7}});
  const auto ck = CheckpointFile::read(f.path, "toy", [&](const nlohmann::json& c) { return f.same(c); });
  ASSERT_TRUE(ck.has_value());
  EXPECT_EQ(ck->state().at("epoch"), 7);
  EXPECT_EQ(ck->state().at("adam_steps"), 2);
  const ModelView m = ck->model("model/");
  EXPECT_EQ(m.model, "toy");
  EXPECT_EQ(m.config, f.model.config);
  ASSERT_EQ(m.tensors.size(), 2u);
  EXPECT_EQ(m.f32("w", {2, 3})[5], f.w[5]);  // the values written (after Adam's steps)
  EXPECT_EQ(ck->model("best/").tensors.size(), 2u);
  Adam back;
  ck->restore(back);
  EXPECT_EQ(back.steps(), 2);
  ASSERT_EQ(back.moments().size(), f.adam.moments().size());
  for (const Adam::Moments& want : f.adam.moments()) {  // by block name (the file keeps them sorted)
    int found = 0;
    for (const Adam::Moments& got : back.moments())
      if (got.name == want.name) {
        ++found;
        EXPECT_EQ(got.m, want.m);
        EXPECT_EQ(got.v, want.v);
      }
    EXPECT_EQ(found, 1) << want.name;
  }
  EXPECT_FALSE(CheckpointFile::read("", "toy", [](const nlohmann::json&) { return true; }).has_value());
  EXPECT_FALSE(CheckpointFile::read(f.path + ".none", "toy", [](const nlohmann::json&) { return true; }).has_value());
}

TEST(Checkpoint, RefusesAnotherKindAnotherConfigAndBrokenContents) {
  Fixture f;
  save_checkpoint_file(f.path, "toy", {{"model/", &f.model}}, f.adam, {{"epoch", 1}});
  auto any = [](const nlohmann::json&) { return true; };
  expect_error([&] { CheckpointFile::read(f.path, "graphit", any); }, ErrorCode::kBadModelFile,
               f.path + ": not a training checkpoint of a graphit model (model 'toy-checkpoint')");
  expect_error([&] { CheckpointFile::read(f.path, "toy", [](const nlohmann::json&) { return false; }); },
               ErrorCode::kInvalidArgument, "written for another model configuration");
  const auto ck = CheckpointFile::read(f.path, "toy", any);
  expect_error([&] { ck->with_context([&] { ck->state().at("missing").get<int>(); }); }, ErrorCode::kBadModelFile,
               f.path + ": checkpoint state is malformed");

  // Moments without their second half: written by hand, as a damaged or foreign file would be.
  ModelContents broken;
  broken.model = "toy-checkpoint";
  broken.config = {{"model", f.model.config}, {"state", {{"adam_steps", 1}}}};
  std::vector<float> m(6, 0.1f);
  broken.tensors = {{"model/w", DType::kF32, {2, 3}, f.w.data()}, {"adam.m/w", DType::kF32, {6}, m.data()}};
  save_model_file(f.path, broken);
  const auto bad = CheckpointFile::read(f.path, "toy", any);
  Adam a;
  expect_error([&] { bad->with_context([&] { bad->restore(a); }); }, ErrorCode::kBadModelFile,
               f.path + ": checkpoint: moments of 'w' are incomplete");
  write_file_atomic(f.path, std::vector<uint8_t>{'n', 'o', 'p', 'e'});
  expect_error([&] { CheckpointFile::read(f.path, "toy", any); }, ErrorCode::kBadModelFile, f.path + ": ");
}

}  // namespace
}  // namespace inductive
