// inductive/model_file.h - the one model-file format, read and written identically by the native and wasm builds.
//
// A model file is a safetensors file (https://github.com/huggingface/safetensors format):
//   [8 bytes: u64 little-endian header length N][N bytes: JSON header, starts with '{', space-padded so that
//   8 + N is a multiple of 8][raw little-endian tensor data, row-major, contiguous, no holes]
// The header maps tensor names to {"dtype": "F32"|"I32", "shape": [...], "data_offsets": [begin, end]} (offsets
// relative to the data section) and holds "__metadata__", a string -> string map with
//   format = "inductive", format_version = "<int>", model = "<kind>", config = "<JSON object>",
//   producer = "inductive <version> <build>".
// Python users can open the files with the `safetensors` package (safetensors.numpy.load_file).
//
// Reading validates everything and throws Error{kBadModelFile | kUnsupportedVersion} with one precise message per
// failure (see read_model). Writing is deterministic (tensors sorted by name) and atomic on disk.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "inductive/error.h"

namespace inductive {

// Newest format version this build writes; it reads every version in [1, kFormatVersion].
constexpr int kFormatVersion = 1;
// Headers larger than this are rejected before any allocation (a lying length must not exhaust memory).
constexpr uint64_t kMaxHeaderBytes = 16u << 20;

enum class DType { kF32, kI32 };
const char* dtype_name(DType d) noexcept;  // "F32", "I32"

struct TensorInfo {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  uint64_t begin = 0;  // byte offsets relative to the data section
  uint64_t end = 0;
  int64_t numel() const;
};

// A parsed model file. Tensor data is a view into the bytes given to read_model (no copy); keep them alive.
struct ModelView {
  int format_version = 0;
  std::string model;              // model kind, e.g. "otke"
  nlohmann::json config;          // parsed config object
  std::string producer;
  std::vector<TensorInfo> tensors;  // in file order (ascending offsets)
  const uint8_t* data = nullptr;    // start of the data section
  uint64_t data_size = 0;

  const TensorInfo* find(const std::string& name) const;  // nullptr when absent
  // Typed access; throws Error{kBadModelFile} when absent, of another dtype, or of another shape.
  const float* f32(const std::string& name, const std::vector<int64_t>& shape) const;
  const int32_t* i32(const std::string& name, const std::vector<int64_t>& shape) const;
};

// Validates and parses a model file held in memory, in this order, one message per failure:
// size >= 8; header length <= kMaxHeaderBytes and <= size - 8; header is a JSON object; __metadata__ is a
// string map with format == "inductive"; 1 <= format_version <= kFormatVersion (kUnsupportedVersion otherwise,
// e.g. "file is format_version 3; this build reads up to 1"); model and producer non-empty; config a JSON object;
// every tensor entry has a known dtype, a non-negative shape and offsets whose size matches the shape
// (overflow-checked); tensor names are unique; offsets are contiguous from 0 and cover the data section exactly;
// then, when a schema is registered for the model kind, the config and tensor set are checked against it.
// `bytes` must be 4-byte aligned for the typed accessors to return aligned pointers (it is when it comes
// from malloc/new or a Float32Array's buffer).
ModelView read_model(const uint8_t* bytes, size_t size);

// A tensor to write: name, dtype, shape and its little-endian bytes (numel * 4).
struct TensorData {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  const void* data = nullptr;
};

struct ModelContents {
  std::string model;
  nlohmann::json config = nlohmann::json::object();
  std::vector<TensorData> tensors;
  int format_version = kFormatVersion;  // tests write old versions; everyone else keeps the default
  std::string producer;                 // empty: inductive::producer()
};

// Serialises to bytes (validated the same way read_model would validate them).
std::vector<uint8_t> write_model(const ModelContents& contents);

// Native file helpers: read the whole file (Error{kIo} when unreadable) / write atomically (temp file + rename).
std::vector<uint8_t> read_file_bytes(const std::string& path);
void save_model_file(const std::string& path, const ModelContents& contents);

// What a model kind expects: validates its config and lists the tensors (name, dtype, shape) the config implies.
// Registered once per kind (e.g. by the OTKE module); read_model checks files of that kind against it.
struct TensorSpec {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
};
struct ModelSchema {
  std::string model;
  std::function<void(const nlohmann::json& config, int format_version)> validate_config;
  std::function<std::vector<TensorSpec>(const nlohmann::json& config, int format_version)> tensors;
};
void register_model_schema(ModelSchema schema);
const ModelSchema* find_model_schema(const std::string& model);

// Human-readable summary (format, version, model, producer, config, tensor table), as `inductive info` prints.
std::string describe_model(const ModelView& view);

}  // namespace inductive
