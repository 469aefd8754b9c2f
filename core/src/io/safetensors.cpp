// The safetensors container (https://github.com/huggingface/safetensors, README "Format"): parse with every check in
// the order io/safetensors.h lists, serialise in the layout the reference writer produces.
#include "io/safetensors.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "inductive/error.h"

namespace inductive::safetensors {

using nlohmann::json;

uint64_t dtype_size(DType d) noexcept {
  switch (d) {
    case DType::kF32:
    case DType::kI32:
      return 4;
  }
  return 4;
}

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

bool byte_size(const std::vector<int64_t>& shape, DType dtype, uint64_t* bytes) noexcept {
  uint64_t n = dtype_size(dtype);
  for (int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(n, static_cast<uint64_t>(d), &n)) return false;
  }
  *bytes = n;
  return true;
}

std::string printable(const std::string& s, size_t max_bytes) {
  size_t n = s.size();
  if (n > max_bytes) {
    n = max_bytes;
    while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;  // do not split a UTF-8 sequence
  }
  std::string out = s.substr(0, n);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return n < s.size() ? out + "..." : out;
}

namespace {

constexpr const char* kMetadataKey = "__metadata__";

// A JSON value for a message: compact, and cut short so that a hostile 16 MiB array cannot flood a terminal.
std::string brief(const json& j) { return printable(j.dump(-1, ' ', false, json::error_handler_t::replace)); }

// ---- strict JSON -------------------------------------------------------------------------------------------------

// Builds the DOM from SAX events so that duplicate keys, depth and overflowing numbers can be rejected (the stock
// DOM parser keeps the last duplicate silently, and its callback variant rescans each parent object on every
// child's end, which is quadratic in the number of tensors). Returns false to stop parsing; `error` says why.
class StrictBuilder : public nlohmann::json_sax<json> {
 public:
  explicit StrictBuilder(std::string top_level_noun) : top_level_noun(std::move(top_level_noun)) {}

  json root;
  std::string error;
  std::string top_level_noun;  // what the keys of the outermost object are, for messages: "tensor", "key"

  bool null() override { return put(nullptr); }
  bool boolean(bool v) override { return put(v); }
  bool number_integer(number_integer_t v) override { return put(v); }
  bool number_unsigned(number_unsigned_t v) override { return put(v); }
  bool number_float(number_float_t v, const string_t& text) override {
    // The lexer already reports 1e400 as an overflow; this keeps infinities (which JSON cannot write back, so
    // they would not survive a round trip) out even if a future lexer lets them through.
    if (!std::isfinite(v)) return fail("number " + text + " is out of range for a double");
    return put(v);
  }
  bool string(string_t& v) override { return put(std::move(v)); }
  bool binary(binary_t&) override { return fail("binary values are not JSON"); }

  bool start_object(std::size_t) override { return open(json::object()); }
  bool start_array(std::size_t) override { return open(json::array()); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }

  bool key(string_t& k) override {
    Frame& f = stack_.back();
    if (f.value->contains(k)) {
      return fail(stack_.size() == 1
                      ? top_level_noun + " '" + printable(k) + "' appears twice, expected unique names"
                      : "key '" + printable(k) + "' appears twice in '" + printable(f.key) + "', expected unique keys");
    }
    slot_ = &(*f.value)[k];
    last_key_ = std::move(k);
    return true;
  }

  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex) override {
    // ex.what(): "[json.exception.parse_error.101] parse error at line 1, column 9: syntax error while parsing
    // object - unexpected end of input; expected string literal; last read: '...'". Keep the reason, drop the echo
    // of the input (it may hold arbitrary bytes).
    std::string reason = ex.what();
    const auto s = reason.find("syntax error");
    if (s != std::string::npos) {
      reason = reason.substr(s);
    } else if (reason.compare(0, 1, "[") == 0 && reason.find("] ") != std::string::npos) {
      reason = reason.substr(reason.find("] ") + 2);  // "[json.exception.out_of_range.406] number overflow ..."
    }
    const auto l = reason.find("; last read");
    if (l != std::string::npos) reason.resize(l);
    error = "invalid JSON at byte " + std::to_string(position) + ": " + printable(reason, 200);
    return false;
  }

 private:
  struct Frame {
    json* value;
    std::string key;  // the key this container sits under, for messages
  };
  std::vector<Frame> stack_;
  json* slot_ = nullptr;  // where the next object member goes
  std::string last_key_;

  bool fail(std::string why) {
    error = std::move(why);
    return false;
  }

  // Places a finished value in its parent and returns where it now lives.
  json* place(json v) {
    if (stack_.empty()) {
      root = std::move(v);
      return &root;
    }
    json& parent = *stack_.back().value;
    if (parent.is_array()) {
      parent.push_back(std::move(v));
      return &parent.back();
    }
    *slot_ = std::move(v);
    return slot_;
  }
  bool put(json v) {
    place(std::move(v));
    return true;
  }
  bool open(json container) {
    if (static_cast<int>(stack_.size()) >= kMaxJsonDepth) {
      return fail("nesting deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    }
    std::string key = stack_.empty() ? "" : (stack_.back().value->is_array() ? stack_.back().key : last_key_);
    json* at = place(std::move(container));
    stack_.push_back({at, std::move(key)});
    return true;
  }
  bool close() {
    stack_.pop_back();
    return true;
  }
};

// ---- one tensor entry --------------------------------------------------------------------------------------------

// `name` below is already printable(): these only build messages with it.
DType parse_dtype(const std::string& name, const json& v) {
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    if (s == "F32") return DType::kF32;
    if (s == "I32") return DType::kI32;
  }
  INDUCTIVE_FAIL(ErrorCode::kBadModelFile, "model file: tensor '", name, "': dtype: got ", brief(v),
                 ", expected \"F32\" or \"I32\"");
}

std::vector<int64_t> parse_shape(const std::string& name, const json& v) {
  INDUCTIVE_CHECK(v.is_array(), ErrorCode::kBadModelFile, "model file: tensor '", name, "': shape: got ", brief(v),
                  ", expected an array of non-negative integers");
  std::vector<int64_t> shape;
  shape.reserve(v.size());
  for (const json& d : v) {
    INDUCTIVE_CHECK(!d.is_number_integer() || d.is_number_unsigned(), ErrorCode::kBadModelFile, "model file: tensor '",
                    name, "': shape ", brief(v), ": got dimension ", brief(d), ", expected >= 0");
    INDUCTIVE_CHECK(
        d.is_number_unsigned() && d.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()),
        ErrorCode::kBadModelFile, "model file: tensor '", name, "': shape ", brief(v), ": got dimension ", brief(d),
        ", expected a non-negative integer below 2^63");
    shape.push_back(static_cast<int64_t>(d.get<uint64_t>()));
  }
  return shape;
}

TensorInfo parse_entry(const std::string& full_name, const json& entry) {
  const std::string name = printable(full_name);
  INDUCTIVE_CHECK(!full_name.empty(), ErrorCode::kBadModelFile, "model file: header: got a tensor with an empty name, ",
                  "expected a non-empty name");
  INDUCTIVE_CHECK(entry.is_object(), ErrorCode::kBadModelFile, "model file: tensor '", name, "': got ", brief(entry),
                  ", expected an object with dtype, shape and data_offsets");
  for (const char* k : {"dtype", "shape", "data_offsets"}) {
    INDUCTIVE_CHECK(entry.contains(k), ErrorCode::kBadModelFile, "model file: tensor '", name, "': has no '", k,
                    "', expected dtype, shape and data_offsets");
  }
  if (entry.size() != 3) {
    std::string keys;
    for (const auto& item : entry.items()) keys += (keys.empty() ? "" : ", ") + item.key();
    INDUCTIVE_FAIL(ErrorCode::kBadModelFile, "model file: tensor '", name, "': got keys ", printable(keys, 200),
                   ", expected only dtype, shape and data_offsets");
  }
  TensorInfo t;
  t.name = full_name;
  t.dtype = parse_dtype(name, entry["dtype"]);
  t.shape = parse_shape(name, entry["shape"]);
  uint64_t bytes = 0;
  INDUCTIVE_CHECK(byte_size(t.shape, t.dtype, &bytes), ErrorCode::kBadModelFile, "model file: tensor '", name,
                  "': shape ", shape_string(t.shape), " overflows: its size in bytes exceeds 2^64");
  const json& off = entry["data_offsets"];
  INDUCTIVE_CHECK(off.is_array() && off.size() == 2 && off[0].is_number_unsigned() && off[1].is_number_unsigned() &&
                      off[0].get<uint64_t>() <= off[1].get<uint64_t>(),
                  ErrorCode::kBadModelFile, "model file: tensor '", name, "': data_offsets: got ", brief(off),
                  ", expected [begin, end] with 0 <= begin <= end");
  t.begin = off[0].get<uint64_t>();
  t.end = off[1].get<uint64_t>();
  INDUCTIVE_CHECK(t.end - t.begin == bytes, ErrorCode::kBadModelFile, "model file: tensor '", name, "': data_offsets [",
                  t.begin, ", ", t.end, "] span ", t.end - t.begin, " bytes, expected ", bytes, " for ",
                  dtype_name(t.dtype), " ", shape_string(t.shape));
  return t;
}

}  // namespace

// ---- parsing -----------------------------------------------------------------------------------------------------

json parse_json(const char* text, size_t size, const char* what, const char* top_level_noun) {
  StrictBuilder builder(top_level_noun);
  const bool ok = json::sax_parse(text, text + size, &builder, json::input_format_t::json, /*strict=*/true);
  if (!ok) INDUCTIVE_FAIL(ErrorCode::kBadModelFile, "model file: ", what, ": ", builder.error);
  return std::move(builder.root);
}

Header parse_header(const uint8_t* bytes, size_t size) {
  INDUCTIVE_CHECK(bytes != nullptr || size == 0, ErrorCode::kInvalidArgument, "read_model: bytes is null");
  INDUCTIVE_CHECK(size >= 8, ErrorCode::kBadModelFile, "model file: size: got ", size,
                  " bytes, expected at least 8 (the header length; truncated file?)");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | bytes[i];  // little-endian whatever the host
  INDUCTIVE_CHECK(n <= kMaxHeaderBytes, ErrorCode::kBadModelFile, "model file: header length: got ", n,
                  " bytes, expected at most ", kMaxHeaderBytes);
  const uint64_t rest = static_cast<uint64_t>(size) - 8;
  INDUCTIVE_CHECK(n <= rest, ErrorCode::kBadModelFile, "model file: header length: got ", n, " bytes, but only ", rest,
                  " bytes follow the length (truncated file?)");
  const char* text = reinterpret_cast<const char*>(bytes + 8);
  if (n == 0 || text[0] != '{') {
    const auto c = static_cast<unsigned char>(n ? text[0] : 0);
    INDUCTIVE_FAIL(ErrorCode::kBadModelFile, "model file: header: got ",
                   n == 0                  ? std::string("0 bytes")
                   : c >= 0x20 && c < 0x7f ? std::string("first byte '") + char(c) + "'"
                                           : "first byte " + std::to_string(c),
                   ", expected a JSON object starting with '{'");
  }

  Header h;
  h.json = parse_json(text, static_cast<size_t>(n), "header", "tensor");
  // Unreachable after the '{' check and a successful parse, kept so the invariant does not rest on the lexer.
  INDUCTIVE_CHECK(h.json.is_object(), ErrorCode::kBadModelFile, "model file: header: got a JSON ", h.json.type_name(),
                  ", expected an object");
  h.data = bytes + 8 + n;
  h.data_size = rest - n;

  const auto meta = h.json.find(kMetadataKey);
  if (meta != h.json.end()) {
    INDUCTIVE_CHECK(meta->is_object(), ErrorCode::kBadModelFile, "model file: __metadata__: got ", brief(*meta),
                    ", expected an object mapping strings to strings");
    for (const auto& item : meta->items()) {
      INDUCTIVE_CHECK(item.value().is_string(), ErrorCode::kBadModelFile, "model file: __metadata__ '",
                      printable(item.key()), "': got ", brief(item.value()), ", expected a string");
      h.metadata.emplace(item.key(), item.value().get<std::string>());
    }
    h.has_metadata = true;
  }
  return h;
}

std::vector<TensorInfo> parse_tensors(const Header& header) {
  std::vector<TensorInfo> tensors;
  for (const auto& item : header.json.items()) {
    if (item.key() != kMetadataKey) tensors.push_back(parse_entry(item.key(), item.value()));
  }
  // Names are unique already (the strict parser rejects duplicate keys). Ties between empty tensors sort by name.
  std::sort(tensors.begin(), tensors.end(), [](const TensorInfo& a, const TensorInfo& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end != b.end ? a.end < b.end : a.name < b.name;
  });
  // Bounds first: a truncated file then reads as such, not as a gap or overlap further on.
  for (const TensorInfo& t : tensors) {
    INDUCTIVE_CHECK(t.end <= header.data_size, ErrorCode::kBadModelFile, "model file: tensor '", printable(t.name),
                    "': data_offsets [", t.begin, ", ", t.end, "] end beyond the data section: got ", header.data_size,
                    " bytes of data, expected at least ", t.end, " (truncated file?)");
  }
  // Contiguous from 0 with no holes: the reference format forbids holes so that no other content can hide in a
  // model file (polyglot files), and it makes the data section exactly the sum of the tensors.
  uint64_t at = 0;
  const TensorInfo* prev = nullptr;
  for (const TensorInfo& t : tensors) {
    if (t.begin < at) {
      INDUCTIVE_FAIL(ErrorCode::kBadModelFile, "model file: tensors '", printable(prev->name), "' [", prev->begin, ", ",
                     prev->end, "] and '", printable(t.name), "' [", t.begin, ", ", t.end, "] overlap");
    }
    if (t.begin > at) {
      INDUCTIVE_FAIL(ErrorCode::kBadModelFile, "model file: tensor '", printable(t.name), "': data_offsets begin at ",
                     t.begin, ", expected ", at,
                     prev ? " (the end of '" + printable(prev->name) + "')" : std::string(" (the first tensor)"),
                     ": a gap of ", t.begin - at, " bytes");
    }
    at = t.end;
    prev = &t;
  }
  INDUCTIVE_CHECK(at == header.data_size, ErrorCode::kBadModelFile, "model file: data section: got ", header.data_size,
                  " bytes, expected ", at, " (the end of the last tensor): ", header.data_size - at, " trailing bytes");
  return tensors;
}

// ---- serialising -------------------------------------------------------------------------------------------------

std::vector<uint8_t> serialise(const std::map<std::string, std::string>& metadata,
                               const std::vector<TensorData>& tensors) {
  std::vector<const TensorData*> order;
  for (const TensorData& t : tensors) order.push_back(&t);
  std::sort(order.begin(), order.end(), [](const TensorData* a, const TensorData* b) { return a->name < b->name; });

  // Compact JSON in the reference writer's key order: "__metadata__" first, then each tensor's dtype, shape and
  // data_offsets. Written by hand because nlohmann::json sorts keys and "__metadata__" would not come first.
  std::string h = "{";
  try {
    if (!metadata.empty()) h += std::string("\"") + kMetadataKey + "\":" + json(metadata).dump();
    uint64_t at = 0;
    for (size_t i = 0; i < order.size(); ++i) {
      const TensorData& t = *order[i];
      INDUCTIVE_CHECK(!t.name.empty() && t.name != kMetadataKey, ErrorCode::kInvalidArgument,
                      "write_model: tensor name: got \"", t.name, "\", expected a non-empty name other than ",
                      kMetadataKey);
      INDUCTIVE_CHECK(i == 0 || order[i - 1]->name != t.name, ErrorCode::kInvalidArgument, "write_model: tensor '",
                      t.name, "' is given twice, expected unique names");
      uint64_t bytes = 0;
      INDUCTIVE_CHECK(byte_size(t.shape, t.dtype, &bytes), ErrorCode::kInvalidArgument, "write_model: tensor '", t.name,
                      "': shape ", shape_string(t.shape),
                      ", expected non-negative dimensions whose byte size fits 64 bits");
      INDUCTIVE_CHECK(t.data != nullptr || bytes == 0, ErrorCode::kInvalidArgument, "write_model: tensor '", t.name,
                      "': data is null, expected ", bytes, " bytes");
      uint64_t end = 0;
      INDUCTIVE_CHECK(!__builtin_add_overflow(at, bytes, &end), ErrorCode::kInvalidArgument,
                      "write_model: total tensor size overflows 64 bits");
      std::string shape = "[";
      for (size_t d = 0; d < t.shape.size(); ++d) shape += (d ? "," : "") + std::to_string(t.shape[d]);
      h += (h.size() > 1 ? "," : "") + json(t.name).dump() + ":{\"dtype\":\"" + dtype_name(t.dtype) +
           "\",\"shape\":" + shape + "],\"data_offsets\":[" + std::to_string(at) + "," + std::to_string(end) + "]}";
      at = end;
    }
  } catch (const json::exception&) {
    // dump() refuses strings that are not UTF-8.
    INDUCTIVE_FAIL(ErrorCode::kInvalidArgument, "write_model: a tensor name or metadata value is not valid UTF-8");
  }
  h += "}";
  h.append((8 - h.size() % 8) % 8, ' ');  // 8 + N a multiple of 8: data starts 8-byte aligned
  INDUCTIVE_CHECK(h.size() <= kMaxHeaderBytes, ErrorCode::kInvalidArgument, "write_model: header: got ", h.size(),
                  " bytes, expected at most ", kMaxHeaderBytes);

  uint64_t total = 8 + h.size();
  for (const TensorData* t : order) {
    uint64_t bytes = 0;
    byte_size(t->shape, t->dtype, &bytes);
    INDUCTIVE_CHECK(!__builtin_add_overflow(total, bytes, &total) && total <= std::numeric_limits<size_t>::max(),
                    ErrorCode::kInvalidArgument, "write_model: the model does not fit in memory (", total, "+ bytes)");
  }
  std::vector<uint8_t> out(static_cast<size_t>(total));
  const uint64_t n = h.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(n >> (8 * i));
  std::memcpy(out.data() + 8, h.data(), h.size());
  size_t at = 8 + h.size();
  for (const TensorData* t : order) {
    uint64_t bytes = 0;
    byte_size(t->shape, t->dtype, &bytes);
    if (bytes) std::memcpy(out.data() + at, t->data, static_cast<size_t>(bytes));
    at += static_cast<size_t>(bytes);
  }
  return out;
}

}  // namespace inductive::safetensors
