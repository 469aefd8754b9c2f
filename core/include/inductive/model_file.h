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

#include "inductive/files.h"

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
  std::string model;      // model kind, e.g. "otke"
  nlohmann::json config;  // parsed config object
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
// size >= 8; header length <= kMaxHeaderBytes and <= size - 8 (checked before anything is allocated); header
// starts with '{' and is strict JSON (no duplicate keys, so tensor names are unique; nesting <= 64; no number
// that overflows a double); __metadata__ is a string map with format == "inductive"; 1 <= format_version <=
// kFormatVersion (kUnsupportedVersion otherwise, e.g. "file is format_version 3; this build reads up to 1");
// model and producer non-empty; config a strict-JSON object; every tensor entry has exactly dtype, shape and
// data_offsets, a known dtype, a non-negative shape and offsets whose span matches the shape (overflow-checked);
// offsets lie within the data section, are contiguous from 0 and cover it exactly; then, when a schema is
// registered for the model kind, the config and tensor set are checked against it (missing, mistyped,
// misshapen and extra tensors are each named). Other __metadata__ keys are allowed and ignored (other tools add
// their own). Messages read "model file: what: got X, expected Y"; nothing but inductive::Error is thrown.
// Metadata checks come before tensor entries so that a newer file is reported as newer, not as corrupt.
// `bytes` must be 4-byte aligned for the typed accessors to return aligned pointers (it is when it comes
// from malloc/new or a Float32Array's buffer); files whose header length is not a multiple of 4 read, but their
// typed accessors throw rather than hand out misaligned pointers.
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

// Serialises to bytes: "__metadata__" first, then tensors sorted by name, compact JSON, header space-padded so that
// the data starts 8-byte aligned (the layout the Python `safetensors` package writes). The same contents always
// give the same bytes (config keys are sorted). The result is read back with read_model, schema included, so an
// unreadable file is never produced: Error{kInvalidArgument} for empty/reserved/duplicate names, negative shapes,
// null data, a config that is not an object or does not survive JSON (NaN), or a schema violation.
std::vector<uint8_t> write_model(const ModelContents& contents);

// Serialises, then writes atomically (temp file + rename): a model that fails to serialise never touches `path`,
// and a failed write leaves nothing behind. (Reading: read_file_bytes, inductive/files.h.)
void save_model_file(const std::string& path, const ModelContents& contents);

// What a model kind expects: validates its config and lists the tensors (name, dtype, shape) the config implies.
// The registry lives here and knows no kind: each method registers its own (register_otke_model_kind, ...) and
// inductive/model_kinds.h registers all of core's at once; others may register more.
// read_model checks files of a registered kind against its schema, and turns
// whatever the two functions throw into Error{kBadModelFile} naming the kind. Thread-safe. Registering a kind
// again replaces it for later lookups; pointers returned earlier stay valid (schemas are never freed).
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

// Human-readable summary, as `inductive info` prints it: format, format_version, model, producer, the config
// pretty-printed, then a table of tensors (name, dtype, shape, bytes) in file order. Control characters in names
// are shown as '?'.
std::string describe_model(const ModelView& view);

}  // namespace inductive
