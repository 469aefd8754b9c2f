// What fused multiply-adds would buy the wasm products: the register-blocked kernel of core/src/simd/small_gemm.cpp
// (C = A B, broadcasts of A times vectors of B), in wasm SIMD128, compiled twice by bench/wasm_fma_probe.py: with a
// multiply and an add (what the package ships), and with relaxed SIMD's fused multiply-add (-DRELAXED).
//
// Why a probe and not the library: emscripten 3.1.6's clang 14 knows relaxed SIMD only as a prototype. It emits
// `f32x4.fma` as opcode 0xfd 0xaf 0x01, which no shipping engine accepts; the final proposal's f32x4.relaxed_madd
// is 0xfd 0x85 0x02. The script rewrites the one to the other after checking, against llvm-objdump's disassembly,
// that every byte match is that instruction, and this program checks at start-up that the rewritten instruction
// computes a * b + c in the operands' order (the prototype's builtin takes them in that stack order).
//
//   /usr/bin/python3 bench/wasm_fma_probe.py [--rounds 4]
#include <wasm_simd128.h>

#include <chrono>
#include <cstdio>
#include <vector>

namespace {

#ifdef RELAXED
v128_t madd(v128_t a, v128_t b, v128_t c) { return __builtin_wasm_fma_f32x4(a, b, c); }
constexpr const char* kVariant = "relaxed_madd";
#else
v128_t madd(v128_t a, v128_t b, v128_t c) { return wasm_f32x4_add(wasm_f32x4_mul(a, b), c); }
constexpr const char* kVariant = "mul_add";
#endif

// Rows [0, R) x vectors [0, V) of C = A B over k terms, columns from `col` (A row-major, lda; B row-major, ldb).
template <int R, int V>
__attribute__((noinline)) void block(const float* a, int lda, const float* b, int ldb, float* c, int ldc, int k,
                                     int col) {
  v128_t acc[R][V];
  for (int i = 0; i < R; ++i)
    for (int v = 0; v < V; ++v) acc[i][v] = wasm_f32x4_splat(0.0f);
  for (int t = 0; t < k; ++t) {
    const float* brow = b + t * ldb + col;
    v128_t vb[V];
    for (int v = 0; v < V; ++v) vb[v] = wasm_v128_load(brow + v * 4);
    for (int i = 0; i < R; ++i) {
      const v128_t s = wasm_f32x4_splat(a[i * lda + t]);
      for (int v = 0; v < V; ++v) acc[i][v] = madd(s, vb[v], acc[i][v]);
    }
  }
  for (int i = 0; i < R; ++i)
    for (int v = 0; v < V; ++v) wasm_v128_store(c + i * ldc + col + v * 4, acc[i][v]);
}

// GFLOP/s of a 3000 x 64 by 64 x n product (GraphiT (b)'s Linear layers), and C's sum.
template <int R, int V>
double gflops(int n, double* checksum) {
  const int m = 3000 / R * R, k = 64;
  std::vector<float> a(static_cast<size_t>(m) * k), b(static_cast<size_t>(k) * n), c(static_cast<size_t>(m) * n);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 7) * 0.1f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 5) * 0.1f;
  const auto run = [&] {
    for (int i = 0; i + R <= m; i += R)
      for (int col = 0; col + V * 4 <= n; col += V * 4)
        block<R, V>(a.data() + i * k, k, b.data(), n, c.data() + i * n, n, k, col);
  };
  for (int w = 0; w < 20; ++w) run();
  const int reps = 200;
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; ++r) run();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  *checksum = 0;
  for (float x : c) *checksum += x;
  return 2.0 * m * n * k * reps / s / 1e9;
}

}  // namespace

int main() {
  volatile float x = 2, y = 3, z = 5;  // volatile: computed by the instruction, not folded by the compiler
  const float r = wasm_f32x4_extract_lane(madd(wasm_f32x4_splat(x), wasm_f32x4_splat(y), wasm_f32x4_splat(z)), 0);
  if (r != 11.0f) {
    std::fprintf(stderr, "error: %s(2, 3, 5) gave %g, not 2 * 3 + 5 = 11\n", kVariant, static_cast<double>(r));
    return 2;
  }
  double sum42 = 0, sum24 = 0;
  const double g42 = gflops<4, 2>(96, &sum42), g24 = gflops<2, 4>(96, &sum24);
  std::printf("{\"variant\":\"%s\",\"gflops_4x2\":%.2f,\"gflops_2x4\":%.2f,\"checksum\":%.6e}\n", kVariant, g42, g24,
              sum42 + sum24);
  return 0;
}
