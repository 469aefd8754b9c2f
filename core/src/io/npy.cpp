// NumPy .npy reader/writer (format versions 1.0, 2.0, 3.0; https://numpy.org/neps/nep-0001-npy-format.html).
// Header: "\x93NUMPY", major, minor, header length (u16 for v1, u32 for v2/v3), then a Python dict literal
// {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), } padded with spaces and '\n' to 64 bytes.
#include "inductive/npy.h"

#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <sstream>

#include "inductive/atomic_file.h"
#include "inductive/files.h"

namespace inductive {

int64_t NpyArray::numel() const {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

namespace {

// The header dict, read strictly: the Python literal numpy writes, {'descr': STR, 'fortran_order': BOOL,
// 'shape': (INT, ...)} with optional trailing commas and whitespace, then only whitespace. numpy's own reader
// (ast.literal_eval) refuses text after the dict, unknown or missing keys and "(3)" for a tuple; so do we
// (tests/oracle/test_differential_fuzz.py compares the two).
struct NpyHeader {
  std::string descr, shape_text;
  bool fortran = false;
  std::vector<int64_t> shape;
};

class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& what) : t_(text), what_(what) {}

  NpyHeader run() {
    NpyHeader h;
    bool seen[3] = {false, false, false};
    space();
    expect('{');
    for (space(); !at('}'); space()) {
      const std::string key = string_literal();
      space();
      expect(':');
      space();
      const int k = key == "descr" ? 0 : key == "fortran_order" ? 1 : key == "shape" ? 2 : -1;
      fail_unless(k >= 0, "unknown key '" + key + "' (expected descr, fortran_order, shape)");
      fail_unless(!seen[k], "key '" + key + "' appears twice");
      seen[k] = true;
      if (k == 0) h.descr = string_literal();
      if (k == 1) h.fortran = boolean();
      if (k == 2) h.shape = tuple(h.shape_text);
      space();
      if (!at('}')) expect(',');
    }
    ++i_;
    space();
    fail_unless(i_ == t_.size(), "text after the dict");
    fail_unless(seen[0] && seen[1] && seen[2], "a key is missing (descr, fortran_order and shape are required)");
    return h;
  }

 private:
  void fail_unless(bool ok, const std::string& problem) const {
    INDUCTIVE_CHECK(ok, ErrorCode::kBadModelFile, what_, ": npy header is malformed at byte ", i_, ": ", problem);
  }
  bool at(char c) const { return i_ < t_.size() && t_[i_] == c; }
  void space() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\t' || t_[i_] == '\n' || t_[i_] == '\r')) ++i_;
  }
  void expect(char c) {
    fail_unless(at(c), std::string("expected '") + c + "'");
    ++i_;
  }
  std::string string_literal() {
    fail_unless(at('\'') || at('"'), "expected a quoted string");
    const char quote = t_[i_++];
    const size_t end = t_.find(quote, i_);
    fail_unless(end != std::string::npos, "unclosed string");
    std::string v = t_.substr(i_, end - i_);
    fail_unless(v.find_first_of("\\\n") == std::string::npos, "escapes or line breaks in a string");
    i_ = end + 1;
    return v;
  }
  bool boolean() {
    for (const char* word : {"True", "False"}) {
      if (t_.compare(i_, std::strlen(word), word) == 0) {
        i_ += std::strlen(word);
        return word[0] == 'T';
      }
    }
    fail_unless(false, "expected True or False");
    return false;
  }
  std::vector<int64_t> tuple(std::string& text) {
    const size_t start = i_;
    expect('(');
    std::vector<int64_t> dims;
    bool comma = false;
    for (space(); !at(')'); space()) {
      fail_unless(i_ < t_.size() && t_[i_] >= '0' && t_[i_] <= '9', "expected a dimension (digits)");
      fail_unless(!(t_[i_] == '0' && i_ + 1 < t_.size() && t_[i_ + 1] >= '0' && t_[i_ + 1] <= '9'),
                  "a dimension with a leading zero");
      int64_t v = 0;
      while (i_ < t_.size() && t_[i_] >= '0' && t_[i_] <= '9') {
        fail_unless(v <= (std::numeric_limits<int64_t>::max() - 9) / 10, "a dimension overflows");
        v = v * 10 + (t_[i_++] - '0');
      }
      dims.push_back(v);
      space();
      comma = at(',');
      if (comma) {
        ++i_;
      } else {
        fail_unless(at(')'), "expected ',' or ')' in the shape");
      }
    }
    // "(3)" is the integer 3 in Python, not a shape.
    fail_unless(dims.size() != 1 || comma, "a one-dimensional shape needs a trailing comma: (n,)");
    ++i_;
    text = t_.substr(start, i_ - start);
    return dims;
  }

  const std::string& t_;
  const std::string& what_;
  size_t i_ = 0;
};

}  // namespace

NpyArray parse_npy(const uint8_t* bytes, size_t size, const std::string& what) {
  INDUCTIVE_CHECK(size >= 10 && std::memcmp(bytes, "\x93NUMPY", 6) == 0, ErrorCode::kBadModelFile, what,
                  ": not a .npy file (missing \\x93NUMPY magic)");
  const int major = bytes[6];
  INDUCTIVE_CHECK(major >= 1 && major <= 3 && bytes[7] == 0, ErrorCode::kBadModelFile, what,
                  ": unsupported npy format version ", major, ".", int(bytes[7]), ", expected 1.0, 2.0 or 3.0");
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
  const NpyHeader h = HeaderParser(header, what).run();
  const std::string descr = "'" + h.descr + "'";
  INDUCTIVE_CHECK(!h.fortran, ErrorCode::kBadModelFile, what,
                  ": Fortran-order arrays are not supported; save with np.ascontiguousarray");
  NpyArray arr;
  arr.shape = h.shape;
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
                    avail, " bytes, expected ", static_cast<size_t>(numel) * item, " for shape ", h.shape_text,
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
      // A finite value beyond float32's range would become infinite, silently (and the cast is undefined).
      INDUCTIVE_CHECK(!std::isfinite(v) || std::fabs(v) <= std::numeric_limits<float>::max(),
                      ErrorCode::kInvalidArgument, what, ": float64 value ", v, " at index ", i,
                      " is beyond float32's range (", std::numeric_limits<float>::max(), ")");
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
  const std::vector<uint8_t> bytes = read_file_bytes(path, "npy file");
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
std::vector<uint8_t> npy_bytes(const double* data, const std::vector<int64_t>& shape) {
  return npy_encode("<f8", data, 8, shape);
}

void save_npy(const std::string& path, const float* data, const std::vector<int64_t>& shape) {
  write_file_atomic(path, npy_bytes(data, shape));
}

}  // namespace inductive
