// NumPy .npy reader/writer (format versions 1.0, 2.0, 3.0; https://numpy.org/neps/nep-0001-npy-format.html).
// Header: "\x93NUMPY", major, minor, header length (u16 for v1, u32 for v2/v3), then a Python dict literal
// {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), } padded with spaces and '\n' to 64 bytes.
#include "inductive/npy.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>

#include "inductive/atomic_file.h"

namespace inductive {

int64_t NpyArray::numel() const {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

namespace {

// Value of `key` in the header dict: the text after "'key':" up to the next top-level ',' or '}'.
std::string dict_value(const std::string& header, const std::string& key, const std::string& what) {
  const std::string needle = "'" + key + "'";
  const auto k = header.find(needle);
  INDUCTIVE_CHECK(k != std::string::npos, ErrorCode::kBadModelFile, what, ": npy header has no '", key, "' entry");
  auto pos = header.find(':', k + needle.size());
  INDUCTIVE_CHECK(pos != std::string::npos, ErrorCode::kBadModelFile, what, ": npy header is malformed near '", key,
                  "'");
  ++pos;
  while (pos < header.size() && header[pos] == ' ') ++pos;
  size_t end = pos;
  if (pos < header.size() && header[pos] == '(') {
    end = header.find(')', pos);
    INDUCTIVE_CHECK(end != std::string::npos, ErrorCode::kBadModelFile, what, ": npy header shape is not closed");
    return header.substr(pos, end - pos + 1);
  }
  while (end < header.size() && header[end] != ',' && header[end] != '}') ++end;
  std::string v = header.substr(pos, end - pos);
  while (!v.empty() && v.back() == ' ') v.pop_back();
  return v;
}

std::vector<int64_t> parse_shape(const std::string& text, const std::string& what) {
  // "(3, 4)", "(5,)", "()"
  std::vector<int64_t> shape;
  size_t i = 1;
  while (i < text.size() - 1) {
    while (i < text.size() && (text[i] == ' ' || text[i] == ',')) ++i;
    if (i >= text.size() - 1) break;
    int64_t v = 0;
    bool any = false;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      INDUCTIVE_CHECK(v <= (std::numeric_limits<int64_t>::max() - 9) / 10, ErrorCode::kBadModelFile, what,
                      ": npy shape dimension overflows: ", text);
      v = v * 10 + (text[i] - '0');
      ++i;
      any = true;
    }
    INDUCTIVE_CHECK(any, ErrorCode::kBadModelFile, what, ": npy shape is malformed: got ", text);
    shape.push_back(v);
  }
  return shape;
}

}  // namespace

NpyArray parse_npy(const uint8_t* bytes, size_t size, const std::string& what) {
  INDUCTIVE_CHECK(size >= 10 && std::memcmp(bytes, "\x93NUMPY", 6) == 0, ErrorCode::kBadModelFile, what,
                  ": not a .npy file (missing \\x93NUMPY magic)");
  const int major = bytes[6];
  INDUCTIVE_CHECK(major >= 1 && major <= 3, ErrorCode::kBadModelFile, what, ": unsupported npy format version ", major,
                  ".", int(bytes[7]), ", expected 1.0, 2.0 or 3.0");
  size_t header_len = 0, start = 0;
  if (major == 1) {
    header_len = bytes[8] | (size_t(bytes[9]) << 8);
    start = 10;
  } else {
    INDUCTIVE_CHECK(size >= 12, ErrorCode::kBadModelFile, what, ": truncated npy header");
    header_len = bytes[8] | (size_t(bytes[9]) << 8) | (size_t(bytes[10]) << 16) | (size_t(bytes[11]) << 24);
    start = 12;
  }
  INDUCTIVE_CHECK(header_len <= size - start, ErrorCode::kBadModelFile, what, ": truncated npy header: header says ",
                  header_len, " bytes, file has ", size - start);
  const std::string header(reinterpret_cast<const char*>(bytes + start), header_len);
  const std::string descr = dict_value(header, "descr", what);
  const std::string fortran = dict_value(header, "fortran_order", what);
  INDUCTIVE_CHECK(fortran == "False", ErrorCode::kBadModelFile, what,
                  ": Fortran-order arrays are not supported; save with np.ascontiguousarray");
  NpyArray arr;
  arr.shape = parse_shape(dict_value(header, "shape", what), what);
  int64_t numel = 1;
  for (auto d : arr.shape) {
    INDUCTIVE_CHECK(d == 0 || numel <= std::numeric_limits<int64_t>::max() / 8 / d, ErrorCode::kBadModelFile, what,
                    ": npy shape too large");
    numel *= d;
  }
  const uint8_t* data = bytes + start + header_len;
  const size_t avail = size - start - header_len;
  auto need = [&](size_t item) {
    INDUCTIVE_CHECK(avail == static_cast<size_t>(numel) * item, ErrorCode::kBadModelFile, what, ": npy data has ",
                    avail, " bytes, expected ", static_cast<size_t>(numel) * item, " for shape ",
                    dict_value(header, "shape", what),
                    (avail < static_cast<size_t>(numel) * item ? " (truncated)" : ""));
  };
  if (descr == "'<f4'" || descr == "'|f4'") {
    need(4);
    arr.dtype = "<f4";
    arr.f32.resize(numel);
    if (numel) std::memcpy(arr.f32.data(), data, numel * 4);  // an empty vector's data() may be null
  } else if (descr == "'<f8'") {
    need(8);
    arr.dtype = "<f4";
    arr.f32.resize(numel);
    for (int64_t i = 0; i < numel; ++i) {
      double v;
      std::memcpy(&v, data + 8 * i, 8);
      arr.f32[i] = static_cast<float>(v);
    }
  } else if (descr == "'<i4'") {
    need(4);
    arr.dtype = "<i4";
    arr.i32.resize(numel);
    if (numel) std::memcpy(arr.i32.data(), data, numel * 4);  // an empty vector's data() may be null
  } else if (descr == "'<i8'") {
    need(8);
    arr.dtype = "<i4";
    arr.i32.resize(numel);
    for (int64_t i = 0; i < numel; ++i) {
      int64_t v;
      std::memcpy(&v, data + 8 * i, 8);
      INDUCTIVE_CHECK(v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max(),
                      ErrorCode::kInvalidArgument, what, ": int64 value ", v, " at index ", i, " does not fit int32");
      arr.i32[i] = static_cast<int32_t>(v);
    }
  } else {
    INDUCTIVE_FAIL(ErrorCode::kBadModelFile, what, ": unsupported npy dtype ", descr,
                   ", expected '<f4', '<f8', '<i4' or '<i8' (little-endian)");
  }
  return arr;
}

NpyArray load_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  INDUCTIVE_CHECK(in.good(), ErrorCode::kIo, path, ": cannot open file");
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return parse_npy(bytes.data(), bytes.size(), path);
}

namespace {
std::vector<uint8_t> npy_encode(const char* descr, const void* data, size_t item, const std::vector<int64_t>& shape) {
  std::ostringstream h;
  h << "{'descr': '" << descr << "', 'fortran_order': False, 'shape': (";
  int64_t numel = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    h << shape[i] << (shape.size() == 1 ? "," : (i + 1 < shape.size() ? ", " : ""));
    numel *= shape[i];
  }
  h << "), }";
  std::string header = h.str();
  // Pad so that the data starts at a multiple of 64 bytes (10-byte preamble, header ends with '\n').
  const size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  std::vector<uint8_t> out(10 + header.size() + numel * item);
  std::memcpy(out.data(), "\x93NUMPY\x01\x00", 8);
  out[8] = static_cast<uint8_t>(header.size() & 0xff);
  out[9] = static_cast<uint8_t>(header.size() >> 8);
  std::memcpy(out.data() + 10, header.data(), header.size());
  if (numel) std::memcpy(out.data() + 10 + header.size(), data, numel * item);
  return out;
}
}  // namespace

std::vector<uint8_t> npy_bytes(const float* data, const std::vector<int64_t>& shape) {
  return npy_encode("<f4", data, 4, shape);
}
std::vector<uint8_t> npy_bytes(const int32_t* data, const std::vector<int64_t>& shape) {
  return npy_encode("<i4", data, 4, shape);
}

void save_npy(const std::string& path, const float* data, const std::vector<int64_t>& shape) {
  write_file_atomic(path, npy_bytes(data, shape));
}

}  // namespace inductive
