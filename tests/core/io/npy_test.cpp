// .npy arrays: round trips, float64 input, and one precise error per kind of malformed file.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "inductive/atomic_file.h"
#include "inductive/npy.h"
#include "../test_util.h"

namespace inductive {
namespace {

using testing::expect_error;

std::vector<uint8_t> header_bytes(const std::string& dict, size_t data_bytes) {
  std::string h = dict;
  while ((10 + h.size() + 1) % 64 != 0) h += ' ';
  h += '\n';
  std::vector<uint8_t> out = {
      0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, static_cast<uint8_t>(h.size() & 0xff), static_cast<uint8_t>(h.size() >> 8)};
  out.insert(out.end(), h.begin(), h.end());
  out.resize(out.size() + data_bytes, 0);
  return out;
}

TEST(Npy, Float32RoundTrip) {
  const std::vector<float> x = {1.5f, -2.0f, 3.25f, 0.0f, 5.0f, 6.0f};
  const auto bytes = npy_bytes(x.data(), {2, 3});
  const auto arr = parse_npy(bytes.data(), bytes.size(), "x.npy");
  EXPECT_EQ(arr.dtype, "<f4");
  EXPECT_EQ(arr.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(arr.f32, x);
  EXPECT_EQ(bytes.size() % 64, (6 * 4) % 64) << "header is padded to 64 bytes";
}

TEST(Npy, Int32RoundTripAndScalarShape) {
  const std::vector<int32_t> x = {7, -1, 3};
  const auto bytes = npy_bytes(x.data(), {3});
  const auto arr = parse_npy(bytes.data(), bytes.size(), "i.npy");
  EXPECT_EQ(arr.dtype, "<i4");
  EXPECT_EQ(arr.i32, x);
}

TEST(Npy, Float64IsConvertedToFloat32) {
  auto bytes = header_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", 16);
  const double v[2] = {0.25, -8.0};
  std::memcpy(bytes.data() + bytes.size() - 16, v, 16);
  const auto arr = parse_npy(bytes.data(), bytes.size(), "d.npy");
  EXPECT_EQ(arr.dtype, "<f4");
  EXPECT_EQ(arr.f32, (std::vector<float>{0.25f, -8.0f}));
}

TEST(Npy, RejectsMalformedFiles) {
  const std::vector<float> x(6, 1.0f);
  auto good = npy_bytes(x.data(), {2, 3});
  expect_error([&] { parse_npy(good.data(), 5, "t.npy"); }, ErrorCode::kBadModelFile, "t.npy");
  expect_error([&] { parse_npy(good.data(), good.size() - 4, "t.npy"); }, ErrorCode::kBadModelFile, "truncated");
  auto bad_magic = good;
  bad_magic[1] = 'X';
  expect_error([&] { parse_npy(bad_magic.data(), bad_magic.size(), "m.npy"); }, ErrorCode::kBadModelFile, "m.npy");
  auto fortran = header_bytes("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", 24);
  expect_error([&] { parse_npy(fortran.data(), fortran.size(), "f.npy"); }, ErrorCode::kBadModelFile, "ortran");
  auto big_endian = header_bytes("{'descr': '>f4', 'fortran_order': False, 'shape': (6,), }", 24);
  expect_error([&] { parse_npy(big_endian.data(), big_endian.size(), "b.npy"); }, ErrorCode::kBadModelFile, ">f4");
  auto object = header_bytes("{'descr': '|O', 'fortran_order': False, 'shape': (6,), }", 24);
  expect_error([&] { parse_npy(object.data(), object.size(), "o.npy"); }, ErrorCode::kBadModelFile, "o.npy");
  // The header is the Python literal numpy writes, read strictly, as numpy's reader does (differential fuzzing).
  for (const auto& [dict, message] : std::vector<std::pair<std::string, std::string>>{
           {"{'descr': '<f4', 'fortran_order': False, 'shape': (6,), } r", "text after the dict"},
           {"{'descr': '<f4', 'fortran_order'x: False, 'shape': (6,), }", "expected ':'"},
           {"{'descr': '<f4', 'fortran_order': False, 'shape': (6), }", "needs a trailing comma"},
           {"{'descr': '<f4', 'fortran_order': False, 'shape': (6,), 'x': 1}", "unknown key 'x'"},
           {"{'descr': '<f4', 'shape': (6,), }", "a key is missing"},
           {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (6,)}", "appears twice"},
           {"{'descr': '<f4', 'fortran_order': False, 'shape': (06,), }", "leading zero"},
           {"{'descr': '<f4', 'fortran_order': Maybe, 'shape': (6,), }", "expected True or False"}}) {
    auto bad = header_bytes(dict, 24);
    expect_error([&] { parse_npy(bad.data(), bad.size(), "d.npy"); }, ErrorCode::kBadModelFile, message);
  }
  auto minor = header_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }", 24);
  minor[7] = ' ';
  expect_error([&] { parse_npy(minor.data(), minor.size(), "v.npy"); }, ErrorCode::kBadModelFile, "version 1.32");
  // A float64 beyond float32's range would have become infinite.
  auto wide = header_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", 8);
  const double big = 1e300;
  std::memcpy(wide.data() + wide.size() - 8, &big, 8);
  expect_error([&] { parse_npy(wide.data(), wide.size(), "w.npy"); }, ErrorCode::kInvalidArgument,
               "beyond float32's range");
  auto huge = header_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }", 24);
  expect_error([&] { parse_npy(huge.data(), huge.size(), "h.npy"); }, ErrorCode::kBadModelFile, "h.npy");
}

TEST(Npy, SaveIsAtomicAndLoadReadsItBack) {
  const std::string path = inductive::testing::temp_path("inductive_npy_test.npy");
  const std::vector<float> x = {1, 2, 3, 4};
  save_npy(path, x.data(), {4});
  EXPECT_EQ(load_npy(path).f32, x);
  std::remove(path.c_str());
  expect_error([] { load_npy("/nonexistent/dir/x.npy"); }, ErrorCode::kIo, "/nonexistent/dir/x.npy");
  expect_error([&] { save_npy("/nonexistent/dir/x.npy", x.data(), {4}); }, ErrorCode::kIo, "/nonexistent/dir");
}

}  // namespace
}  // namespace inductive
