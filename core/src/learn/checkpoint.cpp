// Training checkpoints (see inductive/checkpoint.h).
#include "inductive/checkpoint.h"

#include "inductive/error.h"
#include "inductive/files.h"

namespace inductive {

void save_checkpoint_file(const std::string& path, const std::string& model_kind,
                          const std::vector<std::pair<std::string, const ModelContents*>>& models, const Adam& adam,
                          nlohmann::json state) {
  ModelContents ck;
  ck.model = model_kind + "-checkpoint";
  state["adam_steps"] = adam.steps();
  ck.config = {{"model", models.front().second->config}, {"state", std::move(state)}};
  for (const auto& [prefix, contents] : models)
    for (const TensorData& t : contents->tensors) ck.tensors.push_back({prefix + t.name, t.dtype, t.shape, t.data});
  for (const auto& m : adam.moments()) {
    ck.tensors.push_back({"adam.m/" + m.name, DType::kF32, {static_cast<int64_t>(m.m.size())}, m.m.data()});
    ck.tensors.push_back({"adam.v/" + m.name, DType::kF32, {static_cast<int64_t>(m.v.size())}, m.v.data()});
  }
  save_model_file(path, ck);
}

void CheckpointFile::with_context(const std::function<void()>& body) const {
  try {
    body();
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorCode::kBadModelFile, path_ + ": checkpoint state is malformed: " + e.what());
  } catch (const Error& e) {
    throw Error(e.code(), path_ + ": " + e.what());
  }
}

std::optional<CheckpointFile> CheckpointFile::read(const std::string& path, const std::string& model_kind,
                                                   const std::function<bool(const nlohmann::json&)>& same_config) {
  if (path.empty() || !file_exists(path)) return std::nullopt;
  CheckpointFile ck;
  ck.path_ = path;
  ck.model_kind_ = model_kind;
  ck.bytes_ = read_file_bytes(path);
  ck.with_context([&] {
    ck.view_ = read_model(ck.bytes_.data(), ck.bytes_.size());
    INDUCTIVE_CHECK(ck.view_.model == model_kind + "-checkpoint", ErrorCode::kBadModelFile,
                    "not a training checkpoint of a ", model_kind, " model (model '", ck.view_.model, "')");
    INDUCTIVE_CHECK(ck.view_.config.contains("model") && ck.view_.config.contains("state"), ErrorCode::kBadModelFile,
                    "checkpoint config lacks model/state");
    INDUCTIVE_CHECK(same_config(ck.view_.config["model"]), ErrorCode::kInvalidArgument,
                    "checkpoint was written for another model configuration; delete it or use the same options");
  });
  return ck;
}

ModelView CheckpointFile::model(const std::string& prefix) const {
  ModelView v = view_;
  v.model = model_kind_;
  v.config = view_.config.at("model");
  v.tensors.clear();
  for (const TensorInfo& t : view_.tensors)
    if (t.name.compare(0, prefix.size(), prefix) == 0) {
      TensorInfo renamed = t;
      renamed.name = t.name.substr(prefix.size());
      v.tensors.push_back(renamed);
    }
  return v;
}

void CheckpointFile::restore(Adam& adam) const {
  std::vector<Adam::Moments> moments;
  for (const TensorInfo& t : view_.tensors) {
    if (t.name.compare(0, 7, "adam.m/") != 0) continue;
    const std::string name = t.name.substr(7);
    const TensorInfo* v = view_.find("adam.v/" + name);
    INDUCTIVE_CHECK(v && v->numel() == t.numel(), ErrorCode::kBadModelFile, "checkpoint: moments of '", name,
                    "' are incomplete");
    const float* m = view_.f32(t.name, t.shape);
    const float* vv = view_.f32(v->name, v->shape);
    moments.push_back({name, std::vector<float>(m, m + t.numel()), std::vector<float>(vv, vv + v->numel())});
  }
  adam.restore(std::move(moments), state().at("adam_steps").get<int64_t>());
}

}  // namespace inductive
