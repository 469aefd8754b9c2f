// io/safetensors.h - the safetensors container below the model file (private to core/src/io).
//
// This layer knows the container only: the length prefix, the JSON header, tensor entries, the data section and
// the `__metadata__` string map. What the metadata must hold (format, version, model kind, config) is
// model_file.cpp's business, and it checks it between parse_header and parse_tensors so that a file from a newer
// format version is reported as such before its tensor entries are judged by today's rules.
//
// Every failure throws Error{kBadModelFile} with a message "model file: what: got X, expected Y".
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "inductive/model_file.h"

namespace inductive::safetensors {

// JSON nesting allowed in headers and configs: far beyond what either needs, low enough that printing, comparing
// or destroying a hostile document cannot exhaust the stack.
constexpr int kMaxJsonDepth = 64;

// Parses `text` as one JSON value, strictly: duplicate object keys, nesting deeper than kMaxJsonDepth and numbers
// that overflow a double are errors (RFC 8259 leaves them to the parser; silently keeping the last duplicate would
// let two tools read one file differently). Never throws anything but inductive::Error. `what` names the text in
// messages ("header", "config"); `top_level_noun` what the outermost object's keys are ("tensor", "key").
nlohmann::json parse_json(const char* text, size_t size, const char* what, const char* top_level_noun = "key");

struct Header {
  nlohmann::json json;  // the header object: tensor entries and, when present, "__metadata__"
  bool has_metadata = false;
  std::map<std::string, std::string> metadata;
  const uint8_t* data = nullptr;  // data section: everything after the header
  uint64_t data_size = 0;
};

// Size >= 8; header length <= kMaxHeaderBytes and <= size - 8 (both checked before anything is allocated); header
// starts with '{' and is a JSON object; "__metadata__", when present, maps strings to strings.
Header parse_header(const uint8_t* bytes, size_t size);

// Tensor entries: known dtype, non-negative shape, offsets whose span matches the shape (overflow-checked); then
// the offsets, sorted, must be within the data section, start at 0, leave no gap, not overlap, and end exactly at
// its end. Returns the tensors in ascending offset order.
std::vector<TensorInfo> parse_tensors(const Header& header);

// The inverse: `metadata` as "__metadata__" (omitted when empty), then the tensors sorted by name with contiguous
// offsets from 0, compact JSON (the layout the Python `safetensors` package writes), header space-padded so that
// 8 + N is a multiple of 8. Throws Error{kInvalidArgument} for duplicate or reserved names, negative shapes, missing
// data or sizes that overflow.
std::vector<uint8_t> serialise(const std::map<std::string, std::string>& metadata,
                               const std::vector<TensorData>& tensors);

// Bytes per element (4 for both dtypes today).
uint64_t dtype_size(DType d) noexcept;
// A string from a file, safe to put in a one-line message: control bytes become '?', and more than `max_bytes`
// bytes are cut (at a UTF-8 character boundary) and end in "...". Names in a file can be 16 MiB long.
std::string printable(const std::string& s, size_t max_bytes = 60);
// "[2, 3]"; "[]" for a scalar.
std::string shape_string(const std::vector<int64_t>& shape);
// numel * dtype_size, or false when that overflows uint64 or a dimension is negative.
bool byte_size(const std::vector<int64_t>& shape, DType dtype, uint64_t* bytes) noexcept;

}  // namespace inductive::safetensors
