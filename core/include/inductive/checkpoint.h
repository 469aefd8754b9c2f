// inductive/checkpoint.h - training checkpoints, one module for every trainer (OTKE, GraphiT).
//
// A checkpoint is a model file (inductive/model_file.h) of kind "<model kind>-checkpoint": the tensors of one or more
// models under prefixes ("model/", and e.g. "best/"), Adam's moments under "adam.m/<block>" and "adam.v/<block>",
// and the config {"model": <the model's config>, "state": <the trainer's state, with "adam_steps">}. It is written
// atomically, so a run killed mid-write resumes from the previous one; it is read strictly: a file of another kind,
// incomplete moments or malformed state are Error{kBadModelFile}, a different model configuration
// Error{kInvalidArgument}, every message prefixed with the file's path.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "inductive/adam.h"
#include "inductive/model_file.h"

namespace inductive {

// Writes `models` (prefix, contents) and `adam` to `path`; `state` gets "adam_steps". `model_kind` is e.g. "otke".
void save_checkpoint_file(const std::string& path, const std::string& model_kind,
                          const std::vector<std::pair<std::string, const ModelContents*>>& models, const Adam& adam,
                          nlohmann::json state);

class CheckpointFile {
 public:
  // The checkpoint at `path`, or nothing when `path` is empty or names no file. `same_config(model config)` says
  // whether the checkpoint was written for the model being trained (e.g. Config::from_json(c).to_json() == mine).
  static std::optional<CheckpointFile> read(const std::string& path, const std::string& model_kind,
                                            const std::function<bool(const nlohmann::json&)>& same_config);

  const nlohmann::json& state() const { return view_.config.at("state"); }
  // The tensors under `prefix` as a model file of kind `model_kind` (views into this object's bytes: keep it alive
  // while the view is read).
  ModelView model(const std::string& prefix) const;
  // Adam's moments and step count into `adam`.
  void restore(Adam& adam) const;
  // Runs `body` (reading state(), model(), restore()) with this file's error context: JSON errors become
  // Error{kBadModelFile} "malformed state", and every Error is prefixed with the path.
  void with_context(const std::function<void()>& body) const;

 private:
  std::string path_, model_kind_;
  std::vector<uint8_t> bytes_;
  ModelView view_;
};

}  // namespace inductive
