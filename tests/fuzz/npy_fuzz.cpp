// libFuzzer target: parse_npy on arbitrary bytes.
//
// parse_npy either returns an array whose storage matches its shape and dtype, or throws inductive::Error; anything
// else is a bug. An array that parses must round-trip bit for bit through npy_bytes (NaN payloads included).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "inductive/npy.h"

namespace {

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "npy_fuzz: %s\n", what.c_str());
  std::abort();
}

template <typename T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<uint8_t> bytes(data, data + size);
  inductive::NpyArray arr;
  try {
    arr = inductive::parse_npy(bytes.data(), bytes.size(), "fuzz.npy");
  } catch (const inductive::Error&) {
    return 0;
  }
  const bool f32 = arr.dtype == "<f4";
  if (!f32 && arr.dtype != "<i4") finding("unexpected dtype " + arr.dtype);
  const size_t stored = f32 ? arr.f32.size() : arr.i32.size();
  if (static_cast<int64_t>(stored) != arr.numel()) finding("storage does not match the shape");

  const std::vector<uint8_t> again =
      f32 ? inductive::npy_bytes(arr.f32.data(), arr.shape) : inductive::npy_bytes(arr.i32.data(), arr.shape);
  const inductive::NpyArray back = inductive::parse_npy(again.data(), again.size(), "rewrite.npy");  // Error = finding
  if (back.dtype != arr.dtype || back.shape != arr.shape || !same_bits(back.f32, arr.f32) ||
      !same_bits(back.i32, arr.i32)) {
    finding("npy round trip changed the array");
  }
  return 0;
}
