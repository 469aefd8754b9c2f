// wasm/model_handle.h - what the handles that own a model (OtkeHandle, GraphitHandle) share: the model, where it
// came from (the file's format version and producer, or this build's for a model made here), loading a model file,
// and its serialised bytes kept until the TS layer has copied them out. Each handle exposes these to Embind through
// one-line members of its own (Embind registers a method on the class of its member pointer).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "guarded.h"
#include "inductive/error.h"
#include "inductive/model_file.h"
#include "inductive/version.h"

namespace inductive::wasm {

template <typename Model>
class ModelHandle {
 protected:
  // Reads the model file at [address, address + size) (read_model, then Model::from_view; `check` may refuse the
  // model for this handle's uses); false on failure, the handle unchanged.
  bool load_file(uintptr_t address, size_t size, const std::function<void(const Model&)>& check = {}) {
    return guarded([&] {
      const ModelView view = read_model(ptr<const uint8_t>(address), size);
      Model m = Model::from_view(view);
      if (check) check(m);
      model_ = std::move(m);
      format_version_ = view.format_version;
      producer_ = view.producer;
      loaded_ = true;
    });
  }
  // A model made in this build (learnt, or a head fitted): this build's format version and producer.
  void adopt(Model m) {
    model_ = std::move(m);
    format_version_ = kFormatVersion;
    producer_ = producer();
    loaded_ = true;
  }
  void check_loaded(const char* where) const {
    INDUCTIVE_CHECK(loaded_, ErrorCode::kInvalidArgument, where, ": no model loaded in this handle");
  }
  // The model file (Model::to_bytes), kept here until release_model_bytes(): copy [bytes_address, + bytes_size).
  bool serialize_model() {
    return guarded([&] {
      check_loaded("toBytes");
      bytes_ = model_.to_bytes();
    });
  }
  uintptr_t model_bytes_address() const { return reinterpret_cast<uintptr_t>(bytes_.data()); }
  size_t model_bytes_size() const { return bytes_.size(); }
  void release_model_bytes() { std::vector<uint8_t>().swap(bytes_); }

  Model model_;
  bool loaded_ = false;
  int format_version_ = 0;
  std::string producer_;
  std::vector<uint8_t> bytes_;
};

}  // namespace inductive::wasm
