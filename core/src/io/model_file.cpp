// The model file: inductive's metadata contract on top of the safetensors container (io/safetensors.h), typed
// views, and writing files. The schema registry it consults is above io, with the model kinds (models/).
#include "inductive/model_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>

#include "inductive/atomic_file.h"
#include "inductive/version.h"
#include "io/safetensors.h"

namespace inductive {

using nlohmann::json;
using safetensors::printable;
using safetensors::shape_string;

const char* dtype_name(DType d) noexcept {
  switch (d) {
    case DType::kF32:
      return "F32";
    case DType::kI32:
      return "I32";
  }
  return "?";
}

int64_t TensorInfo::numel() const {
  uint64_t bytes = 0;
  INDUCTIVE_CHECK(safetensors::byte_size(shape, dtype, &bytes), ErrorCode::kInvalidArgument, "tensor '", name,
                  "': shape ", shape_string(shape), " is negative or overflows");
  return static_cast<int64_t>(bytes / safetensors::dtype_size(dtype));
}

// ---- reading -----------------------------------------------------------------------------------------------------

namespace {

const std::string& metadata_entry(const safetensors::Header& h, const char* key) {
  const auto it = h.metadata.find(key);
  INDUCTIVE_CHECK(it != h.metadata.end(), ErrorCode::kBadModelFile, "model file: __metadata__ has no '", key,
                  "' entry, expected format, format_version, model, config and producer");
  return it->second;
}

// format_version is a decimal string ("1"); anything else is a corrupt file rather than an unknown version.
int parse_format_version(const std::string& s) {
  bool digits = !s.empty() && s.size() <= 9 && (s == "0" || s[0] != '0');
  for (char c : s) digits = digits && c >= '0' && c <= '9';
  if (!digits) {
    // A long run of digits is still a version number, just one from far in the future.
    bool all_digits = s.size() > 9 && s[0] != '0';
    for (char c : s) all_digits = all_digits && c >= '0' && c <= '9';
    INDUCTIVE_CHECK(all_digits, ErrorCode::kBadModelFile, "model file: format_version: got \"", printable(s),
                    "\", expected a decimal integer such as \"", kFormatVersion, "\"");
    INDUCTIVE_FAIL(ErrorCode::kUnsupportedVersion, "model file: file is format_version ", printable(s),
                   "; this build reads up to ", kFormatVersion, " (a newer inductive wrote it)");
  }
  const int v = std::stoi(s);
  INDUCTIVE_CHECK(v >= 1, ErrorCode::kUnsupportedVersion, "model file: file is format_version ", v,
                  "; versions start at 1 and this build reads 1 to ", kFormatVersion);
  INDUCTIVE_CHECK(v <= kFormatVersion, ErrorCode::kUnsupportedVersion, "model file: file is format_version ", v,
                  "; this build reads up to ", kFormatVersion, " (a newer inductive wrote it)");
  return v;
}

void read_metadata(const safetensors::Header& h, ModelView& view) {
  INDUCTIVE_CHECK(h.has_metadata, ErrorCode::kBadModelFile,
                  "model file: header has no __metadata__, expected format \"inductive\" (not an inductive model?)");
  const std::string& format = metadata_entry(h, "format");
  INDUCTIVE_CHECK(format == "inductive", ErrorCode::kBadModelFile, "model file: format: got \"", printable(format),
                  "\", expected \"inductive\"");
  view.format_version = parse_format_version(metadata_entry(h, "format_version"));
  view.model = metadata_entry(h, "model");
  INDUCTIVE_CHECK(!view.model.empty(), ErrorCode::kBadModelFile, "model file: model: got \"\", expected a model kind");
  view.producer = metadata_entry(h, "producer");
  INDUCTIVE_CHECK(!view.producer.empty(), ErrorCode::kBadModelFile,
                  "model file: producer: got \"\", expected \"inductive <version> <build>\" or another writer's name");
  const std::string& config = metadata_entry(h, "config");
  view.config = safetensors::parse_json(config.data(), config.size(), "config");
  INDUCTIVE_CHECK(view.config.is_object(), ErrorCode::kBadModelFile, "model file: config: got a JSON ",
                  view.config.type_name(), ", expected an object");
}

// The schema is other modules' code: whatever it throws becomes a model-file error naming the kind.
void check_schema(const ModelView& view) {
  const ModelSchema* schema = find_model_schema(view.model);
  if (schema == nullptr) return;
  std::vector<TensorSpec> specs;
  try {
    if (schema->validate_config) schema->validate_config(view.config, view.format_version);
    specs = schema->tensors(view.config, view.format_version);
  } catch (const Error& e) {
    INDUCTIVE_FAIL(ErrorCode::kBadModelFile, "model file: config of model '", view.model, "': ", e.what());
  } catch (const std::exception& e) {  // e.g. json::type_error from config.at("p").get<int>() on a string
    INDUCTIVE_FAIL(ErrorCode::kBadModelFile, "model file: config of model '", view.model, "': ", e.what());
  }
  for (const TensorSpec& spec : specs) {
    const TensorInfo* t = view.find(spec.name);
    INDUCTIVE_CHECK(t != nullptr, ErrorCode::kBadModelFile, "model file: model '", view.model, "' needs tensor '",
                    spec.name, "' (", dtype_name(spec.dtype), " ", shape_string(spec.shape), "), which is missing");
    INDUCTIVE_CHECK(t->dtype == spec.dtype, ErrorCode::kBadModelFile, "model file: tensor '", spec.name,
                    "': dtype: got ", dtype_name(t->dtype), ", expected ", dtype_name(spec.dtype));
    INDUCTIVE_CHECK(t->shape == spec.shape, ErrorCode::kBadModelFile, "model file: tensor '", spec.name,
                    "' has wrong shape: got ", shape_string(t->shape), ", expected ", shape_string(spec.shape),
                    " from the config");
  }
  for (const TensorInfo& t : view.tensors) {
    bool known = false;
    for (const TensorSpec& spec : specs) known = known || spec.name == t.name;
    INDUCTIVE_CHECK(known, ErrorCode::kBadModelFile, "model file: tensor '", printable(t.name),
                    "' is not part of model '", view.model, "' (", specs.size(), " tensors expected)");
  }
}

}  // namespace

ModelView read_model(const uint8_t* bytes, size_t size) {
  const safetensors::Header header = safetensors::parse_header(bytes, size);
  ModelView view;
  read_metadata(header, view);  // before the tensors: a newer version may lay them out differently
  view.tensors = safetensors::parse_tensors(header);
  view.data = header.data;
  view.data_size = header.data_size;
  check_schema(view);
  return view;
}

const TensorInfo* ModelView::find(const std::string& name) const {
  for (const TensorInfo& t : tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

namespace {
const uint8_t* typed(const ModelView& view, const std::string& name, DType dtype, const std::vector<int64_t>& shape) {
  const TensorInfo* t = view.find(name);
  INDUCTIVE_CHECK(t != nullptr, ErrorCode::kBadModelFile, "model file: tensor '", name, "' is missing (model '",
                  printable(view.model), "')");
  INDUCTIVE_CHECK(t->dtype == dtype, ErrorCode::kBadModelFile, "model file: tensor '", name, "': dtype: got ",
                  dtype_name(t->dtype), ", expected ", dtype_name(dtype));
  INDUCTIVE_CHECK(t->shape == shape, ErrorCode::kBadModelFile, "model file: tensor '", name, "' has wrong shape: got ",
                  shape_string(t->shape), ", expected ", shape_string(shape));
  const uint8_t* p = view.data + t->begin;
  // A view cannot fix alignment without copying; files we write are always aligned (8-byte header padding).
  INDUCTIVE_CHECK(reinterpret_cast<uintptr_t>(p) % 4 == 0, ErrorCode::kBadModelFile, "model file: tensor '", name,
                  "': data is not 4-byte aligned in memory, expected a header length that is a multiple of 4 "
                  "and an aligned buffer");
  return p;
}
}  // namespace

const float* ModelView::f32(const std::string& name, const std::vector<int64_t>& shape) const {
  return reinterpret_cast<const float*>(typed(*this, name, DType::kF32, shape));
}

const int32_t* ModelView::i32(const std::string& name, const std::vector<int64_t>& shape) const {
  return reinterpret_cast<const int32_t*>(typed(*this, name, DType::kI32, shape));
}

// ---- writing -----------------------------------------------------------------------------------------------------

std::vector<uint8_t> write_model(const ModelContents& contents) {
  INDUCTIVE_CHECK(!contents.model.empty(), ErrorCode::kInvalidArgument, "write_model: model kind is empty");
  INDUCTIVE_CHECK(contents.config.is_object(), ErrorCode::kInvalidArgument, "write_model: config: got a JSON ",
                  contents.config.type_name(), ", expected an object");
  INDUCTIVE_CHECK(contents.format_version >= 1 && contents.format_version <= kFormatVersion,
                  ErrorCode::kInvalidArgument, "write_model: format_version: got ", contents.format_version,
                  ", expected 1 to ", kFormatVersion);
  std::map<std::string, std::string> metadata;
  metadata["format"] = "inductive";
  metadata["format_version"] = std::to_string(contents.format_version);
  metadata["model"] = contents.model;
  metadata["producer"] = contents.producer.empty() ? std::string(producer()) : contents.producer;
  try {
    metadata["config"] = contents.config.dump();  // keys sorted: the same config gives the same bytes
  } catch (const json::exception&) {
    INDUCTIVE_FAIL(ErrorCode::kInvalidArgument, "write_model: config holds a string that is not valid UTF-8");
  }
  std::vector<uint8_t> bytes = safetensors::serialise(metadata, contents.tensors);

  // What we write must be what we read: the same checks (including the model kind's schema) run on the result.
  try {
    const ModelView back = read_model(bytes.data(), bytes.size());
    INDUCTIVE_CHECK(back.config == contents.config, ErrorCode::kInvalidArgument,
                    "write_model: config does not survive JSON (NaN or infinity?)");
  } catch (const Error& e) {
    if (e.code() == ErrorCode::kInvalidArgument) throw;
    INDUCTIVE_FAIL(ErrorCode::kInvalidArgument, "write_model: refusing to write an invalid file: ", e.what());
  }
  return bytes;
}

// ---- files -------------------------------------------------------------------------------------------------------

void save_model_file(const std::string& path, const ModelContents& contents) {
  write_file_atomic(path, write_model(contents));  // serialise first: a bad model never creates a file
}

// ---- description -------------------------------------------------------------------------------------------------

std::string describe_model(const ModelView& view) {
  std::ostringstream out;
  out << "format:         inductive\n"
      << "format_version: " << view.format_version << "\n"
      << "model:          " << printable(view.model, 200) << "\n"
      << "producer:       " << printable(view.producer, 200) << "\n"
      << "config:\n  ";
  // Pretty-printed and indented under its label; `replace` because this must print whatever it is given.
  const std::string config = view.config.dump(2, ' ', false, json::error_handler_t::replace);
  for (char c : config) {
    out << c;
    if (c == '\n') out << "  ";
  }
  uint64_t total = 0;
  size_t w_name = 4, w_shape = 5;
  for (const TensorInfo& t : view.tensors) {
    total += t.end - t.begin;
    w_name = std::max(w_name, printable(t.name, 200).size());
    w_shape = std::max(w_shape, shape_string(t.shape).size());
  }
  out << "\ntensors:        " << view.tensors.size() << " (" << total << " bytes)\n";
  auto row = [&](const std::string& name, const std::string& dtype, const std::string& shape,
                 const std::string& bytes) {
    out << "  " << name << std::string(w_name - name.size() + 2, ' ') << dtype << std::string(7 - dtype.size(), ' ')
        << shape << std::string(w_shape - shape.size() + 2, ' ') << bytes << "\n";
  };
  row("name", "dtype", "shape", "bytes");
  for (const TensorInfo& t : view.tensors) {
    row(printable(t.name, 200), dtype_name(t.dtype), shape_string(t.shape), std::to_string(t.end - t.begin));
  }
  return out.str();
}

}  // namespace inductive
