// inductive/model_kinds.h - core's model kinds (otke, graphit) registered with io's schema registry at once.
//
// Each method registers its own kind before it reads or writes a model of that kind, so OtkeModel::load and the
// like check files against their schema without this. Readers that take a file of any kind before any method has
// run (`inductive info`, the bindings' modelInfo, the fuzzers) call this first, so that read_model checks every
// kind core knows. Idempotent and thread-safe.
#pragma once

namespace inductive {

void register_core_model_kinds();

}  // namespace inductive
