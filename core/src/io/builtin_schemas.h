// The model kinds core defines; each module provides its schema (e.g. otke/otke_model.cpp).
#pragma once

#include <vector>

#include "inductive/model_file.h"

namespace inductive {

ModelSchema otke_model_schema();
ModelSchema graphit_model_schema();  // graphit/graphit_model.cpp

inline std::vector<ModelSchema> builtin_model_schemas() { return {otke_model_schema(), graphit_model_schema()}; }

}  // namespace inductive
