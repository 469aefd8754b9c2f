// The model-file schema registry (declared in inductive/model_file.h). It holds whatever kinds are registered and
// knows none of them: each method registers its own kind (otke, graphit) before it reads or writes one, and
// inductive/model_kinds.h registers all of core's at once for readers that take any kind (the CLI's `info`, the
// bindings, the fuzzers). So no arrow runs from io up to a method.
#include <deque>
#include <map>
#include <mutex>

#include "inductive/model_file.h"

namespace inductive {

namespace {

// Schemas are immutable once registered and never freed, so the pointer find_model_schema returns stays valid and
// race-free; registering a kind again makes later lookups see the new schema.
struct Registry {
  std::mutex mutex;
  std::deque<ModelSchema> all;
  std::map<std::string, const ModelSchema*> by_kind;
};
Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: lookups may run during static destruction
  return *r;
}

}  // namespace

void register_model_schema(ModelSchema schema) {
  INDUCTIVE_CHECK(!schema.model.empty(), ErrorCode::kInvalidArgument, "register_model_schema: model kind is empty");
  INDUCTIVE_CHECK(schema.tensors != nullptr, ErrorCode::kInvalidArgument, "register_model_schema: schema '",
                  schema.model, "' has no tensors function");
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.all.push_back(std::move(schema));
  r.by_kind[r.all.back().model] = &r.all.back();
}

const ModelSchema* find_model_schema(const std::string& model) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  const auto it = r.by_kind.find(model);
  return it == r.by_kind.end() ? nullptr : it->second;
}

}  // namespace inductive
