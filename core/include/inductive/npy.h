// inductive/npy.h - NumPy .npy arrays (format 1.0/2.0/3.0), the CLI's array format.
//
// Supported: little-endian float32 ('<f4'), float64 ('<f8', converted to float32 on request), int32 ('<i4'),
// C order. Anything else (Fortran order, big-endian, object arrays, truncated data) throws Error{kBadModelFile}
// naming the file and the problem.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "inductive/error.h"

namespace inductive {

struct NpyArray {
  std::string dtype;  // "<f4" | "<i4" (float64 input is converted to "<f4")
  std::vector<int64_t> shape;
  std::vector<float> f32;    // filled when dtype == "<f4"
  std::vector<int32_t> i32;  // filled when dtype == "<i4"
  int64_t numel() const;
};

// Parses .npy bytes; `what` names the source in messages (e.g. the path).
NpyArray parse_npy(const uint8_t* bytes, size_t size, const std::string& what);
NpyArray load_npy(const std::string& path);

std::vector<uint8_t> npy_bytes(const float* data, const std::vector<int64_t>& shape);
std::vector<uint8_t> npy_bytes(const int32_t* data, const std::vector<int64_t>& shape);
std::vector<uint8_t> npy_bytes(const double* data, const std::vector<int64_t>& shape);  // written as '<f8'
// Atomic write (temp file + rename): a failed run never leaves a partial file at `path`.
void save_npy(const std::string& path, const float* data, const std::vector<int64_t>& shape);

}  // namespace inductive
