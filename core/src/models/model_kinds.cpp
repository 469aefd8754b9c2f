// The model-file schema registry (declared in inductive/model_file.h) with core's kinds, otke and graphit. It lives
// above io and the methods: io reads and checks containers against whatever is registered, each method defines its
// kind's schema, and this file, which knows both, puts them together. No arrow runs from io up to a method.
#include <deque>
#include <map>
#include <mutex>

#include "inductive/graphit.h"
#include "inductive/model_file.h"
#include "inductive/otke.h"

namespace inductive {

namespace {

// Schemas are immutable once registered and never freed, so the pointer find_model_schema returns stays valid and
// race-free; registering a kind again makes later lookups see the new schema.
struct Registry {
  std::mutex mutex;
  std::deque<ModelSchema> all;
  std::map<std::string, const ModelSchema*> by_kind;
};
// The kinds core itself defines are registered on first use, so every reader (CLI, wasm, tests) checks them.
Registry& registry() {
  static Registry* r = [] {
    auto* fresh = new Registry;
    for (ModelSchema schema : {otke_model_schema(), graphit_model_schema()}) {
      fresh->all.push_back(std::move(schema));
      fresh->by_kind[fresh->all.back().model] = &fresh->all.back();
    }
    return fresh;
  }();
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
